//! The macros end to end: generated specs and schemas, doc comments as descriptions, derived
//! and fn tools through the registry with budget and pagination, and read_file's pre-validation
//! against a macro-written read tool.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolsmith::tool::SizeHint;
use toolsmith::{BudgetPolicy, Registry, Tool, ToolCall, ToolContext, ToolError, ToolResult, tool};

/// Counts words in a text.
#[derive(Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
///
/// Spaces separate words.
#[tool(
    max_result_chars = 1_000,
    max_result_lines = 20,
    timeout = "5s",
    head_ratio = 0.5,
    read_only
)]
struct CountWords {
    /// The text to count.
    #[serde(default)]
    /// Empty by default.
    text: String,
}

impl CountWords {
    async fn run(self, _cx: &ToolContext) -> Result<String, ToolError> {
        Ok(self.text.split_whitespace().count().to_string())
    }
}

/// Repeats a word, one numbered line per repetition.
#[tool(
    name = "repeat_word",
    paginate,
    preserve,
    destructive,
    idempotent,
    open_world
)]
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

#[doc = include_str!("../fixtures/tool_doc.md")]
#[derive(Deserialize, JsonSchema, Tool)]
struct DocFromFile {}

impl DocFromFile {
    async fn run(self, _cx: &ToolContext) -> Result<&'static str, ToolError> {
        Ok("done")
    }
}

/// Has an explicit description, which wins over this doc comment.
#[derive(Deserialize, JsonSchema, Tool)]
#[tool(description = "Explicit.", name = "explicit-name")]
struct Explicit {}

impl Explicit {
    async fn run(self, _cx: &ToolContext) -> Result<String, ToolError> {
        Err(ToolError::failed("it always fails"))
    }
}

/// Through a renamed path to the core crate.
#[tool(crate = "crate::test_macros::renamed")]
async fn via_renamed() -> Result<String, ToolError> {
    Ok("renamed works".into())
}

mod renamed {
    pub(crate) use toolsmith::*;
}

fn registry() -> Registry {
    Registry::builder()
        .tool(CountWords::tool())
        .tool(repeat())
        .tool(DocFromFile::tool())
        .tool(Explicit::tool())
        .tool(via_renamed())
        .build()
        .unwrap()
}

#[test]
fn the_derived_schema_is_exactly_this() {
    let registry = registry();
    assert_eq!(
        registry.get("count_words").unwrap().spec().input_schema,
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "CountWords",
            "description": "Counts words in a text.\n\nSpaces separate words.",
            "type": "object",
            "properties": {
                "text": {
                    "description": "The text to count.\nEmpty by default.",
                    "type": "string",
                    "default": ""
                }
            },
            "additionalProperties": false
        })
    );
}

#[test]
fn the_fn_schema_has_the_parameters_and_the_page() {
    let registry = registry();
    let schema = &registry.get("repeat_word").unwrap().spec().input_schema;
    assert_eq!(
        schema["properties"]["word"],
        json!({ "description": "The word.", "type": "string" })
    );
    assert_eq!(
        schema["properties"]["times"]["description"],
        "How many times; defaults to 3."
    );
    assert_eq!(schema["required"], json!(["word"]), "Option<T> is optional");
    assert_eq!(schema["properties"]["offset"]["type"], "integer");
    assert_eq!(schema["properties"]["limit"]["minimum"], 1);
    assert_eq!(schema["type"], "object");
    let context_leaked = schema["properties"].get("cx").is_some();
    assert!(!context_leaked, "the context is not an argument");
}

