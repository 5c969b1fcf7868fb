//! `toolsmith demo`: one overflowing batch of the standard tools over a workspace, shown.

use std::path::{Path, PathBuf};

use serde_json::json;
use toolsmith::{Registry, ToolCall, ToolResult};

/// A test run as a terminal shows it: 3,000 tests, coloured, one of them failing in the middle
/// with its panic message, and the summary.
const TEST_RUN: &str = "ok() { printf 'test suite::case_%s ... \\033[32mok\\033[0m\\n' \"$@\"; }; \
    for i in $(seq 1 1500); do ok $i; done; \
    printf 'test suite::totals ... \\033[31mFAILED\\033[0m\\n'; \
    echo \"thread 'suite::totals' panicked at src/orders.rs:42:9:\"; \
    echo 'assertion `left == right` failed: the total of the order'; \
    echo '  left: 5'; echo ' right: 4'; \
    for i in $(seq 1501 3000); do ok $i; done; \
    echo 'test result: FAILED. 2999 passed; 1 failed'";

/// Runs the demo batch over `root` and prints what happened to each call.
pub(crate) async fn run(
    registry: &Registry,
    root: &Path,
    artifacts: &str,
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

    // Each call, and what it shows.
    let mut planned = vec![(
        ToolCall::new("toolu_01", "list_directory", json!({ "path": "." })),
        "what is here: small, returned whole",
    )];
    if let Some(small) = &small {
        planned.push((
            ToolCall::new(
                "toolu_02",
                "read_file",
                json!({ "path": small, "limit": 12 }),
            ),
            "a page of a file: 12 lines",
        ));
    }
    if let Some(largest) = &largest {
        planned.push((
            ToolCall::new("toolu_03", "read_file", json!({ "path": largest })),
            "the largest file, whole: refused before reading, with how to page it",
        ));
    }
    planned.push((
        ToolCall::new(
            "toolu_04",
            "grep",
            json!({ "pattern": "fn |def |func |function ", "max_results": 5000 }),
        ),
        "far more matches than fit: head kept, all of it stored as an artifact",
    ));
    planned.push((
        ToolCall::new("toolu_05", "run_command", json!({ "command": TEST_RUN })),
        "a test run of 3,000 coloured lines, one failure in the middle: the passing lines count \
         up, so they fold without losing a line; the failure and its panic are kept, the colours \
         removed",
    ));
    planned.push((
        ToolCall::new(
            "toolu_06",
            "read_file",
            json!({ "path": "../../etc/passwd" }),
        ),
        "an escape attempt, as a prompt-injected model might make: refused",
    ));

    outln!(
        "toolsmith demo: {} calls of the standard tools in one batch over {}; batch budget \
         {budget} chars, split by fair share\n",
        planned.len(),
        root.display()
    );
    outln!("The calls, as the model sent them:");
    for (call, purpose) in &planned {
        outln!("  {} {} {}", call.id, call.name, arguments(call));
        outln!("      {purpose}");
    }
    outln!();
    let calls = planned.into_iter().map(|(call, _)| call);
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
        let offset = cut.head_lines().map_or(0, |span| span.last);
        let page = turn
            .execute([ToolCall::new(
                "toolu_07",
                "read_artifact",
                json!({ "id": id.as_str(), "offset": offset, "limit": 5 }),
            )])
            .await;
        outln!("── read_artifact id={id} offset={offset} limit=5: lines the model did not see ──");
        outln!("{}", page[0].content);
    }
    let shown: usize = results.iter().map(ToolResult::content_chars).sum();
    outln!(
        "total shown to the model: {shown} chars of {budget}; full outputs kept in {}",
        artifacts
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

/// A call's arguments as compact JSON.
fn arguments(call: &ToolCall) -> String {
    match &call.arguments {
        toolsmith::registry::Arguments::Json(value) => value.to_string(),
        toolsmith::registry::Arguments::Raw(raw) => raw.clone(),
        _ => "(arguments)".to_owned(),
    }
}

fn print_table(results: &[ToolResult]) {
    // Sizes in chars (Unicode scalar values), as the budget counts them.
    outln!(
        "{:<9} {:<15} {:>9} {:>9} {:>9} {:>7} {:>9}  artifact",
        "",
        "",
        "planned",
        "final",
        "original",
        "original",
        "shown"
    );
    outln!(
        "{:<9} {:<15} {:>9} {:>9} {:>9} {:>7} {:>9}",
        "call",
        "tool",
        "chars",
        "chars",
        "chars",
        "lines",
        "chars"
    );
    for r in results {
        let artifact = crate::render::artifact_cell(r);
        outln!(
            "{:<9} {:<15} {:>9} {:>9} {:>9} {:>7} {:>9}  {artifact}",
            r.call_id,
            r.tool,
            r.meta.initial_allowance,
            r.meta.allowance,
            r.meta.original_chars,
            r.meta.original_lines,
            r.content_chars(),
        );
    }
    outln!(
        "(planned: the allowance the tool saw while running; final: after unused room was handed \
         on; shown: what the model reads)"
    );
    outln!();
}

/// What the model sees of a result: an error in full; a trimmed one around its marker; any
/// other by its first and last lines.
fn print_result(result: &ToolResult) {
    outln!("── {} ({}) ──", result.call_id, result.tool);
    if result.is_error() {
        // An error is short and every word of it counts: shown whole, wrapped.
        for line in wrap(&result.content, 98) {
            outln!("  {line}");
        }
        outln!();
        return;
    }
    let lines: Vec<&str> = result.content.lines().collect();
    let marker = lines.iter().position(|l| l.starts_with("[toolsmith:"));
    let show = |range: std::ops::Range<usize>| {
        for line in &lines[range] {
            // Markers in full; other lines shortened to keep the page readable.
            if line.starts_with("[toolsmith:") {
                outln!("  {line}");
            } else if line.chars().count() > 98 {
                let short: String = line.chars().take(97).collect();
                outln!("  {short}…");
            } else {
                outln!("  {line}");
            }
        }
    };
    match marker {
        // A cut that keeps what matters is short: shown whole, as the model reads it.
        Some(_) if lines.len() <= 40 => show(0..lines.len()),
        Some(at) => {
            show(at.saturating_sub(2)..at + 1);
            show((at + 1).min(lines.len())..(at + 3).min(lines.len()));
        }
        None if lines.len() <= 5 => show(0..lines.len()),
        None => {
            show(0..2);
            outln!("  … ({} lines in all, untouched)", lines.len());
            show(lines.len() - 2..lines.len());
        }
    }
    outln!();
}

/// `text` in lines of at most `width` chars, broken between words (a longer word stands alone).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.lines() {
        let mut line = String::new();
        for word in paragraph.split(' ') {
            let needed =
                line.chars().count() + usize::from(!line.is_empty()) + word.chars().count();
            if !line.is_empty() && needed > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wrapping_breaks_between_words_and_keeps_every_word() {
        let text = "Error: permission denied: `../../etc/passwd` is outside the workspace root";
        let lines = wrap(text, 30);
        assert!(
            lines.iter().all(|line| line.chars().count() <= 30),
            "{lines:?}"
        );
        assert_eq!(lines.join(" "), text);
        assert_eq!(wrap("short", 30), ["short"]);
    }
}
