//! [`ToolSpec`]: what the registry and the model know of a tool, with its [`ToolLimits`] and
//! [`ToolAnnotations`].

use std::fmt;
use std::time::Duration;

use serde_json::Value;

/// What the registry and the model know of a tool.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The name the model calls it by.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON schema of its input; its root is an object.
    pub input_schema: Value,
    /// Its limits.
    pub limits: ToolLimits,
    /// What it does to the world (the MCP tool annotations).
    pub annotations: ToolAnnotations,
    /// The Rust type behind it, when known (named in duplicate-name errors).
    pub type_name: Option<&'static str>,
    /// Where it comes from, when that is not a Rust type (`the MCP server \`github\``):
    /// named in the registry's errors about it.
    pub origin: Option<String>,
    /// What it needs in the registry's state; the registry refuses to build without it.
    pub needs: Vec<super::StateNeed>,
    /// A name for people (MCP's `title`), when the tool has one.
    pub title: Option<String>,
    /// The JSON schema of its structured result (MCP's `outputSchema`), when it states one: an
    /// MCP server lists it, and sends a JSON result as `structuredContent` only when it is
    /// whole.
    pub output_schema: Option<Value>,
    /// Whether `offset` and `limit` were added to the schema by the framework (a paginated
    /// typed tool whose arguments do not declare them): the registry then takes them out of the
    /// arguments before the tool decodes them.
    pub(crate) owns_page_fields: bool,
}

impl ToolSpec {
    /// A spec for a [`DynTool`](super::DynTool) implemented by hand.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            input_schema,
            limits: ToolLimits::default(),
            annotations: ToolAnnotations::default(),
            type_name: None,
            origin: None,
            needs: Vec::new(),
            title: None,
            output_schema: None,
            owns_page_fields: false,
        }
    }

    /// Sets the name for people (MCP's `title`).
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the JSON schema of the tool's structured result (MCP's `outputSchema`).
    #[must_use]
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Says where the tool comes from (`the MCP server \`github\``), for errors about it.
    #[must_use]
    pub fn with_origin(mut self, origin: impl Into<String>) -> Self {
        self.origin = Some(origin.into());
        self
    }

    /// Adds a value the tool needs in the registry's state.
    #[must_use]
    pub fn with_need(mut self, need: super::StateNeed) -> Self {
        self.needs.push(need);
        self
    }

    /// Sets the limits.
    #[must_use]
    pub fn with_limits(mut self, limits: ToolLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets the annotations.
    #[must_use]
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }
}

/// What a tool does to the world: the MCP tool annotations, as hints for the registry's
/// scheduler, approval policies and clients. Each is `None` when the tool does not say.
///
/// The registry runs calls of read-only tools concurrently and the calls of every other tool
/// one at a time, in call order: a tool that does not say it is read-only is taken to change
/// something. Mark side-effect-free tools `read_only` (`#[tool(read_only)]`) to let them run
/// in parallel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// The tool changes nothing (MCP `readOnlyHint`; not stated means it may).
    pub read_only: Option<bool>,
    /// A change it makes may destroy or overwrite data (MCP `destructiveHint`).
    pub destructive: Option<bool>,
    /// Calling it again with the same arguments changes nothing more (MCP `idempotentHint`).
    pub idempotent: Option<bool>,
    /// It reaches outside a closed domain, such as the network (MCP `openWorldHint`).
    pub open_world: Option<bool>,
}

impl ToolAnnotations {
    /// No annotation stated.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`read_only`](Self::read_only).
    #[must_use]
    pub fn with_read_only(mut self, read_only: bool) -> Self {
        self.read_only = Some(read_only);
        self
    }

    /// Sets [`destructive`](Self::destructive).
    #[must_use]
    pub fn with_destructive(mut self, destructive: bool) -> Self {
        self.destructive = Some(destructive);
        self
    }

    /// Sets [`idempotent`](Self::idempotent).
    #[must_use]
    pub fn with_idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = Some(idempotent);
        self
    }

    /// Sets [`open_world`](Self::open_world).
    #[must_use]
    pub fn with_open_world(mut self, open_world: bool) -> Self {
        self.open_world = Some(open_world);
        self
    }

    /// Whether the tool says it changes nothing, so its calls may run beside any other.
    pub fn is_read_only(&self) -> bool {
        self.read_only == Some(true)
    }

    /// Whether nothing is stated.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

impl fmt::Debug for ToolSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSpec")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("limits", &self.limits)
            .field("annotations", &self.annotations)
            .finish_non_exhaustive()
    }
}

