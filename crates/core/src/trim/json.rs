//! Cutting JSON so that it stays JSON.
//!
//! [`fit_json`] returns text that parses, is at most the allowance in chars, and keeps as much
//! of the input as fits:
//!
//! - the result is compact (no whitespace between tokens), so pretty-printed input is
//!   re-serialized first, and only cut if the compact form does not fit;
//! - an array keeps its first and last elements (split by the style's head ratio) with one
//!   element at the cut, a string that is the marker:
//!   `"[toolsmith: output truncated, kept 40 of 10,000 items (items 1-20 and 9,981-10,000 of
//!   10,000); full output: …]"`; an object keeps its first and last members the same way, the
//!   marker as the value of a member named `"…"`, counting keys;
//! - a long string keeps its head and tail with the marker inside it, counting the chars of
//!   the string as the input writes it (escapes included);
//! - the room of a container goes to its members max-min fairly: small members are kept whole
//!   and the biggest ones shrink first, each descended into the same way;
//! - every kept number, literal, key and uncut string is byte-identical to the input's.
//!
//! The input is read in place: no tree of it is built. A container is scanned once per level
//! it is descended into, keeping only the members that could be shown (at most half the
//! allowance of them from each end), so memory is proportional to what is kept plus the depth.

use std::collections::VecDeque;

use super::marker::{Continuation, FullOutput, render_counted};

/// How deep a cut descends into nested containers; deeper ones are kept whole or replaced.
const MAX_DESCENT: usize = 64;

/// How many of a container's first members are listed with it when they are containers
/// themselves (`Fitter::list`).
const LISTED_MEMBERS: usize = 16;
/// The key of the member that carries an object's marker.
const MARKER_KEY: &str = "\"…\"";
/// Its length in chars.
const MARKER_KEY_CHARS: usize = 3;

/// A JSON text fitted to an allowance by [`fit_json`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JsonFit {
    /// The fitted JSON text.
    pub text: String,
    /// Chars of the input that were re-serialized compactly before anything was cut (0 when
    /// the input was already compact).
    pub whitespace_removed: usize,
    /// How many markers the text holds: one per cut array, object or string.
    pub markers: usize,
    /// Chars of the fitted text that are the input's (compacted): all but the markers, their
    /// quotes and keys, and the spaces around a marker inside a string.
    pub kept_chars: usize,
}

impl JsonFit {
    /// Whether anything of the input's content was cut (not only its whitespace).
    pub fn is_cut(&self) -> bool {
        self.markers > 0
    }
}

/// Fits the JSON value in `text` to `allowance` chars, keeping it valid JSON; `None` if `text`
/// is not one valid JSON value or the allowance is too small for a valid skeleton with its
/// marker (use [`fit`](super::fit) then).
///
/// `head_ratio` splits what arrays, objects and strings keep between their beginning and end.
///
/// ```
/// use toolsmith::trim::{FullOutput, fit_json};
///
/// let rows: Vec<u32> = (0..10_000).collect();
/// let text = serde_json::to_string(&rows)?;
/// let fitted = fit_json(&text, 300, 0.5, &FullOutput::NotKept).expect("valid JSON");
/// let value: serde_json::Value = serde_json::from_str(&fitted.text)?;
/// assert!(fitted.text.chars().count() <= 300);
/// assert_eq!(value[0], 0);
/// assert_eq!(value.as_array().unwrap().last().unwrap(), 9_999);
/// assert!(fitted.text.contains("of 10,000 items"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fit_json(
    text: &str,
    allowance: usize,
    head_ratio: f64,
    full: &FullOutput<'_>,
) -> Option<JsonFit> {
    fit_json_with(text, allowance, head_ratio, &Continuation::from(*full))
}

/// [`fit_json`], its markers ending as `continuation` says: where the full output is and the cap
/// in tokens that made the cut, if one did.
pub fn fit_json_with(
    text: &str,
    allowance: usize,
    head_ratio: f64,
    continuation: &Continuation<'_>,
) -> Option<JsonFit> {
    fit_counting(text, allowance, head_ratio, continuation, |bytes| {
        (count_chars(bytes), 0)
    })
    .map(|(fit, _)| fit)
}

/// [`fit_json`], with the input's figures as `count` gives them (chars, and newlines when it
/// counts them), counted beside the scan: on another core for a large input.
fn fit_counting(
    text: &str,
    allowance: usize,
    head_ratio: f64,
    continuation: &Continuation<'_>,
    count: fn(&[u8]) -> (usize, usize),
) -> Option<(JsonFit, (usize, usize))> {
    let bytes = text.as_bytes();
    if super::survey::threads_for(bytes.len()) < 2 {
        return fit_counted(
            bytes,
            allowance,
            head_ratio,
            continuation,
            Count::Known(count(bytes)),
        );
    }
    // A large input's chars are counted on another core while this one scans it.
    std::thread::scope(|scope| {
        let counting = std::thread::Builder::new()
            .name("toolsmith-count".into())
            .spawn_scoped(scope, move || count(bytes))
            .map_or_else(|_| Count::Known(count(bytes)), Count::Counting);
        fit_counted(bytes, allowance, head_ratio, continuation, counting)
    })
}

