//! A structure — MCP's `structuredContent`, a tool's typed result — fitted to an allowance: the
//! one rule of the registry, `serve` and the proxy.
//!
//! A structure with an output schema is cut *by its schema* ([`fit_typed`]): arrays thinned by
//! whole items (the first, the last, and those that carry an error kept first), members the
//! schema does not require left out before any string is shortened, strings shortened only
//! where the schema lets them (no `pattern`, `format`, `enum` or `const`; never below
//! `minLength`), `minItems`, `required`, positional items, `$ref`/`$defs`, `allOf`, `anyOf` and
//! `oneOf` followed as a validator follows them. No marker is put inside a typed structure:
//! what was cut is stated beside it, a JSON Pointer (into the whole) per thinned array,
//! shortened string and member left out. The cut is checked by the schema's compiled
//! validator; when no cut is both valid and within the allowance, the answer is
//! [`Typed::Over`] — the caller answers the over-cap error, never the whole.
//!
//! A structure without a schema is cut as any JSON is ([`fit_json`](crate::trim::fit_json)),
//! its markers inside.

mod cut;
mod salient;
mod schema;

use serde_json::{Value, json};

/// The member a cut structure names its cut in, where the schema listed to the client admits
/// it ([`listed_schema`]): a host that shows only the structure (Claude Code, when a result
/// carries both) still reads that it was cut and where the whole is.
pub(crate) const NOTE_MEMBER: &str = "toolsmith/cut";

/// The keywords an object schema's root may use for [`NOTE_MEMBER`] to be added to it: with
/// any other (`patternProperties`, `propertyNames`, `maxProperties`, `allOf`, `$ref`, …) the
/// member might not be valid where the rest is, and no note goes inside the structure.
const NOTE_ADMITTING: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "minProperties",
    "title",
    "description",
    "$schema",
    "$id",
    "$defs",
    "definitions",
    "$comment",
    "examples",
    "default",
];

/// Whether the object schema `schema` admits [`NOTE_MEMBER`] once it is listed with it: an
/// object of named members (rooted in the keywords above), no member of that name.
fn admits_note(schema: &Value) -> bool {
    let Some(root) = schema.as_object() else {
        return false;
    };
    root.get("type").and_then(Value::as_str) == Some("object")
        && root
            .keys()
            .all(|keyword| NOTE_ADMITTING.contains(&keyword.as_str()))
        && root
            .get("properties")
            .is_none_or(|properties| properties.get(NOTE_MEMBER).is_none())
}

/// `schema` as it is listed to a client: with [`NOTE_MEMBER`], an optional string, added to
/// its members when it admits it — a cut structure then says inside it that it was cut. The
/// rest of the schema as the tool stated it. The one rule of the proxy's listing and `serve`'s.
pub(crate) fn listed_schema(schema: &Value) -> Value {
    if !admits_note(schema) {
        return schema.clone();
    }
    let mut listed = schema.clone();
    if let Some(root) = listed.as_object_mut() {
        let properties = root
            .entry("properties")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Value::Object(properties) = properties {
            properties.insert(
                NOTE_MEMBER.to_owned(),
                json!({
                    "type": "string",
                    "description": "Present only when toolsmith cut this result to fit its cap: \
                                    what was left out, and the artifact that keeps the whole \
                                    (read it with read_artifact)."
                }),
            );
        }
    }
    listed
}

/// A tool's output schema, compiled once, when the tool is listed.
pub(crate) struct OutputSchema {
    /// The schema as the tool states it: what a cut reads its rules from.
    root: Value,
    /// Whether the schema admits [`NOTE_MEMBER`] as [`listed_schema`] lists it.
    admits_note: bool,
    /// `None` when the schema cannot be compiled here (a remote reference, which is never
    /// fetched, or a keyword this validator rejects): no cut is then known to match it.
    validator: Option<jsonschema::Validator>,
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputSchema")
            .field("compiled", &self.validator.is_some())
            .finish_non_exhaustive()
    }
}

