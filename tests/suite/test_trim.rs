//! `trim::fit` against a naive reference implementation of the same contract, over arbitrary
//! Unicode and allowances from 0 up.

use proptest::prelude::*;
use toolsmith::trim::{
    Continuation, FullOutput, LineSpan, MarkedFull, TrimStyle, fit, fit_with, line_count,
};

/// The contract, written the slow and obvious way: a `Vec<char>`, indices, and `format!`.
mod reference {
    use toolsmith::trim::{FullOutput, TrimStyle};

    pub(crate) fn grouped(n: usize) -> String {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, d) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(d);
        }
        out
    }

    fn lines(chars: &[char]) -> usize {
        let newlines = chars.iter().filter(|&&c| c == '\n').count();
        newlines + usize::from(chars.last().is_some_and(|&c| c != '\n'))
    }

    fn split(n: usize, ratio: f64) -> (usize, usize) {
        let head = ((n as f64 * ratio).floor() as usize).min(n);
        (head, n - head)
    }

    fn location(full: &FullOutput<'_>) -> String {
        match full {
            FullOutput::Stored { id, reader } => {
                format!("full output: artifact {id}, read it with {reader}")
            }
            FullOutput::Failed { reason } => {
                let short: String = reason.chars().take(120).collect();
                let ellipsis = if reason.chars().count() > 120 {
                    "…"
                } else {
                    ""
                };
                format!("full output could not be kept: {short}{ellipsis}")
            }
            _ => "full output not kept".to_owned(),
        }
    }

    fn range(first: usize, last: usize, widest: bool) -> String {
        if first == last && !widest {
            grouped(first)
        } else {
            format!("{}-{}", grouped(first), grouped(last))
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn marker(
        kept: usize,
        total: usize,
        head: Option<(usize, usize)>,
        tail: Option<(usize, usize)>,
        lines: usize,
        line_cuts: Option<(Option<usize>, Option<usize>)>,
        next: Option<usize>,
        full: &FullOutput<'_>,
        widest: bool,
    ) -> String {
        let tail = tail.filter(|tail| head.is_none_or(|head| tail.0 > head.1) || widest);
        let spans = match (head, tail) {
            (None, None) => format!("no lines of {}", grouped(lines)),
            (Some((a, b)), None) | (None, Some((a, b))) if a == b && !widest => {
                format!("line {} of {}", grouped(a), grouped(lines))
            }
            (Some((a, b)), None) | (None, Some((a, b))) => {
                format!("lines {} of {}", range(a, b, widest), grouped(lines))
            }
            (Some((a, b)), Some((c, d))) => format!(
                "lines {} and {} of {}",
                range(a, b, widest),
                range(c, d, widest),
                grouped(lines)
            ),
        };
        let head_line = head.map(|(_, last)| last);
        let tail_line = tail.map(|(first, _)| first).or(head.map(|(_, last)| last));
        let mid = match line_cuts {
            None => String::new(),
            Some((None, None)) => ", cut mid-line".to_owned(),
            Some((Some(first), Some(last))) if head_line == tail_line && !widest => format!(
                ", cut mid-line: first {} and last {} chars of line {}",
                grouped(first),
                grouped(last),
                grouped(head_line.unwrap())
            ),
            Some((first, last)) => {
                let parts: Vec<String> = first
                    .map(|n| {
                        format!(
                            "first {} chars of line {}",
                            grouped(n),
                            grouped(head_line.unwrap())
                        )
                    })
                    .into_iter()
                    .chain(last.map(|n| {
                        format!(
                            "last {} chars of line {}",
                            grouped(n),
                            grouped(tail_line.unwrap())
                        )
                    }))
                    .collect();
                format!(", cut mid-line: {}", parts.join(", "))
            }
        };
        let next = next
            .map(|n| format!("next page: offset={n}; "))
            .unwrap_or_default();
        format!(
            "[toolsmith: output truncated, kept {} of {} chars ({spans}{mid}); {next}{}]",
            grouped(kept),
            grouped(total),
            location(full)
        )
    }

    fn first_lines(chars: &[char], n: usize) -> usize {
        let mut seen = 0;
        for (i, &c) in chars.iter().enumerate() {
            if seen == n {
                return i;
            }
            if c == '\n' {
                seen += 1;
            }
        }
        chars.len()
    }

    fn last_lines(chars: &[char], n: usize) -> usize {
        // Index where the last `n` lines start.
        if n == 0 {
            return chars.len();
        }
        let total = lines(chars);
        if n >= total {
            return 0;
        }
        // Line k (0-based) starts after the k-th newline.
        let skip = total - n;
        let mut seen = 0;
        for (i, &c) in chars.iter().enumerate() {
            if c == '\n' {
                seen += 1;
                if seen == skip {
                    return i + 1;
                }
            }
        }
        0
    }

    pub(crate) fn fit(
        text: &str,
        allowance: usize,
        style: &TrimStyle,
        full: &FullOutput<'_>,
        page_offset: Option<usize>,
    ) -> String {
        let chars: Vec<char> = text.chars().collect();
        let total = chars.len();
        let total_lines = lines(&chars);
        let fits = total <= allowance && style.max_lines().is_none_or(|m| total_lines <= m);
        if fits {
            return text.to_owned();
        }
        let widest = marker(
            total,
            total,
            Some((total_lines, total_lines)),
            Some((total_lines, total_lines)),
            total_lines,
            Some((None, None)),
            page_offset.map(|o| o + total_lines),
            full,
            true,
        );
        let base = widest.chars().count() + 2;
        // Naming the lines a cut fell inside: `: first N chars of line L, ` for each part.
        let named = 2
            * (": first ".len()
                + grouped(total).len()
                + " chars of line ".len()
                + grouped(total_lines).len()
                + 2);
        let ratio = style.head_ratio();
        let cuts = |room: usize| -> (usize, usize) {
            if total <= room {
                let (hq, tq) = split(style.max_lines().unwrap_or(total_lines), ratio);
                return (first_lines(&chars, hq), last_lines(&chars, tq));
            }
            let (hr, tr) = split(room, ratio);
            let mut h = hr;
            if h > 0 && chars[h - 1] != '\n' {
                let window = hr / 4;
                if let Some(p) = (h - window..h).rev().find(|&i| chars[i] == '\n') {
                    h = p + 1;
                }
            }
            let mut t = total - tr;
            if t < total && t > 0 && chars[t - 1] != '\n' {
                let window = tr / 4;
                if let Some(q) = (t..t + window).find(|&i| chars[i] == '\n') {
                    t = q + 1;
                }
            }
            if let Some(m) = style.max_lines() {
                let hl = lines(&chars[..h]);
                let tl = lines(&chars[t..]);
                if hl + tl > m {
                    let (mut hq, mut tq) = split(m, ratio);
                    if hl < hq {
                        tq += hq - hl;
                        hq = hl;
                    } else if tl < tq {
                        hq += tq - tl;
                        tq = tl;
                    }
                    h = first_lines(&chars[..h], hq);
                    t += last_lines(&chars[t..], tq);
                }
            }
            (h, t)
        };
        let inside_a_line = |(h, t): (usize, usize)| {
            (h > 0 && h < total && chars[h - 1] != '\n')
                || (t < total && t > 0 && chars[t - 1] != '\n')
        };
        // The cuts for the room beside the marker; when they fall inside a line, again with room
        // to name it. Too small for the full marker: head and tail around `[truncated]`, else
        // that alone.
        let mut tiny = allowance < base + 64;
        let mut chosen = (!tiny).then(|| cuts(allowance - base));
        if let Some(first) = chosen
            && inside_a_line(first)
        {
            tiny = allowance < base + named + 64;
            chosen = (!tiny).then(|| cuts(allowance - base - named));
        }
        if tiny && allowance < 14 {
            return if allowance >= 11 {
                "[truncated]".to_owned()
            } else {
                String::new()
            };
        }
        let (head_end, tail_start) = chosen.unwrap_or_else(|| cuts(allowance - 13));
        // A tail that starts inside the line the head ends in and goes on past it keeps its
        // whole lines only: each line is shown in one place.
        let newlines_before = |end: usize| chars[..end].iter().filter(|&&c| c == '\n').count();
        let tail_start = match chars[tail_start.min(total)..]
            .iter()
            .position(|&c| c == '\n')
        {
            Some(newline)
                if head_end > 0
                    && tail_start < total
                    && newlines_before(tail_start) <= newlines_before(head_end - 1)
                    && newlines_before(head_end - 1) + 1 < total_lines =>
            {
                tail_start + newline + 1
            }
            _ => tail_start,
        };
        let head: String = chars[..head_end].iter().collect();
        let tail: String = chars[tail_start..].iter().collect();
        let head_span = (head_end > 0).then(|| {
            let newlines = chars[..head_end - 1].iter().filter(|&&c| c == '\n').count();
            (1, 1 + newlines)
        });
        let tail_span = (tail_start < total).then(|| {
            let newlines = chars[..tail_start].iter().filter(|&&c| c == '\n').count();
            (1 + newlines, total_lines)
        });
        // A line cut inside: the chars of it shown, its line break not counted.
        let head_line_chars = (head_end > 0 && head_end < total && chars[head_end - 1] != '\n')
            .then(|| {
                chars[..head_end]
                    .iter()
                    .rev()
                    .take_while(|&&c| c != '\n')
                    .count()
            });
        let tail_line_chars =
            (tail_start < total && tail_start > 0 && chars[tail_start - 1] != '\n').then(|| {
                let line: Vec<char> = chars[tail_start..]
                    .iter()
                    .copied()
                    .take_while(|&c| c != '\n')
                    .collect();
                line.len()
                    - usize::from(line.last() == Some(&'\r') && tail_start + line.len() < total)
            });
        let kept = head_end + (total - tail_start);
        let head_cut_mid_line = head_end > 0 && head_end < total && chars[head_end - 1] != '\n';
        let whole_head_lines =
            head_span.map_or(0, |(_, last)| last - usize::from(head_cut_mid_line));
        let next = page_offset.filter(|_| !tiny).map(|o| o + whole_head_lines);
        let marker = if tiny {
            "[truncated]".to_owned()
        } else {
            marker(
                kept,
                total,
                head_span,
                tail_span,
                total_lines,
                (head_line_chars.is_some() || tail_line_chars.is_some())
                    .then_some((head_line_chars, tail_line_chars)),
                next,
                full,
                false,
            )
        };
        let mut out = head.clone();
        if !head.is_empty() && !head.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&marker);
        if !tail.is_empty() {
            out.push('\n');
            out.push_str(&tail);
        }
        out
    }
}

