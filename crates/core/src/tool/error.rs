//! What a tool returns when it fails: [`ToolError`], with a text for the model and one for
//! operators, and its [`ErrorKind`].

use std::error::Error as StdError;
use std::fmt;
use std::time::Duration;

use crate::figures::DisplayDuration;
use crate::figures::grouped;

/// The failure of one tool call.
///
/// Two texts describe each error: [`Display`](fmt::Display) is for operators (logs, tracing;
/// the underlying error is [`source`](ToolError::source)), and
/// [`model_text`](ToolError::model_text) is what the model reads in the `is_error` tool result:
/// what went wrong and what to do next, without internals.
///
/// `?` converts any error into a `ToolError`: an [`io::Error`](std::io::Error) becomes
/// `NotFound`, `PermissionDenied` or `Failed` by its kind (a tool that knows the path should
/// use [`ToolError::io`], which names it); any other `std::error::Error + Send + Sync + 'static`
/// (a `ParseIntError`, a `serde_json::Error`, your own) becomes [`Other`](ToolError::Other), its
/// text and causes shown to the model. A message of your own is
/// [`ToolError::failed`]`("…")`. Like `anyhow::Error`, and for the same reason (that
/// conversion), `ToolError` does not implement `std::error::Error` itself; it converts into
/// `Box<dyn Error + Send + Sync>` for code that needs one.
///
/// ```
/// use toolsmith::ToolError;
/// use toolsmith::tool::ErrorKind;
///
/// fn parse(count: &str) -> Result<u32, ToolError> {
///     Ok(count.parse::<u32>()?)
/// }
/// let error = parse("twelve").unwrap_err();
/// assert_eq!(error.kind(), ErrorKind::Other);
/// assert_eq!(error.model_text(), "Error: invalid digit found in string");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolError {
    /// The arguments are not JSON, or do not match the tool's input schema.
    InvalidArguments {
        /// What is wrong, with the field path when there is one (`path.offset: invalid type …`).
        message: String,
    },
    /// The work would produce more than the allowance; refused before it was done.
    TooLarge {
        /// What is too large, capitalised: `File content`, `Command output`.
        what: String,
        /// The estimated size of the full result, in tokens.
        estimated_tokens: usize,
        /// The most tokens this call may return.
        max_tokens: usize,
        /// What to do instead, with real numbers: `Use offset and limit …`.
        suggestion: String,
    },
    /// Something the call names does not exist.
    NotFound {
        /// What was not found, e.g. ``file `src/lib.rs` ``.
        what: String,
    },
    /// The call asked for something outside what the tool may touch.
    PermissionDenied {
        /// What was refused and why, e.g. the workspace root a path escapes.
        message: String,
    },
    /// The call did not finish within its timeout and was stopped.
    Timeout(Duration),
    /// The call was cancelled (its turn was cancelled) before it finished.
    Cancelled,
    /// The tool failed for any other reason.
    Failed {
        /// A model-readable account of the failure.
        message: String,
        /// The underlying error, for operators.
        source: Option<Box<dyn StdError + Send + Sync>>,
    },
    /// Any other error, converted by `?`: its text and its causes are what the model reads.
    Other(Box<dyn StdError + Send + Sync>),
}

