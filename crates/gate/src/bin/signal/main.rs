//! The signal gate's figures: what the model sees of real outputs, on every path a result takes.
//!
//! Every output of the corpus (`tests/corpus/*.out`, with its must-see lines in `*.must`) goes
//! through each path — the registry's cut of a text result, of a stream, `run_command` (`cat` of
//! the output in a sandbox), the proxy's fitting of a text block, and the same held to a cap in
//! tokens instead (`proxy_tokens`, at caps of 1,000, 2,000 and 3,000 o200k tokens and no cap in
//! chars; its fill is in tokens of the cap) — at each budget. Per path and budget it prints one
//! line:
//!
//! ```text
//! <path> <budget> must=<kept>/<total> fill=<per mille> escapes=<n> json=<valid>/<total>
//! ```
//!
//! - `must`: the must-see lines shown whole, as lines of the result;
//! - `fill`: the share of the allowance spent on the output's own lines (a line of the result
//!   that is a line of the output), per mille, averaged over the outputs that were cut; an
//!   output's own chars over the smaller of the allowance and its size;
//! - `escapes`: ANSI escapes and carriage returns shown in a cut (the model reads neither; a
//!   carriage return that ends a line with its line feed, as HTTP headers do, is a line ending;
//!   an output that fits is passed as the tool wrote it, escapes and all, and not counted);
//! - `json`: the outputs that are one JSON document, and how many of them the result still is.
//!
//! The typed results (`tests/corpus/typed`: a structure, its output schema, the records a
//! developer must see) go through the registry (`typed`: a tool's `Json<T>`) and the proxy
//! (`proxy_typed`: the structure and its pretty JSON as text, sharing the cap), at each budget:
//! `must` counts the records kept whole, `fill` the chars sent over the allowance, `json` the
//! structures valid against their schema.
//!
//! With `--verbose`, every must-see line missed and every output's fill go to standard error.
//! `scripts/signal-gate.sh` holds the lines to the committed baseline. Run by hand:
//! `cargo run --profile gate -p toolsmith-gate --bin signal -- tests/corpus`.

#![forbid(unsafe_code)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolsmith::artifacts::MemoryStore;
use toolsmith::tokens::{O200k, TokenCap, TokenCounter};
use toolsmith::tool::{ToolAnnotations, ToolContext};
use toolsmith::{BudgetPolicy, Registry, Tool, ToolCall, ToolError, ToolOutput, async_trait};

/// The budgets the typed paths are measured at.
const BUDGETS: [usize; 3] = [2_000, 4_000, 10_000];
/// The budgets the text paths and the anchors are measured at: down to 1,000 chars, where a
/// text shares a small cap with the structure it repeats.
const TEXT_BUDGETS: [usize; 4] = [1_000, 2_000, 4_000, 10_000];
/// The caps in tokens the path through the proxy with a cap in tokens is measured at.
const TOKEN_BUDGETS: [usize; 3] = [1_000, 2_000, 3_000];
/// The paths, in the order they are printed.
const PATHS: [&str; 5] = ["registry", "stream", "run_command", "proxy", "proxy_tokens"];
/// The paths of the typed results (`tests/corpus/typed`): the registry's (a tool's `Json<T>`
/// with its output schema) and the proxy's (a structure and its JSON as text, sharing the cap).
const TYPED_PATHS: [&str; 2] = ["typed", "proxy_typed"];

mod anchors;

// The corpus's one reader, shared with the tests and the keep bench.
#[path = "../../../../../tests/common/corpus.rs"]
mod corpus;

/// One output of the corpus, and whether it is a JSON document.
struct Case {
    output: corpus::Output,
    json: bool,
}

