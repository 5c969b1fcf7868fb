//! Keep what matters, measured: for each real output of `tests/corpus` and each path that cuts
//! (the registry's cut of a text; run_command, whose output is a stream), the share of the lines
//! a developer must see that the model is shown at 4,000 and 10,000 chars, before (the
//! positional cut: a head and a tail) and after (folds, salient lines, rendering), and the chars
//! of the allowance spent on escape sequences and carriage-return redraws.
//!
//! Run: `cargo bench --bench keep`

use serde_json::json;
use toolsmith::artifacts::MemoryStore;
use toolsmith::tool::{Tool, ToolContext, ToolError, ToolLimits, ToolOutput};
use toolsmith::trim::{Render, Salience, TrimStyle};
use toolsmith::{BudgetPolicy, Registry, ToolCall, async_trait};

#[path = "../tests/common/corpus.rs"]
mod corpus;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ShowArgs {
    name: String,
}

/// A corpus output as a text (`stream: false`) or a stream; `positional`: cut by position only.
struct Show {
    stream: bool,
    positional: bool,
}

#[async_trait]
impl Tool for Show {
    type Args = ShowArgs;

    fn name(&self) -> std::borrow::Cow<'static, str> {
        format!(
            "{}_{}",
            if self.stream { "stream" } else { "text" },
            if self.positional { "before" } else { "after" }
        )
        .into()
    }

    fn description(&self) -> std::borrow::Cow<'static, str> {
        "Shows a corpus output.".into()
    }

    fn limits(&self) -> ToolLimits {
        let (limits, trim) = if self.stream {
            // run_command's limits, as they were.
            (
                ToolLimits::default().with_max_result_chars(Some(20_000)),
                TrimStyle::default()
                    .with_max_lines(Some(200))
                    .with_head_ratio(0.2),
            )
        } else {
            (ToolLimits::default(), TrimStyle::default())
        };
        let trim = if self.positional {
            trim.with_folding(false)
                .with_salience(Salience::Off)
                .with_render(Render::Never)
        } else if self.stream {
            trim.with_render(Render::Always)
        } else {
            trim.with_render(Render::OnCut)
        };
        limits.with_trim(trim)
    }

    async fn call(&self, args: ShowArgs, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let text = std::fs::read_to_string(corpus::dir().join(format!("{}.out", args.name)))?;
        if !self.stream {
            return Ok(ToolOutput::text(text));
        }
        let chunks: Vec<Result<Vec<u8>, ToolError>> = text
            .into_bytes()
            .chunks(65_536)
            .map(|chunk| Ok(chunk.to_vec()))
            .collect();
        Ok(ToolOutput::stream(futures_util::stream::iter(chunks)))
    }
}

/// Chars of escape sequences (`ESC [ … letter`, `ESC ] … BEL`, other `ESC x`) and carriage
/// returns that do not end a line.
fn terminal_chars(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut count = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            0x1B => {
                let start = i;
                i += 1;
                match bytes.get(i) {
                    Some(b'[') => {
                        i += 1;
                        while i < bytes.len() && !(0x40..=0x7E).contains(&bytes[i]) {
                            i += 1;
                        }
                    }
                    Some(b']') => {
                        while i < bytes.len() && bytes[i] != 0x07 {
                            i += 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
                count += i.min(bytes.len()) - start;
            }
            b'\r' if bytes.get(i + 1) != Some(&b'\n') => {
                count += 1;
                i += 1;
            }
            _ => i += 1,
        }
    }
    count
}

fn main() {
    let outputs: Vec<(String, Vec<String>)> = corpus::read(&corpus::dir())
        .unwrap()
        .into_iter()
        .map(|output| (output.name, output.must))
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    println!(
        "{:<20} {:>7} {:<6}  {:>12} {:>12}  {:>14} {:>14}",
        "output", "allow", "path", "must before", "must after", "term chars bef", "term chars aft"
    );
    let mut totals = std::collections::BTreeMap::new();
    for budget in [4_000usize, 10_000] {
        let store = MemoryStore::new();
        let mut builder = Registry::builder()
            .artifacts(store)
            .budget(BudgetPolicy::default().with_batch_budget_chars(budget));
        for stream in [false, true] {
            for positional in [false, true] {
                builder = builder.tool(Show { stream, positional });
            }
        }
        let registry = builder.build().unwrap();
        for (name, must) in &outputs {
            for (path, stream) in [("text", "text"), ("stream", "stream")] {
                let run = |suffix: &str| {
                    let tool = format!("{stream}_{suffix}");
                    runtime.block_on(async {
                        registry
                            .turn()
                            .execute([ToolCall::new("c", tool, json!({ "name": name }))])
                            .await
                            .remove(0)
                    })
                };
                let (before, after) = (run("before"), run("after"));
                let (b, a) = (
                    corpus::shown(&before.content, must),
                    corpus::shown(&after.content, must),
                );
                let (tb, ta) = (
                    terminal_chars(&before.content),
                    terminal_chars(&after.content),
                );
                println!(
                    "{name:<20} {budget:>7} {path:<6}  {:>12} {:>12}  {tb:>14} {ta:>14}",
                    format!("{b}/{}", must.len()),
                    format!("{a}/{}", must.len()),
                );
                let entry = totals.entry((budget, path)).or_insert((0, 0, 0, 0, 0));
                entry.0 += b;
                entry.1 += a;
                entry.2 += must.len();
                entry.3 += tb;
                entry.4 += ta;
            }
        }
    }
    println!();
    for ((budget, path), (before, after, all, tb, ta)) in totals {
        println!(
            "{budget:>6} chars, {path:<6}: must-see lines shown {before}/{all} ({:.0}%) before, \
             {after}/{all} ({:.0}%) after; chars on escapes and redraws {tb} before, {ta} after",
            100.0 * before as f64 / all as f64,
            100.0 * after as f64 / all as f64,
        );
    }
}
