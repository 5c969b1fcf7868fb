//! What an HTTP endpoint did, counted for Prometheus: calls, errors and latency per server and
//! tool, the chars each result brought and the chars sent on (and so the chars kept out of the
//! context window), results cut, artifacts written and read back, sessions, upstream restarts,
//! and requests refused by the limits. Served as Prometheus text at `GET /metrics` on the
//! endpoint's listener, behind its token.
//!
//! Cardinality is bounded: a server's name comes from the operator's configuration; a tool's name
//! comes from a server, so at most [`MetricsOptions::max_tools`] distinct series of calls are kept
//! and every call past them counts under the tool `_other`; principals are a label only when
//! asked for ([`MetricsOptions::by_principal`]), and they come from the operator's tokens.
//!
//! Recording a call looks its series up once (a map under a lock, the strings of its labels
//! hashed) and adds to atomic counters: a few hundred nanoseconds (BENCHMARKS.md).

// Sessions and limits are the HTTP front's.
#![cfg_attr(not(feature = "mcp-http"), allow(dead_code))]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus::{
    Encoder as _, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    Opts, Registry, TextEncoder,
};

use crate::sync::lock;

/// The tool label of calls past the most series kept ([`MetricsOptions::max_tools`]).
pub const OTHER_TOOL: &str = "_other";

/// The seconds a call's latency histogram counts up to, bucket by bucket.
const SECONDS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];

/// Which figures an endpoint keeps, and how many series at most.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MetricsOptions {
    /// Whether `GET /metrics` answers (on by default). The figures are kept either way.
    pub enabled: bool,
    /// The most `(server, tool[, principal])` series of calls (1,000 by default); calls past
    /// them count under the tool [`OTHER_TOOL`].
    pub max_tools: usize,
    /// Whether calls carry a `principal` label, the principal of the token that opened the
    /// session (off by default: one series per principal and tool).
    pub by_principal: bool,
}

impl Default for MetricsOptions {
    fn default() -> Self {
        MetricsOptions {
            enabled: true,
            max_tools: 1_000,
            by_principal: false,
        }
    }
}

impl MetricsOptions {
    /// Whether `GET /metrics` answers.
    #[must_use]
    pub fn with_enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    /// At most `series` series of calls; calls past them count under [`OTHER_TOOL`].
    #[must_use]
    pub fn with_max_tools(mut self, series: usize) -> Self {
        self.max_tools = series;
        self
    }

    /// Whether calls carry a `principal` label.
    #[must_use]
    pub fn with_by_principal(mut self, by_principal: bool) -> Self {
        self.by_principal = by_principal;
        self
    }
}

/// How a call ended, as the `outcome` label says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A result that is not an error.
    Ok,
    /// A result with `isError` (the tool's error, a timeout, a server that ended).
    Error,
    /// No result: a JSON-RPC error (an unknown tool, a server's protocol error).
    Failed,
}

impl Outcome {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::Failed => "failed",
        }
    }
}

/// One call, as it is counted.
#[derive(Debug, Clone)]
pub(crate) struct Call<'a> {
    pub(crate) server: &'a str,
    pub(crate) tool: &'a str,
    pub(crate) principal: Option<&'a str>,
    pub(crate) outcome: Outcome,
    pub(crate) elapsed: Duration,
    /// The chars of the result as the tool (or server) gave it.
    pub(crate) received_chars: u64,
    /// The chars sent on to the client.
    pub(crate) sent_chars: u64,
    pub(crate) cut: bool,
    pub(crate) artifacts: usize,
}

/// Why a session ended, as the `reason` label says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionEnd {
    /// Idle past the timeout.
    Expired,
    /// The least recently used idle one, ended to make room at the limit.
    Evicted,
    /// Its client sent `DELETE`.
    Deleted,
}

/// Why a request was refused by the limits, as the `reason` label says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limited {
    /// Over the principal's requests per minute.
    Rate,
    /// Over the principal's calls at once.
    Concurrency,
    /// Over the endpoint's calls at once.
    Global,
}

/// What a session counts into: the endpoint's figures, and the principal it serves when calls
/// carry one.
#[derive(Debug, Clone)]
pub(crate) struct Telemetry {
    pub(crate) metrics: Metrics,
    pub(crate) principal: Option<Arc<str>>,
}

/// The series of one `(server, tool[, principal])`, looked up once per call.
struct Series {
    ok: IntCounter,
    error: IntCounter,
    failed: IntCounter,
    seconds: Histogram,
    received: IntCounter,
    sent: IntCounter,
    kept_out: IntCounter,
    cut: IntCounter,
}