fn cases(dir: &Path) -> Result<Vec<Case>, String> {
    Ok(corpus::read(dir)?
        .into_iter()
        .map(|output| Case {
            json: output.is_json(),
            output,
        })
        .collect())
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ShowArgs {
    /// The output's index in the corpus.
    index: usize,
}

/// Returns an output of the corpus as a text or, `stream`, in chunks of 4 KiB.
struct Show {
    outputs: std::sync::Arc<Vec<String>>,
    stream: bool,
}

#[async_trait]
impl Tool for Show {
    type Args = ShowArgs;

    fn name(&self) -> std::borrow::Cow<'static, str> {
        if self.stream { "stream" } else { "text" }.into()
    }

    fn description(&self) -> std::borrow::Cow<'static, str> {
        "Shows an output of the corpus.".into()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::new().with_read_only(true)
    }

    async fn call(&self, args: ShowArgs, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let text = self
            .outputs
            .get(args.index)
            .cloned()
            .ok_or_else(|| ToolError::invalid_arguments("no such output"))?;
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

/// The figures of one path at one budget.
#[derive(Default)]
struct Figures {
    must_kept: usize,
    must_total: usize,
    fill_sum: f64,
    cut: usize,
    escapes: usize,
    json_valid: usize,
    json_total: usize,
    /// The chars sent, over every output.
    sent: usize,
    /// What was missed, for the report.
    missed: Vec<String>,
    /// Whether each output's fill is reported as it is measured.
    per_case: bool,
    /// For a cap in tokens: what counts them (the fill is then in tokens of the cap).
    tokens: Option<std::sync::Arc<dyn TokenCounter>>,
}

impl Figures {
    fn add(&mut self, case: &Case, shown: &str, budget: usize, path: &str) {
        let output = &case.output;
        self.must_total += output.must.len();
        self.must_kept += corpus::shown(shown, &output.must);
        for line in &output.must {
            if !shown.lines().any(|l| l == line) {
                self.missed
                    .push(format!("{path} {budget} {}: {line}", output.name));
            }
        }
        // A whole output passed as it came is the tool's own words (a text that fits is not
        // rendered: `Render::OnCut`); what a path cut is what it chose to show.
        if shown != output.text {
            self.escapes += escapes_in(shown);
        }
        self.sent += shown.chars().count();
        if case.json {
            self.json_total += 1;
            if serde_json::from_str::<Value>(shown).is_ok() {
                self.json_valid += 1;
            }
        } else if self.size(&output.text) > budget {
            let own: HashSet<&str> = output.text.lines().collect();
            let own_size: usize = shown
                .lines()
                .filter(|line| !line.is_empty() && own.contains(line))
                .map(|line| self.size(line) + 1)
                .sum();
            let fill = own_size as f64 / budget as f64;
            self.fill_sum += fill;
            self.cut += 1;
            if self.per_case {
                eprintln!(
                    "  fill: {path} {budget} {}: {:.1}%",
                    output.name,
                    fill * 100.0
                );
            }
        }
    }

    /// A text's size in the budget's unit: chars, or tokens for a cap in tokens.
    fn size(&self, text: &str) -> usize {
        match &self.tokens {
            Some(counter) => counter.count(text),
            None => text.chars().count(),
        }
    }

    fn line(&self, path: &str, budget: usize) -> String {
        let fill = if self.cut == 0 {
            1000
        } else {
            (self.fill_sum / self.cut as f64 * 1000.0).round() as usize
        };
        format!(
            "{path} {budget} must={}/{} fill={fill} escapes={} json={}/{} sent={}",
            self.must_kept,
            self.must_total,
            self.escapes,
            self.json_valid,
            self.json_total,
            self.sent
        )
    }
}

fn registry(outputs: &std::sync::Arc<Vec<String>>, budget: usize) -> Result<Registry, String> {
    Registry::builder()
        .tool(Show {
            outputs: outputs.clone(),
            stream: false,
        })
        .tool(Show {
            outputs: outputs.clone(),
            stream: true,
        })
        .artifacts(MemoryStore::new())
        .budget(BudgetPolicy::default().with_batch_budget_chars(budget))
        .build()
        .map_err(|e| e.to_string())
}

fn standard(dir: &Path, budget: usize) -> Result<Registry, String> {
    let sandbox = toolsmith_std::Sandbox::new(dir).map_err(|e| e.to_string())?;
    toolsmith_std::register(Registry::builder())
        .state(sandbox)
        .artifacts(MemoryStore::new())
        .budget(BudgetPolicy::default().with_batch_budget_chars(budget))
        .build()
        .map_err(|e| e.to_string())
}

/// The text a client reads of the proxy's answer to a `tools/call` whose result is `text`, held
/// to `cap` chars and, if given, to a cap in tokens.
async fn through_proxy(text: &str, cap: usize, tokens: Option<TokenCap>) -> String {
    let answer = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "result": { "content": [{ "type": "text", "text": text }] },
    });
    let line =
        toolsmith::mcp::__relay_tool_answer(answer.to_string().into_bytes(), cap, tokens, None)
            .await;
    let answer: Value = serde_json::from_str(&line).unwrap_or_default();
    answer["result"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text paths' figures and the anchors', on one part of the corpus: its outputs in `dir`,
/// every line's path named after `part` (`""` for the tuning part, `held-out/` for the other).
async fn run(
    dir: &Path,
    part: &str,
    python_anchors: Option<&Path>,
    verbose: bool,
) -> Result<(), String> {
    let cases = cases(dir)?;
    if cases.is_empty() {
        return Err(format!("the corpus {} holds no output", dir.display()));
    }
    let outputs = std::sync::Arc::new(
        cases
            .iter()
            .map(|c| c.output.text.clone())
            .collect::<Vec<_>>(),
    );
    let sandbox = tempfile::tempdir().map_err(|e| format!("cannot make a sandbox: {e}"))?;
    let o200k: std::sync::Arc<dyn TokenCounter> =
        std::sync::Arc::new(O200k::new().map_err(|e| format!("no o200k encoder: {e}"))?);
    for path in PATHS {
        let budgets = if path == "proxy_tokens" {
            &TOKEN_BUDGETS[..]
        } else {
            &TEXT_BUDGETS[..]
        };
        for &budget in budgets {
            let mut figures = Figures {
                per_case: verbose,
                tokens: (path == "proxy_tokens").then(|| std::sync::Arc::clone(&o200k)),
                ..Figures::default()
            };
            let registry = registry(&outputs, budget)?;
            let standard = standard(sandbox.path(), budget)?;
            for (index, case) in cases.iter().enumerate() {
                let shown = match path {
                    "registry" | "stream" => {
                        let tool = if path == "registry" { "text" } else { "stream" };
                        let call = ToolCall::new("c", tool, json!({ "index": index }));
                        registry.turn().execute([call]).await.remove(0).content
                    }
                    "run_command" => {
                        std::fs::write(sandbox.path().join("out.txt"), &case.output.text)
                            .map_err(|e| format!("cannot write to the sandbox: {e}"))?;
                        let call =
                            ToolCall::new("c", "run_command", json!({ "command": "cat out.txt" }));
                        standard.turn().execute([call]).await.remove(0).content
                    }
                    "proxy" => through_proxy(&case.output.text, budget, None).await,
                    _ => {
                        let tokens = TokenCap::new(budget, std::sync::Arc::clone(&o200k));
                        through_proxy(&case.output.text, usize::MAX, Some(tokens)).await
                    }
                };
                figures.add(case, &shown, budget, path);
            }
            println!("{}", figures.line(&format!("{part}{path}"), budget));
            if verbose {
                for missed in &figures.missed {
                    eprintln!("  missed: {part}{missed}");
                }
            }
        }
    }
    run_anchors(&cases, part, python_anchors, verbose)
}

/// The corpus's two parts, as `tools.txt` lists them: every output listed, in the part it is in
/// (the top folder or `held-out/`), and no tool in both. Prints how many outputs and tools each
/// part has.
fn check_parts(dir: &Path) -> Result<(), String> {
    let path = dir.join("tools.txt");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut listed = std::collections::HashMap::new();
    let mut tools: std::collections::HashMap<&str, std::collections::HashSet<&str>> =
        std::collections::HashMap::new();
    for line in text
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
    {
        let mut fields = line.split('\t');
        let (Some(part), Some(name), Some(tool)) = (fields.next(), fields.next(), fields.next())
        else {
            return Err(format!(
                "{}: `{line}` is not PART<tab>OUTPUT<tab>TOOL",
                path.display()
            ));
        };
        listed.insert(name, part);
        tools.entry(part).or_default().insert(tool);
    }
    for (part, folder) in [
        ("tuning", dir.to_path_buf()),
        ("held-out", dir.join("held-out")),
    ] {
        let outputs = corpus::read(&folder)?;
        for output in &outputs {
            if listed.get(output.name.as_str()) != Some(&part) {
                return Err(format!(
                    "{} is in the {part} part, and tools.txt does not list it there",
                    output.name
                ));
            }
        }
        let count = tools.get(part).map_or(0, std::collections::HashSet::len);
        println!("# {part}: {} outputs of {count} tools", outputs.len());
    }
    if let (Some(tuning), Some(held)) = (tools.get("tuning"), tools.get("held-out"))
        && let Some(both) = tuning.intersection(held).next()
    {
        return Err(format!("the tool {both} is in both parts of the corpus"));
    }
    Ok(())
}

/// The anchors' figures, on the same corpus: each reimplemented cut at every budget (its whole
/// answer within the budget's chars) and at its own default, and the Python libraries' answers
/// read from `python` (written by `scripts/anchors.py`: `{library: {budget: {output: text}}}`).
fn run_anchors(
    cases: &[Case],
    part: &str,
    python: Option<&Path>,
    verbose: bool,
) -> Result<(), String> {
    // `allowance`: what the fill is counted against (a budget's chars; for a limit in lines,
    // no chars at all: the output's size).
    let report = |name: &str,
                  budget: usize,
                  allowance: usize,
                  shown: &dyn Fn(&Case) -> Result<String, String>| {
        let mut figures = Figures::default();
        for case in cases {
            figures.add(case, &shown(case)?, allowance, name);
        }
        println!("{}", figures.line(&format!("{part}{name}"), budget));
        if verbose {
            for missed in &figures.missed {
                eprintln!("  missed: {part}{missed}");
            }
        }
        Ok::<(), String>(())
    };
    for anchor in &anchors::ANCHORS {
        let name = format!("anchor:{}", anchor.name);
        for budget in TEXT_BUDGETS {
            report(&name, budget, budget, &|case| {
                Ok(anchor.within(budget, &case.output.text))
            })?;
        }
        // As it ships: its own limit, in its own unit.
        let allowance = if anchor.lines {
            usize::MAX
        } else {
            anchor.default
        };
        report(
            &format!("{name}:default"),
            anchor.default,
            allowance,
            &|case| Ok((anchor.cut)(&case.output.text, anchor.default)),
        )?;
    }
    let Some(python) = python else { return Ok(()) };
    let text = std::fs::read_to_string(python)
        .map_err(|e| format!("cannot read the anchors' answers {}: {e}", python.display()))?;
    let answers: std::collections::BTreeMap<
        String,
        std::collections::BTreeMap<String, std::collections::HashMap<String, String>>,
    > = serde_json::from_str(&text).map_err(|e| {
        format!(
            "the anchors' answers {} are not {{library: {{budget: {{output: text}}}}}}: {e}",
            python.display()
        )
    })?;
    for (library, budgets) in &answers {
        for budget in TEXT_BUDGETS {
            let Some(outputs) = budgets.get(&budget.to_string()) else {
                return Err(format!(
                    "{library} has no answers at {budget} chars in {}",
                    python.display()
                ));
            };
            report(&format!("anchor:{library}"), budget, budget, &|case| {
                let name = format!("{part}{}", case.output.name);
                outputs.get(&name).cloned().ok_or_else(|| {
                    format!(
                        "{library} has no answer for {} at {budget} chars",
                        case.output.name
                    )
                })
            })?;
        }
    }
    Ok(())
}

/// A typed result of the corpus: its structure, its output schema, and the records a developer
/// must see in it (each an item of one of its lists, or a member's value of one of its maps).
struct TypedCase {
    name: String,
    value: Value,
    schema: Value,
    must: Vec<Value>,
}

fn typed_cases(dir: &Path) -> Result<Vec<TypedCase>, String> {
    let dir = dir.join("typed");
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let parse = |path: &Path, text: &str| {
        serde_json::from_str::<Value>(text).map_err(|e| format!("{}: {e}", path.display()))
    };
    let mut cases = Vec::new();
    let entries =
        std::fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let Some(name) = name
            .strip_suffix(".json")
            .filter(|n| !n.ends_with(".schema"))
        else {
            continue;
        };
        let name = name.to_owned();
        let schema_path = dir.join(format!("{name}.schema.json"));
        let must_path = dir.join(format!("{name}.must"));
        let must = read(&must_path)?
            .lines()
            .map(|line| parse(&must_path, line))
            .collect::<Result<_, _>>()?;
        cases.push(TypedCase {
            value: parse(&path, &read(&path)?)?,
            schema: parse(&schema_path, &read(&schema_path)?)?,
            must,
            name,
        });
    }
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(cases)
}

