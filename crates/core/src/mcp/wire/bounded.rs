//! Reading a server's answers in memory proportional to what is kept: a listing's items up to
//! a count, a tool result's blocks up to a count (the rest written back as the JSON they were),
//! its structure and everything else left as raw JSON. Nothing past a limit is ever built into
//! a value, so an answer of a million tiny items costs what its text costs, not fifty times it.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::Raw;

/// A page of a listing.
#[derive(Debug, Default)]
pub(crate) struct Page {
    /// The items kept, at most the room given.
    pub(crate) items: Vec<Value>,
    /// How many items the page listed in all.
    pub(crate) listed: usize,
    /// The cursor of the next page, if the server gave one.
    pub(crate) next_cursor: Option<Value>,
}

/// Reads a listing's page (`{"tools": […], "nextCursor": …}`), keeping at most `room` items of
/// `field`.
pub(crate) fn page(json: &str, field: &str, room: usize) -> serde_json::Result<Page> {
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let page = PageSeed { field, room }.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(page)
}

struct PageSeed<'a> {
    field: &'a str,
    room: usize,
}

impl<'de> DeserializeSeed<'de> for PageSeed<'_> {
    type Value = Page;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Page, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for PageSeed<'_> {
    type Value = Page;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an object with a `{}` list", self.field)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Page, A::Error> {
        let mut page = Page::default();
        while let Some(key) = map.next_key::<String>()? {
            if key == self.field {
                let (items, listed) = map.next_value_seed(Items { room: self.room })?;
                page.items = items;
                page.listed = listed;
            } else if key == "nextCursor" {
                page.next_cursor = Some(map.next_value::<Value>()?).filter(|v| !v.is_null());
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(page)
    }
}

/// A list of which the first `room` items are kept; the rest are counted and skipped.
struct Items {
    room: usize,
}

impl<'de> DeserializeSeed<'de> for Items {
    type Value = (Vec<Value>, usize);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Items {
    type Value = (Vec<Value>, usize);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        let mut listed = 0usize;
        loop {
            if items.len() < self.room {
                match seq.next_element::<Value>()? {
                    Some(item) => items.push(item),
                    None => break,
                }
            } else if seq.next_element::<IgnoredAny>()?.is_none() {
                break;
            }
            listed += 1;
        }
        Ok((items, listed))
    }
}

/// A tool result, read in bounded memory.
#[derive(Debug, Default)]
pub(crate) struct CallResult {
    /// The first blocks, as values (all of them, within the limit).
    pub(crate) content: Vec<Value>,
    /// The blocks past the limit, as the JSON they were, one a line; and how many. They are
    /// the middle of the list: the last blocks are [`tail`](Self::tail).
    pub(crate) beyond: (usize, String),
    /// The last blocks, as values, after those past the limit (empty when none were): the end
    /// of a long list is kept as the end of a long text is.
    pub(crate) tail: Vec<Value>,
    /// Whether `content` was there at all, and a list.
    pub(crate) has_content: bool,
    /// `isError`.
    pub(crate) is_error: bool,
    /// `structuredContent`, as it was written.
    pub(crate) structured: Option<Raw>,
    /// Every other member (`_meta`, `task`, what the relay does not know), as written, in
    /// order.
    pub(crate) rest: Vec<(String, Raw)>,
}

/// Reads a `tools/call` result, keeping at most `max_blocks` content blocks as values: the
/// first half and the last half of them, the middle written back as JSON, one a line.
pub(crate) fn call_result(json: &str, max_blocks: usize) -> serde_json::Result<CallResult> {
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let result = CallSeed { max_blocks }.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(result)
}

struct CallSeed {
    max_blocks: usize,
}

