//! Fit: every call's result into its final allowance. The budget is settled over what the calls
//! produced (what the small ones left goes to the large ones); the full output of every result
//! that will be cut is stored as an artifact first (a stream's was spooled as it came); then
//! each result is cut, JSON as JSON and text by its lines, with the marker naming the artifact.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::Registry;
use super::facts;
use super::record::{Body, CallRecord, Produced, Stage};
use super::result::{MediaLeftOut, ResultMeta, TokensSent, ToolResult};
use crate::artifacts::{
    ArtifactError, ArtifactId, READ_ARTIFACT, SpoolSlot, store_media, store_text,
};
use crate::budget::BudgetPolicy;
use crate::structure::StructureCut;
use crate::tokens::{TokenCap, Within};
use crate::tool::{ErrorKind, Event, Media, OverCap, ToolError, left_out_note};
use crate::trim::{self, Continuation, Cut, FullOutput, Totals, TrimStyle};

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
    /// What the structure beside the text may have, when it shares the allowance with the
    /// text (a server that sends both).
    structure_allowance: Option<usize>,
    /// The structure beside the text, being stored whole: it is over its room.
    structure_storing: Option<tokio::task::JoinHandle<Committed>>,
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
        // Stored when it will be changed: cut, or (a terminal's output) rendered — but not a
        // JSON document that fits once written compactly (nothing of it is left out; its cut
        // says it was compacted), unless a page's cut is by its lines.
        let compacts = !over_tokens
            && s.record.page.is_none()
            && match &s.body {
                Body::Json(text) => trim::compacts_within(text, s.body_allowance),
                Body::Text(text) => trim::fits_compacted(text, s.body_allowance, &s.style),
                Body::Parts(_) => false,
            };
        let overflows = !compacts
            && (over_tokens
                || s.totals.chars > s.body_allowance
                || s.style.max_lines().is_some_and(|max| s.totals.lines > max)
                || matches!(&s.body, Body::Text(text) if s.style.renders_whole(text)));
        // Room after a cut text for a trailer, where a sender adds one and it costs little (a
        // result held to a cap in tokens gets none: the cap counts the text as sent).
        if overflows
            && s.tokens.is_none()
            && sending.trailer_room > 0
            && registry.artifacts().is_some()
            && trailer_fits(sending.trailer_room, s.body_allowance)
        {
            s.body_allowance -= sending.trailer_room;
        }
        // A structure beside the text over its room is kept whole too.
        if let Some(structure) = &s.beside
            && s.error_kind.is_none()
            && let Some(store) = registry.artifacts()
        {
            let room = s.structure_allowance.unwrap_or(allowance);
            let text = structure.to_string();
            if text.chars().count() > room {
                let store = Arc::clone(store);
                s.structure_storing = Some(tokio::task::spawn_blocking(move || {
                    store_text(store.as_ref(), &text)
                }));
            }
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
        let structure_stored = match s.structure_storing.take() {
            Some(job) => Some(job.await.unwrap_or_else(|error| {
                Err(ArtifactError::Io(std::io::Error::other(format!(
                    "the artifact writer's task failed ({error})"
                ))))
            })),
            None => None,
        };
        results.push(cut(s, stored, structure_stored, registry));
    }
    results
}

/// A trailer after a cut text (an MCP server's link to the artifact) takes at most 1/this of
/// the text's allowance.
const TRAILER_SHARE_DIVISOR: usize = 50;

/// Whether a trailer of `chars` may follow a cut text with `allowance` chars: at most 1/50 of
/// it, so it costs little of what the model reads (the signal gate holds the rest). The one
/// rule for every sender's trailer.
pub(crate) fn trailer_fits(chars: usize, allowance: usize) -> bool {
    chars * TRAILER_SHARE_DIVISOR <= allowance
}