/// The figures of one endpoint, and the Prometheus registry they are gathered from. Cheap to
/// clone: clones count into the same figures.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

struct Inner {
    options: MetricsOptions,
    registry: Registry,
    calls: IntCounterVec,
    seconds: HistogramVec,
    received: IntCounterVec,
    sent: IntCounterVec,
    kept_out: IntCounterVec,
    cut: IntCounterVec,
    artifacts_written: IntCounter,
    artifacts_read: IntCounter,
    sessions_opened: IntCounter,
    sessions_open: IntGauge,
    sessions_ended: IntCounterVec,
    restarts: IntCounterVec,
    limited: IntCounterVec,
    series: Mutex<HashMap<String, Arc<Series>>>,
    told_over: AtomicBool,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("options", &self.inner.options)
            .field("series", &lock(&self.inner.series).len())
            .finish()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new(MetricsOptions::default())
    }
}

/// `made` (a metric of a constant, valid name), registered once in `registry`: neither step
/// fails for the metrics of this module, whose names and labels are fixed.
fn registered<M>(registry: &Registry, made: prometheus::Result<M>) -> M
where
    M: prometheus::core::Collector + Clone + 'static,
{
    let metric = made.expect("a metric of a constant, valid name");
    registry
        .register(Box::new(metric.clone()))
        .expect("each metric registered once");
    metric
}

fn counter(registry: &Registry, name: &str, help: &str) -> IntCounter {
    registered(registry, IntCounter::new(name, help))
}

fn counters(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    registered(registry, IntCounterVec::new(Opts::new(name, help), labels))
}

impl Metrics {
    /// Figures kept as `options` say, every one at zero.
    pub fn new(options: MetricsOptions) -> Self {
        let registry = Registry::new();
        let call_labels: &[&str] = if options.by_principal {
            &["server", "tool", "principal"]
        } else {
            &["server", "tool"]
        };
        let with_outcome: Vec<&str> = call_labels
            .iter()
            .copied()
            .chain(std::iter::once("outcome"))
            .collect();
        let calls = counters(
            &registry,
            "toolsmith_calls_total",
            "Tool calls, by how they ended: ok, error (a result with isError) or failed (no result)",
            &with_outcome,
        );
        let seconds = registered(
            &registry,
            HistogramVec::new(
                HistogramOpts::new(
                    "toolsmith_call_duration_seconds",
                    "How long a tool call took, from the request read to the answer written",
                )
                .buckets(SECONDS.to_vec()),
                call_labels,
            ),
        );
        let received = counters(
            &registry,
            "toolsmith_result_chars_received_total",
            "Chars of tool results as the tools (or upstream servers) gave them",
            call_labels,
        );
        let sent = counters(
            &registry,
            "toolsmith_result_chars_sent_total",
            "Chars of tool results sent on to the client, markers and notes included",
            call_labels,
        );
        let kept_out = counters(
            &registry,
            "toolsmith_result_chars_kept_out_total",
            "Chars received and not sent on: kept out of the context window (as artifacts)",
            call_labels,
        );
        let cut = counters(
            &registry,
            "toolsmith_results_cut_total",
            "Tool results cut or with something left out, the rest kept as an artifact",
            call_labels,
        );
        let artifacts_written = counter(
            &registry,
            "toolsmith_artifacts_written_total",
            "Artifacts written: full outputs and left-out media or blocks",
        );
        let artifacts_read = counter(
            &registry,
            "toolsmith_artifact_reads_total",
            "Pages of artifacts read back with read_artifact",
        );
        let sessions_opened = counter(
            &registry,
            "toolsmith_sessions_opened_total",
            "Client sessions opened",
        );
        let sessions_open = registered(
            &registry,
            IntGauge::new("toolsmith_sessions_open", "Client sessions open now"),
        );
        let sessions_ended = counters(
            &registry,
            "toolsmith_sessions_ended_total",
            "Client sessions ended, by why: expired (idle), evicted (room for a new one), deleted",
            &["reason"],
        );
        let restarts = counters(
            &registry,
            "toolsmith_upstream_restarts_total",
            "Upstream servers started again after they ended mid-session",
            &["server"],
        );
        let limited = counters(
            &registry,
            "toolsmith_requests_limited_total",
            "Requests answered 429, by the limit: rate, concurrency (a principal's), global",
            &["reason"],
        );
        Metrics {
            inner: Arc::new(Inner {
                options,
                registry,
                calls,
                seconds,
                received,
                sent,
                kept_out,
                cut,
                artifacts_written,
                artifacts_read,
                sessions_opened,
                sessions_open,
                sessions_ended,
                restarts,
                limited,
                series: Mutex::default(),
                told_over: AtomicBool::new(false),
            }),
        }
    }

