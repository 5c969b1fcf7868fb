//! Every `tool_use` answered by exactly one `tool_result`: validation and repair.
//!
//! Matching is positional: a `tool_use` in an assistant message is answered in the user
//! message right after it, and claims results only up to the next assistant message. Ids must
//! also be unique across the whole conversation and match `^[a-zA-Z0-9_-]+$`, as the Anthropic
//! API demands (it refuses a request in which two `tool_use` blocks anywhere share an id);
//! [`repair`] renames a reused or malformed id, together with the results that answer it, so a
//! history from a provider that reuses ids turn after turn (`call_0` every time) is accepted.

use std::fmt;
use std::mem;

use super::message::{
    Block, Content, Extra, Message, ResultContent, Role, ToolResultBlock, ToolUseBlock,
};

/// The text of a synthetic result for a call that never got one.
pub const MISSING_RESULT_TEXT: &str = "Error: this tool call did not complete (the conversation \
    was interrupted before its result arrived), so it has no result. Call the tool again if you \
    still need it.";

/// A breach of the providers' rules, found by [`validate`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// A `tool_use` with no `tool_result` in the next message.
    MissingResult {
        /// The index of the assistant message.
        message: usize,
        /// The call's id.
        id: String,
    },
    /// A `tool_result` whose `tool_use` is not in the message before it (or that sits in an
    /// assistant message).
    OrphanResult {
        /// The index of the message holding it.
        message: usize,
        /// The id it names.
        id: String,
    },
    /// A second `tool_use` with the same id in one assistant message.
    DuplicateUse {
        /// The index of the assistant message.
        message: usize,
        /// The repeated id.
        id: String,
    },
    /// A second `tool_result` for the same call.
    DuplicateResult {
        /// The index of the user message.
        message: usize,
        /// The repeated id.
        id: String,
    },
    /// A `tool_use` in a user message.
    UseInUserMessage {
        /// The index of the user message.
        message: usize,
        /// The call's id.
        id: String,
    },
    /// A user message where a `tool_result` follows other content (results must come first).
    ResultsNotFirst {
        /// The index of the user message.
        message: usize,
    },
    /// A message with no content, which providers refuse.
    EmptyMessage {
        /// The index of the message.
        message: usize,
    },
    /// A `tool_use` id already used by a `tool_use` of an earlier assistant message.
    ReusedId {
        /// The index of the assistant message holding the later use.
        message: usize,
        /// The reused id.
        id: String,
        /// The index of the assistant message that used it first.
        first: usize,
    },
    /// A `tool_use` id that is empty or holds characters other than ASCII letters, digits,
    /// `_` and `-`.
    InvalidId {
        /// The index of the assistant message.
        message: usize,
        /// The id.
        id: String,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::MissingResult { message, id } => {
                write!(
                    f,
                    "message {message}: tool_use `{id}` has no tool_result in the next message"
                )
            }
            Violation::OrphanResult { message, id } => write!(
                f,
                "message {message}: tool_result `{id}` answers no tool_use of the message before it"
            ),
            Violation::DuplicateUse { message, id } => {
                write!(f, "message {message}: tool_use id `{id}` appears twice")
            }
            Violation::DuplicateResult { message, id } => {
                write!(f, "message {message}: tool_use `{id}` is answered twice")
            }
            Violation::UseInUserMessage { message, id } => {
                write!(f, "message {message}: a user message holds tool_use `{id}`")
            }
            Violation::ResultsNotFirst { message } => write!(
                f,
                "message {message}: tool_result blocks must come before any other content"
            ),
            Violation::EmptyMessage { message } => write!(f, "message {message}: has no content"),
            Violation::ReusedId { message, id, first } => write!(
                f,
                "message {message}: tool_use id `{id}` was already used in message {first}; ids \
                 must be unique across the conversation"
            ),
            Violation::InvalidId { message, id } => write!(
                f,
                "message {message}: tool_use id `{id}` must be non-empty ASCII letters, digits, \
                 `_` or `-`"
            ),
        }
    }
}

/// Lists every violation of the pairing rules. Allocates nothing for a valid history.
pub fn validate(history: &[Message]) -> Vec<Violation> {
    let mut violations = Vec::new();
    visit(history, &mut |violation| violations.push(violation()));
    violations
}

