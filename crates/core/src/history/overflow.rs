//! Context overflow: recognising the providers' errors, and recovering in three levels.

use std::fmt;

use super::message::{Block, Content, Message, ResultContent, Role};
use super::pairing::{RepairReport, repair};
use crate::budget::BudgetPolicy;
use crate::tokens::CharsPerToken;
use crate::trim::{self, TrimStyle};

/// Substrings (lower case) of the context-overflow errors of the providers toolsmith knows,
/// each from an error a provider or server returned.
const OVERFLOW_PATTERNS: &[&str] = &[
    // Anthropic
    "prompt is too long",
    "input length and `max_tokens` exceed context limit",
    "exceed context limit",
    // OpenAI, Azure OpenAI, DeepSeek, OpenRouter, Groq
    "context_length_exceeded",
    "maximum context length",
    "reduce the length of the messages",
    "string too long. expected a string with maximum length",
    // Gemini
    "exceeds the maximum number of tokens allowed",
    // Bedrock
    "input is too long for requested model",
    "too many input tokens",
    "too many total text bytes",
    // Mistral
    "too large for model with",
    // xAI: "This model's maximum prompt length is 131072 but the request contains … tokens."
    "maximum prompt length is",
    // Cohere: "too many tokens: total number of tokens (prompt and prediction) cannot exceed …"
    "total number of tokens (prompt and prediction) cannot exceed",
    // Hugging Face TGI, Together: "`inputs` tokens + `max_new_tokens` must be <= 8192"
    "`inputs` tokens + `max_new_tokens` must be",
    "`inputs` must have less than",
    // Ollama
    "exceeds the context length",
    "context length exceeded",
    "exceeded max context length",
    // llama.cpp server
    "exceeds the available context size",
    "context size exceeded",
    "context size has been exceeded",
    // LM Studio: "n_keep (15028) >= n_ctx (7424)"; "Trying to keep the first … tokens when
    // context the overflows"
    ">= n_ctx",
    "when context the overflows",
    // vLLM
    "is longer than the maximum model length",
    "maximum model length",
    // GitHub Copilot's API: "prompt token count of 93854 exceeds the limit of 90000"
    "prompt token count of",
    // DashScope (Qwen): "Range of input length should be [1, 204800]"
    "range of input length should be",
    // Generic wordings
    "input too long",
    "exceeds the context window",
    "context window exceeded",
    "context window is full",
];

/// Substrings of errors that say `max_tokens` alone (the output) is more than the model can
/// produce: lowering `max_tokens` fixes them, compacting the history does not.
const OUTPUT_LIMIT_PATTERNS: &[&str] = &[
    // Anthropic: "max_tokens: 128000 > 64000, which is the maximum allowed number of output
    // tokens for …"
    "maximum allowed number of output tokens",
    // OpenAI: "max_tokens is too large: 100000. This model supports at most 16384 completion
    // tokens"
    "max_tokens is too large",
    "max_completion_tokens is too large",
    "completion tokens, whereas you provided",
    // Gemini, Vertex: "The max_output_tokens … is out of range"
    "max_output_tokens",
    "maximum number of output tokens",
    // Bedrock: "The maximum tokens you requested exceeds the model limit of 4096"
    "maximum tokens you requested exceeds",
    // Groq: "`max_tokens` must be less than or equal to `8192`, the maximum value for
    // `max_tokens` is less than the `context_window` for this model"
    "the maximum value for `max_tokens`",
    // DeepSeek: "Invalid max_tokens value, the valid range of max_tokens is [1, 8192]"
    "valid range of max_tokens",
];

/// Wordings of rate limits, which mention tokens and limits but are neither an overflow nor an
/// output limit: waiting helps, a shorter request does not.
const RATE_LIMIT_PATTERNS: &[&str] = &[
    "rate limit",
    "rate_limit",
    "ratelimit",
    "tokens per min",
    "per minute",
    "per day",
    "per hour",
    "(tpm)",
    "(tpd)",
    "(rpm)",
    "quota",
    "too many requests",
    // Gemini and Vertex: "Resource has been exhausted (e.g. check quota)."
    "resource has been exhausted",
    "resource exhausted",
];

