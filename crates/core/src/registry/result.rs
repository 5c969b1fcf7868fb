//! What the model sees of one call: [`ToolResult`], and the figures behind it, [`ResultMeta`].

use std::time::Duration;

use serde_json::json;

use crate::artifacts::ArtifactId;
use crate::figures::grouped;
use crate::history::{Block, Extra, ResultContent, TextBlock, ToolResultBlock};
use crate::tool::{ErrorKind, Media, MediaKind};
use crate::trim::Cut;

/// One tool result: exactly what the model sees, plus the figures behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolResult {
    /// The id of the tool call this answers (`tool_use_id`).
    pub call_id: String,
    /// The name of the tool the model called (possibly unknown to the registry).
    pub tool: String,
    /// The text the model sees: the output, trimmed with a marker if it exceeded its allowance,
    /// then a note for each image or audio clip left out
    /// ([`meta.media_left_out`](ResultMeta::media_left_out)).
    pub content: String,
    /// The images and audio clips the model sees after the text, in the tool's order, within
    /// the registry's [`MediaLimits`](crate::tool::MediaLimits). They do not count against the
    /// allowance, which is in chars of text.
    pub media: Vec<Media>,
    /// The tool's structure whole, for a protocol that sends a structure beside the text (MCP's
    /// `structuredContent`, which `serve` sends, cut to the allowance when the cut still
    /// matches the tool's output schema): the structure the tool stated beside its text
    /// ([`ToolOutput::with_structure`](crate::ToolOutput::with_structure), an MCP server's
    /// tool whose text is not its structure); or the tool's JSON, when its text was cut and
    /// the tool states an output schema, which a cut could break. `None` otherwise, and for
    /// an error (a JSON result that was not cut is its [`content`](Self::content),
    /// [`meta.structured`](ResultMeta::structured) says so).
    pub structure: Option<serde_json::Value>,
    /// Whether [`structure`](Self::structure) was stated beside the text (its artifact, if it
    /// needs one, is not the text's).
    pub(crate) structure_beside: bool,
    /// How the content was budgeted.
    pub meta: ResultMeta,
}

impl ToolResult {
    /// What the registry did to the output, machine-readable: the figures its marker states in
    /// words (chars received and sent, lines shown and folded, the artifact and its URI, where
    /// to read on), as the object `serve` sends in a result's `_meta` under
    /// [`CUT_META_KEY`](crate::registry::CUT_META_KEY). `None` when nothing was cut or left out.
    pub fn cut_facts(&self) -> Option<serde_json::Value> {
        let meta = &self.meta;
        if meta.cut.is_none() && meta.media_left_out.is_empty() && meta.structure_cut.is_none() {
            return None;
        }
        let facts = super::facts::CutFacts {
            cut: meta.cut.as_ref().is_none_or(|cut| !cut.compacted)
                || !meta.media_left_out.is_empty()
                || meta.structure_cut.is_some(),
            compacted: meta.cut.as_ref().is_some_and(|cut| cut.compacted),
            received_chars: meta.original_chars as u64,
            sent_chars: self.content_chars() as u64,
            cuts: meta
                .cut
                .iter()
                .map(|cut| super::facts::cut_fact(0, cut, meta.artifact.as_ref()))
                .collect(),
            tokens: meta.tokens.map(|tokens| (tokens.cap, tokens.sent)),
            structure: meta.structure_cut.clone(),
            artifacts: meta
                .artifact
                .iter()
                .chain(
                    meta.media_left_out
                        .iter()
                        .filter_map(|left| left.artifact.as_ref()),
                )
                .cloned()
                .collect(),
        };
        Some(facts.to_value())
    }

    /// Whether this is an error result: [`meta.error_kind`](ResultMeta::error_kind) says which.
    pub fn is_error(&self) -> bool {
        self.meta.error_kind.is_some()
    }

    /// The chars (Unicode scalar values) of the content.
    pub fn content_chars(&self) -> usize {
        self.content.chars().count()
    }

