//! What a tool returns when it succeeds: [`ToolOutput`], a text, a JSON value or a stream, and
//! what the tool states about its call beside it.

use std::fmt;

use serde_json::{Map, Value};

use super::error::ToolError;
use super::media::Media;

/// The successful output of a tool: a text, a JSON value or a stream of bytes, that becomes the
/// tool result.
///
/// Return a text when the output is small or already in hand. Return [JSON](Self::json) when
/// the output is a structure: over its allowance it is cut so that it stays valid JSON, where a
/// text is cut by its lines. Return a [stream](Self::stream) when it may be large (a command's
/// output, a search's matches): the registry consumes it in memory bounded by the largest
/// allowance the call could receive, spools all of it to the artifact store once it outgrows
/// that, and cuts it once, after the batch's budget is settled. The tool needs no budget logic
/// of its own, and output that fits comes back byte for byte.
#[derive(Default)]
#[must_use]
pub struct ToolOutput {
    body: Body,
    media: Vec<Media>,
    meta: Map<String, Value>,
    /// The structure beside the text ([`with_structure`](Self::with_structure)); boxed, for
    /// an output without one (most) stays small as it moves through a call.
    structure: Option<Box<Value>>,
}

/// A stream of output: chunks of UTF-8 bytes (a chunk may split a char; invalid bytes are
/// shown as U+FFFD), ended by the stream's end or by an error.
///
/// An `Err` item ends the output: what came before is kept, the error's text is appended, and
/// the result is an error of the error's kind (a command that timed out, with its output until
/// then).
pub type OutputStream =
    std::pin::Pin<Box<dyn futures_core::Stream<Item = Result<Vec<u8>, ToolError>> + Send>>;

/// What an output is made of.
#[derive(Default)]
pub(crate) enum Body {
    #[default]
    Empty,
    /// Text, cut by lines when it overflows.
    Text(String),
    /// Compact JSON text, by the tool's statement: cut as JSON when it overflows.
    Json(String),
    /// Bytes still to come.
    Stream(OutputStream),
}

impl fmt::Debug for ToolOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("ToolOutput");
        match &self.body {
            Body::Empty => out.field("text", &""),
            Body::Text(text) => out.field("text", text),
            Body::Json(json) => out.field("json", json),
            Body::Stream(_) => out.field("stream", &".."),
        };
        if !self.media.is_empty() {
            out.field("media", &self.media);
        }
        if let Some(structure) = &self.structure {
            out.field("structure", structure);
        }
        out.field("meta", &self.meta).finish()
    }
}