impl ToolError {
    /// A generic failure with a model-readable message.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed {
            message: message.into(),
            source: None,
        }
    }

    /// A boxed error (what functions returning `Box<dyn Error + Send + Sync>` give), as
    /// [`ToolError::Other`], or by its kind when it is an I/O error. `?` cannot convert it by
    /// itself (a box of an error is not an error); `.map_err(ToolError::boxed)?` does.
    pub fn boxed(error: Box<dyn StdError + Send + Sync>) -> Self {
        match error.downcast::<std::io::Error>() {
            Ok(io) => ToolError::from_io(*io),
            Err(other) => ToolError::Other(other),
        }
    }

    /// A failure with a model-readable message and the underlying error for operators.
    pub fn failed_with(
        message: impl Into<String>,
        source: impl Into<Box<dyn StdError + Send + Sync>>,
    ) -> Self {
        ToolError::Failed {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// Invalid arguments, with what is wrong.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        ToolError::InvalidArguments {
            message: message.into(),
        }
    }

    /// Something the call names was not found.
    pub fn not_found(what: impl Into<String>) -> Self {
        ToolError::NotFound { what: what.into() }
    }

    /// The call reached outside what the tool may touch.
    pub fn permission_denied(message: impl Into<String>) -> Self {
        ToolError::PermissionDenied {
            message: message.into(),
        }
    }

    /// The work would exceed the allowance: `what` (`File content`) is estimated at
    /// `estimated_tokens`, over `max_tokens`; `suggestion` says what to do instead.
    pub fn too_large(
        what: impl Into<String>,
        estimated_tokens: usize,
        max_tokens: usize,
        suggestion: impl Into<String>,
    ) -> Self {
        ToolError::TooLarge {
            what: what.into(),
            estimated_tokens,
            max_tokens,
            suggestion: suggestion.into(),
        }
    }

    /// The text the model reads in the `is_error` tool result.
    ///
    /// ```
    /// use toolsmith::ToolError;
    ///
    /// let error = ToolError::too_large(
    ///     "File content",
    ///     74_829,
    ///     20_000,
    ///     "Use offset and limit to read part of it: offset=0 limit=400 reads about the first \
    ///      20,000 tokens; or use grep to search it.",
    /// );
    /// assert!(error.model_text().starts_with(
    ///     "Error: File content (~74,829 tokens) exceeds maximum allowed tokens (20,000). Use offset"
    /// ));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn model_text(&self) -> String {
        match self {
            ToolError::InvalidArguments { message } => format!(
                "Error: invalid arguments: {message}. Call the tool again with arguments that \
                 match its input schema."
            ),
            ToolError::TooLarge {
                what,
                estimated_tokens,
                max_tokens,
                suggestion,
            } => format!(
                "Error: {what} (~{} tokens) exceeds maximum allowed tokens ({}). {suggestion}",
                grouped(*estimated_tokens),
                grouped(*max_tokens)
            ),
            ToolError::NotFound { what } => format!("Error: {what} was not found."),
            ToolError::PermissionDenied { message } => {
                format!("Error: permission denied: {message}")
            }
            ToolError::Timeout(after) => format!(
                "Error: the call did not finish within {} and was stopped; nothing it produced \
                 was kept. Ask for less work in one call (a narrower query, a smaller page).",
                DisplayDuration(*after)
            ),
            ToolError::Cancelled => {
                "Error: the call was cancelled before it finished; it returned nothing.".to_owned()
            }
            ToolError::Failed { message, .. } => format!("Error: {message}"),
            ToolError::Other(error) => format!("Error: {}", Chain(&**error)),
        }
    }

    /// The error's kind, for logs, metrics and code that reacts to it.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ToolError::InvalidArguments { .. } => ErrorKind::InvalidArguments,
            ToolError::TooLarge { .. } => ErrorKind::TooLarge,
            ToolError::NotFound { .. } => ErrorKind::NotFound,
            ToolError::PermissionDenied { .. } => ErrorKind::PermissionDenied,
            ToolError::Timeout(_) => ErrorKind::Timeout,
            ToolError::Cancelled => ErrorKind::Cancelled,
            ToolError::Failed { .. } => ErrorKind::Failed,
            ToolError::Other(_) => ErrorKind::Other,
        }
    }

    /// The underlying error, for operators: the source of [`Failed`](ToolError::Failed), the
    /// error of [`Other`](ToolError::Other).
    pub fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            ToolError::Failed {
                source: Some(source),
                ..
            } => Some(&**source),
            ToolError::Other(error) => Some(&**error),
            _ => None,
        }
    }

    /// A file operation's failure, naming the path the model gave: `` `notes.md` was not
    /// found``, the operating system denying access to it (and what to do), `` `src` is a
    /// directory``, or the OS's own words (without its `(os error N)` suffix). The error is kept
    /// as the source.
    ///
    /// ```
    /// use toolsmith::ToolError;
    ///
    /// let missing = std::fs::read_to_string("no/such/file.log")
    ///     .map_err(|error| ToolError::io("no/such/file.log", error))
    ///     .unwrap_err();
    /// assert_eq!(missing.model_text(), "Error: `no/such/file.log` was not found.");
    /// ```
    pub fn io(path: impl fmt::Display, error: std::io::Error) -> Self {
        use std::io::ErrorKind as Io;
        match error.kind() {
            Io::NotFound => ToolError::not_found(format!("`{path}`")),
            Io::PermissionDenied => ToolError::permission_denied(format!(
                "the operating system denies access to `{path}`; its permissions do not allow \
                 it. Use another file, or ask the user to change them"
            )),
            Io::IsADirectory => {
                ToolError::invalid_arguments(format!("path: `{path}` is a directory, not a file"))
            }
            _ => ToolError::failed_with(format!("`{path}`: {}", os_words(&error)), error),
        }
    }
}

/// What kind of failure an error result is: stable across releases, for logs, metrics and code
/// that reacts to an error (the registry retries nothing; a caller may).
///
/// The first kinds are those of a [`ToolError`] (what a tool returns); the last five are the
/// registry's own refusals and reports, which no tool can return: an unknown tool, a panic, a
/// tripped cap, a call cut off by the output limit, a call the approval policy denied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// [`ToolError::InvalidArguments`].
    InvalidArguments,
    /// [`ToolError::TooLarge`].
    TooLarge,
    /// [`ToolError::NotFound`].
    NotFound,
    /// [`ToolError::PermissionDenied`].
    PermissionDenied,
    /// [`ToolError::Timeout`].
    Timeout,
    /// [`ToolError::Cancelled`].
    Cancelled,
    /// [`ToolError::Failed`].
    Failed,
    /// [`ToolError::Other`]: an error converted by `?`.
    Other,
    /// The model named a tool the registry does not have (a registry's refusal).
    UnknownTool,
    /// The tool panicked; the other calls of its batch were not affected (a registry's
    /// report).
    Panicked,
    /// A per-turn call cap was reached, so the call was not run (a registry's refusal).
    CapExceeded,
    /// The model's response stopped on its output limit while writing the call, so its
    /// arguments may be cut short; it was not run (a registry's refusal, see
    /// [`Turn::execute_response`](crate::Turn::execute_response)).
    CutOff,
    /// The approval policy denied the call, so it was not run (a registry's refusal).
    Denied,
}

