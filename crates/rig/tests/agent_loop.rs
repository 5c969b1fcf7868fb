//! rig drives the registry through a whole loop, without a network: rig's own OpenAI provider
//! pointed at a scripted OpenAI-compatible model on loopback, which asks for three calls in one
//! message (a megabyte of output, a failure, a read), then pages the cut output with
//! `read_artifact`, then answers. The model's requests are checked: three tool results, the same
//! ids in call order, within the turn's budget, the cut one naming its artifact, and the page it
//! asked for.

use rig_agent::run::{AgentRun, AgentRunStep, ModelTurn, PendingToolCall, TurnPolicy};
use rig_core::message::{
    AssistantContent, AssistantMessage, CallId, Message, ToolFunction, ToolName, UserContent,
};
use rig_core::providers::openai::OpenAIConfig;
use serde_json::json;
use toolsmith::testing::{ScriptedModel, check_tool_loop, tool_loop_line, tool_loop_script};
use toolsmith::{BudgetPolicy, Registry};
use toolsmith_rig::Driver;

const NOTES: &str = "the release is on Thursday";
const BATCH_BUDGET: usize = 20_000;

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
async fn rig_drives_the_registry_through_a_whole_loop() {
    let dir = tempfile::tempdir().unwrap();
    let driver = Driver::new(registry(dir.path()));
    let scripted = ScriptedModel::start(tool_loop_script()).await.unwrap();
    let model = OpenAIConfig::new("scripted")
        .with_base_url(scripted.base_url())
        .client()
        .chat("gpt-4o-mini");
    let response = driver
        .run(
            model,
            AgentRun::new("Run the test suite and tell me line 15,000.").max_turns(6),
        )
        .await
        .unwrap();
    assert!(
        response.output().contains(&tool_loop_line(15_000)),
        "{}",
        response.output()
    );
    let requests = scripted.requests();
    check_tool_loop(&requests, BATCH_BUDGET, NOTES).unwrap();
    // The registry's tools, read_artifact among them, were the model's.
    let offered: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["function"]["name"].as_str())
        .collect();
    assert!(
        offered.contains(&"run_command") && offered.contains(&"read_artifact"),
        "{offered:?}"
    );
}

