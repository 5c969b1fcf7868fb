//! One client's session with the proxy.
//!
//! The client's `initialize` starts the upstreams, each initialized with the client's own
//! params (its capabilities, its name), so each server sees the client it really serves. Then
//! every message goes through as it came, with three exceptions: listings gain the cap (and a
//! server's name where names collide), results are fitted to the cap, and the ids of requests
//! are mapped between the two sides. Requests a server sends (sampling, elicitation, roots)
//! go to the client and their answers back; notifications go through in order, before the
//! answer they preceded.

use crate::sync::lock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::peer::{Incoming, Outcome, Peer, Side};
use super::upstream::{Connecting, Live, Upstream};
use crate::mcp::caps;
use crate::mcp::link::Link;
use crate::mcp::outgoing::structure::OutputSchema;
use crate::mcp::outgoing::{self, Copies, Fitting};
use crate::mcp::wire::{self, Raw, era};
use crate::mcp::wire::{INTERNAL_ERROR, METHOD_NOT_FOUND};
use crate::mcp::wire::{INVALID_PARAMS, INVALID_REQUEST, missing_params};
use crate::registry::Registry;

mod calls;
mod crossing;
mod listen;
mod listing;
mod progress;
mod search;
mod servers;
pub(crate) mod shared;

/// JSON-RPC's "method not found".
/// The most pages of one listing read from a server, and the most items kept (tools: the cap
/// on tools): a server that hands out cursors forever, or lists without end, is read this far
/// and no further.
const MAX_PAGES: usize = caps::MAX_RELAYED_PAGES;
const MAX_ITEMS: usize = 10_000;

/// What every session of a proxy shares.
#[derive(Debug)]
pub(crate) struct Settings {
    pub(crate) upstreams: Vec<Upstream>,
    pub(crate) fitting: Fitting,
    pub(crate) timeout: Duration,
    pub(crate) connecting: Connecting,
    /// Runs `read_artifact` calls over the proxy's store, within the cap.
    pub(crate) reader: Registry,
    /// `read_artifact` as `tools/list` lists it.
    pub(crate) reader_listing: Value,
    /// Whether the servers' tools wait for `search_tools` to find them.
    pub(crate) tool_search: bool,
    /// The servers every session shares, when they are shared.
    pub(crate) shared: Option<Arc<shared::Shared>>,
    /// Server processes started ahead of the sessions that will take them.
    pub(crate) warm: Option<Arc<super::upstream::Warm>>,
    /// Which tools of each server are served, by the server's place in `upstreams`.
    pub(crate) filters: Arc<[super::filter::ToolFilter]>,
    /// Where the session's calls are counted, when the endpoint keeps metrics.
    pub(crate) telemetry: Option<crate::mcp::metrics::Telemetry>,
}

// What a gateway's sessions need, with the HTTP front.
#[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
impl Settings {
    /// The same settings, the artifacts kept in `store` (and read from it alone).
    pub(crate) fn over(
        &self,
        store: Arc<dyn crate::artifacts::ArtifactStore>,
        telemetry: Option<crate::mcp::metrics::Telemetry>,
    ) -> Result<Arc<Settings>, super::ProxyError> {
        let (reader, reader_listing) = super::reader(&store, self.fitting.cap)?;
        Ok(Arc::new(Settings {
            upstreams: self.upstreams.clone(),
            fitting: Fitting {
                store,
                ..self.fitting.clone()
            },
            timeout: self.timeout,
            connecting: self.connecting,
            reader,
            reader_listing,
            tool_search: self.tool_search,
            shared: self.shared.clone(),
            warm: self.warm.clone(),
            filters: self.filters.clone(),
            telemetry,
        }))
    }
}

/// The name of the proxy's tool search, and of its tool that calls what a search found.
const SEARCH_TOOLS: &str = crate::registry::SEARCH_TOOLS;
const CALL_TOOL: &str = "call_tool";

/// The servers' tools as a search finds them: their listings (as the client would get them),
/// indexed.
#[derive(Debug)]
struct Searchable {
    index: crate::search::ToolIndex,
    tools: Vec<Value>,
}

