//! Conversion between OpenAI chat messages and the Anthropic-shaped [`Message`].

use serde_json::{Value, json};

use super::message::{Block, Content, Extra, Message, ResultContent, Role, ToolResultBlock};

/// A conversion failure: the OpenAI message that could not be read, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("OpenAI message {index}: {problem}")]
pub struct ConversionError {
    /// The index of the message in the input.
    pub index: usize,
    /// What is wrong with it.
    pub problem: String,
}

/// Reads OpenAI chat messages (`system`/`developer`, `user`, `assistant` with `tool_calls`,
/// `tool`) into a system prompt and Anthropic-shaped messages: tool calls become `tool_use`
/// blocks (their JSON `arguments` parsed), and `tool` messages become `tool_result` blocks of
/// one user message, followed by the next user message's content.
///
/// Tool call ids come out unique across the conversation and of `[a-zA-Z0-9_-]` (a reused or
/// malformed one is renamed, with its results, as [`repair`](super::repair) renames).
///
/// # Errors
///
/// [`ConversionError`] for a message without a known `role`, or a `tool` message without
/// `tool_call_id`.
pub fn from_openai(messages: &[Value]) -> Result<(Option<String>, Vec<Message>), ConversionError> {
    let mut system: Vec<String> = Vec::new();
    let mut out: Vec<Message> = Vec::new();
    // The user message results and user content are gathered into, until an assistant speaks.
    let mut pending: Option<Vec<Block>> = None;
    for (index, message) in messages.iter().enumerate() {
        let error = |problem: &str| ConversionError {
            index,
            problem: problem.to_owned(),
        };
        let role = message
            .get("role")
            .and_then(Value::as_str)
            .ok_or_else(|| error("no `role`"))?;
        match role {
            "system" | "developer" => system.push(text_of(message.get("content"))),
            "tool" => {
                let id = message
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .ok_or_else(|| error("a `tool` message needs `tool_call_id`"))?;
                pending
                    .get_or_insert_with(Vec::new)
                    .push(Block::ToolResult(ToolResultBlock {
                        tool_use_id: id.to_owned(),
                        content: Some(ResultContent::Text(text_of(message.get("content")))),
                        is_error: None,
                        extra: Extra::new(),
                    }));
            }
            "user" => {
                let blocks = pending.get_or_insert_with(Vec::new);
                match message.get("content") {
                    Some(Value::Array(parts)) => blocks.extend(parts.iter().map(part_to_block)),
                    other => blocks.push(Block::text(text_of(other))),
                }
            }
            "assistant" => {
                if let Some(blocks) = pending.take() {
                    out.push(user_message(blocks));
                }
                let mut blocks = Vec::new();
                let text = text_of(message.get("content"));
                if !text.is_empty() {
                    blocks.push(Block::text(text));
                }
                for call in message
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
                    let function = call.get("function");
                    let name = function
                        .and_then(|f| f.get("name"))
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    let arguments = function
                        .and_then(|f| f.get("arguments"))
                        .and_then(Value::as_str)
                        .unwrap_or("{}");
                    // Arguments that are not JSON are kept as the string the model wrote.
                    let input = serde_json::from_str(arguments)
                        .unwrap_or_else(|_| Value::String(arguments.to_owned()));
                    blocks.push(Block::tool_use(id, name, input));
                }
                out.push(Message::from_blocks(Role::Assistant, blocks));
            }
            other => return Err(error(&format!("unknown role `{other}`"))),
        }
    }
    if let Some(blocks) = pending {
        out.push(user_message(blocks));
    }
    // OpenAI-compatible providers reuse ids across turns (`call_0` every turn) or use
    // characters Anthropic refuses: make them unique and valid, results renamed with them.
    super::pairing::rename_ids(&mut out);
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    Ok((system, out))
}

