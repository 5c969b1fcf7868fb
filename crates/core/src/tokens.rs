//! Counting tokens in text, and caps in tokens.
//!
//! Budgets are kept in chars; tokens appear where a model or a provider speaks in them (the
//! pre-validation error, context usage, and a cap in tokens: [`TokenCap`]). The estimate is a
//! quarter of the chars, rounded up, which is close for English prose and conservative for
//! code; with the `tiktoken` feature, [`O200k`] counts a model's real tokens.
//!
//! A cap in tokens is held by cutting in chars: the text is measured (counted only until it is
//! over the cap), cut at the chars its counted part suggests, and what is sent counted; if that
//! is still over, the cut is made again, smaller ([`TokenCap::hold`]). Nothing but the text that
//! decides a cut and the text sent is counted.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::trim::{Continuation, Cut};

/// Estimates how many tokens a text costs.
pub trait TokenCounter: Send + Sync + fmt::Debug {
    /// Tokens in `text`.
    fn count(&self, text: &str) -> usize {
        self.count_chars(text.chars().count())
    }

    /// Tokens in a text of `chars` chars, when only its size is known.
    fn count_chars(&self, chars: usize) -> usize;

    /// Chars that cost about `tokens` tokens (the inverse, for turning a token cap into an
    /// allowance).
    fn chars_for(&self, tokens: usize) -> usize;

    /// Counts `text` only as far as it takes to know whether it is within `max` tokens: its
    /// tokens when it is, else the chars and tokens of the part counted before it went over.
    /// The default counts pieces split at line ends, of about the cap's size (1 to 16 KiB),
    /// and adds them up.
    fn count_within(&self, text: &str, max: usize) -> Within {
        let (mut chars, mut tokens) = (0, 0);
        for piece in pieces(text, max.saturating_mul(2).clamp(1024, 16 * 1024)) {
            chars += piece.chars().count();
            tokens += self.count(piece);
            if tokens > max {
                return Within::Over { chars, tokens };
            }
        }
        Within::Fits(tokens)
    }
}

/// What [`TokenCounter::count_within`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Within {
    /// The text is within the cap: its tokens.
    Fits(usize),
    /// The text is over the cap; the part counted before it went over: its chars and tokens.
    Over {
        /// Chars counted.
        chars: usize,
        /// Their tokens (more than the cap).
        tokens: usize,
    },
}

/// `text` in pieces of at most `max_bytes` (at least 4), each ending at a line end where one
/// falls in its span, else at a char boundary.
pub(crate) fn pieces(text: &str, max_bytes: usize) -> impl Iterator<Item = &str> {
    let max_bytes = max_bytes.max(4);
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = if rest.len() <= max_bytes {
            rest.len()
        } else {
            crate::trim::bytes::after_last_break(rest.as_bytes(), 0, max_bytes).unwrap_or_else(
                || {
                    // The char boundary at or before `max_bytes` (a char is at most 4 bytes).
                    (max_bytes - 3..=max_bytes)
                        .rev()
                        .find(|&at| rest.is_char_boundary(at))
                        .unwrap_or(max_bytes)
                },
            )
        };
        let (piece, after) = rest.split_at(end);
        rest = after;
        Some(piece)
    })
}

/// A fixed number of chars per token: 4 by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CharsPerToken(pub usize);

impl Default for CharsPerToken {
    fn default() -> Self {
        CharsPerToken(4)
    }
}

impl TokenCounter for CharsPerToken {
    fn count_within(&self, text: &str, max: usize) -> Within {
        let chars = text.chars().count();
        match self.count_chars(chars) {
            tokens if tokens <= max => Within::Fits(tokens),
            tokens => Within::Over { chars, tokens },
        }
    }

    fn count_chars(&self, chars: usize) -> usize {
        chars.div_ceil(self.0.max(1))
    }

    fn chars_for(&self, tokens: usize) -> usize {
        tokens.saturating_mul(self.0.max(1))
    }
}

/// OpenAI's o200k BPE (GPT-4o, GPT-4.1, o-series): exact token counts for those models, a close
/// estimate for others. Behind the `tiktoken` feature: GitHub's `bpe` encoder (the same counts
/// as OpenAI's tiktoken, in time linear in the text, a text built to be slow to encode
/// included), its tables embedded in the binary.
///
/// In a debug build the tables are built and read by unoptimized code: about 26 s in the build
/// script, 0.84 s on first use in each process. A crate's own `Cargo.toml` can optimize the three
/// crates that do that work in its dev profile (14 s and 0.09 s; this workspace does so):
///
/// ```toml
/// [profile.dev.package.bpe-openai]
/// opt-level = 3
/// [profile.dev.package.bpe]
/// opt-level = 3
/// [profile.dev.package.aneubeck-daachorse]
/// opt-level = 3
/// ```
#[cfg(feature = "tiktoken")]
pub struct O200k {
    tokenizer: &'static bpe_openai::Tokenizer,
}

