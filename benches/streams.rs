//! A custom tool streaming 1 GiB of output through the registry, spooled to a `DirStore`: the
//! process's peak resident memory and the throughput, against draining the same stream into
//! nothing in the same run.
//!
//! Run: `cargo bench --bench streams` (spools up to the store's 256 MiB artifact cap under the
//! system temp dir, removed after). Reads `VmHWM` from `/proc/self/status`, so Linux only.

mod common;

use std::borrow::Cow;
use std::time::{Duration, Instant};

use common::peak_resident_mib;
use serde_json::json;
use toolsmith::artifacts::Retention;
use toolsmith::tool::ToolAnnotations;
use toolsmith::{
    DirStore, Registry, Tool, ToolCall, ToolContext, ToolError, ToolOutput, async_trait,
};

const TOTAL_BYTES: usize = 1 << 30;
const CHUNK_BYTES: usize = 256 * 1024;

/// 1 GiB of log lines, in 256 KiB chunks made as they are asked for.
fn chunks() -> impl futures_util::Stream<Item = Result<Vec<u8>, ToolError>> + Send {
    let line = b"    12345 compiling crate_42 v0.1.0 (build script) \xc3\xa9\n";
    let mut template = Vec::with_capacity(CHUNK_BYTES);
    while template.len() + line.len() <= CHUNK_BYTES {
        template.extend_from_slice(line);
    }
    let count = TOTAL_BYTES / template.len();
    futures_util::stream::iter((0..count).map(move |_| Ok(template.clone())))
}

struct Gigabyte;

#[async_trait]
impl Tool for Gigabyte {
    type Args = serde_json::Map<String, serde_json::Value>;

    fn name(&self) -> Cow<'static, str> {
        "gigabyte".into()
    }

    fn description(&self) -> Cow<'static, str> {
        "Streams 1 GiB of log lines.".into()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::new().with_read_only(true)
    }

    async fn call(&self, _args: Self::Args, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::stream(chunks()))
    }
}

fn gib_per_s(bytes: usize, elapsed: Duration) -> f64 {
    bytes as f64 / f64::from(1u32 << 30) / elapsed.as_secs_f64()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|arg| arg == "--list") {
        return Ok(());
    }
    let runtime = tokio::runtime::Runtime::new()?;
    let artifacts = tempfile::tempdir()?;
    let before = peak_resident_mib();

    // Baseline: the same stream, each chunk made and read once (its newlines counted).
    let (baseline, bytes, newlines) = runtime.block_on(async {
        let started = Instant::now();
        let mut stream = std::pin::pin!(chunks());
        let (mut bytes, mut newlines) = (0, 0);
        while let Some(chunk) = futures_util::StreamExt::next(&mut stream).await {
            let chunk = chunk.unwrap_or_default();
            bytes += chunk.len();
            newlines += memchr::memchr_iter(b'\n', &chunk).count();
        }
        (started.elapsed(), bytes, newlines)
    });

    let store =
        DirStore::open(artifacts.path().join("artifacts"))?.with_retention(Retention::forever());
    let registry = Registry::builder()
        .tool(Gigabyte)
        .artifacts(store)
        .build()?;
    let started = Instant::now();
    let result = runtime.block_on(async {
        registry
            .turn()
            .execute([ToolCall::new("bench", "gigabyte", json!({}))])
            .await
            .remove(0)
    });
    let streamed = started.elapsed();
    let peak = peak_resident_mib();

    println!("a custom tool streaming {bytes} bytes through the registry");
    println!(
        "  baseline, the stream read once ({newlines} newlines): {baseline:>10.2?}  {:.2} GiB/s",
        gib_per_s(bytes, baseline)
    );
    println!(
        "  through the registry, spooled to a DirStore: {streamed:>10.2?}  {:.2} GiB/s",
        gib_per_s(bytes, streamed)
    );
    println!("  peak resident memory of this process: {peak:.1} MiB (before: {before:.1} MiB)");
    println!(
        "  result: {} chars shown of {} ({} lines), artifact {:?}",
        result.content_chars(),
        result.meta.original_chars,
        result.meta.original_lines,
        result
            .meta
            .artifact
            .as_ref()
            .map(toolsmith::artifacts::ArtifactId::as_str)
    );
    Ok(())
}
