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
use crate::figures::grouped;

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
        if let Some((cut, texts, note)) = fit_with_copies(
            &structure,
            schema,
            repeat,
            copies_chars,
            shares[0],
            true,
            note,
            Some(&kept.1),
        ) {
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
        match fit_typed(&structure, schema, allowance, Some(&kept.1)) {
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
    // No note where the texts carry it (the structure's JSON, with the note inside the cut).
    if !note.is_empty() {
        fitted.push(out.len());
        out.push(json!({ "type": "text", "text": note }));
    }
}

/// Where a note says the rest is: `artifact ID, read it with read_artifact`.
pub(crate) fn kept_as(stored: &Result<(ArtifactId, u64), String>) -> String {
    match stored {
        Ok((id, _)) => format!("it is artifact {id}, read it with {READ_ARTIFACT}"),
        Err(why) => format!("it could not be kept: {why}"),
    }
}