/// What a provider's error means for an agent: one of three verdicts, each with its own
/// recovery.
///
/// | verdict | what to do |
/// |---|---|
/// | [`ContextOverflow`](Self::ContextOverflow) | compact the history ([`recover`]) and retry |
/// | [`OutputLimit`](Self::OutputLimit) | lower `max_tokens` ([`retry_max_tokens`](Self::retry_max_tokens)) and retry once, the history untouched |
/// | [`Other`](Self::Other) | not ours: surface the error as it came (a rate limit, a key without credit, a bad parameter) |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProviderErrorKind {
    /// The request is too long for the model's context window: compact the history (see
    /// [`recover`]).
    ContextOverflow,
    /// The output the request asked for (`max_tokens`) is over a limit — the model's, or what
    /// the key can pay for: lower it, do not compact.
    OutputLimit {
        /// The most output tokens the error says a request may ask for, where its wording
        /// gives the number (`… the maximum allowed number of output tokens` → 64000, `can only
        /// afford 3919` → 3919, a window less the input it reports).
        limit: Option<u64>,
    },
    /// Anything else: rate limits, credit, authentication, content policy, a bad parameter.
    /// Neither compaction nor a smaller `max_tokens` helps.
    Other,
}

impl ProviderErrorKind {
    /// The `max_tokens` to retry with after an [`OutputLimit`](Self::OutputLimit): the number the
    /// error stated, else `model_limit` (the model's known output limit), when it is below what
    /// was `requested`; `None` when no retry can help (another verdict, or no lower number
    /// known). Retry once: the history is not to be touched.
    ///
    /// ```
    /// use toolsmith::history::{ProviderErrorKind, classify_provider_error};
    ///
    /// let error = "max_tokens: 200000 > 64000, which is the maximum allowed number of output \
    ///              tokens for claude-opus-4-20250514";
    /// let verdict = classify_provider_error(Some(400), error);
    /// assert_eq!(verdict, ProviderErrorKind::OutputLimit { limit: Some(64_000) });
    /// assert_eq!(verdict.retry_max_tokens(200_000, None), Some(64_000));
    /// ```
    #[must_use]
    pub fn retry_max_tokens(&self, requested: u64, model_limit: Option<u64>) -> Option<u64> {
        let ProviderErrorKind::OutputLimit { limit } = self else {
            return None;
        };
        limit
            .or(model_limit)
            .filter(|&tokens| tokens >= 1 && tokens < requested)
    }
}

