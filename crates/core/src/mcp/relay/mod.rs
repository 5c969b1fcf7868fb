//! A transparent, budgeting MCP proxy: [`Proxy`].
//!
//! The proxy stands between one client and any number of servers ([`Upstream`]s) and relays
//! JSON-RPC messages as they are — never parsed into protocol types, so a field, a content
//! type or a feature it does not know passes untouched. What it changes, and only that:
//!
//! - **Results fit a cap.** A `tools/call` result's content and `structuredContent`, and a
//!   `resources/read` result's contents, are fitted to the cap by the rule of
//!   [`MediaLimits`](crate::tool::MediaLimits)' module: text cut keeping what matters, with a marker; images and audio
//!   passed as they are within a count and a size; everything left out kept whole as an
//!   artifact that `read_artifact` (a tool of the proxy's own) returns.
//! - **Listings say so.** Each listed tool's description gains a sentence stating the cap, and
//!   its `_meta` the cap as a number ([`MAX_RESULT_META_KEY`](crate::mcp::caps::MAX_RESULT_META_KEY)).
//! - **Names stay apart.** Several servers' tools and prompts are served together; a name two
//!   of them share (or `read_artifact`) gets the server's name in front (`git__status`), and
//!   a server can ask for that always ([`Prefix::Always`]).
//!
//! Each server is started when the client initializes, with the client's own `initialize`
//! (its capabilities — sampling, elicitation, roots — and its name), and what it requests of
//! the client (sampling, elicitation, roots) reaches the client, whose answer goes back; the
//! proxy never answers for the user. Progress, logs, `list_changed` and resource updates reach
//! the client as they were sent, in order, before the answer they preceded. A server that
//! cannot be started is left out and named in the instructions the client gets; one that dies
//! is started again at its next request.

mod filter;
mod peer;
mod session;
mod upstream;

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};

pub use crate::mcp::outgoing::Copies;
use crate::tool::MediaLimits;
pub use upstream::{Prefix, Upstream};

use crate::artifacts::{ArtifactStore, MemoryStore, READ_ARTIFACT};
use crate::budget::BudgetPolicy;
#[cfg(feature = "mcp-http")]
use crate::mcp::http::{self, HttpOptions, HttpServer};
use crate::mcp::link;
use crate::mcp::outgoing;
use crate::mcp::target::{DEFAULT_INIT_TIMEOUT, DEFAULT_MAX_MESSAGE_BYTES};
use crate::mcp::wire;
use crate::registry::{ReadArtifact, Registry};
use crate::schema::Dialect;
use session::Settings;
use upstream::Connecting;

/// The cap of a result by default, in chars.
const DEFAULT_MAX_RESULT_CHARS: usize = 20_000;

/// A transparent MCP proxy that fits every result to a cap.
///
/// ```no_run
/// use toolsmith::mcp::{Proxy, Upstream};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// Proxy::new([Upstream::command("everything", "npx").args(["-y", "@modelcontextprotocol/server-everything"])])
///     .max_result_chars(10_000)
///     .serve_stdio()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Proxy {
    upstreams: Vec<Upstream>,
    max_result_chars: usize,
    max_result_tokens: Option<usize>,
    token_counter: Option<Arc<dyn crate::tokens::TokenCounter>>,
    media: MediaLimits,
    store: Option<Arc<dyn ArtifactStore>>,
    timeout: Duration,
    init_timeout: Duration,
    max_message_bytes: usize,
    tool_search: bool,
    share_upstreams: bool,
    warm_upstreams: usize,
}

impl Proxy {
    /// A proxy of `upstreams`, with a cap of 20,000 chars, artifacts kept in memory, calls
    /// cancelled after 10 minutes and servers given 30 s to initialize.
    pub fn new(upstreams: impl IntoIterator<Item = Upstream>) -> Self {
        Proxy {
            upstreams: upstreams.into_iter().collect(),
            max_result_chars: DEFAULT_MAX_RESULT_CHARS,
            max_result_tokens: None,
            token_counter: None,
            media: MediaLimits::default(),
            store: None,
            timeout: Duration::from_secs(600),
            init_timeout: DEFAULT_INIT_TIMEOUT,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            tool_search: false,
            share_upstreams: false,
            warm_upstreams: 0,
        }
    }