/// A structure stated beside a text (an MCP server's result) and the text share the allowance
/// fairly when together they are over it: a host may show the model both.
fn share_with_structure(s: &mut Settled) {
    let (Some(structure), Body::Text(text)) = (&s.beside, &s.body) else {
        return;
    };
    // An error sends no structure.
    if s.error_kind.is_some() {
        return;
    }
    let _ = text;
    let structure_chars = crate::structure::compact_chars(structure);
    if structure_chars + s.totals.chars <= s.body_allowance {
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
    let tool = record.tool.as_ref();
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
        structure_storing: None,
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
/// marker, and fits the structure that goes beside it (`structure_stored`: its whole, kept). In
/// steps: the body cut (a typed JSON by its schema), the over-cap error where the tool asks
/// for one or no valid cut fits, the structure beside the text, the notes after it, and the
/// result with its figures.
fn cut(
    mut s: Settled,
    stored: Option<Committed>,
    structure_stored: Option<Committed>,
    registry: &Registry,
) -> ToolResult {
    let (kept, notes, schema, body_cut) = cut_text(&mut s, stored, registry);
    let Settled {
        record,
        error_kind,
        tool_meta,
        beside,
        totals,
        media,
        left_out,
        body_allowance,
        structure_allowance,
        ..
    } = s;
    let allowance = record.allowance;
    let sharing = registry.inner.sending.structure_shares;
    let BodyCut {
        mut content,
        cut,
        tokens: sent_tokens,
        structure_cut,
    } = body_cut;
    let is_typed = structure_cut.is_some();
    let over_cap = |why, more: Option<ArtifactId>| OverCapError {
        chars: totals.chars,
        lines: totals.lines,
        body_allowance,
        artifacts: kept.artifact.iter().chain(&more).cloned().collect(),
        artifact_error: kept.artifact_error.clone(),
        why,
    };
    // A tool that must never be read in part answers an error instead of the cut; so does a
    // structure no cut of which matches its schema and fits: its size, the allowance, and the
    // artifact that holds it whole (nothing of the output is shown).
    let asks_error = cut.is_some()
        && error_kind.is_none()
        && record
            .tool
            .as_ref()
            .is_some_and(|tool| tool.spec().limits.over_cap == OverCap::Error);
    let why = match structure_cut {
        Some(None) => Some(facts::OverCapWhy::NoValidCut),
        _ if asks_error => Some(facts::OverCapWhy::Asked),
        _ => None,
    };
    if let Some(why) = why {
        let cap = sent_tokens.as_ref().map(|(cap, ..)| cap);
        return over_cap(why, None).result(record, media, left_out, tool_meta, &notes, cap);
    }
    let structure_cut = structure_cut.flatten();
    // The structure beside the text: within its room, cut by its schema when it states one.
    let beside = beside.filter(|_| error_kind.is_none());
    let structure_beside = beside.is_some();
    let sent = match beside {
        Some(structure) => {
            let room = structure_room(structure_allowance, allowance, &content);
            let noted = registry.inner.sending.structure_notes;
            match fit_beside(*structure, schema, room, structure_stored, noted) {
                Beside::Sent(value, facts) => (value, facts),
                Beside::Over(artifact) => {
                    let failed = over_cap(facts::OverCapWhy::NoValidCut, artifact);
                    let cap = sent_tokens.as_ref().map(|(cap, ..)| cap);
                    return failed.result(record, media, left_out, tool_meta, &notes, cap);
                }
            }
        }
        None => typed_structure(
            structure_cut.as_ref(),
            &kept,
            schema.is_some(),
            &notes,
            &cut,
            &content,
        ),
    };
    let (structure, structure_facts) = sent;
    // The tool's JSON, as it wrote it: no cut, no note after it.
    let structured =
        !is_typed && cut.is_none() && kept.was_json && notes.is_empty() && error_kind.is_none();
    append_notes(&mut content, &notes);
    let shared = structure.as_ref().filter(|_| sharing);
    let tokens = sent_tokens.map(|sent| tokens_sent(sent, &content, !notes.is_empty(), shared));
    if let Some(reason) = &kept.artifact_error {
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
            artifact: kept.artifact.filter(|_| cut.is_some()),
            cut,
            artifact_error: kept.artifact_error,
            error_kind,
            duration: record.duration,
            media_left_out: left_out,
            structured,
            tool_meta,
            tokens,
            structure_allowance: structure_allowance.filter(|_| structure_beside),
            structure_cut: structure_facts,
        },
    }
}

/// The text of a result cut into its body's allowance (a typed JSON by its schema), naming
/// its artifact (`stored`, when it was) in the marker; and where the whole is, the notes as
/// fitted, and the schema that cuts it (a JSON result's or a structure beside the text's).
fn cut_text<'r>(
    s: &mut Settled,
    stored: Option<Committed>,
    registry: &'r Registry,
) -> (
    Kept,
    String,
    Option<&'r crate::structure::OutputSchema>,
    BodyCut,
) {
    let body = std::mem::replace(&mut s.body, Body::Text(String::new()));
    let kept = Kept::of(stored, &body);
    let continuation = Continuation {
        full: kept.full(),
        // An error is not a page: there is nothing to read on from.
        page_offset: s
            .record
            .page
            .filter(|_| s.error_kind.is_none())
            .map(|page| page.offset),
        token_cap: None,
    };
    let tokens = s.tokens.take();
    let notes = fit_notes(
        std::mem::take(&mut s.notes),
        s.record.allowance,
        tokens.as_ref().map(|(cap, _)| cap),
    );
    // Only a JSON result or a structure beside the text is cut by a schema.
    let schema = (s.error_kind.is_none() && (matches!(body, Body::Json(_)) || s.beside.is_some()))
        .then(|| registry.output_schema(&s.record.name))
        .flatten();
    let over_tokens = tokens.as_ref().is_some_and(|(_, over)| over.is_some());
    let sending = registry.inner.sending;
    let typed = typed_body(
        &body,
        schema,
        (sending.structure_shares, sending.structure_notes),
        s.totals.chars > s.body_allowance || over_tokens,
    );
    let body_cut = cut_body(
        body,
        &s.totals,
        &s.style,
        s.body_allowance,
        &continuation,
        &notes,
        tokens,
        typed,
    );
    (kept, notes, schema, body_cut)
}

