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

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::extra::{Extra, Holes, Origin, field};
use super::message::{
    Block, Content, Message, ResultContent, Role, TextBlock, ToolResultBlock, ToolUseBlock,
};
use super::openai::ConversionError;

/// What a block and a message were: a part, a content.
const PART: Origin = Origin::GeminiPart;
const CONTENT: Origin = Origin::GeminiContent;
/// The holes of a part: the field its block came from (`text`, `functionCall`,
/// `functionResponse`), and in a call or response its `id`, `name`, and `args` or `response`.
const FIELD: usize = 0;
const ID: usize = 1;
const NAME: usize = 2;
const VALUE: usize = 3;
/// The hole of a content: its `parts`.
const PARTS: usize = 0;
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
    read(contents.iter().cloned(), contents.len())
}

/// [`from_gemini`] of contents the caller owns: every string moves into the messages, so a
/// large response is not copied. What an agent holding the contents it parsed should call.
///
/// ```
/// use serde_json::json;
/// use toolsmith::history::{from_gemini_owned, into_gemini};
///
/// let contents = vec![
///     json!({ "role": "model", "parts": [{ "functionCall": { "name": "ls", "args": {} } }] }),
///     json!({ "role": "user", "parts": [{ "functionResponse": { "name": "ls", "response": { "output": "a\nb" } } }] }),
/// ];
/// let messages = from_gemini_owned(contents.clone())?;
/// assert_eq!(into_gemini(messages), contents);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// As [`from_gemini`].
pub fn from_gemini_owned(contents: Vec<Value>) -> Result<Vec<Message>, ConversionError> {
    let count = contents.len();
    read(contents.into_iter(), count)
}

/// Both readers: each content is taken as it comes (a borrowed one copied just before, so the
/// copy of a history is never all held at once).
fn read(
    contents: impl Iterator<Item = Value>,
    count: usize,
) -> Result<Vec<Message>, ConversionError> {
    let mut messages: Vec<Message> = Vec::with_capacity(count);
    // The calls of the last model content without ids, by name, in order: their made ids.
    let mut unanswered: Vec<(String, String)> = Vec::new();
    for (index, content) in contents.enumerate() {
        let error = |problem: &str| ConversionError {
            index,
            problem: problem.to_owned(),
        };
        let Value::Object(mut object) = content else {
            return Err(error("a content must be a JSON object"));
        };
        let role = match field(&object, "role").and_then(Value::as_str) {
            Some("model") => Role::Assistant,
            _ => Role::User,
        };
        // The parts move out; the content keeps their list, emptied (its room kept for the
        // parts written back).
        let mut content_holes = Holes::NEW;
        let Some(Value::Array(parts)) = content_holes.find(PARTS, &mut object, "parts") else {
            return Err(error("a content needs a `parts` list"));
        };
        if role == Role::Assistant {
            unanswered.clear();
        }
        let mut blocks = Vec::with_capacity(parts.len());
        for (k, part) in parts.drain(..).enumerate() {
            let Value::Object(mut fields) = part else {
                return Err(error("a part must be a JSON object"));
            };
            // What a block models moves out of its part (an empty string, which allocates
            // nothing, left in its place); the part keeps the rest and is written back around it.
            let mut holes = Holes::NEW;
            let block = if let Some(Value::String(text)) = holes.find(FIELD, &mut fields, "text") {
                let text = std::mem::take(text);
                Block::Text(TextBlock {
                    text,
                    extra: Extra::of(PART, fields, holes),
                })
            } else if let Some(Value::Object(call)) = holes.find(FIELD, &mut fields, "functionCall")
            {
                let name = holes.take_string(NAME, call, "name").unwrap_or_default();
                let given_id = holes.take_string(ID, call, "id");
                // The arguments move into the block's input; the part keeps a placeholder.
                let input = match holes.find(VALUE, call, "args") {
                    Some(args) => std::mem::replace(args, Value::Null),
                    None => {
                        holes.insert(VALUE, call, "args", Value::Null);
                        Value::Object(Map::new())
                    }
                };
                let mut extra = Extra::of(PART, fields, holes);
                let id = match given_id {
                    Some(id) => id,
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
                    input,
                    extra,
                })
            } else if let Some(Value::Object(response)) =
                holes.find(FIELD, &mut fields, "functionResponse")
            {
                let given_id = holes.take_string(ID, response, "id");
                // The name stays in the part, which is written back whole; where it is, is kept
                // (whether the part names its function is what the writer asks).
                let name = holes
                    .find(NAME, response, "name")
                    .and_then(|name| name.as_str());
                // Without an id: the first call of its name still unanswered, as Gemini pairs
                // them.
                let made_id = given_id.is_none().then(|| {
                    let name = name.unwrap_or_default();
                    match unanswered.iter().position(|(called, _)| called == name) {
                        Some(at) => unanswered.remove(at).1,
                        None => format!("gemini_{index}_{k}_unpaired"),
                    }
                });
                // The response moves into the block's text: a large response is held once. A
                // response of one text field is read as that text, the field left empty in its
                // place to write it back; any other as its JSON text, `null` in its place.
                let text = match holes.find(VALUE, response, "response") {
                    Some(value) => match value.as_object_mut().and_then(one_text_field) {
                        Some(text) => std::mem::take(text),
                        None => value.take().to_string(),
                    },
                    None => {
                        holes.insert(VALUE, response, "response", Value::Null);
                        String::new()
                    }
                };
                let mut extra = Extra::of(PART, fields, holes);
                let id = match (given_id, made_id) {
                    (Some(id), _) => id,
                    (None, made) => {
                        extra.insert(MADE_ID.to_owned(), Value::Bool(true));
                        made.unwrap_or_default()
                    }
                };
                Block::ToolResult(ToolResultBlock {
                    tool_use_id: id,
                    content: Some(ResultContent::Text(text)),
                    is_error: None,
                    extra,
                })
            } else {
                Block::Other(Value::Object(fields))
            };
            blocks.push(block);
        }
        let mut message = Message::from_blocks(role, blocks);
        message.extra = Extra::of(CONTENT, object, content_holes);
        messages.push(message);
    }
    Ok(messages)
}

