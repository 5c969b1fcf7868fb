//! The cut of a typed structure: a tree of sizes read once from the instance and its schema,
//! a plan fitted to the room in passes, and the value the plan keeps.
//!
//! Sizes are the chars of compact JSON (`serde_json::to_string`), exactly: a container of
//! `k > 0` members takes `1 + Σ (member + 1)` (its brackets and the commas between), an empty
//! one 2. A plan keeps, of each place:
//!
//! - an array: whole items, by priority — the first, the last, the items that carry an error
//!   (at most half the room), then the head and the tail alternately — in their order, and at
//!   least its `minItems` and its positional items (cut inside when they cannot be whole);
//! - an object: every member max-min fairly, the small ones whole and the largest cut first;
//!   a member that may go (not required) and whose share cannot hold its smallest form is left
//!   out, and members left out are brought back whole while room remains;
//! - a string: its head and tail around `…`, where the schema lets it be shortened, never
//!   below its `minLength`.
//!
//! The passes allow more each time: arrays thinned; then optional members left out; then
//! strings shortened. The first plan within the room is taken.

use serde_json::{Map, Value};

use super::schema::Rules;

/// How deep a cut descends; a deeper place is kept as it is.
const MAX_DEPTH: usize = 128;
/// The most facts a cut states one by one; past them, a count.
pub(super) const MAX_FACTS: usize = 64;
/// What a shortened string holds where its middle was.
const ELLIPSIS: char = '…';

/// What a pass may do beside thinning arrays.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ops {
    /// Leave out members the schema does not require.
    pub(super) drop: bool,
    /// Shorten strings the schema lets be shortened.
    pub(super) shorten: bool,
}

/// The passes, in the order they are tried.
pub(super) const PASSES: [Ops; 3] = [
    Ops {
        drop: false,
        shorten: false,
    },
    Ops {
        drop: true,
        shorten: false,
    },
    Ops {
        drop: true,
        shorten: true,
    },
];

/// One place of the instance, with its size and what the schema lets a cut do there.
pub(super) struct Node<'v> {
    value: &'v Value,
    /// Chars of its compact JSON.
    size: usize,
    /// Its smallest size under the current pass.
    floor: usize,
    kind: Kind<'v>,
}

enum Kind<'v> {
    /// Kept as it is: a number, a literal, a fixed place.
    Whole,
    /// A string the schema lets be shortened: its chars and the fewest it may keep.
    Text { chars: usize, min_chars: usize },
    Items {
        items: Vec<Node<'v>>,
        /// The positional items, which keep their places.
        prefix: usize,
        min_items: usize,
        /// Whether items may be left out.
        thin: bool,
    },
    Members {
        members: Vec<Member<'v>>,
        /// Whether every member stays.
        keep_all: bool,
    },
}

struct Member<'v> {
    key: &'v str,
    /// Chars of `"key":`.
    key_size: usize,
    node: Node<'v>,
    required: bool,
}

/// What a plan keeps of one place.
enum Plan {
    Whole,
    /// A string's first `head` and last `tail` chars, `…` between.
    Text {
        head: usize,
        tail: usize,
    },
    /// The items kept, by index, each with its own plan.
    Items(Vec<(usize, Plan)>),
    /// The members kept, by index, each with its own plan.
    Members(Vec<(usize, Plan)>),
}

