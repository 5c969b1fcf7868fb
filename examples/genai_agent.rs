//! An agent loop written with genai's client, each batch of tool calls one toolsmith turn
//! (`toolsmith::adapters::genai`).
//!
//! With no `OPENAI_API_KEY` the model is scripted (on loopback): it asks for three calls in one
//! message — a megabyte of output, a failure, a read — pages the cut output with
//! `read_artifact`, and answers. With a key, it is the provider's model over this repository.
//!
//! Run: `cargo run --example genai_agent`

mod common;

use genai::adapter::AdapterKind;
use genai::chat::ChatRequest;
use genai::resolver::{AuthData, Endpoint, ServiceTargetResolver};
use genai::{ModelIden, ServiceTarget};
use toolsmith::adapters::genai::{tool_calls, tool_message, tools};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let setup = common::Setup::new().await?;
    // Every model goes to the OpenAI-compatible endpoint of the setup (the scripted model's,
    // or the provider's).
    let (endpoint, key) = (format!("{}/", setup.base_url), setup.api_key.clone());
    let resolver = ServiceTargetResolver::from_resolver_fn(
        move |target: ServiceTarget| -> Result<ServiceTarget, genai::resolver::Error> {
            Ok(ServiceTarget {
                endpoint: Endpoint::from_owned(endpoint.clone()),
                auth: AuthData::from_single(key.clone()),
                model: ModelIden::new(AdapterKind::OpenAI, target.model.model_name),
            })
        },
    );
    let client = genai::Client::builder()
        .with_service_target_resolver(resolver)
        .build()?;
    let mut request =
        ChatRequest::from_user(setup.prompt.clone()).with_tools(tools(&setup.registry));
    for _ in 0..10 {
        let response = client
            .exec_chat(&setup.model, request.clone(), None)
            .await?;
        let calls = tool_calls(&response);
        if calls.is_empty() {
            return setup.finish(response.first_text().unwrap_or_default());
        }
        let results = setup.registry.turn().execute(calls).await;
        let Some(assistant) = response.into_assistant_message_for_tool_use() else {
            return Err("a response with tool calls builds an assistant message".into());
        };
        request = request
            .append_message(assistant)
            .append_message(tool_message(&results));
    }
    Err("the model did not answer within 10 turns".into())
}
