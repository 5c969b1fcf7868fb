//! Building a [`Registry`]: the [`RegistryBuilder`], the checks a registry passes before it
//! runs anything, and the [`BuildError`] that names what failed them.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast;

use super::{Inner, ReadArtifact, Registry};
use crate::approval::ApprovalPolicy;
use crate::artifacts::ArtifactStore;
use crate::budget::{BudgetError, BudgetPolicy};
use crate::names::is_valid_tool_name;
use crate::tool::{DynTool, MediaLimits, State, Tool, into_dyn};

/// Builds a [`Registry`]; see [`Registry::builder`].
pub struct RegistryBuilder {
    pub(super) tools: Vec<Arc<dyn DynTool>>,
    state: State,
    budget: BudgetPolicy,
    max_calls_per_turn: usize,
    max_calls_per_tool: usize,
    default_timeout: Option<Duration>,
    size_hint_timeout: Duration,
    artifacts: Option<Arc<dyn ArtifactStore>>,
    approval: ApprovalPolicy,
    pub(super) deferred: Vec<String>,
    pub(super) keep_loaded: Vec<String>,
    pub(super) defer_over_tokens: Option<usize>,
    pub(super) search_dialect: crate::schema::Dialect,
    media: MediaLimits,
    max_result_tokens: Option<usize>,
    token_counter: Option<Arc<dyn crate::tokens::TokenCounter>>,
}

impl Default for RegistryBuilder {
    fn default() -> Self {
        RegistryBuilder {
            tools: Vec::new(),
            state: State::new(),
            budget: BudgetPolicy::default(),
            max_calls_per_turn: Registry::DEFAULT_MAX_CALLS_PER_TURN,
            max_calls_per_tool: Registry::DEFAULT_MAX_CALLS_PER_TOOL,
            default_timeout: Some(Registry::DEFAULT_TIMEOUT),
            size_hint_timeout: Registry::DEFAULT_SIZE_HINT_TIMEOUT,
            artifacts: None,
            approval: ApprovalPolicy::default(),
            deferred: Vec::new(),
            keep_loaded: Vec::new(),
            defer_over_tokens: None,
            search_dialect: crate::schema::Dialect::Anthropic,
            media: MediaLimits::default(),
            max_result_tokens: None,
            token_counter: None,
        }
    }
}

impl fmt::Debug for RegistryBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.tools.iter().map(|t| t.spec().name.as_str()).collect();
        f.debug_struct("RegistryBuilder")
            .field("tools", &names)
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

impl RegistryBuilder {
    /// Adds a typed tool.
    #[must_use]
    pub fn tool<T: Tool>(mut self, tool: T) -> Self {
        self.tools.push(into_dyn(tool));
        self
    }

