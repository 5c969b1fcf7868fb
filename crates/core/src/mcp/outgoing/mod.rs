//! Sending a fitted result: what a relayed tool result, or a resource's contents, is made into
//! on its way to an MCP client — the proxy's answers come through here, and `serve`'s link
//! after a registry's cut (the registry's own fit, `registry/fit.rs`, makes the rest of what
//! `serve` sends: two owners of fitting a result, not yet one). Every byte a cut leaves out is kept as an artifact;
//! everything else in a result passes as it came.
//!
//! A tool result goes through [`tool_result`] in steps, top to bottom:
//!
//! 1. **Read** ([`read`]): the answer parsed within bounds (blocks past [`MAX_BLOCKS`] kept as
//!    their JSON), its `structuredContent` read.
//! 2. **Copies** ([`Call::copies`]): the structure or the texts that repeat it left out, as the
//!    server is set to send.
//! 3. **Structure** ([`structure::place`]): a structure and the texts that repeat it share the
//!    cap as one selection; a cut is valid against the tool's `outputSchema` or the result is
//!    the over-cap error ([`over_cap_result`]), never the whole.
//! 4. **Content** ([`blocks::fit`]), the owner of the content's cap: media over their limits
//!    (each block's bytes, the result's count) stored and noted — media are not text and do not
//!    count; other blocks (resource links, unknown types) up to half the cap, the rest kept as
//!    one artifact; texts share what is left max-min fairly, a text over its share cut with
//!    the marker and followed by its link to the artifact ([`artifact_link`]) where the link costs little.
//! 5. **Tokens** ([`tokens`]): with a cap in tokens, steps 1–4 are run again at the allowance in
//!    chars that holds what a reader sees within it, each text stored once.
//!
//! Every char a reader sees counts: text, notes, the JSON of other blocks and of the
//! structure. `isError` is the server's word and is never changed.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::artifacts::{ArtifactStore, READ_ARTIFACT};
use crate::mcp::wire::bounded;
use crate::registry::CUT_META_KEY;
pub(crate) use crate::registry::facts::OverCapWhy;
use crate::tokens::TokenCap;
use crate::tool::MediaLimits;
use crate::trim::{self, Continuation, FullOutput, TrimStyle};
use blocks::Blocks;
use tokens::{hold_tokens, tokens_seen};

mod artifact_link;
mod blocks;
mod media;
mod resource;
mod store;
pub(crate) mod structure;
mod tokens;

pub(crate) use artifact_link::{link_after_cut, link_chars};
pub(crate) use blocks::visible_chars;
pub(crate) use media::media_block;
pub(crate) use resource::resource_contents;
use store::StoreOutcome;
pub(crate) use store::Stored;
use structure::OutputSchema;

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