#[cfg(feature = "tiktoken")]
impl O200k {
    /// The encoder (its tables read on first use, once per process: some tens of
    /// milliseconds where bpe is optimized, see above).
    ///
    /// # Errors
    ///
    /// None today; the signature leaves room for tables read at run time.
    pub fn new() -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        Ok(O200k {
            tokenizer: bpe_openai::o200k_base(),
        })
    }
}

#[cfg(feature = "tiktoken")]
impl fmt::Debug for O200k {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("O200k")
    }
}

#[cfg(feature = "tiktoken")]
impl TokenCounter for O200k {
    fn count(&self, text: &str) -> usize {
        self.tokenizer.count(text)
    }

    fn count_chars(&self, chars: usize) -> usize {
        CharsPerToken::default().count_chars(chars)
    }

    fn chars_for(&self, tokens: usize) -> usize {
        CharsPerToken::default().chars_for(tokens)
    }
}

/// The counter a cap in tokens uses unless told otherwise: [`O200k`] where the `tiktoken`
/// feature is on (built once per process, on first use), else the estimate,
/// [`CharsPerToken`]`(4)`.
pub fn default_counter() -> Arc<dyn TokenCounter> {
    static COUNTER: OnceLock<Arc<dyn TokenCounter>> = OnceLock::new();
    Arc::clone(COUNTER.get_or_init(|| {
        #[cfg(feature = "tiktoken")]
        match O200k::new() {
            Ok(counter) => return Arc::new(counter),
            Err(error) => {
                tracing::warn!(%error, "the o200k tables could not be read; tokens are estimated")
            }
        }
        Arc::new(CharsPerToken::default())
    }))
}

/// A cap on a result in tokens, as a counter counts them: what a model is billed and bounded
/// by, where a cap in chars is only close to it.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::tokens::{CharsPerToken, TokenCap, Within};
/// use toolsmith::trim::{self, FullOutput, TrimStyle};
///
/// let log: String = (1..=2_000).map(|i| format!("request {i} served\n")).collect();
/// let cap = TokenCap::new(500, Arc::new(CharsPerToken(4)));
/// let Within::Over { chars, tokens } = cap.measure(&log) else { unreachable!() };
/// let continuation = FullOutput::NotKept.into();
/// let held = cap.hold(usize::MAX, Some((chars, tokens)), &continuation, |room, continuation| {
///     trim::fit_with(&log, room, &TrimStyle::default(), continuation).into_parts()
/// });
/// assert!(held.tokens <= 500);
/// assert!(held.text.contains("cut to a 500-token cap"), "the marker names the cap");
/// ```
#[derive(Debug, Clone)]
pub struct TokenCap {
    max: usize,
    counter: Arc<dyn TokenCounter>,
}

/// What [`TokenCap::hold`] sent: the text, its cut (if any) and its tokens.
#[derive(Debug)]
#[non_exhaustive]
pub struct Held<'t> {
    /// The text sent.
    pub text: Cow<'t, str>,
    /// What the cut kept and dropped, when the text was cut.
    pub cut: Option<Cut>,
    /// The tokens of `text`, counted.
    pub tokens: usize,
    /// Whether the cap in tokens made the cut (its marker names the cap), rather than the chars
    /// allowed alone.
    pub by_tokens: bool,
}

impl TokenCap {
    /// A cap of `max` tokens counted by `counter`.
    pub fn new(max: usize, counter: Arc<dyn TokenCounter>) -> Self {
        TokenCap { max, counter }
    }

    /// A cap of `max` tokens counted by [`default_counter`].
    pub fn with_default_counter(max: usize) -> Self {
        TokenCap::new(max, default_counter())
    }

    /// The most tokens a result may have.
    pub fn max(&self) -> usize {
        self.max
    }

    /// What counts the tokens.
    pub fn counter(&self) -> &Arc<dyn TokenCounter> {
        &self.counter
    }

