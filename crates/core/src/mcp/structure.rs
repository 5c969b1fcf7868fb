//! A result's structure (MCP's `structuredContent`) and the content beside it, when together
//! they are over the cap: the one rule of the proxy (and of `serve`, through the registry,
//! which follows the same core rule).
//!
//! A host may show the model the structure, the text, or both: together they fit the cap.
//!
//! - A structure with an output schema is cut *by its schema*
//!   ([`fit_typed`](crate::structure::fit_typed)); its texts that repeat it — its JSON, or (the
//!   Python SDK's list) one text per item — are written again from the cut, the same items
//!   kept, and followed by a note naming the artifact that holds it whole; its cut's facts go in
//!   `_meta`. When no cut is valid and within the cap, the result is the over-cap error: none of
//!   it goes, never the whole.
//! - A structure without one is cut as any JSON ([`fit_json`](crate::trim::fit_json), its
//!   marker inside), or left out with a note saying where it is.
//!
//! The structure and the content share the cap max-min fairly: a structure that repeats the
//! text shares it with its copies as one pair.

use serde_json::{Map, Value, json};

use crate::copies::{self, Repeat};
use crate::structure::{StructureCut, Typed, compact_chars, fit_typed, fit_with_copies};
use crate::trim::Continuation;

pub(crate) use crate::structure::OutputSchema;

use crate::artifacts::{ArtifactId, READ_ARTIFACT};
use crate::trim::{FullOutput, fit_json, grouped};

/// A result's structure and content as they go.
#[derive(Debug, Default)]
pub(crate) struct Placed {
    /// The structure sent, if any, and the chars of its JSON.
    pub(crate) structure: Option<(Value, usize)>,
    /// The content, its texts that repeat the structure written again from its cut.
    pub(crate) content: Vec<Value>,
    /// Indices of `content` fitted already (the texts written again and the note after them):
    /// laid out as they are.
    pub(crate) fitted: Vec<usize>,
    /// A note to add after the content: the structure was left out, and where it is.
    pub(crate) note: Option<String>,
    /// The facts of the structure's cut, for `_meta`.
    pub(crate) facts: Option<Value>,
    /// No cut of the structure is valid against its schema and within the cap: the result
    /// is to be the over-cap error.
    pub(crate) over: bool,
}

/// Where the structure's whole is, for its note and facts.
pub(crate) type Kept<'a> = (&'a Result<(ArtifactId, u64), String>, Continuation<'a>);

/// Places `structure` (as it came) and `content` within `cap` chars, by the rule of the module;
/// `visible` counts what a reader sees of a block. `kept` is where the whole structure is (the
/// caller stored it, as it does whenever the two are over the cap) and how a note ends.
pub(crate) fn place(
    structure: Value,
    content: Vec<Value>,
    schema: Option<&OutputSchema>,
    cap: usize,
    kept: Kept<'_>,
    is_error: bool,
    visible: impl Fn(&Value) -> usize,
) -> Placed {
    let chars = compact_chars(&structure);
    let content_chars: usize = content.iter().map(&visible).sum();
    if chars + content_chars <= cap {
        return Placed {
            structure: Some((structure, chars)),
            content,
            ..Placed::default()
        };
    }
    let texts: Vec<(usize, &str)> = content
        .iter()
        .enumerate()
        .filter(|(_, block)| block.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|(i, block)| Some((i, block.get("text")?.as_str()?)))
        .collect();
    let only_texts: Vec<&str> = texts.iter().map(|&(_, text)| text).collect();
    let repeat = copies::repeat(&structure, &only_texts);
    let copy_blocks: Vec<usize> = match &repeat {
        Some(Repeat::Json { text, .. }) => vec![texts[*text].0],
        Some(Repeat::Items { .. }) => texts.iter().map(|&(i, _)| i).collect(),
        None => Vec::new(),
    };
    let Some(schema) = schema else {
        return untyped(structure, chars, content, content_chars, cap, kept);
    };
    if let Some(repeat) = &repeat {
        let copies_chars: usize = copy_blocks.iter().map(|&i| visible(&content[i])).sum();
        let mut shares = [0; 2];
        crate::fair::fill(
            &mut shares,
            &[chars + copies_chars, content_chars - copies_chars],
            cap,
        );
        let note = |cut: &StructureCut| {
            crate::trim::render_structure_note(
                cut.chars,
                cut.original_chars,
                &cut.summary(),
                &kept.1,
            )
        };
        if let Some((cut, texts, note)) =
            fit_with_copies(&structure, schema, repeat, copies_chars, shares[0], note)
        {
            let (content, fitted) = rewritten(content, &copy_blocks, texts, note);
            return Placed {
                facts: Some(cut.facts(kept.0.as_ref().ok().map(|(id, _)| id))),
                structure: Some((cut.value, cut.chars)),
                content,
                fitted,
                ..Placed::default()
            };
        }
    }
    // Alone: its fair share beside the content, or as much of the cap as it needs.
    let mut shares = [0; 2];
    crate::fair::fill(&mut shares, &[chars, content_chars], cap);
    for allowance in [shares[0], cap] {
        match fit_typed(&structure, schema, allowance) {
            Typed::Whole => {
                return Placed {
                    structure: Some((structure, chars)),
                    content,
                    ..Placed::default()
                };
            }
            Typed::Cut(cut) => {
                return Placed {
                    facts: Some(cut.facts(kept.0.as_ref().ok().map(|(id, _)| id))),
                    structure: Some((cut.value, cut.chars)),
                    content,
                    ..Placed::default()
                };
            }
            Typed::Over => {}
        }
    }
    if is_error {
        // An error needs no structure: the content goes, the structure is named.
        return Placed {
            note: Some(left_out_note(chars, cap, kept.0)),
            content,
            ..Placed::default()
        };
    }
    Placed {
        over: true,
        content,
        ..Placed::default()
    }
}