#[test]
fn specs_carry_names_descriptions_and_limits() {
    let registry = registry();
    let count = registry.get("count_words").unwrap().spec();
    assert_eq!(
        count.description,
        "Counts words in a text.\n\nSpaces separate words."
    );
    assert_eq!(count.limits.max_result_chars, Some(1_000));
    assert_eq!(count.limits.trim.max_lines(), Some(20));
    assert_eq!(count.limits.trim.head_ratio(), 0.5);
    assert_eq!(
        count.limits.timeout,
        Some(std::time::Duration::from_secs(5))
    );
    assert!(!count.limits.paginate && !count.limits.preserve);
    assert_eq!(
        count.annotations,
        toolsmith::tool::ToolAnnotations::new().with_read_only(true)
    );

    let repeat = registry.get("repeat_word").unwrap().spec();
    assert_eq!(
        repeat.description,
        "Repeats a word, one numbered line per repetition."
    );
    assert!(repeat.limits.paginate && repeat.limits.preserve);
    assert_eq!(
        repeat.annotations,
        toolsmith::tool::ToolAnnotations::new()
            .with_destructive(true)
            .with_idempotent(true)
            .with_open_world(true)
    );
    assert!(!repeat.annotations.is_read_only());
    let from_file = registry.get("doc_from_file").unwrap().spec();
    assert!(
        from_file.annotations.is_empty(),
        "nothing stated, nothing set"
    );

    assert_eq!(
        from_file.description,
        "Loaded from a file.\nSecond line of it.\n"
    );
    let explicit = registry.get("explicit-name").unwrap().spec();
    assert_eq!(explicit.description, "Explicit.");
    assert!(registry.get("via_renamed").is_some());
}

async fn run(registry: &Registry, calls: Vec<ToolCall>) -> Vec<ToolResult> {
    registry.turn().execute(calls).await
}

#[tokio::test]
async fn both_forms_run_through_the_registry() {
    let registry = registry();
    let results = run(
        &registry,
        vec![
            ToolCall::new("a", "count_words", json!({ "text": "one two three" })),
            ToolCall::new(
                "b",
                "repeat_word",
                json!({ "word": "hi", "times": 5, "offset": 1, "limit": 2 }),
            ),
            ToolCall::new("c", "explicit-name", json!({})),
            ToolCall::new("d", "count_words", json!({ "txt": "typo" })),
            ToolCall::new("e", "via_renamed", json!({})),
            ToolCall::new("f", "repeat_word", json!({ "word": "x", "offset": -1 })),
        ],
    )
    .await;
    assert_eq!(results[0].content, "3");
    assert_eq!(results[1].content, "1: hi\n2: hi");
    assert!(results[2].is_error());
    assert_eq!(results[2].content, "Error: it always fails");
    assert!(
        results[3].content.contains("unknown field `txt`"),
        "{}",
        results[3].content
    );
    assert_eq!(results[4].content, "renamed works");
    assert!(
        results[5]
            .content
            .contains("offset: expected a non-negative integer"),
        "{}",
        results[5].content
    );
}

#[tokio::test]
async fn an_oversized_page_is_trimmed_with_the_next_offset() {
    let registry = Registry::builder()
        .tool(repeat())
        .budget(BudgetPolicy::default().with_batch_budget_chars(600))
        .build()
        .unwrap();
    let results = run(
        &registry,
        vec![ToolCall::new(
            "a",
            "repeat_word",
            json!({ "word": "abcdefgh", "times": 1_000, "offset": 0 }),
        )],
    )
    .await;
    let result = &results[0];
    assert!(result.meta.trimmed());
    assert!(result.content_chars() <= 600);
    let cut = result.meta.cut.as_ref().unwrap();
    let next = cut.next_offset.unwrap();
    assert!(
        result
            .content
            .contains(&format!("next page: offset={next};"))
    );
    // The line before the next offset is the last one kept whole.
    assert!(
        result
            .content
            .contains(&format!("{}: abcdefgh\n[toolsmith", next - 1))
    );
}

// A size-hint refusal, against a read tool written with the macro.

static READS: AtomicUsize = AtomicUsize::new(0);

/// Reads a text file, a page of lines at a time.
#[derive(Deserialize, JsonSchema, Tool)]
#[tool(paginate, size_hint = Self::estimate, head_ratio = 1.0)]
struct ReadText {
    /// Path of the file.
    path: PathBuf,
}

impl ReadText {
    async fn estimate(&self, _cx: &ToolContext) -> Result<Option<SizeHint>, ToolError> {
        let bytes = std::fs::metadata(&self.path)?.len();
        Ok(Some(
            SizeHint::new("File content", bytes).with_alternative("use grep to search it"),
        ))
    }

    async fn run(self, cx: &ToolContext) -> Result<String, ToolError> {
        READS.fetch_add(1, Ordering::SeqCst);
        let page = cx.page().unwrap_or_default();
        let text = std::fs::read_to_string(&self.path)?;
        Ok(text
            .lines()
            .skip(page.offset)
            .take(page.limit.unwrap_or(usize::MAX))
            .map(|line| format!("{line}\n"))
            .collect())
    }
}

