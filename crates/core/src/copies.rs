//! Two copies of one result: a structure and a text that repeats it. MCP lets a tool result
//! carry its data as `structuredContent` and, for clients that read only text, the same data
//! as text blocks; a host that shows the model both pays for it twice. Where a structure
//! repeats its text, the registry, `serve` and the proxy make the two share the cap, and a cut
//! structure's texts are written again from the cut, so both show the same; this is the one
//! rule of whether and how they repeat.

// Without the `mcp` feature, only a typed JSON result's own copy is written again here.
#![cfg_attr(not(feature = "mcp"), allow(dead_code))]

use serde_json::Value;

/// How deep a structure is searched for the text (deeper strings are not looked at).
const MAX_DEPTH: usize = 100;

/// Whether `structure` repeats `text`: the text is one of its strings, or the text is its JSON.
pub(crate) fn repeats(structure: &Value, text: &str) -> bool {
    holds_string(structure, text, 0) || is_json_of(structure, text)
}

/// Whether `text` is `structure`'s JSON.
fn is_json_of(structure: &Value, text: &str) -> bool {
    matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['))
        && serde_json::from_str::<Value>(text).is_ok_and(|parsed| parsed == *structure)
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

/// How the texts of a result repeat its structure, where they can be written again from a cut
/// of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Repeat {
    /// One text (the `text`-th) is the JSON of the structure's value at `pointer` (the whole
    /// at `""`; its one member's value, as the memory server writes `{"entities": […]}` beside
    /// the list's JSON), laid out as `layout`.
    Json {
        text: usize,
        pointer: String,
        layout: Layout,
    },
    /// The texts are the items of the structure's one list (at `pointer`), one each, in order:
    /// each item's JSON laid out as `layout`, or the item itself when it is a string. What the
    /// Python SDK sends for a tool that returns a list.
    Items { pointer: String, layout: Layout },
}

/// How a text lays out JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// No whitespace: `{"a":1,"b":[2,3]}` (`JSON.stringify`, serde).
    Compact,
    /// A space after each comma and colon: `{"a": 1, "b": [2, 3]}` (Python's `json.dumps`).
    Spaced,
    /// One member a line, indented by this many spaces.
    Pretty(usize),
}

impl Layout {
    /// The layout of `text`, the JSON of `value`.
    pub(crate) fn of(text: &str, value: &Value) -> Layout {
        if let Some((_, after)) = text.trim().split_once('\n') {
            let indent = after.len() - after.trim_start_matches(' ').len();
            return Layout::Pretty(if indent == 0 { 2 } else { indent });
        }
        if render(value, Layout::Spaced) == text.trim()
            && render(value, Layout::Compact) != text.trim()
        {
            Layout::Spaced
        } else {
            Layout::Compact
        }
    }
}

/// How `texts` (a result's text blocks, in order) repeat `structure`, when they are its JSON or
/// its one list's items; `None` otherwise.
pub(crate) fn repeat(structure: &Value, texts: &[&str]) -> Option<Repeat> {
    if let Some(text) = texts.iter().position(|text| is_json_of(structure, text)) {
        return Some(Repeat::Json {
            text,
            pointer: String::new(),
            layout: Layout::of(texts[text], structure),
        });
    }
    let Value::Object(members) = structure else {
        return None;
    };
    let [(key, member)] = members.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let pointer = pointer_to(key);
    // `{"entities": […]}` and the list's JSON.
    if (member.is_array() || member.is_object())
        && let Some(text) = texts.iter().position(|text| is_json_of(member, text))
    {
        return Some(Repeat::Json {
            text,
            pointer,
            layout: Layout::of(texts[text], member),
        });
    }
    // `{"result": [item, …]}` and a text per item.
    let Value::Array(items) = member else {
        return None;
    };
    if items.is_empty() || items.len() != texts.len() {
        return None;
    }
    let is_item = |(item, text): (&Value, &&str)| match item {
        Value::String(s) => s == *text,
        item => is_json_of(item, text),
    };
    if !items.iter().zip(texts).all(is_item) {
        return None;
    }
    let layout = items
        .iter()
        .zip(texts)
        .find(|(item, _)| !item.is_string())
        .map_or(Layout::Compact, |(item, text)| Layout::of(text, item));
    Some(Repeat::Items { pointer, layout })
}

