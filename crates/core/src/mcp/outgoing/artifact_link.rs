//! A cut text's link to its artifact: a `resource_link` a client that reads resources follows
//! to the full output, sent after the text where it costs little of what the model reads (the
//! registry's rule for a trailer, [`trailer_fits`](crate::registry::trailer_fits)). The proxy's
//! cut texts and `serve`'s follow this one rule.

use serde_json::{Value, json};

use super::blocks::visible_chars;
use super::store::StoreOutcome;
use crate::artifacts::ArtifactId;
use crate::registry::{ToolResult, trailer_fits};

/// The chars a reader sees of an artifact's link (the same for every id).
pub(crate) fn link_chars() -> usize {
    static CHARS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CHARS.get_or_init(|| {
        let id = ArtifactId::parse("0123456789abcdef0123456789abcdef").expect("a valid id");
        visible_chars(&artifact_link(&id))
    })
}

/// A `resource_link` block naming artifact `id`: a client that reads resources reads the full
/// output there, in pages.
pub(crate) fn artifact_link(id: &ArtifactId) -> Value {
    json!({
        "type": "resource_link",
        "uri": id.uri(),
        "name": "full output",
        "mimeType": "text/plain",
    })
}

/// The link that follows a text cut to `share` chars and kept as `stored`, where it fits the
/// share's trailer room (its chars then come out of the share).
pub(super) fn after_cut(stored: &StoreOutcome, share: usize) -> Option<Value> {
    let (id, _) = stored.as_ref().ok()?;
    trailer_fits(link_chars(), share).then(|| artifact_link(id))
}

/// The link that follows a registry's cut result as `serve` sends it: where the registry left
/// it room (a result held to a cap in tokens has none: the cap counts its text as sent, and
/// `_meta` names the artifact).
pub(crate) fn link_after_cut(result: &ToolResult) -> Option<Value> {
    let meta = &result.meta;
    let (Some(_), Some(id)) = (&meta.cut, &meta.artifact) else {
        return None;
    };
    let room = result.content_chars() + link_chars() + meta.structure_allowance.unwrap_or(0);
    (meta.tokens.is_none() && room <= meta.allowance && trailer_fits(link_chars(), meta.allowance))
        .then(|| artifact_link(id))
}