impl OutputSchema {
    /// Compiles `schema`, with a regular expression engine that runs in linear time (a pattern
    /// from an upstream server cannot make a check take exponential time).
    pub(crate) fn new(schema: &Value) -> Self {
        let validator = jsonschema::options()
            .with_pattern_options(jsonschema::PatternOptions::regex())
            .build(schema)
            .map_err(|error| {
                tracing::debug!("an output schema that cannot be checked here: {error}");
            })
            .ok();
        OutputSchema {
            root: schema.clone(),
            admits_note: admits_note(schema),
            validator,
        }
    }

    /// Whether `value` is known to match the schema.
    pub(crate) fn accepts(&self, value: &Value) -> bool {
        self.validator
            .as_ref()
            .is_some_and(|validator| validator.is_valid(value))
    }

    /// Whether the schema only wraps a text: an object of one required string member (the
    /// Python SDK's `{"result": "…"}` of every tool that returns `str`).
    #[cfg(feature = "mcp")]
    pub(crate) fn wraps_text(&self) -> bool {
        wraps_text(&self.root)
    }
}

/// Whether `schema` is an object of one required string member and nothing else: a structure
/// that only wraps its text.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) fn wraps_text(schema: &Value) -> bool {
    let Some(schema) = schema.as_object() else {
        return false;
    };
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return false;
    };
    let [(key, member)] = properties.iter().collect::<Vec<_>>()[..] else {
        return false;
    };
    let required = schema.get("required").and_then(Value::as_array);
    let is_string = member.get("type").and_then(Value::as_str) == Some("string");
    // Nothing else that constrains: words about it (title, description) only.
    const WORDS: &[&str] = &[
        "type",
        "properties",
        "required",
        "title",
        "description",
        "$schema",
        "additionalProperties",
    ];
    is_string
        && schema.get("type").and_then(Value::as_str) == Some("object")
        && required.is_some_and(|required| required.len() == 1 && required[0] == **key)
        && schema
            .keys()
            .all(|keyword| WORDS.contains(&keyword.as_str()))
}

/// A typed structure fitted to its allowance.
#[derive(Debug)]
pub(crate) enum Typed {
    /// Within the allowance as it is.
    Whole,
    /// Cut: valid against its schema and within the allowance.
    Cut(StructureCut),
    /// No cut is both valid against the schema and within the allowance (or the schema could not
    /// be compiled, so none is known to be): nothing of it may go.
    Over,
}

/// A structure cut by its schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StructureCut {
    /// What is sent.
    pub(crate) value: Value,
    /// Chars of its compact JSON.
    pub(crate) chars: usize,
    /// Chars of the whole's compact JSON.
    pub(crate) original_chars: usize,
    /// One fact per place cut: `{"pointer", "unit": "items" | "chars" | "member", …}`.
    pub(crate) places: Vec<Value>,
    /// Places cut past those listed.
    pub(crate) more_places: usize,
}

impl StructureCut {
    /// The facts of the cut, as a result's `_meta` states them, with the artifact that holds the
    /// whole (`stored`).
    pub(crate) fn facts(&self, stored: Option<&crate::artifacts::ArtifactId>) -> Value {
        let mut facts = json!({
            "originalChars": self.original_chars,
            "sentChars": self.chars,
            "cuts": self.places,
        });
        if self.more_places > 0 {
            facts["moreCuts"] = self.more_places.into();
        }
        if let Some(id) = stored {
            facts["artifact"] = id.as_str().into();
            facts["uri"] = id.uri().into();
        }
        facts
    }

