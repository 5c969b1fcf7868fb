//! What the relay budgets: a tool result's content blocks and `structuredContent`, and a
//! resource's contents, each fitted to the cap with every byte it leaves out kept as an
//! artifact. Everything else in a result passes as it came.
//!
//! The rule, per result:
//!
//! - **Images and audio** (and binary embedded resources) are not text: they do not count
//!   against the cap in chars. A result keeps at most [`MediaLimits::max_blocks`] of them, each
//!   at most [`MediaLimits::max_bytes`] of base64; one over either limit is stored as an
//!   artifact that `read_artifact` returns as the same content type, and a one-line note takes
//!   its place.
//! - **Other blocks** (resource links, blocks of types the relay does not know) pass as they
//!   are and count their JSON's chars; past half the cap the rest are stored together as an
//!   artifact and a note says how many were left out.
//! - **Text** (text blocks, and the text of embedded resources) shares what is left of the cap,
//!   max-min fairly; a text over its share is cut — keeping what matters, with the marker — and
//!   kept whole as an artifact.
//! - **`structuredContent`** fits the cap on its own (a client reads it or the text, not
//!   both): over the cap it is cut to valid JSON, and for a tool with an `outputSchema` only
//!   when the cut still matches the schema, else sent whole ([`structure`](crate::mcp::structure)).
//!
//! Every char a reader sees of `content` counts: text, notes and the JSON of other blocks. One
//! function ([`fit_blocks`]) lays the content out and owns the cap. `isError` is the server's
//! word and is never changed.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::mcp::wire::bounded;

use super::upstream::Copies;
use crate::artifacts::{self, ArtifactId, ArtifactStore, READ_ARTIFACT, store_text};
use crate::mcp::structure::{self, OutputSchema, kept_as};
use crate::registry::CUT_META_KEY;
pub(crate) use crate::registry::facts::OverCapWhy;
use crate::tokens::{TokenCap, TokenCounter, Tries, Within};
use crate::tool::{MediaLimits, left_out_note};
use crate::trim::{self, Continuation, FullOutput, TrimStyle, grouped};

/// What fitting needs: the cap, where the rest goes, and the media rule.
#[derive(Debug, Clone)]
pub(crate) struct Fitting {
    pub(crate) cap: usize,
    pub(crate) store: Arc<dyn ArtifactStore>,
    pub(crate) media: MediaLimits,
    /// A cap in tokens beside the cap in chars, if any.
    pub(crate) tokens: Option<TokenCap>,
    /// The cap in tokens a text's marker names: set while a cap in tokens is cutting.
    pub(crate) marker_token_cap: Option<usize>,
    /// What this result has stored already, while a cap in tokens fits it again smaller: the
    /// same text is stored once.
    pub(crate) stored: Option<Arc<Stored>>,
}

impl Fitting {
    /// Where what is stored of `parts` is remembered, and its key, while a cap in tokens fits
    /// the result again.
    fn memo(&self, parts: &[&str]) -> Option<(&Stored, u64)> {
        self.stored
            .as_deref()
            .map(|stored| (stored, stored.key(parts)))
    }

    /// Fitting to `cap` chars, with `store` and `media`, no cap in tokens.
    pub(crate) fn new(cap: usize, store: Arc<dyn ArtifactStore>, media: MediaLimits) -> Self {
        Fitting {
            cap,
            store,
            media,
            tokens: None,
            marker_token_cap: None,
            stored: None,
        }
    }
}

/// What storing a text gave: its artifact and the bytes the store's cap left out, or why not.
type StoreOutcome = Result<(ArtifactId, u64), String>;

/// The artifacts one result's fittings have written, by a hash of what they hold. The hash's
/// keys are random, new for each result: an upstream cannot make two of its texts share a key
/// (and one be read back as the other).
#[derive(Debug, Default)]
pub(crate) struct Stored {
    keys: std::hash::RandomState,
    written: std::sync::Mutex<Vec<(u64, StoreOutcome)>>,
}

impl Stored {
    fn key(&self, parts: &[&str]) -> u64 {
        use std::hash::BuildHasher as _;
        self.keys.hash_one(parts)
    }

    fn get(&self, key: u64) -> Option<StoreOutcome> {
        let written = self
            .written
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        written
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, stored)| stored.clone())
    }

    /// Every artifact written, in order.
    fn written(&self) -> Vec<ArtifactId> {
        let written = self
            .written
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        written
            .iter()
            .filter_map(|(_, stored)| stored.as_ref().ok().map(|(id, _)| id.clone()))
            .collect()
    }

    fn put(&self, key: u64, stored: &StoreOutcome) {
        let mut written = self
            .written
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        written.push((key, stored.clone()));
    }
}

/// What fitting did to one result, for the gateway's metrics and traces and the result's
/// `_meta`: the registry's cut facts, one type for both.
pub(crate) use crate::registry::facts::CutFacts as Report;

/// A block as the fitter sees it.
enum Kind {
    /// A text block (`text`), or an embedded resource's text (`resource.text`).
    Text,
    /// An image, an audio clip, or an embedded resource's blob.
    Media,
    /// Anything else: passed as it is, counted by its JSON.
    Other,
}

fn kind_of(block: &Value) -> Kind {
    match block.get("type").and_then(Value::as_str) {
        Some("text") if block.get("text").is_some_and(Value::is_string) => Kind::Text,
        Some("image" | "audio") if block.get("data").is_some_and(Value::is_string) => Kind::Media,
        Some("resource") => match block.get("resource") {
            Some(resource) if resource.get("text").is_some_and(Value::is_string) => Kind::Text,
            Some(resource) if resource.get("blob").is_some_and(Value::is_string) => Kind::Media,
            _ => Kind::Other,
        },
        _ => Kind::Other,
    }
}

/// The text of a text block or of an embedded resource.
fn text_slot(block: &mut Value) -> Option<&mut Value> {
    if block.get("type").and_then(Value::as_str) == Some("resource") {
        block.get_mut("resource")?.get_mut("text")
    } else {
        block.get_mut("text")
    }
}

/// The base64 data of a media block, its content type (`image`, `audio`, `blob`) and MIME type.
fn media_of(block: &Value) -> Option<(&str, &str, &str)> {
    if block.get("type").and_then(Value::as_str) == Some("resource") {
        let resource = block.get("resource")?;
        let mime = resource
            .get("mimeType")
            .and_then(Value::as_str)
            .unwrap_or("application/octet-stream");
        return Some(("blob", mime, resource.get("blob")?.as_str()?));
    }
    let kind = block.get("type")?.as_str()?;
    let mime = block
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or("application/octet-stream");
    Some((kind, mime, block.get("data")?.as_str()?))
}

