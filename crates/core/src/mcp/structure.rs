//! A result's structure (MCP's `structuredContent`) when it does not fit the cap: the one rule
//! of the proxy and of `serve`.
//!
//! A client reads the structure or the text, not both (the specification has a tool that
//! returns a structure send its JSON as text too), so the structure fits the cap on its own,
//! and the text is budgeted as every text is. Over the cap, the structure is cut to valid JSON
//! ([`fit_json`](crate::trim::fit_json), its marker inside naming the artifact that keeps it
//! whole). A tool that states an `outputSchema` has its structure checked by the official
//! clients (the Python SDK raises when a success of such a tool has none; the TypeScript SDK
//! validates it), so a cut is sent only when it still matches the schema (a string shortened,
//! an array without `minItems` thinned); when it would not, the structure is sent whole, as the
//! tool wrote it, within the message limit. Never is a success turned into an error.

use serde_json::Value;

use crate::artifacts::{ArtifactId, READ_ARTIFACT};
use crate::trim::{FullOutput, fit_json, grouped};

pub(crate) use crate::structure::OutputSchema;

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
