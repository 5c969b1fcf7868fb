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

/// What a server offers under a name, as [`expose`] is asked to name it.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) struct Wanted<'a> {
    /// The server's name.
    pub(crate) server: &'a str,
    /// The server's name for it.
    pub(crate) name: &'a str,
    /// Whether it gets the server's name in front (`server__name`).
    pub(crate) prefixed: bool,
}

/// The separator between a server's name and its tool's.
const SEPARATOR: &str = "__";
/// Hex digits of the hash a name made unique ends with.
const HASH_DIGITS: usize = 8;

/// Names every item so that no two are the same and none is one of `reserved`; with `strict`
/// (tools), every name is also one every provider accepts (`^[a-zA-Z0-9_-]{1,64}$`). A name
/// that is already both is kept. One that is not (too long, characters providers refuse, or
/// taken by an earlier item) is the allowed part of what was wanted, cut to leave room for `_`
/// and 8 hex digits of a hash of the server's name and the item's own: the same listing gives
/// the same names, and two names that differ only past their 64th char stay two. `None` for an
/// item a server listed twice (the same server, the same name): it has one route.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) fn expose(
    wanted: &[Wanted<'_>],
    reserved: &[&str],
    strict: bool,
) -> Vec<Option<String>> {
    use std::collections::HashSet;
    let mut taken: HashSet<String> = reserved.iter().map(|name| (*name).to_owned()).collect();
    let mut listed: HashSet<(&str, &str)> = HashSet::new();
    wanted
        .iter()
        .map(|item| {
            if !listed.insert((item.server, item.name)) {
                return None;
            }
            let whole = if item.prefixed {
                format!("{}{SEPARATOR}{}", item.server, item.name)
            } else {
                item.name.to_owned()
            };
            let fits = !whole.is_empty() && (!strict || is_valid_tool_name(&whole));
            if fits && !taken.contains(&whole) {
                taken.insert(whole.clone());
                return Some(whole);
            }
            // Made unique: the hash of what the item is, then a counter in the unlikely case
            // that two hashes meet.
            let stem_chars = MAX_TOOL_NAME - 1 - HASH_DIGITS;
            let stem = if strict {
                replace_disallowed(&whole, stem_chars)
            } else {
                whole.chars().take(stem_chars).collect()
            };
            let hash = fnv1a(&[item.server.as_bytes(), &[0], item.name.as_bytes()]);
            let mut made = format!("{stem}_{:0width$x}", hash as u32, width = HASH_DIGITS);
            let mut again = 1u32;
            while taken.contains(&made) {
                again += 1;
                made = format!(
                    "{stem}_{:0width$x}",
                    fnv1a(&[made.as_bytes(), &again.to_le_bytes()]) as u32,
                    width = HASH_DIGITS
                );
            }
            taken.insert(made.clone());
            Some(made)
        })
        .collect()
}

/// The 64-bit FNV-1a hash of the parts, one after the other: small, and the same on every
/// machine and in every version, which a name made from it needs to be.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in parts.iter().flat_map(|part| part.iter()) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
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

    fn wanted<'a>(server: &'a str, name: &'a str, prefixed: bool) -> Wanted<'a> {
        Wanted {
            server,
            name,
            prefixed,
        }
    }

    #[test]
    fn every_item_gets_a_valid_name_of_its_own() {
        let long_a = format!("{}a", "x".repeat(10_000));
        let long_b = format!("{}b", "x".repeat(10_000));
        let items = [
            wanted("a", "b__c", true),
            wanted("a__b", "c", true),
            wanted("s", "read_artifact", false),
            wanted("s", "../etc/passwd", false),
            wanted("s", "nul\0byte", false),
            wanted("s", "new\nline", false),
            wanted("s", &long_a, false),
            wanted("s", &long_b, false),
            wanted("s", "", false),
            wanted("s", "plain", false),
            wanted("s", "plain", false),
        ];
        let named = expose(&items, &["read_artifact"], true);
        assert_eq!(
            named[0].as_deref(),
            Some("a__b__c"),
            "the first keeps its name"
        );
        assert_eq!(named[9].as_deref(), Some("plain"));
        assert_eq!(named[10], None, "listed twice by one server: one route");
        let served: Vec<&str> = named.iter().flatten().map(String::as_str).collect();
        let unique: std::collections::HashSet<&&str> = served.iter().collect();
        assert_eq!(unique.len(), served.len(), "{served:?}");
        for name in &served {
            assert!(is_valid_tool_name(name), "{name:?}");
            assert_ne!(*name, "read_artifact");
        }
        assert!(named[1].as_deref().unwrap().starts_with("a__b__c_"));
        assert!(named[6].as_deref().unwrap().starts_with("xxxx"));
        // The same listing gives the same names.
        assert_eq!(expose(&items, &["read_artifact"], true), named);
        // Prompts (not strict) keep characters providers would refuse.
        let prompts = expose(&[wanted("s", "code review", false)], &[], false);
        assert_eq!(prompts[0].as_deref(), Some("code review"));
    }
}