fn text_block(text: String) -> Value {
    json!({ "type": "text", "text": text })
}

/// Runs blocking store work off the runtime's threads.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    tokio::task::spawn_blocking(work).await.ok()
}

/// Stores `text` whole; the id and the bytes the store's cap left out, or why it failed.
async fn store(fitting: &Fitting, text: String) -> StoreOutcome {
    store_and_give_back(fitting, text).await.0
}

/// Stores `text` and gives it back: a large text is held once while it is stored and cut. A
/// text this result's fitting stored already is not stored again.
async fn store_and_give_back(fitting: &Fitting, text: String) -> (StoreOutcome, String) {
    let memo = fitting.memo(&[&text]);
    if let Some(done) = memo.and_then(|(stored, key)| stored.get(key)) {
        return (done, text);
    }
    let (done, text) = store_once(&fitting.store, text).await;
    if let Some((stored, key)) = memo {
        stored.put(key, &done);
    }
    (done, text)
}

async fn store_once(store: &Arc<dyn ArtifactStore>, text: String) -> (StoreOutcome, String) {
    let store = Arc::clone(store);
    // A store that panics gives the text back too: the cut goes on without the artifact.
    let (stored, text) = blocking(move || {
        let stored = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            store_text(store.as_ref(), &text)
        }));
        (stored, text)
    })
    .await
    .unwrap_or_else(|| {
        (
            Ok(Err(crate::artifacts::ArtifactError::Io(
                std::io::Error::other("the artifact writer's task failed"),
            ))),
            String::new(),
        )
    });
    let stored = match stored {
        Ok(stored) => stored.map_err(|error| format!("the artifact store failed ({error})")),
        Err(_) => Err("the artifact store panicked".to_owned()),
    };
    (stored, text)
}

/// Stores a media block's data as an artifact `read_artifact` returns as the same content
/// type.
async fn store_media(
    fitting: &Fitting,
    kind: &str,
    mime: &str,
    data: &str,
) -> Result<ArtifactId, String> {
    let memo = fitting.memo(&[kind, mime, data]);
    if let Some(done) = memo.and_then(|(stored, key)| stored.get(key)) {
        return done.map(|(id, _)| id);
    }
    let done = store_media_once(fitting, kind, mime, data).await;
    if let Some((stored, key)) = memo {
        stored.put(key, &done.clone().map(|id| (id, 0)));
    }
    done
}

async fn store_media_once(
    fitting: &Fitting,
    kind: &str,
    mime: &str,
    data: &str,
) -> Result<ArtifactId, String> {
    let store = Arc::clone(&fitting.store);
    let (kind, mime, data) = (kind.to_owned(), mime.to_owned(), data.to_owned());
    blocking(move || {
        artifacts::store_media(store.as_ref(), &kind, &mime, &data).map_err(|e| e.to_string())
    })
    .await
    .unwrap_or_else(|| Err("the artifact store failed".to_owned()))
}

/// A media artifact as the content block it was: an image, an audio clip, or an embedded
/// resource's blob.
pub(crate) fn media_block(media: artifacts::StoredMedia, id: &ArtifactId) -> Value {
    let artifacts::StoredMedia {
        kind,
        mime_type: mime,
        data,
    } = media;
    match kind.as_str() {
        "blob" => json!({
            "type": "resource",
            "resource": { "uri": format!("toolsmith://artifact/{id}"), "mimeType": mime, "blob": data },
        }),
        kind => json!({ "type": kind, "mimeType": mime, "data": data }),
    }
}

/// The most content blocks a result keeps as blocks; the rest are kept as an artifact, and
/// never built into values (an answer of a million tiny blocks costs what its text costs).
const MAX_BLOCKS: usize = crate::mcp::caps::MAX_BLOCKS;

/// Fits a `tools/call` result (as the server wrote it) to the cap, as `call` says (the tool's
/// name, its `outputSchema`, the copies that go). An answer that is not a tool result that can be read
/// (not an object, `content` not a list, nested past 128 levels, a string that is not Unicode)
/// is an error saying why.
pub(crate) async fn tool_result(
    raw: &RawValue,
    call: &Call<'_>,
    fitting: &Fitting,
) -> Result<(Value, Report), String> {
    let Some(cap) = &fitting.tokens else {
        return tool_result_in_chars(raw, call, fitting).await;
    };
    let fitted = hold_tokens(
        fitting,
        cap,
        raw.get(),
        |tries| async move { tool_result_in_chars(raw, call, &tries).await },
        |(result, _)| tokens_seen(result, cap.counter().as_ref()),
    )
    .await?;
    let ((mut result, mut report), sent, written) = fitted;
    // Every artifact the tries wrote is named, whichever try was sent.
    for id in written {
        if !report.artifacts.contains(&id) {
            report.artifacts.push(id);
        }
    }
    if report.cut
        && let Value::Object(result) = &mut result
    {
        report.tokens = Some((cap.max(), sent));
        insert_meta(result, report.to_value());
    }
    Ok((result, report))
}

