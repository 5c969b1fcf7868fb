//! The characters providers accept in tool names and call ids, in one place: checked here, and
//! repaired here when a name or an id comes from elsewhere (an MCP server, an old history).
//!
//! Both are ASCII letters, digits, `_` and `-`; a tool name has at most 64 of them.

/// The most bytes (all ASCII) of a tool name.
const MAX_TOOL_NAME: usize = 64;

/// Whether `b` may appear in a tool name or a call id.
const fn allowed(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Whether every byte of `text` is allowed.
const fn all_allowed(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !allowed(bytes[i]) {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether `name` is a tool name every provider accepts: `^[a-zA-Z0-9_-]{1,64}$`.
///
/// ```
/// use toolsmith::tool::is_valid_tool_name;
///
/// assert!(is_valid_tool_name("read_file"));
/// assert!(!is_valid_tool_name("read file"));
/// ```
pub const fn is_valid_tool_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_TOOL_NAME && all_allowed(name)
}

/// Whether `id` is a valid call id (`tool_use` id): `^[a-zA-Z0-9_-]+$`.
pub(crate) const fn is_valid_call_id(id: &str) -> bool {
    !id.is_empty() && all_allowed(id)
}

/// `text` with every character a name or an id may not hold replaced by `_`, the allowed ones
/// kept, at most `max` chars.
fn replace_disallowed(text: &str, max: usize) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii() && allowed(c as u8) {
                c
            } else {
                '_'
            }
        })
        .take(max)
        .collect()
}

/// A tool name providers accept, made from `name`: itself when it is one, else its allowed
/// characters kept, the others `_`, cut to 64 (`_` for an empty name).
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) fn sanitize_tool_name(name: &str) -> String {
    if is_valid_tool_name(name) {
        return name.to_owned();
    }
    let clean = replace_disallowed(name, MAX_TOOL_NAME);
    if clean.is_empty() {
        "_".to_owned()
    } else {
        clean
    }
}

/// A valid call id made from `id`: its allowed characters kept, the others `_` (`toolu` for an
/// empty id).
pub(crate) fn sanitize_call_id(id: &str) -> String {
    let clean = replace_disallowed(id, usize::MAX);
    if clean.is_empty() {
        "toolu".to_owned()
    } else {
        clean
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_follow_the_provider_rule() {
        assert!(is_valid_tool_name("read_file"));
        assert!(is_valid_tool_name("a-B_9"));
        assert!(is_valid_tool_name(&"x".repeat(64)));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name(&"x".repeat(65)));
        assert!(!is_valid_tool_name("read file"));
        assert!(!is_valid_tool_name("lire_é"));
    }

    #[test]
    fn names_and_ids_are_repaired_the_same_way() {
        assert_eq!(sanitize_tool_name("read.artifact"), "read_artifact");
        assert_eq!(sanitize_tool_name("lire é"), "lire__");
        assert_eq!(sanitize_tool_name(""), "_");
        assert_eq!(sanitize_tool_name(&"y".repeat(70)).len(), 64);
        assert_eq!(sanitize_call_id("call:0"), "call_0");
        assert_eq!(sanitize_call_id(""), "toolu");
        assert!(is_valid_call_id("toolu_01"));
        assert!(!is_valid_call_id("a b"));
    }
}
