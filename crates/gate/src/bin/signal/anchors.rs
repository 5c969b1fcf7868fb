//! The anchors: the result cuts of the agents our users already have, reimplemented each in a
//! few lines from its public source, so the gate measures ours beside theirs on the same corpus
//! and at the same chars.
//!
//! Each anchor is a function of the text and its own limit. At a budget of the gate, the limit is
//! what keeps the anchor's whole answer (its markers and notices too) within the budget's chars
//! ([`within`]); at its own default, the anchor runs as it ships.
//!
//! The two Python libraries that cut as we do (llmslim, tooltrim) run as they ship, pinned from
//! PyPI, through `scripts/anchors.py`; their answers come in as a file (see `main`).

/// One anchor: its name in the table, where its cut comes from, its own default limit, and the cut.
pub(crate) struct Anchor {
    pub(crate) name: &'static str,
    /// The public source the cut is read from: repository, file and commit, or the
    /// documentation where the source is not public.
    pub(crate) source: &'static str,
    /// The anchor's own limit, in its unit (bytes, chars or lines), as it ships.
    pub(crate) default: usize,
    pub(crate) cut: fn(&str, usize) -> String,
    /// Whether its limit counts lines: the largest that fits a budget is then searched for
    /// ([`within_lines`]), a limit in lines being no measure of chars.
    pub(crate) lines: bool,
}

impl Anchor {
    /// The anchor's answer at a budget of the gate: the largest limit whose answer fits it.
    pub(crate) fn within(&self, budget: usize, text: &str) -> String {
        if self.lines {
            within_lines(budget, self.cut, text)
        } else {
            within(budget, self.cut, text)
        }
    }
}

/// Every anchor reimplemented here, in the order of the table.
pub(crate) const ANCHORS: [Anchor; 6] = [
    Anchor {
        name: "codex",
        source: "openai/codex codex-rs/core/src/truncate.rs @ 020809453255 \
                 (format_output_for_model_body: 10 KiB, 256 lines)",
        default: 10 * 1024,
        cut: codex,
        lines: false,
    },
    Anchor {
        name: "opencode",
        source: "sst/opencode packages/opencode/src/tool/truncation.ts (Truncate.output, \
                 head: 2,000 lines, 50 KiB; the full output to a file)",
        default: 50 * 1024,
        cut: opencode,
        lines: false,
    },
    Anchor {
        name: "claude_code",
        source: "Claude Code's Bash tool, closed source: BASH_MAX_OUTPUT_LENGTH 30,000 chars, \
                 middle-truncated (its documentation; anthropics/claude-code#19901); the \
                 marker's wording is ours",
        default: 30_000,
        cut: claude_code,
        lines: false,
    },
    Anchor {
        name: "cline",
        source: "cline/cline src/hosts/vscode/terminal/VscodeTerminalManager.ts @ 4b6d016da06d \
                 (processOutput: over terminalOutputLineLimit, 500 lines, the first and the last \
                 half of it around `... (output truncated) ...`)",
        default: 500,
        cut: cline,
        lines: true,
    },
    Anchor {
        name: "zed",
        source: "zed-industries/zed crates/assistant_tools/src/terminal_tool.rs @ 055f45e4b31a \
                 (process_content: the first 16 KiB, to the last whole line)",
        default: 16 * 1024,
        cut: zed,
        lines: false,
    },
    Anchor {
        name: "inspect",
        source: "UKGovernmentBEIS/inspect_ai src/inspect_ai/model/_call_tools.py @ 0169e9f64ef0 \
                 (truncate_tool_output: max_tool_output 16 KiB, the first bytes)",
        default: 16 * 1024,
        cut: inspect,
        lines: false,
    },
];

