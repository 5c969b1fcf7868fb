//! Shrinking an old tool result, in one place: microcompaction's truncation and overflow
//! recovery cut a result already in the history with the standard marker, naming the artifact
//! its earlier marker named, so the whole output stays reachable however often it is cut.

use crate::artifacts::READ_ARTIFACT;
use crate::trim::{self, Continuation, FullOutput, MarkedFull, Totals, TrimStyle};

/// `text` (a result's text, perhaps cut before) cut into `allowance` chars, marker included,
/// keeping `head_ratio` of the room from the top; `None` when it already fits.
pub(super) fn shrink(text: &str, allowance: usize, head_ratio: f64) -> Option<String> {
    let artifact = earlier_artifact(text);
    // The cut every path makes: errors and tracebacks outlive the passing lines around them
    // (found by the patterns: the model read this result whole when it came, and reading every
    // line's shape again, in every old result, would cost a long history more than its cut).
    let trimmed = trim::fit_with(
        text,
        allowance,
        &TrimStyle::head_tail(head_ratio)
            .keeping_what_matters()
            .by_patterns_alone(),
        &continuation(artifact.as_deref()),
    );
    trimmed
        .is_trimmed()
        .then(|| trimmed.into_text().into_owned())
}

/// The allowance that keeps `content` chars of `text` beside a marker (at most `slack` chars of
/// marker): what microcompaction gives a result it truncates to a head and a tail.
pub(super) fn allowance_for(text: &str, content: usize, slack: usize) -> usize {
    let artifact = earlier_artifact(text);
    let reserve = trim::marker_reserve(Totals::of(text), &continuation(artifact.as_deref()));
    content + reserve.min(slack)
}

/// What a new marker says of the full output: the artifact an earlier cut named, read with
/// `read_artifact`, or that none was kept.
fn continuation(artifact: Option<&str>) -> Continuation<'_> {
    Continuation::from(match artifact {
        Some(id) => FullOutput::Stored {
            id,
            reader: READ_ARTIFACT,
        },
        None => FullOutput::NotKept,
    })
}

/// The artifact an earlier cut of `text` named, if any.
pub(super) fn earlier_artifact(text: &str) -> Option<String> {
    match trim::find_marker(text)?.full {
        MarkedFull::Stored { id, .. } => Some(id),
        _ => None,
    }
}