/// A typed JSON body (a JSON result of a tool with an output schema) that is `over` its
/// allowance, ready to be cut by its schema: its text the cut's JSON laid out as the tool wrote
/// it, its structure the cut (the same selection).
fn typed_body<'s>(
    body: &Body,
    schema: Option<&'s crate::structure::OutputSchema>,
    (shared, noted): (bool, bool),
    over: bool,
) -> Option<Typed<'s>> {
    let (Body::Json(json), Some(schema)) = (body, schema) else {
        return None;
    };
    if !over {
        return None;
    }
    let value = serde_json::from_str::<Value>(json).ok()?;
    let layout = crate::copies::Layout::of(json, &value);
    Some(Typed {
        value,
        schema,
        layout,
        shared,
        noted,
        cuts: std::cell::RefCell::new(Vec::new()),
    })
}

/// The structure of a result with none beside its text, and the facts of its cut: a typed
/// JSON result's cut; a typed JSON result whole, with notes after it, its JSON; else none.
fn typed_structure(
    structure_cut: Option<&StructureCut>,
    kept: &Kept,
    typed: bool,
    notes: &str,
    cut: &Option<Cut>,
    content: &str,
) -> (Option<Value>, Option<Value>) {
    match structure_cut {
        Some(structure) => (
            Some(structure.value.clone()),
            Some(structure.facts(kept.artifact.as_ref())),
        ),
        None if kept.was_json && typed && !notes.is_empty() && cut.is_none() => {
            (serde_json::from_str(content).ok(), None)
        }
        None => (None, None),
    }
}

/// The room of a structure beside a text: its share, or what the text left, when the two share
/// the allowance; the whole allowance otherwise.
fn structure_room(share: Option<usize>, allowance: usize, text: &str) -> usize {
    share.map_or(allowance, |share| {
        share.max(allowance.saturating_sub(text.chars().count()))
    })
}

/// The notes after the content, on a line of their own.
fn append_notes(content: &mut String, notes: &str) {
    if notes.is_empty() {
        return;
    }
    if !content.is_empty() && !content.ends_with('\n') {
        content.push('\n');
    }
    content.push_str(notes);
}

/// The tokens a result held to a cap in tokens was sent: the body's as it was counted, or,
/// with notes after it, the content's counted again, and a structure that shares the cap.
fn tokens_sent(
    (cap, body_tokens, cut_by_tokens): (TokenCap, usize, bool),
    content: &str,
    noted: bool,
    shared: Option<&Value>,
) -> TokensSent {
    let sent = if noted {
        let beside = shared.map_or(0, |structure| cap.counter().count(&structure.to_string()));
        cap.counter().count(content) + beside
    } else {
        body_tokens
    };
    TokensSent {
        cap: cap.max(),
        sent,
        cut_by_tokens,
    }
}