impl<'v> Node<'v> {
    /// The tree of `value` under `schemas` (all apply), `root` resolving references.
    pub(super) fn read(root: &Value, schemas: &[&Value], value: &'v Value, depth: usize) -> Self {
        let rules = Rules::of(root, schemas, value);
        let fixed = rules.fixed || depth >= MAX_DEPTH;
        let (size, kind) = match value {
            Value::String(text) => {
                let size = escaped_size(text);
                let kind = if fixed || rules.whole_string {
                    Kind::Whole
                } else {
                    Kind::Text {
                        chars: text.chars().count(),
                        min_chars: rules.min_length,
                    }
                };
                (size, kind)
            }
            Value::Array(values) if !fixed => {
                let items: Vec<Node<'v>> = values
                    .iter()
                    .enumerate()
                    .map(|(i, item)| Node::read(root, &rules.item(i), item, depth + 1))
                    .collect();
                let size = container_size(items.iter().map(|item| item.size));
                let kind = Kind::Items {
                    prefix: rules.prefix.len().min(items.len()),
                    min_items: rules.min_items,
                    thin: !rules.whole_array,
                    items,
                };
                (size, kind)
            }
            Value::Object(map) if !fixed => {
                let members: Vec<Member<'v>> = map
                    .iter()
                    .map(|(key, member)| {
                        let node = match rules.member(key) {
                            Some(schemas) => Node::read(root, &schemas, member, depth + 1),
                            // A member a pattern may name: not known here, kept as it is.
                            None => Node::whole(member),
                        };
                        Member {
                            key,
                            key_size: escaped_size(key) + 1,
                            required: rules.required.contains(&key.as_str()),
                            node,
                        }
                    })
                    .collect();
                let size = container_size(members.iter().map(|m| m.key_size + m.node.size));
                let kind = Kind::Members {
                    members,
                    keep_all: rules.keep_members,
                };
                (size, kind)
            }
            other => (compact_size(other), Kind::Whole),
        };
        Node {
            value,
            size,
            floor: size,
            kind,
        }
    }

    fn whole(value: &'v Value) -> Self {
        let size = compact_size(value);
        Node {
            value,
            size,
            floor: size,
            kind: Kind::Whole,
        }
    }

    /// Its size whole.
    pub(super) fn size(&self) -> usize {
        self.size
    }

    /// Sets every place's smallest size under `ops`; returns the root's.
    pub(super) fn set_floors(&mut self, ops: Ops) -> usize {
        self.floor = match &mut self.kind {
            Kind::Whole => self.size,
            Kind::Text { chars, min_chars } if ops.shorten => {
                // The fewest chars it may keep, the ellipsis among them.
                let keep = (*min_chars).max(1);
                if keep >= *chars {
                    self.size
                } else {
                    let Value::String(text) = self.value else {
                        unreachable!("a text node holds a string")
                    };
                    2 + escaped_chars(text.chars().take(keep - 1)) + 1
                }
            }
            Kind::Text { .. } => self.size,
            Kind::Items {
                items,
                prefix,
                min_items,
                thin,
            } => {
                let floors: Vec<usize> =
                    items.iter_mut().map(|item| item.set_floors(ops)).collect();
                if *thin {
                    // The positional items, then the smallest others up to `minItems`.
                    let need = (*min_items).max(*prefix).min(floors.len());
                    let mut rest: Vec<usize> = floors[*prefix..].to_vec();
                    rest.sort_unstable();
                    let kept = floors[..*prefix]
                        .iter()
                        .chain(rest.iter().take(need - *prefix));
                    container_size(kept.copied())
                } else {
                    container_size(floors.into_iter())
                }
            }
            Kind::Members { members, keep_all } => {
                let keep_all = *keep_all;
                let mut kept = Vec::with_capacity(members.len());
                for member in members.iter_mut() {
                    let floor = member.node.set_floors(ops);
                    if !(ops.drop && !member.required && !keep_all) {
                        kept.push(member.key_size + floor);
                    }
                }
                container_size(kept.into_iter())
            }
        };
        self.floor
    }

    /// The plan of this place within `room` chars under `ops`, and its size (over `room` only
    /// when the place's floor is).
    fn fit(&self, room: usize, ops: Ops) -> (Plan, usize) {
        if self.size <= room {
            return (Plan::Whole, self.size);
        }
        match &self.kind {
            Kind::Whole => (Plan::Whole, self.size),
            Kind::Text { .. } if !ops.shorten => (Plan::Whole, self.size),
            Kind::Text { min_chars, .. } => {
                let Value::String(text) = self.value else {
                    unreachable!("a text node holds a string")
                };
                shorten(text, room, *min_chars)
            }
            Kind::Items {
                items,
                prefix,
                min_items,
                thin,
            } => fit_items(items, *prefix, *min_items, *thin, room, ops),
            Kind::Members { members, keep_all } => fit_members(members, *keep_all, room, ops),
        }
    }
}