/// Writes messages back as Gemini `contents`: what came from contents goes back as it was (with
/// what changed changed: a compacted response, a renamed call), and what a repair added (a
/// response for a call that had none) as a new part. Ids made for pairing are not written.
pub fn to_gemini(messages: &[Message]) -> Vec<Value> {
    let calls = calls_answered(messages);
    write(calls.into_iter(), messages.iter().cloned())
}

/// [`to_gemini`] of messages the caller no longer needs: every string moves into the contents,
/// so a large response is not copied.
pub fn into_gemini(messages: Vec<Message>) -> Vec<Value> {
    let calls = calls_answered(&messages);
    write(calls.into_iter(), messages.into_iter())
}

/// What the writer needs of the call each result answers, in the results' order: its
/// function's name, for a result whose part does not name it (one a repair wrote), and whether
/// the call's id was made here (then the result's is not written either). Looked up while the
/// calls are borrowed, so a history of ids with names is not copied to write it.
fn calls_answered(messages: &[Message]) -> Vec<Answered> {
    let calls: HashMap<&str, (&str, bool)> = messages
        .iter()
        .flat_map(Message::tool_uses)
        .map(|call| {
            let made = call.extra.get(MADE_ID) == Some(&Value::Bool(true));
            (call.id.as_str(), (call.name.as_str(), made))
        })
        .collect();
    messages
        .iter()
        .flat_map(Message::tool_results)
        .map(|result| {
            let call = calls.get(result.tool_use_id.as_str());
            let named = result.extra.was(PART).is_some_and(|(part, holes)| {
                holes.had(NAME).unwrap_or_else(|| {
                    let response = field(part, "functionResponse");
                    response.and_then(|response| response.get("name")).is_some()
                })
            });
            Answered {
                name: (!named).then(|| call.map_or("", |(name, _)| name).to_owned()),
                made: call.is_some_and(|(_, made)| *made),
            }
        })
        .collect()
}

/// What [`calls_answered`] found for one result.
struct Answered {
    /// The call's function, when the result's part does not name it.
    name: Option<String>,
    /// Whether the call's id was made here.
    made: bool,
}

/// Both writers, a message at a time (see [`read`]).
fn write(
    mut answered: impl Iterator<Item = Answered>,
    messages: impl Iterator<Item = Message>,
) -> Vec<Value> {
    messages
        .map(|message| {
            let (mut content, holes) = match message.extra.into_was(CONTENT) {
                Some(was) => was,
                None => {
                    let role = if message.role == Role::Assistant {
                        "model"
                    } else {
                        "user"
                    };
                    let mut fresh = Map::new();
                    fresh.insert("role".to_owned(), role.into());
                    (fresh, Holes::UNKNOWN)
                }
            };
            // The parts go into the list they were read from (its room kept), in its place.
            let mut parts = match holes.slot(PARTS, &mut content, "parts") {
                Some(Value::Array(parts)) => std::mem::take(parts),
                _ => Vec::new(),
            };
            parts.clear();
            match message.content {
                Content::Text(text) => parts.push(serde_json::json!({ "text": text })),
                Content::Blocks(blocks) => {
                    parts.extend(
                        blocks
                            .into_iter()
                            .map(|block| part_of(block, &mut answered)),
                    );
                }
            }
            holes.put(PARTS, &mut content, "parts", Value::Array(parts));
            Value::Object(content)
        })
        .collect()
}

