//! The message model: the Anthropic Messages shape, round-tripping its JSON exactly.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

pub use super::extra::Extra;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user, or the agent loop answering tool calls.
    User,
    /// The model.
    Assistant,
}

/// One message of a conversation. (The system prompt is not a message in this shape; it
/// travels beside the messages, and recovery always keeps it.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// What it says.
    pub content: Content,
    /// Any other field, kept as it was.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A message's content: a plain string, or a list of blocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Content {
    /// `"content": "…"`.
    Text(String),
    /// `"content": [ … ]`.
    Blocks(Vec<Block>),
}

/// One block of content.
///
/// Text, tool use and tool result blocks are modelled; every other kind (images, documents,
/// thinking, server tools, kinds that do not exist yet) is kept as its JSON and written back
/// unchanged.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// `{"type": "text", …}`.
    Text(TextBlock),
    /// `{"type": "tool_use", …}`.
    ToolUse(ToolUseBlock),
    /// `{"type": "tool_result", …}`.
    ToolResult(ToolResultBlock),
    /// Any other block, as it was.
    Other(Value),
}

/// A text block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextBlock {
    /// The text.
    pub text: String,
    /// Other fields (`cache_control`, `citations`), kept as they were.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A tool call made by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUseBlock {
    /// The call's id, which its result names.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments.
    pub input: Value,
    /// Other fields, kept as they were.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The answer to a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultBlock {
    /// The id of the call it answers.
    pub tool_use_id: String,
    /// What the tool returned (absent means empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<ResultContent>,
    /// Whether it is an error (absent means false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Other fields (`cache_control`), kept as they were.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A tool result's content: a string, or blocks (text, images).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ResultContent {
    /// `"content": "…"`.
    Text(String),
    /// `"content": [ … ]`.
    Blocks(Vec<Block>),
}

impl Block {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Block::Text(TextBlock {
            text: text.into(),
            extra: Extra::new(),
        })
    }

    /// A tool use block.
    pub fn tool_use(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        Block::ToolUse(ToolUseBlock {
            id: id.into(),
            name: name.into(),
            input,
            extra: Extra::new(),
        })
    }

    /// A tool result block with text content.
    pub fn tool_result(
        tool_use_id: impl Into<String>,
        text: impl Into<String>,
        is_error: bool,
    ) -> Self {
        Block::ToolResult(ToolResultBlock {
            tool_use_id: tool_use_id.into(),
            content: Some(ResultContent::Text(text.into())),
            is_error: is_error.then_some(true),
            extra: Extra::new(),
        })
    }

    /// The tool use, if this is one.
    pub fn as_tool_use(&self) -> Option<&ToolUseBlock> {
        match self {
            Block::ToolUse(block) => Some(block),
            _ => None,
        }
    }

    /// The tool result, if this is one.
    pub fn as_tool_result(&self) -> Option<&ToolResultBlock> {
        match self {
            Block::ToolResult(block) => Some(block),
            _ => None,
        }
    }
}

/// An Anthropic `image` block of base64 data: its MIME type and data.
pub(crate) fn base64_image(block: &Value) -> Option<(&str, &str)> {
    let source = block.get("source")?;
    if block.get("type")?.as_str()? != "image" || source.get("type")?.as_str()? != "base64" {
        return None;
    }
    Some((
        source.get("media_type")?.as_str()?,
        source.get("data")?.as_str()?,
    ))
}