/// Tells a context overflow from an output limit and anything else, reading the numbers the
/// wording gives.
///
/// `status` is the HTTP status if known. A 429 is always [`Other`](ProviderErrorKind::Other)
/// (a rate limit). A 413 (payload too large) is an overflow only when its body says so (a
/// proxy's "413 Request Entity Too Large" page is not one). An error that reports both the
/// input and the output it asked for (`6616 tokens (568 in the messages, 6048 in the
/// completion)` against a window of 6048) is an output limit when the input alone takes at
/// most half the window — the output asked for is what does not fit — and an overflow
/// otherwise. A key's credit limit that states what it can pay for (`can only afford 3919`)
/// is an output limit of that many tokens; one that states nothing, or nothing it can pay, is
/// not ours.
///
/// ```
/// use toolsmith::history::{ProviderErrorKind, classify_provider_error};
///
/// let overflow = "This model's maximum prompt length is 131072 but the request contains \
///                 136973 tokens.";
/// assert_eq!(classify_provider_error(Some(400), overflow), ProviderErrorKind::ContextOverflow);
/// let output = "max_tokens is too large: 100000. This model supports at most 16384 completion \
///               tokens, whereas you provided 100000.";
/// assert_eq!(
///     classify_provider_error(Some(400), output),
///     ProviderErrorKind::OutputLimit { limit: Some(16_384) }
/// );
/// let rate = "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000";
/// assert_eq!(classify_provider_error(Some(429), rate), ProviderErrorKind::Other);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn classify_provider_error(status: Option<u16>, message: &str) -> ProviderErrorKind {
    let message = message.to_lowercase();
    if status == Some(429) || RATE_LIMIT_PATTERNS.iter().any(|p| message.contains(p)) {
        return ProviderErrorKind::Other;
    }
    // A key's credit: what it can pay for is the output's limit.
    if let Some(afford) = number_after(&message, "can only afford") {
        return if afford >= 1 {
            ProviderErrorKind::OutputLimit {
                limit: Some(afford),
            }
        } else {
            ProviderErrorKind::Other
        };
    }
    if CREDIT_PATTERNS.iter().any(|p| message.contains(p)) {
        return ProviderErrorKind::Other;
    }
    // Input and output both reported against the window: which of them does not fit.
    if let Some((window, input)) = window_and_input(&message) {
        return if input.saturating_mul(2) <= window {
            ProviderErrorKind::OutputLimit {
                limit: Some(window - input),
            }
        } else {
            ProviderErrorKind::ContextOverflow
        };
    }
    let elsewhere = NOT_THE_CONTEXT.iter().any(|other| message.contains(other));
    // A wording of the table is the strongest evidence; then the output parameter named with
    // a limit (and no input); then any words saying the input does not fit.
    let known_overflow = !elsewhere && OVERFLOW_PATTERNS.iter().any(|p| message.contains(p));
    let known_output = OUTPUT_LIMIT_PATTERNS.iter().any(|p| message.contains(p));
    let output = || ProviderErrorKind::OutputLimit {
        limit: output_limit(&message),
    };
    if known_output && !known_overflow {
        return output();
    }
    if known_overflow {
        return ProviderErrorKind::ContextOverflow;
    }
    if OUTPUT_NOUNS.iter().any(|n| message.contains(n))
        && OVER_A_LIMIT.iter().any(|r| message.contains(r))
        && !names_the_input(&message)
    {
        return output();
    }
    if !elsewhere && says_too_long_for_context(&message) {
        return ProviderErrorKind::ContextOverflow;
    }
    ProviderErrorKind::Other
}

/// Wordings of a key's or an account's limits: out of credit (with no number it can pay for),
/// or a limit on the tokens it may spend in a period. They name tokens and a limit, as a
/// window's overflow does, but compacting the history cannot help: a new key, more credit or
/// the next period does.
const CREDIT_PATTERNS: &[&str] = &[
    "credit balance",
    "insufficient credits",
    "more credits",
    "purchase more credits",
    "of credit left",
    "insufficient balance",
    "key limit exceeded",
    "insufficient_quota",
    "billing",
    // OpenRouter: "Prompt tokens limit exceeded: N > M. To increase, visit … and create a key
    // with a higher monthly limit".
    "monthly limit",
    "daily limit",
    "weekly limit",
    "monthly token",
    "per month",
    // Anthropic: "You have reached your specified API usage limits."
    "usage limit",
    "spending limit",
    "upgrade your plan",
];

/// How an error says a number is over a limit (about the output parameter).
const OVER_A_LIMIT: &[&str] = &[
    "too large",
    "exceed",
    "greater than",
    "at most",
    "maximum",
    "less than or equal",
    "valid range",
    " > ",
];

/// The first whole number after `cue` in `message` (digits with `,` or `_` grouping), skipping
/// spaces and the punctuation a wording puts around it.
fn number_after(message: &str, cue: &str) -> Option<u64> {
    let at = message.find(cue)? + cue.len();
    let rest = message[at..].trim_start_matches([' ', '`', '\'', '"', ':', '(', '=']);
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '_')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The output limit an error states, by the cues the providers' wordings use.
fn output_limit(message: &str) -> Option<u64> {
    // DeepSeek: "the valid range of max_tokens is [1, 8192]".
    if let Some(at) = message.find("valid range") {
        let range = &message[at..];
        let end = range.find(']')?;
        let last = range[..end].rsplit([',', ' ', '[']).next()?;
        return last.trim().parse().ok();
    }
    const CUES: &[&str] = &[
        "at most",
        "model limit of",
        "limit of",
        "maximum of",
        "less than or equal to",
        " > ",
    ];
    CUES.iter().find_map(|cue| number_after(message, cue))
}