fn text_strategy() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[a-z ]{1,12}",
        3 => Just("\n".to_owned()),
        1 => Just("\r\n".to_owned()),
        1 => Just("é".to_owned()),
        1 => Just("😀".to_owned()),
        1 => Just("e\u{301}".to_owned()),
        1 => Just("日本語".to_owned()),
        1 => any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..400).prop_map(|pieces| pieces.concat())
}

/// A style of either kind: the positional cut, or one that keeps what matters.
fn any_style_strategy() -> impl Strategy<Value = TrimStyle> {
    (style_strategy(), any::<bool>()).prop_map(|(style, keeps)| {
        if keeps {
            style.keeping_what_matters()
        } else {
            style
        }
    })
}

fn style_strategy() -> impl Strategy<Value = TrimStyle> {
    let ratio = prop_oneof![Just(0.0), Just(0.3), Just(0.5), Just(1.0), 0.0..=1.0f64];
    let max_lines = prop_oneof![2 => Just(None), 1 => (0usize..40).prop_map(Some)];
    (ratio, max_lines).prop_map(|(ratio, max)| TrimStyle::head_tail(ratio).with_max_lines(max))
}

const ID: &str = "0123456789abcdef0123456789abcdef";

/// Text shaped like tool output: repeated lines that differ in numbers, salient lines, escape
/// sequences and carriage-return redraws among plain lines.
fn output_strategy() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        4 => (0u32..5_000).prop_map(|i| format!("test a::t{i} ... ok\n")),
        2 => "[a-z ]{0,30}\n",
        1 => Just("error[E0308]: mismatched types\n  --> src/main.rs:4:5\n".to_owned()),
        1 => Just("Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: x\n".to_owned()),
        1 => Just("\x1b[1m\x1b[31mFAILED\x1b[0m thing\n".to_owned()),
        1 => Just("10%\r50%\r100%\n".to_owned()),
        1 => Just("\n".to_owned()),
        1 => any::<char>().prop_map(|c| format!("{c}\n")),
    ];
    prop::collection::vec(line, 0..300).prop_map(|lines| lines.concat())
}