/// Holds a fitting to a cap in tokens: the answer (`sample`, its JSON, which counts at least
/// what a reader sees of it) is measured only until it is over; then `fit` fits it in chars to
/// what the cap holds, and what a reader sees of it (`seen`) is counted, fitted again smaller
/// while over or larger while well under ([`TokenCap::next_allowance`]). Each text is stored
/// once, whatever the tries. What was fitted, its tokens, and every artifact the tries wrote (a
/// try at another size may have written one the fitting sent does not name: blocks left out
/// past half of a different cap).
async fn hold_tokens<T, E, Fit>(
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
fn tokens_seen(result: &Value, counter: &dyn TokenCounter) -> usize {
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

/// [`tool_result`] with the cap in chars alone.
async fn tool_result_in_chars(
    raw: &RawValue,
    call: &Call<'_>,
    fitting: &Fitting,
) -> Result<(Value, Report), String> {
    let mut parsed =
        bounded::call_result(raw.get(), MAX_BLOCKS).map_err(|error| error.to_string())?;
    let mut report = Report::default();
    let structure = match parsed.structured.take() {
        Some(raw) => {
            report.received_chars += raw.get().chars().count() as u64;
            match serde_json::from_str::<Value>(raw.get()) {
                Ok(value) => Some((value, raw)),
                Err(error) => {
                    // Not sent: a note says why.
                    report.cut = true;
                    parsed.tail.push(text_block(format!(
                        "[toolsmith: the structured result cannot be read ({error}), so it is \
                         left out]"
                    )));
                    None
                }
            }
        }
        None => None,
    };
    // A list's items, a text each past the blocks a result keeps, are read back as blocks:
    // they are written again from the list's cut.
    if let Some((value, _)) = &structure
        && parsed.beyond.0 > 0
        && single_list_of(value) == Some(parsed.content.len() + parsed.beyond.0 + parsed.tail.len())
    {
        let (_, lines) = std::mem::take(&mut parsed.beyond);
        let beyond: Vec<Value> = lines
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        parsed.content.extend(beyond);
        parsed.content.append(&mut parsed.tail);
    }
    // One copy of a structured result, when the server is set to send one.
    let mut left_out = 0;
    let mut structure = structure;
    match call.copies() {
        Copies::TextOnly => {
            if let Some((_, raw)) = structure.take() {
                left_out += raw.get().chars().count();
                report.received_chars -= left_out as u64;
            }
        }
        Copies::StructuredOnly if !parsed.is_error => {
            if let Some((value, _)) = &structure {
                left_out += leave_out_copies(value, &mut parsed.content);
            }
        }
        _ => {}
    }
    let mut rest = Map::new();
    for (key, raw) in parsed.rest {
        let value = serde_json::from_str(raw.get()).map_err(|error| format!("`{key}`: {error}"))?;
        rest.insert(key, value);
    }
    // What the setting left out was received (the figures say so), not cut: it is the same
    // data as what was sent.
    report.received_chars += left_out as u64;
    // A task-augmented call answers with its task, not a result: nothing to fit yet.
    if !parsed.has_content && rest.contains_key("task") {
        return Ok((Value::Object(rest), report));
    }
    let mut notes: Vec<String> = Vec::new();
    let mut structured = None;
    let mut content_fitting = None;
    let mut fitted_blocks = Vec::new();
    let mut content = parsed.content;
    if let Some((value, raw)) = structure {
        let content_chars: usize = content.iter().map(visible_chars).sum();
        let structure_chars = crate::structure::compact_chars(&value);
        // The whole is kept when the two are over the cap, whatever becomes of it.
        let stored = if structure_chars + content_chars > fitting.cap {
            let stored = store(fitting, raw.get().to_owned()).await;
            report.kept(&stored);
            stored
        } else {
            Err(String::new())
        };
        let full = full_output(&stored);
        let continuation = Continuation::from(full).with_token_cap(fitting.marker_token_cap);
        let placed = structure::place(
            value,
            content,
            call.schema,
            fitting.cap,
            (&stored, continuation),
            parsed.is_error,
            visible_chars,
        );
        if placed.over {
            let fitted = Value::Object(rest);
            let result = over_cap_result(
                call.tool,
                &fitted,
                &mut report,
                fitting,
                OverCapWhy::NoValidCut,
            );
            return Ok((result, report));
        }
        content = placed.content;
        fitted_blocks = placed.fitted;
        notes.extend(placed.note);
        report.structure = placed.facts;
        if let Some((value, chars)) = placed.structure {
            report.sent_chars += chars as u64;
            content_fitting = Some(Fitting {
                cap: fitting.cap.saturating_sub(chars),
                ..fitting.clone()
            });
            structured = Some(value);
        }
    }
    let fitting = content_fitting.as_ref().unwrap_or(fitting);
    let style = if parsed.is_error {
        TrimStyle::error()
    } else {
        TrimStyle::default()
    };
    let content = fit_blocks(
        Blocks {
            blocks: content,
            fitted: fitted_blocks,
            beyond: parsed.beyond,
            tail: parsed.tail,
            notes,
        },
        fitting,
        &style,
        &mut report,
    )
    .await;
    let mut result = Map::new();
    result.insert("content".to_owned(), Value::Array(content));
    if let Some(structured) = structured {
        result.insert("structuredContent".to_owned(), structured);
    }
    // The server's word, as it said it.
    if parsed.is_error {
        result.insert("isError".to_owned(), Value::Bool(true));
    }
    result.extend(rest);
    if report.cut {
        // What the marker says, for a host to read: beside the server's own `_meta`.
        insert_meta(&mut result, report.to_value());
    }
    Ok((Value::Object(result), report))
}

/// What a tool's call is fitted by: the tool's name (the over-cap error names it), its
/// `outputSchema`, when it states one, and which copies of a structured result go.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call<'a> {
    pub(crate) tool: &'a str,
    pub(crate) schema: Option<&'a OutputSchema>,
    pub(crate) send: Copies,
}

impl Call<'_> {
    /// The copies that go: [`Copies::Auto`] sends the text alone for a tool whose structure
    /// only wraps it, both otherwise.
    fn copies(&self) -> Copies {
        match self.send {
            Copies::Auto if self.schema.is_some_and(OutputSchema::wraps_text) => Copies::TextOnly,
            Copies::Auto => Copies::Both,
            send => send,
        }
    }
}

/// How many items a structure's one list has, when it is an object of one member, a list.
fn single_list_of(structure: &Value) -> Option<usize> {
    let members = structure.as_object()?;
    match members.values().collect::<Vec<_>>()[..] {
        [Value::Array(items)] if members.len() == 1 => Some(items.len()),
        _ => None,
    }
}

/// Leaves out of `content` the text blocks `structure` repeats; the chars a reader would have
/// seen of them.
fn leave_out_copies(structure: &Value, content: &mut Vec<Value>) -> usize {
    let texts: Vec<&str> = content
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect();
    let all_items = matches!(
        crate::copies::repeat(structure, &texts),
        Some(crate::copies::Repeat::Items { .. })
    );
    let mut left_out = 0;
    content.retain(|block| {
        let copy = block.get("type").and_then(Value::as_str) == Some("text")
            && block
                .get("text")
                .and_then(Value::as_str)
                .is_some_and(|text| all_items || crate::copies::repeats(structure, text));
        if copy {
            left_out += visible_chars(block);
        }
        !copy
    });
    left_out
}

/// Where a note says the full output is, as a marker names it.
fn full_output(stored: &StoreOutcome) -> FullOutput<'_> {
    match stored {
        Ok((id, omitted)) if *omitted > 0 => FullOutput::StoredCapped {
            id: id.as_str(),
            reader: READ_ARTIFACT,
            omitted_bytes: *omitted,
        },
        Ok((id, _)) => FullOutput::Stored {
            id: id.as_str(),
            reader: READ_ARTIFACT,
        },
        Err(reason) => FullOutput::Failed { reason },
    }
}

/// Puts the cut's facts in a result's `_meta` under [`CUT_META_KEY`], keeping every key the
/// server put there (a `_meta` that is not an object is the server's, and left as it is).
fn insert_meta(result: &mut Map<String, Value>, facts: Value) {
    let meta = result
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.insert(CUT_META_KEY.to_owned(), facts);
    }
}