    /// The places cut, as the note after a text that repeats the structure names them:
    /// `/entities 12 of 400 items`.
    pub(crate) fn summary(&self) -> Vec<String> {
        let grouped = |n: u64| crate::figures::grouped(n);
        let mut lines: Vec<String> = self
            .places
            .iter()
            .map(|place| {
                let pointer = place["pointer"].as_str().unwrap_or_default();
                let at = if pointer.is_empty() { "/" } else { pointer };
                match place["unit"].as_str() {
                    Some("member") => format!("{at} left out"),
                    Some(unit) => format!(
                        "{at} {} of {} {unit}",
                        grouped(place["kept"].as_u64().unwrap_or(0)),
                        grouped(place["total"].as_u64().unwrap_or(0)),
                    ),
                    None => at.to_owned(),
                }
            })
            .collect();
        if self.more_places > 0 {
            lines.push(format!("{} more places", grouped(self.more_places as u64)));
        }
        lines
    }
}

/// `value` fitted to `allowance` chars of compact JSON by `schema` (see the module's docs).
///
/// With `noted` (where the full output is, as a marker says it) and a schema that admits it
/// ([`listed_schema`]), the cut says inside it that it was cut: its [`NOTE_MEMBER`] holds the
/// note its texts end with, within the allowance too.
pub(crate) fn fit_typed(
    value: &Value,
    schema: &OutputSchema,
    allowance: usize,
    noted: Option<&crate::trim::Continuation<'_>>,
) -> Typed {
    let mut node = cut::Node::read(&schema.root, &[&schema.root], value, 0);
    let original_chars = node.size();
    if original_chars <= allowance {
        return Typed::Whole;
    }
    if schema.validator.is_none() {
        return Typed::Over;
    }
    let Some(cut) = cut_within(&mut node, schema, allowance, original_chars) else {
        return Typed::Over;
    };
    match noted.filter(|_| schema.admits_note && value.is_object()) {
        Some(continuation) => {
            Typed::Cut(with_note(cut, &mut node, schema, allowance, continuation))
        }
        None => Typed::Cut(cut),
    }
}

/// `cut` saying inside it that it was cut ([`NOTE_MEMBER`]: what was kept of how much and where
/// the whole is; the places cut are in `_meta` and the texts' note), cut smaller to make room
/// for it where it must be; `cut` as it is when no smaller cut leaves the room.
fn with_note(
    cut: StructureCut,
    node: &mut cut::Node<'_>,
    schema: &OutputSchema,
    allowance: usize,
    continuation: &crate::trim::Continuation<'_>,
) -> StructureCut {
    let noted = |mut cut: StructureCut| {
        let note = note_of(cut.chars, cut.original_chars, &[], continuation);
        let member = member_chars(&note);
        if cut.chars + member > allowance {
            return Err(Box::new((cut, member)));
        }
        if let Value::Object(members) = &mut cut.value {
            members.insert(NOTE_MEMBER.to_owned(), Value::String(note));
            cut.chars += member;
        }
        Ok(cut)
    };
    let (first, mut member) = match noted(cut) {
        Ok(cut) => return cut,
        Err(over) => *over,
    };
    // The data's room is the allowance less the note's (its figures may take a char or two
    // less once the cut is smaller: tried again).
    for _ in 0..NOTE_TRIES {
        let Some(smaller) = cut_within(
            node,
            schema,
            allowance.saturating_sub(member),
            first.original_chars,
        ) else {
            break;
        };
        match noted(smaller) {
            Ok(cut) => return cut,
            Err(over) => member = over.1 + 1,
        }
    }
    first
}

/// Tries at a smaller room before a noted cut gives up.
const NOTE_TRIES: usize = 4;
/// The note a cut structure states in [`NOTE_MEMBER`]: its texts' note.
fn note_of(
    kept: usize,
    total: usize,
    places: &[String],
    continuation: &crate::trim::Continuation<'_>,
) -> String {
    crate::trim::render_structure_note(kept, total, places, continuation)
}