/// Where a result's full output was kept, if it was.
struct Kept {
    artifact: Option<ArtifactId>,
    omitted_bytes: u64,
    artifact_error: Option<String>,
    /// Whether the body was the tool's JSON.
    was_json: bool,
}

impl Kept {
    fn of(stored: Option<Committed>, body: &Body) -> Self {
        let (artifact, omitted_bytes, mut artifact_error) = match stored {
            Some(Ok((id, omitted))) => (Some(id), omitted, None),
            Some(Err(error)) => (None, 0, Some(store_failure(&error))),
            None => (None, 0, None),
        };
        if let Body::Parts(parts) = body
            && let Some(reason) = parts.0.spool_error()
        {
            artifact_error.get_or_insert_with(|| format!("the artifact store failed ({reason})"));
        }
        Kept {
            artifact,
            omitted_bytes,
            artifact_error,
            was_json: matches!(body, Body::Json(_)),
        }
    }

    /// Where a marker says the full output is.
    fn full(&self) -> FullOutput<'_> {
        match (&self.artifact, &self.artifact_error) {
            (Some(id), _) if self.omitted_bytes > 0 => FullOutput::StoredCapped {
                id: id.as_str(),
                reader: READ_ARTIFACT,
                omitted_bytes: self.omitted_bytes,
            },
            (Some(id), _) => FullOutput::Stored {
                id: id.as_str(),
                reader: READ_ARTIFACT,
            },
            (None, Some(reason)) => FullOutput::Failed { reason },
            (None, None) => FullOutput::NotKept,
        }
    }
}

/// The notes of media left out, cut themselves when even they do not fit the allowance, and to
/// the cap in tokens less the line break before them.
fn fit_notes(notes: String, allowance: usize, cap: Option<&TokenCap>) -> String {
    if notes.is_empty() {
        return notes;
    }
    let notes_cap =
        cap.map(|cap| TokenCap::new(cap.max().saturating_sub(1), Arc::clone(cap.counter())));
    if notes_room(&notes) <= allowance && cap.is_none() {
        return notes;
    }
    fit_plain(&notes, allowance, notes_cap.as_ref())
}

/// A text of the registry's own (an error, notes) within `allowance` chars and `cap` tokens:
/// cut with the error style, no artifact named (the text is the registry's, not the tool's).
fn fit_plain(text: &str, allowance: usize, cap: Option<&TokenCap>) -> String {
    let none = Continuation::from(FullOutput::NotKept);
    let fitted = trim::fit_with(text, allowance, &TrimStyle::error(), &none)
        .into_parts()
        .0
        .into_owned();
    let Some(cap) = cap else {
        return fitted;
    };
    match cap.measure(&fitted) {
        Within::Fits(_) => fitted,
        Within::Over { chars, tokens } => {
            let held = cap.hold(allowance, Some((chars, tokens)), &none, |room, c| {
                trim::fit_with(text, room, &TrimStyle::error(), c).into_parts()
            });
            held.text.into_owned()
        }
    }
}

/// A typed JSON body being cut by its schema, and every cut tried (a cap in tokens tries
/// several), by the text each gave.
struct Typed<'s> {
    value: Value,
    schema: &'s crate::structure::OutputSchema,
    layout: crate::copies::Layout,
    /// Whether the structure's chars count against the allowance beside the text's.
    shared: bool,
    /// Whether the cut says inside it that it was cut ([`Sending::structure_notes`](super::Sending)).
    noted: bool,
    cuts: std::cell::RefCell<Vec<(String, StructureCut)>>,
}

impl Typed<'_> {
    /// The cut whose text is `text`, among those tried.
    fn cut_of(&self, text: &str) -> Option<StructureCut> {
        let cuts = self.cuts.borrow();
        cuts.iter()
            .find(|(tried, _)| tried == text)
            .map(|(_, cut)| cut.clone())
    }

    /// The text of the cut within `allowance`: the cut's JSON, laid out as the tool wrote it,
    /// and a note; `None` when no cut of it matches its schema and fits.
    fn cut(
        &self,
        totals: &Totals,
        allowance: usize,
        continuation: &Continuation<'_>,
    ) -> Option<(String, Cut)> {
        let repeat = crate::copies::Repeat::Json {
            text: 0,
            pointer: String::new(),
            layout: self.layout,
        };
        let note = |cut: &StructureCut| {
            trim::render_structure_note(cut.chars, cut.original_chars, &cut.summary(), continuation)
        };
        // The note's line break is the text's.
        let room = allowance.saturating_sub(1);
        let (cut, texts, note) = crate::structure::fit_with_copies(
            &self.value,
            self.schema,
            &repeat,
            totals.chars,
            room,
            self.shared,
            note,
            self.noted.then_some(continuation),
        )?;
        let mut text = texts.into_iter().next().unwrap_or_default();
        if !note.is_empty() {
            text.push('\n');
            text.push_str(&note);
        }
        let figures = Cut::without_spans(totals.chars, totals.lines, cut.chars);
        self.cuts.borrow_mut().push((text.clone(), cut));
        Some((text, figures))
    }
}