/// A structure without a schema: its fair share beside the content, cut as JSON (its marker
/// inside), or left out with a note.
fn untyped(
    structure: Value,
    chars: usize,
    content: Vec<Value>,
    content_chars: usize,
    cap: usize,
    kept: Kept<'_>,
) -> Placed {
    let mut shares = [0; 2];
    crate::fair::fill(&mut shares, &[chars, content_chars], cap);
    let text = structure.to_string();
    let cut = crate::trim::fit_json_with(&text, shares[0], 0.5, &kept.1)
        .and_then(|fit| serde_json::from_str::<Value>(&fit.text).ok())
        .filter(Value::is_object);
    match cut {
        Some(cut) => {
            let sent = compact_chars(&cut);
            Placed {
                structure: Some((cut, sent)),
                content,
                ..Placed::default()
            }
        }
        None => Placed {
            note: Some(left_out_note(chars, shares[0], kept.0)),
            content,
            ..Placed::default()
        },
    }
}

/// The note that says a structure was left out, and where it is.
fn left_out_note(chars: usize, cap: usize, stored: &Result<(ArtifactId, u64), String>) -> String {
    format!(
        "[toolsmith: the structured result ({} chars) is over the {}-char cap and left out; {}]",
        grouped(chars),
        grouped(cap),
        kept_as(stored)
    )
}

/// `content` with its blocks `copy_blocks` (the texts that repeat the structure) replaced by
/// `texts` and `note`, where the first of them was; and where those now are.
fn rewritten(
    content: Vec<Value>,
    copy_blocks: &[usize],
    texts: Vec<String>,
    note: String,
) -> (Vec<Value>, Vec<usize>) {
    let first = copy_blocks.first().copied().unwrap_or(content.len());
    let mut out = Vec::with_capacity(content.len() + texts.len() + 1);
    let mut fitted = Vec::with_capacity(texts.len() + 1);
    let mut texts = Some(texts);
    // The first copy keeps its block (its annotations), its text replaced.
    let mut template = None;
    for (i, block) in content.into_iter().enumerate() {
        if copy_blocks.contains(&i) {
            template.get_or_insert(block);
            if i == first {
                continue;
            }
            continue;
        }
        if i > first
            && let Some(texts) = texts.take()
        {
            push_copies(&mut out, &mut fitted, template.take(), texts, &note);
        }
        out.push(block);
    }
    if let Some(texts) = texts.take() {
        push_copies(&mut out, &mut fitted, template.take(), texts, &note);
    }
    (out, fitted)
}

fn push_copies(
    out: &mut Vec<Value>,
    fitted: &mut Vec<usize>,
    template: Option<Value>,
    texts: Vec<String>,
    note: &str,
) {
    let template = match template {
        Some(Value::Object(block)) => block,
        _ => Map::new(),
    };
    for text in texts {
        let mut block = template.clone();
        block.insert("type".to_owned(), json!("text"));
        block.insert("text".to_owned(), Value::String(text));
        fitted.push(out.len());
        out.push(Value::Object(block));
    }
    fitted.push(out.len());
    out.push(json!({ "type": "text", "text": note }));
}

/// What goes to the client of a structure over the cap.
#[derive(Debug)]
pub(crate) enum Over {
    /// Cut to fit: valid JSON, and a match of the schema when there is one.
    Cut(Value),
    /// Sent whole, as the tool wrote it: a cut would not match the tool's schema.
    Whole,
    /// Left out (no schema asks for it): it could not be cut to fit.
    LeftOut,
}

