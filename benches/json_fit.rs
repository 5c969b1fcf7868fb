//! `trim::fit_json` on ~100 MB JSON documents of five shapes, cut to 20,000 chars, against one
//! validating pass of serde_json over the same text (`from_str::<IgnoredAny>`), and the
//! process's peak memory growth while fitting.
//!
//! The shapes: a compact array of issue-like objects (as an API returns them); the same kind of
//! records pretty-printed and nested (as `jq .` or a `--pretty` flag writes them); objects nested
//! seven deep with four-space indentation (a list of pods); one wide object
//! of keys with non-ASCII values; and arrays nested ten deep.
//!
//! Run: `cargo bench --bench json_fit` (a bench binary; three runs of each, in one process).
//! `cargo bench --bench json_fit -- pretty` runs the shapes whose name contains `pretty`.

mod common;
mod inputs;

use std::time::{Duration, Instant};

use common::resident_mib;
use inputs::{compact, deep_arrays, pretty, pretty_nested, wide_unicode};
use serde::de::IgnoredAny;
use toolsmith::trim::{FullOutput, fit_json};

const SIZE: usize = 100 << 20;

/// Makes a document of about the given size in bytes.
type Shape = fn(usize) -> String;

fn best(runs: &[Duration]) -> Duration {
    runs.iter().copied().min().unwrap_or_default()
}

fn run(name: &str, text: &str) {
    let before = resident_mib("VmRSS:");
    let mut fits = Vec::new();
    let mut validates = Vec::new();
    let mut kept = 0;
    for _ in 0..3 {
        let started = Instant::now();
        let fit = fit_json(text, 20_000, 0.5, &FullOutput::NotKept).expect("valid JSON");
        fits.push(started.elapsed());
        kept = fit.text.chars().count();
        let started = Instant::now();
        serde_json::from_str::<IgnoredAny>(text).expect("valid JSON");
        validates.push(started.elapsed());
    }
    let peak = resident_mib("VmHWM:");
    let fit = best(&fits);
    let validate = best(&validates);
    println!("{name}: {} bytes; fitted to {kept} chars", text.len());
    println!("  fit_json:              {fits:?} (best {fit:?})");
    println!("  serde_json IgnoredAny: {validates:?} (best {validate:?})");
    println!(
        "  ratio: {:.2}x; peak RSS {peak:.1} MiB, {before:.1} MiB resident before fitting",
        fit.as_secs_f64() / validate.as_secs_f64(),
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|arg| arg == "--list") {
        return;
    }
    let filter = args.iter().find(|arg| !arg.starts_with("--"));
    let shapes: [(&str, Shape); 5] = [
        ("compact", compact),
        ("pretty", pretty),
        ("pretty_nested", pretty_nested),
        ("wide_unicode", wide_unicode),
        ("deep_arrays", deep_arrays),
    ];
    for (name, make) in shapes {
        if filter.is_some_and(|filter| !name.contains(filter.as_str())) {
            continue;
        }
        let text = make(SIZE);
        run(name, &text);
    }
}
