//! genai's types and the registry's: a response's [`ToolCall`](::genai::chat::ToolCall)s as the
//! registry's [`ToolCall`]s, [`ToolResult`]s as the [`ToolResponse`]s and the tool message that
//! answer them, and the registry's tools as genai's [`Tool`]s.
//!
//! A loop with genai's client, each batch one [`Turn`](crate::Turn):
//!
//! ```no_run
//! use genai::chat::ChatRequest;
//! use toolsmith::Registry;
//! use toolsmith::adapters::genai::{tool_calls, tool_message, tools};
//!
//! # async fn run(client: &genai::Client, registry: &Registry) -> Result<(), Box<dyn std::error::Error>> {
//! let mut request = ChatRequest::from_user("Why does the build fail?").with_tools(tools(registry));
//! loop {
//!     let response = client.exec_chat("gpt-4o-mini", request.clone(), None).await?;
//!     let calls = tool_calls(&response);
//!     if calls.is_empty() {
//!         break;
//!     }
//!     let results = registry.turn().execute(calls).await;
//!     // The assistant message as genai builds it: its calls' thought signatures kept.
//!     if let Some(assistant) = response.into_assistant_message_for_tool_use() {
//!         request = request.append_message(assistant);
//!     }
//!     request = request.append_message(tool_message(&results));
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Every [`ToolResponse`] names its function (`fn_name`): Gemini correlates a response by its
//! function's name, not its call's id. A call's `thought_signatures` stay on genai's own call,
//! in the assistant message genai builds ([`ChatResponse::into_assistant_message_for_tool_use`]);
//! nothing here touches them. genai has no error flag on a tool response: an error result says
//! so in its text ([`ToolResult::flagless_content`]).

use ::genai::chat::{ChatMessage, ChatResponse, Tool, ToolResponse};
use serde_json::Value;

use crate::{Registry, ToolCall, ToolResult};

impl From<&::genai::chat::ToolCall> for ToolCall {
    /// The call genai's tool call asks for. Arguments genai kept as a string (a provider sent
    /// text) are read when the call runs: an error result if they are not a JSON object.
    fn from(call: &::genai::chat::ToolCall) -> Self {
        match &call.fn_arguments {
            Value::String(raw) => ToolCall::from_raw(&call.call_id, &call.fn_name, raw),
            arguments => ToolCall::new(&call.call_id, &call.fn_name, arguments.clone()),
        }
    }
}

/// The tool calls of a response, in the order the model made them: one
/// [`Turn`](crate::Turn) runs them all.
pub fn tool_calls(response: &ChatResponse) -> Vec<ToolCall> {
    response
        .tool_calls()
        .into_iter()
        .map(ToolCall::from)
        .collect()
}

impl From<&ToolResult> for ToolResponse {
    /// The response to the result's call: its id, its function's name, its text (an error
    /// saying so).
    fn from(result: &ToolResult) -> Self {
        ToolResponse::new(&result.call_id, result.flagless_content().into_owned())
            .with_fn_name(&result.tool)
    }
}

/// The tool message answering a turn's results: one response per call, in call order.
pub fn tool_message(results: &[ToolResult]) -> ChatMessage {
    ChatMessage::from(
        results
            .iter()
            .map(ToolResponse::from)
            .collect::<Vec<ToolResponse>>(),
    )
}

/// The registry's tools as genai's, each with its description and input schema (`read_artifact`
/// among them when the registry keeps artifacts). genai writes each in its provider's dialect.
pub fn tools(registry: &Registry) -> Vec<Tool> {
    registry
        .tools()
        .map(|tool| {
            let spec = tool.spec();
            Tool::new(spec.name.clone())
                .with_description(spec.description.clone())
                .with_schema(spec.input_schema.clone())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::artifacts::MemoryStore;

    #[tokio::test]
    async fn every_response_names_its_function_and_an_error_says_so() {
        let calls = [
            ::genai::chat::ToolCall {
                call_id: "c1".to_owned(),
                fn_name: "read_artifact".to_owned(),
                fn_arguments: json!("{\"id\": "),
                thought_signatures: Some(vec!["sig".to_owned()]),
            },
            ::genai::chat::ToolCall {
                call_id: "c2".to_owned(),
                fn_name: "nope".to_owned(),
                fn_arguments: json!({}),
                thought_signatures: None,
            },
        ];
        let registry = Registry::builder()
            .artifacts(MemoryStore::new())
            .build()
            .unwrap();
        let results = registry
            .turn()
            .execute(calls.iter().map(ToolCall::from))
            .await;
        let responses: Vec<ToolResponse> = results.iter().map(ToolResponse::from).collect();
        assert_eq!(responses[0].call_id, "c1");
        assert_eq!(responses[0].fn_name.as_deref(), Some("read_artifact"));
        assert!(
            responses[0].content.starts_with("Error: invalid arguments"),
            "{}",
            responses[0].content
        );
        assert_eq!(responses[1].fn_name.as_deref(), Some("nope"));
        assert!(responses[1].content.starts_with("Error: "));
        // The registry's own read_artifact is offered with the rest.
        assert!(
            tools(&registry)
                .iter()
                .any(|tool| tool.name.as_str() == "read_artifact")
        );
        // One tool message answers them all, in call order.
        let message = tool_message(&results);
        let ids: Vec<String> = message
            .content
            .tool_responses()
            .into_iter()
            .map(|response| response.call_id.clone())
            .collect();
        assert_eq!(ids, ["c1", "c2"]);
    }
}
