//! async-openai's types and the registry's: the tool calls of a Chat Completions message or of a
//! Responses API output as [`ToolCall`]s, and [`ToolResult`]s as the tool messages and function
//! call outputs that answer them; the conversation as the history's [`Message`]s and back.
//!
//! A loop with async-openai's Chat Completions client, each batch one [`Turn`](crate::Turn):
//!
//! ```no_run
//! use async_openai::types::chat::{ChatCompletionRequestMessage, CreateChatCompletionRequest};
//! use toolsmith::Registry;
//! use toolsmith::adapters::async_openai::{assistant_message, tool_calls, tool_messages};
//!
//! # async fn turn(
//! #     client: &async_openai::Client<async_openai::config::OpenAIConfig>,
//! #     registry: &Registry,
//! #     mut request: CreateChatCompletionRequest,
//! # ) -> Result<(), Box<dyn std::error::Error>> {
//! loop {
//!     let response = client.chat().create(request.clone()).await?;
//!     let message = &response.choices[0].message;
//!     let calls = tool_calls(message);
//!     if calls.is_empty() {
//!         break;
//!     }
//!     request.messages.push(assistant_message(message).into());
//!     let results = registry.turn().execute(calls).await;
//!     request.messages.extend(tool_messages(&results));
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Arguments that are not valid JSON (a model can send them) are the registry's to read: the
//! call becomes an error result naming the problem, never a panic. A custom tool's input is
//! free text: it is read as the JSON arguments of the toolsmith tool of that name, and is an
//! error result the same way when it is not JSON. Neither API has an error flag: an error
//! result says so in its text ([`ToolResult::flagless_content`]).

use ::async_openai::types::chat::{
    ChatCompletionMessageCustomToolCall, ChatCompletionMessageToolCall,
    ChatCompletionMessageToolCalls, ChatCompletionRequestAssistantMessage,
    ChatCompletionRequestAssistantMessageAudio, ChatCompletionRequestAssistantMessageContent,
    ChatCompletionRequestMessage, ChatCompletionRequestToolMessage,
    ChatCompletionRequestToolMessageContent, ChatCompletionResponseMessage, ChatCompletionTool,
    ChatCompletionTools, FunctionObject,
};
use ::async_openai::types::responses::{
    CustomToolCall, CustomToolCallOutput, CustomToolCallOutputOutput, FunctionCallOutput,
    FunctionCallOutputItemParam, FunctionTool, FunctionToolCall, InputItem, Item, OutputItem, Tool,
};

use crate::history::{self, ConversionError, Message};
use crate::{Registry, ToolCall, ToolResult};

/// The registry's tools as Chat Completions function tools, each with its description and input
/// schema (`read_artifact` among them when the registry keeps artifacts), not strict: for strict
/// definitions, render each spec with [`Dialect::OpenAiStrict`](crate::schema::Dialect).
pub fn chat_tools(registry: &Registry) -> Vec<ChatCompletionTools> {
    registry
        .tools()
        .map(|tool| {
            let spec = tool.spec();
            ChatCompletionTools::Function(ChatCompletionTool {
                function: FunctionObject {
                    name: spec.name.clone(),
                    description: Some(spec.description.clone()),
                    parameters: Some(spec.input_schema.clone()),
                    strict: None,
                },
            })
        })
        .collect()
}

/// The registry's tools as Responses API function tools, as [`chat_tools`] lists them.
pub fn response_tools(registry: &Registry) -> Vec<Tool> {
    registry
        .tools()
        .map(|tool| {
            let spec = tool.spec();
            Tool::Function(FunctionTool {
                name: spec.name.clone(),
                parameters: Some(spec.input_schema.clone()),
                strict: None,
                description: Some(spec.description.clone()),
                defer_loading: None,
                r#async: None,
                output_schema: None,
                allowed_callers: None,
            })
        })
        .collect()
}

// --- Chat Completions -------------------------------------------------------------------

impl From<&ChatCompletionMessageToolCall> for ToolCall {
    /// The call a function tool call asks for; its arguments are read when the call runs.
    fn from(call: &ChatCompletionMessageToolCall) -> Self {
        ToolCall::from_raw(&call.id, &call.function.name, &call.function.arguments)
    }
}

impl From<&ChatCompletionMessageCustomToolCall> for ToolCall {
    /// The call a custom tool call asks for: its input read as the tool's JSON arguments.
    fn from(call: &ChatCompletionMessageCustomToolCall) -> Self {
        ToolCall::from_raw(&call.id, &call.custom_tool.name, &call.custom_tool.input)
    }
}

impl From<&ChatCompletionMessageToolCalls> for ToolCall {
    fn from(call: &ChatCompletionMessageToolCalls) -> Self {
        match call {
            ChatCompletionMessageToolCalls::Function(call) => call.into(),
            ChatCompletionMessageToolCalls::Custom(call) => call.into(),
        }
    }
}

