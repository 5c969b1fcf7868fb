//! Conversion between the input items of OpenAI's Responses API and [`Message`]s, so that
//! `validate`, `repair`, `microcompact`, `clear_tool_uses` and `recover` work on them.
//!
//! Each item becomes one block, and each block goes back to one item: a `function_call` is a
//! `tool_use` (its `call_id` the id, its JSON `arguments` parsed), a `function_call_output` a
//! `tool_result`; every other item — messages, `reasoning`, web searches, other tools' calls —
//! is kept whole as it was. Consecutive items of one side (the model's calls and messages; the
//! user's messages and the calls' outputs) make one message. What a block does not model is kept
//! in it and written back, so a history that nothing changed converts back to the items it came
//! from, field for field and in order.

use serde_json::{Map, Value};

use super::extra::{Extra, Holes, Origin, field};
use super::message::{
    Block, Content, Message, ResultContent, Role, ToolResultBlock, ToolUseBlock, base64_image,
};
use super::openai::ConversionError;

/// What a block was: an item.
const ITEM: Origin = Origin::ResponsesItem;
/// The holes of an item: its `call_id`, a call's `name`, and a call's `arguments` or an
/// output's `output`.
const CALL_ID: usize = 0;
const NAME: usize = 1;
const VALUE: usize = 2;

/// Reads Responses API input items (`[{"type": "message", …}, {"type": "function_call", …},
/// …]`) into messages.
///
/// ```
/// use serde_json::json;
/// use toolsmith::history::{self, from_responses, to_responses};
///
/// let items = vec![
///     json!({ "role": "user", "content": "What is in src?" }),
///     json!({ "type": "reasoning", "id": "rs_1", "summary": [] }),
///     json!({ "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "list",
///             "arguments": "{\"path\":\"src\"}", "status": "completed" }),
/// ];
/// let mut messages = from_responses(&items)?;
/// let report = history::repair(&mut messages); // the call had no output: one is written
/// assert_eq!(report.synthesized, ["call_1"]);
/// let back = to_responses(&messages);
/// assert_eq!(&back[..3], &items[..]);
/// assert_eq!(back[3]["type"], "function_call_output");
/// assert_eq!(back[3]["call_id"], "call_1");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`ConversionError`] for an item that is not an object, or a `function_call` without
/// `call_id` or `name`, or a `function_call_output` without `call_id`.
pub fn from_responses(items: &[Value]) -> Result<Vec<Message>, ConversionError> {
    read(items.iter().cloned())
}

/// [`from_responses`] of items the caller owns: every string moves into the messages, so a
/// large output is not copied. What an agent holding the items it parsed should call.
///
/// ```
/// use serde_json::json;
/// use toolsmith::history::{from_responses_owned, into_responses};
///
/// let items = vec![
///     json!({ "type": "function_call", "call_id": "call_1", "name": "list", "arguments": "{}" }),
///     json!({ "type": "function_call_output", "call_id": "call_1", "output": "a\nb" }),
/// ];
/// let messages = from_responses_owned(items.clone())?;
/// assert_eq!(into_responses(messages), items);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// As [`from_responses`].
pub fn from_responses_owned(items: Vec<Value>) -> Result<Vec<Message>, ConversionError> {
    read(items.into_iter())
}

