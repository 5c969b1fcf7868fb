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
    })
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
            match (&r.meta.artifact, r.is_error()) {
                (Some(id), _) => id.as_str().to_owned(),
                (None, true) => format!(
                    "(error: {})",
                    r.meta
                        .error_kind
                        .unwrap_or(toolsmith::tool::ErrorKind::Failed)
                ),
                (None, false) => "-".to_owned(),
            }
        ));
    }
    out
}