fn read_registry() -> Registry {
    Registry::builder()
        .tool(ReadText::tool())
        .max_calls_per_tool(10)
        .build()
        .unwrap()
}

#[tokio::test]
async fn read_file_rejects_large_file() {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(&[b'x'; 200_000]).unwrap();
    let before = READS.load(Ordering::SeqCst);
    let results = run(
        &read_registry(),
        vec![ToolCall::new(
            "a",
            "read_text",
            json!({ "path": file.path() }),
        )],
    )
    .await;
    let text = &results[0].content;
    assert!(results[0].is_error());
    assert!(
        text.contains("Error:") && text.contains("exceeds maximum"),
        "{text}"
    );
    assert_eq!(
        text,
        "Error: File content (~50,000 tokens) exceeds maximum allowed tokens (20,000). Use offset \
         and limit to read part of it: offset=0 limit=1000 reads about the first 20,000 tokens; \
         or use grep to search it."
    );
    assert_eq!(
        READS.load(Ordering::SeqCst),
        before,
        "refused before any content was read"
    );
}

#[tokio::test]
async fn read_file_pagination_works() {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    for i in 0..1_000 {
        writeln!(file, "Line {i}").unwrap();
    }
    let results = run(
        &read_registry(),
        vec![ToolCall::new(
            "a",
            "read_text",
            json!({ "path": file.path(), "offset": 10, "limit": 5 }),
        )],
    )
    .await;
    let text = &results[0].content;
    assert!(text.contains("Line 10"));
    assert!(text.contains("Line 14"));
    assert!(!text.contains("Line 15"));
}

#[tokio::test]
async fn a_limit_reads_part_of_a_file_too_large_to_read_whole() {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    for i in 0..20_000 {
        writeln!(file, "Line {i} of a file much larger than the budget").unwrap();
    }
    let registry = read_registry();
    let whole = run(
        &registry,
        vec![ToolCall::new(
            "a",
            "read_text",
            json!({ "path": file.path() }),
        )],
    )
    .await;
    assert_eq!(
        whole[0].meta.error_kind,
        Some(toolsmith::tool::ErrorKind::TooLarge)
    );
    let part = run(
        &registry,
        vec![ToolCall::new(
            "b",
            "read_text",
            json!({ "path": file.path(), "offset": 19_998, "limit": 10 }),
        )],
    )
    .await;
    assert!(!part[0].is_error());
    assert_eq!(
        part[0].content,
        "Line 19998 of a file much larger than the budget\nLine 19999 of a file much larger than \
         the budget\n"
    );
}

/// Greets someone (no serde attributes: the macro's default refuses unknown fields).
#[derive(Deserialize, JsonSchema, Tool)]
struct Greet {
    /// Who to greet.
    name: Option<String>,
}

impl Greet {
    async fn run(self, _cx: &ToolContext) -> Result<String, ToolError> {
        Ok(format!(
            "hello, {}",
            self.name.as_deref().unwrap_or("world")
        ))
    }
}

/// Greets someone, ignoring fields it does not know.
#[tool(allow_unknown_fields)]
async fn greet_loosely(
    /// Who to greet.
    name: Option<String>,
) -> Result<String, ToolError> {
    Ok(format!("hello, {}", name.as_deref().unwrap_or("world")))
}

/// Greets someone, as a function.
#[tool]
async fn greet_strictly(
    /// Who to greet.
    name: Option<String>,
) -> Result<String, ToolError> {
    Ok(format!("hello, {}", name.as_deref().unwrap_or("world")))
}

#[tokio::test]
async fn both_forms_refuse_unknown_fields_unless_the_tool_allows_them() {
    let registry = Registry::builder()
        .tool(Greet::tool())
        .tool(greet_strictly())
        .tool(greet_loosely())
        .build()
        .unwrap();
    // A typo in an optional field's name: without the check, the default would silently run.
    let typo = json!({ "nmae": "Ada" });
    let results = run(
        &registry,
        vec![
            ToolCall::new("a", "greet", typo.clone()),
            ToolCall::new("b", "greet_strictly", typo.clone()),
            ToolCall::new("c", "greet_loosely", typo),
            ToolCall::new("d", "greet_strictly", json!({ "name": "Ada" })),
        ],
    )
    .await;
    for refused in &results[..2] {
        assert_eq!(
            refused.meta.error_kind,
            Some(toolsmith::tool::ErrorKind::InvalidArguments)
        );
        assert_eq!(
            refused.content,
            "Error: invalid arguments: unknown field `nmae`; the fields are name (string). \
             Call the tool again with arguments that match its input schema."
        );
    }
    assert_eq!(results[2].content, "hello, world", "allowed: ignored");
    assert_eq!(results[3].content, "hello, Ada");
    // The schema tells the model so: closed by default, open when allowed.
    let schema = |name: &str| registry.get(name).unwrap().spec().input_schema.clone();
    assert_eq!(schema("greet")["additionalProperties"], json!(false));
    assert_eq!(
        schema("greet_strictly")["additionalProperties"],
        json!(false)
    );
    assert_eq!(schema("greet_loosely").get("additionalProperties"), None);
}

