//! Keep what matters, on real outputs of real tools (`tests/corpus`, made by its `generate.sh`):
//! every line a developer must see survives a cut of 4,000 and 10,000 chars, through the
//! registry's cut of a text, of a stream, and of run_command; no escape sequence or redraw
//! reaches the model; and the artifact keeps the raw bytes.

use serde_json::json;
use toolsmith::artifacts::MemoryStore;
use toolsmith::tool::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};
use toolsmith::{BudgetPolicy, Registry, ToolCall, ToolResult, async_trait};

use crate::corpus;

/// Every output of the corpus: its name, its text, and its must-see lines.
fn outputs() -> Vec<(String, String, Vec<String>)> {
    let outputs = corpus::read(&corpus::dir()).unwrap();
    // The corpus is as wide as the field: at least 60 outputs (62 of 56 tools when written).
    assert!(
        outputs.len() >= 60,
        "the corpus holds {} outputs",
        outputs.len()
    );
    outputs
        .into_iter()
        .map(|output| (output.name, output.text, output.must))
        .collect()
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ShowArgs {
    /// The corpus file's name.
    name: String,
}

/// Returns a corpus output as a text, or (`stream`) as 4 KiB chunks.
struct Show {
    stream: bool,
}

#[async_trait]
impl Tool for Show {
    type Args = ShowArgs;

    fn name(&self) -> std::borrow::Cow<'static, str> {
        if self.stream { "stream" } else { "text" }.into()
    }

    fn description(&self) -> std::borrow::Cow<'static, str> {
        "Shows a corpus output.".into()
    }

    fn annotations(&self) -> toolsmith::tool::ToolAnnotations {
        toolsmith::tool::ToolAnnotations::new().with_read_only(true)
    }

    async fn call(&self, args: ShowArgs, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let text = std::fs::read_to_string(corpus::dir().join(format!("{}.out", args.name)))?;
        if !self.stream {
            return Ok(ToolOutput::text(text));
        }
        let chunks: Vec<Result<Vec<u8>, ToolError>> = text
            .as_bytes()
            .chunks(4_096)
            .map(|chunk| Ok(chunk.to_vec()))
            .collect();
        Ok(ToolOutput::stream(futures_util::stream::iter(chunks)))
    }
}

fn registry(store: &MemoryStore, budget: usize) -> Registry {
    Registry::builder()
        .tool(Show { stream: false })
        .tool(Show { stream: true })
        .artifacts(store.clone())
        .budget(BudgetPolicy::default().with_batch_budget_chars(budget))
        .build()
        .unwrap()
}

async fn show(registry: &Registry, tool: &str, name: &str) -> ToolResult {
    registry
        .turn()
        .execute([ToolCall::new("c", tool, json!({ "name": name }))])
        .await
        .remove(0)
}

/// The must-see lines the result does not show.
fn missing(result: &ToolResult, must: &[String]) -> Vec<String> {
    must.iter()
        .filter(|line| !result.content.lines().any(|shown| shown == line.as_str()))
        .cloned()
        .collect()
}

#[tokio::test]
async fn every_must_see_line_survives_the_registry_s_cut_of_a_text_and_of_a_stream() {
    for budget in [4_000, 10_000] {
        let store = MemoryStore::new();
        let registry = registry(&store, budget);
        for (name, text, must) in outputs() {
            for tool in ["text", "stream"] {
                let result = show(&registry, tool, &name).await;
                assert!(result.content_chars() <= budget, "{name} via {tool}");
                assert_eq!(result.meta.original_chars, text.chars().count());
                let missing = missing(&result, &must);
                assert!(
                    missing.is_empty(),
                    "{name} via {tool} at {budget}: missing {missing:?}\n{}",
                    result.content
                );
                // Nothing of a terminal's control reaches the model in a cut (a text that fits
                // is the tool's as it wrote it: `Render::OnCut`, the default).
                if result.meta.cut.is_some() {
                    assert!(
                        !result.content.contains('\x1b'),
                        "{name} via {tool}: an escape"
                    );
                    assert!(
                        !result.content.replace("\r\n", "\n").contains('\r'),
                        "{name} via {tool}: a carriage return"
                    );
                }
                // The artifact keeps the raw bytes, escapes and redraws and all.
                if let Some(id) = &result.meta.artifact {
                    assert_eq!(store.get(id).unwrap(), text, "{name} via {tool}");
                }
                // The marker states the figures the result carries (a short output is whole).
                let Some(cut) = result.meta.cut.as_ref() else {
                    assert_eq!(result.content, text, "{name} via {tool}: whole, not cut");
                    continue;
                };
                let marker = toolsmith::trim::find_marker(&result.content).expect("a marker");
                if marker.unit != "chars" {
                    // A JSON document cut as JSON: its marker counts items or keys, and the
                    // result is still JSON.
                    assert!(
                        serde_json::from_str::<serde_json::Value>(&result.content).is_ok(),
                        "{name} via {tool}: JSON cut to JSON"
                    );
                    continue;
                }
                assert_eq!(marker.kept, cut.kept_chars, "{name} via {tool}");
                assert_eq!(marker.spans, cut.spans, "{name} via {tool}");
                assert_eq!(marker.folded_lines, cut.folded_lines, "{name} via {tool}");
                assert_eq!(marker.escapes_removed, cut.escapes_removed);
            }
        }
    }
}