/// One server of the session.
#[derive(Debug)]
struct Slot {
    upstream: Upstream,
    live: super::upstream::LiveSlot,
    /// Why the server could not be started when the session began, if it could not.
    failure: Mutex<Option<String>>,
}

/// Where a listed name goes.
#[derive(Debug, Clone)]
struct Route {
    index: usize,
    name: String,
    /// The tool's `outputSchema`, compiled, when it states one.
    output_schema: Option<Arc<OutputSchema>>,
    /// Which copies of its structured results go, for this tool.
    send: Copies,
}

#[derive(Debug, Default)]
struct Routes {
    tools: HashMap<String, Route>,
    tools_listed: bool,
    prompts: HashMap<String, Route>,
    resources: HashMap<String, usize>,
    templates: Vec<(String, usize)>,
}

/// A request of the client's being worked on: the task, and where it was sent.
#[derive(Debug)]
struct InFlight {
    task: tokio::task::AbortHandle,
    sent: Arc<Mutex<Option<(usize, Value)>>>,
}

#[derive(Debug)]
struct Session {
    settings: Arc<Settings>,
    client: Arc<Peer>,
    slots: Vec<Slot>,
    /// The client's `initialize` params, once it sent them.
    params: OnceLock<Value>,
    /// Whether the client's `initialize` was read: the requests read after it wait for its
    /// answer rather than being refused.
    initialize_read: AtomicBool,
    /// `true` once `initialize` was answered.
    ready: tokio::sync::watch::Sender<bool>,
    /// Held by every request's task: once the client's input ended, the session waits for all
    /// of them to be answered (the receiver sees the channel close).
    working: Mutex<Option<tokio::sync::mpsc::Sender<()>>>,
    /// Why no server could be started, when that was the answer to `initialize`.
    none_started: Mutex<Option<String>>,
    /// Whether the client sent `notifications/initialized`.
    initialized: AtomicBool,
    /// Whether the client speaks 2026-07-28 (no handshake: every request carries its envelope,
    /// the first one started the servers).
    modern: AtomicBool,
    /// The answer the servers' start made (what `initialize` answers, and `server/discover`
    /// is made from).
    started_answer: OnceLock<Result<Value, Value>>,
    /// The log levels the client's requests in flight opted in to (2026-07-28), by request.
    log_levels: Mutex<HashMap<String, String>>,
    /// The level a client of the handshake era set with `logging/setLevel`: a server of
    /// 2026-07-28 (which has no such method) is asked for it in each call's envelope.
    log_level: Mutex<Option<String>>,
    /// For a 2026-07-28 client: where a server's requests go while a call waits on it (the
    /// call that waits last), by the server's place.
    asking: Mutex<HashMap<usize, tokio::sync::mpsc::Sender<crossing::Ask>>>,
    /// Calls parked until their client answers a server's question, by the nonce sealed into
    /// the client's `requestState`.
    parked: Mutex<HashMap<String, crossing::Parked>>,
    /// A 2026-07-28 client's open `subscriptions/listen` requests, by request.
    listens: Mutex<HashMap<String, listen::Listen>>,
    routes: Mutex<Routes>,
    in_flight: Mutex<HashMap<String, InFlight>>,
    /// A server's request relayed to the client: `(server, its id)` → the id the client saw.
    relayed: Mutex<HashMap<(usize, String), Value>>,
    /// The progress tokens of the session's requests to its own servers, in flight.
    progress: Arc<progress::ProgressRoutes>,
    /// With tool search: the servers' tools, indexed (rebuilt when a server's list changes).
    searchable: Mutex<Option<Arc<Searchable>>>,
    /// With tool search: the tools the session's searches found, in the order found.
    loaded: Mutex<crate::registry::Loaded>,
    /// The listing a client is paging through, by the number of the listing: a cursor names
    /// the listing and where in it the next page starts.
    paged: Mutex<Option<(u64, Arc<Vec<Value>>)>>,
    /// The ids of the tasks this session's calls made: with shared servers, the only ones it
    /// may read, cancel or list.
    tasks: Mutex<std::collections::HashSet<String>>,
    me: Weak<Session>,
}

