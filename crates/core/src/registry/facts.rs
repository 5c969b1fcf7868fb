//! A cut's facts, machine-readable: what a marker says in words — the chars received and sent,
//! each text cut's lines kept and folded, where its full output is and where to read on — as a
//! JSON object a host can read without parsing the marker. The registry's
//! [`ToolResult::cut_facts`](super::ToolResult::cut_facts), and the MCP proxy and `serve` (in a
//! result's `_meta`, under [`CUT_META_KEY`]), write it here, one way.
//!
//! ```json
//! {
//!   "receivedChars": 1100070, "sentChars": 19984,
//!   "cuts": [{
//!     "block": 0, "originalChars": 1100070, "originalLines": 10001, "keptChars": 19204,
//!     "shownLines": [[1, 60], [9862, 10001]], "foldedLines": 0, "leftOutLines": 9801,
//!     "artifact": "0123456789abcdef0123456789abcdef",
//!     "uri": "toolsmith://artifact/0123456789abcdef0123456789abcdef",
//!     "nextOffset": 60
//!   }],
//!   "artifacts": [{ "id": "0123…", "uri": "toolsmith://artifact/0123…" }],
//!   "tokens": { "cap": 5000, "sent": 4960 }
//! }
//! ```
//!
//! `tokens` is there only where the cap is in tokens: the cap, and the tokens sent as the
//! counter in use counts them (the o200k encoder, or the estimate of four chars a token).
//!
//! `receivedChars` and `sentChars` count what a reader sees of the result: its content's text,
//! notes and the JSON of blocks that are neither text nor media, and, where MCP sends one
//! beside it, the `structuredContent` (as compact JSON). `nextOffset` (and `nextCharOffset`,
//! when the head ended inside a line) is where `read_artifact` goes on from: the first line
//! (0-based) the cut did not show whole.

use serde_json::{Value, json};

use crate::artifacts::ArtifactId;
use crate::trim::Cut;

/// The key of a result's `_meta` the cut's facts are under: `toolsmith/cut` (a key of ours, as
/// MCP asks of a `_meta` key that is not the protocol's).
pub const CUT_META_KEY: &str = "toolsmith/cut";

/// What a fitting did to one result, gathered as it went (the registry's results and the
/// proxy's; the proxy's metrics and traces read it too).
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct CutFacts {
    /// Whether anything was cut or left out (an artifact that could not be written too).
    pub(crate) cut: bool,
    /// Whether a text was written compactly to fit, nothing of it left out (its cut fact says
    /// `compacted`): stated, though nothing was cut.
    pub(crate) compacted: bool,
    /// The chars a reader would have seen of what the tool gave.
    pub(crate) received_chars: u64,
    /// The chars sent on.
    pub(crate) sent_chars: u64,
    /// One fact per text that was cut ([`cut_fact`]).
    pub(crate) cuts: Vec<Value>,
    /// Every artifact written, in order (texts, media, structures, blocks left out).
    pub(crate) artifacts: Vec<ArtifactId>,
    /// The cap in tokens and the tokens sent, where the cap was in tokens.
    pub(crate) tokens: Option<(usize, usize)>,
    /// What a cut of the structure did: the places cut and the artifact of the whole
    /// ([`StructureCut::facts`](crate::structure::StructureCut::facts)).
    pub(crate) structure: Option<Value>,
}

impl CutFacts {
    /// Something was cut or left out, its full form stored (or not, saying why).
    #[cfg(feature = "mcp")]
    pub(crate) fn kept(&mut self, stored: &Result<(ArtifactId, u64), String>) {
        self.cut = true;
        if let Ok((id, _)) = stored {
            self.artifacts.push(id.clone());
        }
    }

    /// The facts as the JSON object hosts read.
    pub(crate) fn to_value(&self) -> Value {
        let mut facts = json!({
            "receivedChars": self.received_chars,
            "sentChars": self.sent_chars,
            "cuts": self.cuts,
            "artifacts": self
                .artifacts
                .iter()
                .map(|id| json!({ "id": id.as_str(), "uri": id.uri() }))
                .collect::<Vec<_>>(),
        });
        if let Some((cap, sent)) = self.tokens {
            facts["tokens"] = json!({ "cap": cap, "sent": sent });
        }
        if let Some(structure) = &self.structure {
            facts["structure"] = structure.clone();
        }
        facts
    }
}

/// Why a result over its cap became an error rather than a cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OverCapWhy {
    /// Its tool (or server) asks for an error over the cap
    /// ([`OverCap::Error`](crate::tool::OverCap::Error)).
    Asked,
    /// Its structure has an output schema, and no cut of it both matches the schema and fits.
    NoValidCut,
}

