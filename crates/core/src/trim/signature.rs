//! Lines that say the same thing: a line's signature is its text with the parts that vary from
//! line to line of a repeated message — numbers, hex ids, durations — made equal, so
//! `test a::t17 ... ok` and `test a::t18 ... ok`, or `synced batch 4411: 12 orders in 31ms` and
//! `synced batch 4412: 9 orders in 8ms`, have one signature. Salience groups its excerpts by
//! it (the first and the last of one message are kept before the others); it never decides
//! that a line may be left out as like another (that is [`runs`](super::runs), lossless).

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
}
