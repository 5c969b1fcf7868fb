//! A cap in tokens over the fitting in chars: fitted again smaller while over, larger while
//! well under, each text stored once whatever the tries.

use std::sync::Arc;

use serde_json::Value;

use super::Fitting;
use super::blocks::visible_size;
use super::store::Stored;
use crate::artifacts::ArtifactId;
use crate::tokens::{TokenCap, TokenCounter, Tries, Within};

/// Holds a fitting to a cap in tokens: the answer (`sample`, its JSON, which counts at least
/// what a reader sees of it) is measured only until it is over; then `fit` fits it in chars to
/// what the cap holds, and what a reader sees of it (`seen`) is counted, fitted again smaller
/// while over or larger while well under ([`TokenCap::next_allowance`]). Each text is stored
/// once, whatever the tries. What was fitted, its tokens, and every artifact the tries wrote (a
/// try at another size may have written one the fitting sent does not name: blocks left out
/// past half of a different cap).
pub(super) async fn hold_tokens<T, E, Fit>(
    fitting: &Fitting,
    cap: &TokenCap,
    sample: &str,
    mut fit: impl FnMut(Fitting) -> Fit,
    seen: impl Fn(&T) -> usize,
) -> Result<(T, usize, Vec<ArtifactId>), E>
where
    Fit: Future<Output = Result<T, E>>,
{
    let over = match cap.measure(sample) {
        Within::Fits(_) => None,
        Within::Over { chars, tokens } => Some((chars, tokens)),
    };
    let stored = Arc::new(Stored::default());
    let mut tries = Tries::new(cap, fitting.cap, over);
    loop {
        let attempt = Fitting {
            cap: tries.allowance(),
            marker_token_cap: tries.by_tokens().then_some(cap.max()),
            stored: Some(Arc::clone(&stored)),
            ..fitting.clone()
        };
        let fitted = fit(attempt).await?;
        let sent = seen(&fitted);
        if let Some((fitted, sent)) = tries.sent(fitted, sent) {
            return Ok((fitted, sent, stored.written()));
        }
    }
}

/// The tokens a reader sees of a fitted result: its text blocks' text, the JSON of blocks that
/// are neither text nor media, and the `structuredContent`'s JSON.
pub(super) fn tokens_seen(result: &Value, counter: &dyn TokenCounter) -> usize {
    let count = |text: &str| counter.count(text);
    let blocks = result.get("content").and_then(Value::as_array);
    let content: usize = blocks
        .into_iter()
        .flatten()
        .map(|block| visible_size(block, count))
        .sum();
    let structure = result
        .get("structuredContent")
        .map_or(0, |structure| count(&structure.to_string()));
    content + structure
}
