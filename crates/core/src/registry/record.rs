//! One record per call of a batch: what the phases (admit, plan, run, fit) read and fill in.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::refusal::Failure;
use crate::artifacts::SpoolSlot;
use crate::budget::{Claim, Demand};
use crate::tool::{CallArgs, DynTool, ErrorKind, Media, Page, ToolContext};
use crate::trim::{CapturedParts, Totals};

/// A call of the batch, from admission to its result.
pub(super) struct CallRecord {
    /// The call's id (`tool_use` id).
    pub(super) id: String,
    /// The tool the model named.
    pub(super) name: String,
    /// The tool, when the registry has one by that name.
    pub(super) tool: Option<Arc<dyn DynTool>>,
    /// The page a paginated call asked for.
    pub(super) page: Option<Page>,
    /// The tool's own cap on a result, for a call that was admitted (a call refused at
    /// admission is answered with its error, whatever the tool's cap).
    pub(super) cap: Option<usize>,
    /// What the call estimated it will produce, in chars; a refused call, its error's length.
    pub(super) estimate: Option<usize>,
    /// The allowance the call runs with (what its tool sees).
    pub(super) planned: usize,
    /// The allowance the result is fitted to, once the batch is settled.
    pub(super) allowance: usize,
    /// Where the call is.
    pub(super) stage: Stage,
    /// How long it ran (zero for a call refused before running).
    pub(super) duration: Duration,
    /// Its `tool_call` span.
    pub(super) span: tracing::Span,
}

/// Where a call is in the batch.
pub(super) enum Stage {
    /// Admitted: its decoded arguments, the context it runs with and, when an approval policy
    /// may ask about it, its arguments as the model wrote them.
    Admitted {
        args: CallArgs,
        cx: ToolContext,
        shown: Option<Value>,
    },
    /// Handed to the task that runs it.
    Running,
    /// Finished: what it produced, or why it failed (a refused call comes straight here).
    Done(Result<Produced, Failure>),
}

/// What a call that returned produced.
pub(super) struct Produced {
    pub(super) body: Body,
    /// The images and audio clips after the text.
    pub(super) media: Vec<Media>,
    /// What the tool stated beside its content.
    pub(super) tool_meta: Map<String, Value>,
    /// The structure the tool stated beside its text
    /// ([`ToolOutput::with_structure`](crate::ToolOutput::with_structure)).
    pub(super) structure: Option<Box<Value>>,
    /// Set when a stream ended with an error: the body is the output until then, followed by
    /// the error's text.
    pub(super) error_kind: Option<ErrorKind>,
}

/// A call's content, before it is fitted.
pub(super) enum Body {
    /// Text, cut by lines.
    Text(String),
    /// JSON text, by the tool's statement: cut as JSON.
    Json(String),
    /// A stream too long to keep whole: its head and tail, and the artifact it was spooled to.
    /// Boxed: every call's outcome and record carries a `Body`, and few carry this one.
    Parts(Box<(CapturedParts, SpoolSlot)>),
}

impl Body {
    /// The chars and lines of the whole content (a stream's as they were counted coming in).
    pub(super) fn totals(&self) -> Totals {
        match self {
            Body::Text(text) | Body::Json(text) => Totals::of(text),
            Body::Parts(parts) => parts.0.totals(),
        }
    }
}

impl CallRecord {
    /// A call the registry answers itself, without running it.
    pub(super) fn refused(
        id: String,
        name: String,
        tool: Option<Arc<dyn DynTool>>,
        why: impl Into<Failure>,
    ) -> Self {
        let failure = why.into();
        CallRecord {
            estimate: Some(failure.model_text().chars().count()),
            id,
            name,
            tool,
            page: None,
            cap: None,
            planned: 0,
            allowance: 0,
            stage: Stage::Done(Err(failure)),
            duration: Duration::ZERO,
            span: tracing::Span::none(),
        }
    }

    /// Refuses a call that was admitted (its estimate did not fit what it was planned).
    pub(super) fn refuse(&mut self, why: impl Into<Failure>) {
        let failure = why.into();
        self.estimate = Some(failure.model_text().chars().count());
        self.stage = Stage::Done(Err(failure));
    }

    /// Whether the call will run.
    pub(super) fn is_admitted(&self) -> bool {
        matches!(self.stage, Stage::Admitted { .. })
    }

    /// The call as the budget plans it.
    pub(super) fn claim(&self) -> Claim {
        Claim::new().with_cap(self.cap).with_estimate(self.estimate)
    }

    /// The call as the budget settles it, once it produced `chars`.
    pub(super) fn demand(&self, chars: usize) -> Demand {
        Demand::new(self.planned, chars).with_cap(self.cap)
    }
}
