//! A server's result as the model reads it: its content blocks, its structured content, its
//! error.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

use crate::tool::{ToolContext, ToolError, ToolOutput};

/// What the model reads of the result of the server's tool `remote`.
pub(super) async fn output(
    remote: &str,
    result: CallToolResult,
    cx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let mut parts = Vec::with_capacity(result.content.len());
    for block in result.content {
        parts.push(match block {
            ContentBlock::Text(text) => text.text,
            ContentBlock::Image(image) => binary("image", &image.mime_type, image.data, cx).await,
            ContentBlock::Audio(audio) => binary("audio", &audio.mime_type, audio.data, cx).await,
            ContentBlock::Resource(embedded) => match embedded.resource {
                ResourceContents::TextResourceContents { text, .. } => text,
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => {
                    binary(
                        &format!("resource {uri}"),
                        mime_type.as_deref().unwrap_or("application/octet-stream"),
                        blob,
                        cx,
                    )
                    .await
                }
                _ => "[a resource of a kind this client does not know]".to_owned(),
            },
            ContentBlock::ResourceLink(link) => format!("[resource: {}]", link.uri),
            _ => "[content of a kind this client does not know]".to_owned(),
        });
    }
    if result.is_error == Some(true) {
        let text = parts.join("\n");
        return Err(ToolError::failed(if text.is_empty() {
            format!("`{}` failed without saying why", remote)
        } else {
            text
        }));
    }
    let text = parts.join("\n");
    match result.structured_content {
        // The server states the result is this structure (its text, if any, is the same
        // value serialized, as the protocol recommends): it is cut as JSON.
        Some(structured)
            if parts.is_empty()
                || serde_json::from_str::<Value>(&text).is_ok_and(|v| v == structured) =>
        {
            ToolOutput::json(&structured)
        }
        _ => Ok(ToolOutput::text(text)),
    }
}

/// A placeholder line for binary content, the content kept as an artifact when there is a
/// store: the model cannot read it, a person or a later tool may.
async fn binary(what: &str, mime_type: &str, base64: String, cx: &ToolContext) -> String {
    let bytes = base64.len() / 4 * 3;
    // The store writes a file: off the async threads, as the registry stores its artifacts.
    let stored = match cx.artifacts() {
        Some(store) => {
            let store = Arc::clone(store);
            tokio::task::spawn_blocking(move || store.put(&base64))
                .await
                .ok()
                .and_then(Result::ok)
        }
        None => None,
    };
    let kept = stored.map_or_else(
        || "not shown".to_owned(),
        |id| format!("kept, base64-encoded, as artifact {id}"),
    );
    format!(
        "[{what}: {mime_type}, about {} bytes, {kept}]",
        crate::trim::grouped(bytes)
    )
}