/// The window and the input an error reports beside the output it asked for: `maximum
/// context length is 6048 tokens … (568 in the messages, …)`, `exceed context limit: 187254 +
/// 20000 > 200000`.
fn window_and_input(message: &str) -> Option<(u64, u64)> {
    if let Some(window) = number_after(message, "maximum context length is") {
        let open = message
            .find(" in the messages")
            .or_else(|| message.find(" in your prompt"))?;
        let before = &message[..open];
        let start = before.rfind('(')? + 1;
        let input: u64 = before[start..].trim().replace(',', "").parse().ok()?;
        return Some((window, input));
    }
    if let Some(at) = message.find("exceed context limit:") {
        let rest = &message[at + "exceed context limit:".len()..];
        let input = number_after(rest, "")?;
        let window = number_after(rest, " > ")?;
        return Some((window, input));
    }
    None
}

/// What a request's input is called when an error says it is too long: the prompt, the
/// context, the input, its tokens or messages.
const INPUT_NOUNS: &[&str] = &[
    "context",
    "prompt",
    "input",
    "token",
    "message",
    "conversation",
    "sequence length",
    "n_ctx",
    "n_keep",
];

/// How an error says the input does not fit: a relation of size.
const TOO_MUCH: &[&str] = &[
    "exceed",
    "too long",
    "too large",
    "too many",
    "too small",
    "greater than",
    "larger than",
    "longer than",
    "more than",
    "cannot exceed",
    "must be <=",
    "must have less than",
    "only supports up to",
    "is not enough",
    "out of range",
    "overflow",
    "should be [",
    ">=",
    " > ",
    "reduce the length",
    "needs",
];

/// Wordings that use those words about something else: a deadline, a cancelled context, an
/// image, a file.
const NOT_THE_CONTEXT: &[&str] = &[
    "deadline",
    "context canceled",
    "context cancelled",
    "image exceeds",
    "images in",
    "file too large",
    "file size",
    // A tool's definition over a field's limit: `Invalid 'tools[0].function.description':
    // string too long`.
    "'tools[",
    // A parameter under its minimum: `Invalid 'max_tokens': integer below minimum value.
    // Expected a value >= 1`.
    "below minimum",
];

/// What the output is called when an error says `max_tokens` alone is too large.
const OUTPUT_NOUNS: &[&str] = &[
    "max_tokens",
    "max_output_tokens",
    "max_completion_tokens",
    "output tokens",
    "completion tokens",
];

/// Whether an error names the input as what is too large (its prompt, context or messages),
/// beside any output parameter it also names.
fn names_the_input(message: &str) -> bool {
    // `messages`, not `message`: an error wrapped in JSON has a `"message"` key.
    ["prompt", "context", "input", "messages", "n_ctx"]
        .iter()
        .any(|noun| message.contains(noun))
}

/// Whether an error says, in any words, that the input does not fit the context: a noun of
/// the input and a relation of size, and not one of the wordings that use them about something
/// else. This is what recognises a wording no table holds yet (`request (4390 tokens) exceeds
/// the available context size (4096 tokens)`).
fn says_too_long_for_context(message: &str) -> bool {
    INPUT_NOUNS.iter().any(|noun| message.contains(noun))
        && TOO_MUCH.iter().any(|relation| message.contains(relation))
}

/// Whether a provider's error is a context overflow (the request is too long for the model),
/// as opposed to an output limit, a rate limit or another failure: see
/// [`classify_provider_error`].
///
/// ```
/// use toolsmith::history::is_context_overflow;
///
/// assert!(is_context_overflow(Some(400), "prompt is too long: 215000 tokens > 200000 maximum"));
/// assert!(!is_context_overflow(Some(429), "Rate limit reached for tokens per min (TPM)"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn is_context_overflow(status: Option<u16>, message: &str) -> bool {
    classify_provider_error(status, message) == ProviderErrorKind::ContextOverflow
}

