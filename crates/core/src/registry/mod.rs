//! Running tools: the [`Registry`] of an agent's tools, the [`Turn`]s that run the model's
//! batches of calls, and what comes back, a [`ToolResult`] per call.
//!
//! A batch runs in phases over one record per call, each phase in the file of its name:
//! admit, plan, run, fit, report (`docs/design.md` walks through them).

mod admit;
mod call;
mod fit;
mod plan;
mod read_artifact;
mod record;
mod refusal;
mod report;
mod result;
mod run;
mod search_tools;
mod turn;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast;

use crate::approval::ApprovalPolicy;
use crate::artifacts::ArtifactStore;
use crate::budget::{BudgetError, BudgetPolicy};
use crate::names::is_valid_tool_name;
use crate::tool::{DynTool, Event, MediaLimits, State, Tool, into_dyn};

pub use call::{Arguments, StopReason, ToolCall};
pub use read_artifact::ReadArtifact;
pub use result::{MediaLeftOut, ResultMeta, ToolResult};
pub use search_tools::{LOADED_META_KEY, Loaded, SEARCH_TOOLS, SearchToolsArgs};

/// The type of Anthropic's BM25 tool search tool, as [`Registry::anthropic_native_search`]
/// offers it.
pub const ANTHROPIC_SEARCH_TOOL_TYPE: &str = "tool_search_tool_bm25_20251119";
/// The name of Anthropic's BM25 tool search tool.
pub const ANTHROPIC_SEARCH_TOOL_NAME: &str = "tool_search_tool_bm25";
pub use turn::Turn;

/// The tools of an agent and the limits they run under. Cheap to clone: clones share the tools.
///
/// ```
/// use toolsmith::{BudgetPolicy, Registry, ToolCall};
/// # use toolsmith::{Tool, ToolContext, ToolError, ToolOutput};
/// # #[derive(serde::Deserialize, schemars::JsonSchema)]
/// # struct Args {}
/// # struct Hello;
/// # #[async_trait::async_trait]
/// # impl Tool for Hello {
/// #     type Args = Args;
/// #     fn name(&self) -> std::borrow::Cow<'static, str> { "hello".into() }
/// #     fn description(&self) -> std::borrow::Cow<'static, str> { "Says hello.".into() }
/// #     async fn call(&self, _: Args, _: &ToolContext) -> Result<ToolOutput, ToolError> {
/// #         Ok("hello".into())
/// #     }
/// # }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = Registry::builder()
///     .tool(Hello)
///     .budget(BudgetPolicy::default().with_batch_budget_chars(10_000))
///     .build()?;
/// let mut turn = registry.turn();
/// let results = turn
///     .execute(vec![
///         ToolCall::new("call_1", "hello", serde_json::json!({})),
///         ToolCall::new("call_2", "nope", serde_json::json!({})),
///     ])
///     .await;
/// assert_eq!(results[0].content, "hello");
/// assert!(results[1].is_error());
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

struct Inner {
    tools: Vec<Arc<dyn DynTool>>,
    by_name: HashMap<String, usize>,
    budget: BudgetPolicy,
    max_calls_per_turn: usize,
    max_calls_per_tool: usize,
    default_timeout: Option<Duration>,
    size_hint_timeout: Duration,
    artifacts: Option<Arc<dyn ArtifactStore>>,
    events: broadcast::Sender<Event>,
    state: Arc<State>,
    /// `None` when every call is allowed.
    approval: Option<Arc<ApprovalPolicy>>,
    /// Per tool (in `tools`' order): whether its definition waits for a search.
    deferred: Vec<bool>,
    media: MediaLimits,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.tools().map(|tool| tool.spec().name.as_str()).collect();
        f.debug_struct("Registry")
            .field("tools", &names)
            .field("budget", &self.inner.budget)
            .field("max_calls_per_turn", &self.inner.max_calls_per_turn)
            .field("max_calls_per_tool", &self.inner.max_calls_per_tool)
            .field("default_timeout", &self.inner.default_timeout)
            .field("artifacts", &self.inner.artifacts)
            .finish()
    }
}

impl Registry {
    /// The default `max_calls_per_turn`: 20.
    pub const DEFAULT_MAX_CALLS_PER_TURN: usize = 20;
    /// The default `max_calls_per_tool`: 5.
    pub const DEFAULT_MAX_CALLS_PER_TOOL: usize = 5;
    /// The default timeout of one call: 2 minutes.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