fn key(id: &Value) -> String {
    id.to_string()
}

/// Raw JSON read as a value (`null` when it cannot be).
fn value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// The answer to a request of `method` a proxy of several servers cannot route.
fn unroutable(method: &str) -> Outcome {
    failed(
        METHOD_NOT_FOUND,
        format!(
            "method not found: `{method}` (this proxy relays to several servers and cannot tell \
             which one it is for)"
        ),
    )
}

/// A result the relay made.
fn ok(result: &Value) -> Outcome {
    Ok(wire::raw(result))
}

/// An error answer the relay made.
fn failed(code: i64, why: impl Into<String>) -> Outcome {
    Err(wire::raw(&wire::error(code, why)))
}

/// An error object as raw JSON, for `?` in what returns an [`Outcome`].
fn raw_error(error: Value) -> Raw {
    wire::raw(&error)
}

/// Serves one client over `link` until it goes away; then every server of the session is
/// stopped. When the client's input ends while it can still read, every request read is
/// answered first.
///
/// # Errors
///
/// Why no server could be started, when the client's `initialize` was answered with that.
pub(crate) async fn run(settings: Arc<Settings>, link: Link) -> Result<(), String> {
    let slots = settings
        .upstreams
        .iter()
        .map(|upstream| Slot {
            upstream: upstream.clone(),
            live: tokio::sync::Mutex::new(None),
            failure: Mutex::new(None),
        })
        .collect();
    let (client, from_client) = Peer::unstarted("the client", link);
    let (working, mut all_answered) = tokio::sync::mpsc::channel::<()>(1);
    let session = Arc::new_cyclic(|me| Session {
        settings,
        client,
        slots,
        params: OnceLock::new(),
        initialize_read: AtomicBool::new(false),
        ready: tokio::sync::watch::Sender::new(false),
        working: Mutex::new(Some(working)),
        none_started: Mutex::new(None),
        initialized: AtomicBool::new(false),
        modern: AtomicBool::new(false),
        started_answer: OnceLock::new(),
        log_levels: Mutex::default(),
        log_level: Mutex::default(),
        asking: Mutex::default(),
        parked: Mutex::default(),
        listens: Mutex::default(),
        routes: Mutex::default(),
        in_flight: Mutex::default(),
        relayed: Mutex::default(),
        progress: Arc::default(),
        searchable: Mutex::default(),
        loaded: Mutex::default(),
        paged: Mutex::default(),
        tasks: Mutex::default(),
        me: me.clone(),
    });
    // The client's messages are handled by the task that reads them, once the session they
    // go to exists.
    let handler = Arc::downgrade(&session);
    let on_client = move |_, incoming| -> BoxFuture<'static, ()> {
        let handler = handler.clone();
        Box::pin(async move {
            if let Some(session) = handler.upgrade() {
                session.on_client(incoming).await;
            }
        })
    };
    session
        .client
        .dispatch(from_client, Side::Client, on_client);
    session.client.closed.cancelled().await;
    // The client's input ended. If it can still read, what it asked for is finished and
    // answered; then the servers stop.
    lock(&session.working).take();
    // A listen is answered only when its stream ends: it ends now.
    let listening: Vec<String> = lock(&session.listens).keys().cloned().collect();
    for listen in listening {
        if let Some(flight) = lock(&session.in_flight).remove(&listen) {
            flight.task.abort();
        }
    }
    if !session.client.is_gone() {
        tokio::select! {
            _ = all_answered.recv() => {}
            () = session.client.gone() => {}
        }
    }
    // The client is gone: what it asked for stops, and so do the servers.
    let flights: Vec<InFlight> = lock(&session.in_flight).drain().map(|(_, f)| f).collect();
    for flight in flights {
        flight.task.abort();
        // A shared server goes on: it is told what no one waits for any more.
        if session.settings.shared.is_some() {
            session.cancel_sent(&flight, None).await;
        }
    }
    // Parked calls hold their servers too.
    lock(&session.parked).clear();
    for slot in &session.slots {
        slot.live.lock().await.take();
    }
    lock(&session.none_started).take().map_or(Ok(()), Err)
}