/// Both readers: each item is taken as it comes (a borrowed one copied just before, so the copy
/// of a history is never all held at once).
fn read(items: impl Iterator<Item = Value>) -> Result<Vec<Message>, ConversionError> {
    // At most a message an item: made once, not grown (and moved) as it fills.
    let mut messages: Vec<Message> = Vec::with_capacity(items.size_hint().0);
    for (index, item) in items.enumerate() {
        let error = |problem: &str| ConversionError {
            index,
            problem: problem.to_owned(),
        };
        let Value::Object(mut object) = item else {
            return Err(error("an item must be a JSON object"));
        };
        let kind = field(&object, "type").and_then(Value::as_str);
        let mut holes = Holes::NEW;
        let (role, block) = match kind {
            Some("function_call") => {
                // The id and name move into the block, an empty string left in their places.
                let id = holes
                    .take_string(CALL_ID, &mut object, "call_id")
                    .ok_or_else(|| error("a `function_call` needs `call_id`"))?;
                let name = holes
                    .take_string(NAME, &mut object, "name")
                    .ok_or_else(|| error("a `function_call` needs `name`"))?;
                let arguments = holes.find(VALUE, &mut object, "arguments");
                let arguments = arguments.and_then(|value| value.as_str()).unwrap_or("{}");
                let input = serde_json::from_str(arguments)
                    .unwrap_or_else(|_| Value::String(arguments.to_owned()));
                (
                    Role::Assistant,
                    Block::ToolUse(ToolUseBlock {
                        id,
                        name,
                        input,
                        extra: Extra::of(ITEM, object, holes),
                    }),
                )
            }
            Some("function_call_output") => {
                let id = holes
                    .take_string(CALL_ID, &mut object, "call_id")
                    .ok_or_else(|| error("a `function_call_output` needs `call_id`"))?;
                // The output moves into the block's content; the item keeps a placeholder in its
                // place that says what kind of JSON it was, so a large output is held once.
                let content = holes.find(VALUE, &mut object, "output").map(|output| {
                    let placeholder = match output {
                        Value::String(_) => Value::String(String::new()),
                        Value::Array(_) => Value::Array(Vec::new()),
                        _ => Value::Bool(true),
                    };
                    content_of(std::mem::replace(output, placeholder))
                });
                (
                    Role::User,
                    Block::ToolResult(ToolResultBlock {
                        tool_use_id: id,
                        content,
                        is_error: None,
                        extra: Extra::of(ITEM, object, holes),
                    }),
                )
            }
            _ => (side_of(&object), Block::Other(Value::Object(object))),
        };
        match messages.last_mut() {
            Some(last) if last.role == role => {
                if let Content::Blocks(blocks) = &mut last.content {
                    blocks.push(block);
                }
            }
            _ => messages.push(Message::from_blocks(role, vec![block])),
        }
    }
    Ok(messages)
}

/// Writes messages back as Responses API input items, one item a block: what came from items
/// goes back as it was (with what changed — a renamed call, a compacted output — changed), and
/// what a repair added (an output for a call that had none) as a new item.
pub fn to_responses(messages: &[Message]) -> Vec<Value> {
    write(messages.iter().cloned(), items_of(messages))
}

/// [`to_responses`] of messages the caller no longer needs: every string moves into the items,
/// so a large output is not copied.
pub fn into_responses(messages: Vec<Message>) -> Vec<Value> {
    let count = items_of(&messages);
    write(messages.into_iter(), count)
}

/// How many items `messages` are written as (one a block), so the list is made once.
fn items_of(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|message| match &message.content {
            Content::Text(_) => 1,
            Content::Blocks(blocks) => blocks.len(),
        })
        .sum()
}

/// Both writers, a message at a time (see [`read`]).
fn write(messages: impl Iterator<Item = Message>, count: usize) -> Vec<Value> {
    let mut items = Vec::with_capacity(count);
    // One buffer for every call's arguments written out to compare.
    let mut buffer = Vec::new();
    for message in messages {
        match message.content {
            Content::Text(text) => items.push(serde_json::json!({
                "role": role_name(message.role),
                "content": text,
            })),
            Content::Blocks(blocks) => {
                items.extend(
                    blocks
                        .into_iter()
                        .map(|block| item_of(block, message.role, &mut buffer)),
                );
            }
        }
    }
    items
}