    /// Whether `text` is within the cap, counting no further than it takes to know.
    pub fn measure(&self, text: &str) -> Within {
        // A token is at least a byte: a text of no more bytes than the cap is within it.
        if text.len() <= self.max {
            return Within::Fits(self.counter.count(text));
        }
        self.counter.count_within(text, self.max)
    }

    /// The chars to cut a text over the cap to first: what its counted part says the cap holds,
    /// less room for the marker's tokens; `over` is [`Within::Over`]'s figures, if measured.
    pub fn first_allowance(&self, allowance: usize, over: Option<(usize, usize)>) -> usize {
        // A marker costs some 60 tokens; its digits and punctuation are dense.
        let room = self.max.saturating_sub(60.min(self.max / 4));
        let estimate = match over {
            Some((chars, tokens)) if tokens > 0 => scale(chars, room, tokens),
            _ => self.counter.chars_for(room),
        };
        allowance.min(estimate)
    }

    /// The chars to cut to next, after a cut at `allowance` chars (at most `ceiling`, the chars
    /// allowed anyway) sent `sent` tokens; `None` when the best cut so far is the one to send.
    ///
    /// Over the cap: smaller, scaled down by the overshoot for the first `attempt`s, then halved
    /// and at most a quarter of the cap (at most one token a byte: within the cap by then), so
    /// the cuts end. Within it but under nine tenths of it, for the first attempts: larger,
    /// scaled up by the room left (the counted part said less than the text holds), up to the
    /// ceiling — so a cap in tokens is spent as a cap in chars is.
    pub fn next_allowance(
        &self,
        allowance: usize,
        sent: usize,
        attempt: usize,
        ceiling: usize,
    ) -> Option<usize> {
        if sent > self.max {
            if allowance == 0 {
                return None;
            }
            let next = if attempt < 2 {
                scale(allowance, self.max.saturating_mul(19) / 20, sent)
            } else {
                (self.max / 4).min(allowance / 2)
            };
            return Some(next.min(allowance - 1));
        }
        if attempt >= 3 || sent.saturating_mul(10) >= self.max.saturating_mul(9) {
            return None;
        }
        let grown = scale(allowance, self.max.saturating_mul(19) / 20, sent.max(1)).min(ceiling);
        (grown > allowance).then_some(grown)
    }

    /// Holds a text to the cap: `cut(chars, continuation)` cuts it to at most `chars` chars (a
    /// trim of the text), first to `allowance` (the chars it may have anyway) or, for a text
    /// over the cap, to what the cap holds; then smaller while what it gives counts more than
    /// the cap, or larger while it spends less than nine tenths of it ([`next_allowance`]). The
    /// largest cut within the cap is sent. `over`: the figures [`measure`](Self::measure) gave
    /// of a text over the cap ([`Within::Over`]); `None` for a text within it, or not at hand to
    /// measure. The marker of a cut the cap made names the cap in tokens.
    ///
    /// [`next_allowance`]: Self::next_allowance
    pub fn hold<'t>(
        &self,
        allowance: usize,
        over: Option<(usize, usize)>,
        continuation: &Continuation<'_>,
        mut cut: impl FnMut(usize, &Continuation<'_>) -> (Cow<'t, str>, Option<Cut>),
    ) -> Held<'t> {
        let capped = continuation.with_token_cap(Some(self.max));
        let mut tries = Tries::new(self, allowance, over);
        loop {
            let by_tokens = tries.by_tokens();
            let (text, trimmed) = cut(
                tries.allowance(),
                if by_tokens { &capped } else { continuation },
            );
            let tokens = self.counter.count(&text);
            let held = Held {
                text,
                cut: trimmed,
                tokens,
                by_tokens,
            };
            if let Some((held, _)) = tries.sent(held, tokens) {
                return held;
            }
        }
    }
}

/// The cuts of one text held to a cap in tokens: the one rule of which to make next and which
/// to send ([`TokenCap::hold`], and the proxy's fitting of a whole answer). Each cut is made at
/// [`allowance`](Self::allowance) chars, its marker naming the cap when
/// [`by_tokens`](Self::by_tokens); [`sent`](Self::sent) takes what it gave and its tokens and
/// says whether that is the end: the largest cut within the cap, or (when no cut fits, which a
/// counter of more than a token a byte can cause) the last.
#[derive(Debug)]
pub(crate) struct Tries<'c, T> {
    cap: &'c TokenCap,
    ceiling: usize,
    allowance: usize,
    by_tokens: bool,
    attempt: usize,
    best: Option<(T, usize)>,
}

