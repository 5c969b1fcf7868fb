//! `toolsmith demo`: one overflowing batch of the standard tools over a workspace, shown.

use std::path::{Path, PathBuf};

use serde_json::json;
use toolsmith::{Registry, ToolCall, ToolResult};

/// Runs the demo batch over `root` and prints what happened to each call.
pub(crate) async fn run(
    registry: &Registry,
    root: &Path,
    artifacts: &Path,
    budget: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = &std::fs::canonicalize(root)?;
    let files = text_files(root);
    let small = files
        .iter()
        .find(|(path, _)| path.ends_with("README.md") || path.ends_with("Cargo.toml"))
        .or_else(|| files.first())
        .map(|(path, _)| display(root, path));
    let largest = files
        .iter()
        .max_by_key(|(_, size)| *size)
        .map(|(path, _)| display(root, path));

    let mut calls = vec![ToolCall::new(
        "toolu_01",
        "list_directory",
        json!({ "path": "." }),
    )];
    if let Some(small) = &small {
        calls.push(ToolCall::new(
            "toolu_02",
            "read_file",
            json!({ "path": small, "limit": 12 }),
        ));
    }
    if let Some(largest) = &largest {
        calls.push(ToolCall::new(
            "toolu_03",
            "read_file",
            json!({ "path": largest }),
        ));
    }
    calls.push(ToolCall::new(
        "toolu_04",
        "grep",
        json!({ "pattern": "fn |def |func |function ", "max_results": 2000 }),
    ));
    calls.push(ToolCall::new(
        "toolu_05",
        "run_command",
        json!({ "command": "find . -type f -not -path '*/target/*' -not -path '*/.git/*' | sort; echo 'error: the last line survives'" }),
    ));
    calls.push(ToolCall::new(
        "toolu_06",
        "read_file",
        json!({ "path": "../../etc/passwd" }),
    ));

    println!(
        "toolsmith demo: {} parallel calls of the standard tools over {}, batch budget {budget} \
         chars (fair share)\n",
        calls.len(),
        root.display()
    );
    let mut turn = registry.turn();
    let results = turn.execute(calls).await;
    print_table(&results);
    for result in &results {
        print_result(result);
    }

    // The model recovers what was cut, without filesystem access: the lines after the kept head.
    let trimmed = results
        .iter()
        .find_map(|r| Some((r.meta.artifact.clone()?, r.meta.cut.clone()?)));
    if let Some((id, cut)) = trimmed {
        let offset = cut.head_lines.map_or(0, |span| span.last);
        let page = turn
            .execute([ToolCall::new(
                "toolu_07",
                "read_artifact",
                json!({ "id": id.as_str(), "offset": offset, "limit": 5 }),
            )])
            .await;
        println!(
            "── read_artifact id={id} offset={offset} limit=5: lines the model did not see ──"
        );
        println!("{}", page[0].content);
    }
    let shown: usize = results.iter().map(ToolResult::content_chars).sum();
    println!(
        "total shown to the model: {shown} chars of {budget}; full outputs kept in {}",
        artifacts.display()
    );
    Ok(())
}

/// Text files under `root` (not in `target` or hidden directories), with their sizes.
fn text_files(root: &Path) -> Vec<(PathBuf, u64)> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "target" || name == "node_modules" {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                pending.push(path);
            } else if meta.is_file() && is_text(&path) {
                found.push((path, meta.len()));
            }
        }
    }
    found.sort();
    found
}

fn is_text(path: &Path) -> bool {
    let mut head = [0u8; 1024];
    std::fs::File::open(path)
        .and_then(|mut file| std::io::Read::read(&mut file, &mut head))
        .is_ok_and(|read| read > 0 && !head[..read].contains(&0))
}

fn display(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn print_table(results: &[ToolResult]) {
    println!(
        "{:<9} {:<15} {:>6} {:>9} {:>9} {:>7} {:>7}  artifact",
        "call", "tool", "share", "allowance", "original", "lines", "shown"
    );
    for r in results {
        let artifact = match (&r.meta.artifact, r.is_error()) {
            (Some(id), _) => id.as_str().to_owned(),
            (None, true) => format!(
                "(error: {})",
                r.meta.error_kind.unwrap_or(toolsmith::ErrorKind::Failed)
            ),
            (None, false) => "-".to_owned(),
        };
        println!(
            "{:<9} {:<15} {:>6} {:>9} {:>9} {:>7} {:>7}  {artifact}",
            r.call_id,
            r.tool,
            r.meta.initial_allowance,
            r.meta.allowance,
            r.meta.original_chars,
            r.meta.original_lines,
            r.content_chars(),
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
            // Markers in full; other lines shortened to keep the page readable.
            if line.starts_with("[toolsmith:") {
                println!("  {line}");
            } else {
                let short: String = line.chars().take(100).collect();
                println!("  {short}");
            }
        }
    };
    match marker {
        Some(at) => {
            show(at.saturating_sub(2)..at + 1);
            show((at + 1).min(lines.len())..(at + 3).min(lines.len()));
        }
        None => {
            show(0..lines.len().min(3));
            if lines.len() > 3 {
                println!("  … ({} lines in all, untouched)", lines.len());
            }
        }
    }
    println!();
}