/// A call of the model's turn, as rig's provider boundary makes one.
fn call(id: CallId, name: &str, arguments: serde_json::Value) -> AssistantContent {
    AssistantContent::ToolCall(rig_core::message::ToolCall::new(
        id,
        ToolFunction::new(ToolName::new(name).unwrap(), arguments),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_pending_call_is_answered_once_with_its_own_id() {
    let dir = tempfile::tempdir().unwrap();
    let driver = Driver::new(registry(dir.path()));
    let mut run = AgentRun::new("Read the notes.").max_turns(2);
    let AgentRunStep::CallModel { .. } = run.next_step().unwrap() else {
        panic!("the run asks for the model first")
    };
    // A call rig gave a local id (the provider sent none): it must come back as that id, not
    // one rebuilt from its wire string, which would be a provider id.
    let local = CallId::from_wire("");
    assert!(local.is_local());
    let bad = CallId::from_wire("call_bad");
    let list = CallId::from_wire("call_list");
    let choice = vec![
        call(local.clone(), "read_file", json!({ "path": "notes.txt" })),
        // Arguments that are not a JSON object: an error result the model can act on.
        call(bad.clone(), "read_file", json!([1, 2])),
        call(list.clone(), "list_directory", json!({ "path": "." })),
    ];
    let tools = driver
        .registry()
        .tools()
        .map(|tool| tool.spec().name.clone())
        .collect();
    let policy = TurnPolicy::new(tools, None, None).unwrap();
    run.model_response(ModelTurn::new(
        AssistantMessage::default(),
        choice,
        Default::default(),
        policy,
        json!({ "origin": "a turn made by the test" }),
    ))
    .unwrap();
    let AgentRunStep::CallTools { calls } = run.next_step().unwrap() else {
        panic!("the run asks for the calls")
    };
    assert_eq!(calls.len(), 3);
    assert!(
        matches!(calls[1], PendingToolCall::Malformed(_)),
        "{calls:?}"
    );
    let answers = driver.answer(calls).await;
    assert_eq!(answers.len(), 3);
    // rig takes the answers only if each answers an open call, made by that call.
    run.answer_all(answers).unwrap();
    let AgentRunStep::CallModel { prompt, .. } = run.next_step().unwrap() else {
        panic!("the run goes back to the model")
    };
    let Message::User { content, .. } = &*prompt else {
        panic!("the results are the user's message: {prompt:?}")
    };
    let results: Vec<_> = content
        .iter()
        .map(|content| match content {
            UserContent::ToolResult(result) => result,
            other => panic!("a tool result: {other:?}"),
        })
        .collect();
    assert_eq!(
        results
            .iter()
            .map(|result| &result.call)
            .collect::<Vec<_>>(),
        [&local, &bad, &list],
        "every call answered once, in call order, with rig's own ids"
    );
    assert!(!results[0].is_error);
    assert!(results[0].content[0].as_text().unwrap().contains(NOTES));
    assert!(results[1].is_error);
    let text = results[1].content[0].as_text().unwrap();
    assert!(text.contains("invalid arguments"), "{text}");
    assert!(!results[2].is_error);
    assert!(
        results[2].content[0]
            .as_text()
            .unwrap()
            .contains("notes.txt"),
        "{:?}",
        results[2]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_toolsmith_tool_as_a_rig_tool_is_cut_to_its_cap() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("big.log"),
        "a line of the log\n".repeat(100_000),
    )
    .unwrap();
    let tools = toolsmith_rig::dynamic_tools(&registry(dir.path()));
    let tool = |name: &str| {
        tools
            .iter()
            .find(|tool| tool.name().as_str() == name)
            .unwrap()
    };
    let output = tool("run_command")
        .run(json!({ "command": "cat big.log" }))
        .await
        .unwrap();
    let text = output.as_text().unwrap();
    assert!(text.chars().count() <= BATCH_BUDGET, "{}", text.len());
    let Some(toolsmith::trim::MarkedFull::Stored { id, .. }) =
        toolsmith::trim::find_marker(text).map(|marker| marker.full)
    else {
        panic!("the cut names its artifact: {text:.300}")
    };
    // read_artifact is a rig tool too, and pages the full output.
    let page = tool("read_artifact")
        .run(json!({ "id": id, "offset": 50_000, "limit": 2 }))
        .await
        .unwrap();
    let page = page.as_text().unwrap();
    assert!(page.contains("lines 50,001-50,002"), "{page}");
    // A failure is rig's error, with the text the model reads.
    let failed = tool("read_file")
        .run(json!({ "path": "missing.txt" }))
        .await
        .unwrap_err();
    let shown = failed
        .model_output()
        .as_text()
        .unwrap_or_default()
        .to_owned();
    assert!(
        shown.starts_with("Error") && shown.contains("missing.txt"),
        "{shown}"
    );
}

/// Four calls in one message: a read, a tool that does not exist, an argument of the wrong
/// type, a listing. The registry answers each in call order with the model's ids, the unknown
/// tool with an error result, and the run goes on; rig's own policy, asked for, ends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tool_gets_the_registrys_answer_and_the_run_goes_on() {
    use toolsmith::testing::{Reply, tool_messages};
    let script = |_: &serde_json::Value, turn: usize| match turn {
        0 => Reply::tool_calls([
            ("call_read", "read_file", json!({ "path": "notes.txt" })),
            ("call_missing", "no_such_tool", json!({ "x": 1 })),
            ("call_typed", "read_file", json!({ "path": 42 })),
            ("call_list", "list_directory", json!({ "path": "." })),
        ]),
        _ => Reply::text("done"),
    };
    let dir = tempfile::tempdir().unwrap();
    let scripted = ScriptedModel::start(script).await.unwrap();
    let model = |scripted: &ScriptedModel| {
        OpenAIConfig::new("scripted")
            .with_base_url(scripted.base_url())
            .client()
            .chat("gpt-4o-mini")
    };
    let driver = Driver::new(registry(dir.path()));
    let response = driver
        .run(
            model(&scripted),
            AgentRun::new("Read the notes.").max_turns(4),
        )
        .await
        .expect("the run goes on past an unknown tool");
    assert_eq!(response.output(), "done");
    let requests = scripted.requests();
    let answered = tool_messages(&requests[1]);
    let ids: Vec<&str> = answered.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        ["call_read", "call_missing", "call_typed", "call_list"]
    );
    assert!(answered[0].1.contains(NOTES), "{}", answered[0].1);
    assert!(
        answered[1].1.contains("unknown tool") && answered[1].1.contains("no_such_tool"),
        "{}",
        answered[1].1
    );
    assert!(answered[2].1.contains("path"), "{}", answered[2].1);
    assert!(answered[3].1.contains("notes.txt"), "{}", answered[3].1);

    // rig's own policy, when a user asks for it: the run ends at the unknown tool.
    let strict =
        Driver::new(registry(dir.path())).with_unknown_tools(toolsmith_rig::UnknownTools::Rig);
    let again = ScriptedModel::start(script).await.unwrap();
    let ended = strict
        .run(model(&again), AgentRun::new("Read the notes.").max_turns(4))
        .await;
    let error = ended.expect_err("rig's default policy ends the run");
    assert!(error.to_string().contains("no_such_tool"), "{error}");
}