/// The JSON Pointer to a member of the root: `/key`, `~` and `/` escaped.
fn pointer_to(key: &str) -> String {
    let mut pointer = String::from("/");
    for c in key.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
    pointer
}

/// The texts that repeat `structure` (a cut of the structure the texts repeated as `repeat`
/// says), written again from it.
pub(crate) fn texts_of(structure: &Value, repeat: &Repeat) -> Vec<String> {
    match repeat {
        Repeat::Json {
            pointer, layout, ..
        } => structure
            .pointer(pointer)
            .map(|value| render(value, *layout))
            .into_iter()
            .collect(),
        Repeat::Items { pointer, layout } => structure
            .pointer(pointer)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|item| match item {
                Value::String(text) => text.clone(),
                item => render(item, *layout),
            })
            .collect(),
    }
}

/// `value` as JSON laid out as `layout`.
pub(crate) fn render(value: &Value, layout: Layout) -> String {
    use serde::Serialize as _;
    let mut out = Vec::with_capacity(128);
    let written = match layout {
        Layout::Compact => serde_json::to_writer(&mut out, value),
        Layout::Pretty(indent) => {
            let indent = vec![b' '; indent.min(16)];
            let formatter = serde_json::ser::PrettyFormatter::with_indent(&indent);
            value.serialize(&mut serde_json::Serializer::with_formatter(
                &mut out, formatter,
            ))
        }
        Layout::Spaced => value.serialize(&mut serde_json::Serializer::with_formatter(
            &mut out, Spaced,
        )),
    };
    // Writing a `Value` to memory does not fail; its bytes are UTF-8.
    written
        .ok()
        .and_then(|()| String::from_utf8(out).ok())
        .unwrap_or_default()
}

/// Python's `json.dumps` layout: `", "` and `": "`.
struct Spaced;

impl serde_json::ser::Formatter for Spaced {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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

    #[test]
    fn texts_that_repeat_a_structure_are_written_again_in_their_layout() {
        let graph = json!({ "entities": [{ "name": "a" }], "relations": [] });
        for text in [
            serde_json::to_string(&graph).unwrap(),
            serde_json::to_string_pretty(&graph).unwrap(),
            "{\"entities\": [{\"name\": \"a\"}], \"relations\": []}".to_owned(),
            render(&graph, Layout::Pretty(4)),
        ] {
            let json = repeat(&graph, &["a greeting", &text]).expect("it repeats");
            assert!(matches!(json, Repeat::Json { text: 1, .. }));
            assert_eq!(texts_of(&graph, &json), [text]);
        }
        // The Python SDK's list: a text per item.
        let rows = json!({ "result": [{ "id": 1 }, { "id": 2 }] });
        let texts = ["{\n  \"id\": 1\n}", "{\n  \"id\": 2\n}"];
        let items = repeat(&rows, &texts).expect("it repeats");
        assert_eq!(
            items,
            Repeat::Items {
                pointer: "/result".into(),
                layout: Layout::Pretty(2)
            }
        );
        let cut = json!({ "result": [{ "id": 2 }] });
        assert_eq!(texts_of(&cut, &items), [texts[1]]);
        // The memory server's: a list's JSON beside `{"entities": list}`.
        let entities = json!({ "entities": [{ "name": "a" }, { "name": "b" }] });
        let text = serde_json::to_string_pretty(&entities["entities"]).unwrap();
        let json = repeat(&entities, &[&text]).expect("it repeats");
        let cut = json!({ "entities": [{ "name": "b" }] });
        assert_eq!(
            texts_of(&cut, &json),
            [render(&cut["entities"], Layout::Pretty(2))]
        );
        let names = json!({ "result": ["a", "b"] });
        assert!(repeat(&names, &["a", "b"]).is_some());
        assert!(repeat(&names, &["a"]).is_none());
    }
}
