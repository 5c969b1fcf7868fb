//! [`SizeHint`]: an estimate of a result's size made before the work, and the refusal it
//! turns into when the work would not fit.

use std::borrow::Cow;

use crate::figures::grouped;
use crate::tokens::{CharsPerToken, TokenCounter};
use crate::tool::ToolError;

/// An estimate of a result's size, made before the work is done.
///
/// ```
/// use toolsmith::tool::SizeHint;
///
/// // A 299,316-byte file of 4,000 lines, 80,000 chars allowed.
/// let hint = SizeHint::new("File content", 299_316)
///     .with_lines(4_000)
///     .with_alternative("use grep to search it");
/// let refusal = hint.refusal(80_000, true).expect("too large");
/// assert_eq!(
///     refusal.model_text(),
///     "Error: File content (~74,829 tokens) exceeds maximum allowed tokens (20,000). Use \
///      offset and limit to read part of it: offset=0 limit=1066 reads about the first 20,000 \
///      tokens; or use grep to search it."
/// );
/// assert!(hint.refusal(400_000, true).is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SizeHint {
    /// What would be returned, capitalised, for the error: `File content`, `Directory listing`.
    pub what: Cow<'static, str>,
    /// The estimated chars of the full result (bytes are a fine estimate).
    pub chars: u64,
    /// The estimated lines, when known; used to suggest a `limit` that fits.
    pub lines: Option<u64>,
    /// Another way to get at the content, in lower case: `use grep to search it`.
    pub alternative: Option<Cow<'static, str>>,
}

impl SizeHint {
    /// Lines assumed per char when the line count is unknown: 80 chars a line.
    const ASSUMED_LINE_CHARS: u64 = 80;

    /// `what` is estimated at `chars` chars.
    pub fn new(what: impl Into<Cow<'static, str>>, chars: u64) -> Self {
        SizeHint {
            what: what.into(),
            chars,
            lines: None,
            alternative: None,
        }
    }

    /// Sets the estimated line count.
    #[must_use]
    pub fn with_lines(mut self, lines: u64) -> Self {
        self.lines = Some(lines);
        self
    }

    /// Sets another way to get at the content (`use grep to search it`).
    #[must_use]
    pub fn with_alternative(mut self, alternative: impl Into<Cow<'static, str>>) -> Self {
        self.alternative = Some(alternative.into());
        self
    }

    /// The error to refuse the call with, when the estimate exceeds `allowance` chars; `None`
    /// when it fits. Tokens are estimated at 4 chars each. For a paginated tool the error
    /// names an `offset` and `limit` that fit.
    pub fn refusal(&self, allowance: usize, paginate: bool) -> Option<ToolError> {
        if self.chars <= allowance as u64 {
            return None;
        }
        let counter = CharsPerToken::default();
        let estimated = counter.count_chars(usize::try_from(self.chars).unwrap_or(usize::MAX));
        let cap = counter.count_chars(allowance);
        let line_chars = match self.lines {
            Some(lines) if lines > 0 => self.chars.div_ceil(lines).max(1),
            _ => Self::ASSUMED_LINE_CHARS,
        };
        let alternative = self.alternative.as_deref();
        let suggestion = if paginate {
            let limit = (allowance as u64 / line_chars).max(1);
            let or = alternative
                .map(|alt| format!("; or {alt}"))
                .unwrap_or_default();
            format!(
                "Use offset and limit to read part of it: offset=0 limit={limit} reads about the \
                 first {} tokens{or}.",
                grouped(cap)
            )
        } else {
            match alternative {
                Some(alt) => format!("Instead, {alt}."),
                None => "Ask for less in one call.".to_owned(),
            }
        };
        Some(ToolError::too_large(
            self.what.clone(),
            estimated,
            cap,
            suggestion,
        ))
    }
}
