//! Conversion between Gemini `contents` and [`Message`]s, so that `validate`, `repair`,
//! `microcompact`, `clear_tool_uses` and `recover` work on them.
//!
//! A `model` content is an assistant message and a `user` (or `function`) content a user
//! message; each part becomes one block: `text` a text block, `functionCall` a `tool_use`,
//! `functionResponse` a `tool_result` (its `response` as JSON text), anything else (inline
//! data, files, code, thoughts) kept whole. Calls without ids (older models, Vertex) are paired
//! with their responses by name and order, as Gemini pairs them, under ids made for the purpose
//! and not written back. What a block does not model is kept in it and written back, so
//! contents that nothing changed convert back to what they were, field for field.

use serde_json::{Map, Value};

use super::message::{
    Block, Content, Message, ResultContent, Role, TextBlock, ToolResultBlock, ToolUseBlock,
};
use super::openai::ConversionError;

/// The keys, in a block's or a message's kept fields, of what it was.
const PART: &str = "gemini_part";
const CONTENT: &str = "gemini_content";
/// Marks an id made here, for a call or response that had none.
const MADE_ID: &str = "gemini_made_id";

/// Reads Gemini `contents` (`[{"role": "user", "parts": [...]}, {"role": "model", …}]`) into
/// messages.
///
/// ```
/// use serde_json::json;
/// use toolsmith::history::{from_gemini, to_gemini, validate};
///
/// let contents = vec![
///     json!({ "role": "user", "parts": [{ "text": "Weather in Paris?" }] }),
///     json!({ "role": "model", "parts": [{ "functionCall": { "name": "weather", "args": { "city": "Paris" } } }] }),
///     json!({ "role": "user", "parts": [{ "functionResponse": { "name": "weather", "response": { "temp": 18 } } }] }),
/// ];
/// let messages = from_gemini(&contents)?;
/// assert!(validate(&messages).is_empty(), "paired by name and order");
/// assert_eq!(to_gemini(&messages), contents);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`ConversionError`] for a content that is not an object or has no `parts` list, or a part
/// that is not an object.
pub fn from_gemini(contents: &[Value]) -> Result<Vec<Message>, ConversionError> {
    let mut messages: Vec<Message> = Vec::with_capacity(contents.len());
    // The calls of the last model content without ids, by name, in order: their made ids.
    let mut unanswered: Vec<(String, String)> = Vec::new();
    for (index, content) in contents.iter().enumerate() {
        let error = |problem: &str| ConversionError {
            index,
            problem: problem.to_owned(),
        };
        let Value::Object(object) = content else {
            return Err(error("a content must be a JSON object"));
        };
        let Some(Value::Array(parts)) = object.get("parts") else {
            return Err(error("a content needs a `parts` list"));
        };
        let role = match object.get("role").and_then(Value::as_str) {
            Some("model") => Role::Assistant,
            _ => Role::User,
        };
        if role == Role::Assistant {
            unanswered.clear();
        }
        let mut blocks = Vec::with_capacity(parts.len());
        for (k, part) in parts.iter().enumerate() {
            let Value::Object(fields) = part else {
                return Err(error("a part must be a JSON object"));
            };
            let block = if let Some(Value::String(text)) = fields.get("text") {
                // A part of text alone needs nothing kept; any other keeps its other fields.
                let extra = if fields.len() == 1 {
                    Map::new()
                } else {
                    let mut skeleton = part.clone();
                    skeleton["text"] = Value::Null;
                    kept(PART, &skeleton)
                };
                Block::Text(TextBlock {
                    text: text.clone(),
                    extra,
                })
            } else if let Some(Value::Object(call)) = fields.get("functionCall") {
                let name = call
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                // The part without its arguments (which the block's input holds).
                let mut skeleton = part.clone();
                skeleton["functionCall"]["args"] = Value::Null;
                let mut extra = kept(PART, &skeleton);
                let id = match call.get("id").and_then(Value::as_str) {
                    Some(id) => id.to_owned(),
                    None => {
                        let made = format!("gemini_{index}_{k}");
                        unanswered.push((name.clone(), made.clone()));
                        extra.insert(MADE_ID.to_owned(), Value::Bool(true));
                        made
                    }
                };
                Block::ToolUse(ToolUseBlock {
                    id,
                    name,
                    input: call
                        .get("args")
                        .cloned()
                        .unwrap_or_else(|| Value::Object(Map::new())),
                    extra,
                })
            } else if let Some(Value::Object(response)) = fields.get("functionResponse") {
                let name = response
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                // The part without its response (which the block's text holds): a large
                // response is held once. A response of one text field is read as that text,
                // the field's name kept to write it back.
                let single = match response.get("response") {
                    Some(Value::Object(fields)) if fields.len() == 1 => fields
                        .iter()
                        .next()
                        .and_then(|(key, value)| Some((key.clone(), value.as_str()?.to_owned()))),
                    _ => None,
                };
                let mut skeleton = part.clone();
                skeleton["functionResponse"]["response"] = single
                    .as_ref()
                    .map_or(Value::Null, |(key, _)| Value::String(key.clone()));
                let mut extra = kept(PART, &skeleton);
                let id = match response.get("id").and_then(Value::as_str) {
                    Some(id) => id.to_owned(),
                    None => {
                        extra.insert(MADE_ID.to_owned(), Value::Bool(true));
                        // The first call of that name still unanswered, as Gemini pairs them.
                        match unanswered.iter().position(|(called, _)| called == name) {
                            Some(at) => unanswered.remove(at).1,
                            None => format!("gemini_{index}_{k}_unpaired"),
                        }
                    }
                };
                Block::ToolResult(ToolResultBlock {
                    tool_use_id: id,
                    content: Some(ResultContent::Text(match single {
                        Some((_, text)) => text,
                        None => response
                            .get("response")
                            .map(Value::to_string)
                            .unwrap_or_default(),
                    })),
                    is_error: None,
                    extra,
                })
            } else {
                Block::Other(part.clone())
            };
            blocks.push(block);
        }
        let mut message = Message::from_blocks(role, blocks);
        message.extra = kept(CONTENT, &without_parts(object));
        messages.push(message);
    }
    Ok(messages)
}

