//! Fit: every call's result into its final allowance. The budget is settled over what the calls
//! produced (what the small ones left goes to the large ones); the full output of every result
//! that will be cut is stored as an artifact first (a stream's was spooled as it came); then
//! each result is cut, JSON as JSON and text by its lines, with the marker naming the artifact.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Map;

use super::Registry;
use super::facts;
use super::record::{Body, CallRecord, Produced, Stage};
use super::result::{MediaLeftOut, ResultMeta, TokensSent, ToolResult};
use crate::artifacts::{
    ArtifactError, ArtifactId, READ_ARTIFACT, SpoolSlot, store_media, store_text,
};
use crate::budget::BudgetPolicy;
use crate::tokens::{TokenCap, Within};
use crate::tool::{ErrorKind, Event, Media, OverCap, ToolError, left_out_note};
use crate::trim::{self, Continuation, FullOutput, Totals, TrimStyle};

/// A stored artifact and the bytes its cap left out, or why it could not be stored.
type Committed = Result<(ArtifactId, u64), ArtifactError>;

/// Where the full output of a result that will be cut is being stored.
enum Storing {
    /// A text, stored by a blocking task that hands it back.
    Text(tokio::task::JoinHandle<(String, Committed)>),
    /// A stream, spooled as it came.
    Spooled(SpoolSlot),
}

/// A call's content and figures, between settling and cutting.
struct Settled {
    record: CallRecord,
    body: Body,
    error_kind: Option<ErrorKind>,
    tool_meta: Map<String, serde_json::Value>,
    /// The structure the tool stated beside its text.
    beside: Option<Box<serde_json::Value>>,
    totals: Totals,
    style: TrimStyle,
    storing: Option<Storing>,
    /// The media shown, within the limits.
    media: Vec<Media>,
    /// The media left out, and the note naming each (one a line).
    left_out: Vec<MediaLeftOut>,
    notes: String,
    /// What the body may have: the allowance less the notes' room.
    body_allowance: usize,
    /// The cap in tokens of the result, if any, and the figures of the part of the text
    /// counted before it went over the cap, when it did.
    tokens: Option<(TokenCap, Option<(usize, usize)>)>,
    /// What the structure beside the text may have, when it shares the allowance with a text
    /// that repeats it.
    structure_allowance: Option<usize>,
}

/// Settles the final allowances and fits every call's result into its own, in call order.
pub(super) async fn fit(
    records: Vec<CallRecord>,
    registry: &Registry,
    budget: &BudgetPolicy,
    batch_budget: usize,
) -> Vec<ToolResult> {
    let mut settled: Vec<Settled> = records
        .into_iter()
        .map(|r| content_of(r, registry))
        .collect();
    place_media(&mut settled, registry).await;
    let demands: Vec<_> = settled
        .iter()
        .map(|s| s.record.demand(s.totals.chars + notes_room(&s.notes)))
        .collect();
    let allowances = budget.settle(batch_budget, &demands);

    // Store the full text of every result that will be cut, concurrently, off the runtime's
    // threads; each text comes back from its blocking task untouched. A stream too long to keep
    // was spooled as it came: its artifact is committed by now or soon.
    let sending = registry.inner.sending;
    for (s, allowance) in settled.iter_mut().zip(allowances) {
        s.record.allowance = allowance;
        s.body_allowance = allowance.saturating_sub(notes_room(&s.notes));
        if sending.structure_shares {
            share_with_structure(s);
        }
        // A text over a cap in tokens is counted only until it is over.
        let over_tokens = match (&mut s.tokens, &s.body) {
            (Some((cap, over)), Body::Text(text) | Body::Json(text)) => {
                if let Within::Over { chars, tokens } = cap.measure(text) {
                    *over = Some((chars, tokens));
                }
                over.is_some()
            }
            _ => false,
        };
        // Stored when it will be changed: cut, or (a terminal's output) rendered.
        let overflows = over_tokens
            || s.totals.chars > s.body_allowance
            || s.style.max_lines().is_some_and(|max| s.totals.lines > max)
            || matches!(&s.body, Body::Text(text) if s.style.renders_whole(text));
        // Room after a cut text for its link, where a server sends one and it costs little (a
        // result held to a cap in tokens gets none: the cap counts the text as sent).
        if overflows
            && s.tokens.is_none()
            && sending.link_room > 0
            && registry.artifacts().is_some()
            && sending.link_room * LINK_SHARE_DIVISOR <= s.body_allowance
        {
            s.body_allowance -= sending.link_room;
        }
        s.storing = match &mut s.body {
            Body::Text(text) | Body::Json(text) => registry
                .artifacts()
                .filter(|_| overflows)
                .cloned()
                .map(|store| {
                    let text = std::mem::take(text);
                    Storing::Text(tokio::task::spawn_blocking(move || {
                        let stored = store_text(store.as_ref(), &text);
                        (text, stored)
                    }))
                }),
            Body::Parts(parts) => Some(Storing::Spooled(parts.1.clone())),
        };
    }

    // Only the wait for an artifact is a future; the cut is not, so a result (hundreds of
    // bytes of record and content) is not moved into a future of its own to be cut.
    let mut results = Vec::with_capacity(settled.len());
    for mut s in settled {
        let stored = match s.storing.take() {
            Some(storing) => stored(storing, &mut s.body).await,
            None => None,
        };
        results.push(cut(s, stored, registry));
    }
    results
}

