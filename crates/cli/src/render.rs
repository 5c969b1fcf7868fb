//! Results as the commands print them: `--json` objects and the table of figures.

use serde_json::{Value, json};
use toolsmith::ToolResult;

/// A result with its figures.
pub(crate) fn result_json(result: &ToolResult) -> Value {
    let meta = &result.meta;
    let kept = meta.cut.as_ref().map(|cut| {
        let span = |s: Option<toolsmith::trim::LineSpan>| s.map(|s| json!([s.first, s.last]));
        json!({
            "chars": cut.kept_chars,
            "head_lines": span(cut.head_lines()),
            "tail_lines": span(cut.tail_lines()),
            "spans": cut.spans.iter().map(|s| json!([s.first, s.last])).collect::<Vec<_>>(),
            "folded_lines": cut.folded_lines,
            "escapes_removed": cut.escapes_removed,
            "redraws_removed": cut.redraws_removed,
        })
    });
    json!({
        "call_id": result.call_id,
        "tool": result.tool,
        "is_error": result.is_error(),
        "content": result.content,
        "allowance": meta.allowance,
        "original_chars": meta.original_chars,
        "original_lines": meta.original_lines,
        "trimmed": meta.trimmed(),
        "kept": kept,
        "artifact": meta.artifact.as_ref().map(|id| id.as_str().to_owned()),
        "artifact_error": meta.artifact_error,
        "error_kind": meta.error_kind,
        "confinement": meta.tool_meta.get(toolsmith_std::CONFINEMENT_META_KEY),
        "tokens": meta.tokens.map(|tokens| json!({
            "cap": tokens.cap,
            "sent": tokens.sent,
            "cut_by_tokens": tokens.cut_by_tokens,
        })),
        "media": result.media.iter().map(|media| json!({
            "kind": media.kind().as_str(),
            "mime_type": media.mime_type(),
            "bytes": media.size(),
            "annotations": media.annotations(),
            "data": media.base64(),
        })).collect::<Vec<_>>(),
        "media_left_out": meta.media_left_out.iter().map(|left| json!({
            "kind": left.kind.as_str(),
            "mime_type": left.mime_type,
            "base64_bytes": left.base64_bytes,
            "reason": left.reason,
            "artifact": left.artifact.as_ref().map(|id| id.as_str().to_owned()),
            "artifact_error": left.artifact_error,
        })).collect::<Vec<_>>(),
    })
}

/// A line for each image or audio clip of a result, which a terminal cannot show: what it is,
/// and how to get its data.
pub(crate) fn media_lines(result: &ToolResult) -> Vec<String> {
    result
        .media
        .iter()
        .map(|media| {
            format!(
                "[{} ({}, {} bytes): not shown here; --json gives its base64 data]",
                media.kind(),
                media.mime_type(),
                toolsmith::figures::grouped(media.size())
            )
        })
        .collect()
}

/// The per-call figures of a batch, one line each.
pub(crate) fn table(results: &[ToolResult]) -> String {
    let mut out = format!(
        "{:<14} {:<16} {:>9} {:>9} {:>9}  {}\n",
        "call", "tool", "allowance", "original", "kept", "artifact"
    );
    for r in results {
        out.push_str(&format!(
            "{:<14} {:<16} {:>9} {:>9} {:>9}  {}\n",
            r.call_id,
            r.tool,
            r.meta.allowance,
            r.meta.original_chars,
            r.content_chars(),
            artifact_cell(r),
        ));
    }
    out
}

/// The artifact column of a table of results (the batch's, the demo's): the artifact holding
/// the full output, else the kind of error, else `-`.
pub(crate) fn artifact_cell(result: &ToolResult) -> String {
    match (&result.meta.artifact, result.is_error()) {
        (Some(id), _) => id.as_str().to_owned(),
        (None, true) => format!(
            "(error: {})",
            result
                .meta
                .error_kind
                .unwrap_or(toolsmith::tool::ErrorKind::Failed)
        ),
        (None, false) => "-".to_owned(),
    }
}