/// Whether the history breaks no pairing rule (stops at the first violation).
pub fn is_valid(history: &[Message]) -> bool {
    let mut valid = true;
    visit(history, &mut |_| valid = false);
    valid
}

/// Whether `id` is a valid `tool_use` id: `^[a-zA-Z0-9_-]+$`.
pub fn is_valid_tool_use_id(id: &str) -> bool {
    crate::names::is_valid_call_id(id)
}

/// The call a result in the message after `previous` answers: the `tool_use` of that id in
/// `previous`, when it is an assistant message (pairing is positional: a user message answers
/// the assistant message right before it).
pub(crate) fn answered_call<'a>(
    previous: Option<&'a Message>,
    tool_use_id: &str,
) -> Option<&'a ToolUseBlock> {
    previous
        .filter(|message| message.role == Role::Assistant)?
        .tool_uses()
        .find(|call| call.id == tool_use_id)
}

/// Ids seen so far, for finding reuse across the conversation without allocating: a bitmap of
/// their hashes on the stack rules out almost every id at once; a possible repeat is confirmed
/// by a scan of the earlier assistant messages.
struct SeenIds {
    bits: [u64; 4096],
}

impl SeenIds {
    fn new() -> Self {
        SeenIds { bits: [0; 4096] }
    }

    /// Marks `id` as seen; returns whether it may have been seen before: two bits of a mixed
    /// 64-bit FNV-1a hash in 32 KiB, so a false alarm (which costs a scan) is about 1 in 700 at
    /// 5,000 ids.
    fn insert(&mut self, id: &str) -> bool {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in id.bytes() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        // Mix the bits (murmur3's finaliser): ids that differ only at the end differ everywhere.
        hash ^= hash >> 33;
        hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
        hash ^= hash >> 33;
        hash = hash.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        hash ^= hash >> 33;
        let mut seen = true;
        for bit in [hash & 0x3_ffff, (hash >> 32) & 0x3_ffff] {
            let (word, mask) = ((bit / 64) as usize, 1u64 << (bit % 64));
            seen &= self.bits[word] & mask != 0;
            self.bits[word] |= mask;
        }
        seen
    }
}

/// The first assistant message before `before` with a `tool_use` of id `id`.
fn first_use(history: &[Message], before: usize, id: &str) -> Option<usize> {
    history[..before].iter().position(|message| {
        message.role == Role::Assistant && message.tool_uses().any(|tool_use| tool_use.id == id)
    })
}

/// Calls `found` for each violation; builds a violation (and allocates) only through it.
fn visit(history: &[Message], found: &mut dyn FnMut(&dyn Fn() -> Violation)) {
    let mut seen = SeenIds::new();
    for (i, message) in history.iter().enumerate() {
        if message.is_empty() {
            found(&|| Violation::EmptyMessage { message: i });
        }
        let blocks = message.blocks();
        match message.role {
            Role::Assistant => {
                for (k, block) in blocks.iter().enumerate() {
                    match block {
                        Block::ToolUse(tool_use) => {
                            let id = tool_use.id.as_str();
                            if !is_valid_tool_use_id(id) {
                                found(&|| Violation::InvalidId {
                                    message: i,
                                    id: id.to_owned(),
                                });
                            }
                            let repeated = blocks[..k]
                                .iter()
                                .filter_map(Block::as_tool_use)
                                .any(|earlier| earlier.id == id);
                            if !repeated
                                && seen.insert(id)
                                && let Some(first) = first_use(history, i, id)
                            {
                                found(&|| Violation::ReusedId {
                                    message: i,
                                    id: id.to_owned(),
                                    first,
                                });
                            }
                            if repeated {
                                found(&|| Violation::DuplicateUse {
                                    message: i,
                                    id: id.to_owned(),
                                });
                                continue;
                            }
                            let answered = history.get(i + 1).is_some_and(|next| {
                                next.role == Role::User
                                    && next.tool_results().any(|result| result.tool_use_id == id)
                            });
                            if !answered {
                                found(&|| Violation::MissingResult {
                                    message: i,
                                    id: id.to_owned(),
                                });
                            }
                        }
                        Block::ToolResult(result) => found(&|| Violation::OrphanResult {
                            message: i,
                            id: result.tool_use_id.clone(),
                        }),
                        _ => {}
                    }
                }
            }
            Role::User => {
                let previous = i
                    .checked_sub(1)
                    .map(|p| &history[p])
                    .filter(|p| p.role == Role::Assistant);
                let mut other_seen = false;
                let mut misordered = false;
                for (k, block) in blocks.iter().enumerate() {
                    match block {
                        Block::ToolResult(result) => {
                            misordered |= other_seen;
                            let id = result.tool_use_id.as_str();
                            let used = answered_call(previous, id).is_some();
                            if !used {
                                found(&|| Violation::OrphanResult {
                                    message: i,
                                    id: id.to_owned(),
                                });
                            } else if blocks[..k]
                                .iter()
                                .filter_map(Block::as_tool_result)
                                .any(|earlier| earlier.tool_use_id == id)
                            {
                                found(&|| Violation::DuplicateResult {
                                    message: i,
                                    id: id.to_owned(),
                                });
                            }
                        }
                        Block::ToolUse(tool_use) => {
                            other_seen = true;
                            found(&|| Violation::UseInUserMessage {
                                message: i,
                                id: tool_use.id.clone(),
                            });
                        }
                        _ => other_seen = true,
                    }
                }
                if misordered {
                    found(&|| Violation::ResultsNotFirst { message: i });
                }
            }
        }
    }
}