/// A cut text's link to its artifact takes at most 1/this of the text's allowance.
pub(crate) const LINK_SHARE_DIVISOR: usize = 50;

/// A structure stated beside a text that repeats it (an MCP server's result) and the text share
/// the allowance fairly when together they are over it: a host may show the model both.
fn share_with_structure(s: &mut Settled) {
    let (Some(structure), Body::Text(text)) = (&s.beside, &s.body) else {
        return;
    };
    // An error sends no structure.
    if s.error_kind.is_some() {
        return;
    }
    let structure_chars = structure.to_string().chars().count();
    if structure_chars + s.totals.chars <= s.body_allowance
        || !crate::copies::repeats(structure, text)
    {
        return;
    }
    let mut shares = [0; 2];
    crate::fair::fill(
        &mut shares,
        &[structure_chars, s.totals.chars],
        s.body_allowance,
    );
    s.structure_allowance = Some(shares[0]);
    s.body_allowance = shares[1];
}

/// Waits until a result's full output is stored: a text stored by a blocking task comes back
/// into its body, a stream's spool is committed.
async fn stored(storing: Storing, body: &mut Body) -> Option<Committed> {
    match storing {
        Storing::Text(job) => match job.await {
            Ok((text, stored)) => {
                *body = match body {
                    Body::Json(_) => Body::Json(text),
                    _ => Body::Text(text),
                };
                Some(stored)
            }
            Err(error) => {
                // The store panicked and took the text with it; say so.
                *body = Body::Text(format!(
                    "Error: the output was lost: the artifact store failed ({error})."
                ));
                None
            }
        },
        Storing::Spooled(spool) => spool.committed().await,
    }
}

/// A call's content as the model would read it whole, with its figures and the style it is cut
/// in: its output, or its error's text.
fn content_of(mut record: CallRecord, registry: &Registry) -> Settled {
    let done = std::mem::replace(&mut record.stage, Stage::Running);
    let (body, media, error_kind, tool_meta, beside) = match done {
        Stage::Done(Ok(Produced {
            body,
            media,
            tool_meta,
            structure,
            error_kind,
        })) => (body, media, error_kind, tool_meta, structure),
        Stage::Done(Err(failure)) => (
            Body::Text(failure.model_text()),
            Vec::new(),
            Some(failure.kind()),
            Map::new(),
            None,
        ),
        // Every call is done by now; one that is not was never run: it was cancelled.
        Stage::Admitted { .. } | Stage::Running => {
            let error = ToolError::Cancelled;
            (
                Body::Text(error.model_text()),
                Vec::new(),
                Some(error.kind()),
                Map::new(),
                None,
            )
        }
    };
    // One pass gives both figures of every text; a stream's were counted as it came.
    let totals = body.totals();
    // The tool's own style for its output; the error style for errors, so their first words
    // survive any allowance.
    let tool = registry.get(&record.name);
    let style = match tool {
        Some(tool) if error_kind.is_none() => tool.spec().limits.trim,
        _ => TrimStyle::error(),
    };
    let tool_cap = tool.and_then(|tool| tool.spec().limits.max_result_tokens);
    let tokens = registry.inner.token_counter.as_ref().and_then(|counter| {
        let max = match (registry.inner.max_result_tokens, tool_cap) {
            (Some(a), Some(b)) => a.min(b),
            (cap, None) | (None, cap) => cap?,
        };
        Some((TokenCap::new(max, Arc::clone(counter)), None))
    });
    Settled {
        record,
        body,
        error_kind,
        tool_meta,
        beside,
        totals,
        style,
        storing: None,
        media,
        left_out: Vec::new(),
        notes: String::new(),
        body_allowance: 0,
        tokens,
        structure_allowance: None,
    }
}