/// The error result a cut result becomes for a server set to answer an error over the cap
/// ([`OverCap::Error`](crate::tool::OverCap::Error)), or for a structure no cut of which both
/// matches its schema and fits ([`OverCapWhy`]): its size, the cap, the artifacts holding
/// it whole, none of its content or structure; the cut's facts in its `_meta` as ever.
pub(crate) fn over_cap_result(
    tool: &str,
    fitted: &Value,
    report: &mut Report,
    fitting: &Fitting,
    why: OverCapWhy,
) -> Value {
    let text = crate::registry::facts::over_cap_error(
        tool,
        report.received_chars,
        fitting.cap,
        why,
        if report.artifacts.is_empty() {
            // Every store of the fitting failed (its marker would have said why).
            Err("the artifact store failed")
        } else {
            Ok(&report.artifacts)
        },
    );
    let none = Continuation::from(FullOutput::NotKept);
    let text = trim::fit_with(&text, fitting.cap, &TrimStyle::error(), &none)
        .into_text()
        .into_owned();
    // Nothing of the result was sent: the error's words are all a reader sees.
    report.cut = true;
    report.sent_chars = text.chars().count() as u64;
    report.cuts.clear();
    let mut result = match error_result(text) {
        Value::Object(result) => result,
        _ => Map::new(),
    };
    // The server's own `_meta` stays the result's.
    if let Some(meta) = fitted.get("_meta") {
        result.insert("_meta".to_owned(), meta.clone());
    }
    insert_meta(&mut result, report.to_value());
    Value::Object(result)
}

/// An error result saying `why`.
pub(crate) fn error_result(why: String) -> Value {
    json!({ "content": [{ "type": "text", "text": why }], "isError": true })
}

/// The chars a reader sees of a content block: a text's (or an embedded resource's text),
/// none of an image's or audio clip's (media are not text), the JSON of any other block.
pub(crate) fn visible_chars(block: &Value) -> usize {
    visible_size(block, |text| text.chars().count())
}

/// What a reader sees of a block, sized by `size`: its text (or its embedded resource's), none
/// of an image or audio clip, the JSON of anything else. One rule for chars and for tokens.
fn visible_size(block: &Value, size: impl Fn(&str) -> usize) -> usize {
    match kind_of(block) {
        Kind::Text => block
            .get("text")
            .or_else(|| {
                block
                    .get("resource")
                    .and_then(|resource| resource.get("text"))
            })
            .and_then(Value::as_str)
            .map_or(0, size),
        Kind::Media => 0,
        Kind::Other => size(&block.to_string()),
    }
}

/// A block on its way through the fitter: the upstream's, or a note the fitter wrote.
struct Item {
    block: Value,
    note: bool,
}

/// A result's content on its way to [`fit_blocks`].
struct Blocks {
    /// The blocks kept as blocks.
    blocks: Vec<Value>,
    /// Indices of `blocks` fitted already (a structure's texts written again from its cut):
    /// laid out as they are, as notes are.
    fitted: Vec<usize>,
    /// The blocks past [`MAX_BLOCKS`], as the JSON they were: how many, one a line.
    beyond: (usize, String),
    /// The last blocks, after those past the limit.
    tail: Vec<Value>,
    /// Notes that follow the content (what the reader was reading comes first).
    notes: Vec<String>,
}

