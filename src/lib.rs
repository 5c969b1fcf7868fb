//! Fixture tools shared by the workspace's examples, integration tests and benchmarks.
//!
//! Not published. Each tool does one predictable thing, so a test can say exactly what the
//! registry must make of it.

#![forbid(unsafe_code)]

pub mod s3;

use std::borrow::Cow;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use toolsmith::tool::{ToolAnnotations, ToolLimits};
use toolsmith::{Tool, ToolContext, ToolError, ToolOutput, async_trait};

/// Arguments of [`Emit`].
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EmitArgs {
    /// How many lines to emit.
    pub lines: usize,
    /// Text of each line (its number is appended).
    #[serde(default = "default_text")]
    pub text: String,
}

fn default_text() -> String {
    "line".to_owned()
}

/// Emits `lines` numbered lines: `line 1`, `line 2`, …
///
/// Its results are cut by position (no folds, no salient lines): the budget tests that use it
/// count what a head and a tail keep, and every one of its lines is alike.
#[derive(Debug, Default, Clone)]
pub struct Emit {
    /// The tool's own `max_result_chars`.
    pub max_result_chars: Option<usize>,
    /// The tool's own `max_result_lines`.
    pub max_result_lines: Option<usize>,
    /// The name to register under (default `emit`).
    pub name: Option<&'static str>,
}

#[async_trait]
impl Tool for Emit {
    type Args = EmitArgs;

    fn name(&self) -> Cow<'static, str> {
        self.name.unwrap_or("emit").into()
    }

    fn description(&self) -> Cow<'static, str> {
        "Emits numbered lines.".into()
    }

    /// Side-effect free: its calls may run concurrently.
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::new().with_read_only(true)
    }

    fn limits(&self) -> ToolLimits {
        ToolLimits::default()
            .with_max_result_chars(self.max_result_chars)
            .with_trim(
                toolsmith::trim::TrimStyle::default()
                    .with_max_lines(self.max_result_lines)
                    .with_folding(false)
                    .with_salience(toolsmith::trim::Salience::Off),
            )
    }

    async fn call(&self, args: EmitArgs, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let mut out = String::new();
        for i in 1..=args.lines {
            out.push_str(&args.text);
            out.push(' ');
            out.push_str(&i.to_string());
            out.push('\n');
        }
        Ok(out.into())
    }
}

/// Arguments of [`Sleep`].
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SleepArgs {
    /// Milliseconds to sleep.
    pub ms: u64,
}

/// Sleeps (on Tokio's clock, so paused-time tests advance it instantly), then says so.
#[derive(Debug, Default, Clone)]
pub struct Sleep {
    /// The tool's own timeout.
    pub timeout: Option<Duration>,
}

#[async_trait]
impl Tool for Sleep {
    type Args = SleepArgs;

    fn name(&self) -> Cow<'static, str> {
        "sleep".into()
    }

    fn description(&self) -> Cow<'static, str> {
        "Sleeps for a while.".into()
    }

    /// Side-effect free: its calls may run concurrently.
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::new().with_read_only(true)
    }

    fn limits(&self) -> ToolLimits {
        ToolLimits::default().with_timeout(self.timeout)
    }

    async fn call(&self, args: SleepArgs, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        tokio::time::sleep(Duration::from_millis(args.ms)).await;
        Ok(format!("slept {} ms", args.ms).into())
    }
}

/// Arguments of [`Panic`].
#[derive(Debug, Deserialize, JsonSchema)]
pub struct PanicArgs {
    /// The panic message.
    pub message: String,
}

/// Panics with the given message.
#[derive(Debug, Default, Clone)]
pub struct Panic;

#[async_trait]
impl Tool for Panic {
    type Args = PanicArgs;

    fn name(&self) -> Cow<'static, str> {
        "panic".into()
    }

    fn description(&self) -> Cow<'static, str> {
        "Panics.".into()
    }

    /// Side-effect free: its calls may run concurrently.
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::new().with_read_only(true)
    }

    async fn call(&self, args: PanicArgs, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        panic!("{}", args.message)
    }
}

/// Arguments of [`Noop`].
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoopArgs {}

/// Returns `ok` at once.
#[derive(Debug, Default, Clone)]
pub struct Noop;

#[async_trait]
impl Tool for Noop {
    type Args = NoopArgs;

    fn name(&self) -> Cow<'static, str> {
        "noop".into()
    }

    fn description(&self) -> Cow<'static, str> {
        "Does nothing.".into()
    }

    /// Side-effect free: its calls may run concurrently.
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::new().with_read_only(true)
    }

    async fn call(&self, _args: NoopArgs, _cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok("ok".into())
    }
}

/// The peak resident size of this process in bytes (`VmHWM` of `/proc/self/status`; Linux), for
/// a memory test alone in its binary.
///
/// # Panics
///
/// When `/proc/self/status` cannot be read or has no `VmHWM` line (not Linux).
pub fn peak_resident_bytes() -> u64 {
    status_kib(None, "VmHWM:").expect("a VmHWM line in /proc/self/status") * 1024
}

/// A figure in KiB of `/proc/<pid>/status` (this process's for `None`), by its field with the
/// colon (`VmHWM:` the peak resident set, `VmRSS:` the current one): the one reader of it for
/// the tests and benches that measure memory. `None` where the file or the field is missing
/// (a process that ended; not Linux).
pub fn status_kib(pid: Option<u32>, field: &str) -> Option<u64> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".to_owned(),
    };
    std::fs::read_to_string(path)
        .ok()?
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
}
