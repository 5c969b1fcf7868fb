//! The built-in `read_artifact` tool: how a model reads the rest of a trimmed output.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::artifacts::{
    ArtifactError, ArtifactId, ArtifactPage, ArtifactStore, MediaRead, PageRequest, READ_ARTIFACT,
    too_large_to_read, try_read_media,
};
use crate::figures::grouped;
use crate::tool::ToolContext;
use crate::tool::{Media, MediaKind};
use crate::tool::{Tool, ToolAnnotations, ToolLimits};
use crate::tool::{ToolError, ToolOutput};

/// Room kept for the page header (`[artifact …: lines 1-120 of 5,000; next: offset=120]`,
/// with a note when the artifact was capped).
const HEADER_RESERVE: usize = 300;

/// The arguments of `read_artifact`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArtifactArgs {
    /// The artifact id, as the truncation marker gives it.
    pub id: String,
    /// The first line to read, counting from 0: a line a marker numbers N is `offset` N-1.
    /// Defaults to 0.
    #[serde(default)]
    pub offset: usize,
    /// Where in line `offset` to start, in chars from its beginning. Defaults to 0; a page
    /// that cuts a long line says the char offset it goes on from.
    #[serde(default)]
    pub char_offset: usize,
    /// How many lines to read. Defaults to as many as fit the budget.
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Pages through artifacts, within the call's budget. The registry registers it when an
/// artifact store is configured.
pub struct ReadArtifact {
    store: Arc<dyn ArtifactStore>,
}

impl ReadArtifact {
    /// A reader of `store`.
    pub fn new(store: Arc<dyn ArtifactStore>) -> Self {
        ReadArtifact { store }
    }
}

impl fmt::Debug for ReadArtifact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadArtifact")
            .field("store", &self.store)
            .finish()
    }
}

#[async_trait]
impl Tool for ReadArtifact {
    type Args = ReadArtifactArgs;

    fn name(&self) -> Cow<'static, str> {
        READ_ARTIFACT.into()
    }

    fn description(&self) -> Cow<'static, str> {
        "Reads the full output of a truncated tool result, one page of lines at a time. Pass the \
         artifact id from the truncation marker; `offset` is the first line (0-based) and \
         `limit` the number of lines. Each page says where the next one starts; a line longer \
         than a page goes on at the `char_offset` the page gives. An artifact holding an image \
         or audio clip comes back as that image or clip."
            .into()
    }

    fn limits(&self) -> ToolLimits {
        // A page keeps its head: paginated, the whole room goes to the top.
        ToolLimits::default().with_paginate(true)
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::new().with_read_only(true)
    }

    async fn call(
        &self,
        args: ReadArtifactArgs,
        cx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let id = ArtifactId::parse(&args.id)
            .map_err(|error| ToolError::invalid_arguments(format!("id: {error}")))?;
        if args.asks_whole() {
            match self.media(&id).await? {
                MediaRead::Media(stored) => {
                    if let Some(output) = media_output(&id, stored) {
                        return Ok(output);
                    }
                    // A blob is no block of a tool result: its base64 is paged as text.
                }
                MediaRead::TooLarge {
                    kind,
                    mime_type,
                    bytes,
                } => {
                    return Err(ToolError::failed(too_large_to_read(
                        &id,
                        &kind,
                        &mime_type,
                        bytes,
                        self.store.location(),
                    )));
                }
                MediaRead::NotMedia => {}
            }
        }
        let request = PageRequest {
            offset: args.offset,
            char_offset: args.char_offset,
            limit: args.limit,
            // Bytes bound chars from above, so the body fits whatever the text.
            max_bytes: cx.allowance().saturating_sub(HEADER_RESERVE),
        };
        let store = self.store.clone();
        let read_id = id.clone();
        let page = tokio::task::spawn_blocking(move || store.read_page(&read_id, request))
            .await
            .map_err(|error| ToolError::failed_with("the artifact store failed", error))?
            .map_err(|error| read_failure(&id, error))?;
        if page.lines == 0 {
            if args.limit == Some(0) {
                return Err(ToolError::invalid_arguments("limit: must be at least 1"));
            }
            return Err(ToolError::invalid_arguments(format!(
                "offset: {} is past the end of artifact `{id}`, which has {} lines",
                args.offset,
                grouped(page.total_lines)
            )));
        }
        if page.cut_mid_line && page.lines == 1 && page.last_line_chars == 0 {
            return Err(ToolError::invalid_arguments(format!(
                "the call's budget of {} chars leaves no room for a page of artifact `{id}`; \
                 read it in a call with a larger share of the batch",
                grouped(cx.allowance())
            )));
        }
        let mut text = page_header(&id, &page);
        text.push_str(&page.text);
        Ok(text.into())
    }
}