/// The structure `root`'s tree keeps within `room` under `ops`: the value, its size, and the
/// facts of each cut (JSON Pointers into the whole); `None` when even its floor is over.
pub(super) fn cut(
    node: &mut Node<'_>,
    room: usize,
    ops: Ops,
) -> Option<(Value, usize, Vec<Value>, usize)> {
    if node.set_floors(ops) > room {
        return None;
    }
    let (plan, size) = node.fit(room, ops);
    if size > room {
        return None;
    }
    let mut facts = Facts::default();
    let value = build(node, &plan, &mut String::new(), &mut facts);
    Some((value, size, facts.listed, facts.more))
}

/// The facts of a cut, the first [`MAX_FACTS`] listed.
#[derive(Default)]
struct Facts {
    listed: Vec<Value>,
    more: usize,
}

impl Facts {
    fn push(&mut self, fact: Value) {
        if self.listed.len() < MAX_FACTS {
            self.listed.push(fact);
        } else {
            self.more += 1;
        }
    }
}

/// Items by priority: the positional ones, the first, the last, those that carry an error,
/// then the head and the tail alternately.
fn priority(items: &[Node<'_>], prefix: usize) -> (Vec<usize>, Vec<bool>) {
    let n = items.len();
    let mut order = Vec::with_capacity(n);
    let mut salient = vec![false; n];
    let mut taken = vec![false; n];
    let take = |i: usize, order: &mut Vec<usize>, taken: &mut Vec<bool>| {
        if i < n && !taken[i] {
            taken[i] = true;
            order.push(i);
        }
    };
    for i in 0..prefix {
        take(i, &mut order, &mut taken);
    }
    if n > 0 {
        take(prefix.min(n - 1), &mut order, &mut taken);
    }
    for (i, item) in items.iter().enumerate().skip(prefix) {
        if !taken[i] && super::salient::carries_error(item.value) {
            salient[i] = true;
            take(i, &mut order, &mut taken);
        }
    }
    if n > 0 {
        take(n - 1, &mut order, &mut taken);
    }
    let (mut head, mut tail) = (prefix, n);
    while head < tail {
        take(head, &mut order, &mut taken);
        head += 1;
        if head < tail {
            tail -= 1;
            take(tail, &mut order, &mut taken);
        }
    }
    (order, salient)
}

fn fit_items(
    items: &[Node<'_>],
    prefix: usize,
    min_items: usize,
    thin: bool,
    room: usize,
    ops: Ops,
) -> (Plan, usize) {
    if !thin {
        let all: Vec<usize> = (0..items.len()).collect();
        return fit_all(items, &all, room, ops);
    }
    let need = min_items.max(prefix).min(items.len());
    let (order, salient) = priority(items, prefix);
    // Whole items, by priority, while they fit; those that carry an error take at most half.
    let mut kept: Vec<usize> = Vec::new();
    let mut used = 1;
    let mut salient_used = 0;
    for &i in &order {
        let cost = items[i].size + 1;
        if used + cost > room {
            continue;
        }
        if salient[i] {
            if salient_used + cost > room / 2 {
                continue;
            }
            salient_used += cost;
        }
        used += cost;
        kept.push(i);
    }
    let prefix_whole = kept.iter().filter(|&&i| i < prefix).count() == prefix;
    if kept.len() >= need && prefix_whole {
        if kept.is_empty() && !items.is_empty() {
            // No item fits whole: the first, cut, rather than none.
            let first = order[0];
            if items[first].floor + 2 <= room {
                let (plan, size) = items[first].fit(room - 2, ops);
                return (Plan::Items(vec![(first, plan)]), size + 2);
            }
            return (Plan::Items(Vec::new()), 2);
        }
        kept.sort_unstable();
        let size = used.max(2);
        return (
            Plan::Items(kept.into_iter().map(|i| (i, Plan::Whole)).collect()),
            size,
        );
    }
    // The items that must stay share the room, cut as they need; others are added whole in the
    // room they leave.
    let mut must: Vec<usize> = (0..prefix).collect();
    must.extend(
        order
            .iter()
            .copied()
            .filter(|&i| i >= prefix)
            .take(need - prefix),
    );
    if container_size(must.iter().map(|&i| items[i].floor)) > room {
        // The items by priority cannot all stay: the smallest ones, as the floor counts them.
        let mut rest: Vec<usize> = (prefix..items.len()).collect();
        rest.sort_by_key(|&i| items[i].floor);
        must.truncate(prefix);
        must.extend(rest.into_iter().take(need - prefix));
    }
    let (plan, size) = fit_all(items, &must, room, ops);
    let Plan::Items(mut chosen) = plan else {
        return (plan, size);
    };
    let mut chosen_already = vec![false; items.len()];
    for &i in &must {
        chosen_already[i] = true;
    }
    let mut used = size;
    for &i in &order {
        let cost = items[i].size + 1;
        if chosen_already[i] || used + cost > room {
            continue;
        }
        used += cost;
        chosen.push((i, Plan::Whole));
    }
    chosen.sort_unstable_by_key(|(i, _)| *i);
    (Plan::Items(chosen), used)
}

/// The items `which` all kept, sharing `room` max-min fairly above their floors.
fn fit_all(items: &[Node<'_>], which: &[usize], room: usize, ops: Ops) -> (Plan, usize) {
    if which.is_empty() {
        return (Plan::Items(Vec::new()), 2);
    }
    let wants: Vec<Want> = which
        .iter()
        .map(|&i| Want {
            whole: items[i].size + 1,
            floor: items[i].floor + 1,
            may_go: false,
        })
        .collect();
    let shares = share(&wants, room.saturating_sub(1));
    let mut size = 1;
    let mut kept = Vec::with_capacity(which.len());
    for (&i, share) in which.iter().zip(shares) {
        let (plan, item) = items[i].fit(share.saturating_sub(1), ops);
        size += item + 1;
        kept.push((i, plan));
    }
    (Plan::Items(kept), size)
}

fn fit_members(members: &[Member<'_>], keep_all: bool, room: usize, ops: Ops) -> (Plan, usize) {
    let wants: Vec<Want> = members
        .iter()
        .map(|member| Want {
            whole: member.key_size + member.node.size + 1,
            floor: member.key_size + member.node.floor + 1,
            may_go: ops.drop && !member.required && !keep_all,
        })
        .collect();
    let mut shares = share(&wants, room.saturating_sub(1));
    // Members left out come back whole while room remains, as items of a list do: the first,
    // those that carry an error (a map's failing entry), the last, then the head and the tail.
    let mut used: usize = 1 + shares.iter().sum::<usize>();
    let left_out: Vec<usize> = (0..members.len()).filter(|&i| shares[i] == 0).collect();
    let (failing, routine): (Vec<usize>, Vec<usize>) = left_out
        .into_iter()
        .partition(|&i| super::salient::carries_error(members[i].node.value));
    let mut ends = Vec::with_capacity(routine.len());
    let (mut head, mut tail) = (0, routine.len());
    while head < tail {
        ends.push(routine[head]);
        head += 1;
        if head < tail {
            tail -= 1;
            ends.push(routine[tail]);
        }
    }
    let first = ends.first().copied();
    let order = first
        .into_iter()
        .chain(failing)
        .chain(ends.into_iter().skip(1));
    for i in order {
        if used + wants[i].whole <= room {
            shares[i] = wants[i].whole;
            used += wants[i].whole;
        }
    }
    let mut size = 1;
    let mut kept = Vec::with_capacity(members.len());
    for (i, (member, share)) in members.iter().zip(shares).enumerate() {
        if share == 0 {
            continue;
        }
        let room = share.saturating_sub(member.key_size + 1);
        let (plan, value) = member.node.fit(room, ops);
        size += member.key_size + value + 1;
        kept.push((i, plan));
    }
    (Plan::Members(kept), size.max(2))
}

/// What one member or item asks of the room: all of it, at least its floor, and whether it
/// may be left out instead.
struct Want {
    whole: usize,
    floor: usize,
    may_go: bool,
}

impl Want {
    /// Its share at the water level `level`: whole when that is within the level; else the
    /// level, not below its floor — or, for one that may go, nothing under its floor.
    fn at(&self, level: usize) -> usize {
        if self.whole <= level {
            self.whole
        } else if self.may_go {
            if level >= self.floor { level } else { 0 }
        } else {
            level.clamp(self.floor, self.whole)
        }
    }
}

/// Max-min fair shares of `room` above each want's floor: the highest water level whose
/// shares fit (the floors alone when they do not).
fn share(wants: &[Want], room: usize) -> Vec<usize> {
    let total = |level: usize| -> usize { wants.iter().map(|want| want.at(level)).sum() };
    let top = wants.iter().map(|want| want.whole).max().unwrap_or(0);
    let (mut low, mut high) = (0, top);
    if total(top) <= room {
        low = top;
    } else {
        // The highest level whose total fits: total is monotone in the level.
        while low + 1 < high {
            let mid = low + (high - low) / 2;
            if total(mid) <= room {
                low = mid;
            } else {
                high = mid;
            }
        }
    }
    let mut shares: Vec<usize> = wants.iter().map(|want| want.at(low)).collect();
    // What the level leaves goes to the wants that can take it, one char each, first first: a
    // level of whole chars leaves less than one per want.
    let mut left = room.saturating_sub(shares.iter().sum());
    for (want, share) in wants.iter().zip(shares.iter_mut()) {
        if left == 0 {
            break;
        }
        if *share > 0 && *share < want.whole {
            let more = (want.whole - *share).min(left);
            *share += more;
            left -= more;
        }
    }
    shares
}

/// A string shortened to `room` chars of JSON: its head and tail around `…`, at least
/// `min_chars` chars.
fn shorten(text: &str, room: usize, min_chars: usize) -> (Plan, usize) {
    let widths: Vec<usize> = text.chars().map(escaped_width).collect();
    let chars = widths.len();
    // The quotes and the ellipsis.
    let budget = room.saturating_sub(3);
    let head_budget = budget * 3 / 5;
    let (mut head, mut used) = (0, 0);
    while head < chars && used + widths[head] <= head_budget {
        used += widths[head];
        head += 1;
    }
    let mut tail = 0;
    while head + tail < chars && used + widths[chars - 1 - tail] <= budget {
        used += widths[chars - 1 - tail];
        tail += 1;
    }
    // Not below `minLength` (the ellipsis counts as one): the head alone, if need be, as the
    // floor counts it.
    if head + tail + 1 < min_chars {
        tail = 0;
        head = min_chars - 1;
        used = widths[..head.min(chars)].iter().sum();
    }
    if head + tail >= chars {
        return (Plan::Whole, escaped_size(text));
    }
    (Plan::Text { head, tail }, used + 3)
}

/// The value `plan` keeps of `node`, stating each cut at its pointer.
fn build(node: &Node<'_>, plan: &Plan, pointer: &mut String, facts: &mut Facts) -> Value {
    match (plan, &node.kind, node.value) {
        (Plan::Whole, _, value) => value.clone(),
        (Plan::Text { head, tail }, Kind::Text { chars, .. }, Value::String(text)) => {
            let mut cut: String = text.chars().take(*head).collect();
            cut.push(ELLIPSIS);
            cut.extend(text.chars().skip(chars - tail));
            facts.push(serde_json::json!({
                "pointer": pointer.as_str(),
                "unit": "chars",
                "kept": head + tail,
                "total": chars,
            }));
            Value::String(cut)
        }
        (Plan::Items(kept), Kind::Items { items, .. }, _) => {
            if kept.len() < items.len() {
                facts.push(serde_json::json!({
                    "pointer": pointer.as_str(),
                    "unit": "items",
                    "kept": kept.len(),
                    "total": items.len(),
                    "keptItems": ranges(kept.iter().map(|(i, _)| *i)),
                }));
            }
            let at = pointer.len();
            let values = kept
                .iter()
                .map(|(i, plan)| {
                    pointer.truncate(at);
                    pointer.push('/');
                    pointer.push_str(&i.to_string());
                    build(&items[*i], plan, pointer, facts)
                })
                .collect();
            pointer.truncate(at);
            Value::Array(values)
        }
        (Plan::Members(kept), Kind::Members { members, .. }, _) => {
            let at = pointer.len();
            let mut map = Map::with_capacity(kept.len());
            let mut next = 0;
            for (i, member) in members.iter().enumerate() {
                pointer.truncate(at);
                pointer.push('/');
                push_token(pointer, member.key);
                match kept.get(next) {
                    Some((k, plan)) if *k == i => {
                        next += 1;
                        map.insert(
                            member.key.to_owned(),
                            build(&member.node, plan, pointer, facts),
                        );
                    }
                    _ => facts.push(serde_json::json!({
                        "pointer": pointer.as_str(),
                        "unit": "member",
                        "leftOut": true,
                    })),
                }
            }
            pointer.truncate(at);
            Value::Object(map)
        }
        (_, _, value) => value.clone(),
    }
}

/// A JSON Pointer's reference token: `~` as `~0`, `/` as `~1`.
fn push_token(pointer: &mut String, key: &str) {
    for c in key.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// Sorted indices as inclusive ranges: `[[0, 19], [1980, 1999]]`.
fn ranges(indices: impl Iterator<Item = usize>) -> Vec<[usize; 2]> {
    let mut ranges: Vec<[usize; 2]> = Vec::new();
    for i in indices {
        match ranges.last_mut() {
            Some(last) if last[1] + 1 == i => last[1] = i,
            _ => ranges.push([i, i]),
        }
    }
    ranges
}

/// The size of a container whose members (each with its key) take `sizes`.
fn container_size(sizes: impl Iterator<Item = usize>) -> usize {
    let mut count = 0;
    let total: usize = sizes.inspect(|_| count += 1).map(|size| size + 1).sum();
    if count == 0 { 2 } else { 1 + total }
}

/// Chars of a leaf's compact JSON.
fn compact_size(value: &Value) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => n.to_string().len(),
        Value::String(text) => escaped_size(text),
        // Not a leaf: counted as serde writes it.
        other => serde_json::to_string(other).map_or(0, |json| json.chars().count()),
    }
}

/// Chars of a string as compact JSON writes it, quotes included.
pub(super) fn escaped_size(text: &str) -> usize {
    2 + escaped_chars(text.chars())
}

fn escaped_chars(chars: impl Iterator<Item = char>) -> usize {
    chars.map(escaped_width).sum()
}

/// Chars serde_json writes for `c` inside a string: `\"`, `\\` and the short escapes take 2,
/// other control chars 6 (`\u001f`), the rest 1.
fn escaped_width(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn chars(value: &Value) -> usize {
        serde_json::to_string(value).unwrap().chars().count()
    }

    #[test]
    fn sizes_are_serdes_exactly() {
        for value in [
            json!({ "a\"b": ["x\n\u{1}y", 1.5, -3, null, true, false, {}, []], "ü": "ß€" }),
            json!([]),
            json!("\\\t"),
        ] {
            let node = Node::read(&json!(true), &[], &value, 0);
            assert_eq!(node.size, chars(&value), "{value}");
        }
    }

    #[test]
    fn an_array_keeps_whole_items_first_last_and_failing_within_the_room() {
        let rows: Vec<Value> = (0..200)
            .map(|i| {
                let status = if i == 97 { "failed" } else { "ok" };
                json!({ "id": i, "status": status, "name": format!("row {i}") })
            })
            .collect();
        let value = json!({ "rows": rows });
        let schema = json!({
            "type": "object",
            "properties": { "rows": { "type": "array", "items": {
                "type": "object",
                "properties": { "id": { "type": "integer" }, "status": { "enum": ["ok", "failed"] },
                                "name": { "type": "string" } },
                "required": ["id", "status", "name"],
                "additionalProperties": false } } },
            "required": ["rows"],
            "additionalProperties": false,
        });
        let mut node = Node::read(&schema, &[&schema], &value, 0);
        let (cut, size, facts, more) = cut(&mut node, 1_000, PASSES[0]).expect("a cut");
        assert_eq!(size, chars(&cut));
        assert!(size <= 1_000);
        let kept = cut["rows"].as_array().unwrap();
        assert_eq!(kept[0], rows[0]);
        assert_eq!(kept.last().unwrap(), &rows[199]);
        assert!(kept.contains(&rows[97]), "the failing row is kept");
        assert_eq!(more, 0);
        assert_eq!(facts[0]["pointer"], "/rows");
        assert_eq!(facts[0]["total"], 200);
        assert_eq!(facts[0]["kept"], kept.len());
    }

    #[test]
    fn floors_hold_min_items_and_required_members() {
        let schema = json!({
            "type": "object",
            "properties": { "rows": { "type": "array", "minItems": 100 }, "note": { "type": "string" } },
            "required": ["rows"],
        });
        let value = json!({ "rows": (0..200).collect::<Vec<_>>(), "note": "x".repeat(500) });
        let mut node = Node::read(&schema, &[&schema], &value, 0);
        // 100 items of at least one digit: over 200 chars whatever the cut.
        assert!(cut(&mut node, 150, PASSES[2]).is_none());
        // The note may go: the rows keep their hundred.
        let (kept, size, facts, _) = cut(&mut node, 600, PASSES[1]).expect("a cut");
        assert!(size <= 600);
        assert!(kept["rows"].as_array().unwrap().len() >= 100);
        assert!(kept.get("note").is_none());
        assert!(
            facts
                .iter()
                .any(|f| f["pointer"] == "/note" && f["leftOut"] == true)
        );
        // Strings shortened: within the room, never below minLength.
        let schema = json!({ "type": "string", "minLength": 50 });
        let value = json!("é".repeat(1_000));
        let mut node = Node::read(&schema, &[&schema], &value, 0);
        let (text, size, _, _) = cut(&mut node, 80, PASSES[2]).expect("a cut");
        assert_eq!(size, chars(&text));
        assert!(size <= 80 && text.as_str().unwrap().chars().count() >= 50);
        assert!(cut(&mut node, 40, PASSES[2]).is_none());
    }

    #[test]
    fn members_share_fairly_and_optional_ones_come_back_whole() {
        // A dictionary of many optional entries keeps whole ones, not none.
        let entries: Map<String, Value> = (0..500)
            .map(|i| {
                (
                    format!("key{i}"),
                    json!({ "id": i, "label": "an entry of the map" }),
                )
            })
            .collect();
        let value = Value::Object(entries);
        let schema = json!({ "type": "object", "additionalProperties": {
            "type": "object", "properties": { "id": { "type": "integer" }, "label": { "type": "string" } },
            "required": ["id", "label"] } });
        let mut node = Node::read(&schema, &[&schema], &value, 0);
        let (kept, size, _, _) = cut(&mut node, 2_000, PASSES[1]).expect("a cut");
        assert!(size <= 2_000 && size > 1_500, "{size}");
        assert_eq!(size, chars(&kept));
        assert!(kept.as_object().unwrap().len() > 20);
    }
}