/// What became of a body: its text, the cut's figures, the tokens sent (where a cap in tokens
/// held it) and, for a typed JSON body, the cut of its structure (`Some(None)`: none fits).
struct BodyCut {
    content: String,
    cut: Option<Cut>,
    tokens: Option<(TokenCap, usize, bool)>,
    structure_cut: Option<Option<StructureCut>>,
}

/// The body cut to `allowance` chars — JSON as JSON (the model still reads valid JSON), a typed
/// JSON by its schema, text by its lines — and, under a cap in tokens, again smaller until it
/// holds.
#[allow(clippy::too_many_arguments)]
fn cut_body(
    body: Body,
    totals: &Totals,
    style: &TrimStyle,
    allowance: usize,
    continuation: &Continuation<'_>,
    notes: &str,
    tokens: Option<(TokenCap, Option<(usize, usize)>)>,
    typed: Option<Typed<'_>>,
) -> BodyCut {
    let head_ratio = style.head_ratio();
    let cut_once = |allowance: usize, continuation: &Continuation<'_>| match &body {
        Body::Json(_) if let Some(typed) = typed.as_ref() => {
            match typed.cut(totals, allowance, continuation) {
                Some((text, figures)) => (Cow::Owned(text), Some(figures)),
                None => (
                    Cow::Owned(String::new()),
                    Some(Cut::without_spans(totals.chars, totals.lines, 0)),
                ),
            }
        }
        Body::Json(json)
            if totals.chars > allowance
                && let Some(fit) =
                    trim::fit_json_with(json, allowance, head_ratio, continuation) =>
        {
            let cut = trim::Cut::of_json(totals.chars, totals.lines, &fit);
            (Cow::Owned(fit.text), Some(cut))
        }
        Body::Text(text) | Body::Json(text) => {
            trim::fit_with(text, allowance, style, continuation).into_parts()
        }
        Body::Parts(parts) => {
            let (trimmed, cut) = parts.0.fit(allowance, style, continuation).into_parts();
            (Cow::Owned(trimmed.into_owned()), cut)
        }
    };
    // A typed structure sent beside its text shares the cap in tokens with it.
    let shared = typed.as_ref().filter(|typed| typed.shared);
    let (content, cut, sent_tokens) = match tokens {
        Some((cap, over)) => {
            // The notes after the body count against the cap too.
            let notes_tokens = if notes.is_empty() {
                0
            } else {
                cap.counter().count(notes) + 1
            };
            let limit = cap.max().saturating_sub(notes_tokens);
            // The text's part of the cap: half of it beside its structure, then smaller by
            // what the two are over.
            let mut max = if shared.is_some() { limit / 2 } else { limit };
            let mut tries = 0;
            loop {
                let body_cap = TokenCap::new(max, Arc::clone(cap.counter()));
                let held = body_cap.hold(allowance, over, continuation, cut_once);
                let structure_tokens = shared
                    .and_then(|typed| typed.cut_of(&held.text))
                    .map_or(0, |cut| cap.counter().count(&cut.value.to_string()));
                let total = held.tokens + structure_tokens;
                tries += 1;
                if total <= limit || max == 0 || tries == 6 {
                    break (held.text, held.cut, Some((cap, total, held.by_tokens)));
                }
                max = max.saturating_sub(total - limit).min(max - 1);
            }
        }
        None => {
            let (content, cut) = cut_once(allowance, continuation);
            (content, cut, None)
        }
    };
    let structure_cut = typed.as_ref().map(|typed| typed.cut_of(&content));
    // An untouched body is its text as it came: moved, not copied (a cut borrows only what it
    // leaves whole).
    let cut_text = match content {
        Cow::Owned(content) => Some(content),
        Cow::Borrowed(_) => None,
    };
    let content = match (cut_text, body) {
        (Some(content), _) => content,
        (None, Body::Text(text) | Body::Json(text)) => text,
        (None, Body::Parts(parts)) => parts
            .0
            .fit(usize::MAX, style, continuation)
            .into_text()
            .into_owned(),
    };
    // An untouched body is its text as it came (no copy was made but the one cut returned).
    BodyCut {
        content,
        cut,
        tokens: sent_tokens,
        structure_cut,
    }
}