/// The three levels of recovery, each harsher than the one before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum RecoveryLevel {
    /// Level 1: repair the pairing, halve the budgets, cut long assistant texts and results
    /// over the halved per-result cap.
    AggressiveBudget,
    /// Level 2: keep only the last messages (10 by default), repaired.
    Emergency,
    /// Level 3: keep only the last few messages (4 by default), each cut short, repaired.
    Nuclear,
}

impl RecoveryLevel {
    /// The level after this one, or `None` after the last.
    pub fn next(self) -> Option<RecoveryLevel> {
        match self {
            RecoveryLevel::AggressiveBudget => Some(RecoveryLevel::Emergency),
            RecoveryLevel::Emergency => Some(RecoveryLevel::Nuclear),
            RecoveryLevel::Nuclear => None,
        }
    }

    /// The level's number, 1 to 3.
    pub fn number(self) -> u8 {
        match self {
            RecoveryLevel::AggressiveBudget => 1,
            RecoveryLevel::Emergency => 2,
            RecoveryLevel::Nuclear => 3,
        }
    }
}

/// The numbers of recovery. By default: assistant texts cut to 5,000 chars at level 1, the last
/// 10 messages kept at level 2, the last 4 cut to 4,000 chars each at level 3; no tool's results
/// preserved (a registry's [`recovery_policy`](crate::Registry::recovery_policy) preserves those
/// of its tools marked `preserve`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecoveryPolicy {
    /// Level 1 cuts longer assistant texts to this many chars.
    pub assistant_text_chars: usize,
    /// Level 2 keeps this many messages (the system prompt is not one of them).
    pub emergency_keep: usize,
    /// Level 3 keeps this many messages.
    pub nuclear_keep: usize,
    /// Level 3 cuts each text and result of the kept messages to this many chars.
    pub nuclear_chars: usize,
    /// Tools whose results level 1 leaves whole (write and exec tools: their errors matter).
    /// Level 3, the last resort, cuts them too, naming their artifacts.
    pub preserve: Vec<String>,
}

impl Default for RecoveryPolicy {
    fn default() -> Self {
        RecoveryPolicy {
            assistant_text_chars: 5_000,
            emergency_keep: 10,
            nuclear_keep: 4,
            nuclear_chars: 4_000,
            preserve: Vec::new(),
        }
    }
}

impl RecoveryPolicy {
    /// Also preserves the results of these tools at level 1 (see `ToolLimits::preserve`).
    #[must_use]
    pub fn preserving<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.preserve.extend(tools.into_iter().map(Into::into));
        self
    }
}

/// What a recovery did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecoveryReport {
    /// The level applied.
    pub level: RecoveryLevel,
    /// Messages dropped from the front.
    pub messages_dropped: usize,
    /// Texts (assistant text, tool results) cut shorter.
    pub texts_cut: usize,
    /// The budget after the level (halved at level 1).
    pub budget: BudgetPolicy,
    /// What the pairing repair changed.
    pub pairing: RepairReport,
    /// Chars of the history (text, tool inputs and results) before the level.
    pub chars_before: usize,
    /// Chars of the history after it.
    pub chars_after: usize,
}

impl fmt::Display for RecoveryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "recovery level {}: {} messages dropped, {} texts cut, {} chars down to {}, batch \
             budget now {} chars; pairing: {}",
            self.level.number(),
            self.messages_dropped,
            self.texts_cut,
            crate::figures::grouped(self.chars_before),
            crate::figures::grouped(self.chars_after),
            crate::figures::grouped(self.budget.batch_budget_chars),
            self.pairing
        )
    }
}