/// Adds two numbers given as text.
#[tool]
async fn add_text(
    /// The first number.
    a: String,
    /// The second number.
    b: String,
) -> Result<String, ToolError> {
    // `?` on any error type: ParseIntError is not a toolsmith type.
    let sum = a.trim().parse::<i64>()? + b.trim().parse::<i64>()?;
    Ok(sum.to_string())
}

#[derive(serde::Serialize)]
struct Issue {
    number: u32,
    title: String,
}

/// Lists issues, as JSON.
#[tool]
async fn list_issues(
    /// How many.
    count: u32,
) -> Result<toolsmith::Json<Vec<Issue>>, ToolError> {
    Ok(toolsmith::Json(
        (1..=count)
            .map(|number| Issue {
                number,
                title: format!("issue number {number}"),
            })
            .collect(),
    ))
}

#[tokio::test]
async fn question_mark_takes_any_error_and_a_serialize_value_is_returned_as_json() {
    let registry = Registry::builder()
        .tool(add_text())
        .tool(list_issues())
        .budget(BudgetPolicy::default().with_batch_budget_chars(2_000))
        .build()
        .unwrap();
    let results = run(
        &registry,
        vec![
            ToolCall::new("a", "add_text", json!({ "a": "40", "b": " 2" })),
            ToolCall::new("b", "add_text", json!({ "a": "forty", "b": "2" })),
            ToolCall::new("c", "list_issues", json!({ "count": 2 })),
            ToolCall::new("d", "list_issues", json!({ "count": 500 })),
        ],
    )
    .await;
    assert_eq!(results[0].content, "42");
    assert_eq!(
        results[1].meta.error_kind,
        Some(toolsmith::tool::ErrorKind::Other)
    );
    assert_eq!(results[1].content, "Error: invalid digit found in string");
    assert_eq!(
        results[2].content,
        r#"[{"number":1,"title":"issue number 1"},{"number":2,"title":"issue number 2"}]"#
    );
    // Over its allowance, the JSON is cut to JSON that still parses.
    let cut = &results[3];
    assert!(cut.meta.trimmed(), "{}", cut.content);
    assert!(cut.content_chars() <= cut.meta.allowance);
    let (json, _marker) = cut
        .content
        .split_once("\n[toolsmith:")
        .unwrap_or((&cut.content, ""));
    let parsed: serde_json::Value = serde_json::from_str(json).expect(json);
    assert!(parsed.is_array() || parsed.is_object(), "{parsed}");
}

#[test]
fn a_file_error_names_the_path_and_converts_into_a_standard_error() {
    let missing = std::fs::read_to_string("no/such/dir/build.log")
        .map_err(|error| ToolError::io("no/such/dir/build.log", error))
        .unwrap_err();
    assert_eq!(missing.kind(), toolsmith::tool::ErrorKind::NotFound);
    assert_eq!(
        missing.model_text(),
        "Error: `no/such/dir/build.log` was not found."
    );
    // Without a path, `?` says what kind of thing failed, never the OS's "(os error 2)".
    let bare: ToolError = std::fs::read("no/such/dir/build.log").unwrap_err().into();
    assert_eq!(
        bare.model_text(),
        "Error: a file or directory the tool needed was not found."
    );
    // A boxed error converts too, by what it holds.
    let parse: Box<dyn std::error::Error + Send + Sync> = "7x".parse::<u8>().unwrap_err().into();
    let parse = ToolError::boxed(parse);
    assert_eq!(parse.kind(), toolsmith::tool::ErrorKind::Other);
    assert_eq!(parse.model_text(), "Error: invalid digit found in string");
    let io = ToolError::boxed(Box::new(std::io::Error::from(std::io::ErrorKind::NotFound)));
    assert_eq!(io.kind(), toolsmith::tool::ErrorKind::NotFound);
    // Code that wants a standard error gets one, with the cause kept.
    fn read() -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
        Err(ToolError::failed_with(
            "the index could not be read",
            std::io::Error::other("disk on fire"),
        ))?
    }
    let error = read().unwrap_err();
    assert_eq!(error.to_string(), "the index could not be read");
    assert_eq!(error.source().unwrap().to_string(), "disk on fire");
}