impl<'de> DeserializeSeed<'de> for CallSeed {
    type Value = CallResult;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<CallResult, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for CallSeed {
    type Value = CallResult;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a tool result (an object with `content`)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CallResult, A::Error> {
        let mut result = CallResult::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "content" => {
                    let (content, beyond, tail) = map.next_value_seed(Blocks {
                        max: self.max_blocks,
                    })?;
                    result.content = content;
                    result.beyond = beyond;
                    result.tail = tail;
                    result.has_content = true;
                }
                "isError" => {
                    result.is_error = map.next_value::<Option<bool>>()?.unwrap_or(false);
                }
                "structuredContent" => result.structured = Some(map.next_value::<Raw>()?),
                _ => {
                    let value = map.next_value::<Raw>()?;
                    result.rest.push((key, value));
                }
            }
        }
        Ok(result)
    }
}

/// Content blocks: at most `max` as values — the first, and the last half of `max` — and those
/// between written back one a line. The last ones wait as raw JSON in a ring of their own, so
/// memory holds `max` blocks and the middle's text, however long the list.
struct Blocks {
    max: usize,
}

/// The first blocks, those past the limit (how many, one a line), and the last.
type Kept = (Vec<Value>, (usize, String), Vec<Value>);

impl<'de> DeserializeSeed<'de> for Blocks {
    type Value = Kept;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Blocks {
    type Value = Kept;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of content blocks")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let tail_max = self.max / 2;
        let head_max = self.max - tail_max;
        let mut kept = Vec::new();
        let mut ring: std::collections::VecDeque<Raw> = std::collections::VecDeque::new();
        let mut beyond = String::new();
        let mut count = 0usize;
        loop {
            if kept.len() < head_max {
                match seq.next_element::<Value>()? {
                    Some(block) => kept.push(block),
                    None => break,
                }
                continue;
            }
            let Some(block) = seq.next_element::<Raw>()? else {
                break;
            };
            ring.push_back(block);
            if ring.len() > tail_max
                && let Some(middle) = ring.pop_front()
            {
                beyond.push_str(middle.get());
                beyond.push('\n');
                count += 1;
            }
        }
        let tail = ring
            .iter()
            .map(|raw| serde_json::from_str::<Value>(raw.get()))
            .collect::<Result<Vec<Value>, _>>()
            .map_err(serde::de::Error::custom)?;
        if count == 0 {
            // Within the limit: every block is a value, in order, in `content`.
            kept.extend(tail);
            return Ok((kept, (0, beyond), Vec::new()));
        }
        Ok((kept, (count, beyond), tail))
    }
}

/// How deep a listing's JSON may nest (its page object is 1, a tool's `inputSchema` 4): well
/// within what `serde_json` reads into values (128), and what a schema needs.
pub(crate) const MAX_LISTING_DEPTH: usize = 100;

/// What stands in for a part of a listing nested deeper than [`MAX_LISTING_DEPTH`]: a schema
/// that accepts any value, saying why.
pub(crate) const TOO_DEEP: &str =
    r#"{"description":"toolsmith: nested too deep to relay; any value is accepted here"}"#;

/// `json` with every object or array that opens deeper than `most` replaced by [`TOO_DEEP`];
/// itself when none does. One pass, no recursion: a text nested a million deep costs its
/// length, and nothing of the stack.
pub(crate) fn within_depth(json: &str, most: usize) -> std::borrow::Cow<'_, str> {
    let bytes = json.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = string_end(bytes, i),
            b'{' | b'[' if depth == most => {
                let end = container_end(bytes, i);
                let out = out.get_or_insert_with(|| String::with_capacity(json.len()));
                out.push_str(&json[copied..i]);
                out.push_str(TOO_DEEP);
                copied = end;
                i = end;
            }
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    match out {
        None => std::borrow::Cow::Borrowed(json),
        Some(mut out) => {
            out.push_str(&json[copied..]);
            std::borrow::Cow::Owned(out)
        }
    }
}

