//! What a server's metadata may cost: the caps a client and a proxy apply to the tools a
//! server lists, so that no server — compromised or careless — fills the model's context with
//! its descriptions on every request, or its memory with listings.

use std::borrow::Cow;

use crate::figures::grouped;

/// The most chars of a tool's description passed on; a longer one is cut, saying so.
pub const MAX_DESCRIPTION_CHARS: usize = 4_000;
/// The most chars a tool's schemas may have (its input schema and its output schema, as
/// JSON); a tool with larger ones is not served, and the log says so.
pub const MAX_SCHEMA_CHARS: usize = 64_000;
/// The most tools a client ([`McpClient`](super::McpClient)) takes from one server, for one
/// model to choose among; the rest are not served, and the log says so.
pub const MAX_TOOLS_PER_SERVER: usize = 1_000;
/// The most pages of one listing a client reads from a server: one that hands out cursors
/// forever is read this far.
pub const MAX_LIST_PAGES: usize = 100;
/// The most tools the proxy relays from one server: many more than a client takes, for the
/// proxy serves them on in pages ([`RELAY_PAGE_TOOLS`] a page) to clients that choose.
pub const MAX_RELAYED_TOOLS: usize = 100_000;
/// The most pages of one listing the proxy reads from a server.
pub const MAX_RELAYED_PAGES: usize = 1_000;
/// The most tools on one page of the proxy's `tools/list`; a longer listing is paged with
/// cursors.
pub const RELAY_PAGE_TOOLS: usize = 1_000;
/// The most content blocks of one result kept as blocks; the rest are passed on as one text of
/// their JSON, a block a line (the proxy keeps them as an artifact).
pub const MAX_BLOCKS: usize = 1_000;

/// `description` within [`MAX_DESCRIPTION_CHARS`]: itself, or its beginning and a note.
pub(crate) fn description(description: &str) -> Cow<'_, str> {
    let Some((end, _)) = description.char_indices().nth(MAX_DESCRIPTION_CHARS) else {
        return Cow::Borrowed(description);
    };
    let chars = description.chars().count();
    Cow::Owned(format!(
        "{}… [toolsmith: the server's description of {} chars is cut to {}]",
        &description[..end],
        grouped(chars),
        grouped(MAX_DESCRIPTION_CHARS)
    ))
}

/// Why a tool whose schemas have `chars` chars is not served, or `None` when they are within
/// the cap.
pub(crate) fn schema_refusal(server: &str, tool: &str, chars: usize) -> Option<String> {
    (chars > MAX_SCHEMA_CHARS).then(|| {
        format!(
            "the tool `{tool}` of the MCP server `{server}` is not served: its schemas have {} \
             chars, over the cap of {}",
            grouped(chars),
            grouped(MAX_SCHEMA_CHARS)
        )
    })
}

/// The `_meta` key under which each listed tool advertises the most characters a result of it
/// can have (Claude Code reads it).
pub const MAX_RESULT_META_KEY: &str = "anthropic/maxResultSizeChars";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_description_is_cut_and_says_so() {
        assert_eq!(description("short"), "short");
        let long = "é".repeat(10_000_000);
        let cut = description(&long);
        assert!(cut.ends_with(
            "… [toolsmith: the server's description of 10,000,000 chars is cut to 4,000]"
        ));
        assert!(cut.chars().count() < MAX_DESCRIPTION_CHARS + 100);
    }
}