fn full_strategy() -> impl Strategy<Value = u8> {
    0u8..3
}

fn full_of<'a>(which: u8, reason: &'a str) -> FullOutput<'a> {
    match which {
        0 => FullOutput::NotKept,
        1 => FullOutput::Stored {
            id: ID,
            reader: "read_artifact",
        },
        _ => FullOutput::Failed { reason },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn fit_keeps_the_contract(
        text in text_strategy(),
        allowance in prop_oneof![0usize..40, 0usize..600, 0usize..5_000],
        style in style_strategy(),
        which in full_strategy(),
        reason in "\\PC{0,200}",
        page_offset in prop_oneof![3 => Just(None), 1 => (0usize..100_000).prop_map(Some)],
    ) {
        let full = full_of(which, &reason);
        let continuation = Continuation::from(full).with_page_offset(page_offset);
        let trimmed = fit_with(&text, allowance, &style, &continuation);
        let out = trimmed.text();
        let chars = text.chars().count();
        let lines = line_count(&text);
        let fits = chars <= allowance && style.max_lines().is_none_or(|m| lines <= m);

        prop_assert_eq!(trimmed.is_trimmed(), !fits);
        if fits {
            prop_assert_eq!(out, text.as_str());
        } else {
            prop_assert!(out.chars().count() <= allowance, "{} > {allowance}", out.chars().count());
            let cut = trimmed.cut().unwrap();
            prop_assert_eq!(cut.original_chars, chars);
            prop_assert_eq!(cut.original_lines, lines);
            let head = &text[..cut.head_bytes];
            let tail = &text[text.len() - cut.tail_bytes..];
            prop_assert!(out.starts_with(head));
            prop_assert!(out.ends_with(tail));
            prop_assert_eq!(cut.kept_chars, head.chars().count() + tail.chars().count());
            // The full marker states the figures; a tiny allowance's `[truncated]` does not.
            if out.contains("[toolsmith: output truncated, kept") {
                let kept = format!(
                    "kept {} of {} chars",
                    reference::grouped(cut.kept_chars),
                    reference::grouped(chars)
                );
                prop_assert!(out.contains(&kept), "{out:?} lacks {kept:?}");
            }
        }
        prop_assert_eq!(out, reference::fit(&text, allowance, &style, &full, page_offset));
    }

    #[test]
    fn the_lines_stage_holds_the_line_limit(
        lines in 0usize..300,
        max in 0usize..60,
        ratio in 0.0..=1.0f64,
    ) {
        let text: String = (1..=lines).map(|i| format!("line {i}\n")).collect();
        let style = TrimStyle::head_tail(ratio).with_max_lines(Some(max));
        let trimmed = fit(&text, 1_000_000, &style);
        if let Some(cut) = trimmed.cut() {
            let kept_lines = line_count(&text[..cut.head_bytes])
                + line_count(&text[text.len() - cut.tail_bytes..]);
            prop_assert!(kept_lines <= max);
            prop_assert!(lines > max);
        } else {
            prop_assert!(lines <= max);
        }
    }
}

