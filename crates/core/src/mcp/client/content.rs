//! A server's result as the model reads it: its content blocks, its structured content, its
//! error.

use std::sync::Arc;

use rmcp::model::{Annotations, CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

use crate::tool::{Media, MediaKind, ToolContext, ToolError, ToolOutput, problem_of};

/// What the model reads of the result of the server's tool `remote`.
pub(super) async fn output(
    remote: &str,
    result: CallToolResult,
    cx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let mut parts = Vec::with_capacity(result.content.len());
    let mut media = Vec::new();
    for block in result.content {
        let (kind, data, mime_type, annotations) = match block {
            ContentBlock::Image(image) => (
                MediaKind::Image,
                image.data,
                image.mime_type,
                image.annotations,
            ),
            ContentBlock::Audio(audio) => (
                MediaKind::Audio,
                audio.data,
                audio.mime_type,
                audio.annotations,
            ),
            other => {
                parts.push(text_of(other, cx).await);
                continue;
            }
        };
        match shown(kind, data, mime_type, annotations) {
            Ok(shown) => media.push(shown),
            Err((why, data, mime_type)) => {
                parts.push(binary(&format!("{kind} ({why})"), &mime_type, data, cx).await);
            }
        }
    }
    if result.is_error == Some(true) {
        // An error is its text: its images and audio are kept as artifacts, each named in it.
        for media in media {
            let (kind, mime_type) = (media.kind(), media.mime_type().to_owned());
            parts.push(binary(kind.as_str(), &mime_type, media.into_base64(), cx).await);
        }
        let text = parts.join("\n");
        return Err(ToolError::failed(if text.is_empty() {
            format!("`{}` failed without saying why", remote)
        } else {
            text
        }));
    }
    let text = parts.join("\n");
    let output = match result.structured_content {
        // The server states the result is this structure (its texts, if any, are the same
        // data serialized — the value, its one member, or a text per item of its list — as the
        // protocol recommends): it is cut as JSON, by its schema when the tool states one.
        Some(structured) if parts.is_empty() || is_copy_of(&structured, &parts) => {
            ToolOutput::json(&structured)?
        }
        // A structure beside a text that is not it (a greeting, and `{"result": …}`): the
        // model reads the text; the structure is kept whole beside it, for a server of ours
        // (`serve`) to send on.
        Some(structured) => ToolOutput::text(text).with_structure(structured),
        None => ToolOutput::text(text),
    };
    // The server's `_meta` of the result is what it stated beside its content.
    let stated = result.meta.map(|meta| meta.0).unwrap_or_default();
    let output = stated
        .into_iter()
        .fold(output, |output, (key, value)| output.with_meta(key, value));
    Ok(media.into_iter().fold(output, ToolOutput::with_media))
}

/// Whether a result's parts are all copies of its structure: one text that is its JSON (or its
/// one member's), or a text per item of its list.
fn is_copy_of(structured: &Value, parts: &[String]) -> bool {
    let texts: Vec<&str> = parts.iter().map(String::as_str).collect();
    match crate::copies::repeat(structured, &texts) {
        Some(crate::copies::Repeat::Json { .. }) => texts.len() == 1,
        Some(crate::copies::Repeat::Items { .. }) => true,
        None => false,
    }
}

/// What the model reads of a block that is not an image or an audio clip: a text as it is, an
/// embedded resource's text, a placeholder for binary content (kept as an artifact).
async fn text_of(block: ContentBlock, cx: &ToolContext) -> String {
    match block {
        ContentBlock::Text(text) => text.text,
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
        ContentBlock::ResourceLink(link) => link_line(&link),
        _ => "[content of a kind this client does not know]".to_owned(),
    }
}

/// A resource link as the model reads it: what the server said of it, on one line (`[resource
/// link: name (title, MIME type, size): uri — description]`), to read with the server's resource
/// tools or to name to the user.
fn link_line(link: &rmcp::model::Resource) -> String {
    let mut about: Vec<String> = Vec::new();
    about.extend(link.title.clone());
    about.extend(link.mime_type.clone());
    about.extend(
        link.size
            .map(|size| format!("{} bytes", crate::figures::grouped(size))),
    );
    let mut line = format!("[resource link: {}", link.name);
    if !about.is_empty() {
        line.push_str(&format!(" ({})", about.join(", ")));
    }
    line.push_str(&format!(": {}", link.uri));
    if let Some(description) = link.description.as_deref().filter(|d| !d.trim().is_empty()) {
        line.push_str(&format!(
            " — {}",
            crate::mcp::caps::description(description)
        ));
    }
    line.push(']');
    line
}

/// An image or audio clip of the server's as the model is shown it, its annotations kept; or,
/// when its data is not base64 or its MIME type not one, why, with what it was.
fn shown(
    kind: MediaKind,
    data: String,
    mime_type: String,
    annotations: Option<Annotations>,
) -> Result<Media, (String, String, String)> {
    // Checked, not taken on trust: a provider refuses a whole request over one bad block.
    if let Some(problem) = problem_of(kind, &data, &mime_type) {
        return Err((problem, data, mime_type));
    }
    let media = Media::from_trusted(kind, data, mime_type);
    Ok(match annotations.map(serde_json::to_value) {
        Some(Ok(Value::Object(annotations))) => media.with_annotations(annotations),
        _ => media,
    })
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
        crate::figures::grouped(bytes)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::{ArtifactId, ArtifactStore, MemoryStore};

    #[tokio::test]
    async fn an_error_result_keeps_its_images_as_artifacts_named_in_its_text() {
        let store: Arc<dyn ArtifactStore> = Arc::new(MemoryStore::new());
        let cx = ToolContext::new("call_1", "render", 1_000).with_artifacts(Some(store.clone()));
        let result = CallToolResult::error(vec![
            ContentBlock::text("the chart could not be finished"),
            ContentBlock::image("iVBORw0KGgo=", "image/png"),
        ]);
        let error = output("render", result, &cx).await.unwrap_err();
        let text = error.model_text();
        assert!(text.contains("the chart could not be finished"), "{text}");
        let id = text
            .split("as artifact ")
            .nth(1)
            .and_then(|rest| ArtifactId::parse(&rest[..32]).ok())
            .expect("the image is named by its artifact");
        let page = store
            .read_page(
                &id,
                crate::artifacts::PageRequest {
                    offset: 0,
                    char_offset: 0,
                    limit: None,
                    max_bytes: 1 << 20,
                },
            )
            .unwrap();
        assert_eq!(page.text, "iVBORw0KGgo=");
    }
}