impl ToolResultBlock {
    /// The text of the result: its string (borrowed), or its text blocks joined by newlines.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match &self.content {
            None => std::borrow::Cow::Borrowed(""),
            Some(ResultContent::Text(text)) => std::borrow::Cow::Borrowed(text),
            Some(ResultContent::Blocks(blocks)) => std::borrow::Cow::Owned(
                blocks
                    .iter()
                    .filter_map(|block| match block {
                        Block::Text(text) => Some(text.text.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
        }
    }

    /// The images of the content given as base64 (`{"type": "image", "source": {"type":
    /// "base64", …}}`), as (MIME type, base64 data), in order: what a conversion to another
    /// provider's format writes in that format's own shape.
    pub fn base64_images(&self) -> impl Iterator<Item = (&str, &str)> {
        let blocks = match &self.content {
            Some(ResultContent::Blocks(blocks)) => blocks.as_slice(),
            _ => &[],
        };
        blocks.iter().filter_map(|block| match block {
            Block::Other(value) => base64_image(value),
            _ => None,
        })
    }

    /// Whether the content is only text (no images or other blocks).
    pub fn is_text_only(&self) -> bool {
        match &self.content {
            None | Some(ResultContent::Text(_)) => true,
            Some(ResultContent::Blocks(blocks)) => {
                blocks.iter().all(|block| matches!(block, Block::Text(_)))
            }
        }
    }

    /// The result's size in chars, without building its text.
    pub fn chars(&self) -> usize {
        match &self.content {
            None => 0,
            Some(ResultContent::Text(text)) => text.chars().count(),
            Some(ResultContent::Blocks(blocks)) => blocks
                .iter()
                .map(|block| match block {
                    Block::Text(text) => text.text.chars().count() + 1,
                    _ => 0,
                })
                .sum::<usize>()
                .saturating_sub(1),
        }
    }
}

impl Message {
    /// A user message of text.
    pub fn user(text: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: Content::Text(text.into()),
            extra: Extra::new(),
        }
    }

    /// An assistant message of text.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message {
            role: Role::Assistant,
            content: Content::Text(text.into()),
            extra: Extra::new(),
        }
    }

    /// A message of blocks.
    pub fn from_blocks(role: Role, blocks: Vec<Block>) -> Self {
        Message {
            role,
            content: Content::Blocks(blocks),
            extra: Extra::new(),
        }
    }

    /// The blocks of the message (a text content reads as no blocks).
    pub fn blocks(&self) -> &[Block] {
        match &self.content {
            Content::Blocks(blocks) => blocks,
            Content::Text(_) => &[],
        }
    }

    /// The tool uses of the message, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = &ToolUseBlock> {
        self.blocks().iter().filter_map(Block::as_tool_use)
    }

    /// The tool results of the message, in order.
    pub fn tool_results(&self) -> impl Iterator<Item = &ToolResultBlock> {
        self.blocks().iter().filter_map(Block::as_tool_result)
    }

    /// Whether the message has no content at all.
    pub fn is_empty(&self) -> bool {
        match &self.content {
            Content::Text(text) => text.is_empty(),
            Content::Blocks(blocks) => blocks.is_empty(),
        }
    }

    /// The chars of the message's text, tool inputs and results (other blocks count 0).
    pub fn chars(&self) -> usize {
        match &self.content {
            Content::Text(text) => text.chars().count(),
            Content::Blocks(blocks) => blocks
                .iter()
                .map(|block| match block {
                    Block::Text(text) => text.text.chars().count(),
                    Block::ToolUse(tool) => {
                        tool.name.len() + tool.input.to_string().chars().count()
                    }
                    Block::ToolResult(result) => result.chars(),
                    Block::Other(_) => 0,
                })
                .sum(),
        }
    }
}

impl Serialize for Block {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let tagged = |kind: &str, value: Result<Value, serde_json::Error>| {
            let mut value = value.map_err(serde::ser::Error::custom)?;
            if let Value::Object(map) = &mut value {
                map.insert("type".to_owned(), Value::String(kind.to_owned()));
            }
            Ok(value)
        };
        let value = match self {
            Block::Text(block) => tagged("text", serde_json::to_value(block))?,
            Block::ToolUse(block) => tagged("tool_use", serde_json::to_value(block))?,
            Block::ToolResult(block) => tagged("tool_result", serde_json::to_value(block))?,
            Block::Other(value) => value.clone(),
        };
        value.serialize(serializer)
    }
}

/// A content, a string or a list of blocks, read with what was wrong when it is neither (rather
/// than that no form matched): `Content` and `ResultContent` alike.
struct ContentVisitor<T> {
    text: fn(String) -> T,
    blocks: fn(Vec<Block>) -> T,
}

impl<'de, T> serde::de::Visitor<'de> for ContentVisitor<T> {
    type Value = T;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("a `content` that is a string or a list of blocks")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<T, E> {
        Ok((self.text)(text.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, text: String) -> Result<T, E> {
        Ok((self.text)(text))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(block) = seq.next_element()? {
            blocks.push(block);
        }
        Ok((self.blocks)(blocks))
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ContentVisitor {
            text: Content::Text,
            blocks: Content::Blocks,
        })
    }
}

impl<'de> Deserialize<'de> for ResultContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ContentVisitor {
            text: ResultContent::Text,
            blocks: ResultContent::Blocks,
        })
    }
}

impl<'de> Deserialize<'de> for Block {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut value = Value::deserialize(deserializer)?;
        let kind = value.get("type").and_then(Value::as_str).map(str::to_owned);
        let untag = |value: &mut Value| {
            if let Value::Object(map) = value {
                map.remove("type");
            }
        };
        match kind.as_deref() {
            Some("text") => {
                untag(&mut value);
                serde_json::from_value(value)
                    .map(Block::Text)
                    .map_err(D::Error::custom)
            }
            Some("tool_use") => {
                untag(&mut value);
                serde_json::from_value(value)
                    .map(Block::ToolUse)
                    .map_err(D::Error::custom)
            }
            Some("tool_result") => {
                untag(&mut value);
                serde_json::from_value(value)
                    .map(Block::ToolResult)
                    .map_err(D::Error::custom)
            }
            // Another kind, or an object of another format without a `type` (a Responses
            // message item, a Gemini part), as `serialize` wrote it.
            _ if value.is_object() => Ok(Block::Other(value)),
            _ => Err(D::Error::custom(
                "a content block must be a JSON object (with a `type`: `text`, `tool_use`, …)",
            )),
        }
    }
}
