//! The adapters proved with a real agent loop, without a network: each model client
//! (async-openai, genai) pointed at a scripted OpenAI-compatible model on loopback, which asks
//! for three calls in one message (a megabyte of output, a failure, a read), then pages the cut
//! output with `read_artifact`, then answers. The model's requests are checked: three tool
//! results, the same ids in call order, within the turn's budget, the cut one naming its
//! artifact, and the page it asked for.

use toolsmith::testing::{ScriptedModel, check_tool_loop, tool_loop_script};
use toolsmith::{BudgetPolicy, Registry};

const NOTES: &str = "the release is on Thursday";
const BATCH_BUDGET: usize = 20_000;

/// The standard tools over a fresh workspace holding `notes.txt`, artifacts in memory.
fn registry(dir: &std::path::Path) -> Registry {
    std::fs::write(dir.join("notes.txt"), NOTES).unwrap();
    toolsmith_std::register(Registry::builder())
        .state(toolsmith_std::Sandbox::new(dir).unwrap())
        .artifacts(toolsmith::artifacts::MemoryStore::new())
        .budget(BudgetPolicy::new().with_batch_budget_chars(BATCH_BUDGET))
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_openai_drives_the_registry_through_a_whole_loop() {
    use async_openai::config::OpenAIConfig;
    use async_openai::types::chat::{
        ChatCompletionRequestMessage, ChatCompletionRequestUserMessage, CreateChatCompletionRequest,
    };
    use toolsmith::adapters::async_openai::{
        assistant_message, chat_tools, tool_calls, tool_messages,
    };

    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let model = ScriptedModel::start(tool_loop_script()).await.unwrap();
    let client = async_openai::Client::with_config(
        OpenAIConfig::new()
            .with_api_base(model.base_url())
            .with_api_key("scripted"),
    );
    let mut request = CreateChatCompletionRequest {
        model: "gpt-4o-mini".to_owned(),
        messages: vec![ChatCompletionRequestMessage::User(
            ChatCompletionRequestUserMessage::from("Run the test suite and tell me line 15,000."),
        )],
        tools: Some(chat_tools(&registry)),
        ..Default::default()
    };
    let answer = loop {
        let response = client.chat().create(request.clone()).await.unwrap();
        let message = &response.choices[0].message;
        let calls = tool_calls(message);
        if calls.is_empty() {
            break message.content.clone().unwrap_or_default();
        }
        request.messages.push(assistant_message(message).into());
        let results = registry.turn().execute(calls).await;
        request.messages.extend(tool_messages(&results));
    };
    assert!(
        answer.contains(&toolsmith::testing::tool_loop_line(15_000)),
        "{answer}"
    );
    check_tool_loop(&model.requests(), BATCH_BUDGET, NOTES).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn genai_drives_the_registry_through_a_whole_loop() {
    use genai::adapter::AdapterKind;
    use genai::chat::ChatRequest;
    use genai::resolver::{AuthData, Endpoint, ServiceTargetResolver};
    use genai::{ModelIden, ServiceTarget};
    use toolsmith::adapters::genai::{tool_calls, tool_message, tools};

    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let model = ScriptedModel::start(tool_loop_script()).await.unwrap();
    let endpoint = format!("{}/", model.base_url());
    let resolver = ServiceTargetResolver::from_resolver_fn(
        move |target: ServiceTarget| -> Result<ServiceTarget, genai::resolver::Error> {
            Ok(ServiceTarget {
                endpoint: Endpoint::from_owned(endpoint.clone()),
                auth: AuthData::from_single("scripted"),
                model: ModelIden::new(AdapterKind::OpenAI, target.model.model_name),
            })
        },
    );
    let client = genai::Client::builder()
        .with_service_target_resolver(resolver)
        .build()
        .unwrap();
    let mut request = ChatRequest::from_user("Run the test suite and tell me line 15,000.")
        .with_tools(tools(&registry));
    let answer = loop {
        let response = client
            .exec_chat("gpt-4o-mini", request.clone(), None)
            .await
            .unwrap();
        let calls = tool_calls(&response);
        if calls.is_empty() {
            break response.first_text().unwrap_or_default().to_owned();
        }
        let results = registry.turn().execute(calls).await;
        let assistant = response
            .into_assistant_message_for_tool_use()
            .expect("a response with tool calls");
        request = request
            .append_message(assistant)
            .append_message(tool_message(&results));
    };
    assert!(
        answer.contains(&toolsmith::testing::tool_loop_line(15_000)),
        "{answer}"
    );
    check_tool_loop(&model.requests(), BATCH_BUDGET, NOTES).unwrap();
}