/// What [`repair`] changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RepairReport {
    /// Calls that got a synthetic error result (they never got one).
    pub synthesized: Vec<String>,
    /// Results removed because no call of their turn names them.
    pub orphans_removed: Vec<String>,
    /// Repeated calls removed (the first of each id in a message is kept).
    pub duplicate_uses_removed: Vec<String>,
    /// Repeated results removed (the first for each call is kept).
    pub duplicate_results_removed: Vec<String>,
    /// `tool_use` blocks removed from user messages.
    pub misplaced_uses_removed: Vec<String>,
    /// Results moved into the message right after their call (or before other content).
    pub moved: Vec<String>,
    /// Messages removed because nothing was left in them.
    pub empty_messages_removed: usize,
    /// Ids renamed, as `(old, new)`, with the results that answer them: reused across the
    /// conversation, or not of the allowed characters.
    pub renamed: Vec<(String, String)>,
}

impl RepairReport {
    /// Whether nothing was changed.
    pub fn is_empty(&self) -> bool {
        *self == RepairReport::default()
    }
}

impl fmt::Display for RepairReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("the history was valid; nothing changed");
        }
        let mut parts = Vec::new();
        let mut list = |what: &str, ids: &[String]| {
            if !ids.is_empty() {
                parts.push(format!("{what}: {}", ids.join(", ")));
            }
        };
        list("synthetic results for", &self.synthesized);
        list("orphan results removed", &self.orphans_removed);
        list("duplicate tool_use removed", &self.duplicate_uses_removed);
        list("duplicate results removed", &self.duplicate_results_removed);
        list(
            "tool_use removed from user messages",
            &self.misplaced_uses_removed,
        );
        list("results moved", &self.moved);
        let renamed: Vec<String> = self
            .renamed
            .iter()
            .map(|(old, new)| format!("`{old}` → `{new}`"))
            .collect();
        list("ids renamed", &renamed);
        if self.empty_messages_removed > 0 {
            parts.push(format!(
                "{} empty messages removed",
                self.empty_messages_removed
            ));
        }
        f.write_str(&parts.join("; "))
    }
}

/// Repairs the pairing in place and reports what changed. A valid history is neither copied nor
/// changed.
///
/// For each assistant message, its calls (the first of each id) claim their results from the
/// user messages up to the next assistant message; the claimed results go, in call order, to
/// the front of the user message right after it (created if missing); a call with no result
/// gets a synthetic error result saying it did not complete; unclaimed and repeated results are
/// removed, and so are `tool_use` blocks in user messages and messages left empty. First, a
/// `tool_use` id used by an earlier assistant message, or not of `[a-zA-Z0-9_-]`, is renamed
/// (the allowed characters kept, the rest `_`, then `_2`, `_3`, … until unique), and so are the
/// results of its turn that name it. Repairing a repaired history changes nothing.
pub fn repair(history: &mut Vec<Message>) -> RepairReport {
    repair_turns(history, true)
}

