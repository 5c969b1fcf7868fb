//! The tool search on real tools: the `tools/list` output of twelve public MCP servers and 121
//! requests written before the search, each naming the tool it needs (`tests/data/tool-catalog`).

use serde_json::Value;
use toolsmith::search::{ToolIndex, ToolText};

struct Catalog {
    /// `(server, tool definition)`.
    tools: Vec<(String, Value)>,
    /// `(request, server, tool name)`.
    tasks: Vec<(String, String, String)>,
}

fn catalog() -> Catalog {
    let servers: Value =
        serde_json::from_str(include_str!("../data/tool-catalog/servers.json")).unwrap();
    let tools = servers["servers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|server| {
            let name = server["server"].as_str().unwrap().to_owned();
            server["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |tool| (name.clone(), tool.clone()))
        })
        .collect();
    let tasks: Value =
        serde_json::from_str(include_str!("../data/tool-catalog/tasks.json")).unwrap();
    let tasks = tasks
        .as_array()
        .unwrap()
        .iter()
        .map(|task| {
            let field = |key: &str| task[key].as_str().unwrap().to_owned();
            (field("task"), field("server"), field("tool"))
        })
        .collect();
    Catalog { tools, tasks }
}

fn index(catalog: &Catalog) -> ToolIndex {
    ToolIndex::new(catalog.tools.iter().map(|(server, tool)| {
        ToolText::new(
            tool["name"].as_str().unwrap(),
            tool["description"].as_str().unwrap_or_default(),
            &tool["inputSchema"],
        )
        .with_server(server)
    }))
}

#[test]
fn nine_requests_in_ten_find_their_tool_in_the_top_five() {
    let catalog = catalog();
    assert_eq!(catalog.tools.len(), 161);
    let index = index(&catalog);
    let mut found = 0;
    let mut misses = Vec::new();
    for (task, server, tool) in &catalog.tasks {
        let hits = index.search(task, 5);
        let names: Vec<String> = hits
            .iter()
            .map(|hit| {
                let (server, tool) = &catalog.tools[hit.tool];
                format!("{server}/{}", tool["name"].as_str().unwrap())
            })
            .collect();
        if names.contains(&format!("{server}/{tool}")) {
            found += 1;
        } else {
            misses.push(format!("{task:?} wants {server}/{tool}, got {names:?}"));
        }
    }
    let share = found as f64 / catalog.tasks.len() as f64;
    println!(
        "top 5: {found} of {} ({:.1}%)\n{}",
        catalog.tasks.len(),
        share * 100.0,
        misses.join("\n")
    );
    assert!(
        share >= 0.90,
        "{found} of {}:\n{}",
        catalog.tasks.len(),
        misses.join("\n")
    );
}

/// A catalog tool in a registry: its definition as its server listed it; a call says so.
struct Listed(toolsmith::tool::ToolSpec);

#[async_trait::async_trait]
impl toolsmith::tool::DynTool for Listed {
    fn spec(&self) -> &toolsmith::tool::ToolSpec {
        &self.0
    }
    async fn call(
        &self,
        _: toolsmith::tool::CallArgs,
        _: &toolsmith::ToolContext,
    ) -> Result<toolsmith::ToolOutput, toolsmith::ToolError> {
        Ok(format!("called {}", self.0.name).into())
    }
}

/// The catalog as a registry of a client of all twelve servers would hold it: every tool
/// named `<server>__<tool>`, as `McpClient::prefixed` names them.
fn registry(
    catalog: &Catalog,
    builder: toolsmith::registry::RegistryBuilder,
) -> toolsmith::Registry {
    let tools = catalog.tools.iter().map(|(server, tool)| {
        let name = format!("{server}__{}", tool["name"].as_str().unwrap());
        let spec = toolsmith::tool::ToolSpec::new(
            name,
            tool["description"].as_str().unwrap_or_default(),
            tool["inputSchema"].clone(),
        )
        .with_origin(format!("the MCP server `{server}`"));
        std::sync::Arc::new(Listed(spec)) as std::sync::Arc<dyn toolsmith::tool::DynTool>
    });
    builder.tools(tools).build().unwrap()
}

fn chars(definitions: &[Value]) -> usize {
    definitions
        .iter()
        .map(|d| d.to_string().chars().count())
        .sum()
}