/// The chars of the JSON document `text` written compactly (no whitespace between its tokens);
/// `None` when `text` is not one JSON object or array. One scan, no tree built.
pub(super) fn compact_document_chars(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if !may_be_document(bytes) {
        return None;
    }
    let start = skip_ws(bytes, 0);
    let (end, size) = scan_value(bytes, start)?;
    (skip_ws(bytes, end) == bytes.len()).then_some(size)
}

/// Whether `bytes` may be one JSON object or array: its first byte that is not whitespace opens
/// one and its last closes one. What [`fit_with`](super::fit_with) looks at before it tries a
/// JSON cut: two bytes, no pass over the text.
pub(super) fn may_be_document(bytes: &[u8]) -> bool {
    let first = bytes.iter().position(|&b| !is_ws(b));
    let last = bytes.iter().rposition(|&b| !is_ws(b));
    matches!(
        (first.map(|at| bytes[at]), last.map(|at| bytes[at])),
        (Some(b'{'), Some(b'}')) | (Some(b'['), Some(b']'))
    )
}

/// A whole text that is one JSON document, fitted as JSON: the text itself when it fits (in
/// chars and in `max_lines`), else what [`fit_json`] makes of it with its figures; `None` when
/// the text is not one JSON value (JSON lines, a log that starts with `[`) or the allowance is
/// too small for a valid skeleton, so that the text is cut by its lines.
pub(super) fn fit_document<'a>(
    text: &'a str,
    allowance: usize,
    max_lines: Option<usize>,
    head_ratio: f64,
    continuation: &Continuation<'_>,
) -> Option<super::Trimmed<'a>> {
    // The chars and newlines are counted in the same read, beside the scan.
    let (fit, (original_chars, newlines)) = fit_counting(
        text,
        allowance,
        head_ratio,
        continuation,
        super::bytes::count_chars_and_newlines,
    )?;
    let lines = super::bytes::lines_from(text.as_bytes(), newlines);
    if original_chars <= allowance && max_lines.is_none_or(|max| lines <= max) {
        return Some(super::Trimmed {
            text: std::borrow::Cow::Borrowed(text),
            cut: None,
        });
    }
    let cut = super::Cut::of_json(original_chars, lines, &fit);
    Some(super::Trimmed {
        text: std::borrow::Cow::Owned(fit.text),
        cut: Some(cut),
    })
}

/// The input's chars and newlines: known, or being counted by another thread.
enum Count<'scope> {
    Known((usize, usize)),
    Counting(std::thread::ScopedJoinHandle<'scope, (usize, usize)>),
}

impl Count<'_> {
    /// The figures, waiting for them if they are being counted.
    fn figures(&mut self) -> (usize, usize) {
        let figures = match std::mem::replace(self, Count::Known((0, 0))) {
            Count::Known(figures) => figures,
            Count::Counting(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
        };
        *self = Count::Known(figures);
        figures
    }

    /// The chars, waiting for them if they are being counted.
    fn get(&mut self) -> usize {
        self.figures().0
    }
}

fn fit_counted(
    bytes: &[u8],
    allowance: usize,
    head_ratio: f64,
    continuation: &Continuation<'_>,
    original_chars: Count<'_>,
) -> Option<(JsonFit, (usize, usize))> {
    let start = skip_ws(bytes, 0);
    let mut fitter = Fitter {
        bytes,
        head_ratio: if head_ratio.is_finite() {
            head_ratio.clamp(0.0, 1.0)
        } else {
            0.5
        },
        full: continuation,
        compacted: false,
        original_chars,
        root: None,
        markers: 0,
        marker_chars: 0,
        min_shrunk: 0,
        listed: Vec::new(),
    };
    // Room for a cut value's marker (its figures no wider than the input's size in bytes, which
    // is at least its size in chars) and a little. (Whether the note `, JSON compacted` will be
    // written is known only once the root is scanned: room for it is always kept.)
    fitter.compacted = true;
    fitter.min_shrunk = fitter.widest_marker(bytes.len(), "items") + 12;
    fitter.compacted = false;
    let mut out = String::with_capacity(allowance.min(bytes.len()).min(1 << 20) + 8);
    let (end, size) = if matches!(bytes.get(start), Some(b'[' | b'{')) {
        // A container is validated and measured by the one scan that lists its members.
        let node = Node {
            start,
            end: start,
            size: usize::MAX,
        };
        if !fitter.fit_into(&mut out, node, allowance, 0) {
            return None;
        }
        fitter.root?
    } else {
        let (end, size) = scan_value(bytes, start)?;
        fitter.compacted = size < fitter.original_chars.get();
        if !fitter.fit_into(&mut out, Node { start, end, size }, allowance, 0) {
            return None;
        }
        (end, size)
    };
    if skip_ws(bytes, end) != bytes.len() {
        return None; // something after the value
    }
    let chars = count_chars(out.as_bytes());
    if chars > allowance {
        return None; // never: the fitter counts what it writes; the text fit is the fallback
    }
    debug_assert!(fitter.markers > 0 || size <= allowance);
    let figures = fitter.original_chars.figures();
    let original_chars = figures.0;
    let fit = JsonFit {
        kept_chars: chars - fitter.marker_chars.min(chars),
        text: out,
        whitespace_removed: original_chars - size.min(original_chars),
        markers: fitter.markers,
    };
    Some((fit, figures))
}

