//! The instruction-count gate's cases: each hot path run once on a fixed input, for callgrind
//! to count the instructions of [`measured`] alone (the input is made before it, outside the
//! count). Instruction counts do not drift with the machine's load the way times do, so
//! `scripts/perf-gate.sh` can hold every change to its committed baseline.
//!
//! Run: `bash scripts/perf-gate.sh` (the gate), or `cargo run --profile gate -p toolsmith-gate
//! -- <case>` to run one case natively; `--list` names the cases.

#![forbid(unsafe_code)]

// The inputs the benches measure, made in one place.
#[path = "../../../benches/inputs/mod.rs"]
mod inputs;

use std::hint::black_box;
use std::sync::Arc;

use serde_json::json;
use toolsmith::history::{self, CompactPolicy, Message};
use toolsmith::tokens::{O200k, TokenCap};
use toolsmith::trim::{FullOutput, TrimStyle, fit, fit_json};
use toolsmith::{Registry, ToolCall, ToolError};

/// The size of the texts and documents cut.
const MIB: usize = 1 << 20;
/// The allowance they are cut to.
const ALLOWANCE: usize = 20_000;

/// Every case, by name.
const CASES: &[&str] = &[
    "fit_default_1mib",
    "fit_default_512kib",
    "fit_positional_1mib",
    "fit_json_compact_1mib",
    "fit_json_as_text_1mib",
    "fit_json_pretty_1mib",
    "fit_json_pretty_nested_1mib",
    "fit_json_wide_unicode_1mib",
    "fit_json_deep_arrays_1mib",
    "turn_execute_100_noops",
    "relay_tool_answer_1mib",
    "relay_tool_answer_1mib_tokens",
    "history_repair_compact_1000",
    "history_gemini_round_trip_1000",
    "history_responses_round_trip_1000",
];

/// A case's input, made before the count starts.
enum Input {
    Text(String, TrimStyle),
    Json(String),
    Turn(Box<Registry>, Vec<ToolCall>),
    /// A `tools/call` answer, and the cap in tokens it is held to, if any.
    Relay(Vec<u8>, Option<TokenCap>),
    History(Vec<Message>),
    /// Gemini `contents` (`true`) or Responses items, converted, repaired, compacted and
    /// written back.
    Converted(Vec<serde_json::Value>, bool),
}

fn input(case: &str) -> Option<Input> {
    let positional = TrimStyle::head_tail(TrimStyle::DEFAULT_HEAD_RATIO);
    Some(match case {
        "fit_default_1mib" => Input::Text(inputs::log_of(MIB), TrimStyle::default()),
        // The largest text read whole: what stands out in it is read besides the patterns.
        "fit_default_512kib" => Input::Text(inputs::log_of(MIB / 2 - 256), TrimStyle::default()),
        "fit_positional_1mib" => Input::Text(inputs::log_of(MIB), positional),
        "fit_json_compact_1mib" => Input::Json(inputs::compact(MIB)),
        // The same JSON as a text result: the text fit tells it is JSON and cuts it as JSON
        // (what telling costs is this case less fit_json_compact_1mib).
        "fit_json_as_text_1mib" => Input::Text(inputs::compact(MIB), TrimStyle::default()),
        "fit_json_pretty_1mib" => Input::Json(inputs::pretty(MIB)),
        "fit_json_pretty_nested_1mib" => Input::Json(inputs::pretty_nested(MIB)),
        "fit_json_wide_unicode_1mib" => Input::Json(inputs::wide_unicode(MIB)),
        "fit_json_deep_arrays_1mib" => Input::Json(inputs::deep_arrays(MIB)),
        "turn_execute_100_noops" => {
            let registry = Registry::builder()
                .tool(noop())
                .max_calls_per_turn(100)
                .max_calls_per_tool(100)
                .build()
                .expect("a valid registry");
            let calls = (0..100)
                .map(|i| ToolCall::new(format!("call_{i}"), "noop", json!({})))
                .collect();
            Input::Turn(Box::new(registry), calls)
        }
        "relay_tool_answer_1mib" | "relay_tool_answer_1mib_tokens" => {
            let result = json!({
                "content": [{ "type": "text", "text": inputs::log_of(MIB) }],
                "isError": false,
            });
            let answer = json!({ "jsonrpc": "2.0", "id": 7, "result": result });
            // The same answer held to the tokens the allowance holds, as o200k counts them
            // (what counting costs is this case less relay_tool_answer_1mib; the encoder is
            // built before the count starts).
            let tokens = case.ends_with("_tokens").then(|| {
                let o200k = O200k::new().expect("the o200k tables");
                TokenCap::new(ALLOWANCE / 4, Arc::new(o200k))
            });
            Input::Relay(serde_json::to_vec(&answer).expect("JSON"), tokens)
        }
        "history_repair_compact_1000" => Input::History(inputs::damaged(&inputs::session(1_000))),
        "history_gemini_round_trip_1000" => Input::Converted(
            history::to_gemini(&inputs::damaged(&inputs::session(1_000))),
            true,
        ),
        "history_responses_round_trip_1000" => Input::Converted(
            history::to_responses(&inputs::damaged(&inputs::session(1_000))),
            false,
        ),
        _ => return None,
    })
}

/// Does nothing: what a call costs the registry, and nothing else.
#[toolsmith::tool(read_only)]
async fn noop() -> Result<String, ToolError> {
    Ok("ok".into())
}

/// One thread, so the count is the same on every run.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime")
}

/// The counted part: one run of the case's hot path. Callgrind counts this function and what
/// it calls (`--toggle-collect`); keep its name.
#[inline(never)]
fn measured(input: Input, runtime: &tokio::runtime::Runtime) -> usize {
    match input {
        Input::Text(text, style) => fit(&text, ALLOWANCE, &style).text().len(),
        Input::Json(text) => {
            fit_json(&text, ALLOWANCE, 0.5, &FullOutput::NotKept).map_or(0, |fit| fit.text.len())
        }
        Input::Turn(registry, calls) => {
            runtime.block_on(async { registry.turn().execute(calls).await.len() })
        }
        Input::Relay(line, tokens) => runtime.block_on(async {
            toolsmith::mcp::__relay_tool_answer(line, ALLOWANCE, tokens, None)
                .await
                .len()
        }),
        Input::History(mut messages) => {
            let repaired = history::repair(&mut messages);
            let compacted = history::microcompact(&mut messages, &CompactPolicy::default());
            black_box(&repaired);
            black_box(&compacted);
            messages.len()
        }
        Input::Converted(values, gemini) => {
            let read = if gemini {
                history::from_gemini_owned(values)
            } else {
                history::from_responses_owned(values)
            };
            let mut messages = read.expect("the benches' histories convert");
            let violations = history::validate(&messages).len();
            let repaired = history::repair(&mut messages);
            let compacted = history::microcompact(&mut messages, &CompactPolicy::default());
            black_box((violations, &repaired, &compacted));
            let written = if gemini {
                history::into_gemini(messages)
            } else {
                history::into_responses(messages)
            };
            written.len()
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None | Some("--list") => {
            for case in CASES {
                println!("{case}");
            }
        }
        Some(case) => {
            let Some(input) = input(case) else {
                eprintln!(
                    "gate: no case `{case}`; the cases are: {}",
                    CASES.join(", ")
                );
                std::process::exit(2);
            };
            let runtime = runtime();
            println!(
                "{case}: {}",
                black_box(measured(black_box(input), &runtime))
            );
        }
    }
}