    /// How long a batch waits for size hints by default: 2 seconds.
    pub const DEFAULT_SIZE_HINT_TIMEOUT: Duration = Duration::from_secs(2);
    /// How many events a slow subscriber may fall behind before it misses some.
    const EVENT_CAPACITY: usize = 1024;

    /// Starts building a registry.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// Starts a turn: one user turn of the agent loop, across which the call caps and the turn
    /// budget apply. Run its batches with [`Turn::execute`].
    pub fn turn(&self) -> Turn {
        Turn::new(self.clone())
    }

    /// The tools, in registration order (the built-in `read_artifact` last).
    pub fn tools(&self) -> impl Iterator<Item = &Arc<dyn DynTool>> {
        self.inner.tools.iter()
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn DynTool>> {
        self.inner.by_name.get(name).map(|&i| &self.inner.tools[i])
    }

    /// The definitions to offer the model, in `dialect`: every tool that is not deferred, in
    /// registration order (with `search_tools` when some are). Same as
    /// [`schemas_with`](Self::schemas_with) with nothing loaded.
    ///
    /// # Errors
    ///
    /// The first [`DialectError`](crate::schema::DialectError): a tool whose schema the dialect
    /// cannot express, naming the keyword.
    pub fn schemas(
        &self,
        dialect: crate::schema::Dialect,
    ) -> Result<Vec<Value>, crate::schema::DialectError> {
        self.schemas_with(dialect, &Loaded::new())
    }

    /// The definitions to offer the model in a conversation that has loaded `loaded`: the tools
    /// that are not deferred, in registration order, then the deferred tools the conversation
    /// found, in the order it found them — so a list grows only at its end, and a provider's
    /// prompt cache of it survives.
    ///
    /// ```
    /// use toolsmith::registry::Loaded;
    /// use toolsmith::schema::Dialect;
    /// use toolsmith::{Registry, ToolCall};
    /// # use toolsmith::{ToolContext, ToolError};
    ///
    /// /// Merges a pull request.
    /// #[toolsmith::tool(defer)]
    /// async fn merge_pull_request(number: u32) -> Result<String, ToolError> {
    ///     Ok(format!("merged #{number}"))
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let registry = Registry::builder().tool(merge_pull_request()).build()?;
    /// let names = |defs: Vec<serde_json::Value>| -> Vec<String> {
    ///     defs.iter().map(|d| d["name"].as_str().unwrap().to_owned()).collect()
    /// };
    /// let mut loaded = Loaded::new();
    /// assert_eq!(names(registry.schemas_with(Dialect::Anthropic, &loaded)?), ["search_tools"]);
    ///
    /// let search = ToolCall::new("s", "search_tools", serde_json::json!({ "query": "merge a PR" }));
    /// let results = registry.turn().execute([search]).await;
    /// loaded.absorb(&results);
    /// assert_eq!(
    ///     names(registry.schemas_with(Dialect::Anthropic, &loaded)?),
    ///     ["search_tools", "merge_pull_request"]
    /// );
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`schemas`](Self::schemas).
    pub fn schemas_with(
        &self,
        dialect: crate::schema::Dialect,
        loaded: &Loaded,
    ) -> Result<Vec<Value>, crate::schema::DialectError> {
        let offered = self
            .tools()
            .zip(&self.inner.deferred)
            .filter(|(_, deferred)| !**deferred)
            .map(|(tool, _)| tool);
        let found = loaded
            .names()
            .iter()
            .filter_map(|name| self.get(name))
            .filter(|tool| self.is_deferred(&tool.spec().name));
        offered
            .chain(found)
            .map(|tool| dialect.render(tool.spec()))
            .collect()
    }

    /// Every tool in Anthropic's dialect for Anthropic's own tool search: the deferred tools
    /// marked `"defer_loading": true`, and Anthropic's BM25 search tool in place of
    /// `search_tools` (the API then finds and loads tools itself, answering with
    /// `tool_reference` blocks the history keeps as they are). Without deferred tools, the same
    /// as [`schemas`](Self::schemas).
    ///
    /// # Errors
    ///
    /// As [`schemas`](Self::schemas).
    pub fn anthropic_native_search(&self) -> Result<Vec<Value>, crate::schema::DialectError> {
        let dialect = crate::schema::Dialect::Anthropic;
        if !self.inner.deferred.contains(&true) {
            return self.schemas(dialect);
        }
        let mut definitions = vec![serde_json::json!({
            "type": ANTHROPIC_SEARCH_TOOL_TYPE,
            "name": ANTHROPIC_SEARCH_TOOL_NAME,
        })];
        for (tool, deferred) in self.tools().zip(&self.inner.deferred) {
            if tool.spec().name == SEARCH_TOOLS {
                continue;
            }
            let mut definition = dialect.render(tool.spec())?;
            if *deferred {
                definition["defer_loading"] = Value::Bool(true);
            }
            definitions.push(definition);
        }
        Ok(definitions)
    }