/// A shared counter, as an agent would put in the registry's state.
struct Counter(AtomicUsize);

/// Counts its calls, in the registry's counter.
#[tool(state = Counter)]
async fn tick(cx: &ToolContext) -> Result<String, ToolError> {
    let counter = cx.state::<Counter>()?;
    Ok((counter.0.fetch_add(1, Ordering::Relaxed) + 1).to_string())
}

/// Counts its calls too, as a struct.
#[derive(Deserialize, JsonSchema, Tool)]
#[tool(state = Counter)]
struct Tock {}

impl Tock {
    async fn run(self, cx: &ToolContext) -> Result<String, ToolError> {
        let counter = cx.state::<Counter>()?;
        Ok((counter.0.fetch_add(1, Ordering::Relaxed) + 1).to_string())
    }
}

#[tokio::test]
async fn a_tool_states_the_state_it_needs_and_build_checks_it() {
    for tool in [
        toolsmith::tool::into_dyn(tick()),
        toolsmith::tool::into_dyn(Tock::tool()),
    ] {
        let name = tool.spec().name.clone();
        let error = Registry::builder().dyn_tool(tool).build().unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "the tool `{name}` needs a `Counter`, and the registry has none: add it with \
                 `Registry::builder().state(…)` and a `Counter`"
            )
        );
    }
    let registry = Registry::builder()
        .tool(tick())
        .tool(Tock::tool())
        .state(Counter(AtomicUsize::new(0)))
        .build()
        .unwrap();
    let results = run(
        &registry,
        vec![
            ToolCall::new("a", "tick", json!({})),
            ToolCall::new("b", "tock", json!({})),
        ],
    )
    .await;
    let mut counts: Vec<&str> = results.iter().map(|r| r.content.as_str()).collect();
    counts.sort_unstable();
    assert_eq!(counts, ["1", "2"], "both read the one counter");
}

/// A summary of the open issues.
#[derive(serde::Serialize, JsonSchema)]
struct Summary {
    /// How many are open.
    open: u32,
    /// The oldest one's title.
    oldest: String,
}

/// Summarizes the open issues, as JSON of one shape.
#[tool]
async fn summarize_issues() -> Result<toolsmith::Json<Summary>, ToolError> {
    Ok(toolsmith::Json(Summary {
        open: 2,
        oldest: "budget split".into(),
    }))
}

/// Summarizes each label's issues, as a list.
#[tool]
async fn summaries_by_label() -> Result<toolsmith::Json<Vec<Summary>>, ToolError> {
    Ok(toolsmith::Json(Vec::new()))
}

#[test]
fn a_function_returning_json_of_an_object_states_its_output_schema() {
    use toolsmith::schema::Dialect;
    let registry = Registry::builder()
        .tool(summarize_issues())
        .tool(list_issues())
        .tool(summaries_by_label())
        .build()
        .unwrap();
    let spec = registry.get("summarize_issues").unwrap().spec().clone();
    let schema = spec
        .output_schema
        .as_ref()
        .expect("an object's schema is stated");
    assert_eq!(schema["type"], "object");
    assert_eq!(
        schema["properties"]["open"]["description"],
        "How many are open."
    );
    assert_eq!(Dialect::Mcp.render(&spec).unwrap()["outputSchema"], *schema);
    // A type without a schema (`Issue` is only `Serialize`) states none, and still compiles;
    // a list has one, but MCP's outputSchema describes an object: none is stated either.
    for name in ["list_issues", "summaries_by_label"] {
        let spec = registry.get(name).unwrap().spec().clone();
        assert_eq!(spec.output_schema, None, "{name}");
        assert!(
            Dialect::Mcp
                .render(&spec)
                .unwrap()
                .get("outputSchema")
                .is_none()
        );
    }
}