/// [`repair`], with the clean turns moved across as they are (`skip_clean`) or rebuilt like the
/// others (which must come to the same: the tests compare the two).
fn repair_turns(history: &mut Vec<Message>, skip_clean: bool) -> RepairReport {
    let mut report = RepairReport::default();
    if is_valid(history) {
        return report;
    }
    // A result that names a call made once in the whole conversation is that call's, wherever
    // it arrived; only where ids repeat does position decide.
    let once = calls_made_once(history);
    report.renamed = rename_ids(history);
    // The turns already in repaired form (most of a damaged history) move across as they are.
    let clean = if skip_clean {
        clean_turns(history)
    } else {
        Vec::new()
    };
    let old = mem::take(history);
    let mut out: Vec<Message> = Vec::with_capacity(old.len() + 1);
    let mut messages = old.into_iter().peekable();
    // User messages before the first assistant message answer nothing.
    while messages.peek().is_some_and(|m| m.role == Role::User) {
        if let Some(message) = messages.next() {
            let (kept, results) = split_user(message, &mut report);
            for (result, _) in results {
                report.orphans_removed.push(result.tool_use_id);
            }
            push_unless_empty(&mut out, kept, &mut report);
        }
    }
    let mut clean = clean.into_iter();
    while let Some(assistant) = messages.next() {
        if clean.next() == Some(true) {
            out.push(assistant);
            while let Some(message) = messages.next_if(|m| m.role == Role::User) {
                out.push(message);
            }
            continue;
        }
        let (assistant, uses) = clean_assistant(assistant, &mut report);
        let mut answers: Vec<Option<ToolResultBlock>> = vec![None; uses.len()];
        let mut following = Vec::new();
        while messages.peek().is_some_and(|m| m.role == Role::User) {
            if let Some(message) = messages.next() {
                let position = following.len();
                let (kept, results) = split_user(message, &mut report);
                for (result, was_first) in results {
                    match uses.iter().position(|id| *id == result.tool_use_id) {
                        Some(slot) if answers[slot].is_none() => {
                            if position > 0 || !was_first {
                                report.moved.push(result.tool_use_id.clone());
                            }
                            answers[slot] = Some(result);
                        }
                        Some(_) => report.duplicate_results_removed.push(result.tool_use_id),
                        None if once.contains(&result.tool_use_id) => {
                            // A result that came after a later assistant message: back to the
                            // answer of its call, in place of the error written for it there.
                            if let Some(result) = place_late(&mut out, result, &mut report) {
                                report.orphans_removed.push(result.tool_use_id);
                            }
                        }
                        None => report.orphans_removed.push(result.tool_use_id),
                    }
                }
                following.push(kept);
            }
        }
        let assistant_empty = assistant.is_empty();
        if assistant_empty {
            report.empty_messages_removed += 1;
        } else {
            out.push(assistant);
        }
        let mut following = following.into_iter();
        if !uses.is_empty() && !assistant_empty {
            let mut blocks: Vec<Block> = answers
                .into_iter()
                .zip(&uses)
                .map(|(answer, id)| {
                    Block::ToolResult(answer.unwrap_or_else(|| {
                        report.synthesized.push(id.clone());
                        ToolResultBlock {
                            tool_use_id: id.clone(),
                            content: Some(ResultContent::Text(MISSING_RESULT_TEXT.to_owned())),
                            is_error: Some(true),
                            extra: Extra::new(),
                        }
                    }))
                })
                .collect();
            let mut extra = Extra::new();
            if let Some(first) = following.next() {
                extra = first.extra;
                match first.content {
                    Content::Text(text) if !text.is_empty() => blocks.push(Block::text(text)),
                    Content::Text(_) => {}
                    Content::Blocks(rest) => blocks.extend(rest),
                }
            }
            out.push(Message {
                role: Role::User,
                content: Content::Blocks(blocks),
                extra,
            });
        }
        for message in following {
            push_unless_empty(&mut out, message, &mut report);
        }
    }
    *history = out;
    report
}