/// The structure `text` (over `cap` chars) as it goes to the client: cut to `cap` when that
/// is valid JSON and, for a tool with an output schema, matches it.
pub(crate) fn over_cap(
    text: &str,
    cap: usize,
    schema: Option<&OutputSchema>,
    full: &FullOutput<'_>,
) -> Over {
    let cut = fit_json(text, cap, 0.5, full)
        .and_then(|fit| serde_json::from_str::<Value>(&fit.text).ok());
    match (cut, schema) {
        (Some(cut), None) => Over::Cut(cut),
        (Some(cut), Some(schema)) if schema.accepts(&cut) => Over::Cut(cut),
        (_, Some(_)) => Over::Whole,
        (None, None) => Over::LeftOut,
    }
}

/// A structure as it goes to the client.
#[derive(Debug)]
pub(crate) enum Fitted {
    /// Sent (whole or cut), with the chars of its JSON.
    Kept(Value, usize),
    /// Left out; the note saying so and where it is.
    LeftOut(String),
}

/// The structure `text` (`chars` long) as it goes to the client: whole within `cap`; over it,
/// by the rule of [`over_cap`], its marker naming `stored` (the artifact holding it whole, or
/// why it could not be kept). The caller stores it only when it is over the cap.
pub(crate) fn fit(
    text: &str,
    chars: usize,
    cap: usize,
    schema: Option<&OutputSchema>,
    stored: &Result<(ArtifactId, u64), String>,
) -> Fitted {
    let unreadable = |error: serde_json::Error| {
        Fitted::LeftOut(format!(
            "[toolsmith: the structured result cannot be read ({error}), so it is left out]"
        ))
    };
    let whole =
        || serde_json::from_str(text).map_or_else(unreadable, |value| Fitted::Kept(value, chars));
    if chars <= cap {
        return whole();
    }
    let full = match stored {
        Ok((id, _)) => FullOutput::Stored {
            id: id.as_str(),
            reader: READ_ARTIFACT,
        },
        Err(reason) => FullOutput::Failed { reason },
    };
    match over_cap(text, cap, schema, &full) {
        Over::Cut(value) => {
            let sent = value.to_string().chars().count();
            Fitted::Kept(value, sent)
        }
        Over::Whole => whole(),
        Over::LeftOut => Fitted::LeftOut(format!(
            "[toolsmith: the structured result ({} chars) is over the {}-char cap and left out; {}]",
            grouped(chars),
            grouped(cap),
            kept_as(stored)
        )),
    }
}

/// Where a note says the rest is: `artifact ID, read it with read_artifact`.
pub(crate) fn kept_as(stored: &Result<(ArtifactId, u64), String>) -> String {
    match stored {
        Ok((id, _)) => format!("it is artifact {id}, read it with {READ_ARTIFACT}"),
        Err(why) => format!("it could not be kept: {why}"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn content(chars: usize) -> String {
        json!({ "content": "a line of the file\n".repeat(chars / 19) }).to_string()
    }

    #[test]
    fn a_string_is_cut_within_a_schema_that_allows_it() {
        let schema = OutputSchema::new(&json!({
            "type": "object",
            "properties": { "content": { "type": "string" } },
            "required": ["content"],
            "additionalProperties": false,
        }));
        let Over::Cut(cut) = over_cap(&content(50_000), 2_000, Some(&schema), &FullOutput::NotKept)
        else {
            panic!("a string can be cut")
        };
        assert!(cut.to_string().chars().count() <= 2_000);
        assert!(
            cut["content"]
                .as_str()
                .unwrap()
                .contains("[toolsmith: output truncated")
        );
    }

    #[test]
    fn a_cut_that_would_break_the_schema_sends_the_structure_whole() {
        // Every item is required: an array cut to fit breaks `minItems`.
        let schema = OutputSchema::new(&json!({
            "type": "object",
            "properties": { "rows": { "type": "array", "minItems": 5000 } },
            "required": ["rows"],
        }));
        let rows: Vec<u32> = (0..5000).collect();
        let text = json!({ "rows": rows }).to_string();
        assert!(matches!(
            over_cap(&text, 1_000, Some(&schema), &FullOutput::NotKept),
            Over::Whole
        ));
        // A schema this validator cannot compile (a remote reference, never fetched) is never
        // known to accept a cut.
        let remote = OutputSchema::new(&json!({ "$ref": "https://example.invalid/s.json" }));
        assert!(matches!(
            over_cap(&text, 1_000, Some(&remote), &FullOutput::NotKept),
            Over::Whole
        ));
        // Without a schema, the cut is valid JSON and goes.
        assert!(matches!(
            over_cap(&text, 1_000, None, &FullOutput::NotKept),
            Over::Cut(_)
        ));
    }
}