/// The anchor's answer with the largest limit whose whole answer is at most `budget` chars.
pub(crate) fn within(budget: usize, cut: fn(&str, usize) -> String, text: &str) -> String {
    let mut limit = budget;
    loop {
        let answer = cut(text, limit);
        let chars = answer.chars().count();
        if chars <= budget || limit == 0 {
            return answer;
        }
        limit = limit.saturating_sub(chars - budget);
    }
}

/// The answer of an anchor whose limit counts lines, at the largest limit whose answer is at
/// most `budget` chars (an answer grows with its limit: searched by halves).
pub(crate) fn within_lines(budget: usize, cut: fn(&str, usize) -> String, text: &str) -> String {
    let fits = |limit: usize| cut(text, limit).chars().count() <= budget;
    let lines = text.lines().count();
    if fits(lines) {
        return cut(text, lines);
    }
    let (mut fitting, mut over) = (0, lines);
    while fitting + 1 < over {
        let middle = fitting + (over - fitting) / 2;
        if fits(middle) {
            fitting = middle;
        } else {
            over = middle;
        }
    }
    cut(text, fitting)
}

/// The longest prefix of `text` of at most `bytes` bytes, on a char boundary.
fn head_bytes(text: &str, bytes: usize) -> &str {
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The longest suffix of `text` of at most `bytes` bytes, on a char boundary.
fn tail_bytes(text: &str, bytes: usize) -> &str {
    let mut start = text.len().saturating_sub(bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// Codex CLI: the first 128 lines within half the bytes, a line saying how many were omitted,
/// the last 128 lines within what remains; the total of lines above it all.
fn codex(content: &str, limit_bytes: usize) -> String {
    const LIMIT_LINES: usize = 256;
    let total_lines = content.lines().count();
    if content.len() <= limit_bytes && total_lines <= LIMIT_LINES {
        return content.to_owned();
    }
    let segments: Vec<&str> = content.split_inclusive('\n').collect();
    let head_take = (LIMIT_LINES / 2).min(segments.len());
    let tail_take = (LIMIT_LINES - LIMIT_LINES / 2).min(segments.len() - head_take);
    let omitted = segments.len() - head_take - tail_take;
    let head_end: usize = segments[..head_take].iter().map(|s| s.len()).sum();
    let tail_len: usize = segments[segments.len() - tail_take..]
        .iter()
        .map(|s| s.len())
        .sum();
    let marker = if omitted > 0 {
        format!("\n[... omitted {omitted} of {total_lines} lines ...]\n\n")
    } else if content.len() > limit_bytes {
        format!("\n[... output truncated to fit {limit_bytes} bytes ...]\n\n")
    } else {
        String::new()
    };
    let head_budget = (limit_bytes / 2).min(limit_bytes.saturating_sub(marker.len()));
    let mut result = head_bytes(&content[..head_end], head_budget).to_owned();
    result.push_str(&marker);
    let remaining = limit_bytes.saturating_sub(result.len());
    result.push_str(tail_bytes(&content[content.len() - tail_len..], remaining));
    format!("Total output lines: {total_lines}\n\n{result}")
}

/// opencode: whole lines from the head, up to 2,000 of them and the byte limit, then how much
/// was cut and where the full output was saved.
fn opencode(text: &str, max_bytes: usize) -> String {
    const MAX_LINES: usize = 2_000;
    let lines: Vec<&str> = text.split('\n').collect();
    if lines.len() <= MAX_LINES && text.len() <= max_bytes {
        return text.to_owned();
    }
    let (mut kept, mut bytes, mut hit_bytes) = (Vec::new(), 0, false);
    for (i, line) in lines.iter().take(MAX_LINES).enumerate() {
        let size = line.len() + usize::from(i > 0);
        if bytes + size > max_bytes {
            hit_bytes = true;
            break;
        }
        kept.push(*line);
        bytes += size;
    }
    let (removed, unit) = if hit_bytes {
        (text.len() - bytes, "bytes")
    } else {
        (lines.len() - kept.len(), "lines")
    };
    format!(
        "{}\n\n...{removed} {unit} truncated...\n\nThe tool call succeeded but the output was \
         truncated. Full output saved to: /home/user/.local/share/opencode/tool-output/tool_0\n\
         Use the Task tool to have explore agent process this file with Grep and Read (with \
         offset/limit). Do NOT read the full file yourself - delegate to save context.",
        kept.join("\n")
    )
}

/// Claude Code's Bash tool: the first and the last half of the chars, the middle cut.
fn claude_code(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_owned();
    }
    let half = max_chars / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(total - (max_chars - half)).collect();
    let cut_lines = text.lines().count() - head.lines().count() - tail.lines().count();
    format!("{head}\n\n... [{cut_lines} lines truncated] ...\n\n{tail}")
}

/// Zed's terminal tool: the first bytes to the last whole line, fenced, with how many.
fn zed(content: &str, limit: usize) -> String {
    // Its headless path keeps whitespace and drops the other control characters.
    let content: String = content
        .chars()
        .filter(|c| c.is_ascii_whitespace() || !c.is_ascii_control())
        .collect();
    let truncate = content.len() > limit;
    let kept = if truncate {
        let head = head_bytes(&content, limit);
        &head[..head.rfind('\n').unwrap_or(head.len())]
    } else {
        &content[..]
    };
    let fenced = format!("```\n{}\n```", kept.trim());
    if truncate {
        format!(
            "Command output too long. The first {} bytes:\n\n{fenced}",
            fenced.len()
        )
    } else {
        fenced
    }
}

/// Cline: over the line limit, the first and the last half of it around a notice; the whole
/// trimmed.
fn cline(text: &str, limit: usize) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    if lines.len() > limit {
        let half = limit / 2;
        let start = lines[..half].join("\n");
        let end = lines[lines.len() - half..].join("\n");
        return format!("{start}\n... (output truncated) ...\n{end}")
            .trim()
            .to_owned();
    }
    lines.join("\n").trim().to_owned()
}

/// Inspect: the first bytes of the output, in its notice.
fn inspect(output: &str, max_bytes: usize) -> String {
    if output.len() <= max_bytes {
        return output.to_owned();
    }
    format!(
        "The output of your call to run was too long to be displayed.\nHere is a truncated \
         version:\n<START_TOOL_OUTPUT>\n{}\n<END_TOOL_OUTPUT>",
        head_bytes(output, max_bytes)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(lines: usize) -> String {
        (1..=lines).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn every_anchor_fits_the_budget_and_leaves_a_short_text_whole() {
        let long = numbered(5_000);
        for anchor in &ANCHORS {
            for budget in [1_000, 2_000, 4_000, 10_000] {
                let answer = anchor.within(budget, &long);
                assert!(
                    answer.chars().count() <= budget,
                    "{} at {budget}: {} chars",
                    anchor.name,
                    answer.chars().count()
                );
                assert!(
                    answer.contains("line 1\n"),
                    "{} keeps the head",
                    anchor.name
                );
            }
            let short = "one\ntwo\n";
            assert!(
                (anchor.cut)(short, anchor.default).contains("one\ntwo"),
                "{}",
                anchor.name
            );
        }
    }

    #[test]
    fn the_head_and_tail_anchors_keep_the_last_line() {
        let long = numbered(5_000);
        for cut in [codex as fn(&str, usize) -> String, claude_code] {
            assert!(within(2_000, cut, &long).contains("line 5000"));
        }
        let cline = within_lines(2_000, cline, &long);
        assert!(cline.contains("line 5000") && cline.contains("... (output truncated) ..."));
        // The largest limit that fits: one more line each side would not.
        assert!(cline.chars().count() > 2_000 - 2 * "line 5000\n".len());
        assert!(!within(2_000, opencode, &long).contains("line 5000"));
        assert!(codex(&long, 10 * 1024).starts_with("Total output lines: 5000\n\n"));
    }
}