/// Lays out a result's content within the cap, in order, by the rule of the module: the owner
/// of the cap, which counts every char a reader sees ([`visible_chars`]).
async fn fit_blocks(
    content: Blocks,
    fitting: &Fitting,
    style: &TrimStyle,
    report: &mut Report,
) -> Vec<Value> {
    let Blocks {
        blocks,
        fitted,
        beyond,
        tail,
        notes,
    } = content;
    let mut items: Vec<Item> = Vec::with_capacity(blocks.len() + tail.len() + 1);
    // Where the blocks past the limit were: after the first, before the last.
    let head = blocks.len();
    // Media over the limits become notes.
    let mut media_kept = 0usize;
    for (i, block) in blocks.into_iter().chain(tail).enumerate() {
        if fitted.contains(&i) {
            report.received_chars += visible_chars(&block) as u64;
            items.push(Item { block, note: true });
            continue;
        }
        let Some((kind, mime, data)) =
            media_of(&block).filter(|_| matches!(kind_of(&block), Kind::Media))
        else {
            items.push(Item { block, note: false });
            continue;
        };
        let Some(why) = fitting
            .media
            .leave_out(data.len(), false, media_kept, media_kept)
        else {
            media_kept += 1;
            items.push(Item { block, note: false });
            continue;
        };
        let (kind, mime, size) = (kind.to_owned(), mime.to_owned(), data.len());
        let stored = store_media(fitting, &kind, &mime, data).await;
        report.cut = true;
        if let Ok(id) = &stored {
            report.artifacts.push(id.clone());
        }
        let what = if kind == "blob" {
            "resource"
        } else {
            kind.as_str()
        };
        let note = left_out_note(
            what,
            &mime,
            size,
            &why,
            stored.as_ref().map_err(String::as_str),
        );
        items.push(Item {
            block: text_block(note),
            note: true,
        });
    }

    // Blocks past the most a result carries: kept as they were, as one artifact.
    if beyond.0 > 0 {
        let (count, lines) = beyond;
        report.received_chars += lines.chars().count() as u64;
        let stored = store(fitting, lines).await;
        report.kept(&stored);
        let note = format!(
            "[toolsmith: {} more content blocks left out, past the {} a result may carry; {}, \
             one block a line]",
            grouped(count),
            grouped(MAX_BLOCKS),
            kept_as(&stored)
        );
        items.insert(
            head,
            Item {
                block: text_block(note),
                note: true,
            },
        );
    }
    items.extend(notes.into_iter().map(|note| Item {
        block: text_block(note),
        note: true,
    }));

    // Other blocks pass, up to half the cap; the rest are kept together as one artifact. Notes
    // count as what they are, text the model reads.
    let half = fitting.cap / 2;
    let mut fixed_chars = 0usize;
    let mut left_out: Vec<Value> = Vec::new();
    let mut first_left_out = None;
    let mut kept: Vec<Item> = Vec::with_capacity(items.len());
    for item in items {
        if item.note {
            fixed_chars += item.block["text"].as_str().map_or(0, |t| t.chars().count());
            kept.push(item);
            continue;
        }
        if !matches!(kind_of(&item.block), Kind::Other) {
            kept.push(item);
            continue;
        }
        let chars = item.block.to_string().chars().count();
        report.received_chars += chars as u64;
        if left_out.is_empty() && fixed_chars + chars <= half {
            fixed_chars += chars;
            kept.push(item);
        } else {
            first_left_out.get_or_insert(kept.len());
            left_out.push(item.block);
        }
    }
    if let Some(at) = first_left_out {
        let count = left_out.len();
        let lines: String = left_out.iter().map(|block| format!("{block}\n")).collect();
        let stored = store(fitting, lines).await;
        report.kept(&stored);
        let note = format!(
            "[toolsmith: {} more content blocks (resource links and others) left out, past half \
             the {}-char cap; {}, one block a line]",
            grouped(count),
            grouped(fitting.cap),
            kept_as(&stored)
        );
        fixed_chars += note.chars().count();
        kept.insert(
            at,
            Item {
                block: text_block(note),
                note: true,
            },
        );
    }

    // Notes that do not fit beside the other blocks are cut, sharing the room fairly: the cap
    // holds whatever the notes say.
    let note_chars: Vec<(usize, usize)> = kept
        .iter()
        .enumerate()
        .filter(|(_, item)| item.note)
        .map(|(i, item)| (i, visible_chars(&item.block)))
        .collect();
    let others = fixed_chars - note_chars.iter().map(|&(_, chars)| chars).sum::<usize>();
    let note_room = fitting.cap.saturating_sub(others);
    if fixed_chars > fitting.cap {
        let wants: Vec<usize> = note_chars.iter().map(|&(_, chars)| chars).collect();
        let mut shares = vec![0; wants.len()];
        crate::fair::fill(&mut shares, &wants, note_room);
        let none = Continuation::from(FullOutput::NotKept);
        for (&(i, chars), share) in note_chars.iter().zip(shares) {
            if chars > share
                && let Some(Value::String(note)) = kept[i].block.get_mut("text")
            {
                *note = trim::fit_with(note, share, &TrimStyle::error(), &none)
                    .into_text()
                    .into_owned();
            }
        }
        fixed_chars = others
            + kept
                .iter()
                .filter(|item| item.note)
                .map(|item| visible_chars(&item.block))
                .sum::<usize>();
    }

    // Texts share what is left, max-min fairly; a text over its share is cut.
    let room = fitting.cap.saturating_sub(fixed_chars);
    let separators = join_small_texts(&mut kept, room);
    let texts: Vec<(usize, usize)> = kept
        .iter_mut()
        .enumerate()
        .filter(|(_, item)| !item.note && matches!(kind_of(&item.block), Kind::Text))
        .filter_map(|(i, item)| Some((i, text_slot(&mut item.block)?.as_str()?.chars().count())))
        .collect();
    let wants: Vec<usize> = texts.iter().map(|&(_, chars)| chars).collect();
    let mut shares = vec![0; wants.len()];
    crate::fair::fill(&mut shares, &wants, room);
    // The line breaks that joined texts are not what the server sent.
    report.received_chars += (wants.iter().sum::<usize>() - separators) as u64;
    report.sent_chars += fixed_chars as u64;
    // A cut text is followed by a link to its artifact, an MCP resource a client can read.
    let mut links: Vec<(usize, Value)> = Vec::new();
    let cuts_before = report.cuts.len();
    for (&(i, chars), share) in texts.iter().zip(shares) {
        if chars <= share {
            report.sent_chars += chars as u64;
            continue;
        }
        let Some(slot) = text_slot(&mut kept[i].block) else {
            continue;
        };
        // Taken out of the block, not copied: the block gets its cut text back.
        let Value::String(text) = slot.take() else {
            continue;
        };
        let (stored, text) = store_and_give_back(fitting, text).await;
        report.kept(&stored);
        // The link's chars come out of the text's share: together they fit it.
        // Only where it costs little of what the model reads (at most 1/50 of the share; the
        // signal gate holds the rest): under that, the marker and `_meta` name the artifact.
        let link = stored
            .as_ref()
            .ok()
            .map(|(id, _)| artifact_link(id))
            .filter(|link| visible_chars(link) * LINK_SHARE_DIVISOR <= share);
        let share = share - link.as_ref().map_or(0, visible_chars);
        let full = match &stored {
            Ok((id, omitted)) if *omitted > 0 => FullOutput::StoredCapped {
                id: id.as_str(),
                reader: READ_ARTIFACT,
                omitted_bytes: *omitted,
            },
            Ok((id, _)) => FullOutput::Stored {
                id: id.as_str(),
                reader: READ_ARTIFACT,
            },
            Err(reason) => FullOutput::Failed { reason },
        };
        let continuation = Continuation::from(full).with_token_cap(fitting.marker_token_cap);
        let (fitted, cut) = trim::fit_with(&text, share, style, &continuation).into_parts();
        let fitted = fitted.into_owned();
        if let Some(cut) = &cut {
            let artifact = stored.as_ref().ok().map(|(id, _)| id);
            report
                .cuts
                .push(crate::registry::facts::cut_fact(i, cut, artifact));
        }
        report.sent_chars += fitted.chars().count() as u64;
        *slot = Value::String(fitted);
        if let Some(link) = link {
            report.sent_chars += visible_chars(&link) as u64;
            links.push((i, link));
        }
    }
    if links.is_empty() {
        return kept.into_iter().map(|item| item.block).collect();
    }
    // Each link right after its text; the cut facts name the blocks where they now are.
    for fact in &mut report.cuts[cuts_before..] {
        if let Some(block) = fact["block"].as_u64() {
            let before = links.iter().filter(|(i, _)| (*i as u64) < block).count();
            fact["block"] = (block + before as u64).into();
        }
    }
    let mut links = links.into_iter().peekable();
    let mut blocks = Vec::with_capacity(kept.len() + links.len());
    for (i, item) in kept.into_iter().enumerate() {
        blocks.push(item.block);
        if let Some((_, link)) = links.next_if(|(at, _)| *at == i) {
            blocks.push(link);
        }
    }
    blocks
}

/// The least share of the room a text gets before many texts are cut as one body.
const LEAST_TEXT_SHARE: usize = 400;

/// Many text blocks over a small room (the Python SDK's text per item of a list) are one body:
/// joined, a line break between, into the first, so they are cut once, kept as one artifact,
/// and none is cut to nothing. Returns the line breaks added.
fn join_small_texts(kept: &mut Vec<Item>, room: usize) -> usize {
    let plain: Vec<usize> = kept
        .iter()
        .enumerate()
        .filter(|(_, item)| {
            !item.note
                && item.block.get("type").and_then(Value::as_str) == Some("text")
                && item.block.get("text").is_some_and(Value::is_string)
        })
        .map(|(i, _)| i)
        .collect();
    let total: usize = plain.iter().map(|&i| visible_chars(&kept[i].block)).sum();
    if plain.len() < 2 || total <= room || room / plain.len() >= LEAST_TEXT_SHARE {
        return 0;
    }
    let mut body = String::with_capacity(total + plain.len());
    for (n, &i) in plain.iter().enumerate() {
        if n > 0 {
            body.push('\n');
        }
        body.push_str(kept[i].block["text"].as_str().unwrap_or_default());
    }
    kept[plain[0]].block["text"] = Value::String(body);
    for &i in plain[1..].iter().rev() {
        kept.remove(i);
    }
    plain.len() - 1
}