/// A 1-based, inclusive range of items, keys or chars.
pub(super) type Span = (usize, usize);

/// A value in the input: its bytes and its compact size in chars.
#[derive(Debug, Clone, Copy)]
struct Node {
    start: usize,
    end: usize,
    size: usize,
}

/// A member of a container: an object's key (start, end, chars) and the value.
#[derive(Debug, Clone, Copy)]
struct Member {
    key: Option<(usize, usize, usize)>,
    value: Node,
}

impl Member {
    /// Chars of the key and its colon.
    fn key_chars(&self) -> usize {
        self.key.map_or(0, |(_, _, chars)| chars + 1)
    }
}

#[cfg(test)]
thread_local! {
    /// Set by a test to fit without the listings a parent makes for its members (`list`).
    static WITHOUT_LISTINGS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a container's listing keeps its members' listings (always, but in a test that
/// compares the fit without them).
fn listings_kept() -> bool {
    #[cfg(test)]
    if WITHOUT_LISTINGS.with(std::cell::Cell::get) {
        return false;
    }
    true
}

/// A container's members as one scan listed them: the first `keep` and the last `keep` (all
/// of them when there are no more), how many there are, the container's end (after its closing
/// bracket) and its compact size in chars.
struct Listing {
    start: usize,
    head: Vec<Member>,
    tail: VecDeque<Member>,
    count: usize,
    end: usize,
    size: usize,
}

impl Listing {
    /// Adds the next member, keeping `keep` at each end.
    fn push(&mut self, member: Member, keep: usize) {
        if self.head.len() < keep {
            self.head.push(member);
        } else {
            if self.tail.len() == keep {
                self.tail.pop_front();
            }
            self.tail.push_back(member);
        }
        self.count += 1;
    }

    /// The member at `index`, if the listing kept it.
    fn member(&self, index: usize) -> Option<&Member> {
        if index < self.head.len() {
            self.head.get(index)
        } else {
            self.tail
                .get(index.checked_sub(self.count - self.tail.len())?)
        }
    }

    /// The listing a scan keeping `keep` members at each end would have made (`keep` no more
    /// than this listing kept).
    fn narrowed(self, keep: usize) -> Listing {
        if keep >= self.head.len() {
            return self;
        }
        let tail_len = keep.min(self.count - keep);
        let head = (0..keep).filter_map(|i| self.member(i).copied()).collect();
        let tail = (self.count - tail_len..self.count)
            .filter_map(|i| self.member(i).copied())
            .collect();
        Listing { head, tail, ..self }
    }
}

struct Fitter<'a, 'scope> {
    bytes: &'a [u8],
    head_ratio: f64,
    full: &'a Continuation<'a>,
    /// Whether the input had whitespace to remove; the first marker says so.
    compacted: bool,
    /// Chars of the whole input.
    original_chars: Count<'scope>,
    /// Where the root container ends and its compact size, once it is scanned.
    root: Option<(usize, usize)>,
    markers: usize,
    /// Chars of the markers written, with their quotes, keys and spaces.
    marker_chars: usize,
    /// The least room a value is shrunk into; less, and it is dropped instead.
    min_shrunk: usize,
    /// Listings of containers made while listing their parent, for their own fit (`list`).
    listed: Vec<Listing>,
}

impl Fitter<'_, '_> {
    fn fit_into(&mut self, out: &mut String, node: Node, allowance: usize, depth: usize) -> bool {
        if node.size <= allowance {
            compact_into(out, &self.bytes[node.start..node.end]);
            return true;
        }
        if depth >= MAX_DESCENT {
            return false;
        }
        match self.bytes[node.start] {
            b'"' => self.fit_string(out, node, allowance),
            b'[' => self.fit_container(out, node, allowance, depth, false),
            b'{' => self.fit_container(out, node, allowance, depth, true),
            _ => false,
        }
    }

    /// The marker: `[toolsmith: output truncated, kept K of N unit (unit a-b and c-d of N)…]`.
    fn marker(
        &self,
        kept: usize,
        total: usize,
        unit: &str,
        spans: (Option<Span>, Option<Span>),
        compacted: bool,
    ) -> String {
        let out = render_counted(kept, total, unit, spans, compacted, self.full);
        // As a JSON string's content: the reason of a failed store may hold quotes.
        let quoted = serde_json::to_string(&out).unwrap_or_default();
        quoted[1..quoted.len() - 1].to_owned()
    }

    /// Chars of the longest marker for `total` of `unit` (its figures at their widest).
    fn widest_marker(&self, total: usize, unit: &str) -> usize {
        let widest = self.marker(
            total,
            total,
            unit,
            (Some((total, total)), Some((total, total))),
            self.compacted,
        );
        count_chars(widest.as_bytes())
    }

    fn take_compacted_note(&mut self) -> bool {
        std::mem::take(&mut self.compacted)
    }

    /// A long string keeps its head and tail, the marker between them inside the string.
    fn fit_string(&mut self, out: &mut String, node: Node, allowance: usize) -> bool {
        let raw = &self.bytes[node.start + 1..node.end - 1];
        let total = node.size - 2;
        let reserve = 2 + 2 + self.widest_marker(total, "chars");
        let Some(room) = allowance.checked_sub(reserve).filter(|&room| room > 0) else {
            return false;
        };
        let head_room = (room as f64 * self.head_ratio).floor() as usize;
        let tail_room = room - head_room;
        // Walk the string's tokens (a char, or an escape as a whole) once.
        let tail_from = total.saturating_sub(tail_room);
        let (mut at, mut chars) = (0usize, 0usize);
        let (mut head_end, mut head_chars) = (0usize, 0usize);
        let mut tail_start = None;
        while at < raw.len() {
            let len = token_len(raw, at);
            let width = if raw[at] == b'\\' { len } else { 1 };
            if chars + width <= head_room {
                head_end = at + len;
                head_chars = chars + width;
            }
            if tail_start.is_none() && chars >= tail_from && at >= head_end {
                tail_start = Some((at, chars));
                break;
            }
            chars += width;
            at += len;
        }
        let (tail_at, tail_first) = tail_start.unwrap_or((raw.len(), total));
        let tail_chars = total - tail_first;
        let compacted = self.take_compacted_note();
        let head_span = (head_chars > 0).then_some((1, head_chars));
        let tail_span = (tail_chars > 0).then_some((tail_first + 1, total));
        let marker = self.marker(
            head_chars + tail_chars,
            total,
            "chars",
            (head_span, tail_span),
            compacted,
        );
        self.markers += 1;
        self.marker_chars += count_chars(marker.as_bytes()) + 2;
        out.push('"');
        out.push_str(as_str(&raw[..head_end]));
        out.push(' ');
        out.push_str(&marker);
        out.push(' ');
        out.push_str(as_str(&raw[tail_at..]));
        out.push('"');
        true
    }

    fn fit_container(
        &mut self,
        out: &mut String,
        node: Node,
        allowance: usize,
        depth: usize,
        object: bool,
    ) -> bool {
        let (unit, open, close) = if object {
            ("keys", '{', '}')
        } else {
            ("items", '[', ']')
        };
        // The members that could be shown: at most this many from each end.
        let keep_at_most = allowance / 2 + 2;
        let listed = self.listed.iter().position(|l| l.start == node.start);
        let listing = match listed {
            Some(i) => self.listed.swap_remove(i).narrowed(keep_at_most),
            None => match self.list(node.start, keep_at_most, Some(allowance)) {
                Some(listing) => listing,
                None => return false,
            },
        };
        let bytes = self.bytes;
        let (count, end, size) = (listing.count, listing.end, listing.size);
        if depth == 0 {
            self.root = Some((end, size));
            self.compacted = size < self.original_chars.get();
        }
        let member = |index: usize| listing.member(index);
        let (head, tail) = (&listing.head, &listing.tail);
        let least = |m: &Member| -> usize {
            let value = if shrinkable(bytes, m.value) {
                m.value.size.min(self.min_shrunk)
            } else {
                m.value.size
            };
            m.key_chars() + value
        };

        // Keep everything, shrinking, if every member fits at its least — for an array, only
        // if that shrinks few of its elements: a list reads better as whole elements around
        // one marker than as every element cut.
        let all_least: usize = (0..count).filter_map(member).map(least).sum::<usize>();
        let mut all_fit = count <= head.len() + tail.len()
            && 2 + count.saturating_sub(1) + all_least <= allowance;
        if all_fit && !object {
            let all: Vec<Member> = (0..count).filter_map(|i| member(i).copied()).collect();
            let room = allowance - 2 - count.saturating_sub(1);
            let shares = self
                .shares(&all, room)
                .unwrap_or_else(|| vec![0; all.len()]);
            let shrunk = all
                .iter()
                .zip(&shares)
                .filter(|(m, share)| shrinkable(bytes, m.value) && m.value.size > **share)
                .count();
            all_fit = shrunk <= 2;
        }
        // An array's partial element, at the cut: (its index among the kept, its allowance).
        let mut partial = None;
        let (kept_head, kept_tail, marker_cost) = if all_fit {
            (count, 0, 0)
        } else {
            let marker_cost =
                self.widest_marker(count, unit) + 2 + if object { MARKER_KEY_CHARS + 1 } else { 0 };
            let Some(room) = allowance.checked_sub(2 + marker_cost) else {
                return false;
            };
            let (mut h, mut t, mut used) = (0usize, 0usize, 0usize);
            while h + t < count {
                let from_head = (h as f64) < self.head_ratio * (h + t + 1) as f64;
                let index = if from_head { h } else { count - 1 - t };
                let Some(m) = member(index) else { break };
                // An object's members shrink to their least; an array's elements stay whole.
                let cost = if object { least(m) } else { m.value.size } + 1; // and its comma
                if used + cost > room {
                    // The element at the cut is shown in part if at least half of it fits.
                    let left = room - used;
                    let fits_half =
                        left > self.min_shrunk && left.saturating_sub(1) * 2 >= m.value.size;
                    if !object && shrinkable(bytes, m.value) && fits_half {
                        partial = Some((from_head, left - 1));
                        if from_head {
                            h += 1;
                        } else {
                            t += 1;
                        }
                    }
                    break;
                }
                used += cost;
                if from_head {
                    h += 1;
                } else {
                    t += 1;
                }
            }
            (h, t, marker_cost)
        };
        let kept: Vec<Member> = (0..kept_head)
            .chain(count - kept_tail..count)
            .filter_map(|index| member(index).copied())
            .collect();
        let dropped = count - kept.len();
        let commas = (kept.len() + usize::from(dropped > 0)).saturating_sub(1);
        let Some(room) = allowance.checked_sub(2 + commas + marker_cost) else {
            return false;
        };
        let allowed: Vec<usize> = match partial {
            // An array's whole elements, and the one at the cut given what they leave.
            Some((from_head, left)) => {
                let at = if from_head { kept_head - 1 } else { kept_head };
                kept.iter()
                    .enumerate()
                    .map(|(i, m)| if i == at { left } else { m.value.size })
                    .collect()
            }
            None if !object && dropped > 0 => kept.iter().map(|m| m.value.size).collect(),
            // Max-min fair: what the fixed parts leave is shared by the values that can shrink.
            None => match self.shares(&kept, room) {
                Some(shares) => shares,
                None => return false,
            },
        };

        out.push(open);
        let mut first = true;
        let mut separate = |out: &mut String| {
            if !std::mem::take(&mut first) {
                out.push(',');
            }
        };
        for (i, m) in kept.iter().enumerate() {
            if i == kept_head && dropped > 0 {
                separate(out);
                self.push_marker_member(out, object, kept.len(), count, unit, kept_head, kept_tail);
            }
            separate(out);
            if let Some((start, end, _)) = m.key {
                out.push_str(as_str(&bytes[start..end]));
                out.push(':');
            }
            let mark = out.len();
            if !self.fit_into(out, m.value, allowed[i], depth + 1) {
                // Too deep or too small to cut as JSON: the marker stands in for the value.
                out.truncate(mark);
                let unit = match bytes[m.value.start] {
                    b'"' => "chars",
                    b'{' => "keys",
                    _ => "items",
                };
                let compacted = self.take_compacted_note();
                let marker = self.marker(0, m.value.size, unit, (None, None), compacted);
                self.markers += 1;
                self.marker_chars += count_chars(marker.as_bytes()) + 2;
                out.push('"');
                out.push_str(&marker);
                out.push('"');
            }
        }
        if kept.len() == kept_head && dropped > 0 {
            separate(out);
            self.push_marker_member(out, object, kept.len(), count, unit, kept_head, kept_tail);
        }
        out.push(close);
        // Listings of members that were not fitted (dropped, or whole) are of no more use.
        self.listed
            .retain(|l| l.start < node.start || l.start >= end);
        true
    }

    /// Lists the container at `start` (an object or an array): validates it, measures it and
    /// keeps its first `keep` and last `keep` members. Given the room the container is fitted
    /// into (`cut_above`), a member that is itself a container is listed as well, and its
    /// listing kept for that member's own fit when it is larger than the room (so it will be
    /// cut): a big array under a wrapper object (`{"items": [...]}`) is read once, not once
    /// for its parent and again for itself. Only the first `LISTED_MEMBERS` members are listed
    /// so (a wrapper names its payload among its first keys; an array of many small records is
    /// scanned, not listed record by record). Members are listed so while the listings made
    /// hold fewer than `2 * keep` members in all, and one listing holds at most `2 * keep`: what
    /// is held for later stays under `4 * keep`; past either bound, members are only scanned.
    fn list(&mut self, start: usize, keep: usize, cut_above: Option<usize>) -> Option<Listing> {
        let bytes = self.bytes;
        let object = bytes[start] == b'{';
        let close = if object { b'}' } else { b']' };
        let mut listing = Listing {
            start,
            head: Vec::new(),
            tail: VecDeque::new(),
            count: 0,
            end: 0,
            // Brackets, members, commas.
            size: 2,
        };
        let mut spare = if listings_kept() {
            cut_above.map_or(0, |_| 2 * keep)
        } else {
            0
        };
        let mut at = skip_ws(bytes, start + 1);
        if bytes.get(at) != Some(&close) {
            loop {
                let key = if object {
                    let (end, next, chars) = scan_key(bytes, at)?;
                    let key = (at, end, chars);
                    at = skip_ws(bytes, next);
                    Some(key)
                } else {
                    None
                };
                let (end, size) = match (cut_above, bytes.get(at)) {
                    (Some(room), Some(b'{' | b'['))
                        if spare > 0 && listing.count < LISTED_MEMBERS =>
                    {
                        let child = self.list(at, keep, None)?;
                        let figures = (child.end, child.size);
                        let held = child.head.len() + child.tail.len();
                        spare = spare.saturating_sub(held);
                        if child.size > room {
                            self.listed.push(child);
                        }
                        figures
                    }
                    _ => scan_value(bytes, at)?,
                };
                let member = Member {
                    key,
                    value: Node {
                        start: at,
                        end,
                        size,
                    },
                };
                listing.size += member.key_chars() + size + usize::from(listing.count > 0);
                listing.push(member, keep);
                at = skip_ws(bytes, end);
                match bytes.get(at) {
                    Some(b',') => at = skip_ws(bytes, at + 1),
                    Some(&byte) if byte == close => break,
                    _ => return None,
                }
            }
        }
        listing.end = at + 1;
        Some(listing)
    }

    /// The room of each of `members`, so that all of them fit `room`: a value that cannot shrink
    /// gets its size, the others share what the keys and those leave, max-min fairly; `None` if
    /// even the fixed parts do not fit.
    fn shares(&self, members: &[Member], room: usize) -> Option<Vec<usize>> {
        let fixed: usize = members
            .iter()
            .map(|m| {
                m.key_chars()
                    + if shrinkable(self.bytes, m.value) {
                        0
                    } else {
                        m.value.size
                    }
            })
            .sum();
        let shared = room.checked_sub(fixed)?;
        let wants: Vec<usize> = members
            .iter()
            .map(|m| {
                if shrinkable(self.bytes, m.value) {
                    m.value.size
                } else {
                    0
                }
            })
            .collect();
        let mut shares = vec![0; members.len()];
        crate::fair::fill(&mut shares, &wants, shared);
        for (share, m) in shares.iter_mut().zip(members) {
            if !shrinkable(self.bytes, m.value) {
                *share = m.value.size;
            }
        }
        Some(shares)
    }

    #[allow(clippy::too_many_arguments)]
    fn push_marker_member(
        &mut self,
        out: &mut String,
        object: bool,
        kept: usize,
        count: usize,
        unit: &str,
        kept_head: usize,
        kept_tail: usize,
    ) {
        let compacted = self.take_compacted_note();
        let spans = (
            (kept_head > 0).then_some((1, kept_head)),
            (kept_tail > 0).then_some((count - kept_tail + 1, count)),
        );
        let marker = self.marker(kept, count, unit, spans, compacted);
        self.markers += 1;
        self.marker_chars +=
            count_chars(marker.as_bytes()) + 2 + if object { MARKER_KEY_CHARS + 1 } else { 0 };
        if object {
            out.push_str(MARKER_KEY);
            out.push(':');
        }
        out.push('"');
        out.push_str(&marker);
        out.push('"');
    }
}

/// Whether a value can be cut (a string or a container); numbers and literals cannot.
fn shrinkable(bytes: &[u8], node: Node) -> bool {
    matches!(bytes[node.start], b'"' | b'[' | b'{')
}

/// The length in bytes of the token of a JSON string's content at `at`: an escape as a whole,
/// else one UTF-8 char.
fn token_len(raw: &[u8], at: usize) -> usize {
    match raw[at] {
        b'\\' if raw.get(at + 1) == Some(&b'u') => 6,
        b'\\' => 2,
        byte if byte < 0x80 => 1,
        byte if byte >= 0xF0 => 4,
        byte if byte >= 0xE0 => 3,
        _ => 2,
    }
    .min(raw.len() - at)
}

/// `bytes`, which are whole chars of a `&str`, as text.
fn as_str(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or_default()
}

/// Chars (Unicode scalar values) of UTF-8 text: its bytes that are not continuation bytes,
/// counted in byte-wide lanes 255 bytes at a time (so the compiler can count 32 at once).
fn count_chars(bytes: &[u8]) -> usize {
    bytes
        .chunks(255)
        .map(|chunk| {
            let starts: u8 = chunk
                .iter()
                .map(|&b| u8::from((b as i8) >= -0x40))
                .fold(0, u8::wrapping_add);
            usize::from(starts)
        })
        .sum()
}

fn is_ws(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && is_ws(bytes[at]) {
        at += 1;
        // After a newline, indentation: spaces eight at a time, up to the first other byte
        // (a single space, as after a colon, is not worth a word).
        if bytes.get(at + 1) != Some(&b' ') {
            continue;
        }
        while let Some(chunk) = bytes.get(at..at + 8) {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
            let not_spaces = word ^ (LOW_BITS * u64::from(b' '));
            if not_spaces != 0 {
                at += (not_spaces.trailing_zeros() / 8) as usize;
                break;
            }
            at += 8;
        }
    }
    at
}

/// Appends `value` (one valid JSON value) without the whitespace between its tokens.
fn compact_into(out: &mut String, value: &[u8]) {
    let mut at = 0;
    while at < value.len() {
        if value[at] == b'"' {
            let end = string_end(value, at).unwrap_or(value.len());
            out.push_str(as_str(&value[at..end]));
            at = end;
            continue;
        }
        let run = value[at..]
            .iter()
            .position(|&b| b == b'"' || is_ws(b))
            .map_or(value.len(), |n| at + n);
        out.push_str(as_str(&value[at..run]));
        at = skip_ws(value, run);
    }
}

/// The end (after the closing quote) of the valid string starting at `at`.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    scan_string(bytes, at).map(|(end, _)| end)
}

/// The bytes that end a run of plain string content: a quote, a backslash, a control char.
static STRING_STOPS: [bool; 256] = {
    let mut stops = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        stops[byte] = true;
        byte += 1;
    }
    stops[b'"' as usize] = true;
    stops[b'\\' as usize] = true;
    stops
};