    /// Lists the servers' tools only once a search finds them: the client is offered
    /// `search_tools`, `call_tool` (which reaches any tool found, for a client that does not
    /// refresh its list) and `read_artifact`, and each search's finds are added to the list,
    /// the client told with `notifications/tools/list_changed`.
    pub fn tool_search(mut self, on: bool) -> Self {
        self.tool_search = on;
        self
    }

    /// Over HTTP, starts each server once and shares it among every client session, instead
    /// of starting servers for each session (the default). A session then opens as fast as
    /// an `initialize` is answered, however many open at once, and the machine runs one
    /// process per server.
    ///
    /// For servers that keep nothing per client. What is no longer a session's own: a shared
    /// server is initialized by the proxy, without the client's capabilities (roots,
    /// sampling, elicitation: what it asks of a client is refused, saying why) or name; its
    /// logs and resource updates are not relayed (they cannot be told apart by session, and
    /// could carry one client's data to another), `logging/setLevel` is answered and not
    /// sent, and subscriptions are not offered (`resources/subscribe` is refused). Progress still reaches the session whose
    /// request it is about, and `list_changed` every session. Results and their artifacts
    /// stay each session's own.
    pub fn share_upstreams(mut self, on: bool) -> Self {
        self.share_upstreams = on;
        self
    }

    /// Over HTTP with servers per session (the default), keeps `count` processes of each
    /// command server started ahead of the sessions that will take them (none by default): a
    /// session opening takes one whose runtime has loaded, and another starts in its place.
    /// Each waits as any server does, for the `initialize` of the client it will serve.
    /// Ignored with [`share_upstreams`](Proxy::share_upstreams), and for servers at a URL.
    pub fn warm_upstreams(mut self, count: usize) -> Self {
        self.warm_upstreams = count;
        self
    }

    /// The most chars of text a result may have (its content, and its `structuredContent` on
    /// its own).
    pub fn max_result_chars(mut self, chars: usize) -> Self {
        self.max_result_chars = chars;
        self
    }

    /// Caps every result in tokens too: a result whose text a reader sees (its content's
    /// text, notes and other blocks, and its `structuredContent`) counts more than `max` tokens
    /// is cut until it counts at most that, each text's marker naming the cap
    /// (`cut to a 2,000-token cap`) and the cut facts stating the tokens sent. The cap in
    /// chars still applies. Counted by [`token_counter`](Self::token_counter).
    pub fn max_result_tokens(mut self, max: Option<usize>) -> Self {
        self.max_result_tokens = max;
        self
    }

    /// What counts the tokens of [`max_result_tokens`](Self::max_result_tokens). By default
    /// [`tokens::default_counter`](crate::tokens::default_counter): the o200k encoder with
    /// the `tiktoken` feature, else the estimate of four chars a token.
    pub fn token_counter(mut self, counter: Arc<dyn crate::tokens::TokenCounter>) -> Self {
        self.token_counter = Some(counter);
        self
    }

    /// How many images and audio clips a result carries, and how large each may be.
    pub fn media_limits(mut self, limits: MediaLimits) -> Self {
        self.media = limits;
        self
    }