/// A cut text gets a `resource_link` when the link takes at most 1/this of its share: the
/// registry's rule, which `serve` follows.
use crate::registry::LINK_SHARE_DIVISOR;

/// The chars a reader sees of an artifact's link (the same for every id).
pub(crate) fn link_chars() -> usize {
    static CHARS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CHARS.get_or_init(|| {
        let id = ArtifactId::parse("0123456789abcdef0123456789abcdef").expect("a valid id");
        visible_chars(&artifact_link(&id))
    })
}

/// A `resource_link` block naming artifact `id`: a client that reads resources reads the full
/// output there, in pages.
pub(crate) fn artifact_link(id: &ArtifactId) -> Value {
    json!({
        "type": "resource_link",
        "uri": id.uri(),
        "name": "full output",
        "mimeType": "text/plain",
    })
}

/// Fits a `resources/read` result to the cap: text contents share it, blobs follow the media
/// rule; the rest passes as it came.
pub(crate) async fn resource_contents(result: Value, fitting: &Fitting) -> Value {
    let Some(cap) = &fitting.tokens else {
        return resource_contents_in_chars(result, fitting).await;
    };
    let sample = result.to_string();
    let fitted = hold_tokens(
        fitting,
        cap,
        &sample,
        |tries| {
            let result = result.clone();
            async move {
                Ok::<_, std::convert::Infallible>(resource_contents_in_chars(result, &tries).await)
            }
        },
        |fitted| {
            let contents = fitted.get("contents").and_then(Value::as_array);
            contents
                .into_iter()
                .flatten()
                .map(
                    |content| match content.get("text").and_then(Value::as_str) {
                        Some(text) => cap.counter().count(text),
                        // A blob is not text: it does not count.
                        None => 0,
                    },
                )
                .sum()
        },
    )
    .await;
    match fitted {
        Ok((fitted, _, _)) => fitted,
        Err(never) => match never {},
    }
}