/// The text of the error a result over its cap becomes when its tool (or server) asks for an
/// error rather than a cut ([`OverCap::Error`](crate::tool::OverCap::Error)): its size, the
/// cap, where it is kept whole and how to page it — the registry's and the proxy's words.
pub(crate) fn over_cap_error(
    tool: &str,
    chars: u64,
    cap: usize,
    why: OverCapWhy,
    kept: Result<&[ArtifactId], &str>,
) -> String {
    let why = match why {
        OverCapWhy::Asked => format!("`{tool}` answers an error rather than part of a result"),
        OverCapWhy::NoValidCut => {
            "no part of its structure that fits the cap matches the tool's output schema".to_owned()
        }
    };
    // Short: it must fit the cap it reports, whatever that is.
    let mut text = format!(
        "the result of `{tool}` is {} chars, over the cap of {}: none of it was sent ({why}).",
        crate::figures::grouped(chars as usize),
        crate::figures::grouped(cap),
    );
    let ids = match kept {
        Ok(ids) if !ids.is_empty() => ids,
        Ok(_) => return text + " It was not kept.",
        Err(why) => return text + &format!(" It could not be kept: {why}."),
    };
    match ids {
        [id] => text.push_str(&format!(
            " Kept whole as artifact {id}: read_artifact {{\"id\": \"{id}\", \"offset\": 0, \
             \"limit\": 200}} pages it.",
            id = id.as_str(),
        )),
        ids => {
            // A text and its structure, say: each kept whole, each named.
            let ids: Vec<String> = ids
                .iter()
                .map(|id| format!("artifact {}", id.as_str()))
                .collect();
            text.push_str(&format!(
                " Kept whole as {}: read_artifact {{\"id\": …, \"offset\": 0, \"limit\": 200}} \
                 pages each.",
                ids.join(" and ")
            ));
        }
    }
    text
}

/// The facts of one text's cut: the text's figures, the lines shown and folded, its artifact
/// and where to read on. `block` is the text's place among the result's content blocks.
pub(crate) fn cut_fact(block: usize, cut: &Cut, artifact: Option<&ArtifactId>) -> Value {
    let mut fact = json!({
        "block": block,
        "originalChars": cut.original_chars,
        "originalLines": cut.original_lines,
        "keptChars": cut.kept_chars,
        "shownLines": cut.spans.iter().map(|span| [span.first, span.last]).collect::<Vec<_>>(),
        "foldedLines": cut.folded_lines,
        "leftOutLines": cut.left_out_lines(),
    });
    if cut.compacted {
        // Written compactly, nothing left out: nothing was kept, nor needed to be.
        fact["compacted"] = json!(true);
    }
    if let Some(id) = artifact {
        fact["artifact"] = json!(id.as_str());
        fact["uri"] = json!(id.uri());
    }
    if let Some((line, chars)) = next_read(cut) {
        fact["nextOffset"] = json!(line);
        if chars > 0 {
            fact["nextCharOffset"] = json!(chars);
        }
    }
    fact
}

/// Where reading the full output goes on from: the first line (0-based) not shown whole, and
/// the chars of it already shown. `None` when every line was shown (a fold is shown).
fn next_read(cut: &Cut) -> Option<(usize, usize)> {
    if let Some(offset) = cut.next_offset {
        return Some((offset, 0));
    }
    // The head's last line was cut inside: read on from inside it (0-based, its chars shown).
    if let (Some(head), Some(chars)) = (cut.head_lines(), cut.head_line_chars) {
        return Some((head.last - 1, chars));
    }
    // The first line, counting from 1, that no span starting at the top covers.
    let mut next = 1;
    for span in &cut.spans {
        if span.first > next {
            break;
        }
        next = next.max(span.last + 1);
    }
    (next <= cut.original_lines).then_some((next - 1, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut_of(text: &str, room: usize) -> Cut {
        let trimmed = crate::trim::fit_with(
            text,
            room,
            &crate::trim::TrimStyle::head_tail(0.5),
            &crate::trim::Continuation::from(crate::trim::FullOutput::NotKept),
        );
        trimmed.into_parts().1.expect("a cut")
    }

    #[test]
    fn a_cut_states_its_figures_its_artifact_and_where_to_read_on() {
        let text: String = (1..=1_000).map(|i| format!("line {i}\n")).collect();
        let cut = cut_of(&text, 400);
        let id = ArtifactId::parse("0123456789abcdef0123456789abcdef").unwrap();
        let fact = cut_fact(0, &cut, Some(&id));
        assert_eq!(fact["originalChars"], text.chars().count());
        assert_eq!(fact["originalLines"], 1_000);
        assert_eq!(
            fact["uri"],
            "toolsmith://artifact/0123456789abcdef0123456789abcdef"
        );
        let head = cut.head_lines().expect("a head");
        // The next read starts at the first line the head did not show (0-based).
        assert_eq!(fact["nextOffset"], head.last, "{fact}");
        assert_eq!(fact["shownLines"][0], json!([1, head.last]));
        let shown: usize = cut.spans.iter().map(|s| s.last + 1 - s.first).sum();
        assert_eq!(fact["leftOutLines"], 1_000 - shown);
    }

    #[test]
    fn a_head_cut_inside_a_line_reads_on_from_inside_it() {
        let text = "x".repeat(10_000);
        let cut = cut_of(&text, 300);
        let fact = cut_fact(0, &cut, None);
        assert!(fact.get("artifact").is_none());
        assert_eq!(fact["nextOffset"], 0, "{fact}");
        assert_eq!(
            fact["nextCharOffset"],
            cut.head_line_chars.unwrap(),
            "{fact}"
        );
    }
}
