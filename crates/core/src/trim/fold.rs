//! Lines that say the same thing: a line's signature is its text with the parts that vary from
//! line to line of a repeated message — numbers, hex ids, durations — made equal, so
//! `test a::t17 ... ok` and `test a::t18 ... ok`, or `synced batch 4411: 12 orders in 31ms` and
//! `synced batch 4412: 9 orders in 8ms`, have one signature.

/// The signature of `line` (without its line break): a 64-bit FNV-1a hash of its text with every
/// run of digits as `#`, and hex ids (six or more hex digits with a digit among them, or `0x…`)
/// as `#` whole.
pub(crate) fn signature(line: &[u8]) -> u64 {
    let mut hash = Fnv::new();
    let mut at = 0;
    while at < line.len() {
        let b = line[at];
        if !b.is_ascii_alphanumeric() {
            hash.push(b);
            at += 1;
            continue;
        }
        let end = at
            + line[at..]
                .iter()
                .position(|b| !b.is_ascii_alphanumeric())
                .unwrap_or(line.len() - at);
        let word = &line[at..end];
        if is_hex_id(word) {
            hash.push(b'#');
        } else {
            let mut in_digits = false;
            for &c in word {
                if c.is_ascii_digit() {
                    if !in_digits {
                        hash.push(b'#');
                    }
                    in_digits = true;
                } else {
                    hash.push(c);
                    in_digits = false;
                }
            }
        }
        at = end;
    }
    hash.finish()
}

/// A word that is an id rather than a name: `0x` and hex digits, or six or more hex digits with
/// at least one decimal digit (`e62994b938fd5803`, not `deface`).
fn is_hex_id(word: &[u8]) -> bool {
    if let Some(rest) = word.strip_prefix(b"0x")
        && !rest.is_empty()
        && rest.iter().all(u8::is_ascii_hexdigit)
    {
        return true;
    }
    word.len() >= 6 && word.iter().all(u8::is_ascii_hexdigit) && word.iter().any(u8::is_ascii_digit)
}

struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn push(&mut self, b: u8) {
        self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The longest period of lines a fold recognises: a message of up to this many lines repeated
/// (a recursive call's stack frames, two or three lines each).
pub(crate) const MAX_PERIOD: usize = 6;

/// The repeat that starts a sequence of line signatures, if any: `(period, lines)`, where the
/// first `period` lines repeat (as a whole, one or more times) through the first `lines` lines,
/// and the repeated part is worth folding (two or more lines, at least one whole period).
///
/// Reads the signatures once, in order, and at most one past the repeat; holds a period of them.
pub(crate) fn repeat(mut signatures: impl Iterator<Item = u64>) -> Option<(usize, usize)> {
    let mut window = [0u64; 2 * MAX_PERIOD];
    let mut seen = 0;
    for slot in &mut window {
        match signatures.next() {
            Some(signature) => {
                *slot = signature;
                seen += 1;
            }
            None => break,
        }
    }
    let period = (1..=MAX_PERIOD).find(|&p| {
        2 * p <= seen
            && (0..p).all(|i| window[i] == window[i + p])
            // A line repeated as its own period-2 pair is a period-1 repeat.
            && (p == 1 || window[..p].iter().any(|s| *s != window[0]))
    })?;
    // Extend while each line matches the one a period before it; count whole periods.
    let mut len = 2 * period;
    let mut previous: std::collections::VecDeque<u64> =
        window[period..2 * period].iter().copied().collect();
    // The signatures already read past the first two periods come first.
    let read_ahead = window[2 * period..seen].iter().copied();
    for signature in read_ahead.chain(signatures) {
        if previous.front() != Some(&signature) {
            break;
        }
        previous.pop_front();
        previous.push_back(signature);
        len += 1;
    }
    let lines = len - len % period;
    // One line repeated once is not worth a fold line; a longer period repeated once is.
    (lines - period >= 2).then_some((period, lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_ids_and_durations_do_not_tell_lines_apart() {
        let same = |a: &str, b: &str| signature(a.as_bytes()) == signature(b.as_bytes());
        assert!(same("test a::t17 ... ok", "test a::t18 ... ok"));
        assert!(same(
            "synced batch 4411: 12 orders in 31ms",
            "synced batch 4412: 9 orders in 8ms"
        ));
        assert!(same(
            "Running unittests (target/debug/deps/alpha-e62994b938fd5803)",
            "Running unittests (target/debug/deps/alpha-0c1d2e3f4a5b6c7d)"
        ));
        assert!(same("at 0x7ffd5e2a", "at 0x4010"));
        assert!(!same("test a::t17 ... ok", "test a::t17 ... FAILED"));
        assert!(!same("deface", "facade"), "words of hex letters are words");
    }

    fn run(lines: &[&str]) -> Option<(usize, usize)> {
        repeat(lines.iter().map(|l| signature(l.as_bytes())))
    }

    #[test]
    fn repeats_of_one_to_four_lines_are_found() {
        assert_eq!(run(&["ok 1", "ok 2", "ok 3", "done"]), Some((1, 3)));
        assert_eq!(
            run(&["ok 1", "ok 2", "done"]),
            None,
            "one repeat is not worth folding"
        );
        let frames = ["  File \"f.py\", line 3, in f", "    return f(n + 1)"];
        let mut stack = vec!["Traceback (most recent call last):"];
        for _ in 0..5 {
            stack.extend(frames);
        }
        stack.push("RecursionError: maximum recursion depth exceeded");
        assert_eq!(run(&stack), None, "the first line does not repeat");
        assert_eq!(run(&stack[1..]), Some((2, 10)));
        assert_eq!(run(&["a", "b", "c", "d", "e"]), None);
    }
}