    /// Whether the tool named `name` is deferred: offered only once a search finds it. (A
    /// deferred tool can be called at any time; it is its definition that waits.)
    pub fn is_deferred(&self, name: &str) -> bool {
        self.inner
            .by_name
            .get(name)
            .is_some_and(|&i| self.inner.deferred[i])
    }

    /// The names of the tools whose results history compaction must keep whole: those whose
    /// limits say `preserve` (write and exec tools, `#[tool(preserve)]`, an MCP tool its server
    /// annotates as destructive), in registration order.
    pub fn preserved_tools(&self) -> impl Iterator<Item = &str> {
        self.tools()
            .filter(|tool| tool.spec().limits.preserve)
            .map(|tool| tool.spec().name.as_str())
    }

    /// The default [microcompaction](crate::history::microcompact) policy with this registry's
    /// [preserved tools](Self::preserved_tools): hand it to the agent's history, so a tool's
    /// `preserve` flag is honoured without repeating its name.
    ///
    /// ```
    /// use toolsmith::{Registry, ToolError, tool};
    ///
    /// /// Deploys the site.
    /// #[tool(preserve)]
    /// async fn deploy() -> Result<String, ToolError> {
    ///     Ok("deployed".into())
    /// }
    ///
    /// let registry = Registry::builder().tool(deploy()).build()?;
    /// assert_eq!(registry.compact_policy().preserve, ["deploy"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn compact_policy(&self) -> crate::history::CompactPolicy {
        crate::history::CompactPolicy::default().preserving(self.preserved_tools())
    }

    /// The default [overflow recovery](crate::history::recover) policy with this registry's
    /// [preserved tools](Self::preserved_tools).
    pub fn recovery_policy(&self) -> crate::history::RecoveryPolicy {
        crate::history::RecoveryPolicy::default().preserving(self.preserved_tools())
    }

    /// The budget policy turns start with.
    pub fn budget(&self) -> &BudgetPolicy {
        &self.inner.budget
    }

    /// The artifact store, when one is configured.
    pub fn artifacts(&self) -> Option<&Arc<dyn ArtifactStore>> {
        self.inner.artifacts.as_ref()
    }

    /// Subscribes to the registry's [events](Event): calls started and finished, progress,
    /// warnings. A subscriber that falls more than 1,024 events behind misses the oldest
    /// (`RecvError::Lagged`); nothing waits for a slow subscriber.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.inner.events.subscribe()
    }
}