const LOW_BITS: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` that is zero; exact up to the first such byte (a borrow
/// may flag bytes after it).
fn zero_bytes(word: u64) -> u64 {
    word.wrapping_sub(LOW_BITS) & !word & HIGH_BITS
}

/// Marks the bytes of `word` that end a run of plain string content (a quote, a backslash, a
/// control char): the word-wide form of `STRING_STOPS`. Its lowest set bit is exact — it is in
/// the first such byte — and it is zero if there is none.
fn run_ends(word: u64) -> u64 {
    let control = word.wrapping_sub(LOW_BITS * 0x20) & !word & HIGH_BITS;
    control
        | zero_bytes(word ^ (LOW_BITS * u64::from(b'"')))
        | zero_bytes(word ^ (LOW_BITS * u64::from(b'\\')))
}

/// Whether any of the eight bytes of `word` ends a run of plain string content.
#[cfg(test)]
fn ends_a_run(word: u64) -> bool {
    run_ends(word) != 0
}

/// How many of the eight bytes of `word` are UTF-8 continuation bytes (`10xxxxxx`).
fn continuation_bytes(word: u64) -> usize {
    // A one in the low bit of each continuation byte's lane, summed into the top lane by one
    // multiplication (the machine's baseline has no population count instruction).
    let ones = (word & !(word << 1) & HIGH_BITS) >> 7;
    (ones.wrapping_mul(LOW_BITS) >> 56) as usize
}

/// `continuation_bytes`, skipped for a word of ASCII (most words of most JSON): one test
/// instead of the count's shifts and multiplication.
fn non_ascii_continuations(word: u64) -> usize {
    if word & HIGH_BITS == 0 {
        0
    } else {
        continuation_bytes(word)
    }
}

/// Validates the string at `at`; returns its end and its chars, quotes included.
fn scan_string(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    let mut chars = 2;
    loop {
        // One pass: find the next quote, backslash or control char, counting chars on the way,
        // eight bytes at a time (the word that holds one is counted up to it, and the stop is
        // read from the word: no second load of it), the last few bytes one at a time.
        let stop = loop {
            let Some(chunk) = bytes.get(i..i + 8) else {
                while !STRING_STOPS[usize::from(*bytes.get(i)?)] {
                    chars += usize::from((bytes[i] as i8) >= -0x40);
                    i += 1;
                }
                break bytes[i];
            };
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
            let ends = run_ends(word);
            if ends != 0 {
                let before = (ends.trailing_zeros() / 8) as usize;
                let plain = word & ((1u64 << (before * 8)) - 1);
                chars += before - non_ascii_continuations(plain);
                i += before;
                break (word >> (before * 8)) as u8;
            }
            chars += 8 - non_ascii_continuations(word);
            i += 8;
        };
        match stop {
            b'"' => return Some((i + 1, chars)),
            b'\\' => {
                let escape = *bytes.get(i + 1)?;
                let len = match escape {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                    b'u' if bytes.get(i + 2..i + 6)?.iter().all(u8::is_ascii_hexdigit) => 6,
                    _ => return None,
                };
                chars += len;
                i += len;
            }
            _ => return None, // a control char must be escaped
        }
    }
}

/// Validates an object's key at `at` and the colon after it; returns the key's end, where its
/// value may start (after the colon) and the key's chars, quotes included.
fn scan_key(bytes: &[u8], at: usize) -> Option<(usize, usize, usize)> {
    let (end, chars) = scan_string(bytes, at)?;
    let colon = skip_ws(bytes, end);
    (bytes.get(colon) == Some(&b':')).then_some((end, colon + 1, chars))
}

fn scan_number(bytes: &[u8], at: usize) -> Option<usize> {
    let digits = |mut i: usize| {
        let start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > start).then_some(i)
    };
    let mut i = at;
    if bytes.get(i) == Some(&b'-') {
        i += 1;
    }
    i = match bytes.get(i)? {
        b'0' => i + 1,
        b'1'..=b'9' => digits(i)?,
        _ => return None,
    };
    if bytes.get(i) == Some(&b'.') {
        i = digits(i + 1)?;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(i)?;
    }
    Some(i)
}

/// The containers a scan is inside, innermost last (true: an object): the first 64 levels in a
/// word, deeper ones in a vector, so scanning a shallow value allocates nothing.
#[derive(Default)]
struct Nesting {
    depth: usize,
    near: u64,
    deep: Vec<bool>,
}

impl Nesting {
    fn push(&mut self, object: bool) {
        if self.depth < 64 {
            self.near = (self.near & !(1 << self.depth)) | (u64::from(object) << self.depth);
        } else {
            self.deep.push(object);
        }
        self.depth += 1;
    }

    fn pop(&mut self) {
        if self.depth > 64 {
            self.deep.pop();
        }
        self.depth = self.depth.saturating_sub(1);
    }

    fn last(&self) -> Option<bool> {
        match self.depth {
            0 => None,
            depth if depth <= 64 => Some(self.near >> (depth - 1) & 1 == 1),
            _ => self.deep.last().copied(),
        }
    }
}

/// Validates the JSON value at `at` (after any whitespace) without recursion; returns its end
/// and its compact size in chars. Nesting costs a bit a level up to 64, a byte a level deeper.
fn scan_value(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    // true: in an object.
    let mut stack = Nesting::default();
    let mut size = 0usize;
    let mut i = skip_ws(bytes, at);
    loop {
        // A value starts at i.
        i = skip_ws(bytes, i);
        match *bytes.get(i)? {
            b'{' | b'[' => {
                let object = bytes[i] == b'{';
                size += 1;
                i = skip_ws(bytes, i + 1);
                let close = if object { b'}' } else { b']' };
                if bytes.get(i) == Some(&close) {
                    size += 1;
                    i += 1;
                } else {
                    stack.push(object);
                    if object {
                        let (_, next, chars) = scan_key(bytes, i)?;
                        size += chars + 1;
                        i = next;
                    }
                    continue;
                }
            }
            b'"' => {
                let (end, chars) = scan_string(bytes, i)?;
                size += chars;
                i = end;
            }
            b't' | b'f' | b'n' => {
                let literal: &[u8] = match bytes[i] {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                if !bytes[i..].starts_with(literal) {
                    return None;
                }
                size += literal.len();
                i += literal.len();
            }
            b'-' | b'0'..=b'9' => {
                let end = scan_number(bytes, i)?;
                size += end - i;
                i = end;
            }
            _ => return None,
        }
        // A value ended at i: close what it ends, or go on to the next member.
        loop {
            let Some(object) = stack.last() else {
                return Some((i, size));
            };
            i = skip_ws(bytes, i);
            match *bytes.get(i)? {
                b',' => {
                    size += 1;
                    i += 1;
                    if object {
                        let (_, next, chars) = scan_key(bytes, skip_ws(bytes, i))?;
                        size += chars + 1;
                        i = next;
                    }
                    break;
                }
                b'}' if object => {
                    size += 1;
                    i += 1;
                    stack.pop();
                }
                b']' if !object => {
                    size += 1;
                    i += 1;
                    stack.pop();
                }
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_wide_checks_agree_with_the_byte_table() {
        for byte in 0..=255u8 {
            for at in 0..8 {
                let mut word = [b'a'; 8];
                word[at] = byte;
                let word = u64::from_le_bytes(word);
                assert_eq!(
                    ends_a_run(word),
                    STRING_STOPS[usize::from(byte)],
                    "{byte:#x}"
                );
                let continuation = usize::from((byte as i8) < -0x40);
                assert_eq!(continuation_bytes(word), continuation, "{byte:#x}");
            }
        }
        let text = "Größe — 日本語 ✓ 🙂 plain".repeat(3);
        assert_eq!(count_chars(text.as_bytes()), text.chars().count());
    }

    #[test]
    fn a_words_first_run_end_is_exact_whatever_follows_it() {
        // A borrow from a zero byte may flag the bytes after it; never one before it.
        let stops = [b'"', b'\\', 0x00, 0x1f, b'\n'];
        let others = [b'a', 0x01, b'"', 0x21, 0x80, 0xff, b'\\', 0x20];
        for at in 0..8 {
            for &stop in &stops {
                for &after in &others {
                    let mut word = [b'x'; 8];
                    word[at] = stop;
                    word[at + 1..].fill(after);
                    let ends = run_ends(u64::from_le_bytes(word));
                    assert_eq!(ends.trailing_zeros() / 8, at as u32, "{word:?}");
                }
            }
        }
    }

    #[test]
    fn a_strings_scan_counts_its_chars_wherever_it_ends_in_a_word() {
        let pieces = ["a", "é", "日", "🙂", "\\\"", "\\u00e9", "\\n", " "];
        let mut seed = 7u64;
        for _ in 0..2_000 {
            let mut content = String::new();
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            for k in 0..(seed >> 58) {
                content.push_str(pieces[((seed >> (k % 50)) % 8) as usize]);
            }
            let text = format!("\"{content}\" tail");
            let expected = content.chars().count() + 2;
            assert_eq!(
                scan_string(text.as_bytes(), 0),
                Some((content.len() + 2, expected)),
                "{text}"
            );
        }
        assert_eq!(scan_string(b"\"ab\x01cd\"", 0), None);
        assert_eq!(scan_string(b"\"abcdefgh\x1fij\"", 0), None);
    }

    /// A JSON value of nested objects and arrays, some of them long, with strings, numbers and
    /// literals: wrappers around big arrays, big objects inside arrays, small values beside them.
    fn nested_json() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i32>().prop_map(serde_json::Value::from),
            "[a-z\\\\\"é ]{0,40}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(4, 2_000, 60, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..150).prop_map(serde_json::Value::Array),
                proptest::collection::vec(("[a-z]{1,6}", inner), 0..12)
                    .prop_map(|members| serde_json::Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// A parent's listings of its members change nothing in what is fitted: the same text,
        /// markers and figures as scanning every member again for its own fit.
        #[test]
        fn listings_kept_for_members_fit_exactly_as_scanning_them_again(
            value in nested_json(),
            allowance in 20usize..1_500,
            pretty in proptest::bool::ANY,
            head_ratio in 0.0f64..1.0,
        ) {
            let text = if pretty {
                serde_json::to_string_pretty(&value).unwrap()
            } else {
                serde_json::to_string(&value).unwrap()
            };
            let fit = |without: bool| {
                WITHOUT_LISTINGS.with(|flag| flag.set(without));
                let fit = fit_json(&text, allowance, head_ratio, &FullOutput::NotKept);
                WITHOUT_LISTINGS.with(|flag| flag.set(false));
                fit.map(|fit| (fit.text, fit.kept_chars, fit.markers, fit.whitespace_removed))
            };
            proptest::prop_assert_eq!(fit(false), fit(true));
        }
    }
}