/// Of the ids that results name outside their turn (the only ones [`repair`] asks about), those
/// of calls made exactly once in `history`. Results that answer a call of their own turn are
/// not looked at, so a history of thousands of calls is not copied to find a few late results.
fn calls_made_once(history: &[Message]) -> std::collections::HashSet<String> {
    use std::collections::HashMap;
    let mut counts: HashMap<&str, usize> = HashMap::new();
    let mut turn: Option<&Message> = None;
    for message in history {
        if message.role == Role::Assistant {
            turn = Some(message);
            continue;
        }
        for result in message.tool_results() {
            let id = result.tool_use_id.as_str();
            if !turn.is_some_and(|call| call.tool_uses().any(|call| call.id == id)) {
                counts.insert(id, 0);
            }
        }
    }
    if counts.is_empty() {
        return std::collections::HashSet::new();
    }
    for tool_use in history.iter().flat_map(Message::tool_uses) {
        if let Some(count) = counts.get_mut(tool_use.id.as_str()) {
            *count += 1;
        }
    }
    counts
        .into_iter()
        .filter(|&(_, count)| count == 1)
        .map(|(id, _)| id.to_owned())
        .collect()
}

/// For each assistant message of `history`, in order, whether its turn (it and the user
/// messages up to the next one) is already what [`repair`] would make of it: the calls of
/// distinct ids, answered in their order at the front of the next message and nowhere else, no
/// call in a user message, no message empty. Such a turn is moved across untouched.
fn clean_turns(history: &[Message]) -> Vec<bool> {
    let mut clean = Vec::new();
    let mut i = history
        .iter()
        .position(|m| m.role == Role::Assistant)
        .unwrap_or(history.len());
    while i < history.len() {
        let assistant = &history[i];
        let following = history[i + 1..]
            .iter()
            .take_while(|m| m.role == Role::User)
            .count();
        clean.push(turn_is_clean(assistant, &history[i + 1..i + 1 + following]));
        i += 1 + following;
    }
    clean
}

fn turn_is_clean(assistant: &Message, following: &[Message]) -> bool {
    if assistant.is_empty() || following.iter().any(Message::is_empty) {
        return false;
    }
    let blocks = assistant.blocks();
    let mut calls = 0;
    for (k, block) in blocks.iter().enumerate() {
        match block {
            Block::ToolResult(_) => return false,
            Block::ToolUse(call) => {
                let repeated = blocks[..k]
                    .iter()
                    .filter_map(Block::as_tool_use)
                    .any(|earlier| earlier.id == call.id);
                if repeated {
                    return false;
                }
                calls += 1;
            }
            _ => {}
        }
    }
    let pairing = |block: &Block| matches!(block, Block::ToolResult(_) | Block::ToolUse(_));
    let (rest, others) = match following.split_first() {
        Some((first, others)) if calls > 0 => {
            let Content::Blocks(answers) = &first.content else {
                return false;
            };
            if answers.len() < calls {
                return false;
            }
            let (answers, rest) = answers.split_at(calls);
            let in_order = answers
                .iter()
                .zip(assistant.tool_uses())
                .all(|(answer, call)| {
                    answer
                        .as_tool_result()
                        .is_some_and(|answer| answer.tool_use_id == call.id)
                });
            if !in_order {
                return false;
            }
            (rest, others)
        }
        None if calls > 0 => return false,
        _ => (&[][..], following),
    };
    !rest.iter().any(pairing) && !others.iter().any(|m| m.blocks().iter().any(pairing))
}

/// Puts a late `result` where its call is answered in `out` (the history repaired so far), in
/// place of the error the repair wrote there for it; gives it back when there is none.
fn place_late(
    out: &mut [Message],
    result: ToolResultBlock,
    report: &mut RepairReport,
) -> Option<ToolResultBlock> {
    for message in out.iter_mut().rev().filter(|m| m.role == Role::User) {
        let Content::Blocks(blocks) = &mut message.content else {
            continue;
        };
        for block in blocks.iter_mut() {
            if let Block::ToolResult(answer) = block
                && answer.tool_use_id == result.tool_use_id
            {
                let synthesized = report
                    .synthesized
                    .iter()
                    .position(|id| *id == result.tool_use_id);
                let Some(position) = synthesized else {
                    // Answered already: this one is a duplicate.
                    report.duplicate_results_removed.push(result.tool_use_id);
                    return None;
                };
                report.synthesized.remove(position);
                report.moved.push(result.tool_use_id.clone());
                *answer = result;
                return None;
            }
        }
    }
    Some(result)
}