/// Where the string opening at `start` (a `"`) ends: just past its closing quote (or the end).
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Where the object or array opening at `start` ends: just past its closing bracket (or the
/// end).
fn container_end(bytes: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = string_end(bytes, i);
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_keeps_its_room_and_counts_the_rest() {
        let json =
            r#"{"tools":[{"name":"a"},{"name":"b"},{"name":"c"}],"nextCursor":"x","other":[1]}"#;
        let page = page(json, "tools", 2).unwrap();
        assert_eq!(page.items.len(), 2);
        assert_eq!(page.listed, 3);
        assert_eq!(page.next_cursor, Some(Value::from("x")));
    }

    #[test]
    fn a_result_that_cannot_be_read_as_values_is_an_error() {
        let deep = format!(r#"{{"content":[{}1{}]}}"#, "[".repeat(200), "]".repeat(200));
        for json in [
            deep.as_str(),
            r#"{"content":[{"type":"text","text":"\ud800"}]}"#,
        ] {
            assert!(call_result(json, 10).is_err(), "{json:.60}");
        }
    }

    #[test]
    fn the_last_blocks_of_a_long_list_are_kept_after_those_left_out() {
        let blocks: Vec<String> = (0..10)
            .map(|i| format!(r#"{{"type":"text","text":"{i}"}}"#))
            .collect();
        let json = format!(r#"{{"content":[{}]}}"#, blocks.join(","));
        let result = call_result(&json, 4).unwrap();
        let texts = |values: &[Value]| -> Vec<String> {
            values
                .iter()
                .map(|b| b["text"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(texts(&result.content), ["0", "1"]);
        assert_eq!(texts(&result.tail), ["8", "9"]);
        assert_eq!(result.beyond.0, 6);
        assert!(result.beyond.1.starts_with(&format!("{}\n", blocks[2])));
        // Within the limit, every block is in `content`, in order.
        let result = call_result(&json, 10).unwrap();
        assert_eq!(result.content.len(), 10);
        assert!(result.tail.is_empty() && result.beyond.0 == 0);
    }

    #[test]
    fn blocks_past_the_limit_stay_the_json_they_were() {
        let json = r#"{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"text", "text":"c"}],"isError":true,"_meta":{"k":1},"structuredContent":{"z":[1]}}"#;
        let result = call_result(json, 1).unwrap();
        assert_eq!(result.content.len(), 1);
        assert!(result.tail.is_empty());
        assert_eq!(result.beyond.0, 2);
        assert_eq!(
            result.beyond.1,
            "{\"type\":\"text\",\"text\":\"b\"}\n{\"type\":\"text\", \"text\":\"c\"}\n"
        );
        assert!(result.is_error && result.has_content);
        assert_eq!(result.structured.unwrap().get(), r#"{"z":[1]}"#);
        assert_eq!(result.rest[0].0, "_meta");
    }

    #[test]
    fn what_nests_too_deep_becomes_a_schema_that_accepts_anything() {
        let shallow = r#"{"tools":[{"name":"a","inputSchema":{"type":"object","x":"[{"}}]}"#;
        assert!(matches!(
            within_depth(shallow, 4),
            std::borrow::Cow::Borrowed(_)
        ));
        for depth in [130, 10_000, 1_000_000] {
            let schema = format!(
                "{}1{}",
                r#"{"a":"}\"{","b":"#.repeat(depth),
                "}".repeat(depth)
            );
            let page = format!(
                r#"{{"tools":[{{"name":"deep","inputSchema":{schema}}},{{"name":"next"}}]}}"#
            );
            let cut = within_depth(&page, MAX_LISTING_DEPTH);
            let read = super::page(&cut, "tools", 10).expect("read once cut");
            assert_eq!(read.items.len(), 2, "the tool after it is kept too");
            assert_eq!(read.items[1]["name"], "next");
            let text = read.items[0]["inputSchema"].to_string();
            assert!(text.contains("nested too deep to relay"), "{depth}");
        }
    }
}
