//! What the commands read: a file or stdin, tool calls in any provider's shape, a history.

use std::io::Read as _;

use serde_json::Value;
use toolsmith::ToolCall;
use toolsmith::history::{Block, Message};

use crate::{Failure, fail};

pub(crate) fn read_input(input: &str) -> Result<String, Failure> {
    if input == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        return Ok(text);
    }
    std::fs::read_to_string(input).map_err(|error| fail(format!("{input}: {error}")))
}

/// Tool calls from an Anthropic assistant message or an array of `tool_use` blocks.
pub(crate) fn read_calls(input: &str) -> Result<Vec<ToolCall>, Failure> {
    let text = read_input(input)?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|error| fail(format!("{input}: not JSON ({error})")))?;
    let blocks: Vec<Block> = match value {
        Value::Array(_) => serde_json::from_value(value),
        Value::Object(ref map) if map.contains_key("content") => {
            serde_json::from_value::<Message>(value).map(|m| m.blocks().to_vec())
        }
        _ => {
            return Err(fail(format!(
                "{input}: expected an assistant message (an object with `content`) or an array of tool_use blocks"
            )));
        }
    }
    .map_err(|error| fail(format!("{input}: {error}")))?;
    let calls: Vec<ToolCall> = blocks
        .into_iter()
        .filter_map(|block| match block {
            Block::ToolUse(call) => Some(ToolCall::new(call.id, call.name, call.input)),
            _ => None,
        })
        .collect();
    if calls.is_empty() {
        return Err(fail(format!("{input}: no tool_use block found")));
    }
    Ok(calls)
}

/// How a history was given: a bare array of messages, or an object with `messages` (and maybe
/// `system`), which is written back the same way.
pub(crate) enum Shape {
    Array,
    Object(serde_json::Map<String, Value>),
}

impl Shape {
    pub(crate) fn write(self, messages: Vec<Message>) -> Result<Value, Failure> {
        let messages = serde_json::to_value(messages)?;
        Ok(match self {
            Shape::Array => messages,
            Shape::Object(mut map) => {
                map.insert("messages".to_owned(), messages);
                Value::Object(map)
            }
        })
    }
}

pub(crate) fn read_history(input: &str) -> Result<(Shape, Vec<Message>), Failure> {
    let text = read_input(input)?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|error| fail(format!("{input}: not JSON ({error})")))?;
    let (shape, messages) = match value {
        Value::Array(_) => (Shape::Array, value),
        Value::Object(mut map) => {
            let messages = map.remove("messages").ok_or_else(|| {
                fail(format!(
                    "{input}: expected an array of messages or an object with `messages`"
                ))
            })?;
            (Shape::Object(map), messages)
        }
        _ => return Err(fail(format!("{input}: expected an array of messages"))),
    };
    let messages: Vec<Message> = serde_json::from_value(messages)
        .map_err(|error| fail(format!("{input}: not Anthropic messages ({error})")))?;
    Ok((shape, messages))
}
