//! How a cut chooses what to keep: the head's share, a line limit, and whether it keeps what
//! matters (renders terminal output, folds lossless runs, keeps salient lines).

use super::Salience;
use super::terminal;

/// How [`fit`](super::fit) chooses what to keep.
///
/// By default, 30% of the room goes to the head and 70% to the tail (errors and summaries come
/// last), with no line limit, and the cut keeps what matters: terminal output rendered, lossless
/// runs folded, salient lines kept from the middle, the rest of the room spent on the head and
/// the tail ([`keeping_what_matters`](Self::keeping_what_matters)).
/// [`head_tail`](Self::head_tail) alone is the positional cut: the head and the tail, as they are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrimStyle {
    pub(super) head_ratio: f64,
    pub(super) max_lines: Option<usize>,
    /// When the full marker does not fit: end the text's beginning with `…` (errors) instead
    /// of keeping head and tail around `[truncated]`.
    pub(super) ellipsis_when_tiny: bool,
    /// Whether lossless runs (the same lines repeated, one number counting up by one) fold
    /// into their first lines and one line from which every line can be rebuilt.
    pub(super) fold: bool,
    /// Which lines of the middle a cut keeps.
    pub(super) salience: Salience,
    /// When escapes and redraws are rendered away.
    pub(super) render: Render,
    /// Whether a text is also read for what stands out in it (its rare shapes, its words of
    /// failure: `salience::standout`) beside the salient patterns, when it is read whole.
    pub(super) standouts: bool,
    /// Whether a text that is one JSON document is cut as JSON.
    pub(super) json: bool,
}

/// When a text's escape sequences and redraws (carriage returns, backspaces) are rendered as a
/// terminal shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Render {
    /// Never: the text's bytes are what is shown (a file's content).
    Never,
    /// When the text is cut: what is shown of it is rendered. The default.
    #[default]
    OnCut,
    /// Always: a tool whose output is a terminal's (a command's) is shown rendered even when it
    /// fits, the change stated in a marker.
    Always,
}

impl TrimStyle {
    /// The default share of the room given to the head: 0.3.
    pub const DEFAULT_HEAD_RATIO: f64 = 0.3;

    /// Keep `head_ratio` of the room from the top and the rest from the bottom.
    ///
    /// `head_ratio` is clamped to `0.0..=1.0`; NaN means the default, 0.3. Validate user input
    /// before it gets here (the registry's builder does) if a bad ratio should be an error.
    pub fn head_tail(head_ratio: f64) -> Self {
        let head_ratio = if head_ratio.is_nan() {
            Self::DEFAULT_HEAD_RATIO
        } else {
            head_ratio.clamp(0.0, 1.0)
        };
        TrimStyle {
            head_ratio,
            max_lines: None,
            ellipsis_when_tiny: false,
            fold: false,
            salience: Salience::Off,
            render: Render::Never,
            standouts: true,
            json: true,
        }
    }

    /// This style, keeping what matters when it cuts: what is shown of terminal output is
    /// rendered (escapes removed, redraws resolved), lossless runs (the same lines repeated, one
    /// number counting up by one) fold into their first lines and one line from which every
    /// line can be rebuilt, and the salient lines of a middle that must be dropped are kept, with
    /// their line numbers, in the default salience; the middle that cannot be shown is
    /// summarised by its count, its span and its first line. What the default style does.
    #[must_use]
    pub fn keeping_what_matters(mut self) -> Self {
        self.fold = true;
        self.salience = Salience::Default;
        self.render = Render::OnCut;
        self
    }

    /// This style, its salient lines found by the patterns alone: what compacting a history
    /// cuts (results the model read whole once), where reading every line's shape again would
    /// cost more than the cut.
    #[must_use]
    pub(crate) fn by_patterns_alone(mut self) -> Self {
        self.standouts = false;
        self
    }

    /// Sets the share of the room kept from the top: clamped to `0.0..=1.0`, NaN meaning the
    /// default (0.3), as [`head_tail`](Self::head_tail) reads it.
    #[must_use]
    pub fn with_head_ratio(mut self, head_ratio: f64) -> Self {
        self.head_ratio = Self::head_tail(head_ratio).head_ratio;
        self
    }

    /// Sets whether lossless runs are folded when the text is cut.
    #[must_use]
    pub fn with_folding(mut self, fold: bool) -> Self {
        self.fold = fold;
        self
    }

    /// Sets which lines of a dropped middle a cut keeps.
    #[must_use]
    pub fn with_salience(mut self, salience: Salience) -> Self {
        self.salience = salience;
        self
    }

    /// Sets when escape sequences and redraws are rendered away.
    #[must_use]
    pub fn with_render(mut self, render: Render) -> Self {
        self.render = render;
        self
    }

    /// Sets whether a text that is one JSON document (an object or an array, compact or
    /// pretty) is cut as JSON by [`fit_json`](super::fit_json) — valid JSON, the marker inside,
    /// the first and last elements kept — which every style does unless this turns it off. A
    /// text that only starts like JSON, JSON lines, and a page of a paginated call are cut by
    /// their lines either way.
    #[must_use]
    pub fn with_json(mut self, json: bool) -> Self {
        self.json = json;
        self
    }

    /// Whether `text` is shown rendered even when it fits: the style renders always, and the
    /// text holds escapes or redraws.
    pub(crate) fn renders_whole(&self, text: &str) -> bool {
        self.render == Render::Always && terminal::needs_rendering(text.as_bytes())
    }

    /// Whether the style keeps what matters in any way (folds, salience or rendering).
    pub(super) fn reduces(&self) -> bool {
        self.fold || self.salience != Salience::Off || self.render != Render::Never
    }

    /// The style of error results: half the room for the head (what went wrong) and half for
    /// the tail (a failed command's last output); when the allowance cannot hold the full
    /// marker, the text keeps its beginning, ended by `…`, so an error's first words survive
    /// any allowance of 20 chars or more.
    pub fn error() -> Self {
        TrimStyle {
            ellipsis_when_tiny: true,
            ..Self::head_tail(0.5).keeping_what_matters()
        }
    }

    /// Keep the beginning only (what `read_file` wants): a head ratio of 1.
    pub fn head_only() -> Self {
        Self::head_tail(1.0)
    }

    /// Keep the end only (the last lines of a log): a head ratio of 0.
    pub fn tail_only() -> Self {
        Self::head_tail(0.0)
    }

    /// Also limit the kept text to `max_lines` lines (`None`, the default, means no limit;
    /// `Some(0)` keeps no line at all, only the marker).
    #[must_use]
    pub fn with_max_lines(mut self, max_lines: Option<usize>) -> Self {
        self.max_lines = max_lines;
        self
    }

    /// The share of the room (and of the line limit) given to the head, in `0.0..=1.0`.
    pub fn head_ratio(&self) -> f64 {
        self.head_ratio
    }

    /// The line limit, if any.
    pub fn max_lines(&self) -> Option<usize> {
        self.max_lines
    }

    /// Splits `room` into (head, tail) by the head ratio.
    pub(super) fn split(&self, room: usize) -> (usize, usize) {
        // The float product of a usize and a ratio in 0..=1 floors back into 0..=room.
        let head = ((room as f64 * self.head_ratio).floor() as usize).min(room);
        (head, room - head)
    }
}

impl Default for TrimStyle {
    fn default() -> Self {
        Self::head_tail(Self::DEFAULT_HEAD_RATIO).keeping_what_matters()
    }
}
