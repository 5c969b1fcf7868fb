//! Fuzzes `trim::fit_with`: any bytes (as lossy UTF-8), any allowance, any style must give a
//! result within the allowance that keeps a prefix and a suffix of the input, without panicking.

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolsmith::trim::{FullOutput, TrimStyle, fit_with, line_count};

fuzz_target!(|input: (u16, u8, Option<u8>, u8, &[u8])| {
    let (allowance, ratio, max_lines, which, bytes) = input;
    let text = String::from_utf8_lossy(bytes);
    let allowance = usize::from(allowance);
    let style = TrimStyle::head_tail(f64::from(ratio) / 255.0)
        .with_max_lines(max_lines.map(usize::from));
    let full = match which % 3 {
        0 => FullOutput::NotKept,
        1 => FullOutput::Stored { id: "0123456789abcdef0123456789abcdef", reader: "read_artifact" },
        _ => FullOutput::Failed { reason: "disk full" },
    };
    let trimmed = fit_with(&text, allowance, &style, &full.into());
    let fits = text.chars().count() <= allowance
        && style.max_lines().is_none_or(|max| line_count(&text) <= max);
    assert_eq!(trimmed.is_trimmed(), !fits);
    if let Some(cut) = trimmed.cut() {
        assert!(trimmed.text().chars().count() <= allowance);
        assert!(trimmed.text().starts_with(&text[..cut.head_bytes]));
        assert!(trimmed.text().ends_with(&text[text.len() - cut.tail_bytes..]));
    } else {
        assert_eq!(trimmed.text(), text);
    }
});