impl Session {
    fn arc(&self) -> Arc<Session> {
        self.me
            .upgrade()
            .expect("a session is alive while it handles messages")
    }

    async fn on_client(&self, incoming: Incoming) {
        match incoming {
            Incoming::Request { id, method, params } => {
                let params = params.as_deref().map(value);
                let message = json!({ "id": id, "method": method, "params": params });
                let message = match params {
                    None => json!({ "id": id, "method": method }),
                    Some(_) => message,
                };
                if let Some((id, why)) = missing_params(&message) {
                    self.client.answer(&id, failed(INVALID_PARAMS, why)).await;
                    return;
                }
                // The first message decides the era: `initialize`, or a request carrying the
                // 2026-07-28 envelope (which then every request of the session carries).
                let modern = self.modern.load(Ordering::SeqCst)
                    || (method != "initialize"
                        && !self.initialize_read.load(Ordering::SeqCst)
                        && (era::has_envelope(params.as_ref()) || method == "server/discover"));
                let mut params = params;
                if modern {
                    if let Some(refusal) = era::removed(&method) {
                        let error = wire::raw(&refusal.error());
                        self.client.answer(&id, Err(error)).await;
                        return;
                    }
                    match era::check(&method, params.as_ref(), None) {
                        Ok(envelope) => {
                            if let Some(level) = &envelope.log_level {
                                lock(&self.log_levels).insert(key(&id), level.clone());
                            }
                            self.start_modern(&envelope);
                        }
                        Err(refusal) => {
                            let error = wire::raw(&refusal.error());
                            self.client.answer(&id, Err(error)).await;
                            return;
                        }
                    }
                    // A call reads what its client declares it can be asked, and strips it.
                    if let Some(params) = params
                        .as_mut()
                        .filter(|_| method != "tools/call" && method != "prompts/get")
                    {
                        era::without_envelope(params);
                    }
                } else if method == "ping" {
                    self.client.answer(&id, ok(&json!({}))).await;
                    return;
                } else if method == "initialize" {
                    self.initialize_read.store(true, Ordering::SeqCst);
                } else if !self.initialize_read.load(Ordering::SeqCst) {
                    let why = "the session is not initialized; send `initialize` first, or \
                               speak protocol 2026-07-28 (its envelope in every request's \
                               params._meta)";
                    self.client.answer(&id, failed(INVALID_REQUEST, why)).await;
                    return;
                }
                let Some(working) = lock(&self.working).clone() else {
                    return;
                };
                let session = self.arc();
                let sent = Arc::new(Mutex::new(None));
                let task_sent = Arc::clone(&sent);
                let task_id = id.clone();
                // Recorded before the task can finish: it removes its record under the lock.
                let mut in_flight = lock(&self.in_flight);
                let task = tokio::spawn(async move {
                    let _working = working;
                    if method != "initialize" {
                        // Read after `initialize`: it goes on once `initialize` is answered.
                        let _ = session.ready.subscribe().wait_for(|ready| *ready).await;
                    }
                    let mut outcome = if modern && method == "subscriptions/listen" {
                        session.listen(&task_id, params).await
                    } else {
                        session.request(&method, params, &task_sent).await
                    };
                    if modern {
                        outcome = session.stamped(&method, outcome);
                        lock(&session.log_levels).remove(&key(&task_id));
                    }
                    lock(&session.in_flight).remove(&key(&task_id));
                    session.client.answer(&task_id, outcome).await;
                });
                in_flight.insert(
                    key(&id),
                    InFlight {
                        task: task.abort_handle(),
                        sent,
                    },
                );
            }
            Incoming::Notification { method, params } => match method.as_str() {
                "notifications/cancelled" => self.cancelled(params.as_deref().map(value)).await,
                "notifications/initialized" => {
                    self.initialized.store(true, Ordering::SeqCst);
                    self.broadcast(&method, params).await;
                }
                _ => self.broadcast(&method, params).await,
            },
        }
    }