    /// The options the figures are kept with.
    pub fn options(&self) -> &MetricsOptions {
        &self.inner.options
    }

    /// The figures in Prometheus' text format (version 0.0.4), as `GET /metrics` serves them.
    pub fn render(&self) -> String {
        let mut text = Vec::new();
        // Writing into a Vec fails only for a metric that cannot be encoded, which the
        // registry's checks rule out.
        let _ = TextEncoder::new().encode(&self.inner.registry.gather(), &mut text);
        String::from_utf8(text).unwrap_or_default()
    }

    /// The registry the figures are in, to gather them with others or serve them elsewhere.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The series of a call, created on first use; past the most kept, the `_other` tool's.
    fn series(&self, server: &str, tool: &str, principal: Option<&str>) -> Arc<Series> {
        let inner = &*self.inner;
        let principal = principal.filter(|_| inner.options.by_principal);
        let mut key =
            String::with_capacity(server.len() + tool.len() + 2 + principal.map_or(0, str::len));
        key.push_str(server);
        key.push('\0');
        key.push_str(tool);
        if let Some(principal) = principal {
            key.push('\0');
            key.push_str(principal);
        }
        let mut series = lock(&inner.series);
        if let Some(found) = series.get(&key) {
            return Arc::clone(found);
        }
        let tool = if series.len() >= inner.options.max_tools {
            if !inner.told_over.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "metrics: more than {} series of tool calls; the calls of further tools \
                     count under the tool `{OTHER_TOOL}`",
                    inner.options.max_tools
                );
            }
            key = format!("{server}\0{OTHER_TOOL}\0{}", principal.unwrap_or_default());
            if let Some(found) = series.get(&key) {
                return Arc::clone(found);
            }
            OTHER_TOOL
        } else {
            tool
        };
        // `principal` is `None` unless calls carry the label; one without a principal has "".
        let mut labels = vec![server, tool];
        if inner.options.by_principal {
            labels.push(principal.unwrap_or_default());
        }
        let outcome = |outcome: Outcome| {
            let mut labels = labels.clone();
            labels.push(outcome.label());
            inner.calls.with_label_values(&labels)
        };
        let made = Arc::new(Series {
            ok: outcome(Outcome::Ok),
            error: outcome(Outcome::Error),
            failed: outcome(Outcome::Failed),
            seconds: inner.seconds.with_label_values(&labels),
            received: inner.received.with_label_values(&labels),
            sent: inner.sent.with_label_values(&labels),
            kept_out: inner.kept_out.with_label_values(&labels),
            cut: inner.cut.with_label_values(&labels),
        });
        series.insert(key, Arc::clone(&made));
        made
    }

    /// Counts one call.
    pub(crate) fn call(&self, call: &Call<'_>) {
        let series = self.series(call.server, call.tool, call.principal);
        match call.outcome {
            Outcome::Ok => series.ok.inc(),
            Outcome::Error => series.error.inc(),
            Outcome::Failed => series.failed.inc(),
        }
        series.seconds.observe(call.elapsed.as_secs_f64());
        series.received.inc_by(call.received_chars);
        series.sent.inc_by(call.sent_chars);
        series
            .kept_out
            .inc_by(call.received_chars.saturating_sub(call.sent_chars));
        if call.cut {
            series.cut.inc();
        }
        if call.artifacts > 0 {
            self.inner.artifacts_written.inc_by(call.artifacts as u64);
        }
    }

    /// Counts a page of an artifact read back.
    pub(crate) fn artifact_read(&self) {
        self.inner.artifacts_read.inc();
    }

    /// Counts a session opened.
    pub(crate) fn session_opened(&self) {
        self.inner.sessions_opened.inc();
        self.inner.sessions_open.inc();
    }

    /// Counts a session ended by the endpoint or its client.
    pub(crate) fn session_ended(&self, why: SessionEnd) {
        let reason = match why {
            SessionEnd::Expired => "expired",
            SessionEnd::Evicted => "evicted",
            SessionEnd::Deleted => "deleted",
        };
        self.inner.sessions_ended.with_label_values(&[reason]).inc();
        self.inner.sessions_open.dec();
    }

    /// Counts an upstream server started again mid-session.
    pub(crate) fn restart(&self, server: &str) {
        self.inner.restarts.with_label_values(&[server]).inc();
    }

    /// Counts a request refused by a limit.
    pub(crate) fn limited(&self, why: Limited) {
        let reason = match why {
            Limited::Rate => "rate",
            Limited::Concurrency => "concurrency",
            Limited::Global => "global",
        };
        self.inner.limited.with_label_values(&[reason]).inc();
    }

    /// Counts one call as the relay would, for the benchmark of what counting costs; not public
    /// API.
    #[doc(hidden)]
    pub fn __count_call(
        &self,
        server: &str,
        tool: &str,
        elapsed: Duration,
        received: u64,
        sent: u64,
    ) {
        self.call(&Call {
            server,
            tool,
            principal: None,
            outcome: Outcome::Ok,
            elapsed,
            received_chars: received,
            sent_chars: sent,
            cut: received > sent,
            artifacts: usize::from(received > sent),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call<'a>(server: &'a str, tool: &'a str, principal: Option<&'a str>) -> Call<'a> {
        Call {
            server,
            tool,
            principal,
            outcome: Outcome::Ok,
            elapsed: Duration::from_millis(30),
            received_chars: 1_000,
            sent_chars: 400,
            cut: true,
            artifacts: 1,
        }
    }

    #[test]
    fn a_call_counts_its_chars_kept_out_and_its_latency() {
        let metrics = Metrics::default();
        metrics.call(&call("fs", "read", None));
        metrics.call(&Call {
            outcome: Outcome::Error,
            received_chars: 10,
            sent_chars: 10,
            cut: false,
            artifacts: 0,
            ..call("fs", "read", None)
        });
        let text = metrics.render();
        for line in [
            r#"toolsmith_calls_total{outcome="ok",server="fs",tool="read"} 1"#,
            r#"toolsmith_calls_total{outcome="error",server="fs",tool="read"} 1"#,
            r#"toolsmith_result_chars_received_total{server="fs",tool="read"} 1010"#,
            r#"toolsmith_result_chars_sent_total{server="fs",tool="read"} 410"#,
            r#"toolsmith_result_chars_kept_out_total{server="fs",tool="read"} 600"#,
            r#"toolsmith_results_cut_total{server="fs",tool="read"} 1"#,
            r#"toolsmith_call_duration_seconds_bucket{server="fs",tool="read",le="0.05"} 2"#,
            r#"toolsmith_call_duration_seconds_bucket{server="fs",tool="read",le="0.025"} 0"#,
            "toolsmith_artifacts_written_total 1",
        ] {
            assert!(text.contains(line), "no `{line}` in:\n{text}");
        }
    }

    #[test]
    fn tools_past_the_most_series_count_as_other_and_principals_only_when_asked() {
        let metrics = Metrics::new(MetricsOptions {
            max_tools: 2,
            ..MetricsOptions::default()
        });
        for tool in ["a", "b", "c", "d"] {
            metrics.call(&call("s", tool, Some("alice")));
        }
        let text = metrics.render();
        assert!(text.contains(r#"toolsmith_calls_total{outcome="ok",server="s",tool="b"} 1"#));
        assert!(text.contains(r#"toolsmith_calls_total{outcome="ok",server="s",tool="_other"} 2"#));
        assert!(!text.contains(r#"tool="c""#), "{text}");
        assert!(!text.contains("alice"), "{text}");

        let metrics = Metrics::new(MetricsOptions {
            by_principal: true,
            ..MetricsOptions::default()
        });
        metrics.call(&call("s", "a", Some("alice")));
        metrics.call(&call("s", "a", Some("bob")));
        let text = metrics.render();
        assert!(text.contains(
            r#"toolsmith_calls_total{outcome="ok",principal="alice",server="s",tool="a"} 1"#
        ));
        assert!(text.contains(
            r#"toolsmith_calls_total{outcome="ok",principal="bob",server="s",tool="a"} 1"#
        ));
    }

    #[test]
    fn sessions_restarts_and_limits_are_counted() {
        let metrics = Metrics::default();
        metrics.session_opened();
        metrics.session_opened();
        metrics.session_ended(SessionEnd::Expired);
        metrics.restart("git");
        metrics.limited(Limited::Rate);
        metrics.artifact_read();
        let text = metrics.render();
        for line in [
            "toolsmith_sessions_opened_total 2",
            "toolsmith_sessions_open 1",
            r#"toolsmith_sessions_ended_total{reason="expired"} 1"#,
            r#"toolsmith_upstream_restarts_total{server="git"} 1"#,
            r#"toolsmith_requests_limited_total{reason="rate"} 1"#,
            "toolsmith_artifact_reads_total 1",
        ] {
            assert!(text.contains(line), "no `{line}` in:\n{text}");
        }
    }
}