impl ReadArtifact {
    /// What artifact `id` holds when it is media: the media, or that it is too large to give
    /// back whole. The store's failure is the call's error, said at once.
    async fn media(&self, id: &ArtifactId) -> Result<MediaRead, ToolError> {
        let store = self.store.clone();
        let read_id = id.clone();
        tokio::task::spawn_blocking(move || try_read_media(store.as_ref(), &read_id))
            .await
            .map_err(|error| ToolError::failed_with("the artifact store failed", error))?
            .map_err(|error| read_failure(id, error))
    }
}

/// Whether `read_artifact`'s `arguments` ask for an artifact whole (no `offset`, `char_offset`
/// or `limit`): then media come back as the content they were, or are refused at once when
/// too large; a ranged read pages an artifact's lines, media's base64 included.
/// Arguments that cannot be read ask for nothing whole: the reader says what is wrong.
#[cfg(feature = "mcp")]
pub(crate) fn asks_whole(arguments: &serde_json::Value) -> bool {
    serde_json::from_value::<ReadArtifactArgs>(arguments.clone())
        .is_ok_and(|args| args.asks_whole())
}

impl ReadArtifactArgs {
    fn asks_whole(&self) -> bool {
        self.offset == 0 && self.char_offset == 0 && self.limit.is_none()
    }
}

/// The media an artifact held, as the block it was, after a line naming it; `None` for a kind
/// a tool result cannot carry (a blob).
fn media_output(id: &ArtifactId, stored: crate::artifacts::StoredMedia) -> Option<ToolOutput> {
    let kind = MediaKind::from_content_type(&stored.kind)?;
    let text = format!(
        "[artifact {id}: the {kind} ({}, {} bytes of base64) it holds]",
        stored.mime_type,
        grouped(stored.data.len())
    );
    let media = Media::from_trusted(kind, stored.data, stored.mime_type).read_back_from(id);
    Some(ToolOutput::text(text).with_media(media))
}

/// What a read of artifact `id` that failed tells the model: not found only when the store
/// does not hold it; else the store's own words (which store, what it answered), so that the
/// model does not take a store that is down for an output that is gone.
pub(crate) fn read_failure(id: &ArtifactId, error: ArtifactError) -> ToolError {
    match error {
        ArtifactError::NotFound(_) => {
            ToolError::not_found(format!("artifact `{id}` (it may have expired)"))
        }
        other => ToolError::failed(format!(
            "artifact `{id}` could not be read: {other}. The output is not known to be gone: \
             try again later, or ask the operator about the store"
        )),
    }
}

/// The header line of a page: which lines it holds, where a long line was entered or cut, and
/// where the next page starts.
fn page_header(id: &ArtifactId, page: &ArtifactPage) -> String {
    let first = page.offset + 1;
    let last = page.offset + page.lines;
    let mut range = if page.lines == 1 {
        format!("line {}", grouped(first))
    } else {
        format!("lines {}-{}", grouped(first), grouped(last))
    };
    if page.first_char > 0 {
        range.push_str(&format!(" from char {}", grouped(page.first_char + 1)));
    }
    range.push_str(&format!(" of {}", grouped(page.total_lines)));
    let cut = match page.next() {
        Some((line, char_offset)) if page.cut_mid_line => format!(
            ", line {} cut after char {} to fit the budget",
            grouped(line + 1),
            grouped(char_offset)
        ),
        _ => String::new(),
    };
    let next = match page.next() {
        Some((line, 0)) => format!("next: offset={line}"),
        Some((line, char_offset)) => format!("next: offset={line} char_offset={char_offset}"),
        None => "end of artifact".to_owned(),
    };
    let capped = if page.capped {
        "; capped when stored: the middle of the output was left out where a [toolsmith: …] \
         line says so"
    } else {
        ""
    };
    format!("[artifact {id}: {range}{cut}; {next}{capped}]\n")
}