#[test]
fn a_10_mb_line_is_cut_inside_the_line() {
    let line = "abcé😀".repeat(2 * 1024 * 1024 / 2);
    for allowance in [0, 5, 11, 80, 200, 20_000, 1_000_000] {
        let trimmed = fit(&line, allowance, &TrimStyle::default());
        assert!(
            trimmed.text().chars().count() <= allowance,
            "allowance {allowance}"
        );
        let cut = trimmed.cut().unwrap();
        assert!(trimmed.text().starts_with(&line[..cut.head_bytes]));
        assert!(
            trimmed
                .text()
                .ends_with(&line[line.len() - cut.tail_bytes..])
        );
        if cut.kept_chars > 0 {
            assert!(cut.mid_line);
        }
        if trimmed.text().contains("[toolsmith:") {
            // The marker names the line and how much of its beginning and end is shown: the
            // rest of it is read from the char offset the head stops at.
            let (first, last) = (cut.head_line_chars.unwrap(), cut.tail_line_chars.unwrap());
            assert_eq!(first + last, cut.kept_chars);
            assert_eq!(line[..cut.head_bytes].chars().count(), first);
            assert!(trimmed.text().contains(&format!(
                "(line 1 of 1, cut mid-line: first {} and last {} chars of line 1)",
                reference::grouped(first),
                reference::grouped(last)
            )));
        }
    }
}

#[test]
fn a_long_last_line_cut_at_both_ends_is_one_span_and_its_cuts_are_named_once() {
    // Two lines: a short one, then a line of 2,000 chars the head and the tail both cut into.
    let text = format!("ab\n{}{}", "x".repeat(1_000), "y".repeat(1_000));
    let full = FullOutput::Stored {
        id: ID,
        reader: "read_artifact",
    };
    let continuation = Continuation::from(full);
    let trimmed = fit_with(&text, 600, &TrimStyle::head_tail(0.5), &continuation);
    let cut = trimmed.cut().unwrap();
    assert_eq!(cut.spans, [LineSpan { first: 1, last: 2 }]);
    assert!(
        trimmed
            .text()
            .contains("(lines 1-2 of 2, cut mid-line: first 175 and last 179 chars of line 2)"),
        "{}",
        trimmed.text()
    );
    assert_eq!(cut.left_out_lines(), 0);
}