/// Builds a [`Registry`]; see [`Registry::builder`].
pub struct RegistryBuilder {
    tools: Vec<Arc<dyn DynTool>>,
    state: State,
    budget: BudgetPolicy,
    max_calls_per_turn: usize,
    max_calls_per_tool: usize,
    default_timeout: Option<Duration>,
    size_hint_timeout: Duration,
    artifacts: Option<Arc<dyn ArtifactStore>>,
    approval: ApprovalPolicy,
    deferred: Vec<String>,
    keep_loaded: Vec<String>,
    defer_over_tokens: Option<usize>,
    search_dialect: crate::schema::Dialect,
    media: MediaLimits,
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
        self.budget.validate()?;
        if self.max_calls_per_turn == 0 {
            return Err(BuildError::InvalidLimit {
                what: "max_calls_per_turn".into(),
                problem: "is 0, so no call could ever run; use at least 1".into(),
            });
        }
        if self.max_calls_per_tool == 0 {
            return Err(BuildError::InvalidLimit {
                what: "max_calls_per_tool".into(),
                problem: "is 0, so no call could ever run; use at least 1".into(),
            });
        }
        if self.default_timeout == Some(Duration::ZERO) {
            return Err(BuildError::InvalidLimit {
                what: "default_timeout".into(),
                problem: "is zero, so every call would time out; use None for no timeout".into(),
            });
        }
        if let Some(store) = &self.artifacts {
            // `read_artifact` is the registry's own: every marker sends the model to it, so no
            // other tool may take its name (a server's tool could then read every page asked for
            // and answer what it likes). A `ReadArtifact` registered by hand is the same tool.
            let reader = std::any::type_name::<ReadArtifact>();
            if let Some(other) = self.tools.iter().find(|t| {
                t.spec().name == crate::artifacts::READ_ARTIFACT
                    && t.spec().type_name != Some(reader)
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
        }
        let deferred = self.deferral()?;
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
        let approval = (!self.approval.allows_everything()).then(|| Arc::new(self.approval));
        let (events, _) = broadcast::channel(Registry::EVENT_CAPACITY);
        Ok(Registry {
            inner: Arc::new(Inner {
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
            }),
        })
    }
}

impl RegistryBuilder {
    /// Decides which tools are deferred and, when any is, registers `search_tools` over them.
    /// Returns, per tool in registration order (`search_tools` included), whether it is.
    fn deferral(&mut self) -> Result<Vec<bool>, BuildError> {
        use crate::artifacts::READ_ARTIFACT;
        use crate::schema::Dialect;
        if let Some(other) = self.tools.iter().find(|t| t.spec().name == SEARCH_TOOLS) {
            return Err(BuildError::ReservedName {
                name: SEARCH_TOOLS.to_owned(),
                tool: describe(other.spec()),
            });
        }
        for (what, names) in [
            ("defer", &self.deferred),
            ("keep_loaded", &self.keep_loaded),
        ] {
            if let Some(unknown) = names
                .iter()
                .find(|name| !self.tools.iter().any(|t| t.spec().name == **name))
            {
                return Err(BuildError::InvalidLimit {
                    what: what.to_owned(),
                    problem: format!("names `{unknown}`, which no tool of the registry is"),
                });
            }
        }
        let mut deferred: Vec<bool> = self
            .tools
            .iter()
            .map(|tool| {
                let spec = tool.spec();
                spec.name != READ_ARTIFACT
                    && (spec.limits.defer || self.deferred.contains(&spec.name))
            })
            .collect();
        if let Some(tokens) = self.defer_over_tokens {
            let offered: usize = self
                .tools
                .iter()
                .zip(&deferred)
                .filter(|(_, deferred)| !**deferred)
                .map(|(tool, _)| {
                    Dialect::Anthropic
                        .render(tool.spec())
                        .map_or(0, |definition| definition.to_string().chars().count())
                })
                .sum();
            if offered / 4 > tokens {
                for (tool, deferred) in self.tools.iter().zip(deferred.iter_mut()) {
                    let name = &tool.spec().name;
                    if name != READ_ARTIFACT && !self.keep_loaded.contains(name) {
                        *deferred = true;
                    }
                }
            }
        }
        if !deferred.contains(&true) {
            return Ok(deferred);
        }
        let mut names = Vec::new();
        let mut definitions = Vec::new();
        let mut servers = Vec::new();
        for (tool, _) in self.tools.iter().zip(&deferred).filter(|(_, d)| **d) {
            let spec = tool.spec();
            definitions.push(self.search_dialect.render(spec).map_err(|error| {
                BuildError::InvalidLimit {
                    what: format!("`{}`", spec.name),
                    problem: format!("cannot be offered by search_tools: {error}"),
                }
            })?);
            names.push(spec.name.clone());
            servers.push(server_of(spec));
        }
        let index = crate::search::ToolIndex::new(
            self.tools
                .iter()
                .zip(&deferred)
                .filter(|(_, d)| **d)
                .zip(&servers)
                .map(|((tool, _), server)| {
                    let spec = tool.spec();
                    let text = crate::search::ToolText::new(
                        &spec.name,
                        &spec.description,
                        &spec.input_schema,
                    );
                    match server {
                        Some(server) => text.with_server(server),
                        None => text,
                    }
                }),
        );
        let catalog = search_tools::Catalog {
            index,
            names,
            definitions,
        };
        self.tools.push(into_dyn(search_tools::SearchTools {
            catalog: Arc::new(catalog),
        }));
        deferred.push(false);
        Ok(deferred)
    }
}

/// The server a tool comes from, when its origin says (`the MCP server `github``).
fn server_of(spec: &crate::tool::ToolSpec) -> Option<String> {
    let origin = spec.origin.as_deref()?;
    let name = origin.split('`').nth(1)?;
    Some(name.to_owned())
}

/// A tool as errors name it: where it comes from (`the tool of the MCP server `github``), or
/// its Rust type.
fn describe(spec: &crate::tool::ToolSpec) -> String {
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
    if !(0.0..=1.0).contains(&limits.head_ratio) {
        return Err(limit(
            "head_ratio",
            format!("is {}, outside 0.0..=1.0", limits.head_ratio),
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