/// Applies one level of recovery to `history` (and, at level 1, to `budget`, a value the
/// caller owns). Every level leaves a valid, paired history.
pub fn recover(
    level: RecoveryLevel,
    history: &mut Vec<Message>,
    budget: &mut BudgetPolicy,
    policy: &RecoveryPolicy,
) -> RecoveryReport {
    let chars_before = super::usage(history, &CharsPerToken(1)).tokens;
    let mut messages_dropped = 0;
    let mut texts_cut = 0;
    match level {
        RecoveryLevel::AggressiveBudget => {
            *budget = budget.halved();
            let result_cap = budget
                .per_result_max_chars
                .unwrap_or(budget.batch_budget_chars);
            for i in 0..history.len() {
                let (before, rest) = history.split_at_mut(i);
                let message = &mut rest[0];
                texts_cut += match message.role {
                    Role::Assistant => cut_texts(message, policy.assistant_text_chars, false),
                    Role::User => cut_results(message, before.last(), result_cap, policy),
                };
            }
        }
        RecoveryLevel::Emergency => {
            messages_dropped = keep_last(history, policy.emergency_keep);
        }
        RecoveryLevel::Nuclear => {
            messages_dropped = keep_last(history, policy.nuclear_keep);
            for message in history.iter_mut() {
                texts_cut += cut_texts(message, policy.nuclear_chars, true);
            }
        }
    }
    // Dropping messages can orphan results and leave calls unanswered; repair last.
    let pairing = repair(history);
    RecoveryReport {
        level,
        messages_dropped,
        texts_cut,
        budget: budget.clone(),
        pairing,
        chars_before,
        chars_after: super::usage(history, &CharsPerToken(1)).tokens,
    }
}

/// The note that opens a history whose beginning was dropped.
pub const DROPPED_NOTE: &str = "[toolsmith: earlier messages of this conversation were dropped \
    to fit the context window]";

/// Keeps the last `keep` messages (more by one if that would split a call from its results);
/// a history that would then open with the assistant opens with [`DROPPED_NOTE`] instead.
/// Returns how many messages were dropped.
fn keep_last(history: &mut Vec<Message>, keep: usize) -> usize {
    let mut start = history.len().saturating_sub(keep);
    if start == 0 {
        return 0;
    }
    let answers_previous = history[start].role == Role::User
        && history[start].tool_results().next().is_some()
        && history[start - 1].role == Role::Assistant;
    if answers_previous {
        start -= 1;
    }
    history.drain(..start);
    if history.first().is_some_and(|m| m.role == Role::Assistant) {
        history.insert(0, Message::user(DROPPED_NOTE));
    }
    start
}

/// Cuts every text (and, with `results`, every tool result) of `message` longer than `chars`.
fn cut_texts(message: &mut Message, chars: usize, results: bool) -> usize {
    let style = TrimStyle::default();
    let mut cut = 0;
    match &mut message.content {
        Content::Text(text) => cut += usize::from(cut_string(text, chars, &style)),
        Content::Blocks(blocks) => {
            for block in blocks {
                match block {
                    Block::Text(text) => {
                        cut += usize::from(cut_string(&mut text.text, chars, &style))
                    }
                    Block::ToolResult(result) if results => cut += cut_result(result, chars),
                    _ => {}
                }
            }
        }
    }
    cut
}

/// Cuts the results of a user message longer than `chars`, but those of preserved tools.
fn cut_results(
    message: &mut Message,
    previous: Option<&Message>,
    chars: usize,
    policy: &RecoveryPolicy,
) -> usize {
    let mut cut = 0;
    if let Content::Blocks(blocks) = &mut message.content {
        for block in blocks {
            if let Block::ToolResult(result) = block {
                let preserved = super::pairing::answered_call(previous, &result.tool_use_id)
                    .is_some_and(|call| policy.preserve.contains(&call.name));
                if !preserved {
                    cut += cut_result(result, chars);
                }
            }
        }
    }
    cut
}

/// Cuts a result longer than `chars`, naming the artifact it named.
fn cut_result(result: &mut super::message::ToolResultBlock, chars: usize) -> usize {
    if !result.is_text_only() || result.chars() <= chars {
        return 0;
    }
    match super::shrink::shrink(&result.text(), chars, TrimStyle::DEFAULT_HEAD_RATIO) {
        Some(text) => {
            result.content = Some(ResultContent::Text(text));
            1
        }
        None => 0,
    }
}

fn cut_string(text: &mut String, chars: usize, style: &TrimStyle) -> bool {
    if text.len() <= chars {
        return false;
    }
    let trimmed = trim::fit(text, chars, style);
    if !trimmed.is_trimmed() {
        return false;
    }
    *text = trimmed.into_text().into_owned();
    true
}