/// The tool calls of an assistant message, in the order the model made them: one
/// [`Turn`](crate::Turn) runs them all.
pub fn tool_calls(message: &ChatCompletionResponseMessage) -> Vec<ToolCall> {
    message
        .tool_calls
        .iter()
        .flatten()
        .map(ToolCall::from)
        .collect()
}

/// The assistant message of a response as it goes back into the conversation: its text, its
/// refusal, its audio's id and its tool calls, which the tool messages then answer.
pub fn assistant_message(
    message: &ChatCompletionResponseMessage,
) -> ChatCompletionRequestAssistantMessage {
    ChatCompletionRequestAssistantMessage {
        content: message
            .content
            .clone()
            .map(ChatCompletionRequestAssistantMessageContent::Text),
        refusal: message.refusal.clone(),
        audio: message
            .audio
            .as_ref()
            .map(|audio| ChatCompletionRequestAssistantMessageAudio {
                id: audio.id.clone(),
            }),
        tool_calls: message.tool_calls.clone(),
        ..Default::default()
    }
}

impl From<&ToolResult> for ChatCompletionRequestToolMessage {
    /// The tool message answering the result's call: its text, an error saying so.
    fn from(result: &ToolResult) -> Self {
        ChatCompletionRequestToolMessage {
            content: ChatCompletionRequestToolMessageContent::Text(
                result.flagless_content().into_owned(),
            ),
            tool_call_id: result.call_id.clone(),
        }
    }
}

impl From<&ToolResult> for ChatCompletionRequestMessage {
    fn from(result: &ToolResult) -> Self {
        ChatCompletionRequestMessage::Tool(result.into())
    }
}

/// The tool messages answering a turn's results, one per call, in call order.
pub fn tool_messages(results: &[ToolResult]) -> Vec<ChatCompletionRequestMessage> {
    results
        .iter()
        .map(ChatCompletionRequestMessage::from)
        .collect()
}

// --- Responses API ----------------------------------------------------------------------

impl From<&FunctionToolCall> for ToolCall {
    /// The call a function call item asks for, by its `call_id` (the id its output names).
    fn from(call: &FunctionToolCall) -> Self {
        ToolCall::from_raw(&call.call_id, &call.name, &call.arguments)
    }
}

impl From<&CustomToolCall> for ToolCall {
    /// The call a custom tool call item asks for: its input read as the tool's JSON arguments.
    fn from(call: &CustomToolCall) -> Self {
        ToolCall::from_raw(&call.call_id, &call.name, &call.input)
    }
}

/// The tool calls among a response's output items (function and custom tool calls), in order.
pub fn response_tool_calls(output: &[OutputItem]) -> Vec<ToolCall> {
    output
        .iter()
        .filter_map(|item| match item {
            OutputItem::FunctionCall(call) => Some(ToolCall::from(call)),
            OutputItem::CustomToolCall(call) => Some(ToolCall::from(call)),
            _ => None,
        })
        .collect()
}

impl From<&ToolResult> for FunctionCallOutputItemParam {
    /// The `function_call_output` item answering the result's call.
    fn from(result: &ToolResult) -> Self {
        FunctionCallOutputItemParam {
            call_id: Some(result.call_id.clone()),
            output: FunctionCallOutput::Text(result.flagless_content().into_owned()),
            id: None,
            status: None,
            name: None,
            namespace: None,
            caller: None,
        }
    }
}

impl From<&ToolResult> for CustomToolCallOutput {
    /// The `custom_tool_call_output` item answering the result's call.
    fn from(result: &ToolResult) -> Self {
        CustomToolCallOutput {
            call_id: result.call_id.clone(),
            output: CustomToolCallOutputOutput::Text(result.flagless_content().into_owned()),
            id: None,
            caller: None,
        }
    }
}

/// The input items answering a response's tool calls with a turn's results: for each result,
/// in order, a `custom_tool_call_output` when the output item it answers (by call id) is a
/// custom tool call, else a `function_call_output`.
pub fn response_answers(output: &[OutputItem], results: &[ToolResult]) -> Vec<InputItem> {
    results
        .iter()
        .map(|result| {
            let custom = output.iter().any(|item| {
                matches!(item, OutputItem::CustomToolCall(call) if call.call_id == result.call_id)
            });
            let item = if custom {
                Item::CustomToolCallOutput(result.into())
            } else {
                Item::FunctionCallOutput(result.into())
            };
            InputItem::Item(item)
        })
        .collect()
}

// --- History ----------------------------------------------------------------------------