/// A tool's own limits. Each applies on top of the registry's budget, never instead of it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct ToolLimits {
    /// The most chars one result of this tool may have, whatever the batch budget.
    /// `None` (the default) means the tool has no cap of its own.
    pub max_result_chars: Option<usize>,
    /// The most tokens one result of this tool may have, counted by the registry's counter
    /// ([`RegistryBuilder::token_counter`](crate::registry::RegistryBuilder::token_counter)),
    /// beside the chars it is allowed. `None` (the default): no cap in tokens of its own.
    pub max_result_tokens: Option<usize>,
    /// How a cut of this tool's results chooses what to keep: the head's share (0.3 by
    /// default, 1.0 for a paginated tool), a line limit, salient lines, folds, when terminal
    /// output is rendered. [`TrimStyle::default`](crate::trim::TrimStyle::default) unless set;
    /// its setters are the one place these settings are written.
    pub trim: crate::trim::TrimStyle,
    /// Whether the tool takes `offset` and `limit` and receives a [`Page`](crate::tool::Page).
    pub paginate: bool,
    /// How long one call may run. `None` (the default) means the registry's default timeout.
    pub timeout: Option<Duration>,
    /// Whether history microcompaction must keep this tool's results (write and exec tools).
    pub preserve: bool,
    /// Whether the tool's definition is offered only once a search finds it
    /// ([`RegistryBuilder::defer`](crate::registry::RegistryBuilder::defer)): a tool seldom
    /// needed, in a registry of many, costs no context until then.
    pub defer: bool,
    /// What a result over its allowance becomes: cut, with the marker (the default), or an
    /// error result naming its size, the allowance and the artifact holding it whole, for a
    /// caller that must never read part of a result ([`OverCap`]).
    pub over_cap: OverCap,
}

/// What a result over its cap becomes.
///
/// A cut keeps what matters and names the artifact holding the rest; some callers must never
/// act on part of a result (a config file read half, a JSON answer a program parses). For them,
/// [`Error`](Self::Error): nothing of the result is sent, and the error says its size, the cap,
/// the artifact holding it whole and how to page it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OverCap {
    /// Cut to the cap, with the marker (the default).
    #[default]
    Cut,
    /// An error result instead, the whole kept as an artifact.
    Error,
}

impl OverCap {
    /// The setting as a configuration writes it: `"cut"` or `"error"`; `None` for anything
    /// else.
    pub fn from_setting(setting: &str) -> Option<Self> {
        match setting {
            "cut" => Some(OverCap::Cut),
            "error" => Some(OverCap::Error),
            _ => None,
        }
    }
}

impl ToolLimits {
    /// Sets [`max_result_chars`](Self::max_result_chars).
    #[must_use]
    pub fn with_max_result_chars(mut self, max: Option<usize>) -> Self {
        self.max_result_chars = max;
        self
    }

    /// Sets [`max_result_tokens`](Self::max_result_tokens).
    #[must_use]
    pub fn with_max_result_tokens(mut self, max: Option<usize>) -> Self {
        self.max_result_tokens = max;
        self
    }

    /// Sets [`trim`](Self::trim): how a cut chooses what to keep.
    ///
    /// ```
    /// use toolsmith::tool::ToolLimits;
    /// use toolsmith::trim::{Render, TrimStyle};
    ///
    /// // A command's output: a fifth of the room from the top, at most 200 lines, rendered
    /// // as a terminal shows it.
    /// let limits = ToolLimits::default().with_trim(
    ///     TrimStyle::default()
    ///         .with_head_ratio(0.2)
    ///         .with_max_lines(Some(200))
    ///         .with_render(Render::Always),
    /// );
    /// assert_eq!(limits.trim.head_ratio(), 0.2);
    /// ```
    #[must_use]
    pub fn with_trim(mut self, trim: crate::trim::TrimStyle) -> Self {
        self.trim = trim;
        self
    }

    /// Sets [`paginate`](Self::paginate). A paginated tool's result is cut keeping its head, next
    /// to the `next page: offset=N` the marker names: a head ratio still at its default becomes
    /// 1.0, and a page is cut by position, without folds, salient lines or rendering (set a
    /// [`trim`](Self::with_trim) after this call to have them).
    #[must_use]
    pub fn with_paginate(mut self, paginate: bool) -> Self {
        self.paginate = paginate;
        if paginate {
            let ratio = self.trim.head_ratio();
            let head_ratio = if ratio == crate::trim::TrimStyle::DEFAULT_HEAD_RATIO {
                1.0
            } else {
                ratio
            };
            self.trim =
                crate::trim::TrimStyle::head_tail(head_ratio).with_max_lines(self.trim.max_lines());
        }
        self
    }

    /// Sets [`timeout`](Self::timeout).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets [`preserve`](Self::preserve).
    #[must_use]
    pub fn with_preserve(mut self, preserve: bool) -> Self {
        self.preserve = preserve;
        self
    }

    /// Sets [`over_cap`](Self::over_cap).
    #[must_use]
    pub fn with_over_cap(mut self, over_cap: OverCap) -> Self {
        self.over_cap = over_cap;
        self
    }

    /// Sets [`defer`](Self::defer).
    #[must_use]
    pub fn with_defer(mut self, defer: bool) -> Self {
        self.defer = defer;
        self
    }
}
