//! The macros end to end: generated specs and schemas, docs as descriptions, derived and fn
//! tools through the registry with budget and pagination.

use serde::Deserialize;
use serde_json::json;
use toolsmith::{Registry, Tool, ToolCall, ToolContext, ToolError, tool};

/// Counts words in a text.
///
/// Spaces separate words.
#[derive(Deserialize, schemars::JsonSchema, Tool)]
#[tool(max_result_chars = 1_000, timeout = "5s")]
struct CountWords {
    /// The text to count.
    #[serde(default)]
    text: String,
}

impl CountWords {
    async fn run(self, _cx: &ToolContext) -> Result<String, ToolError> {
        Ok(self.text.split_whitespace().count().to_string())
    }
}

/// Repeats a word.
#[tool(name = "repeat_word", paginate, preserve)]
async fn repeat(
    /// The word.
    word: String,
    /// How many times; defaults to 3.
    times: Option<usize>,
    cx: &ToolContext,
) -> Result<String, ToolError> {
    let page = cx.page().unwrap_or_default();
    let lines: Vec<String> = (0..times.unwrap_or(3))
        .map(|i| format!("{i}: {word}"))
        .collect();
    let end = page
        .limit
        .map_or(lines.len(), |limit| (page.offset + limit).min(lines.len()));
    Ok(lines[page.offset.min(end)..end].join("\n"))
}

#[tokio::test]
async fn both_forms_run_through_the_registry() {
    let registry = Registry::builder()
        .tool(CountWords::tool())
        .tool(repeat())
        .build()
        .unwrap();
    let results = registry
        .turn()
        .execute([
            ToolCall::new("a", "count_words", json!({ "text": "one two three" })),
            ToolCall::new(
                "b",
                "repeat_word",
                json!({ "word": "hi", "times": 5, "offset": 1, "limit": 2 }),
            ),
        ])
        .await;
    assert_eq!(results[0].content, "3");
    assert_eq!(results[1].content, "1: hi\n2: hi");
}

#[test]
fn specs_carry_names_descriptions_and_limits() {
    let registry = Registry::builder()
        .tool(CountWords::tool())
        .tool(repeat())
        .build()
        .unwrap();
    let count = registry.get("count_words").unwrap().spec();
    assert_eq!(
        count.description,
        "Counts words in a text.\n\nSpaces separate words."
    );
    assert_eq!(count.limits.max_result_chars, Some(1_000));
    assert_eq!(
        count.limits.timeout,
        Some(std::time::Duration::from_secs(5))
    );
    let repeat = registry.get("repeat_word").unwrap().spec();
    assert_eq!(repeat.description, "Repeats a word.");
    assert!(repeat.limits.paginate && repeat.limits.preserve);
    println!(
        "{}",
        serde_json::to_string_pretty(&repeat.input_schema).unwrap()
    );
    println!(
        "{}",
        serde_json::to_string_pretty(&count.input_schema).unwrap()
    );
}

#[allow(dead_code)]
fn _tool_trait_is_in_scope(_: &dyn Fn() -> Box<dyn Tool<Args = CountWords>>) {}