/// Keeps each call's media within the registry's [`MediaLimits`](crate::tool::MediaLimits), in
/// call order; stores the rest as artifacts (concurrently, off the runtime's threads), each named
/// by a note the result's text ends with.
async fn place_media(settled: &mut [Settled], registry: &Registry) {
    let limits = registry.inner.media;
    let mut in_batch = 0;
    let mut left_out = Vec::new();
    for (index, s) in settled.iter_mut().enumerate() {
        let mut in_result = 0;
        for media in std::mem::take(&mut s.media) {
            let asked_for = media.from_artifact.is_some();
            match limits.leave_out(media.base64().len(), asked_for, in_result, in_batch) {
                None => {
                    in_result += 1;
                    in_batch += 1;
                    s.media.push(media);
                }
                Some(why) => left_out.push((index, media, why)),
            }
        }
    }
    if left_out.is_empty() {
        return;
    }
    let store = registry.artifacts().cloned();
    let jobs = left_out.into_iter().map(|(index, media, why)| {
        let store = store.clone();
        async move {
            let mut figures = MediaLeftOut {
                kind: media.kind(),
                mime_type: media.mime_type().to_owned(),
                base64_bytes: media.base64().len(),
                reason: why,
                artifact: media.from_artifact.clone(),
                artifact_error: None,
            };
            if figures.artifact.is_none() {
                let stored = match store {
                    Some(store) => tokio::task::spawn_blocking(move || {
                        let kind = media.kind().as_str();
                        store_media(store.as_ref(), kind, media.mime_type(), media.base64())
                            .map_err(|error| store_failure(&error))
                    })
                    .await
                    .unwrap_or_else(|error| Err(format!("the artifact store failed ({error})"))),
                    None => Err("no artifact store is configured".to_owned()),
                };
                match stored {
                    Ok(id) => figures.artifact = Some(id),
                    Err(why) => figures.artifact_error = Some(why),
                }
            }
            (index, figures)
        }
    });
    for (index, figures) in futures_util::future::join_all(jobs).await {
        let kept = match (&figures.artifact, &figures.artifact_error) {
            (Some(id), _) => Ok(id),
            (None, why) => Err(why.as_deref().unwrap_or_default()),
        };
        let note = left_out_note(
            figures.kind.as_str(),
            &figures.mime_type,
            figures.base64_bytes,
            &figures.reason,
            kept,
        );
        let s = &mut settled[index];
        if !s.notes.is_empty() {
            s.notes.push('\n');
        }
        s.notes.push_str(&note);
        s.left_out.push(figures);
    }
}

/// The chars the notes of media left out take at the end of a result: theirs and a line break.
fn notes_room(notes: &str) -> usize {
    if notes.is_empty() {
        0
    } else {
        notes.chars().count() + 1
    }
}

