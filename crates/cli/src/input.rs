//! What the commands read: a file or stdin, tool calls in any provider's shape, a history.

use std::io::Read as _;

use serde_json::Value;
use toolsmith::ToolCall;
use toolsmith::history::{self, Block, Message};

use crate::args::HistoryFormat;

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

/// How a history was given: a bare array, or an object with its list under `key` (and maybe
/// more, a `system` prompt say), and in which format; written back the same way.
pub(crate) struct Shape {
    format: HistoryFormat,
    object: Option<serde_json::Map<String, Value>>,
    /// OpenAI's system prompt, taken out of the messages.
    system: Option<String>,
}

impl Shape {
    pub(crate) fn write(self, messages: Vec<Message>) -> Result<Value, Failure> {
        let list = match self.format {
            HistoryFormat::Anthropic => serde_json::to_value(messages)?,
            HistoryFormat::Openai => {
                Value::Array(history::to_openai(self.system.as_deref(), &messages))
            }
            HistoryFormat::Responses => Value::Array(history::into_responses(messages)),
            HistoryFormat::Gemini => Value::Array(history::into_gemini(messages)),
        };
        Ok(match self.object {
            None => list,
            Some(mut map) => {
                map.insert(list_key(self.format).to_owned(), list);
                Value::Object(map)
            }
        })
    }
}

/// Where an object keeps its list.
fn list_key(format: HistoryFormat) -> &'static str {
    match format {
        HistoryFormat::Anthropic | HistoryFormat::Openai => "messages",
        HistoryFormat::Responses => "input",
        HistoryFormat::Gemini => "contents",
    }
}

pub(crate) fn read_history(
    input: &str,
    format: HistoryFormat,
) -> Result<(Shape, Vec<Message>), Failure> {
    let text = read_input(input)?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|error| fail(format!("{input}: not JSON ({error})")))?;
    let key = list_key(format);
    let noun = match format {
        HistoryFormat::Anthropic | HistoryFormat::Openai => "messages",
        HistoryFormat::Responses => "input items",
        HistoryFormat::Gemini => "contents",
    };
    let (object, list) = match value {
        Value::Array(list) => (None, list),
        Value::Object(mut map) => match map.remove(key) {
            Some(Value::Array(list)) => (Some(map), list),
            _ => {
                return Err(fail(format!(
                    "{input}: expected an array of {noun} or an object with `{key}`"
                )));
            }
        },
        _ => {
            return Err(fail(format!(
                "{input}: expected an array of {noun} or an object with `{key}`"
            )));
        }
    };
    let mut system = None;
    let messages = match format {
        HistoryFormat::Anthropic => serde_json::from_value(Value::Array(list))
            .map_err(|error| fail(format!("{input}: not Anthropic messages ({error})")))?,
        HistoryFormat::Openai => {
            let (prompt, messages) =
                history::from_openai(&list).map_err(|error| fail(format!("{input}: {error}")))?;
            system = prompt;
            messages
        }
        HistoryFormat::Responses => history::from_responses_owned(list).map_err(|error| {
            fail(format!(
                "{input}: Responses item {}",
                error.to_string().trim_start_matches("OpenAI message ")
            ))
        })?,
        HistoryFormat::Gemini => history::from_gemini_owned(list).map_err(|error| {
            fail(format!(
                "{input}: Gemini content {}",
                error.to_string().trim_start_matches("OpenAI message ")
            ))
        })?,
    };
    Ok((
        Shape {
            format,
            object,
            system,
        },
        messages,
    ))
}
