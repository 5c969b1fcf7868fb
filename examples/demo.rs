//! The registry on real files: one batch of parallel calls over this repository that overflows
//! its budget, printed so you can see the split, the trims, the markers and the artifacts.
//!
//! Run: `cargo run --example demo`
//!
//! The three tools here are deliberately plain (whole-file reads, a recursive listing, a
//! substring search): the point is what the registry makes of their unbounded output.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::json;
use toolsmith::{
    BudgetPolicy, DirStore, Registry, Tool, ToolCall, ToolContext, ToolError, ToolLimits,
    ToolOutput, ToolResult, async_trait,
};

/// Arguments of `read_whole_file`.
#[derive(Deserialize, schemars::JsonSchema)]
struct ReadArgs {
    /// Path relative to the repository root.
    path: String,
}

/// Reads a whole file: no pagination, so big files rely on the registry's post-trim.
struct ReadWholeFile {
    root: PathBuf,
}

#[async_trait]
impl Tool for ReadWholeFile {
    type Args = ReadArgs;

    fn name(&self) -> Cow<'static, str> {
        "read_whole_file".into()
    }

    fn description(&self) -> Cow<'static, str> {
        "Reads a whole text file of the repository.".into()
    }

    fn limits(&self) -> ToolLimits {
        // A file's beginning matters most: keep the head.
        ToolLimits::default().with_head_ratio(1.0)
    }

    async fn call(&self, args: ReadArgs, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = inside(&self.root, &args.path)?;
        let text = tokio::fs::read_to_string(&path).await?;
        Ok(text.into())
    }
}

/// Arguments of `list_files`.
#[derive(Deserialize, schemars::JsonSchema)]
struct ListArgs {
    /// Directory relative to the repository root.
    dir: String,
}

/// Lists every file under a directory, recursively, skipping `target` and dot-directories.
struct ListFiles {
    root: PathBuf,
}

#[async_trait]
impl Tool for ListFiles {
    type Args = ListArgs;

    fn name(&self) -> Cow<'static, str> {
        "list_files".into()
    }

    fn description(&self) -> Cow<'static, str> {
        "Lists the files under a directory of the repository, recursively.".into()
    }

    fn limits(&self) -> ToolLimits {
        ToolLimits::default().with_max_result_lines(Some(100))
    }

    async fn call(&self, args: ListArgs, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let dir = inside(&self.root, &args.dir)?;
        let mut files = Vec::new();
        walk(&dir, &mut files)?;
        files.sort();
        let listing: Vec<String> = files
            .iter()
            .map(|f| {
                f.strip_prefix(&self.root)
                    .unwrap_or(f)
                    .display()
                    .to_string()
            })
            .collect();
        Ok(format!("{}\n", listing.join("\n")).into())
    }
}

/// Arguments of `search`.
#[derive(Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    /// The text to look for.
    needle: String,
    /// Directory relative to the repository root.
    dir: String,
}

/// Finds every line containing a string, as `path:line: text`.
struct Search {
    root: PathBuf,
}

#[async_trait]
impl Tool for Search {
    type Args = SearchArgs;

    fn name(&self) -> Cow<'static, str> {
        "search".into()
    }

    fn description(&self) -> Cow<'static, str> {
        "Finds the lines of the repository's files that contain a string.".into()
    }

    async fn call(&self, args: SearchArgs, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let dir = inside(&self.root, &args.dir)?;
        let mut files = Vec::new();
        walk(&dir, &mut files)?;
        files.sort();
        let mut out = String::new();
        for file in &files {
            let Ok(text) = std::fs::read_to_string(file) else {
                continue; // binary files are skipped
            };
            let shown = file.strip_prefix(&self.root).unwrap_or(file).display();
            for (n, line) in text.lines().enumerate() {
                if line.contains(&args.needle) {
                    out.push_str(&format!("{shown}:{}: {}\n", n + 1, line.trim()));
                }
            }
        }
        cx.progress(
            toolsmith::Audience::User,
            format!("searched {} files", files.len()),
        );
        Ok(out.into())
    }
}