#[test]
fn crlf_lines_are_cut_after_the_line_feed() {
    let text: String = (1..=2_000).map(|i| format!("row {i}\r\n")).collect();
    let trimmed = fit(&text, 1_000, &TrimStyle::default());
    let cut = trimmed.cut().unwrap();
    assert!(text[..cut.head_bytes].ends_with("\r\n"));
    assert!(text[..text.len() - cut.tail_bytes].ends_with("\r\n"));
    assert!(!cut.mid_line);
}

#[test]
fn the_marker_reads_as_the_design_shows() {
    let text: String = (1..=500).map(|i| format!("{i:>89}\n")).collect();
    let full = FullOutput::Stored {
        id: ID,
        reader: "read_artifact",
    };
    // The positional cut (a head and a tail): the same lines everywhere would fold otherwise.
    let trimmed = fit_with(&text, 20_000, &TrimStyle::head_tail(0.3), &full.into());
    let out = trimmed.text();
    let marker_line = out
        .lines()
        .find(|line| line.starts_with("[toolsmith:"))
        .unwrap();
    assert_eq!(
        marker_line,
        format!(
            "[toolsmith: output truncated, kept 19,800 of 45,000 chars (lines 1-66 and 347-500 \
             of 500); full output: artifact {ID}, read it with read_artifact]"
        )
    );
    // The head is exactly lines 1-66 and the tail 347-500.
    assert!(out.starts_with(&format!("{:>89}\n", 1)));
    assert!(out.contains(&format!("{:>89}\n[toolsmith", 66)));
    assert!(out.contains(&format!("]\n{:>89}\n", 347)));
}

#[test]
fn head_only_and_tail_only_put_the_marker_at_the_cut() {
    let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    let head = fit(&text, 300, &TrimStyle::head_only());
    assert!(head.text().starts_with("line 1\n"));
    assert!(head.text().ends_with("full output not kept]"));
    let tail = fit(&text, 300, &TrimStyle::tail_only());
    assert!(tail.text().starts_with("[toolsmith: output truncated"));
    assert!(tail.text().ends_with("line 100\n"));
}

#[test]
fn a_paginated_cut_names_the_next_offset() {
    let text: String = (0..1_000).map(|i| format!("row {i}\n")).collect();
    let continuation = Continuation::from(FullOutput::NotKept).with_page_offset(Some(2_000));
    let trimmed = fit_with(&text, 400, &TrimStyle::head_only(), &continuation);
    let cut = trimmed.cut().unwrap();
    let kept = cut.head_lines().unwrap().last;
    assert_eq!(cut.next_offset, Some(2_000 + kept));
    assert!(
        trimmed
            .text()
            .contains(&format!("next page: offset={}; ", 2_000 + kept))
    );
    // The head ends with the line just before the one the next page starts at.
    assert!(
        trimmed
            .text()
            .contains(&format!("row {}\n[toolsmith", kept - 1))
    );
}

#[test]
fn nan_and_out_of_range_ratios_are_clamped() {
    assert_eq!(TrimStyle::head_tail(f64::NAN).head_ratio(), 0.3);
    assert_eq!(TrimStyle::head_tail(-1.0).head_ratio(), 0.0);
    assert_eq!(TrimStyle::head_tail(7.0).head_ratio(), 1.0);
}

