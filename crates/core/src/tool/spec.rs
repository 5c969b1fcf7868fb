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
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ToolLimits {
    /// The most chars one result of this tool may have, whatever the batch budget.
    /// `None` (the default) means the tool has no cap of its own.
    pub max_result_chars: Option<usize>,
    /// The most lines one result may have; longer results are cut by the lines stage.
    /// `None` (the default) means no line limit.
    pub max_result_lines: Option<usize>,
    /// The share of a trimmed result kept from the top, in `0.0..=1.0`. By default 0.3, and
    /// 1.0 for a paginated tool (a page keeps its beginning); `run_command` favours the tail.
    pub head_ratio: f64,
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
    /// Which lines of a middle a cut must drop it keeps (errors, failures, tracebacks …). By
    /// default [`Salience::Default`](crate::trim::Salience::Default); off for a paginated tool,
    /// whose page keeps its head.
    pub salience: crate::trim::Salience,
    /// Whether a cut folds runs of similar lines into their first and a count. By default true;
    /// false for a paginated tool.
    pub fold: bool,
    /// When escape sequences and carriage-return redraws are rendered away: by default
    /// [`Render::OnCut`](crate::trim::Render::OnCut) (what a cut shows of an output);
    /// [`Render::Always`](crate::trim::Render::Always) for a terminal's output (a command's,
    /// shown rendered even when it fits, the change stated and the raw bytes kept as an
    /// artifact); [`Render::Never`](crate::trim::Render::Never) for a paginated tool (a file's
    /// bytes are what it shows).
    pub render: crate::trim::Render,
}

impl Default for ToolLimits {
    fn default() -> Self {
        ToolLimits {
            max_result_chars: None,
            max_result_lines: None,
            head_ratio: crate::trim::TrimStyle::DEFAULT_HEAD_RATIO,
            paginate: false,
            timeout: None,
            preserve: false,
            defer: false,
            salience: crate::trim::Salience::Default,
            fold: true,
            render: crate::trim::Render::OnCut,
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

    /// Sets [`max_result_lines`](Self::max_result_lines).
    #[must_use]
    pub fn with_max_result_lines(mut self, max: Option<usize>) -> Self {
        self.max_result_lines = max;
        self
    }

    /// Sets [`head_ratio`](Self::head_ratio).
    #[must_use]
    pub fn with_head_ratio(mut self, ratio: f64) -> Self {
        self.head_ratio = ratio;
        self
    }

    /// Sets [`paginate`](Self::paginate). A paginated tool's result is cut keeping its head, next
    /// to the `next page: offset=N` the marker names: a head ratio still at its default becomes
    /// 1.0 (set one after this call to keep a tail too), and a page is cut by position, without
    /// folds or salient lines (set them after this call to have them).
    #[must_use]
    pub fn with_paginate(mut self, paginate: bool) -> Self {
        self.paginate = paginate;
        if paginate {
            if self.head_ratio == crate::trim::TrimStyle::DEFAULT_HEAD_RATIO {
                self.head_ratio = 1.0;
            }
            self.salience = crate::trim::Salience::Off;
            self.fold = false;
            self.render = crate::trim::Render::Never;
        }
        self
    }

    /// Sets [`salience`](Self::salience).
    #[must_use]
    pub fn with_salience(mut self, salience: crate::trim::Salience) -> Self {
        self.salience = salience;
        self
    }

    /// Sets [`fold`](Self::fold).
    #[must_use]
    pub fn with_folding(mut self, fold: bool) -> Self {
        self.fold = fold;
        self
    }

    /// Sets [`render`](Self::render).
    #[must_use]
    pub fn with_render(mut self, render: crate::trim::Render) -> Self {
        self.render = render;
        self
    }

    /// States that the output is a terminal's (true: [`Render::Always`](crate::trim::Render::Always))
    /// or not (false: [`Render::OnCut`](crate::trim::Render::OnCut)); what the macros'
    /// `terminal_output` key sets.
    #[must_use]
    pub fn with_terminal_output(mut self, terminal_output: bool) -> Self {
        self.render = if terminal_output {
            crate::trim::Render::Always
        } else {
            crate::trim::Render::OnCut
        };
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

    /// Sets [`defer`](Self::defer).
    #[must_use]
    pub fn with_defer(mut self, defer: bool) -> Self {
        self.defer = defer;
        self
    }

    /// The trim style these limits ask for.
    pub fn trim_style(&self) -> crate::trim::TrimStyle {
        crate::trim::TrimStyle::head_tail(self.head_ratio)
            .with_max_lines(self.max_result_lines)
            .with_folding(self.fold)
            .with_salience(self.salience)
            .with_render(self.render)
    }
}