/// A result's text as a chat `tool` message carries it (text only): each image is named by a
/// line saying it follows in the next user message, where `images` gets it as an `image_url`
/// part.
fn tool_message_text(result: &ToolResultBlock, images: &mut Vec<Value>) -> String {
    let mut text = result.text().into_owned();
    for (mime, data) in result.base64_images() {
        if !text.is_empty() {
            text.push('\n');
        }
        images.push(json!({
            "type": "text",
            "text": format!("[toolsmith: the image of the result of call {}]", result.tool_use_id),
        }));
        images.push(json!({
            "type": "image_url",
            "image_url": { "url": format!("data:{mime};base64,{data}") },
        }));
        text.push_str(&format!(
            "[toolsmith: image ({mime}, {} bytes of base64) in the next user message: a chat \
             tool message carries text only]",
            crate::figures::grouped(data.len())
        ));
    }
    text
}

/// Writes a system prompt and Anthropic-shaped messages as OpenAI chat messages: `tool_use`
/// blocks become `tool_calls` (arguments as JSON text), each `tool_result` a `tool` message
/// (before the rest of its user message's content). A chat tool message carries text only:
/// a result's images go in the user message that follows the tool messages (each after a line
/// naming its call), and the tool message says so.
pub fn to_openai(system: Option<&str>, messages: &[Message]) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(system) = system {
        out.push(json!({ "role": "system", "content": system }));
    }
    for message in messages {
        match message.role {
            Role::User => match &message.content {
                Content::Text(text) => out.push(json!({ "role": "user", "content": text })),
                Content::Blocks(blocks) => {
                    let mut images = Vec::new();
                    let mut parts = Vec::new();
                    for block in blocks {
                        match block {
                            Block::ToolResult(result) => out.push(json!({
                                "role": "tool",
                                "tool_call_id": result.tool_use_id,
                                "content": tool_message_text(result, &mut images),
                            })),
                            Block::Text(text) => {
                                parts.push(json!({ "type": "text", "text": text.text }));
                            }
                            Block::Other(value) => parts.push(value.clone()),
                            Block::ToolUse(_) => {}
                        }
                    }
                    // The results' images first: they follow the tool messages they belong to.
                    images.append(&mut parts);
                    let parts = images;
                    match parts.as_slice() {
                        [] => {}
                        [only] if only.get("type") == Some(&json!("text")) => {
                            out.push(json!({ "role": "user", "content": only["text"] }));
                        }
                        _ => out.push(json!({ "role": "user", "content": parts })),
                    }
                }
            },
            Role::Assistant => {
                let text = match &message.content {
                    Content::Text(text) => text.clone(),
                    Content::Blocks(blocks) => blocks
                        .iter()
                        .filter_map(|b| match b {
                            Block::Text(text) => Some(text.text.as_str()),
                            _ => None,
                        })
                        .collect::<Vec<_>>()
                        .join("\n"),
                };
                let calls: Vec<Value> = message
                    .tool_uses()
                    .map(|call| {
                        let arguments = match &call.input {
                            Value::String(raw) => raw.clone(),
                            input => input.to_string(),
                        };
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": { "name": call.name, "arguments": arguments },
                        })
                    })
                    .collect();
                let mut entry = json!({ "role": "assistant" });
                entry["content"] = if text.is_empty() && !calls.is_empty() {
                    Value::Null
                } else {
                    Value::String(text)
                };
                if !calls.is_empty() {
                    entry["tool_calls"] = Value::Array(calls);
                }
                out.push(entry);
            }
        }
    }
    out
}

fn user_message(blocks: Vec<Block>) -> Message {
    // A lone text reads back as plain string content.
    match blocks.as_slice() {
        [Block::Text(text)] if text.extra.is_empty() => Message::user(text.text.clone()),
        _ => Message::from_blocks(Role::User, blocks),
    }
}

fn part_to_block(part: &Value) -> Block {
    match (
        part.get("type").and_then(Value::as_str),
        part.get("text").and_then(Value::as_str),
    ) {
        (Some("text"), Some(text)) => Block::text(text),
        _ => Block::Other(part.clone()),
    }
}

/// The text of an OpenAI `content`: a string, or the text parts of an array joined.
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