/// What became of a structure beside the text.
enum Beside {
    /// Sent, whole or cut, or (no schema asks for it) left out; with the facts of its cut.
    Sent(Option<Value>, Option<Value>),
    /// No cut of it matches its schema and fits: the artifact holding it whole, if it was kept.
    Over(Option<ArtifactId>),
}

/// A structure stated beside the text, within `room` chars: whole; cut by `schema`; without a
/// schema, cut as JSON (its marker inside) or left out.
fn fit_beside(
    structure: Value,
    schema: Option<&crate::structure::OutputSchema>,
    room: usize,
    stored: Option<Committed>,
    noted: bool,
) -> Beside {
    let chars = crate::structure::compact_chars(&structure);
    if chars <= room {
        return Beside::Sent(Some(structure), None);
    }
    let artifact = match &stored {
        Some(Ok((id, _))) => Some(id.clone()),
        _ => None,
    };
    let full = match &stored {
        Some(Ok((id, _))) => FullOutput::Stored {
            id: id.as_str(),
            reader: READ_ARTIFACT,
        },
        _ => FullOutput::NotKept,
    };
    let continuation = Continuation::from(full);
    match schema {
        Some(schema) => match crate::structure::fit_typed(
            &structure,
            schema,
            room,
            noted.then_some(&continuation),
        ) {
            crate::structure::Typed::Whole => Beside::Sent(Some(structure), None),
            crate::structure::Typed::Cut(cut) => {
                let facts = cut.facts(artifact.as_ref());
                Beside::Sent(Some(cut.value), Some(facts))
            }
            crate::structure::Typed::Over => Beside::Over(artifact),
        },
        None => {
            let reason;
            let full = match &stored {
                Some(Ok((id, _))) => FullOutput::Stored {
                    id: id.as_str(),
                    reader: READ_ARTIFACT,
                },
                Some(Err(error)) => {
                    reason = store_failure(error);
                    FullOutput::Failed { reason: &reason }
                }
                None => FullOutput::NotKept,
            };
            let cut = trim::fit_json(&structure.to_string(), room, 0.5, &full)
                .and_then(|fit| serde_json::from_str::<Value>(&fit.text).ok())
                .filter(Value::is_object);
            let mut facts = json!({ "originalChars": chars, "leftOut": cut.is_none() });
            if let Some(id) = &artifact {
                facts["artifact"] = id.as_str().into();
                facts["uri"] = id.uri().into();
            }
            // Left out when it cannot be cut to fit: the facts say so (no schema asks for it).
            Beside::Sent(cut, Some(facts))
        }
    }
}

/// The error a result over its cap becomes, with what it needs to say: its size, the
/// allowance, the artifacts that hold it whole, and why it is an error.
struct OverCapError {
    chars: usize,
    lines: usize,
    body_allowance: usize,
    artifacts: Vec<ArtifactId>,
    artifact_error: Option<String>,
    why: facts::OverCapWhy,
}

