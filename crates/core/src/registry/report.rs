//! Report: what the batch's results were, to the calls' spans and the registry's subscribers.

use tokio::sync::broadcast;

use super::result::ToolResult;
use crate::tool::{CallSummary, Event};

/// Records each result's figures on its span and sends one [`Event::CallFinished`] per call
/// when anyone subscribed (events are not even built otherwise: they cost allocations on the
/// hot path). Returns the chars of all results, which the turn counts against its budget.
pub(super) fn report(
    results: &[ToolResult],
    spans: &[tracing::Span],
    events: &broadcast::Sender<Event>,
) -> usize {
    let mut chars = 0;
    for (result, span) in results.iter().zip(spans) {
        span.record("original_chars", result.meta.original_chars);
        span.record("trimmed", result.meta.trimmed());
        span.record("is_error", result.is_error());
        if let Some(artifact) = &result.meta.artifact {
            span.record("artifact", artifact.as_str());
        }
        chars += result.content_chars();
        if events.receiver_count() == 0 {
            continue; // nobody listens: build no event
        }
        let _ = events.send(Event::CallFinished(CallSummary {
            call_id: result.call_id.as_str().into(),
            tool: result.tool.as_str().into(),
            duration: result.meta.duration,
            allowance: result.meta.allowance,
            original_chars: result.meta.original_chars,
            trimmed: result.meta.trimmed(),
            artifact: result.meta.artifact.clone(),
            is_error: result.is_error(),
        }));
    }
    chars
}