/// Renames reused and malformed `tool_use` ids, and the results of their turn that name them;
/// returns what was renamed. Deterministic: the same history always gets the same names.
pub(crate) fn rename_ids(history: &mut [Message]) -> Vec<(String, String)> {
    use std::collections::HashSet;
    let mut renamed = Vec::new();
    if !needs_renaming(history) {
        return renamed;
    }
    // Every id in use anywhere, so a new name never collides with a later one.
    let mut taken: HashSet<String> = history
        .iter()
        .flat_map(|message| message.tool_uses().map(|tool_use| tool_use.id.clone()))
        .collect();
    let mut used_before: HashSet<String> = HashSet::new();
    for i in 0..history.len() {
        if history[i].role != Role::Assistant {
            continue;
        }
        let mut turn: Vec<(String, String)> = Vec::new();
        let mut in_this_message: HashSet<String> = HashSet::new();
        if let Content::Blocks(blocks) = &mut history[i].content {
            for block in blocks.iter_mut() {
                let Block::ToolUse(tool_use) = block else {
                    continue;
                };
                if let Some((_, new)) = turn.iter().find(|(old, _)| *old == tool_use.id) {
                    // A repeat within the message follows the first, and is removed as such.
                    tool_use.id = new.clone();
                    continue;
                }
                let first_here = in_this_message.insert(tool_use.id.clone());
                let reused = first_here && used_before.contains(&tool_use.id);
                if !reused && is_valid_tool_use_id(&tool_use.id) {
                    continue;
                }
                let new = fresh_id(&tool_use.id, &taken);
                taken.insert(new.clone());
                turn.push((tool_use.id.clone(), new.clone()));
                tool_use.id = new;
            }
        }
        used_before.extend(history[i].tool_uses().map(|tool_use| tool_use.id.clone()));
        used_before.extend(turn.iter().map(|(old, _)| old.clone()));
        // The results of this turn: the user messages up to the next assistant message.
        for message in history[i + 1..]
            .iter_mut()
            .take_while(|message| message.role == Role::User)
        {
            if let Content::Blocks(blocks) = &mut message.content {
                for block in blocks.iter_mut() {
                    if let Block::ToolResult(result) = block
                        && let Some((_, new)) =
                            turn.iter().find(|(old, _)| *old == result.tool_use_id)
                    {
                        result.tool_use_id = new.clone();
                    }
                }
            }
        }
        renamed.extend(turn);
    }
    renamed
}

/// Whether [`rename_ids`] has anything to rename: an id not of the allowed characters, or one an
/// earlier assistant message used. Looked at borrowed, so a history without either (nearly
/// every one) is not copied to find out.
fn needs_renaming(history: &[Message]) -> bool {
    let mut used_before: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for message in history.iter().filter(|m| m.role == Role::Assistant) {
        for call in message.tool_uses() {
            if !is_valid_tool_use_id(&call.id) || used_before.contains(call.id.as_str()) {
                return true;
            }
        }
        used_before.extend(message.tool_uses().map(|call| call.id.as_str()));
    }
    false
}

/// A valid id not in `taken`, made from `id`: its allowed characters kept, others `_`, then a
/// numeric suffix.
fn fresh_id(id: &str, taken: &std::collections::HashSet<String>) -> String {
    let base = crate::names::sanitize_call_id(id);
    if !taken.contains(&base) && base != id {
        return base;
    }
    (2..)
        .map(|n| format!("{base}_{n}"))
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or(base)
}

/// Removes results from an assistant message and repeated calls; returns it with its call ids.
fn clean_assistant(mut message: Message, report: &mut RepairReport) -> (Message, Vec<String>) {
    let mut uses: Vec<String> = Vec::new();
    if let Content::Blocks(blocks) = &mut message.content {
        blocks.retain(|block| match block {
            Block::ToolResult(result) => {
                report.orphans_removed.push(result.tool_use_id.clone());
                false
            }
            Block::ToolUse(tool_use) if uses.contains(&tool_use.id) => {
                report.duplicate_uses_removed.push(tool_use.id.clone());
                false
            }
            Block::ToolUse(tool_use) => {
                uses.push(tool_use.id.clone());
                true
            }
            _ => true,
        });
    }
    (message, uses)
}