impl<'c, T> Tries<'c, T> {
    /// The cuts of a text that may have `allowance` chars; `over`: [`Within::Over`]'s figures,
    /// when the text was measured over the cap (its first cut is then to what the cap holds).
    pub(crate) fn new(cap: &'c TokenCap, allowance: usize, over: Option<(usize, usize)>) -> Self {
        Tries {
            cap,
            ceiling: allowance,
            allowance: if over.is_some() {
                cap.first_allowance(allowance, over)
            } else {
                allowance
            },
            by_tokens: over.is_some(),
            attempt: 0,
            best: None,
        }
    }

    /// The chars the next cut may have.
    pub(crate) fn allowance(&self) -> usize {
        self.allowance
    }

    /// Whether the cap in tokens makes the next cut (its marker names the cap).
    pub(crate) fn by_tokens(&self) -> bool {
        self.by_tokens
    }

    /// What the last cut gave, and its tokens: what to send, when the cuts are done.
    pub(crate) fn sent(&mut self, cut: T, tokens: usize) -> Option<(T, usize)> {
        let next = self
            .cap
            .next_allowance(self.allowance, tokens, self.attempt, self.ceiling);
        if tokens <= self.cap.max() {
            self.best = Some((cut, tokens));
        } else if let Some(best) = self.best.take() {
            // Grown past the cap: the last cut within it is sent.
            return Some(best);
        } else if next.is_none() {
            return Some((cut, tokens));
        }
        match next {
            Some(next) => {
                self.allowance = next;
                self.attempt += 1;
                self.by_tokens = true;
                None
            }
            None => self.best.take(),
        }
    }
}

