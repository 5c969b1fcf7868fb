//! `run_command` on a command that prints 1 GiB (`cat` of a 1 GiB file): the process's peak
//! resident memory, and the capture's throughput against `cat file > /dev/null`, in one run.
//!
//! Run: `cargo bench --bench run_command` (writes a 1 GiB file and spools 1 GiB to an artifact
//! under the system temp dir, and removes both after). Reads `VmHWM` from `/proc/self/status`,
//! so Linux only.

mod common;

use std::time::{Duration, Instant};

use common::peak_resident_mib;
use serde_json::json;
use toolsmith::artifacts::Retention;
use toolsmith::{DirStore, Registry, ToolCall};
use toolsmith_std::Sandbox;

const FILE_BYTES: usize = 1 << 30;

fn gib_per_s(elapsed: Duration) -> f64 {
    1.0 / elapsed.as_secs_f64()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|arg| arg == "--list") {
        return Ok(()); // `cargo bench -- --list` asks what benches exist
    }
    let workspace = tempfile::tempdir()?;
    let artifacts_dir = tempfile::tempdir()?;
    let runtime = tokio::runtime::Runtime::new()?;
    {
        use std::io::Write as _;
        let mut file =
            std::io::BufWriter::new(std::fs::File::create(workspace.path().join("big.log"))?);
        let mut written = 0;
        let mut line = 0u64;
        while written < FILE_BYTES {
            let text = format!(
                "{line:>12} compiling crate_{} v0.1.0 (build script)\n",
                line % 97
            );
            file.write_all(text.as_bytes())?;
            written += text.len();
            line += 1;
        }
    }
    let before = peak_resident_mib();

    // Baseline: the same command, its output thrown away by the shell (the file is in the
    // page cache by now, as it is for the runs below).
    let baseline = {
        let started = Instant::now();
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg("cat big.log > /dev/null")
            .current_dir(workspace.path())
            .status()?;
        assert!(status.success());
        started.elapsed()
    };

    // A second baseline: the same output through a pipe, read by another process, which is
    // what any capture of a command's output has to do.
    let piped = {
        let started = Instant::now();
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg("cat big.log | cat > /dev/null")
            .current_dir(workspace.path())
            .status()?;
        assert!(status.success());
        started.elapsed()
    };

    let run = |store: Option<DirStore>| -> Result<(Duration, String), Box<dyn std::error::Error>> {
        let mut builder =
            toolsmith_std::register(Registry::builder()).state(Sandbox::new(workspace.path())?);
        if let Some(store) = store {
            builder = builder.artifacts(store);
        }
        let registry = builder.build()?;
        let started = Instant::now();
        let results = runtime.block_on(async {
            registry
                .turn()
                .execute([ToolCall::new(
                    "bench",
                    "run_command",
                    json!({ "command": "cat big.log", "timeout_secs": 600 }),
                )])
                .await
        });
        Ok((started.elapsed(), results[0].content.clone()))
    };

    let (captured, content) = run(None)?;
    let marker = content
        .lines()
        .find(|line| line.starts_with("[toolsmith:"))
        .unwrap_or("(no marker)")
        .to_owned();
    let store = DirStore::open(artifacts_dir.path().join("artifacts"))?
        .with_retention(Retention::forever());
    let (spooled, _) = run(Some(store))?;
    let peak = peak_resident_mib();

    println!("run_command printing 1 GiB (`cat big.log`, a 1 GiB file)");
    println!(
        "  baseline `cat big.log > /dev/null`:  {baseline:>10.2?}  {:.2} GiB/s",
        gib_per_s(baseline)
    );
    println!(
        "  baseline `cat big.log | cat > /dev/null`: {piped:>10.2?}  {:.2} GiB/s",
        gib_per_s(piped)
    );
    println!(
        "  run_command, capture only:           {captured:>10.2?}  {:.2} GiB/s",
        gib_per_s(captured)
    );
    println!(
        "  run_command, capture + 1 GiB spool:  {spooled:>10.2?}  {:.2} GiB/s",
        gib_per_s(spooled)
    );
    println!(
        "  peak resident memory of this process: {peak:.1} MiB (before the runs: {before:.1} MiB)"
    );
    println!("  marker: {marker}");
    Ok(())
}
