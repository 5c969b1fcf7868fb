//! Estimating tokens from text.
//!
//! Budgets are kept in chars; tokens appear where a model or a provider speaks in them (the
//! pre-validation error, context usage). The default estimate is a quarter of the chars,
//! rounded up, which is close for English prose and conservative for code.

use std::fmt;

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
    fn count_chars(&self, chars: usize) -> usize {
        chars.div_ceil(self.0.max(1))
    }

    fn chars_for(&self, tokens: usize) -> usize {
        tokens.saturating_mul(self.0.max(1))
    }
}

/// OpenAI's o200k BPE (GPT-4o, GPT-4.1, o-series): exact token counts for those models, a close
/// estimate for others. Behind the `tiktoken` feature; its tables are embedded in the binary.
#[cfg(feature = "tiktoken")]
pub struct O200k {
    bpe: tiktoken_rs::CoreBPE,
}

#[cfg(feature = "tiktoken")]
impl O200k {
    /// Builds the tokenizer (a few hundred milliseconds: build it once and share it).
    ///
    /// # Errors
    ///
    /// When the embedded tables cannot be read, which would be a bug of the `tiktoken-rs`
    /// release in use.
    pub fn new() -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        Ok(O200k {
            bpe: tiktoken_rs::o200k_base()?,
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
        self.bpe.encode_ordinary(text).len()
    }

    fn count_chars(&self, chars: usize) -> usize {
        CharsPerToken::default().count_chars(chars)
    }

    fn chars_for(&self, tokens: usize) -> usize {
        CharsPerToken::default().chars_for(tokens)
    }
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