impl OverCapError {
    fn result(
        self,
        record: CallRecord,
        media: Vec<Media>,
        left_out: Vec<MediaLeftOut>,
        tool_meta: Map<String, Value>,
        notes: &str,
        cap: Option<&TokenCap>,
    ) -> ToolResult {
        let allowance = record.allowance;
        let text = facts::over_cap_error(
            &record.name,
            self.chars as u64,
            self.body_allowance,
            self.why,
            match (&self.artifacts[..], &self.artifact_error) {
                ([], Some(why)) => Err(why.as_str()),
                ([], None) => Err("no artifact store is configured"),
                (artifacts, _) => Ok(artifacts),
            },
        );
        let mut content = fit_plain(&text, allowance, cap);
        if !notes.is_empty() && content.chars().count() + notes_room(notes) <= allowance {
            let with_notes = format!("{content}\n{notes}");
            // Under a cap in tokens, the notes follow only where the two together hold it.
            if cap.is_none_or(|cap| matches!(cap.measure(&with_notes), Within::Fits(_))) {
                content = with_notes;
            }
        }
        ToolResult {
            call_id: record.id,
            tool: record.name,
            content,
            media,
            structure: None,
            structure_beside: false,
            meta: ResultMeta {
                allowance,
                initial_allowance: record.planned,
                original_chars: self.chars,
                original_lines: self.lines,
                // Nothing was cut: the artifact holds what was not sent.
                cut: None,
                artifact: self.artifacts.into_iter().next(),
                artifact_error: self.artifact_error,
                error_kind: Some(ErrorKind::TooLarge),
                duration: record.duration,
                media_left_out: left_out,
                structured: false,
                tool_meta,
                tokens: None,
                structure_allowance: None,
                structure_cut: None,
            },
        }
    }
}

fn store_failure(error: &ArtifactError) -> String {
    match error {
        ArtifactError::Io(io) => format!("the artifact store failed ({io})"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_trailer_fits_only_within_a_fiftieth_of_the_allowance() {
        assert!(trailer_fits(80, 4_000));
        assert!(!trailer_fits(81, 4_000));
        assert!(trailer_fits(0, 0), "no trailer always fits");
        assert!(!trailer_fits(1, 49));
    }

    #[test]
    fn only_a_json_body_over_its_allowance_with_a_schema_is_cut_by_it() {
        let schema = crate::structure::OutputSchema::new(&json!({
            "type": "object",
            "properties": { "rows": { "type": "array" } },
        }));
        let json = Body::Json(r#"{"rows": [1, 2, 3]}"#.to_owned());
        let typed = typed_body(&json, Some(&schema), (true, false), true).expect("typed");
        assert_eq!(typed.value, json!({ "rows": [1, 2, 3] }));
        assert!(typed.shared);
        assert!(
            typed_body(&json, Some(&schema), (true, false), false).is_none(),
            "within it"
        );
        assert!(
            typed_body(&json, None, (true, false), true).is_none(),
            "no schema"
        );
        let text = Body::Text(r#"{"rows": []}"#.to_owned());
        assert!(
            typed_body(&text, Some(&schema), (true, false), true).is_none(),
            "not JSON by the tool"
        );
        let broken = Body::Json("{\"rows\": [".to_owned());
        assert!(
            typed_body(&broken, Some(&schema), (true, false), true).is_none(),
            "not JSON at all"
        );
    }

    #[test]
    fn a_structure_beside_a_text_gets_its_share_or_what_the_text_left() {
        assert_eq!(structure_room(None, 1_000, "text"), 1_000);
        assert_eq!(structure_room(Some(300), 1_000, &"x".repeat(900)), 300);
        assert_eq!(structure_room(Some(300), 1_000, &"x".repeat(200)), 800);
        // Chars, not bytes.
        assert_eq!(structure_room(Some(0), 10, "ééé"), 7);
    }

    #[test]
    fn notes_follow_the_content_on_a_line_of_their_own() {
        let mut content = "output".to_owned();
        append_notes(&mut content, "");
        assert_eq!(content, "output");
        append_notes(&mut content, "[a note]");
        assert_eq!(content, "output\n[a note]");
        let mut ended = "output\n".to_owned();
        append_notes(&mut ended, "[a note]");
        assert_eq!(ended, "output\n[a note]");
        let mut empty = String::new();
        append_notes(&mut empty, "[a note]");
        assert_eq!(empty, "[a note]");
    }

    #[test]
    fn the_tokens_sent_count_the_notes_and_a_shared_structure() {
        let cap = TokenCap::with_default_counter(100);
        let count = |text: &str| cap.counter().count(text);
        let sent = tokens_sent((cap.clone(), 7, false), "ignored", false, None);
        assert_eq!((sent.cap, sent.sent, sent.cut_by_tokens), (100, 7, false));
        let content = "output\n[a note]";
        let structure = json!({ "rows": [1, 2] });
        let sent = tokens_sent((cap.clone(), 7, true), content, true, Some(&structure));
        assert_eq!(sent.sent, count(content) + count(&structure.to_string()));
        assert!(sent.cut_by_tokens);
    }
}