/// Writes messages back as Gemini `contents`: what came from contents goes back as it was (with
/// what changed changed: a compacted response, a renamed call), and what a repair added (a
/// response for a call that had none) as a new part. Ids made for pairing are not written.
pub fn to_gemini(messages: &[Message]) -> Vec<Value> {
    // A response a repair wrote names its call's function.
    // (and has an id only when its call had one).
    let names: std::collections::HashMap<&str, (&str, bool)> = messages
        .iter()
        .flat_map(Message::tool_uses)
        .map(|call| {
            let made = call.extra.get(MADE_ID) == Some(&Value::Bool(true));
            (call.id.as_str(), (call.name.as_str(), made))
        })
        .collect();
    messages
        .iter()
        .map(|message| {
            let parts: Vec<Value> = match &message.content {
                Content::Text(text) => vec![serde_json::json!({ "text": text })],
                Content::Blocks(blocks) => {
                    blocks.iter().map(|block| part_of(block, &names)).collect()
                }
            };
            let mut content = match message.extra.get(CONTENT) {
                Some(Value::Object(kept)) => kept.clone(),
                _ => {
                    let role = if message.role == Role::Assistant {
                        "model"
                    } else {
                        "user"
                    };
                    let mut fresh = Map::new();
                    fresh.insert("role".to_owned(), role.into());
                    fresh
                }
            };
            // `parts` where it was (its place kept), or last.
            content.insert("parts".to_owned(), Value::Array(parts));
            Value::Object(content)
        })
        .collect()
}

fn part_of(block: &Block, names: &std::collections::HashMap<&str, (&str, bool)>) -> Value {
    match block {
        Block::Other(part) => part.clone(),
        Block::Text(text) => {
            let mut part = original(&text.extra).unwrap_or_default();
            part.insert("text".to_owned(), text.text.clone().into());
            Value::Object(part)
        }
        Block::ToolUse(call) => {
            let mut part = original(&call.extra).unwrap_or_default();
            let mut inner = taken(&mut part, "functionCall");
            inner.insert("name".to_owned(), call.name.clone().into());
            inner.insert("args".to_owned(), call.input.clone());
            if call.extra.get(MADE_ID) != Some(&Value::Bool(true)) {
                inner.insert("id".to_owned(), call.id.clone().into());
            }
            part.insert("functionCall".to_owned(), Value::Object(inner));
            Value::Object(part)
        }
        Block::ToolResult(result) => {
            let mut part = original(&result.extra).unwrap_or_default();
            let mut inner = taken(&mut part, "functionResponse");
            // A response of one text field is that field with the text; any other is the
            // block's text read back (it was written from the response, in order), unless the
            // text is no object's any more (compacted, or written by a repair): then
            // `{"output": text}`.
            let text = result.text();
            let response = match inner.get("response") {
                Some(Value::String(key)) => {
                    let mut fields = Map::new();
                    fields.insert(key.clone(), Value::String(text.into_owned()));
                    Value::Object(fields)
                }
                _ => match serde_json::from_str::<Value>(&text) {
                    Ok(object @ Value::Object(_)) => object,
                    _ => serde_json::json!({ "output": text }),
                },
            };
            inner.insert("response".to_owned(), response);
            // Images as Gemini reads them beside a response: inline data parts.
            let images: Vec<Value> = result
                .base64_images()
                .map(|(mime, data)| {
                    serde_json::json!({ "inlineData": { "mimeType": mime, "data": data } })
                })
                .collect();
            if !images.is_empty() && !inner.contains_key("parts") {
                inner.insert("parts".to_owned(), Value::Array(images));
            }
            let call = names.get(result.tool_use_id.as_str()).copied();
            if !inner.contains_key("name") {
                inner.insert("name".to_owned(), call.map_or("", |(name, _)| name).into());
            }
            let made = result.extra.get(MADE_ID) == Some(&Value::Bool(true))
                || call.is_some_and(|(_, made)| made);
            if !made {
                inner.insert("id".to_owned(), result.tool_use_id.clone().into());
            }
            part.insert("functionResponse".to_owned(), Value::Object(inner));
            Value::Object(part)
        }
    }
}

fn kept(key: &str, value: &Value) -> Map<String, Value> {
    let mut extra = Map::new();
    extra.insert(key.to_owned(), value.clone());
    extra
}

/// The object under `key` in a part, taken out of it (its place kept for the write back).
fn taken(part: &mut Map<String, Value>, key: &str) -> Map<String, Value> {
    match part.get_mut(key).map(Value::take) {
        Some(Value::Object(inner)) => inner,
        _ => Map::new(),
    }
}

fn original(extra: &Map<String, Value>) -> Option<Map<String, Value>> {
    match extra.get(PART) {
        Some(Value::Object(part)) => Some(part.clone()),
        _ => None,
    }
}

/// A content with its `parts` replaced by a placeholder (their position kept).
fn without_parts(object: &Map<String, Value>) -> Value {
    Value::Object(
        object
            .iter()
            .map(|(key, value)| {
                if key == "parts" {
                    (key.clone(), Value::Null)
                } else {
                    (key.clone(), value.clone())
                }
            })
            .collect(),
    )
}