impl ToolOutput {
    /// An output made of `text`. Over its allowance, the registry keeps its head and tail,
    /// cut at line breaks, with a marker between them.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            body: Body::Text(text.into()),
            media: Vec::new(),
            meta: Map::new(),
            structure: None,
        }
    }

    /// An output made of `value` as compact JSON. Over its allowance, the registry cuts it with
    /// [`trim::fit_json`](crate::trim::fit_json), so the model still reads valid JSON.
    ///
    /// Whether a result is JSON is the tool's statement: a text that happens to parse as JSON
    /// (a pretty-printed listing, an indented API response) is cut as text, by its lines.
    ///
    /// ```
    /// use toolsmith::ToolOutput;
    ///
    /// let output = ToolOutput::json(&serde_json::json!({ "open": 3, "closed": [1, 2] }))?;
    /// assert_eq!(output.as_json(), Some(r#"{"open":3,"closed":[1,2]}"#));
    /// # Ok::<(), toolsmith::ToolError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`ToolError::Failed`] when `value` cannot be written as JSON (a map with non-string
    /// keys, a `Serialize` impl that fails).
    pub fn json(value: &impl serde::Serialize) -> Result<Self, ToolError> {
        serde_json::to_string(value)
            .map(|json| ToolOutput {
                body: Body::Json(json),
                media: Vec::new(),
                meta: Map::new(),
                structure: None,
            })
            .map_err(|error| {
                ToolError::failed_with("the result could not be written as JSON", error)
            })
    }

    /// An output made of a stream of byte chunks, consumed by the registry as it arrives.
    ///
    /// ```
    /// use toolsmith::ToolOutput;
    ///
    /// let chunks = (0..3).map(|i| Ok(format!("chunk {i}\n").into_bytes()));
    /// let output = ToolOutput::stream(futures_util::stream::iter(chunks));
    /// assert!(output.is_stream());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stream(
        stream: impl futures_core::Stream<Item = Result<Vec<u8>, ToolError>> + Send + 'static,
    ) -> Self {
        ToolOutput {
            body: Body::Stream(Box::pin(stream)),
            media: Vec::new(),
            meta: Map::new(),
            structure: None,
        }
    }

    /// States a fact about the call beside its content (`"toolsmith/confinement": "full"`): the
    /// model does not read it; [`ResultMeta::tool_meta`](crate::registry::ResultMeta::tool_meta)
    /// carries it, and an MCP server sends it as the result's `_meta`. Name keys with a prefix
    /// of your own (`mytool/…`).
    pub fn with_meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.meta.insert(key.into(), value.into());
        self
    }

    /// Adds an image or an audio clip after the output's text: the model sees it as a block of
    /// its own, within the registry's [`MediaLimits`](super::MediaLimits) (past them it is stored
    /// as an artifact, and a note in the text says how to read it back).
    ///
    /// ```
    /// use toolsmith::ToolOutput;
    /// use toolsmith::tool::Media;
    ///
    /// let output = ToolOutput::text("The chart of last week's latency:")
    ///     .with_media(Media::image(b"\x89PNG\r\n\x1a\n", "image/png"));
    /// assert_eq!(output.media().len(), 1);
    /// ```
    pub fn with_media(mut self, media: Media) -> Self {
        self.media.push(media);
        self
    }

    /// States the result as a structure too, beside its text: what an MCP server's tool sends
    /// as `structuredContent` when its text is not that JSON (a greeting with
    /// `{"result": "hello, ada"}`). The model reads the text, budgeted as every text is;
    /// [`ToolResult::structure`](crate::registry::ToolResult::structure) carries the structure
    /// whole, and an MCP server (`serve`) sends it on, cut to the call's allowance where it is
    /// over it and the cut still matches the tool's
    /// [output schema](crate::tool::ToolSpec::output_schema). A JSON output
    /// ([`json`](Self::json)) needs none: it is its own structure. Not kept for an error.
    ///
    /// ```
    /// use toolsmith::ToolOutput;
    ///
    /// let output = ToolOutput::text("hello, ada")
    ///     .with_structure(serde_json::json!({ "result": "hello, ada" }));
    /// assert_eq!(output.structure(), Some(&serde_json::json!({ "result": "hello, ada" })));
    /// ```
    pub fn with_structure(mut self, structure: Value) -> Self {
        self.structure = Some(Box::new(structure));
        self
    }

    /// The structure stated with [`with_structure`](Self::with_structure).
    pub fn structure(&self) -> Option<&Value> {
        self.structure.as_deref()
    }

    /// The images and audio clips added with [`with_media`](Self::with_media), in order.
    pub fn media(&self) -> &[Media] {
        &self.media
    }

    /// The facts stated with [`with_meta`](Self::with_meta).
    pub fn meta(&self) -> &Map<String, Value> {
        &self.meta
    }

    /// The output's text; `None` for JSON and for a stream.
    pub fn as_text(&self) -> Option<&str> {
        match &self.body {
            Body::Empty => Some(""),
            Body::Text(text) => Some(text),
            Body::Json(_) | Body::Stream(_) => None,
        }
    }

    /// The output's compact JSON text, when it is JSON.
    pub fn as_json(&self) -> Option<&str> {
        match &self.body {
            Body::Json(json) => Some(json),
            _ => None,
        }
    }

    /// Whether the output is a stream.
    pub fn is_stream(&self) -> bool {
        matches!(self.body, Body::Stream(_))
    }

    pub(crate) fn into_parts(self) -> OutputParts {
        OutputParts {
            body: self.body,
            media: self.media,
            meta: self.meta,
            structure: self.structure,
        }
    }
}

/// A [`ToolOutput`] taken apart by the registry.
pub(crate) struct OutputParts {
    pub(crate) body: Body,
    pub(crate) media: Vec<Media>,
    pub(crate) meta: Map<String, Value>,
    pub(crate) structure: Option<Box<Value>>,
}

/// A tool's result as JSON: a tool function returns `Ok(Json(value))` for any `Serialize`
/// value, and the model reads it as compact JSON, cut (over its allowance) to JSON that is still
/// valid, as [`ToolOutput::json`] is.
///
/// ```
/// use serde::Serialize;
/// use toolsmith::{Json, ToolError, tool};
///
/// #[derive(Serialize)]
/// struct Issue {
///     number: u32,
///     title: String,
/// }
///
/// /// Lists the open issues.
/// #[tool]
/// async fn open_issues() -> Result<Json<Vec<Issue>>, ToolError> {
///     Ok(Json(vec![Issue { number: 7, title: "Budget split".into() }]))
/// }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Json<T>(pub T);

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        ToolOutput::text(text)
    }
}

impl From<Media> for ToolOutput {
    /// An output of one image or audio clip and no text.
    fn from(media: Media) -> Self {
        ToolOutput::default().with_media(media)
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        ToolOutput::text(text)
    }
}