/// Takes the results out of a user message (with whether each came before any other
/// content), and drops `tool_use` blocks from it.
fn split_user(
    mut message: Message,
    report: &mut RepairReport,
) -> (Message, Vec<(ToolResultBlock, bool)>) {
    let mut results = Vec::new();
    if let Content::Blocks(blocks) = &mut message.content {
        let mut other_seen = false;
        for block in mem::take(blocks) {
            match block {
                Block::ToolResult(result) => results.push((result, !other_seen)),
                Block::ToolUse(tool_use) => report.misplaced_uses_removed.push(tool_use.id),
                other => {
                    other_seen = true;
                    blocks.push(other);
                }
            }
        }
    }
    (message, results)
}

fn push_unless_empty(out: &mut Vec<Message>, message: Message, report: &mut RepairReport) {
    if message.is_empty() {
        report.empty_messages_removed += 1;
    } else {
        out.push(message);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A small deterministic generator (xorshift), so the comparison below needs no crate.
    struct Random(u64);

    impl Random {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n.max(1) as u64) as usize
        }
    }

    /// A conversation of turns with 0–3 calls each, answered, then damaged a few times: blocks
    /// dropped, repeated, moved and renamed, messages dropped, ids reused across turns.
    fn damaged(random: &mut Random) -> Vec<Message> {
        let mut messages = vec![Message::user("start")];
        for t in 0..random.below(8) {
            let ids: Vec<String> = (0..random.below(4))
                .map(|c| format!("call_{}_{c}", if random.below(6) == 0 { 0 } else { t }))
                .collect();
            let mut blocks = vec![Block::text(format!("turn {t}"))];
            blocks.extend(ids.iter().map(|id| Block::tool_use(id, "tool", json!({}))));
            messages.push(Message::from_blocks(Role::Assistant, blocks));
            let mut results: Vec<Block> = ids
                .iter()
                .map(|id| Block::tool_result(id, format!("result of {id}"), false))
                .collect();
            if random.below(2) == 0 {
                results.push(Block::text(format!("user {t}")));
            }
            messages.push(Message::from_blocks(Role::User, results));
        }
        for _ in 0..random.below(4) {
            let m = random.below(messages.len());
            let Content::Blocks(blocks) = &mut messages[m].content else {
                continue;
            };
            if blocks.is_empty() {
                continue;
            }
            let b = random.below(blocks.len());
            match random.below(5) {
                0 => {
                    blocks.remove(b);
                }
                1 => blocks.push(blocks[b].clone()),
                2 => {
                    let block = blocks.remove(b);
                    let to = random.below(messages.len());
                    if let Content::Blocks(blocks) = &mut messages[to].content {
                        blocks.push(block);
                    }
                }
                3 => match &mut blocks[b] {
                    Block::ToolUse(call) => call.id = format!("call_{}_0", random.below(3)),
                    Block::ToolResult(result) => {
                        result.tool_use_id = format!("call_{}_0", random.below(3));
                    }
                    _ => {}
                },
                _ => {
                    messages.remove(m);
                }
            }
        }
        messages
    }

    #[test]
    fn a_clean_turn_moved_across_is_what_rebuilding_it_makes() {
        let mut random = Random(0x9e37_79b9_7f4a_7c15);
        let (mut skipped, mut repaired) = (0, 0);
        for _ in 0..20_000 {
            let history = damaged(&mut random);
            if !is_valid(&history) {
                repaired += 1;
                skipped += clean_turns(&history).iter().filter(|&&clean| clean).count();
            }
            let (mut fast, mut rebuilt) = (history.clone(), history.clone());
            let fast_report = repair_turns(&mut fast, true);
            let rebuilt_report = repair_turns(&mut rebuilt, false);
            assert_eq!(fast, rebuilt, "{history:#?}");
            assert_eq!(fast_report, rebuilt_report, "{history:#?}");
        }
        assert!(
            repaired > 10_000 && skipped > 10_000,
            "the comparison covers damaged histories with clean turns: {repaired}, {skipped}"
        );
    }
}