    /// Starts the session's servers for a client of 2026-07-28, once: with the capabilities
    /// and the name its first request's envelope states, at the newest version of the
    /// handshake a server speaks.
    fn start_modern(&self, envelope: &era::Envelope) {
        if self.initialize_read.swap(true, Ordering::SeqCst) {
            return;
        }
        self.modern.store(true, Ordering::SeqCst);
        let client_info = envelope
            .client_info
            .clone()
            .unwrap_or_else(|| json!({ "name": "a 2026-07-28 client", "version": "0" }));
        let params = json!({
            "protocolVersion": era::LATEST_HANDSHAKE,
            "capabilities": envelope.capabilities,
            "clientInfo": client_info,
        });
        let session = self.arc();
        tokio::spawn(async move {
            let _ = session.initialize(params).await;
            // No `notifications/initialized` comes from such a client: the servers are told.
            session.initialized.store(true, Ordering::SeqCst);
            for slot in &session.slots {
                let live = slot.live.lock().await.clone();
                if let Some(live) = live {
                    live.peer.notify("notifications/initialized", None).await;
                }
            }
        });
    }

    /// The answer to a 2026-07-28 client's request of `method`: a result stamped (its type,
    /// a listing's caching, the server's name), an error as it was.
    fn stamped(&self, method: &str, outcome: Outcome) -> Outcome {
        let Ok(raw) = outcome else {
            return outcome;
        };
        let mut result = value(&raw);
        let started = self
            .started_answer
            .get()
            .and_then(|answer| answer.as_ref().ok());
        let server_info = started
            .map(|answer| answer["serverInfo"].clone())
            .unwrap_or_else(
                || json!({ "name": "toolsmith-proxy", "version": env!("CARGO_PKG_VERSION") }),
            );
        era::stamp(method, &mut result, &server_info);
        ok(&result)
    }

    /// `server/discover`: the versions served, and what the servers' start made of their
    /// capabilities and instructions (as `initialize` answers them).
    fn discover(&self) -> Result<Value, Value> {
        match self.started_answer.get() {
            Some(Ok(answer)) => Ok(era::discover(
                &answer["capabilities"],
                answer["instructions"].as_str(),
            )),
            Some(Err(error)) => Err(error.clone()),
            None => Err(wire::error(INTERNAL_ERROR, "the servers have not started")),
        }
    }

    /// Whether a log message at `level` goes to the client: a client of the handshake era gets
    /// every one (its level set by `logging/setLevel` at the servers); a 2026-07-28 client only
    /// one at or above a level a request of it in flight opted in to.
    fn wants_log(&self, level: &str) -> bool {
        if !self.modern.load(Ordering::SeqCst) {
            return true;
        }
        lock(&self.log_levels)
            .values()
            .any(|wanted| era::log_wanted(level, Some(wanted)))
    }

    /// The client cancelled a request: its task stops, and the server working on it is told.
    async fn cancelled(&self, params: Option<Value>) {
        let Some(id) = params.as_ref().and_then(|p| p.get("requestId")) else {
            return;
        };
        let Some(flight) = lock(&self.in_flight).remove(&key(id)) else {
            return;
        };
        flight.task.abort();
        self.cancel_sent(&flight, params).await;
    }

    /// Tells the server a request of `flight` went to that it is cancelled (with the client's
    /// own `params`, if it cancelled it).
    async fn cancel_sent(&self, flight: &InFlight, params: Option<Value>) {
        let sent = lock(&flight.sent).take();
        if let Some((index, upstream_id)) = sent
            && let Some(live) = self.current(index).await
        {
            live.peer.forget(&upstream_id);
            let mut forwarded = params.unwrap_or_else(|| json!({}));
            forwarded["requestId"] = upstream_id;
            live.peer
                .notify("notifications/cancelled", Some(wire::raw(&forwarded)))
                .await;
        }
    }

    /// Server `index`, if it is up (the shared one, when servers are shared).
    async fn current(&self, index: usize) -> Option<Arc<Live>> {
        match &self.settings.shared {
            Some(shared) => shared.current(index).await,
            None => self.slots[index].live.lock().await.clone(),
        }
    }

