//! An agent loop written with async-openai's Chat Completions client, each batch of tool calls
//! one toolsmith turn (`toolsmith::adapters::async_openai`).
//!
//! With no `OPENAI_API_KEY` the model is scripted (on loopback): it asks for three calls in one
//! message — a megabyte of output, a failure, a read — pages the cut output with
//! `read_artifact`, and answers. With a key, it is the provider's model over this repository.
//!
//! Run: `cargo run --example async_openai_agent`

mod common;

use async_openai::config::OpenAIConfig;
use async_openai::types::chat::{
    ChatCompletionRequestMessage, ChatCompletionRequestUserMessage, CreateChatCompletionRequest,
};
use toolsmith::adapters::async_openai::{assistant_message, chat_tools, tool_calls, tool_messages};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let setup = common::Setup::new().await?;
    let client = async_openai::Client::with_config(
        OpenAIConfig::new()
            .with_api_base(setup.base_url.clone())
            .with_api_key(setup.api_key.clone()),
    );
    let mut request = CreateChatCompletionRequest {
        model: setup.model.clone(),
        messages: vec![ChatCompletionRequestMessage::User(
            ChatCompletionRequestUserMessage::from(setup.prompt.as_str()),
        )],
        tools: Some(chat_tools(&setup.registry)),
        ..Default::default()
    };
    for _ in 0..10 {
        let response = client.chat().create(request.clone()).await?;
        let message = &response.choices[0].message;
        let calls = tool_calls(message);
        if calls.is_empty() {
            return setup.finish(message.content.as_deref().unwrap_or_default());
        }
        request.messages.push(assistant_message(message).into());
        let results = setup.registry.turn().execute(calls).await;
        for result in &results {
            println!(
                "{} {}: {} of {} chars",
                result.call_id,
                result.tool,
                result.content_chars(),
                result.meta.original_chars
            );
        }
        request.messages.extend(tool_messages(&results));
    }
    Err("the model did not answer within 10 turns".into())
}