    /// Adds an object-safe tool.
    #[must_use]
    pub fn dyn_tool(mut self, tool: Arc<dyn DynTool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds several object-safe tools.
    #[must_use]
    pub fn tools(mut self, tools: impl IntoIterator<Item = Arc<dyn DynTool>>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Shares `value` with every call; tools read it with
    /// [`ToolContext::state`](crate::ToolContext::state). One value per type: a second value of
    /// the same type replaces the first.
    #[must_use]
    pub fn state<T: std::any::Any + Send + Sync>(mut self, value: T) -> Self {
        self.state.insert(value);
        self
    }

    /// Defers the tools named: their definitions are offered only once the built-in
    /// `search_tools` finds them ([`Registry::schemas_with`]). A tool can also defer itself
    /// (`#[tool(defer)]`, [`ToolLimits::with_defer`](crate::tool::ToolLimits::with_defer)); an
    /// MCP client can defer all of a server's tools.
    #[must_use]
    pub fn defer(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.deferred.extend(names.into_iter().map(Into::into));
        self
    }

    /// Defers every tool (but those [kept loaded](Self::keep_loaded)) when the definitions
    /// offered would otherwise exceed `tokens` (estimated at 4 chars a token, in the Anthropic
    /// dialect): a registry that grows past it offers `search_tools` instead.
    #[must_use]
    pub fn defer_over_tokens(mut self, tokens: usize) -> Self {
        self.defer_over_tokens = Some(tokens);
        self
    }

    /// Keeps the tools named loaded whatever [`defer_over_tokens`](Self::defer_over_tokens)
    /// decides: the ones nearly every task needs.
    #[must_use]
    pub fn keep_loaded(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.keep_loaded.extend(names.into_iter().map(Into::into));
        self
    }

    /// The dialect `search_tools` returns definitions in (Anthropic's by default): that of the
    /// provider the registry's tools are offered to.
    #[must_use]
    pub fn search_dialect(mut self, dialect: crate::schema::Dialect) -> Self {
        self.search_dialect = dialect;
        self
    }

    /// How many images and audio clips the model is shown, and how large: by default
    /// [`MediaLimits::default`] (4 a result, 20 a batch, 1 MiB of base64 each). Media over a
    /// limit are stored as artifacts (with an artifact store), and a note in the result's
    /// text names each.
    #[must_use]
    pub fn media_limits(mut self, limits: MediaLimits) -> Self {
        self.media = limits;
        self
    }

    /// Caps every result in tokens, beside the chars the budget allows it: a result over the cap
    /// is cut until what is sent counts at most `max` tokens, and its marker names the cap
    /// (`cut to a 2,000-token cap`). A tool's own cap
    /// ([`ToolLimits::max_result_tokens`](crate::tool::ToolLimits::max_result_tokens)) applies
    /// where it is smaller. Counted by [`token_counter`](Self::token_counter). `None`, the
    /// default: results are capped in chars only.
    ///
    /// ```
    /// use toolsmith::Registry;
    ///
    /// let registry = Registry::builder().max_result_tokens(Some(2_000)).build()?;
    /// # let _ = registry;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn max_result_tokens(mut self, max: Option<usize>) -> Self {
        self.max_result_tokens = max;
        self
    }

    /// What counts the tokens of a cap in tokens. By default
    /// [`tokens::default_counter`](crate::tokens::default_counter): the o200k encoder with
    /// the `tiktoken` feature, else the estimate of four chars a token.
    #[must_use]
    pub fn token_counter(mut self, counter: Arc<dyn crate::tokens::TokenCounter>) -> Self {
        self.token_counter = Some(counter);
        self
    }

    /// Sets the budget policy. By default, [`BudgetPolicy::default`].
    #[must_use]
    pub fn budget(mut self, budget: BudgetPolicy) -> Self {
        self.budget = budget;
        self
    }

    /// Caps the calls of one turn, across its batches; the call past the cap gets an error
    /// result. By default 20. Must be at least 1.
    #[must_use]
    pub fn max_calls_per_turn(mut self, max: usize) -> Self {
        self.max_calls_per_turn = max;
        self
    }

    /// Caps the calls of any one tool in one turn; the call past the cap gets an error result.
    /// By default 5. Must be at least 1.
    #[must_use]
    pub fn max_calls_per_tool(mut self, max: usize) -> Self {
        self.max_calls_per_tool = max;
        self
    }

    /// The timeout of calls whose tool sets none. By default 2 minutes; `None` means calls may
    /// run as long as they like. Must not be zero.
    #[must_use]
    pub fn default_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// How long a batch waits for its calls' size hints ([`Tool::size_hint`])
    /// before planning the allowances; a hint not ready by then counts as no estimate. By
    /// default 2 seconds.
    #[must_use]
    pub fn size_hint_timeout(mut self, timeout: Duration) -> Self {
        self.size_hint_timeout = timeout;
        self
    }

    /// Keeps the full output of every trimmed result in `store`, and registers the
    /// `read_artifact` tool that pages through it. By default no store is configured and the
    /// marker says the full output was not kept.
    #[must_use]
    pub fn artifacts(mut self, store: impl ArtifactStore) -> Self {
        self.artifacts = Some(Arc::new(store));
        self
    }

    /// The approval policy consulted before each call runs. By default every call is allowed.
    /// A call the policy denies is answered with the reason as an error result, not run.
    pub fn approval(mut self, policy: ApprovalPolicy) -> Self {
        self.approval = policy;
        self
    }

    /// Like [`artifacts`](Self::artifacts), for a store already shared.
    #[must_use]
    pub fn shared_artifacts(mut self, store: Arc<dyn ArtifactStore>) -> Self {
        self.artifacts = Some(store);
        self
    }

    /// Checks everything and builds the registry.
    ///
    /// # Errors
    ///
    /// [`BuildError`] for two tools with one name (naming both), a name the providers refuse,
    /// an input schema whose root is not an object, a tool limit out of range, an invalid
    /// budget or cap, or a value a tool needs missing from the state (naming the tool, what it
    /// needs and how to add it).
    pub fn build(mut self) -> Result<Registry, BuildError> {
        self.check_limits()?;
        self.add_reader()?;
        let deferred = self.deferral()?;
        let by_name = self.index_tools()?;
        if let Some(unknown) = self
            .approval
            .named_tools()
            .find(|name| !by_name.contains_key(*name))
        {
            let known: Vec<&str> = self.tools.iter().map(|t| t.spec().name.as_str()).collect();
            return Err(BuildError::UnknownToolInPolicy {
                tool: unknown.to_owned(),
                known: known.join(", "),
            });
        }
        // The counter is made (or taken) only when some cap is in tokens.
        let token_counter = (self.max_result_tokens.is_some()
            || self
                .tools
                .iter()
                .any(|tool| tool.spec().limits.max_result_tokens.is_some()))
        .then(|| {
            self.token_counter
                .take()
                .unwrap_or_else(crate::tokens::default_counter)
        });
        let approval = (!self.approval.allows_everything()).then(|| Arc::new(self.approval));
        let (events, _) = broadcast::channel(Registry::EVENT_CAPACITY);
        Ok(Registry {
            inner: Arc::new(Inner {
                names: self
                    .tools
                    .iter()
                    .map(|tool| Arc::from(tool.spec().name.as_str()))
                    .collect(),
                output_schemas: self
                    .tools
                    .iter()
                    .map(|tool| {
                        let schema = tool.spec().output_schema.as_ref()?;
                        Some(Arc::new(crate::structure::OutputSchema::new(schema)))
                    })
                    .collect(),
                tools: self.tools,
                by_name,
                budget: self.budget,
                max_calls_per_turn: self.max_calls_per_turn,
                max_calls_per_tool: self.max_calls_per_tool,
                default_timeout: self.default_timeout,
                size_hint_timeout: self.size_hint_timeout,
                artifacts: self.artifacts,
                events,
                state: Arc::new(self.state),
                approval,
                deferred,
                media: self.media,
                max_result_tokens: self.max_result_tokens,
                token_counter,
                sending: super::Sending::default(),
            }),
        })
    }

    /// The limits a registry cannot run with, refused: no call could run, every call would
    /// time out, no result could be sent.
    fn check_limits(&self) -> Result<(), BuildError> {
        self.budget.validate()?;
        let invalid = |what: &str, problem: &str| {
            Err(BuildError::InvalidLimit {
                what: what.into(),
                problem: problem.into(),
            })
        };
        let never = "is 0, so no call could ever run; use at least 1";
        if self.max_calls_per_turn == 0 {
            return invalid("max_calls_per_turn", never);
        }
        if self.max_calls_per_tool == 0 {
            return invalid("max_calls_per_tool", never);
        }
        if self.default_timeout == Some(Duration::ZERO) {
            return invalid(
                "default_timeout",
                "is zero, so every call would time out; use None for no timeout",
            );
        }
        if self.max_result_tokens == Some(0) {
            return invalid(
                "max_result_tokens",
                "is 0, so no result could be sent; use at least 100, or None",
            );
        }
        Ok(())
    }

    /// With an artifact store, `read_artifact` is the registry's own: every marker sends the
    /// model to it, so no other tool may take its name (a server's tool could then read every
    /// page asked for and answer what it likes). A `ReadArtifact` registered by hand is the
    /// same tool; without one, it is added.
    fn add_reader(&mut self) -> Result<(), BuildError> {
        let Some(store) = &self.artifacts else {
            return Ok(());
        };
        let reader = std::any::type_name::<ReadArtifact>();
        if let Some(other) = self.tools.iter().find(|t| {
            t.spec().name == crate::artifacts::READ_ARTIFACT && t.spec().type_name != Some(reader)
        }) {
            return Err(BuildError::ReservedName {
                name: crate::artifacts::READ_ARTIFACT.to_owned(),
                tool: describe(other.spec()),
            });
        }
        if !self
            .tools
            .iter()
            .any(|t| t.spec().name == crate::artifacts::READ_ARTIFACT)
        {
            self.tools.push(into_dyn(ReadArtifact::new(store.clone())));
        }
        Ok(())
    }

    /// Each tool's place by its name, every spec checked: two tools of one name refused (both
    /// named), and a tool whose needs the state does not meet (what it needs, how to add it).
    fn index_tools(&self) -> Result<HashMap<String, usize>, BuildError> {
        let mut by_name = HashMap::with_capacity(self.tools.len());
        for (i, tool) in self.tools.iter().enumerate() {
            let spec = tool.spec();
            check_spec(spec)?;
            if let Some(&first) = by_name.get(&spec.name) {
                let first: &Arc<dyn DynTool> = &self.tools[first];
                return Err(BuildError::DuplicateName {
                    name: spec.name.clone(),
                    first: describe(first.spec()),
                    second: describe(spec),
                });
            }
            by_name.insert(spec.name.clone(), i);
            if let Some(need) = spec.needs.iter().find(|need| !self.state.satisfies(need)) {
                return Err(BuildError::MissingState {
                    tool: spec.name.clone(),
                    what: need.what().to_owned(),
                    fix: need.fix().to_owned(),
                });
            }
        }
        Ok(by_name)
    }
}

/// A tool as errors name it: where it comes from (`the tool of the MCP server `github``), or
/// its Rust type.
pub(super) fn describe(spec: &crate::tool::ToolSpec) -> String {
    match (&spec.origin, spec.type_name) {
        (Some(origin), _) => format!("the tool of {origin}"),
        (None, Some(name)) => format!("`{name}`"),
        (None, None) => "a DynTool".to_owned(),
    }
}

fn check_spec(spec: &crate::tool::ToolSpec) -> Result<(), BuildError> {
    let name = &spec.name;
    if !is_valid_tool_name(name) {
        return Err(BuildError::InvalidName(name.clone()));
    }
    let limit = |what: &str, problem: String| BuildError::InvalidLimit {
        what: format!("`{name}`: {what}"),
        problem,
    };
    let limits = &spec.limits;
    if limits.max_result_chars == Some(0) {
        return Err(limit(
            "max_result_chars",
            "is 0, so every result would be empty; use None for no cap".into(),
        ));
    }
    if limits.timeout == Some(Duration::ZERO) {
        return Err(limit(
            "timeout",
            "is zero, so every call would time out; use None for the registry's default".into(),
        ));
    }
    let schema_type = spec.input_schema.get("type").and_then(Value::as_str);
    if schema_type != Some("object") {
        return Err(BuildError::SchemaNotObject {
            tool: name.clone(),
            found: schema_type.unwrap_or("no type").to_owned(),
        });
    }
    Ok(())
}

/// Why a [`Registry`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two tools share a name.
    #[error("two tools are named `{name}`: {first} and {second}; rename one")]
    DuplicateName {
        /// The shared name.
        name: String,
        /// The first tool registered under it.
        first: String,
        /// The second.
        second: String,
    },
    /// A tool took a name the registry keeps for its own tools: `read_artifact` (which every
    /// marker of a cut result sends the model to) with an artifact store, `search_tools`.
    #[error(
        "`{name}` is the registry's own tool, and {tool} is named so too; rename that tool (an \
         MCP client names a server's tools `<server>__<tool>` with `prefixed(true)`)"
    )]
    ReservedName {
        /// The name.
        name: String,
        /// The tool that took it.
        tool: String,
    },
    /// A tool name that providers refuse.
    #[error("invalid tool name `{0}`: names must match ^[a-zA-Z0-9_-]{{1,64}}$")]
    InvalidName(String),
    /// A tool's input schema does not describe a JSON object.
    #[error(
        "the input schema of `{tool}` has type `{found}`; tool arguments must be a JSON object \
         (use a struct with named fields)"
    )]
    SchemaNotObject {
        /// The tool.
        tool: String,
        /// The schema's type.
        found: String,
    },
    /// A limit out of range.
    #[error("{what} {problem}")]
    InvalidLimit {
        /// Which limit (and which tool's).
        what: String,
        /// What is wrong and what to use instead.
        problem: String,
    },
    /// An invalid budget policy.
    #[error("invalid budget: {0}")]
    Budget(#[from] BudgetError),
    /// A tool needs a value in the registry's state (see [`StateNeed`](crate::tool::StateNeed)) that
    /// was not added.
    #[error("the tool `{tool}` needs {what}, and the registry has none: add it with {fix}")]
    MissingState {
        /// The tool.
        tool: String,
        /// What it needs, in words.
        what: String,
        /// The builder call that adds it.
        fix: String,
    },
    /// The approval policy has a rule for a tool the registry does not have.
    #[error(
        "the approval policy names `{tool}`, which is not a tool of this registry (its tools: {known})"
    )]
    UnknownToolInPolicy {
        /// The name in the policy.
        tool: String,
        /// The registry's tools, comma-separated.
        known: String,
    },
}