    /// Where what a cut leaves out is kept (in memory by default).
    pub fn artifacts(mut self, store: impl ArtifactStore) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// Like [`artifacts`](Self::artifacts), for a store already shared (what
    /// [`open_location`](crate::artifacts::open_location) returns).
    pub fn shared_artifacts(mut self, store: Arc<dyn ArtifactStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// How long a call may run before it is cancelled (10 minutes by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long a server has to start and answer `initialize` (and each page of a listing):
    /// 30 s by default.
    pub fn init_timeout(mut self, timeout: Duration) -> Self {
        self.init_timeout = timeout;
        self
    }

    /// The longest message read from a server on stdio, in bytes (256 MiB by default): a
    /// longer answer fails its request at once, saying so.
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// The settings every session shares.
    fn settings(self) -> Result<Arc<Settings>, ProxyError> {
        if self.upstreams.is_empty() {
            return Err(ProxyError::NoUpstreams);
        }
        let filters = self
            .upstreams
            .iter()
            .map(filter::ToolFilter::of)
            .collect::<Result<Arc<[_]>, _>>()?;
        let store = self.store.unwrap_or_else(|| Arc::new(MemoryStore::new()));
        let (reader, reader_listing) = reader(&store, self.max_result_chars)?;
        let shared = self
            .share_upstreams
            .then(|| session::shared::Shared::new(&self.upstreams));
        let warm = (!self.share_upstreams && self.warm_upstreams > 0)
            .then(|| Arc::new(upstream::Warm::new(self.warm_upstreams)));
        Ok(Arc::new(Settings {
            upstreams: self.upstreams,
            fitting: outgoing::Fitting {
                tokens: self.max_result_tokens.map(|max| {
                    crate::tokens::TokenCap::new(
                        max,
                        self.token_counter
                            .clone()
                            .unwrap_or_else(crate::tokens::default_counter),
                    )
                }),
                ..outgoing::Fitting::new(self.max_result_chars, store, self.media)
            },
            timeout: self.timeout,
            connecting: Connecting {
                init_timeout: self.init_timeout,
                max_message_bytes: self.max_message_bytes,
            },
            reader,
            reader_listing,
            tool_search: self.tool_search,
            shared,
            warm,
            filters,
            telemetry: None,
        }))
    }

    /// Serves one client on this process's stdin and stdout until stdin ends, every request
    /// read answered, then stops the servers; a client that closes its end of stdout is gone,
    /// and what it asked for is cancelled at once.
    ///
    /// # Errors
    ///
    /// [`ProxyError`] when the proxy has no server, or when none of its servers could be
    /// started for the client's `initialize` (which was answered with an error saying why).
    pub async fn serve_stdio(self) -> Result<(), ProxyError> {
        let (read, write) = crate::mcp::transport::stdio();
        let settings = self.settings()?;
        // A client that closes its end of stdout is gone: what it asked for is cancelled.
        let link = link::lines(read, write, crate::mcp::wire::MAX_MESSAGE_BYTES)
            .gone_when(crate::mcp::transport::stdout_gone());
        session::run(settings, link)
            .await
            .map_err(|why| ProxyError::NoneStarted { why })
    }

    /// Serves one client over newline-delimited JSON on `read` and `write` until `read` ends;
    /// every request read is answered before this returns.
    ///
    /// # Errors
    ///
    /// [`ProxyError`] when the proxy has no server, or when none of its servers could be
    /// started for the client's `initialize` (which was answered with an error saying why).
    pub async fn serve<R, W>(self, read: R, write: W) -> Result<(), ProxyError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let settings = self.settings()?;
        let link = link::lines(read, write, crate::mcp::wire::MAX_MESSAGE_BYTES);
        session::run(settings, link)
            .await
            .map_err(|why| ProxyError::NoneStarted { why })
    }

    /// Serves clients over streamable HTTP: each client session gets servers of its own, or
    /// shares them with every other session ([`share_upstreams`](Proxy::share_upstreams)),
    /// which are then started at once.
    ///
    /// # Errors
    ///
    /// [`ProxyError`] when the proxy has no server, or the address cannot be listened on.
    #[cfg(feature = "mcp-http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
    pub async fn serve_http(self, options: HttpOptions) -> Result<HttpServer, ProxyError> {
        let settings = self.settings()?;
        http::check_apart(settings.fitting.store.as_ref()).map_err(ProxyError::Artifacts)?;
        let metrics = crate::mcp::Metrics::new(options.metrics.clone());
        if let Some(shared) = settings.shared.clone() {
            shared.count_into(metrics.clone());
            let connecting = settings.connecting;
            tokio::spawn(async move { shared.start_all(connecting).await });
        }
        if let Some(warm) = &settings.warm {
            for upstream in &settings.upstreams {
                warm.fill(upstream);
            }
        }
        let sessions: http::Sessions = Arc::new(move |link, owner, telemetry| {
            // Each client reads only the artifacts of its own session (or principal).
            let store = http::store_for(&settings.fitting.store, &owner);
            let settings = settings.over(store, Some(telemetry));
            let Ok(settings) = settings else {
                // Its streams end unanswered rather than wait.
                return Box::pin(async {});
            };
            Box::pin(async move {
                // The client was told in its `initialize` answer; the server goes on.
                let _ = session::run(settings, link).await;
            })
        });
        HttpServer::start(options, metrics, sessions)
            .await
            .map_err(ProxyError::Http)
    }
}