#[tokio::test]
async fn at_a_small_allowance_every_distinct_error_comes_before_routine_tail_lines() {
    // 1,000 chars: an error record and the traceback after it (its exception at its last line),
    // a Node crash whose TypeError precedes a long stack. The tail of routine lines shrinks
    // first; each error is shown by its lines, the traceback at least by its first and last.
    let store = MemoryStore::new();
    let registry = registry(&store, 1_000);
    for name in ["python-log", "node-uncaught"] {
        let must = corpus::read(&corpus::dir())
            .unwrap()
            .into_iter()
            .find(|output| output.name == name)
            .unwrap()
            .must;
        for tool in ["text", "stream"] {
            let result = show(&registry, tool, name).await;
            assert!(result.content_chars() <= 1_000, "{name} via {tool}");
            let missing = missing(&result, &must);
            assert!(
                missing.is_empty(),
                "{name} via {tool} misses {missing:?}:\n{}",
                result.content
            );
        }
    }
}

#[tokio::test]
async fn a_coloured_build_s_escapes_are_removed_and_counted() {
    let store = MemoryStore::new();
    let registry = registry(&store, 4_000);
    let result = show(&registry, "text", "cargo-build-colour").await;
    let cut = result.meta.cut.as_ref().unwrap();
    assert!(cut.escapes_removed > 0);
    assert!(
        result
            .content
            .contains(&format!("{} escape sequences and", cut.escapes_removed)),
        "{}",
        result.content
    );
    assert!(result.content.contains("error[E0308]: mismatched types\n"));
}

#[tokio::test]
async fn a_redrawn_progress_line_shows_once_as_its_last_state() {
    let store = MemoryStore::new();
    let registry = registry(&store, 4_000);
    let result = show(&registry, "stream", "git-clone").await;
    let receiving: Vec<&str> = result
        .content
        .lines()
        .filter(|line| line.contains("Receiving objects"))
        .collect();
    assert_eq!(receiving.len(), 1, "{}", result.content);
    assert!(receiving[0].ends_with(", done."), "{}", receiving[0]);
}

/// A registry of the standard tools over a temporary workspace.
fn standard(budget: usize) -> (tempfile::TempDir, MemoryStore, Registry) {
    let dir = tempfile::tempdir().unwrap();
    let store = MemoryStore::new();
    let registry = toolsmith_std::register(Registry::builder())
        .state(toolsmith_std::Sandbox::new(dir.path()).unwrap())
        .artifacts(store.clone())
        .budget(BudgetPolicy::default().with_batch_budget_chars(budget))
        .build()
        .unwrap();
    (dir, store, registry)
}