    /// The content as a provider without an error flag reads it (OpenAI's tool messages and
    /// function call outputs, genai's tool responses): a success's as it is; an error's
    /// starting with `Error: ` when it does not already say so (`Error: invalid arguments …`),
    /// within the allowance still (cut again, with the error style, when the two words would
    /// push it over).
    ///
    /// ```
    /// # use toolsmith::{Registry, ToolCall};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let registry = Registry::builder().build()?;
    /// let results = registry.turn().execute([ToolCall::new("1", "nope", serde_json::json!({}))]).await;
    /// assert!(results[0].flagless_content().starts_with("Error: "));
    /// # Ok(())
    /// # }
    /// ```
    pub fn flagless_content(&self) -> std::borrow::Cow<'_, str> {
        const SAYS: &str = "Error: ";
        if !self.is_error()
            || self
                .content
                .get(..5)
                .is_some_and(|head| head.eq_ignore_ascii_case("error"))
        {
            return std::borrow::Cow::Borrowed(&self.content);
        }
        let said = format!("{SAYS}{}", self.content);
        let allowance = self.meta.allowance.max(SAYS.len());
        if self.content_chars() + SAYS.len() <= allowance {
            return std::borrow::Cow::Owned(said);
        }
        let full = match &self.meta.artifact {
            Some(id) => crate::trim::FullOutput::Stored {
                id: id.as_str(),
                reader: crate::artifacts::READ_ARTIFACT,
            },
            None => crate::trim::FullOutput::NotKept,
        };
        let continuation = crate::trim::Continuation::from(full);
        let style = crate::trim::TrimStyle::error();
        std::borrow::Cow::Owned(
            crate::trim::fit_with(&said, allowance, &style, &continuation)
                .into_parts()
                .0
                .into_owned(),
        )
    }

    /// The `tool_result` block that answers the call in the conversation: its content the
    /// text, or, with media, the text and an `image` block for each image. A `tool_result`
    /// has no audio block: an audio clip is a one-line text there; and an image whose
    /// annotations name its audience without the model (`"audience": ["user"]`) is one too,
    /// for the model is not its audience. [`media`](Self::media) still holds both.
    pub fn to_block(&self) -> crate::history::Block {
        if self.media.is_empty() {
            return crate::history::Block::tool_result(
                &self.call_id,
                &self.content,
                self.is_error(),
            );
        }
        let mut blocks = Vec::with_capacity(self.media.len() + 1);
        if !self.content.is_empty() {
            blocks.push(Block::Text(TextBlock {
                text: self.content.clone(),
                extra: Extra::new(),
            }));
        }
        for media in &self.media {
            blocks.push(match media.kind() {
                MediaKind::Image if !media.for_the_model() => Block::Text(TextBlock {
                    text: format!(
                        "[toolsmith: an image ({}, {} bytes) for the user only, not shown to the \
                         model]",
                        media.mime_type(),
                        grouped(media.size())
                    ),
                    extra: Extra::new(),
                }),
                MediaKind::Image => Block::Other(json!({
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": media.mime_type(),
                        "data": media.base64(),
                    },
                })),
                _ => Block::Text(TextBlock {
                    text: format!(
                        "[toolsmith: {} ({}, {} bytes) not shown: a tool result cannot carry it]",
                        media.kind(),
                        media.mime_type(),
                        grouped(media.size())
                    ),
                    extra: Extra::new(),
                }),
            });
        }
        Block::ToolResult(ToolResultBlock {
            tool_use_id: self.call_id.clone(),
            content: Some(ResultContent::Blocks(blocks)),
            is_error: self.is_error().then_some(true),
            extra: Extra::new(),
        })
    }
}

/// The figures behind one [`ToolResult`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ResultMeta {
    /// The call's final allowance in chars: the content never has more.
    pub allowance: usize,
    /// The allowance the tool saw while running (`ToolContext::allowance`).
    pub initial_allowance: usize,
    /// Chars of the full output before trimming.
    pub original_chars: usize,
    /// Lines of the full output before trimming.
    pub original_lines: usize,
    /// What the trim kept (line spans, byte lengths), when the output was trimmed.
    pub cut: Option<Cut>,
    /// The artifact holding the full output, when it was trimmed and stored.
    pub artifact: Option<ArtifactId>,
    /// Why the full output could not be stored, when storing failed.
    pub artifact_error: Option<String>,
    /// The error's kind when this is an error result; `None` for a success.
    pub error_kind: Option<ErrorKind>,
    /// How long the call ran (zero for calls refused before running).
    pub duration: Duration,
    /// The images and audio clips the result does not show, over the registry's
    /// [`MediaLimits`](crate::tool::MediaLimits): each stored as an artifact (when it could be)
    /// and named by a note at the end of the content.
    pub media_left_out: Vec<MediaLeftOut>,
    /// Whether the content is the tool's JSON result ([`ToolOutput::json`](crate::ToolOutput::json))
    /// as it wrote it: neither cut nor followed by a note. An MCP server sends such a result as
    /// `structuredContent` too.
    pub structured: bool,
    /// What the tool stated about its call beside its content
    /// ([`ToolOutput::with_meta`](crate::ToolOutput::with_meta)): run_command's
    /// `toolsmith/confinement`, an MCP server's `_meta`. Empty when it stated nothing.
    pub tool_meta: serde_json::Map<String, serde_json::Value>,
    /// The content's tokens and the cap in tokens it was held to, when one applied
    /// ([`RegistryBuilder::max_result_tokens`](crate::registry::RegistryBuilder::max_result_tokens),
    /// [`ToolLimits::max_result_tokens`](crate::tool::ToolLimits::max_result_tokens)).
    pub tokens: Option<TokensSent>,
    /// The chars the structure stated beside the text may have, when it shares the allowance
    /// with a text that repeats it: an MCP server's result, as [`McpServer`](crate::mcp::McpServer)
    /// sends it (a host may show the model both). `None` otherwise: the structure is the
    /// tool's, whole, and the text had the allowance.
    pub structure_allowance: Option<usize>,
    /// What fitting did to the structure that goes beside the text
    /// ([`structure`](ToolResult::structure)), when it was over its room: for a typed one, the
    /// places cut (a JSON Pointer each into the whole, items or chars kept of the total) and
    /// the artifact that holds it whole, as [`cut_facts`](ToolResult::cut_facts) states them
    /// under `structure`. `None` when it went whole.
    pub structure_cut: Option<serde_json::Value>,
}

/// A result's size in tokens, where a cap in tokens applied to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokensSent {
    /// The cap in tokens.
    pub cap: usize,
    /// The content's tokens, as the registry's counter counted them: at most `cap`.
    pub sent: usize,
    /// Whether the cap in tokens made the cut (the marker names it), rather than the chars
    /// allowed.
    pub cut_by_tokens: bool,
}

/// An image or audio clip a result does not show.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MediaLeftOut {
    /// An image or an audio clip.
    pub kind: MediaKind,
    /// Its MIME type.
    pub mime_type: String,
    /// Its bytes of base64.
    pub base64_bytes: usize,
    /// Which limit it was over, as the note says it.
    pub reason: String,
    /// The artifact holding it, which `read_artifact` returns as the same kind of block.
    pub artifact: Option<ArtifactId>,
    /// Why it could not be stored, when it could not.
    pub artifact_error: Option<String>,
}

impl ResultMeta {
    /// Whether the registry trimmed the output: [`cut`](Self::cut) says what it kept.
    pub fn trimmed(&self) -> bool {
        self.cut.is_some()
    }
}