    /// Sends a notification of the client's to every server that is up, as it came. A shared
    /// server is not told one client's news (`initialized`, `roots/list_changed`).
    async fn broadcast(&self, method: &str, params: Option<Raw>) {
        if self.settings.shared.is_some() {
            return;
        }
        for slot in &self.slots {
            let live = slot.live.lock().await.clone();
            if let Some(live) = live {
                live.peer.notify(method, params.clone()).await;
            }
        }
    }

    /// The progress token of a request's `params` to server `index` rewritten, so the
    /// server's progress comes back to this session's call alone, until the route is dropped.
    fn route_progress(
        &self,
        index: usize,
        params: Option<&mut Value>,
    ) -> Option<progress::ProgressRoute> {
        let routes = match &self.settings.shared {
            Some(shared) => &shared.progress,
            None => &self.progress,
        };
        routes.route(index, self.me.clone(), params?)
    }

    /// Whether the task `params` name was made by this session's calls.
    fn owns_task(&self, params: Option<&Value>) -> bool {
        params
            .and_then(|params| params["taskId"].as_str())
            .is_some_and(|id| lock(&self.tasks).contains(id))
    }

    /// Works out the answer to one request of the client's.
    /// A client's request, answered here or routed to its server: listings merged, a tool's
    /// call, a resource's read and a task's result fitted to the cap.
    async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        sent: &Arc<Mutex<Option<(usize, Value)>>>,
    ) -> Outcome {
        let params_or_empty = || params.clone().unwrap_or_else(|| json!({}));
        let made = |outcome: Result<Value, Value>| match outcome {
            Ok(result) => ok(&result),
            Err(error) => Err(raw_error(error)),
        };
        match method {
            "initialize" => made(self.initialize(params_or_empty()).await),
            "server/discover" => made(self.discover()),
            "tools/list" => made(self.list_tools(params.as_ref()).await),
            "tools/call" => self.call_tool(params_or_empty(), sent).await,
            "prompts/list" => made(self.list("prompts/list", "prompts", "prompts").await),
            "resources/list" => made(self.list("resources/list", "resources", "resources").await),
            "resources/templates/list" => made(self.list_templates().await),
            "prompts/get" => {
                let mut params = params_or_empty();
                let name = params["name"].as_str().unwrap_or_default().to_owned();
                let route = self.prompt_route(&name).await.map_err(raw_error)?;
                params["name"] = Value::String(route.name);
                if self.modern.load(Ordering::SeqCst) {
                    // Its server's questions on the way are carried across the eras.
                    return self.get_prompt(params, route.index, sent).await;
                }
                self.forward(route.index, method, Some(params), sent).await
            }
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
                self.resource_request(method, params_or_empty(), sent).await
            }
            "completion/complete" => self.complete(params_or_empty(), sent).await,
            // A shared server's level is every session's: it is not one client's to set.
            "logging/setLevel" if self.settings.shared.is_some() => ok(&json!({})),
            "logging/setLevel" => {
                if let Some(level) = params.as_ref().and_then(|p| p["level"].as_str()) {
                    *lock(&self.log_level) = Some(level.to_owned());
                }
                for index in self.serving("logging").await {
                    // A server that refuses a level is not the client's failure.
                    let _ = self.forward(index, method, params.clone(), sent).await;
                }
                ok(&json!({}))
            }
            "tasks/get" | "tasks/result" | "tasks/cancel" | "tasks/list" => {
                self.task_request(method, params, sent).await
            }
            _ if self.slots.len() == 1 => self.forward(0, method, params, sent).await,
            _ => unroutable(method),
        }
    }

    /// Every server's resource templates, and the proxy's own: every artifact, read in pages.
    async fn list_templates(&self) -> Result<Value, Value> {
        let mut listing = self
            .list("resources/templates/list", "resourceTemplates", "resources")
            .await?;
        if let Some(templates) = listing["resourceTemplates"].as_array_mut() {
            templates.push(crate::artifacts::artifact_template());
        }
        Ok(listing)
    }

    /// A request about a resource: an artifact's read answered here, any other routed to the
    /// server that lists it, a read fitted to the cap. Subscriptions to shared servers are
    /// refused (one client's updates cannot be told from another's).
    async fn resource_request(
        &self,
        method: &str,
        params: Value,
        sent: &Arc<Mutex<Option<(usize, Value)>>>,
    ) -> Outcome {
        let uri = params["uri"].as_str().unwrap_or_default().to_owned();
        if method == "resources/read" && uri.starts_with(crate::artifacts::ArtifactId::URI_PREFIX) {
            return self.read_artifact_resource(&uri).await;
        }
        if method != "resources/read" && self.settings.shared.is_some() {
            return failed(
                METHOD_NOT_FOUND,
                "this gateway shares its servers among its clients, and a resource's updates \
                 cannot be sent to one of them: subscriptions are not served",
            );
        }
        let index = self.resource_route(&uri).await.map_err(raw_error)?;
        let outcome = self.forward(index, method, Some(params), sent).await?;
        if method != "resources/read" {
            return Ok(outcome);
        }
        match serde_json::from_str(outcome.get()) {
            Ok(read) => ok(&outgoing::resource_contents(read, &self.settings.fitting).await),
            Err(error) => failed(
                INTERNAL_ERROR,
                format!(
                    "the MCP server `{}` sent a resource that cannot be read: {error}",
                    self.slots[index].upstream.name
                ),
            ),
        }
    }

    /// A completion, routed by what it completes: a prompt's argument to the prompt's server,
    /// a resource template's to the resource's.
    async fn complete(
        &self,
        mut params: Value,
        sent: &Arc<Mutex<Option<(usize, Value)>>>,
    ) -> Outcome {
        let reference = params["ref"].clone();
        let index = match reference["type"].as_str() {
            Some("ref/prompt") => {
                let name = reference["name"].as_str().unwrap_or_default();
                let route = self.prompt_route(name).await.map_err(raw_error)?;
                params["ref"]["name"] = Value::String(route.name);
                route.index
            }
            _ => {
                let uri = reference["uri"].as_str().unwrap_or_default();
                self.resource_route(uri).await.map_err(raw_error)?
            }
        };
        self.forward(index, "completion/complete", Some(params), sent)
            .await
    }

    /// A request about a task, to the one server: a shared server's tasks are every session's,
    /// so each session reaches and lists only its own; a task's result is a tool's result,
    /// fitted as any other.
    async fn task_request(
        &self,
        method: &str,
        params: Option<Value>,
        sent: &Arc<Mutex<Option<(usize, Value)>>>,
    ) -> Outcome {
        let shared = self.settings.shared.is_some();
        if shared && method != "tasks/list" && !self.owns_task(params.as_ref()) {
            let id = params
                .as_ref()
                .and_then(|params| params["taskId"].as_str())
                .unwrap_or_default();
            return failed(INVALID_PARAMS, format!("Task not found: `{id}`"));
        }
        if self.slots.len() != 1 {
            return unroutable(method);
        }
        let outcome = self.forward(0, method, params, sent).await?;
        match method {
            "tasks/list" if shared => {
                let mut listed = value(&outcome);
                let own = lock(&self.tasks).clone();
                if let Some(tasks) = listed.get_mut("tasks").and_then(Value::as_array_mut) {
                    tasks.retain(|task| task["taskId"].as_str().is_some_and(|id| own.contains(id)));
                }
                ok(&listed)
            }
            "tasks/result" => {
                let call = outgoing::Call {
                    tool: "tasks/result",
                    schema: None,
                    send: Copies::Both,
                };
                match outgoing::tool_result(&outcome, &call, &self.settings.fitting).await {
                    Ok((fitted, _)) => ok(&fitted),
                    Err(why) => ok(&outgoing::error_result(format!(
                        "the MCP server `{}` sent a task result that cannot be read: {why}",
                        self.slots[0].upstream.name
                    ))),
                }
            }
            _ => Ok(outcome),
        }
    }
}