/// The chars [`NOTE_MEMBER`] with `note` adds to an object's compact JSON: `,"toolsmith/cut":"…"`.
fn member_chars(note: &str) -> usize {
    let quoted = serde_json::to_string(note).map_or(0, |json| json.chars().count());
    NOTE_MEMBER.chars().count() + 2 + 2 + quoted
}

/// The first cut of the passes within `allowance` that `schema` accepts.
fn cut_within(
    node: &mut cut::Node<'_>,
    schema: &OutputSchema,
    allowance: usize,
    original_chars: usize,
) -> Option<StructureCut> {
    for ops in cut::PASSES {
        let Some((cut, chars, places, more_places)) = cut::cut(node, allowance, ops) else {
            continue;
        };
        // Exact by construction; checked, so a miscount can never send more than the cap.
        let sent = serde_json::to_string(&cut).map_or(usize::MAX, |json| json.chars().count());
        if sent != chars || sent > allowance {
            tracing::debug!("a structure's cut counted {chars} chars and is {sent}");
            continue;
        }
        if schema.accepts(&cut) {
            return Some(StructureCut {
                value: cut,
                chars,
                original_chars,
                places,
                more_places,
            });
        }
    }
    None
}

/// A typed structure and the texts that repeat it ([`Repeat`](crate::copies::Repeat)) fitted
/// together to `room` chars: the structure cut by its schema, the texts written again from the
/// cut (the same items kept), and `note` (the words after them, given the cut). `shared`: the
/// structure's chars, the texts' and the note's are within `room` together (a host may show
/// both); else the texts and the note are, and the structure is on its own. `None` when no cut
/// of the structure leaves room for its texts and note.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_with_copies(
    value: &Value,
    schema: &OutputSchema,
    repeat: &crate::copies::Repeat,
    copies_chars: usize,
    room: usize,
    shared: bool,
    note: impl Fn(&StructureCut) -> String,
    noted: Option<&crate::trim::Continuation<'_>>,
) -> Option<(StructureCut, Vec<String>, String)> {
    const TRIES: usize = 12;
    let whole = compact_chars(value);
    // The structure's part of the room, as its part of what fills it: then smaller while over.
    let parts = if shared {
        whole + copies_chars
    } else {
        whole.max(copies_chars)
    };
    let mut allowance = (room as u128 * whole as u128 / parts.max(1) as u128) as usize;
    allowance = allowance.min(whole.saturating_sub(1));
    for _ in 0..TRIES {
        let fitted = fit_typed(value, schema, allowance, noted);
        let cut = match fitted {
            Typed::Cut(cut) => cut,
            Typed::Whole => {
                allowance = whole.saturating_sub(1);
                continue;
            }
            Typed::Over => return None,
        };
        // The texts repeat the tool's data, the note (with the places cut) after them; the
        // note inside the cut is for a host that shows the structure alone.
        let texts = match cut.value.get(NOTE_MEMBER) {
            Some(_) => {
                let mut value = cut.value.clone();
                if let Value::Object(members) = &mut value {
                    members.remove(NOTE_MEMBER);
                }
                crate::copies::texts_of(&value, repeat)
            }
            None => crate::copies::texts_of(&cut.value, repeat),
        };
        let note = note(&cut);
        let text_chars: usize = texts.iter().map(|text| text.chars().count()).sum();
        let used = text_chars + note.chars().count() + if shared { cut.chars } else { 0 };
        if used <= room && cut.chars <= room {
            return Some((cut, texts, note));
        }
        // Smaller by what is over, in proportion; and smaller than this cut, which whole items
        // may have left well under its allowance.
        let scaled = (allowance as u128 * room as u128 / used.max(1) as u128) as usize;
        allowance = scaled.min(cut.chars.saturating_sub(1));
        if allowance == 0 {
            return None;
        }
    }
    None
}

/// Chars of `value`'s compact JSON.
pub(crate) fn compact_chars(value: &Value) -> usize {
    serde_json::to_string(value).map_or(0, |json| json.chars().count())
}

#[cfg(test)]
mod tests;