#[tokio::test]
async fn every_must_see_line_survives_run_command_as_it_survives_the_registry_s_cut() {
    for budget in [4_000, 10_000] {
        let (dir, store, registry) = standard(budget);
        let shown_registry = self::registry(&MemoryStore::new(), budget);
        for (name, text, must) in outputs() {
            std::fs::write(dir.path().join("out.txt"), &text).unwrap();
            let result = registry
                .turn()
                .execute([ToolCall::new(
                    "c",
                    "run_command",
                    json!({ "command": "cat out.txt" }),
                )])
                .await
                .remove(0);
            let missing = missing(&result, &must);
            assert!(
                missing.is_empty(),
                "{name} at {budget}: missing {missing:?}\n{}",
                result.content
            );
            // One owner, one result: the registry's cut of the same output as a text keeps the
            // same must-see lines.
            let as_text = show(&shown_registry, "text", &name).await;
            assert_eq!(
                missing,
                self::missing(&as_text, &must),
                "{name} at {budget}: run_command and the registry keep different lines"
            );
            assert!(!result.content.contains('\x1b'), "{name}: an escape");
            assert!(result.content.ends_with("[exit code: 0]\n"), "{name}");
            // An output that fits is shown whole; one that does not is kept as an artifact.
            match result.meta.artifact.as_ref() {
                Some(id) => assert!(
                    store.get(id).unwrap().contains(&text),
                    "{name}: the artifact holds the raw output"
                ),
                None => assert!(result.content.contains(&text), "{name}: whole"),
            }
        }
    }
}

#[tokio::test]
async fn the_failure_among_six_thousand_passing_tests_is_seen() {
    // The one line: a failing test between two runs of 3,000 passing ones.
    let (_dir, _store, registry) = standard(3_000);
    let command = "for i in $(seq 3000); do echo test a::t$i ... ok; done; echo test a::broken \
                   ... FAILED; for i in $(seq 3000); do echo test b::t$i ... ok; done; echo test \
                   result: FAILED";
    let result = registry
        .turn()
        .execute([ToolCall::new(
            "c",
            "run_command",
            json!({ "command": command }),
        )])
        .await
        .remove(0);
    assert!(result.content_chars() <= 3_000);
    assert!(
        result.content.contains("\ntest a::broken ... FAILED\n"),
        "{}",
        result.content
    );
    assert!(result.content.contains("\ntest result: FAILED\n"));
    let passing = result.content.matches(" ... ok\n").count();
    assert!(
        passing <= 8,
        "{passing} passing lines shown:\n{}",
        result.content
    );
}

#[tokio::test]
async fn a_command_s_colours_are_removed_even_when_it_fits() {
    let (_dir, store, registry) = standard(4_000);
    let result = registry
        .turn()
        .execute([ToolCall::new(
            "c",
            "run_command",
            json!({ "command": "printf '\\033[1;31merror\\033[0m: it broke\\n'" }),
        )])
        .await
        .remove(0);
    assert!(
        result.content.contains("\nerror: it broke\n"),
        "{}",
        result.content
    );
    assert!(!result.content.contains('\x1b'));
    // The change is stated, and the raw bytes are kept.
    assert!(
        result.content.starts_with("[toolsmith: output condensed"),
        "{}",
        result.content
    );
    let raw = store.get(result.meta.artifact.as_ref().unwrap()).unwrap();
    assert!(raw.contains("\x1b[1;31merror\x1b[0m"));
}

#[tokio::test]
async fn a_tool_that_turns_salience_off_is_cut_by_position() {
    struct Plain;
    #[async_trait]
    impl toolsmith::tool::DynTool for Plain {
        fn spec(&self) -> &ToolSpec {
            static SPEC: std::sync::OnceLock<ToolSpec> = std::sync::OnceLock::new();
            SPEC.get_or_init(|| {
                ToolSpec::new("plain", "Plain.", json!({ "type": "object" })).with_limits(
                    toolsmith::tool::ToolLimits::default().with_trim(
                        toolsmith::trim::TrimStyle::default()
                            .with_salience(toolsmith::trim::Salience::Off)
                            .with_folding(false),
                    ),
                )
            })
        }
        async fn call(
            &self,
            _: toolsmith::tool::CallArgs,
            _: &ToolContext,
        ) -> Result<ToolOutput, ToolError> {
            let mut text: String = (0..500).map(|i| format!("row {i}\n")).collect();
            text.insert_str(2_000, "error: in the middle\n");
            Ok(ToolOutput::text(text))
        }
    }
    let registry = Registry::builder()
        .dyn_tool(std::sync::Arc::new(Plain))
        .budget(BudgetPolicy::default().with_batch_budget_chars(600))
        .build()
        .unwrap();
    let result = registry
        .turn()
        .execute([ToolCall::new("c", "plain", json!({}))])
        .await
        .remove(0);
    assert!(!result.content.contains("error: in the middle"));
    assert!(!result.content.contains("more lines like this"));
    assert!(result.content.starts_with("row 0\nrow 1\n"));
}