fn capped_full_of<'a>(which: u8, reason: &'a str, omitted: u64) -> FullOutput<'a> {
    match which {
        3 => FullOutput::StoredCapped {
            id: ID,
            reader: "read_artifact",
            omitted_bytes: omitted,
        },
        other => full_of(other, reason),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    /// Every marker `fit` writes reads back, by the one parser, as the figures of its cut.
    #[test]
    fn markers_round_trip_through_the_parser(
        text in prop_oneof![text_strategy(), output_strategy()],
        allowance in 0usize..1_500,
        style in any_style_strategy(),
        which in 0u8..4,
        reason in "\\PC{0,200}",
        omitted in 0u64..u64::from(u32::MAX),
        page_offset in prop_oneof![3 => Just(None), 1 => (0usize..100_000).prop_map(Some)],
    ) {
        let full = capped_full_of(which, &reason, omitted);
        let continuation = Continuation::from(full).with_page_offset(page_offset);
        let trimmed = fit_with(&text, allowance, &style, &continuation);
        let Some(cut) = trimmed.cut() else { return Ok(()) };
        let Some(marker) = toolsmith::trim::find_marker(trimmed.text()) else {
            // Only the tiny tiers write no full marker.
            prop_assert!(!trimmed.text().contains("[toolsmith:"), "{}", trimmed.text());
            return Ok(());
        };
        prop_assert_eq!(marker.kept, cut.kept_chars);
        prop_assert_eq!(marker.total, cut.original_chars);
        prop_assert_eq!(marker.unit.as_str(), "chars");
        prop_assert_eq!(marker.lines, Some(cut.original_lines));
        prop_assert_eq!(marker.mid_line, cut.mid_line);
        prop_assert_eq!(marker.head_line_chars, cut.head_line_chars);
        prop_assert_eq!(marker.tail_line_chars, cut.tail_line_chars);
        prop_assert_eq!(marker.next_offset, cut.next_offset);
        prop_assert_eq!(&marker.spans, &cut.spans);
        prop_assert_eq!(marker.folded_lines, cut.folded_lines);
        prop_assert_eq!(marker.escapes_removed, cut.escapes_removed);
        prop_assert_eq!(marker.redraws_removed, cut.redraws_removed);
        prop_assert_eq!(marker.condensed, cut.left_out_lines() == 0 && !cut.mid_line);
        let expected = match full {
            FullOutput::NotKept => MarkedFull::NotKept,
            FullOutput::Stored { id, reader } => MarkedFull::Stored {
                id: id.to_owned(),
                reader: reader.to_owned(),
                omitted_bytes: None,
            },
            FullOutput::StoredCapped { id, reader, omitted_bytes } => MarkedFull::Stored {
                id: id.to_owned(),
                reader: reader.to_owned(),
                omitted_bytes: Some(omitted_bytes),
            },
            FullOutput::Failed { reason } => {
                let mut shown: String = reason
                    .chars()
                    .take(120)
                    .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
                    .collect();
                if reason.chars().count() > 120 {
                    shown.push('…');
                }
                MarkedFull::Failed { reason: shown }
            }
            _ => unreachable!("every kind of full output is generated"),
        };
        prop_assert_eq!(marker.full, expected);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    /// A cut that keeps what matters holds the contract too: within the allowance, whole chars,
    /// a text that fits untouched, and the unchanged head and tail it states are the input's.
    #[test]
    fn keeping_what_matters_keeps_the_contract(
        text in prop_oneof![text_strategy(), output_strategy()],
        allowance in prop_oneof![0usize..40, 0usize..600, 0usize..5_000],
        style in style_strategy(),
        which in full_strategy(),
        page_offset in prop_oneof![3 => Just(None), 1 => (0usize..100_000).prop_map(Some)],
    ) {
        let style = style.keeping_what_matters();
        let full = full_of(which, "disk full");
        let continuation = Continuation::from(full).with_page_offset(page_offset);
        let trimmed = fit_with(&text, allowance, &style, &continuation);
        let out = trimmed.text();
        let chars = text.chars().count();
        let lines = line_count(&text);
        let fits = chars <= allowance && style.max_lines().is_none_or(|m| lines <= m);
        if fits {
            prop_assert_eq!(out, text.as_str());
            prop_assert!(!trimmed.is_trimmed());
        } else {
            prop_assert!(out.chars().count() <= allowance, "{} > {allowance}: {out:?}", out.chars().count());
            let cut = trimmed.cut().unwrap();
            prop_assert_eq!(cut.original_chars, chars);
            prop_assert_eq!(cut.original_lines, lines);
            prop_assert!(out.starts_with(&text[..cut.head_bytes]));
            prop_assert!(out.ends_with(&text[text.len() - cut.tail_bytes..]));
            let mut previous = 0;
            for span in &cut.spans {
                prop_assert!(span.first > previous && span.first <= span.last && span.last <= lines, "{:?}", cut.spans);
                previous = span.last;
            }
            if let Some(max) = style.max_lines() {
                // The marker, the summary of what it leaves out, and a gap line between spans.
                prop_assert!(line_count(out) <= max + 2 + cut.spans.len(), "{out:?}");
            }
        }
    }
}