impl ErrorKind {
    /// The kind's name in snake case, as `--json`, tracing and MCP report it: `invalid_arguments`,
    /// `too_large`, `not_found`, `permission_denied`, `timeout`, `cancelled`, `failed`, `other`,
    /// `unknown_tool`, `panicked`, `cap_exceeded`, `cut_off`, `denied`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidArguments => "invalid_arguments",
            ErrorKind::TooLarge => "too_large",
            ErrorKind::NotFound => "not_found",
            ErrorKind::PermissionDenied => "permission_denied",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Failed => "failed",
            ErrorKind::Other => "other",
            ErrorKind::UnknownTool => "unknown_tool",
            ErrorKind::Panicked => "panicked",
            ErrorKind::CapExceeded => "cap_exceeded",
            ErrorKind::CutOff => "cut_off",
            ErrorKind::Denied => "denied",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for ErrorKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::InvalidArguments { message } => write!(f, "invalid arguments: {message}"),
            ToolError::TooLarge {
                what,
                estimated_tokens,
                max_tokens,
                ..
            } => write!(
                f,
                "{what} (~{estimated_tokens} tokens) exceeds the cap of {max_tokens} tokens"
            ),
            ToolError::NotFound { what } => write!(f, "not found: {what}"),
            ToolError::PermissionDenied { message } => write!(f, "permission denied: {message}"),
            ToolError::Timeout(after) => write!(f, "timed out after {}", DisplayDuration(*after)),
            ToolError::Cancelled => f.write_str("cancelled"),
            ToolError::Failed { message, .. } => f.write_str(message),
            ToolError::Other(error) => fmt::Display::fmt(error, f),
        }
    }
}

/// An error and its causes, `: `-separated, each without an `(os error N)` suffix.
struct Chain<'a>(&'a (dyn StdError + 'static));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut next = Some(self.0);
        let mut first = true;
        while let Some(error) = next {
            let text = without_os_code(error.to_string());
            if !first {
                f.write_str(": ")?;
            }
            f.write_str(&text)?;
            first = false;
            next = error.source();
        }
        Ok(())
    }
}

/// An OS error's words, without the `(os error N)` suffix that tells the model nothing.
pub(crate) fn os_words(error: &std::io::Error) -> String {
    without_os_code(error.to_string())
}

fn without_os_code(text: String) -> String {
    match text.find(" (os error ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// `?` on any error: an [`io::Error`](std::io::Error) by its kind (see [`ToolError::io`] for the
/// form that names the path), anything else as [`ToolError::Other`].
impl<E> From<E> for ToolError
where
    E: StdError + Send + Sync + 'static,
{
    fn from(error: E) -> Self {
        ToolError::boxed(Box::new(error))
    }
}

impl ToolError {
    /// An I/O error without a path: what kind of thing failed, in words, the error kept as the
    /// source for operators.
    fn from_io(error: std::io::Error) -> Self {
        match error.kind() {
            std::io::ErrorKind::NotFound => ToolError::NotFound {
                what: "a file or directory the tool needed".to_owned(),
            },
            std::io::ErrorKind::PermissionDenied => ToolError::PermissionDenied {
                message: "the operating system denied access to a file or directory the tool \
                          needed"
                    .to_owned(),
            },
            _ => ToolError::failed_with(
                format!("an I/O operation failed: {}", os_words(&error)),
                error,
            ),
        }
    }
}

/// A `ToolError` where a standard error is expected (`main`'s `Box<dyn Error>`, an error
/// type's `#[from]`): its text is the operator text ([`Display`](fmt::Display)), its source the
/// underlying error.
#[derive(Debug)]
struct StdToolError(ToolError);

impl fmt::Display for StdToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl StdError for StdToolError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.0.source()
    }
}

impl From<ToolError> for Box<dyn StdError + Send + Sync> {
    fn from(error: ToolError) -> Self {
        Box::new(StdToolError(error))
    }
}

impl From<ToolError> for Box<dyn StdError> {
    fn from(error: ToolError) -> Self {
        Box::new(StdToolError(error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_text_and_display_differ() {
        let source = std::io::Error::other("disk on fire");
        let error = ToolError::failed_with("could not write the file", source);
        assert_eq!(error.model_text(), "Error: could not write the file");
        assert_eq!(error.to_string(), "could not write the file");
        assert!(error.source().is_some());
    }
}