/// What fitting did to one result, for the gateway's metrics and traces and the result's
/// `_meta`: the registry's cut facts, one type for both.
pub(crate) use crate::registry::facts::CutFacts;

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
) -> Result<(Value, CutFacts), String> {
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

/// [`tool_result`] with the cap in chars alone: the steps of the module, in order.
async fn tool_result_in_chars(
    raw: &RawValue,
    call: &Call<'_>,
    fitting: &Fitting,
) -> Result<(Value, CutFacts), String> {
    let mut report = CutFacts::default();
    let mut read = read(raw, &mut report)?;
    send_copies(&mut read, call.copies(), &mut report);
    let rest = rest_of(std::mem::take(&mut read.parsed.rest))?;
    // A task-augmented call answers with its task, not a result: nothing to fit yet.
    if !read.parsed.has_content && rest.contains_key("task") {
        return Ok((Value::Object(rest), report));
    }
    let Read { parsed, structure } = read;
    let is_error = parsed.is_error;
    let mut content = Blocks {
        blocks: parsed.content,
        fitted: Vec::new(),
        beyond: parsed.beyond,
        tail: parsed.tail,
        notes: Vec::new(),
    };
    let mut structured = None;
    let mut content_fitting = None;
    if let Some((value, raw)) = structure {
        let blocks = std::mem::take(&mut content.blocks);
        let placed =
            place_structure(value, &raw, blocks, call, is_error, fitting, &mut report).await;
        if placed.over {
            let result = over_cap_result(
                call.tool,
                &Value::Object(rest),
                &mut report,
                fitting,
                OverCapWhy::NoValidCut,
            );
            return Ok((result, report));
        }
        content.blocks = placed.content;
        content.fitted = placed.fitted;
        content.notes.extend(placed.note);
        report.structure = placed.facts;
        if let Some((value, chars)) = placed.structure {
            // The structure's chars come out of the content's cap.
            report.sent_chars += chars as u64;
            content_fitting = Some(Fitting {
                cap: fitting.cap.saturating_sub(chars),
                ..fitting.clone()
            });
            structured = Some(value);
        }
    }
    let style = if is_error {
        TrimStyle::error()
    } else {
        TrimStyle::default()
    };
    let fitting = content_fitting.as_ref().unwrap_or(fitting);
    let content = blocks::fit(content, fitting, &style, &mut report).await;
    let result = assemble(content, structured, is_error, rest, &report);
    Ok((result, report))
}

/// A tool result as read: its parts within bounds, and its structure with the JSON it came as.
struct Read {
    parsed: bounded::CallResult,
    structure: Option<(Value, Box<RawValue>)>,
}

/// Reads a tool result within bounds; a structure that cannot be read is left out, a note
/// saying why. A list's items sent a text each past the blocks a result keeps are read back
/// as blocks: they are written again from the list's cut.
fn read(raw: &RawValue, report: &mut CutFacts) -> Result<Read, String> {
    let mut parsed =
        bounded::call_result(raw.get(), MAX_BLOCKS).map_err(|error| error.to_string())?;
    let structure = match parsed.structured.take() {
        Some(raw) => {
            report.received_chars += raw.get().chars().count() as u64;
            match serde_json::from_str::<Value>(raw.get()) {
                Ok(value) => Some((value, raw)),
                Err(error) => {
                    // Not sent: a note says why.
                    report.cut = true;
                    parsed.tail.push(blocks::text_block(format!(
                        "[toolsmith: the structured result cannot be read ({error}), so it is \
                         left out]"
                    )));
                    None
                }
            }
        }
        None => None,
    };
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
    Ok(Read { parsed, structure })
}

/// Leaves out the copy of a structured result the server is set not to send. What is left out
/// was received (the figures say so), not cut: it is the same data as what is sent.
fn send_copies(read: &mut Read, copies: Copies, report: &mut CutFacts) {
    match copies {
        // Counted as received when it was read.
        Copies::TextOnly => read.structure = None,
        Copies::StructuredOnly if !read.parsed.is_error => {
            if let Some((value, _)) = &read.structure {
                let left_out = leave_out_copies(value, &mut read.parsed.content);
                report.received_chars += left_out as u64;
            }
        }
        _ => {}
    }
}

/// The members of a result that are not fitted, as they came.
fn rest_of(rest: Vec<(String, Box<RawValue>)>) -> Result<Map<String, Value>, String> {
    let mut members = Map::new();
    for (key, raw) in rest {
        let value = serde_json::from_str(raw.get()).map_err(|error| format!("`{key}`: {error}"))?;
        members.insert(key, value);
    }
    Ok(members)
}

/// Places a structure and the content that repeats it within the cap: the whole kept as an
/// artifact first when the two are over it.
async fn place_structure(
    value: Value,
    raw: &RawValue,
    content: Vec<Value>,
    call: &Call<'_>,
    is_error: bool,
    fitting: &Fitting,
    report: &mut CutFacts,
) -> structure::Placed {
    let content_chars: usize = content.iter().map(visible_chars).sum();
    let structure_chars = crate::structure::compact_chars(&value);
    // The whole is kept when the two are over the cap, whatever becomes of it.
    let stored = if structure_chars + content_chars > fitting.cap {
        let stored = store::store(fitting, raw.get().to_owned()).await;
        report.kept(&stored);
        stored
    } else {
        Err(String::new())
    };
    let continuation =
        Continuation::from(full_output(&stored)).with_token_cap(fitting.marker_token_cap);
    structure::place(
        value,
        content,
        call.schema,
        fitting.cap,
        (&stored, continuation),
        is_error,
        visible_chars,
    )
}

/// The fitted result: its content, its structure, the server's `isError` and every member it
/// sent that is not fitted; what a cut did in its `_meta`.
fn assemble(
    content: Vec<Value>,
    structured: Option<Value>,
    is_error: bool,
    rest: Map<String, Value>,
    report: &CutFacts,
) -> Value {
    let mut result = Map::new();
    result.insert("content".to_owned(), Value::Array(content));
    if let Some(structured) = structured {
        result.insert("structuredContent".to_owned(), structured);
    }
    // The server's word, as it said it.
    if is_error {
        result.insert("isError".to_owned(), Value::Bool(true));
    }
    result.extend(rest);
    if report.cut || report.compacted {
        // What the marker says, for a host to read: beside the server's own `_meta`.
        insert_meta(&mut result, report.to_value());
    }
    Value::Object(result)
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
    report: &mut CutFacts,
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

/// Which copy of a tool result with a structure the proxy sends: MCP lets a result carry its
/// data twice — `structuredContent`, and (the specification's advice, for clients that read
/// only text) the same data as a text block — and a host that shows the model both gets it
/// twice. By default both go, sharing the cap when the structure repeats the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Copies {
    /// Both, except for a tool whose structure only wraps its text (an object of one
    /// required string, `{"result": "…"}`, which the Python SDK makes of every tool returning
    /// `str`): its text alone, the tool listed without that schema (the default).
    #[default]
    Auto,
    /// Both, as the server sent them.
    Both,
    /// The text only: `structuredContent` is left out, and the server's tools are listed
    /// without their `outputSchema` (a client that checks results against one would otherwise
    /// refuse a result without a structure).
    TextOnly,
    /// The structure only, when the result has one: its text blocks are left out, and the
    /// structure gets the whole cap. A result without a structure is sent as it is.
    StructuredOnly,
}

impl Copies {
    /// The setting as a configuration writes it: `"auto"`, `"both"`, `"text-only"` or
    /// `"structured-only"`; `None` for anything else.
    pub fn from_setting(setting: &str) -> Option<Self> {
        match setting {
            "auto" => Some(Copies::Auto),
            "both" => Some(Copies::Both),
            "text-only" => Some(Copies::TextOnly),
            "structured-only" => Some(Copies::StructuredOnly),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