/// Cuts one result into its allowance, naming its artifact (`stored`, when it was) in the
/// marker.
fn cut(s: Settled, stored: Option<Committed>, registry: &Registry) -> ToolResult {
    let Settled {
        record,
        body,
        error_kind,
        tool_meta,
        beside,
        totals,
        style,
        storing: _,
        media,
        left_out,
        notes,
        body_allowance,
        tokens,
        structure_allowance,
    } = s;
    let (artifact, omitted_bytes, mut artifact_error) = match stored {
        Some(Ok((id, omitted))) => (Some(id), omitted, None),
        Some(Err(error)) => (None, 0, Some(store_failure(&error))),
        None => (None, 0, None),
    };
    if let Body::Parts(parts) = &body
        && let Some(reason) = parts.0.spool_error()
    {
        artifact_error.get_or_insert_with(|| format!("the artifact store failed ({reason})"));
    }
    let full = match (&artifact, &artifact_error) {
        (Some(id), _) if omitted_bytes > 0 => FullOutput::StoredCapped {
            id: id.as_str(),
            reader: READ_ARTIFACT,
            omitted_bytes,
        },
        (Some(id), _) => FullOutput::Stored {
            id: id.as_str(),
            reader: READ_ARTIFACT,
        },
        (None, Some(reason)) => FullOutput::Failed { reason },
        (None, None) => FullOutput::NotKept,
    };
    let continuation = Continuation {
        full,
        // An error is not a page: there is nothing to read on from.
        page_offset: record
            .page
            .filter(|_| error_kind.is_none())
            .map(|page| page.offset),
        token_cap: None,
    };
    let allowance = record.allowance;
    // The notes of media left out first, cut themselves when even they do not fit.
    let notes = if notes_room(&notes) > allowance {
        let none = Continuation::from(FullOutput::NotKept);
        trim::fit_with(&notes, allowance, &TrimStyle::error(), &none)
            .into_parts()
            .0
            .into_owned()
    } else {
        notes
    };
    // And to the cap in tokens, less the line break before them.
    let notes = match &tokens {
        Some((cap, _)) if !notes.is_empty() => {
            let notes_cap = TokenCap::new(cap.max().saturating_sub(1), Arc::clone(cap.counter()));
            match notes_cap.measure(&notes) {
                Within::Fits(_) => notes,
                Within::Over { chars, tokens } => {
                    let none = Continuation::from(FullOutput::NotKept);
                    let held =
                        notes_cap.hold(allowance, Some((chars, tokens)), &none, |room, c| {
                            trim::fit_with(&notes, room, &TrimStyle::error(), c).into_parts()
                        });
                    held.text.into_owned()
                }
            }
        }
        _ => notes,
    };
    let is_json = matches!(body, Body::Json(_));
    // A tool with an output schema keeps its JSON whole as the structure when the text is cut:
    // a cut structure could break the schema.
    // (The tool is looked up only for a JSON result that changed.)
    let states_schema = || {
        registry
            .get(&record.name)
            .is_some_and(|tool| tool.spec().output_schema.is_some())
    };
    let beside = beside.filter(|_| error_kind.is_none());
    let structure_beside = beside.is_some();
    let structure = match &body {
        // A structure stated beside the text is the tool's whole, whatever became of the text;
        // an error has none.
        _ if structure_beside => beside.map(|structure| *structure),
        Body::Json(json)
            if error_kind.is_none()
                && (totals.chars > body_allowance || !notes.is_empty())
                && states_schema() =>
        {
            serde_json::from_str(json).ok()
        }
        _ => None,
    };
    // The body cut to `allowance` chars, JSON as JSON (the model still reads valid JSON) and
    // text by its lines; a cap in tokens cuts it again, smaller, until it holds.
    let head_ratio = style.head_ratio();
    let cut_body = |allowance: usize, continuation: &Continuation<'_>| match &body {
        Body::Json(json)
            if totals.chars > allowance
                && let Some(fit) =
                    trim::fit_json_with(json, allowance, head_ratio, continuation) =>
        {
            let cut = trim::Cut::of_json(totals.chars, totals.lines, &fit);
            (Cow::Owned(fit.text), Some(cut))
        }
        Body::Text(text) | Body::Json(text) => {
            trim::fit_with(text, allowance, &style, continuation).into_parts()
        }
        Body::Parts(parts) => {
            let (trimmed, cut) = parts.0.fit(allowance, &style, continuation).into_parts();
            (Cow::Owned(trimmed.into_owned()), cut)
        }
    };
    let (trimmed, cut, sent_tokens) = match &tokens {
        Some((cap, over)) => {
            // The notes after the body count against the cap too.
            let notes_tokens = if notes.is_empty() {
                0
            } else {
                cap.counter().count(&notes) + 1
            };
            let body_cap = TokenCap::new(
                cap.max().saturating_sub(notes_tokens),
                Arc::clone(cap.counter()),
            );
            let held = body_cap.hold(body_allowance, *over, &continuation, cut_body);
            (
                held.text,
                held.cut,
                Some((cap, held.tokens, held.by_tokens)),
            )
        }
        None => {
            let (trimmed, cut) = cut_body(body_allowance, &continuation);
            (trimmed, cut, None)
        }
    };
    let mut content = match trimmed {
        Cow::Owned(trimmed) => trimmed,
        Cow::Borrowed(borrowed) => match body {
            Body::Text(text) | Body::Json(text) => text,
            Body::Parts(_) => borrowed.to_owned(),
        },
    };
    // A tool that must never be read in part answers an error instead of the cut: its size,
    // the allowance, and the artifact that holds it whole (nothing of the output is shown).
    if cut.is_some()
        && error_kind.is_none()
        && registry
            .get(&record.name)
            .is_some_and(|tool| tool.spec().limits.over_cap == OverCap::Error)
    {
        let text = facts::over_cap_error(
            &record.name,
            totals.chars as u64,
            body_allowance,
            facts::OverCapWhy::Asked,
            match (&artifact, &artifact_error) {
                (Some(_), _) => Ok(artifact.as_slice()),
                (None, Some(why)) => Err(why.as_str()),
                (None, None) => Err("no artifact store is configured"),
            },
        );
        let none = Continuation::from(FullOutput::NotKept);
        let mut content = trim::fit_with(&text, allowance, &TrimStyle::error(), &none)
            .into_parts()
            .0
            .into_owned();
        if !notes.is_empty() && content.chars().count() + notes_room(&notes) <= allowance {
            content.push('\n');
            content.push_str(&notes);
        }
        return ToolResult {
            call_id: record.id,
            tool: record.name,
            content,
            media,
            structure: None,
            structure_beside: false,
            meta: ResultMeta {
                allowance,
                initial_allowance: record.planned,
                original_chars: totals.chars,
                original_lines: totals.lines,
                // Nothing was cut: the artifact holds what was not sent.
                cut: None,
                artifact,
                artifact_error,
                error_kind: Some(ErrorKind::TooLarge),
                duration: record.duration,
                media_left_out: left_out,
                structured: false,
                tool_meta,
                tokens: None,
                structure_allowance: None,
            },
        };
    }
    // The tool's JSON, as it wrote it: no cut, no note after it.
    let structured = is_json && cut.is_none() && notes.is_empty() && error_kind.is_none();
    if !notes.is_empty() {
        if !content.is_empty() && !content.ends_with('\n') {
            content.push('\n');
        }
        content.push_str(&notes);
    }
    let tokens = sent_tokens.map(|(cap, body_tokens, cut_by_tokens)| TokensSent {
        cap: cap.max(),
        // With notes after it, the content is counted as sent.
        sent: if notes.is_empty() {
            body_tokens
        } else {
            cap.counter().count(&content)
        },
        cut_by_tokens,
    });
    if let Some(reason) = &artifact_error {
        let _ = registry.inner.events.send(Event::Warning {
            call_id: record.id.as_str().into(),
            tool: record.name.as_str().into(),
            message: format!("the full output could not be stored: {reason}"),
        });
    }
    ToolResult {
        call_id: record.id,
        tool: record.name,
        content,
        media,
        structure,
        structure_beside,
        meta: ResultMeta {
            allowance,
            initial_allowance: record.planned,
            original_chars: totals.chars,
            original_lines: totals.lines,
            artifact: artifact.filter(|_| cut.is_some()),
            cut,
            artifact_error,
            error_kind,
            duration: record.duration,
            media_left_out: left_out,
            structured,
            tool_meta,
            tokens,
            structure_allowance: structure_allowance.filter(|_| structure_beside),
        },
    }
}

fn store_failure(error: &ArtifactError) -> String {
    match error {
        ArtifactError::Io(io) => format!("the artifact store failed ({io})"),
        other => other.to_string(),
    }
}