fn inside(root: &Path, relative: &str) -> Result<PathBuf, ToolError> {
    let path = root.join(relative);
    if Path::new(relative).is_absolute() || relative.split('/').any(|part| part == "..") {
        return Err(ToolError::permission_denied(format!(
            "`{relative}` is outside the repository root {}",
            root.display()
        )));
    }
    Ok(path)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), ToolError> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if path.is_dir() {
            walk(&path, files)?;
        } else {
            files.push(path);
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let artifacts = DirStore::new_session()?;
    let artifact_dir = artifacts.path().to_path_buf();
    let budget = 24_000;
    let registry = Registry::builder()
        .tool(ReadWholeFile { root: root.clone() })
        .tool(ListFiles { root: root.clone() })
        .tool(Search { root: root.clone() })
        .artifacts(artifacts)
        .budget(BudgetPolicy::default().with_batch_budget_chars(budget))
        .build()?;

    let calls = vec![
        ToolCall::new(
            "toolu_01",
            "read_whole_file",
            json!({ "path": "Cargo.toml" }),
        ),
        ToolCall::new(
            "toolu_02",
            "read_whole_file",
            json!({ "path": "crates/core/src/registry/execute.rs" }),
        ),
        ToolCall::new("toolu_03", "list_files", json!({ "dir": "." })),
        ToolCall::new(
            "toolu_04",
            "search",
            json!({ "needle": "fn ", "dir": "crates" }),
        ),
        ToolCall::new(
            "toolu_05",
            "read_whole_file",
            json!({ "path": "../../etc/passwd" }),
        ),
    ];
    println!(
        "toolsmith demo: {} parallel calls over {}, batch budget {budget} chars (fair share)\n",
        calls.len(),
        root.display()
    );
    let mut turn = registry.turn();
    let results = turn.execute(calls).await;

    print_table(&results);
    for result in &results {
        print_result(result);
    }

    // The model recovers what was cut, without any filesystem access: the first lines after
    // the kept head.
    let trimmed = results.iter().find(|r| r.meta.artifact.is_some());
    if let Some((id, cut)) =
        trimmed.and_then(|r| Some((r.meta.artifact.clone()?, r.meta.cut.clone()?)))
    {
        let offset = cut.head_lines.map_or(0, |span| span.last);
        let page = turn
            .execute([ToolCall::new(
                "toolu_06",
                "read_artifact",
                json!({ "id": id.as_str(), "offset": offset, "limit": 5 }),
            )])
            .await;
        println!(
            "── read_artifact id={id} offset={offset} limit=5: lines the model did not see ──"
        );
        println!("{}", page[0].content);
    }
    println!(
        "total shown to the model: {} chars of {budget}; full outputs kept in {}",
        results.iter().map(ToolResult::content_chars).sum::<usize>(),
        artifact_dir.display()
    );
    Ok(())
}

fn print_table(results: &[ToolResult]) {
    println!(
        "{:<9} {:<16} {:>9} {:>9} {:>9} {:>7} {:>8}  artifact",
        "call", "tool", "share", "allowance", "original", "lines", "shown"
    );
    for r in results {
        println!(
            "{:<9} {:<16} {:>9} {:>9} {:>9} {:>7} {:>8}  {}",
            r.call_id,
            r.tool,
            r.meta.initial_allowance,
            r.meta.allowance,
            r.meta.original_chars,
            r.meta.original_lines,
            r.content_chars(),
            match (&r.meta.artifact, r.is_error) {
                (Some(id), _) => id.as_str().to_owned(),
                (None, true) => "(error)".to_owned(),
                (None, false) => "-".to_owned(),
            }
        );
    }
    println!();
}

/// The first lines, the marker and the last lines of what the model sees.
fn print_result(result: &ToolResult) {
    println!("── {} ({}) ──", result.call_id, result.tool);
    let lines: Vec<&str> = result.content.lines().collect();
    let marker = lines.iter().position(|l| l.starts_with("[toolsmith:"));
    let show = |range: std::ops::Range<usize>| {
        for line in &lines[range] {
            // Markers in full; content lines shortened to keep the page readable.
            let short: String = if line.starts_with("[toolsmith:") {
                (*line).to_owned()
            } else {
                line.chars().take(100).collect()
            };
            println!("  {short}");
        }
    };
    match marker {
        Some(at) => {
            show(at.saturating_sub(2)..at + 1);
            show((at + 1).min(lines.len())..(at + 3).min(lines.len()));
        }
        None => show(0..lines.len().min(3)),
    }
    if marker.is_none() && lines.len() > 3 {
        println!("  … ({} lines in all, untouched)", lines.len());
    }
    println!();
}