/// [`resource_contents`] with the cap in chars alone.
async fn resource_contents_in_chars(result: Value, fitting: &Fitting) -> Value {
    let Value::Object(mut result) = result else {
        return result;
    };
    let Some(Value::Array(contents)) = result.remove("contents") else {
        return Value::Object(result);
    };
    // As embedded resources, the contents fit like blocks; then they are unwrapped again.
    let blocks: Vec<Value> = contents
        .into_iter()
        .map(|resource| json!({ "type": "resource", "resource": resource }))
        .collect();
    let content = Blocks {
        blocks,
        fitted: Vec::new(),
        beyond: (0, String::new()),
        tail: Vec::new(),
        notes: Vec::new(),
    };
    let fitted = fit_blocks(
        content,
        fitting,
        &TrimStyle::default(),
        &mut Report::default(),
    )
    .await;
    let contents: Vec<Value> = fitted
        .into_iter()
        .map(|block| match block {
            Value::Object(mut block)
                if block.get("type").and_then(Value::as_str) == Some("resource") =>
            {
                block.remove("resource").unwrap_or(Value::Null)
            }
            // A note in place of a blob or of left-out contents: a text content of its own.
            Value::Object(block) => {
                let text = block.get("text").cloned().unwrap_or(Value::Null);
                json!({ "uri": "toolsmith://note", "mimeType": "text/plain", "text": text })
            }
            other => other,
        })
        .collect();
    result.insert("contents".to_owned(), Value::Array(contents));
    Value::Object(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::MemoryStore;
    use proptest::prelude::*;

    /// One content block of a result, as a server may write it.
    fn block() -> impl Strategy<Value = Value> {
        let text = (0usize..30_000, any::<u8>()).prop_map(|(chars, seed)| {
            let line = format!("line {seed} of the output, with an id {chars}\n");
            json!({ "type": "text", "text": line.repeat(chars / line.len() + 1) })
        });
        let image = (1usize..400_000).prop_map(
            |bytes| json!({ "type": "image", "mimeType": "image/png", "data": "A".repeat(bytes) }),
        );
        let link = (0usize..2_000).prop_map(|chars| {
            json!({ "type": "resource_link", "uri": format!("file:///{}", "d/".repeat(chars / 2)),
                    "name": "a file" })
        });
        let resource = (0usize..20_000).prop_map(|chars| {
            json!({ "type": "resource",
                    "resource": { "uri": "file:///log", "mimeType": "text/plain",
                                  "text": "x".repeat(chars) } })
        });
        // A JSON document as one text block, compact or pretty: cut as JSON, within the cap too.
        let json_text = (0usize..3_000, any::<bool>()).prop_map(|(rows, pretty)| {
            let rows: Vec<Value> = (0..rows)
                .map(|i| json!({ "id": i, "name": format!("row {i}") }))
                .collect();
            let text = if pretty {
                serde_json::to_string_pretty(&rows).unwrap()
            } else {
                serde_json::to_string(&rows).unwrap()
            };
            json!({ "type": "text", "text": text })
        });
        prop_oneof![4 => text, 2 => json_text, 2 => image, 1 => link, 1 => resource]
    }

    fn result() -> impl Strategy<Value = (Value, bool)> {
        (
            prop::collection::vec(block(), 0..6),
            any::<bool>(),
            prop::option::of(0usize..40_000),
        )
            .prop_map(|(content, is_error, structure)| {
                let mut result = json!({ "content": content });
                if is_error {
                    result["isError"] = json!(true);
                }
                if let Some(rows) = structure {
                    let rows: Vec<Value> = (0..rows / 40)
                        .map(|i| json!({ "row": i, "text": "a row of the table" }))
                        .collect();
                    result["structuredContent"] = json!({ "rows": rows });
                }
                (result, is_error)
            })
    }

    fn call(schema: Option<&OutputSchema>) -> Call<'_> {
        Call {
            tool: "a_tool",
            schema,
            send: Copies::Both,
        }
    }

    /// What most servers send: `JSON.stringify` of a large array as one text block. Cut, it is
    /// still JSON, its first and last elements whole and the marker inside naming the artifact.
    #[test]
    fn a_json_text_block_is_cut_to_json() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let store = Arc::new(MemoryStore::new());
        let fitting = Fitting::new(20_000, store.clone(), MediaLimits::default());
        let rows: Vec<Value> = (0..10_000)
            .map(|i| json!({ "id": i, "name": format!("item {i}"), "tags": ["a", "b"] }))
            .collect();
        for text in [
            serde_json::to_string(&rows).unwrap(),
            serde_json::to_string_pretty(&rows).unwrap(),
        ] {
            let result = json!({ "content": [{ "type": "text", "text": text }] });
            let raw = RawValue::from_string(result.to_string()).unwrap();
            let (fitted, report) = runtime
                .block_on(tool_result(&raw, &call(None), &fitting))
                .unwrap();
            let cut = fitted["content"][0]["text"].as_str().unwrap();
            assert!(cut.chars().count() <= 20_000);
            let value: Value = serde_json::from_str(cut).expect("the cut text is JSON");
            let kept = value.as_array().unwrap();
            assert_eq!(kept[0], rows[0]);
            assert_eq!(kept.last().unwrap(), rows.last().unwrap());
            let marker = crate::trim::find_marker(cut).expect("a marker");
            let id = report.artifacts[0].as_str();
            assert!(cut.contains(id), "the marker names artifact {id}");
            assert_eq!(marker.unit, "items");
        }
    }

    /// The memory server's `read_graph`: the graph as pretty JSON text, and as the structure
    /// its schema describes.
    fn graph(entities: usize) -> (Value, Value) {
        let entity = json!({ "type": "object", "properties": {
            "name": { "type": "string" }, "entityType": { "type": "string" },
            "observations": { "type": "array", "items": { "type": "string" } } },
            "required": ["name", "entityType", "observations"], "additionalProperties": false });
        let relation = json!({ "type": "object", "properties": {
            "from": { "type": "string" }, "to": { "type": "string" },
            "relationType": { "type": "string" } },
            "required": ["from", "to", "relationType"], "additionalProperties": false });
        let schema = json!({ "type": "object", "properties": {
            "entities": { "type": "array", "items": entity },
            "relations": { "type": "array", "items": relation } },
            "required": ["entities", "relations"], "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#" });
        let graph = json!({
            "entities": (0..entities).map(|i| json!({ "name": format!("entity {i}"),
                "entityType": "person", "observations": [format!("observation of {i}")] }))
                .collect::<Vec<_>>(),
            "relations": (1..entities).map(|i| json!({ "from": format!("entity {}", i - 1),
                "to": format!("entity {i}"), "relationType": "knows" })).collect::<Vec<_>>(),
        });
        let result = json!({
            "content": [{ "type": "text", "text": serde_json::to_string_pretty(&graph).unwrap() }],
            "structuredContent": graph,
        });
        (schema, result)
    }

    fn fit_typed_result(
        result: &Value,
        schema: &Value,
        cap: usize,
        send: Copies,
    ) -> (Value, Report, usize) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let store = Arc::new(MemoryStore::new());
        let fitting = Fitting::new(cap, store.clone(), MediaLimits::default());
        let schema = OutputSchema::new(schema);
        let raw = RawValue::from_string(result.to_string()).unwrap();
        let call = Call {
            tool: "read_graph",
            schema: Some(&schema),
            send,
        };
        let (fitted, report) = runtime
            .block_on(tool_result(&raw, &call, &fitting))
            .unwrap();
        let seen: usize = fitted["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(visible_chars)
            .sum();
        let structure = fitted
            .get("structuredContent")
            .map_or(0, |s| s.to_string().chars().count());
        assert!(seen + structure <= cap, "{seen} + {structure} over {cap}");
        assert_eq!(report.sent_chars as usize, seen + structure);
        if let Some(structure) = fitted.get("structuredContent") {
            assert!(
                schema.accepts(structure),
                "the structure matches its schema"
            );
        }
        (fitted, report, store.len())
    }

    #[test]
    fn a_typed_structure_and_its_json_text_are_cut_as_one_selection() {
        let (schema, result) = graph(400);
        let (fitted, report, stored) = fit_typed_result(&result, &schema, 4_000, Copies::Auto);
        let structure = &fitted["structuredContent"];
        let entities = structure["entities"].as_array().unwrap();
        assert!(entities.len() > 3 && entities.len() < 400);
        assert_eq!(entities[0]["name"], "entity 0");
        assert_eq!(entities.last().unwrap()["name"], "entity 399");
        // The text is the same cut, as the server laid it out.
        let text = fitted["content"][0]["text"].as_str().unwrap();
        assert_eq!(text, serde_json::to_string_pretty(structure).unwrap());
        // A note after it names the artifact that holds the whole; `_meta` states the places.
        let note = fitted["content"][1]["text"].as_str().unwrap();
        let id = report.artifacts[0].as_str();
        assert!(note.contains("/entities") && note.contains(id), "{note}");
        assert_eq!(stored, 1, "the whole structure, kept once");
        let facts = &fitted["_meta"][CUT_META_KEY]["structure"];
        assert_eq!(facts["artifact"], id);
        assert_eq!(facts["cuts"][0]["pointer"], "/entities");
        assert_eq!(facts["cuts"][0]["total"], 400);
        assert_eq!(facts["cuts"][0]["kept"], entities.len());
    }

    #[test]
    fn a_python_list_is_cut_once_its_texts_the_items_kept() {
        // A tool returning `list[Row]`: a text per row, and `{"result": rows}`.
        let schema = json!({ "$defs": { "Row": { "type": "object", "properties": {
            "id": { "type": "integer" }, "name": { "type": "string" }, "ok": { "type": "boolean" } },
            "required": ["id", "name", "ok"] } },
            "type": "object", "properties": { "result": { "type": "array",
            "items": { "$ref": "#/$defs/Row" } } }, "required": ["result"] });
        let rows: Vec<Value> = (0..2_000)
            .map(|i| json!({ "id": i, "name": format!("row {i}"), "ok": i != 777 }))
            .collect();
        let texts: Vec<Value> = rows
            .iter()
            .map(
                |row| json!({ "type": "text", "text": serde_json::to_string_pretty(row).unwrap() }),
            )
            .collect();
        let result = json!({ "content": texts, "structuredContent": { "result": rows } });
        for send in [Copies::Auto, Copies::StructuredOnly] {
            let (fitted, _, stored) = fit_typed_result(&result, &schema, 8_000, send);
            assert_eq!(stored, 1, "one artifact for one result");
            let kept = fitted["structuredContent"]["result"].as_array().unwrap();
            assert!(kept.contains(&rows[777]), "the failing row is kept");
            let content = fitted["content"].as_array().unwrap();
            assert!(
                content.iter().all(|block| visible_chars(block) > 0),
                "no empty block"
            );
            if send == Copies::Auto {
                // A text per kept row, then the note.
                assert_eq!(content.len(), kept.len() + 1);
                for (block, row) in content.iter().zip(kept) {
                    assert_eq!(block["text"], serde_json::to_string_pretty(row).unwrap());
                }
            } else {
                assert!(content.is_empty(), "{content:?}");
            }
        }
    }

    #[test]
    fn a_structure_no_cut_of_which_fits_is_the_over_cap_error_never_the_whole() {
        let schema = json!({ "type": "object", "properties": {
            "rows": { "type": "array", "minItems": 3_000 } }, "required": ["rows"] });
        let result = json!({ "content": [], "structuredContent": { "rows": (0..3_000).collect::<Vec<_>>() } });
        let (fitted, report, _) = fit_typed_result(&result, &schema, 4_000, Copies::Auto);
        assert_eq!(fitted["isError"], true);
        assert!(fitted.get("structuredContent").is_none());
        let text = fitted["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("output schema") && text.contains(report.artifacts[0].as_str()),
            "{text}"
        );
    }

    #[test]
    fn a_structure_that_only_wraps_its_text_is_not_sent_by_default() {
        let schema = json!({ "properties": { "result": { "title": "Result", "type": "string" } },
                             "required": ["result"], "title": "readOutput", "type": "object" });
        let text = "a line of the log\n".repeat(300);
        let result = json!({ "content": [{ "type": "text", "text": text }],
                             "structuredContent": { "result": text } });
        let (fitted, _, _) = fit_typed_result(&result, &schema, 10_000, Copies::Auto);
        assert!(fitted.get("structuredContent").is_none());
        assert_eq!(
            fitted["content"][0]["text"], text,
            "the text whole, within the cap"
        );
        let (both, _, _) = fit_typed_result(&result, &schema, 10_000, Copies::Both);
        assert!(both.get("structuredContent").is_some());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

        /// A cap in tokens holds on every token a reader sees (text, notes, markers, other
        /// blocks and the structure), for any cap; the facts state the tokens sent; a result
        /// fitted again, smaller, stores each of its texts once.
        #[test]
        fn a_cap_in_tokens_holds_on_what_a_reader_sees_and_each_text_is_stored_once(
            (result, _) in result(),
            max in prop_oneof![0usize..64, 64usize..3_000],
            per in 1usize..6,
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let store = Arc::new(MemoryStore::new());
            let counter = Arc::new(crate::tokens::CharsPerToken(per));
            let fitting = Fitting {
                tokens: Some(TokenCap::new(max, counter.clone())),
                ..Fitting::new(40_000, store.clone(), MediaLimits::default())
            };
            let raw = RawValue::from_string(result.to_string()).unwrap();
            let (fitted, report) = runtime
                .block_on(tool_result(&raw, &call(None), &fitting))
                .unwrap();
            let seen = tokens_seen(&fitted, counter.as_ref());
            prop_assert!(seen <= max, "{seen} tokens seen against a cap of {max}");
            if report.cut {
                prop_assert_eq!(report.tokens, Some((max, seen)));
                let facts = &fitted["_meta"][CUT_META_KEY]["tokens"];
                prop_assert_eq!(facts["sent"].as_u64(), Some(seen as u64));
            }
            // However many times it was fitted, each text was stored once.
            let named: std::collections::HashSet<_> = report.artifacts.iter().collect();
            prop_assert_eq!(store.len(), named.len());
        }

        /// The cap holds on every char a reader sees of the content, notes and markers counted,
        /// for any cap (tiny ones too); `isError` is the server's, and so is the structure of a
        /// tool with an output schema.
        #[test]
        fn the_cap_holds_with_every_notice_counted_and_is_error_is_the_servers(
            (result, is_error) in result(),
            cap in prop_oneof![0usize..64, 64usize..2_000, 2_000usize..40_000],
            with_schema in any::<bool>(),
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let fitting = Fitting::new(cap, Arc::new(MemoryStore::new()), MediaLimits::default());
            let schema = with_schema.then(|| {
                OutputSchema::new(&json!({
                    "type": "object",
                    "properties": { "rows": { "type": "array", "minItems": 1 } },
                    "required": ["rows"],
                }))
            });
            let raw = RawValue::from_string(result.to_string()).unwrap();
            let (fitted, report) = runtime
                .block_on(tool_result(&raw, &call(schema.as_ref()), &fitting))
                .unwrap();
            let seen: usize = fitted["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(visible_chars)
                .sum();
            // The report's figures are what happened: the chars sent are the chars a reader
            // sees, the structure's JSON included, and each artifact it names was written.
            let structure_chars = fitted
                .get("structuredContent")
                .map_or(0, |value| value.to_string().chars().count());
            prop_assert!(
                seen + structure_chars <= cap,
                "{seen} chars seen and a structure of {structure_chars} against a cap of {cap}"
            );
            let sent = report.sent_chars as usize;
            prop_assert_eq!(sent, seen + structure_chars);
            let given: usize = result["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(visible_chars)
                .sum();
            if !report.cut {
                prop_assert_eq!(report.received_chars, report.sent_chars);
                prop_assert_eq!(seen, given);
            }
            for id in &report.artifacts {
                let first_line = crate::artifacts::PageRequest {
                    offset: 0,
                    char_offset: 0,
                    limit: Some(1),
                    max_bytes: 64,
                };
                prop_assert!(
                    fitting.store.read_page(id, first_line).is_ok(),
                    "artifact {id} not written"
                );
            }
            // A tool with an output schema keeps its structure, cut by the schema (a client
            // checks it is there), or answers the over-cap error when no valid cut fits;
            // without one, a structure over the cap may be left out, the content saying so.
            // `isError` is the server's but for that error.
            let had = result.get("structuredContent").is_some();
            let kept = fitted.get("structuredContent").is_some();
            let over = !is_error && fitted.get("isError") == Some(&json!(true));
            prop_assert!(!kept || had, "a structure made up");
            prop_assert!(!over || (with_schema && had && !kept), "an error made up");
            if over && cap > 300 {
                let text = fitted["content"][0]["text"].as_str().unwrap();
                prop_assert!(text.contains("matches the tool's output schema"), "{text}");
            }
            if with_schema && !is_error && !over {
                prop_assert_eq!(kept, had);
            }
            if let (Some(schema), true) = (&schema, kept) {
                prop_assert!(schema.accepts(&fitted["structuredContent"]), "valid");
            }
        }
    }
}