/// Reads a Chat Completions conversation into a system prompt and the history's messages
/// ([`history::from_openai`]), for the history's repair, compaction and overflow recovery.
///
/// # Errors
///
/// [`ConversionError`] naming the message that cannot be read.
pub fn to_history(
    messages: &[ChatCompletionRequestMessage],
) -> Result<(Option<String>, Vec<Message>), ConversionError> {
    let values: Vec<serde_json::Value> = messages
        .iter()
        .enumerate()
        .map(|(index, message)| {
            serde_json::to_value(message).map_err(|error| ConversionError {
                index,
                problem: error.to_string(),
            })
        })
        .collect::<Result<_, _>>()?;
    history::from_openai(&values)
}

/// Writes a system prompt and the history's messages as a Chat Completions conversation
/// ([`history::to_openai`]).
///
/// # Errors
///
/// [`ConversionError`] naming the message async-openai's types cannot hold.
pub fn from_history(
    system: Option<&str>,
    messages: &[Message],
) -> Result<Vec<ChatCompletionRequestMessage>, ConversionError> {
    history::to_openai(system, messages)
        .into_iter()
        .enumerate()
        .map(|(index, value)| {
            serde_json::from_value(value).map_err(|error| ConversionError {
                index,
                problem: error.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::registry::Registry;

    #[tokio::test]
    async fn invalid_arguments_are_an_error_result_naming_the_problem() {
        let message: ChatCompletionResponseMessage = serde_json::from_value(json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [
                { "id": "call_1", "type": "function",
                  "function": { "name": "read_artifact", "arguments": "{\"id\": " } },
                { "id": "call_2", "type": "custom",
                  "custom_tool": { "name": "read_artifact", "input": "not json" } },
            ],
        }))
        .unwrap();
        let calls = tool_calls(&message);
        assert_eq!(calls.len(), 2);
        let registry = Registry::builder()
            .artifacts(crate::artifacts::MemoryStore::new())
            .build()
            .unwrap();
        let results = registry.turn().execute(calls).await;
        let messages = tool_messages(&results);
        for (message, id) in messages.iter().zip(["call_1", "call_2"]) {
            let ChatCompletionRequestMessage::Tool(tool) = message else {
                panic!("a tool message")
            };
            assert_eq!(tool.tool_call_id, id);
            let ChatCompletionRequestToolMessageContent::Text(text) = &tool.content else {
                panic!("text")
            };
            assert!(text.starts_with("Error: invalid arguments"), "{text}");
            assert!(text.contains("JSON"), "{text}");
        }
        // The assistant message goes back with its calls, for the tool messages to answer.
        let back = assistant_message(&message);
        assert_eq!(back.tool_calls.as_ref().map(Vec::len), Some(2));
    }

    #[tokio::test]
    async fn responses_calls_are_answered_by_their_kind_of_output() {
        let output: Vec<OutputItem> = serde_json::from_value(json!([
            { "type": "reasoning", "id": "rs_1", "summary": [] },
            { "type": "function_call", "call_id": "call_a", "name": "nope",
              "arguments": "{}", "id": "fc_1", "status": "completed" },
            { "type": "custom_tool_call", "call_id": "call_b", "name": "nope",
              "input": "{}", "id": "ctc_1" },
        ]))
        .unwrap();
        let calls = response_tool_calls(&output);
        assert_eq!(
            calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
            ["call_a", "call_b"]
        );
        let registry = Registry::builder().build().unwrap();
        let results = registry.turn().execute(calls).await;
        let answers = serde_json::to_value(response_answers(&output, &results)).unwrap();
        assert_eq!(answers[0]["type"], "function_call_output");
        assert_eq!(answers[0]["call_id"], "call_a");
        assert_eq!(answers[1]["type"], "custom_tool_call_output");
        assert_eq!(answers[1]["call_id"], "call_b");
        // An unknown tool is an error, and the text says so: the API has no flag for it.
        let text = answers[0]["output"].as_str().unwrap();
        assert!(text.starts_with("Error: "), "{text}");
    }

    #[test]
    fn a_conversation_goes_to_the_history_and_back() {
        let messages: Vec<ChatCompletionRequestMessage> = serde_json::from_value(json!([
            { "role": "system", "content": "Be brief." },
            { "role": "user", "content": "List the files." },
            { "role": "assistant", "tool_calls": [
                { "id": "call_1", "type": "function",
                  "function": { "name": "list_directory", "arguments": "{\"path\":\".\"}" } },
            ] },
            { "role": "tool", "tool_call_id": "call_1", "content": "a\nb" },
        ]))
        .unwrap();
        let (system, history) = to_history(&messages).unwrap();
        assert_eq!(system.as_deref(), Some("Be brief."));
        assert_eq!(history.len(), 3);
        let back = from_history(system.as_deref(), &history).unwrap();
        assert_eq!(back, messages);
    }
}