/// `read_artifact` over `store`, within `cap`: the registry that runs it, and its listing.
fn reader(
    store: &Arc<dyn ArtifactStore>,
    cap: usize,
) -> Result<(Registry, serde_json::Value), ProxyError> {
    let reader = Registry::builder()
        .budget(
            BudgetPolicy::default()
                .with_batch_budget_chars(cap)
                .with_per_result_max_chars(Some(cap)),
        )
        .tool(ReadArtifact::new(Arc::clone(store)))
        .build()
        .map_err(|error| ProxyError::Reader(Box::new(error)))?;
    let spec = reader
        .get(READ_ARTIFACT)
        .map(|tool| tool.spec().clone())
        .ok_or_else(|| ProxyError::Reader("read_artifact is missing".into()))?;
    let mut listing = Dialect::Mcp
        .render(&spec)
        .map_err(|error| ProxyError::Reader(Box::new(error)))?;
    listing["_meta"] = serde_json::json!({ crate::mcp::caps::MAX_RESULT_META_KEY: cap });
    Ok((reader, listing))
}

/// Why a proxy could not serve, a variant a caller can match.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// The proxy was given no server to relay to.
    #[error("a proxy needs at least one server to relay to")]
    NoUpstreams,
    /// The artifact store cannot serve each client apart, or a principal's name cannot name
    /// one's artifacts.
    #[error("{0}")]
    Artifacts(crate::artifacts::ArtifactError),
    /// No server could be started; the client's `initialize` was answered with the same words.
    #[error("{why}")]
    NoneStarted {
        /// For each server, why it did not start (its command, its exit status, its last
        /// stderr lines).
        why: String,
    },
    /// The proxy's own `read_artifact` could not be set up with the proxy's cap.
    #[error("the proxy's read_artifact could not be set up ({0})")]
    Reader(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Its HTTP endpoint could not listen, or stopped with a failure.
    #[cfg(feature = "mcp-http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
    #[error(transparent)]
    Http(#[from] crate::mcp::HttpError),
    /// A server's settings are wrong: a tool pattern ([`Upstream::allow_tools`],
    /// [`Upstream::deny_tools`]) that is not a glob is
    /// [`ConfigError::ToolPattern`](crate::mcp::ConfigError::ToolPattern), as in a
    /// configuration file.
    #[error(transparent)]
    Config(#[from] crate::mcp::ConfigError),
}

/// What the proxy does with one `tools/call` answer an upstream sends: the line read as a
/// message, its result fitted to `cap` chars and to `tokens`, if given, for a tool with
/// `output_schema`, if given (the full output kept in memory), and the answer written for the
/// client as one line. The instruction-count gate and the signal gate measure it; not public
/// API.
#[doc(hidden)]
pub async fn relay_tool_answer(
    line: Vec<u8>,
    cap: usize,
    tokens: Option<crate::tokens::TokenCap>,
    output_schema: Option<&serde_json::Value>,
) -> String {
    let schema = output_schema.map(crate::structure::OutputSchema::new);
    let wire::Received::Message(message) = wire::parse_owned(line) else {
        return String::new();
    };
    let fitting = outgoing::Fitting {
        tokens,
        ..outgoing::Fitting::new(
            cap,
            Arc::new(crate::artifacts::MemoryStore::new()),
            MediaLimits::default(),
        )
    };
    let id = message.id.unwrap_or(serde_json::Value::Null);
    let Some(result) = message.result else {
        return String::new();
    };
    let call = outgoing::Call {
        tool: "tool",
        schema: schema.as_ref(),
        send: crate::mcp::outgoing::Copies::Auto,
    };
    match outgoing::tool_result(&result, &call, &fitting).await {
        Ok((fitted, _)) => wire::answer(&id, Ok(wire::raw(&fitted))),
        Err(why) => wire::answer(&id, Ok(wire::raw(&outgoing::error_result(why)))),
    }
}