/// A typed tool returning one case's structure, stating its schema.
struct TypedTool {
    name: String,
    value: Value,
    schema: Value,
}

#[async_trait]
impl Tool for TypedTool {
    type Args = serde_json::Map<String, Value>;

    fn name(&self) -> std::borrow::Cow<'static, str> {
        self.name.clone().into()
    }

    fn description(&self) -> std::borrow::Cow<'static, str> {
        "Returns a typed result of the corpus.".into()
    }

    fn output_schema(&self) -> Option<Value> {
        Some(self.schema.clone())
    }

    async fn call(&self, _: Self::Args, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        ToolOutput::json(&self.value)
    }
}

/// How many of `must` `value` holds, as an item of a list or a member's value of a map.
fn records_kept(value: &Value, must: &[Value]) -> usize {
    fn holds(value: &Value, record: &Value) -> bool {
        match value {
            Value::Array(items) => items
                .iter()
                .any(|item| item == record || holds(item, record)),
            Value::Object(members) => members
                .values()
                .any(|member| member == record || holds(member, record)),
            _ => false,
        }
    }
    must.iter().filter(|record| holds(value, record)).count()
}

/// The typed paths' figures: per path and budget, the must-see records kept, the fill (the
/// chars sent over the allowance, per mille, over the cases that were cut), escapes shown, and
/// the structures valid against their schema.
async fn run_typed(dir: &Path, verbose: bool) -> Result<(), String> {
    let cases = typed_cases(dir)?;
    let validators = cases
        .iter()
        .map(|case| {
            jsonschema::validator_for(&case.schema)
                .map_err(|e| format!("{}: the schema does not compile: {e}", case.name))
        })
        .collect::<Result<Vec<_>, _>>()?;
    for path in TYPED_PATHS {
        for budget in BUDGETS {
            let mut builder = Registry::builder()
                .artifacts(MemoryStore::new())
                .budget(BudgetPolicy::default().with_batch_budget_chars(budget));
            for (i, case) in cases.iter().enumerate() {
                builder = builder.tool(TypedTool {
                    name: format!("typed_{i}"),
                    value: case.value.clone(),
                    schema: case.schema.clone(),
                });
            }
            let registry = builder.build().map_err(|e| e.to_string())?;
            let (mut kept, mut total, mut valid, mut escapes) = (0, 0, 0, 0);
            let (mut fill_sum, mut cut) = (0.0, 0);
            for (i, case) in cases.iter().enumerate() {
                let (structure, text) = if path == "typed" {
                    let call = ToolCall::new("c", format!("typed_{i}"), json!({}));
                    let result = registry.turn().execute([call]).await.remove(0);
                    let structure = match &result.structure {
                        Some(structure) => Some(structure.clone()),
                        None if result.meta.structured => {
                            serde_json::from_str(&result.content).ok()
                        }
                        None => None,
                    };
                    (structure, result.content)
                } else {
                    let text = serde_json::to_string_pretty(&case.value).unwrap_or_default();
                    let answer = json!({ "jsonrpc": "2.0", "id": 1, "result": {
                        "content": [{ "type": "text", "text": text }],
                        "structuredContent": case.value } });
                    let line = toolsmith::mcp::__relay_tool_answer(
                        answer.to_string().into_bytes(),
                        budget,
                        None,
                        Some(&case.schema),
                    )
                    .await;
                    let answer: Value = serde_json::from_str(&line).unwrap_or_default();
                    let text = answer["result"]["content"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|block| block["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n");
                    (answer["result"].get("structuredContent").cloned(), text)
                };
                total += case.must.len();
                escapes += escapes_in(&text);
                let Some(structure) = structure else { continue };
                let here = records_kept(&structure, &case.must);
                if verbose && here < case.must.len() {
                    eprintln!(
                        "  typed: {path} {budget} {}: {here} of {} records kept",
                        case.name,
                        case.must.len()
                    );
                }
                kept += here;
                // Valid against what the client is told: the tool's schema with the optional
                // member a cut structure names its cut in (a string), where it is listed.
                let mut data = structure.clone();
                let note = data
                    .as_object_mut()
                    .and_then(|members| members.remove("toolsmith/cut"));
                if note.as_ref().is_none_or(Value::is_string) && validators[i].is_valid(&data) {
                    valid += 1;
                }
                let structure_chars = structure.to_string().chars().count();
                if case.value.to_string().chars().count() > budget {
                    // The registry's text and structure are one selection each within the
                    // allowance; the proxy's share the cap.
                    let sent = if path == "typed" {
                        structure_chars
                    } else {
                        structure_chars + text.chars().count()
                    };
                    fill_sum += sent as f64 / budget as f64;
                    cut += 1;
                }
            }
            let fill = if cut == 0 {
                1000
            } else {
                (fill_sum / f64::from(cut) * 1000.0).round() as usize
            };
            println!(
                "{path} {budget} must={kept}/{total} fill={fill} escapes={escapes} json={valid}/{}",
                cases.len()
            );
        }
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let mut dir = None;
    let mut verbose = false;
    let mut python_anchors = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-v" | "--verbose" => verbose = true,
            "--sources" => {
                for anchor in &anchors::ANCHORS {
                    println!("{}: {}", anchor.name, anchor.source);
                }
                return std::process::ExitCode::SUCCESS;
            }
            "--anchors" => match args.next() {
                Some(file) => python_anchors = Some(PathBuf::from(file)),
                None => {
                    eprintln!("signal: --anchors names a file (scripts/anchors.py writes it)");
                    return std::process::ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                println!(
                    "usage: signal [--verbose] [--anchors FILE] CORPUS_DIR\n       signal --sources   where each anchor's cut is read from"
                );
                return std::process::ExitCode::SUCCESS;
            }
            _ => dir = Some(PathBuf::from(arg)),
        }
    }
    let Some(dir) = dir else {
        eprintln!("signal: name the corpus directory (tests/corpus); see --help");
        return std::process::ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("signal: cannot start a runtime: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    match runtime.block_on(async move {
        check_parts(&dir)?;
        run(&dir, "", python_anchors.as_deref(), verbose).await?;
        run(
            &dir.join("held-out"),
            "held-out/",
            python_anchors.as_deref(),
            verbose,
        )
        .await?;
        run_typed(&dir, verbose).await
    }) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("signal: {why}");
            std::process::ExitCode::from(2)
        }
    }
}

/// The escapes and redraws `text` shows: each ESC, and each carriage return that is not half of
/// a CRLF line ending.
fn escapes_in(text: &str) -> usize {
    let bytes = text.as_bytes();
    bytes
        .iter()
        .enumerate()
        .filter(|&(i, &b)| b == 0x1b || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')))
        .count()
}