/// `value × numerator / denominator`, rounded down, without overflow.
fn scale(value: usize, numerator: usize, denominator: usize) -> usize {
    let scaled = value as u128 * numerator as u128 / denominator.max(1) as u128;
    usize::try_from(scaled).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quarter_rounded_up() {
        let counter = CharsPerToken::default();
        assert_eq!(counter.count(""), 0);
        assert_eq!(counter.count("abcd"), 1);
        assert_eq!(counter.count("abcde"), 2);
        assert_eq!(counter.count_chars(299_316), 74_829);
        assert_eq!(counter.chars_for(20_000), 80_000);
    }

    use proptest::prelude::*;

    use crate::trim::{self, FullOutput, TrimStyle};

    fn held(text: &str, cap: &TokenCap, allowance: usize) -> Held<'static> {
        let over = match cap.measure(text) {
            Within::Fits(_) => None,
            Within::Over { chars, tokens } => Some((chars, tokens)),
        };
        let continuation = Continuation::from(FullOutput::NotKept);
        let held = cap.hold(allowance, over, &continuation, |room, continuation| {
            trim::fit_with(text, room, &TrimStyle::default(), continuation).into_parts()
        });
        Held {
            text: Cow::Owned(held.text.into_owned()),
            ..held
        }
    }

    #[test]
    fn a_text_within_the_cap_is_sent_whole_and_counted() {
        let cap = TokenCap::new(100, Arc::new(CharsPerToken(4)));
        let text = "a short answer\n";
        let held = held(text, &cap, 1_000);
        assert_eq!(held.text, text);
        assert!(held.cut.is_none() && !held.by_tokens);
        assert_eq!(held.tokens, 4);
    }

    #[test]
    fn a_text_within_the_chars_but_over_the_tokens_is_cut_to_the_tokens() {
        // One token a char (as dense scripts can be): 3,000 chars within 80,000 chars allowed,
        // over a 500-token cap.
        let cap = TokenCap::new(500, Arc::new(CharsPerToken(1)));
        let text: String = (0..300).map(|i| format!("line {i:04}\n")).collect();
        let held = held(&text, &cap, 80_000);
        assert!(held.tokens <= 500, "{}", held.tokens);
        assert!(held.by_tokens);
        let marker = trim::find_marker(&held.text).expect("a marker");
        assert_eq!(marker.token_cap, Some(500));
        // The allowance was spent: not cut to a fraction of what the cap holds.
        assert!(held.tokens > 400, "{}", held.tokens);
    }

    #[test]
    fn a_cut_by_the_chars_alone_does_not_name_the_cap() {
        let cap = TokenCap::new(100_000, Arc::new(CharsPerToken(4)));
        let text: String = (0..3_000)
            .map(|i| format!("line {i} of the log\n"))
            .collect();
        let held = held(&text, &cap, 2_000);
        assert!(held.cut.is_some() && !held.by_tokens);
        assert_eq!(trim::find_marker(&held.text).unwrap().token_cap, None);
    }

    #[test]
    fn a_huge_text_is_counted_only_until_it_is_over() {
        /// Counts every piece it is asked to count.
        #[derive(Debug, Default)]
        struct Counting(std::sync::atomic::AtomicUsize);
        impl TokenCounter for Counting {
            fn count(&self, text: &str) -> usize {
                self.0
                    .fetch_add(text.len(), std::sync::atomic::Ordering::Relaxed);
                text.len().div_ceil(4)
            }
            fn count_chars(&self, chars: usize) -> usize {
                chars.div_ceil(4)
            }
            fn chars_for(&self, tokens: usize) -> usize {
                tokens * 4
            }
        }
        let counter = Arc::new(Counting::default());
        let cap = TokenCap::new(1_000, counter.clone());
        let text = "0123456789abcdef\n".repeat(1 << 20);
        assert!(matches!(cap.measure(&text), Within::Over { .. }));
        let read = counter.0.load(std::sync::atomic::Ordering::Relaxed);
        assert!(read <= 32 * 1024, "{read} bytes counted of {}", text.len());
    }

    #[test]
    fn pieces_split_at_line_ends_and_char_boundaries() {
        let text = "ab\ncd\nefgh";
        assert_eq!(
            pieces(text, 5).collect::<Vec<_>>(),
            ["ab\n", "cd\n", "efgh"]
        );
        let wide = "é".repeat(10);
        for piece in pieces(&wide, 5) {
            assert!(piece.len() <= 5 && !piece.is_empty());
        }
        assert_eq!(pieces(&wide, 5).collect::<String>(), wide);
    }

    proptest! {
        /// For any text and any cap, what is sent counts at most the cap, by the counter that
        /// holds it: the cuts end, smaller each time, and the last is within.
        #[test]
        fn what_is_sent_is_within_the_cap(
            lines in proptest::collection::vec("[a-z0-9 é語]{0,120}", 0..400),
            max in 0usize..3_000,
            per in 1usize..6,
        ) {
            let text = lines.join("\n");
            let cap = TokenCap::new(max, Arc::new(CharsPerToken(per)));
            let held = held(&text, &cap, usize::MAX);
            prop_assert!(held.tokens <= max, "{} tokens against {max}", held.tokens);
            prop_assert_eq!(held.tokens, CharsPerToken(per).count(&held.text));
        }
    }

    #[cfg(feature = "tiktoken")]
    #[test]
    fn o200k_holds_a_cap_on_real_text() {
        let cap = TokenCap::new(700, Arc::new(O200k::new().unwrap()));
        let text: String = (0..5_000)
            .map(|i| {
                format!(
                    "2026-11-26T10:{:02}:{:02} worker-{} 処理完了 request_id={i:x}\n",
                    i % 60,
                    i % 59,
                    i % 7
                )
            })
            .collect();
        let held = held(&text, &cap, usize::MAX);
        assert!(held.tokens <= 700 && held.tokens > 500, "{}", held.tokens);
        assert_eq!(held.tokens, cap.counter().count(&held.text));
        assert_eq!(trim::find_marker(&held.text).unwrap().token_cap, Some(700));
    }

    /// A megabyte without a space (whose encoding grows with the square of its length in
    /// tiktoken's own merge loop) is counted whole, and measured only until it is over the cap.
    #[cfg(feature = "tiktoken")]
    #[test]
    fn o200k_counts_a_run_without_spaces() {
        let counter = O200k::new().unwrap();
        let run = "x".repeat(1 << 20);
        let whole = counter.count(&run);
        assert!(whole > 1_000 && whole < run.len(), "{whole}");
        let cap = TokenCap::new(2_000, Arc::new(counter));
        let Within::Over { chars, .. } = cap.measure(&run) else {
            panic!("a megabyte is over 2,000 tokens")
        };
        assert!(chars < 64 * 1024, "{chars} chars counted");
    }

    #[cfg(feature = "tiktoken")]
    #[test]
    fn o200k_counts_real_tokens() {
        let counter = O200k::new().unwrap();
        assert_eq!(counter.count(""), 0);
        assert_eq!(counter.count("hello world"), 2);
        let code = "fn main() { println!(\"hello\"); }";
        let tokens = counter.count(code);
        assert!(tokens > 5 && tokens < code.len(), "{tokens}");
    }
}
