//! `max_tokens` escalation: what to do when a reply is cut off by its output limit.

use super::message::Message;

/// Escalating `max_tokens` when a reply is cut off by it: double up to the provider's cap, at
/// most twice by default, then give up and keep the partial reply.
///
/// ```
/// use toolsmith::history::{MaxTokensEscalation, Escalation};
///
/// let mut escalation = MaxTokensEscalation::new(32_000);
/// assert!(matches!(escalation.on_max_tokens(8_000), Escalation::Retry { max_tokens: 16_000, .. }));
/// assert!(matches!(escalation.on_max_tokens(16_000), Escalation::Retry { max_tokens: 32_000, .. }));
/// assert!(matches!(escalation.on_max_tokens(32_000), Escalation::KeepPartial));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaxTokensEscalation {
    provider_cap: u32,
    max_escalations: u32,
    escalations: u32,
}

/// What to do about a reply cut off by `max_tokens`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Escalation {
    /// Append the partial reply and `continuation`, and ask again with `max_tokens`.
    Retry {
        /// The new `max_tokens`.
        max_tokens: u32,
        /// The user message asking the model to go on where it stopped.
        continuation: Message,
    },
    /// Stop escalating; use the partial reply as it is.
    KeepPartial,
}

/// The text of the message asking the model to continue a cut-off reply.
pub const CONTINUATION_TEXT: &str = "Your previous response was cut off because it reached the \
    output token limit. Continue exactly where it stopped, without repeating anything you \
    already wrote and without any preamble.";

impl MaxTokensEscalation {
    /// Escalation up to `provider_cap` tokens, at most twice.
    pub fn new(provider_cap: u32) -> Self {
        MaxTokensEscalation {
            provider_cap,
            max_escalations: 2,
            escalations: 0,
        }
    }

    /// Sets how many times to escalate (by default 2).
    #[must_use]
    pub fn with_max_escalations(mut self, max: u32) -> Self {
        self.max_escalations = max;
        self
    }

    /// How many times it has escalated.
    pub fn escalations(&self) -> u32 {
        self.escalations
    }

    /// Decides what to do after a reply stopped at `current` max tokens.
    pub fn on_max_tokens(&mut self, current: u32) -> Escalation {
        if self.escalations >= self.max_escalations || current >= self.provider_cap {
            return Escalation::KeepPartial;
        }
        self.escalations += 1;
        Escalation::Retry {
            max_tokens: current.saturating_mul(2).min(self.provider_cap),
            continuation: Message::user(CONTINUATION_TEXT),
        }
    }
}
