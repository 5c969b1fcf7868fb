//! Media blocks: what a block's data is, and a media artifact as the block it was.

use serde_json::{Value, json};

use crate::artifacts::{self, ArtifactId};

/// The base64 data of a media block, its content type (`image`, `audio`, `blob`) and MIME type.
pub(super) fn media_of(block: &Value) -> Option<(&str, &str, &str)> {
    if block.get("type").and_then(Value::as_str) == Some("resource") {
        let resource = block.get("resource")?;
        let mime = resource
            .get("mimeType")
            .and_then(Value::as_str)
            .unwrap_or("application/octet-stream");
        return Some(("blob", mime, resource.get("blob")?.as_str()?));
    }
    let kind = block.get("type")?.as_str()?;
    let mime = block
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or("application/octet-stream");
    Some((kind, mime, block.get("data")?.as_str()?))
}

/// A media artifact as the content block it was: an image, an audio clip, or an embedded
/// resource's blob.
pub(crate) fn media_block(media: artifacts::StoredMedia, id: &ArtifactId) -> Value {
    let artifacts::StoredMedia {
        kind,
        mime_type: mime,
        data,
    } = media;
    match kind.as_str() {
        "blob" => json!({
            "type": "resource",
            "resource": { "uri": format!("toolsmith://artifact/{id}"), "mimeType": mime, "blob": data },
        }),
        kind => json!({ "type": kind, "mimeType": mime, "data": data }),
    }
}