/// A block as the part it was; a result takes the next of `answered`.
fn part_of(block: Block, answered: &mut impl Iterator<Item = Answered>) -> Value {
    match block {
        Block::Other(part) => part,
        Block::Text(text) => {
            let (mut part, holes) = was(text.extra);
            holes.put(FIELD, &mut part, "text", text.text.into());
            Value::Object(part)
        }
        Block::ToolUse(call) => {
            let made = call.extra.get(MADE_ID) == Some(&Value::Bool(true));
            let (mut part, holes) = was(call.extra);
            let mut inner = taken(holes, &mut part, "functionCall");
            holes.put(NAME, &mut inner, "name", call.name.into());
            holes.put(VALUE, &mut inner, "args", call.input);
            if !made {
                holes.put(ID, &mut inner, "id", call.id.into());
            }
            holes.put(FIELD, &mut part, "functionCall", Value::Object(inner));
            Value::Object(part)
        }
        Block::ToolResult(result) => {
            // Images as Gemini reads them beside a response: inline data parts.
            let images: Vec<Value> = result
                .base64_images()
                .map(|(mime, data)| {
                    serde_json::json!({ "inlineData": { "mimeType": mime, "data": data } })
                })
                .collect();
            let made_here = result.extra.get(MADE_ID) == Some(&Value::Bool(true));
            let call = answered.next().unwrap_or(Answered {
                name: None,
                made: false,
            });
            let text = match result.content {
                Some(ResultContent::Text(text)) => text,
                _ => result.text().into_owned(),
            };
            let read = result.extra.into_was(PART);
            // A result read from a part had its id taken out of it when it had one (not made
            // here): it goes back. One a repair wrote has an id when its call had one.
            let write_id = if read.is_some() {
                !made_here
            } else {
                !call.made
            };
            let (mut part, holes) = read.unwrap_or((Map::new(), Holes::UNKNOWN));
            let mut inner = taken(holes, &mut part, "functionResponse");
            // A response of one text field gets the text back in it; any other is the block's
            // text read back (it was written from the response, in order), unless the text is
            // no object's any more (compacted, or written by a repair): then `{"output": text}`.
            let field = holes.slot(VALUE, &mut inner, "response");
            match field
                .and_then(Value::as_object_mut)
                .and_then(one_text_field)
            {
                Some(slot) => *slot = text,
                None => {
                    let response = match serde_json::from_str::<Value>(&text) {
                        Ok(object @ Value::Object(_)) => object,
                        _ => serde_json::json!({ "output": text }),
                    };
                    holes.put(VALUE, &mut inner, "response", response);
                }
            }
            if !images.is_empty() && !inner.contains_key("parts") {
                inner.insert("parts".to_owned(), Value::Array(images));
            }
            if let Some(name) = call.name {
                holes.put(NAME, &mut inner, "name", name.into());
            }
            if write_id {
                holes.put(ID, &mut inner, "id", result.tool_use_id.into());
            }
            holes.put(FIELD, &mut part, "functionResponse", Value::Object(inner));
            Value::Object(part)
        }
    }
}

/// The part a block was, and where its values were taken out; an empty one for a block that was
/// none.
fn was(extra: Extra) -> (Map<String, Value>, Holes) {
    match extra.into_was(PART) {
        Some(was) => was,
        None => (Map::new(), Holes::UNKNOWN),
    }
}

/// The text of a response of one text field (`{"output": "…"}`), the form tools' responses take.
fn one_text_field(fields: &mut Map<String, Value>) -> Option<&mut String> {
    if fields.len() != 1 {
        return None;
    }
    match fields.values_mut().next() {
        Some(Value::String(text)) => Some(text),
        _ => None,
    }
}

/// The object under `key` in a part, taken out of it (`null` left in its place, for the writer
/// to put it back).
fn taken(holes: Holes, part: &mut Map<String, Value>, key: &str) -> Map<String, Value> {
    match holes.slot(FIELD, part, key).map(Value::take) {
        Some(Value::Object(inner)) => inner,
        _ => Map::new(),
    }
}