fn item_of(block: Block, role: Role, buffer: &mut Vec<u8>) -> Value {
    match block {
        Block::Other(item) => item,
        Block::Text(text) => serde_json::json!({ "role": role_name(role), "content": text.text }),
        Block::ToolUse(call) => {
            let (mut item, holes) = was(call.extra, "function_call");
            holes.put(CALL_ID, &mut item, "call_id", call.id.into());
            holes.put(NAME, &mut item, "name", call.name.into());
            // The arguments as they were written, unless the input changed.
            let unchanged = holes
                .slot(VALUE, &mut item, "arguments")
                .and_then(|written| written.as_str())
                .is_some_and(|written| says(written, &call.input, buffer));
            if !unchanged {
                let arguments = match call.input {
                    Value::String(text) => text,
                    other => other.to_string(),
                };
                holes.put(VALUE, &mut item, "arguments", arguments.into());
            }
            Value::Object(item)
        }
        Block::ToolResult(result) => {
            let (mut item, holes) = was(result.extra, "function_call_output");
            holes.put(CALL_ID, &mut item, "call_id", result.tool_use_id.into());
            // The output from the content: a string as it was, a list of parts as it was, and
            // an output of another JSON kind read back from its text (unless compacted).
            let was_other = holes.slot(VALUE, &mut item, "output") == Some(&mut Value::Bool(true));
            let output = match result.content {
                None => Value::String(String::new()),
                Some(ResultContent::Text(text)) if was_other => {
                    serde_json::from_str(&text).unwrap_or(Value::String(text))
                }
                Some(ResultContent::Text(text)) => Value::String(text),
                Some(ResultContent::Blocks(blocks)) => Value::Array(
                    blocks
                        .into_iter()
                        .map(|block| match block {
                            // An image as the Responses API reads one: a data URL.
                            Block::Other(part) => match base64_image(&part) {
                                Some((mime, data)) => serde_json::json!({
                                    "type": "input_image",
                                    "image_url": format!("data:{mime};base64,{data}"),
                                }),
                                None => part,
                            },
                            Block::Text(text) => {
                                serde_json::json!({ "type": "input_text", "text": text.text })
                            }
                            other => serde_json::to_value(&other).unwrap_or(Value::Null),
                        })
                        .collect(),
                ),
            };
            holes.put(VALUE, &mut item, "output", output);
            Value::Object(item)
        }
    }
}

/// The item a block was, and where its values were taken out; a new one of `kind` for a block
/// that was none.
fn was(extra: Extra, kind: &str) -> (Map<String, Value>, Holes) {
    match extra.into_was(ITEM) {
        Some(was) => was,
        None => {
            let mut fresh = Map::new();
            fresh.insert("type".to_owned(), kind.into());
            (fresh, Holes::UNKNOWN)
        }
    }
}

/// Whether the JSON text `written` is `input`: compared as text with `input` written compactly
/// (as models write arguments, so nothing is parsed), else parsed and compared.
fn says(written: &str, input: &Value, buffer: &mut Vec<u8>) -> bool {
    buffer.clear();
    if serde_json::to_writer(&mut *buffer, input).is_ok() && buffer == written.as_bytes() {
        return true;
    }
    serde_json::from_str::<Value>(written).is_ok_and(|parsed| parsed == *input)
}

/// A call's output as a result's content: a string as text, a list of parts as blocks kept
/// whole, anything else as its JSON text.
fn content_of(output: Value) -> ResultContent {
    match output {
        Value::String(text) => ResultContent::Text(text),
        Value::Array(parts) => ResultContent::Blocks(parts.into_iter().map(Block::Other).collect()),
        other => ResultContent::Text(other.to_string()),
    }
}

/// Which side an item is on: the user's (its messages, the outputs of calls) or the model's.
fn side_of(object: &Map<String, Value>) -> Role {
    match field(object, "role").and_then(Value::as_str) {
        Some("assistant") => Role::Assistant,
        Some(_) => Role::User,
        None => match field(object, "type").and_then(Value::as_str) {
            Some(kind) if kind.ends_with("_output") || kind.ends_with("_response") => Role::User,
            Some("item_reference") => Role::User,
            _ => Role::Assistant,
        },
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}
