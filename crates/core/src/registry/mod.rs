//! Running tools: the [`Registry`] of an agent's tools, the [`Turn`]s that run the model's
//! batches of calls, and what comes back, a [`ToolResult`] per call.
//!
//! A batch runs in phases over one record per call, each phase in the file of its name:
//! admit, plan, run, fit, report (`docs/design.md` walks through them).

mod admit;
mod builder;
mod call;
mod defer;
pub(crate) mod facts;
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

use tokio::sync::broadcast;

use crate::approval::ApprovalPolicy;
use crate::artifacts::ArtifactStore;
use crate::budget::BudgetPolicy;
use crate::tool::{DynTool, Event, MediaLimits, State};

pub use builder::{BuildError, RegistryBuilder};
pub use call::{Arguments, StopReason, ToolCall};
pub use defer::{ANTHROPIC_SEARCH_TOOL_NAME, ANTHROPIC_SEARCH_TOOL_TYPE};
pub use facts::CUT_META_KEY;
#[cfg(feature = "mcp")]
pub(crate) use fit::trailer_fits;
pub use read_artifact::ReadArtifact;
#[cfg(feature = "mcp")]
#[cfg(feature = "mcp")]
pub(crate) use read_artifact::{asks_whole, read_failure};
pub use result::{MediaLeftOut, ResultMeta, TokensSent, ToolResult};
pub use search_tools::{LOADED_META_KEY, Loaded, SEARCH_TOOLS, SearchToolsArgs};

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

/// How an MCP server sends the registry's results, where that changes their fitting: set by
/// the server, never by the builder (a library's results are the same whoever reads them).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sending {
    /// A structure stated beside a text that repeats it (an MCP server's result) shares the
    /// allowance with the text: a host may show the model both.
    pub(crate) structure_shares: bool,
    /// A typed structure cut by its schema says inside it that it was cut, where its listed
    /// schema admits the member ([`listed_schema`](crate::structure::listed_schema)): an MCP
    /// server lists it so, for hosts that show only the structure.
    pub(crate) structure_notes: bool,
    /// Chars kept free after a cut text for a trailer the sender adds (an MCP server's link
    /// to the artifact), where they fit the text's allowance by [`trailer_fits`] (0: none).
    pub(crate) trailer_room: usize,
}

#[derive(Clone)]
struct Inner {
    tools: Vec<Arc<dyn DynTool>>,
    /// Each tool's output schema, compiled once (in `tools`' order): what its structures are cut
    /// by.
    output_schemas: Vec<Option<Arc<crate::structure::OutputSchema>>>,
    /// Each tool's name, shared by the context of every call of it (in `tools`' order).
    names: Vec<Arc<str>>,
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
    /// The cap in tokens of every result, if any.
    max_result_tokens: Option<usize>,
    /// What counts tokens, when some cap is in tokens (the registry's or a tool's).
    token_counter: Option<Arc<dyn crate::tokens::TokenCounter>>,
    sending: Sending,
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

    /// Whether the registry's approval policy asks the user about calls of the tool `name`.
    #[cfg(feature = "mcp")]
    pub(crate) fn asks(&self, name: &str) -> bool {
        let (Some(policy), Some(tool)) = (&self.inner.approval, self.get(name)) else {
            return false;
        };
        policy.rule_for(name, &tool.spec().annotations) == crate::approval::Rule::Ask
    }

    /// The output schema of the tool named `name`, compiled, when it states one.
    pub(crate) fn output_schema(&self, name: &str) -> Option<&crate::structure::OutputSchema> {
        let &i = self.inner.by_name.get(name)?;
        self.inner.output_schemas[i].as_deref()
    }

    /// The tool named `name`, its index among the registry's tools, and its name as every
    /// call's context shares it.
    fn get_named(&self, name: &str) -> Option<(&Arc<dyn DynTool>, usize, &Arc<str>)> {
        let &i = self.inner.by_name.get(name)?;
        Some((&self.inner.tools[i], i, &self.inner.names[i]))
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

    /// The same registry keeping its artifacts in `store` (and its `read_artifact` reading
    /// them there): what a gateway gives each session, so a session reads only its own. The
    /// events, the state and the calls' counts per turn are the registry's.
    #[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
    pub(crate) fn over_store(&self, store: Arc<dyn ArtifactStore>) -> Registry {
        let reader = std::any::type_name::<ReadArtifact>();
        let tools = self
            .inner
            .tools
            .iter()
            .map(|tool| {
                if tool.spec().type_name == Some(reader) {
                    crate::tool::into_dyn(ReadArtifact::new(Arc::clone(&store)))
                } else {
                    Arc::clone(tool)
                }
            })
            .collect();
        Registry {
            inner: Arc::new(Inner {
                tools,
                artifacts: Some(store),
                ..(*self.inner).clone()
            }),
        }
    }

    /// The same registry, its results shaped for an MCP server that sends them ([`Sending`]).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn sending(&self, sending: Sending) -> Registry {
        Registry {
            inner: Arc::new(Inner {
                sending,
                ..(*self.inner).clone()
            }),
        }
    }

    /// Subscribes to the registry's [events](Event): calls started and finished, progress,
    /// warnings. A subscriber that falls more than 1,024 events behind misses the oldest
    /// (`RecvError::Lagged`); nothing waits for a slow subscriber.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.inner.events.subscribe()
    }
}