#[tokio::test]
async fn a_registry_over_its_token_limit_offers_the_search_and_loads_what_it_finds() {
    use toolsmith::registry::{Loaded, SEARCH_TOOLS};
    use toolsmith::schema::Dialect;
    let catalog = catalog();
    let all = registry(&catalog, toolsmith::Registry::builder());
    let before = chars(&all.schemas(Dialect::Anthropic).unwrap());
    let deferring = registry(
        &catalog,
        toolsmith::Registry::builder()
            .defer_over_tokens(10_000)
            .keep_loaded(["filesystem__read_text_file"]),
    );
    let offered = deferring.schemas(Dialect::Anthropic).unwrap();
    let names: Vec<&str> = offered
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["filesystem__read_text_file", SEARCH_TOOLS]);
    let after = chars(&offered);
    println!("definitions offered: {before} chars for 161 tools, {after} with the search");
    assert!(after * 50 < before, "{after} of {before}");

    // A search returns definitions, best first, and loads them: appended, in order, once.
    let mut loaded = Loaded::new();
    for query in [
        "merge a pull request",
        "take a screenshot of the page",
        "merge a pull request",
    ] {
        let call = toolsmith::ToolCall::new(
            "s",
            SEARCH_TOOLS,
            serde_json::json!({ "query": query, "limit": 3 }),
        );
        let results = deferring.turn().execute([call]).await;
        assert!(!results[0].is_error(), "{}", results[0].content);
        loaded.absorb(&results);
    }
    assert_eq!(
        loaded.names()[0],
        "github__merge_pull_request",
        "{:?}",
        loaded.names()
    );
    assert_eq!(loaded.names().len(), 6, "{:?}", loaded.names());
    let offered = deferring.schemas_with(Dialect::Anthropic, &loaded).unwrap();
    let names: Vec<&str> = offered
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        &names[..3],
        [
            "filesystem__read_text_file",
            SEARCH_TOOLS,
            "github__merge_pull_request"
        ]
    );
    assert_eq!(names.len(), 8);

    // Found or not, a deferred tool answers a call by its name.
    let call = toolsmith::ToolCall::new(
        "c",
        "github__merge_pull_request",
        serde_json::json!({ "owner": "o", "repo": "r", "pull_number": 1 }),
    );
    let result = deferring.turn().execute([call]).await.remove(0);
    assert_eq!(result.content, "called github__merge_pull_request");

    // Nothing found says what to try.
    let call = toolsmith::ToolCall::new("s", SEARCH_TOOLS, serde_json::json!({ "query": "zzqx" }));
    let result = deferring.turn().execute([call]).await.remove(0);
    assert!(
        result
            .content
            .starts_with("No tool matches `zzqx`. Try broader words"),
        "{}",
        result.content
    );
}

#[test]
fn the_search_tool_is_reserved_and_deferral_names_real_tools() {
    let error = toolsmith::Registry::builder()
        .defer(["no_such_tool"])
        .build()
        .unwrap_err()
        .to_string();
    assert!(error.contains("`no_such_tool`"), "{error}");
    let spec = toolsmith::tool::ToolSpec::new(
        "search_tools",
        "Mine.",
        serde_json::json!({ "type": "object" }),
    );
    let error = toolsmith::Registry::builder()
        .dyn_tool(std::sync::Arc::new(Listed(spec)))
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("`search_tools` is the registry's own tool"),
        "{error}"
    );
}

#[test]
fn anthropics_own_search_gets_deferred_tools_marked_and_its_history_stays_as_it_was() {
    use toolsmith::history::{self, Message};
    use toolsmith::registry::{ANTHROPIC_SEARCH_TOOL_NAME, ANTHROPIC_SEARCH_TOOL_TYPE};
    let catalog = catalog();
    let registry = registry(
        &catalog,
        toolsmith::Registry::builder()
            .defer_over_tokens(10_000)
            .keep_loaded(["filesystem__read_text_file"]),
    );
    let definitions = registry.anthropic_native_search().unwrap();
    assert_eq!(definitions[0]["type"], ANTHROPIC_SEARCH_TOOL_TYPE);
    assert_eq!(definitions[0]["name"], ANTHROPIC_SEARCH_TOOL_NAME);
    assert_eq!(definitions.len(), 1 + 161);
    let loaded: Vec<&Value> = definitions
        .iter()
        .filter(|d| d.get("defer_loading").is_none())
        .collect();
    assert_eq!(loaded.len(), 2, "the search tool and the one kept loaded");
    assert!(definitions.iter().all(|d| d["name"] != "search_tools"));

    // A turn of Anthropic's search, as its documentation shows it: the server's blocks and the
    // tool references pass validation and repair untouched.
    let turn: Vec<Message> = serde_json::from_value(serde_json::json!([
        { "role": "user", "content": "What is the weather in Paris?" },
        { "role": "assistant", "content": [
            { "type": "server_tool_use", "id": "srvtoolu_01", "name": "tool_search_tool_bm25",
              "input": { "query": "weather" } },
            { "type": "tool_search_tool_result", "tool_use_id": "srvtoolu_01",
              "content": { "type": "tool_search_tool_search_result",
                           "tool_references": [{ "type": "tool_reference", "tool_name": "get_weather" }] } },
            { "type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": { "location": "Paris" } },
        ] },
        { "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": "toolu_01", "content": "18°C, sunny" },
        ] },
    ]))
    .unwrap();
    assert!(
        history::validate(&turn).is_empty(),
        "{:?}",
        history::validate(&turn)
    );
    let mut repaired = turn.clone();
    let report = history::repair(&mut repaired);
    assert_eq!(repaired, turn, "{report}");
    assert_eq!(
        serde_json::to_value(&repaired).unwrap(),
        serde_json::to_value(&turn).unwrap()
    );
}
