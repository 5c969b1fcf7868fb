//! `trim::fit_json` on a 100 MB JSON array cut to 20,000 chars, against one validating pass of
//! serde_json over the same text (`from_str::<IgnoredAny>`), and the process's peak memory
//! growth while fitting.
//!
//! Run: `cargo bench --bench json_fit` (a bench binary; three runs of each, in one process).

mod common;

use std::time::{Duration, Instant};

use common::resident_mib;
use serde::de::IgnoredAny;
use toolsmith::trim::{FullOutput, fit_json};

/// A 100 MB array of issue-like objects, compact, as an API would return them.
fn payload(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 1024);
    out.push('[');
    let mut i = 0u64;
    while out.len() < bytes {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            r#"{{"number":{i},"title":"Crash when parsing \"config\" on start — issue {i}","state":"open","labels":["bug","p{}"],"comments":{},"body":"Steps:\n1. run\n2. see the panic at src/main.rs:{}"}}"#,
            i % 4,
            i % 97,
            i % 1000
        ));
        i += 1;
    }
    out.push(']');
    out
}

fn best(runs: &[Duration]) -> Duration {
    runs.iter().copied().min().unwrap_or_default()
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let text = payload(100 << 20);
    let before = resident_mib("VmRSS:");
    let mut fits = Vec::new();
    let mut validates = Vec::new();
    let mut kept = 0;
    for _ in 0..3 {
        let started = Instant::now();
        let fit = fit_json(&text, 20_000, 0.5, &FullOutput::NotKept).expect("valid JSON");
        fits.push(started.elapsed());
        kept = fit.text.chars().count();
        let started = Instant::now();
        serde_json::from_str::<IgnoredAny>(&text).expect("valid JSON");
        validates.push(started.elapsed());
    }
    let peak = resident_mib("VmHWM:");
    let fit = best(&fits);
    let validate = best(&validates);
    println!("input: {} bytes; fitted to {kept} chars", text.len());
    println!("fit_json:               {fits:?} (best {fit:?})");
    println!("serde_json IgnoredAny:  {validates:?} (best {validate:?})");
    println!(
        "ratio: {:.2}x; peak RSS {peak:.1} MiB with the input's {:.1} MiB resident before fitting",
        fit.as_secs_f64() / validate.as_secs_f64(),
        before
    );
}
