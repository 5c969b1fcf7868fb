//! Two copies of one result: a structure and a text that repeats it. MCP lets a tool result
//! carry its data as `structuredContent` and, for clients that read only text, the same data
//! as a text block; a host that shows the model both pays for it twice. Where a structure
//! repeats its text, the proxy and `serve` make the two share the cap; this is the one rule of
//! whether they repeat.

use serde_json::Value;

/// How deep a structure is searched for the text (deeper strings are not looked at).
const MAX_DEPTH: usize = 100;

/// Whether `structure` repeats `text`: the text is one of its strings, or the text is its JSON.
pub(crate) fn repeats(structure: &Value, text: &str) -> bool {
    holds_string(structure, text, 0)
        || (matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['))
            && serde_json::from_str::<Value>(text).is_ok_and(|parsed| parsed == *structure))
}

/// Whether `value` holds `text` as one of its strings (to a bounded depth).
fn holds_string(value: &Value, text: &str, depth: usize) -> bool {
    match value {
        Value::String(s) => s == text,
        _ if depth >= MAX_DEPTH => false,
        Value::Array(items) => items.iter().any(|item| holds_string(item, text, depth + 1)),
        Value::Object(map) => map.values().any(|item| holds_string(item, text, depth + 1)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::repeats;

    #[test]
    fn a_structure_repeats_a_text_it_holds_or_that_is_its_json() {
        let structure = json!({ "content": "a = 1\nb = 2\n", "path": "/etc/x.conf" });
        assert!(repeats(&structure, "a = 1\nb = 2\n"));
        assert!(repeats(
            &structure,
            &serde_json::to_string_pretty(&structure).unwrap()
        ));
        assert!(!repeats(&structure, "a = 1\n"));
        assert!(!repeats(&structure, "{\"content\": \"other\"}"));
        let rows = json!([1, 2, 3]);
        assert!(repeats(&rows, "[1, 2, 3]"));
    }
}
