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
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use futures_util::future::{BoxFuture, join_all};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::fit::{self, Fitting};
use super::link::Link;
use super::peer::{INTERNAL_ERROR, Incoming, Outcome, Peer, Side};
use super::upstream::{self, Connecting, Live, Prefix, Upstream, error_text};
use crate::artifacts::{ArtifactId, READ_ARTIFACT};
use crate::mcp::caps::{self, MAX_RESULT_META_KEY};
use crate::mcp::client::PREFIX_SEPARATOR;
use crate::mcp::structure::OutputSchema;
use crate::mcp::wire::bounded;
use crate::mcp::wire::{self, Raw};
use crate::mcp::wire::{INVALID_PARAMS, INVALID_REQUEST, missing_params};
use crate::registry::{Registry, ToolCall};
use crate::trim::grouped;

/// JSON-RPC's "method not found".
const METHOD_NOT_FOUND: i64 = -32601;
/// The most pages of one listing read from a server, and the most items kept (tools: the cap
/// on tools): a server that hands out cursors forever, or lists without end, is read this far
/// and no further.
const MAX_PAGES: usize = caps::MAX_LIST_PAGES;
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
    live: tokio::sync::Mutex<Option<Arc<Live>>>,
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
    routes: Mutex<Routes>,
    in_flight: Mutex<HashMap<String, InFlight>>,
    /// A server's request relayed to the client: `(server, its id)` → the id the client saw.
    relayed: Mutex<HashMap<(usize, String), Value>>,
    /// With tool search: the servers' tools, indexed (rebuilt when a server's list changes).
    searchable: Mutex<Option<Arc<Searchable>>>,
    /// With tool search: the tools the session's searches found, in the order found.
    loaded: Mutex<crate::registry::Loaded>,
    me: Weak<Session>,
}

fn key(id: &Value) -> String {
    id.to_string()
}

/// Raw JSON read as a value (`null` when it cannot be).
fn value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
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
        routes: Mutex::default(),
        in_flight: Mutex::default(),
        relayed: Mutex::default(),
        searchable: Mutex::default(),
        loaded: Mutex::default(),
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
    if !session.client.is_gone() {
        tokio::select! {
            _ = all_answered.recv() => {}
            () = session.client.gone() => {}
        }
    }
    // The client is gone: what it asked for stops, and so do the servers.
    for (_, flight) in lock(&session.in_flight).drain() {
        flight.task.abort();
    }
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
                if method == "ping" {
                    self.client.answer(&id, ok(&json!({}))).await;
                    return;
                }
                if method == "initialize" {
                    self.initialize_read.store(true, Ordering::SeqCst);
                } else if !self.initialize_read.load(Ordering::SeqCst) {
                    let why = "the session is not initialized; send `initialize` first";
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
                    let outcome = session.request(&method, params, &task_sent).await;
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

    /// The client cancelled a request: its task stops, and the server working on it is told.
    async fn cancelled(&self, params: Option<Value>) {
        let Some(id) = params.as_ref().and_then(|p| p.get("requestId")) else {
            return;
        };
        let Some(flight) = lock(&self.in_flight).remove(&key(id)) else {
            return;
        };
        flight.task.abort();
        let sent = lock(&flight.sent).take();
        if let Some((index, upstream_id)) = sent
            && let Some(live) = self.slots[index].live.lock().await.clone()
        {
            live.peer.forget(&upstream_id);
            let mut forwarded = params.clone().unwrap_or_else(|| json!({}));
            forwarded["requestId"] = upstream_id;
            live.peer
                .notify("notifications/cancelled", Some(wire::raw(&forwarded)))
                .await;
        }
    }

    /// Sends a notification of the client's to every server that is up, as it came.
    async fn broadcast(&self, method: &str, params: Option<Raw>) {
        for slot in &self.slots {
            let live = slot.live.lock().await.clone();
            if let Some(live) = live {
                live.peer.notify(method, params.clone()).await;
            }
        }
    }

    /// Works out the answer to one request of the client's.
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
            "tools/list" => made(self.list_tools().await),
            "tools/call" => self.call_tool(params_or_empty(), sent).await,
            "prompts/list" => made(self.list("prompts/list", "prompts", "prompts").await),
            "resources/list" => made(self.list("resources/list", "resources", "resources").await),
            "resources/templates/list" => made(
                self.list("resources/templates/list", "resourceTemplates", "resources")
                    .await,
            ),
            "prompts/get" => {
                let mut params = params_or_empty();
                let name = params["name"].as_str().unwrap_or_default().to_owned();
                let route = self.prompt_route(&name).await.map_err(raw_error)?;
                params["name"] = Value::String(route.name);
                self.forward(route.index, method, Some(params), sent).await
            }
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
                let uri = params_or_empty()["uri"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let index = self.resource_route(&uri).await.map_err(raw_error)?;
                let outcome = self.forward(index, method, params, sent).await?;
                if method == "resources/read" {
                    match serde_json::from_str(outcome.get()) {
                        Ok(read) => ok(&fit::resource_contents(read, &self.settings.fitting).await),
                        Err(error) => failed(
                            INTERNAL_ERROR,
                            format!(
                                "the MCP server `{}` sent a resource that cannot be read: {error}",
                                self.slots[index].upstream.name
                            ),
                        ),
                    }
                } else {
                    Ok(outcome)
                }
            }
            "completion/complete" => {
                let mut params = params_or_empty();
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
                self.forward(index, method, Some(params), sent).await
            }
            "logging/setLevel" => {
                for index in self.serving("logging").await {
                    // A server that refuses a level is not the client's failure.
                    let _ = self.forward(index, method, params.clone(), sent).await;
                }
                ok(&json!({}))
            }
            // A task's result is a tool's result, fitted as any other.
            "tasks/result" if self.slots.len() == 1 => {
                let outcome = self.forward(0, method, params, sent).await?;
                match fit::tool_result(&outcome, None, &self.settings.fitting).await {
                    Ok(fitted) => ok(&fitted),
                    Err(why) => ok(&fit::error_result(format!(
                        "the MCP server `{}` sent a task result that cannot be read: {why}",
                        self.slots[0].upstream.name
                    ))),
                }
            }
            _ if self.slots.len() == 1 => self.forward(0, method, params, sent).await,
            _ => failed(
                METHOD_NOT_FOUND,
                format!(
                    "method not found: `{method}` (this proxy relays to several servers and cannot tell which one it is for)"
                ),
            ),
        }
    }

    /// Starts the servers with the client's own `initialize`, and answers for them together.
    async fn initialize(&self, params: Value) -> Result<Value, Value> {
        if self.params.set(params.clone()).is_err() {
            return Err(wire::error(
                INVALID_REQUEST,
                "the session is already initialized",
            ));
        }
        let starting = self
            .slots
            .iter()
            .enumerate()
            .map(|(index, _)| self.live(index));
        let started = join_all(starting).await;
        let answer = self.started(started);
        self.ready.send_replace(true);
        answer
    }

    /// The answer to `initialize`, from how each server's start went.
    fn started(&self, started: Vec<Result<Arc<Live>, String>>) -> Result<Value, Value> {
        let mut answers: Vec<(usize, Value)> = Vec::new();
        let mut failures: Vec<String> = Vec::new();
        for (index, outcome) in started.into_iter().enumerate() {
            match outcome {
                Ok(live) => answers.push((index, live.initialized.clone())),
                Err(why) => {
                    tracing::warn!(server = %self.slots[index].upstream.name, "{why}");
                    *lock(&self.slots[index].failure) = Some(why.clone());
                    failures.push(why);
                }
            }
        }
        if answers.is_empty() {
            let why = format!(
                "no server of this proxy could be started: {}",
                failures.join("; ")
            );
            *lock(&self.none_started) = Some(why.clone());
            return Err(wire::error(INTERNAL_ERROR, why));
        }
        Ok(self.initialize_result(&answers, &failures))
    }

    /// What the client is told of the servers: one server's own answer, or several merged.
    fn initialize_result(&self, answers: &[(usize, Value)], failures: &[String]) -> Value {
        let mut result = if let [(_, only)] = answers
            && self.slots.len() == 1
        {
            only.clone()
        } else {
            let versions = answers
                .iter()
                .filter_map(|(_, answer)| answer["protocolVersion"].as_str());
            let version = versions.min().unwrap_or("2025-06-18").to_owned();
            let capabilities = answers.iter().fold(json!({}), |merged, (_, answer)| {
                merge(merged, &answer["capabilities"])
            });
            let instructions: Vec<String> = answers
                .iter()
                .filter_map(|(index, answer)| {
                    let text = answer["instructions"].as_str()?;
                    Some(format!(
                        "From the server `{}`:\n{text}",
                        self.slots[*index].upstream.name
                    ))
                })
                .collect();
            let mut result = json!({
                "protocolVersion": version,
                "capabilities": capabilities,
                "serverInfo": { "name": "toolsmith-proxy", "version": crate::VERSION },
            });
            if !instructions.is_empty() {
                result["instructions"] = Value::String(instructions.join("\n\n"));
            }
            result
        };
        // read_artifact is a tool of the proxy's own: tools are always served.
        if !result["capabilities"].is_object() {
            result["capabilities"] = json!({});
        }
        if !result["capabilities"]["tools"].is_object() {
            result["capabilities"]["tools"] = json!({});
        }
        if !failures.is_empty() {
            let note = failures
                .iter()
                .map(|why| format!("Not available: {why}."))
                .collect::<Vec<_>>()
                .join("\n");
            let text = match result["instructions"].as_str() {
                Some(text) => format!("{text}\n\n{note}"),
                None => note,
            };
            result["instructions"] = Value::String(text);
        }
        result
    }

    /// The live session of server `index`, started (again) when it is not up.
    async fn live(&self, index: usize) -> Result<Arc<Live>, String> {
        let slot = &self.slots[index];
        let mut live = slot.live.lock().await;
        if let Some(up) = live.as_ref()
            && !up.peer.is_closed()
        {
            return Ok(Arc::clone(up));
        }
        *live = None;
        let params = self
            .params
            .get()
            .cloned()
            .ok_or_else(|| "the session is not initialized".to_owned())?;
        let session = self.me.clone();
        let on_incoming = move |peer: Arc<Peer>, incoming: Incoming| -> BoxFuture<'static, ()> {
            let session = session.clone();
            Box::pin(async move {
                if let Some(session) = session.upgrade() {
                    session.on_upstream(index, peer, incoming).await;
                }
            })
        };
        let started = upstream::start(
            &slot.upstream,
            &params,
            self.settings.connecting,
            on_incoming,
        )
        .await
        .map(Arc::new)?;
        if self.initialized.load(Ordering::SeqCst) {
            // Started again mid-session: it is told the client is initialized at once.
            started.peer.notify("notifications/initialized", None).await;
        }
        *live = Some(Arc::clone(&started));
        Ok(started)
    }

    /// The servers up (or startable) that declared `capability`.
    async fn serving(&self, capability: &str) -> Vec<usize> {
        let mut serving = Vec::new();
        for (index, slot) in self.slots.iter().enumerate() {
            if lock(&slot.failure).is_some() {
                continue;
            }
            if let Ok(live) = self.live(index).await
                && !live.initialized["capabilities"][capability].is_null()
            {
                serving.push(index);
            }
        }
        serving
    }

    /// Sends a request of the client's to server `index` and waits for its answer (recording
    /// where it went, so a cancellation follows it).
    async fn forward(
        &self,
        index: usize,
        method: &str,
        params: Option<Value>,
        sent: &Arc<Mutex<Option<(usize, Value)>>>,
    ) -> Outcome {
        let live = self
            .live(index)
            .await
            .map_err(|why| raw_error(wire::error(INTERNAL_ERROR, why)))?;
        let pending = live
            .peer
            .request(method, params.as_ref().map(wire::raw))
            .await;
        *lock(sent) = Some((index, pending.id.clone()));
        pending.answer().await
    }

    /// Reads every page of a listing of server `index` (bounded).
    async fn list_all(
        &self,
        index: usize,
        method: &str,
        field: &str,
    ) -> Result<Vec<Value>, String> {
        let live = self.live(index).await?;
        let name = &self.slots[index].upstream.name;
        let mut items = Vec::new();
        let mut cursor: Option<Value> = None;
        let mut seen = HashSet::new();
        for _ in 0..MAX_PAGES {
            let params = cursor
                .take()
                .map(|cursor| wire::raw(&json!({ "cursor": cursor })));
            let pending = live.peer.request(method, params).await;
            let id = pending.id.clone();
            let answer =
                match tokio::time::timeout(self.settings.connecting.init_timeout, pending.answer())
                    .await
                {
                    Ok(Ok(answer)) => answer,
                    Ok(Err(error)) => {
                        return Err(format!(
                            "`{method}` of `{name}` failed: {}",
                            error_text(&value(&error))
                        ));
                    }
                    Err(_) => {
                        live.peer.forget(&id);
                        return Err(format!(
                            "`{method}` of `{name}` did not answer within {}",
                            crate::tool::DisplayDuration(self.settings.connecting.init_timeout)
                        ));
                    }
                };
            // Read in memory proportional to what is kept: items past the room are skipped.
            let most = if field == "tools" {
                caps::MAX_TOOLS_PER_SERVER
            } else {
                MAX_ITEMS
            };
            let room = most.saturating_sub(items.len());
            let page = bounded::page(answer.get(), field, room).map_err(|error| {
                format!("`{method}` of `{name}` answered what cannot be read ({error})")
            })?;
            if page.listed > room {
                tracing::warn!(server = %name, "`{method}` lists more than {most} items; the rest are not served");
            }
            items.extend(page.items);
            match page.next_cursor {
                Some(next @ Value::String(_)) if items.len() < most => {
                    let text = next.to_string();
                    if !seen.insert(text) {
                        tracing::warn!(server = %name, "`{method}` gave a cursor twice; the listing ends there");
                        return Ok(items);
                    }
                    cursor = Some(next);
                }
                _ => return Ok(items),
            }
        }
        tracing::warn!(server = %name, "`{method}` went on past {MAX_PAGES} pages; the rest are not served");
        Ok(items)
    }

    /// The tools the client is offered: every server's, named so no two collide, each with its
    /// cap, then `read_artifact`; with tool search, `search_tools`, `call_tool`, `read_artifact`
    /// and the tools the session's searches found, in the order found.
    async fn list_tools(&self) -> Result<Value, Value> {
        let tools = self.servers_tools().await;
        if !self.settings.tool_search {
            let mut tools = tools;
            tools.push(self.settings.reader_listing.clone());
            return Ok(json!({ "tools": tools }));
        }
        let searchable = self.index(tools);
        let loaded = lock(&self.loaded).clone();
        let mut offered = vec![
            search_listing(searchable.tools.len()),
            call_listing(),
            self.settings.reader_listing.clone(),
        ];
        offered.extend(
            loaded
                .names()
                .iter()
                .filter_map(|name| searchable.tools.iter().find(|t| t["name"] == name.as_str()))
                .cloned(),
        );
        Ok(json!({ "tools": offered }))
    }

    /// Indexes the servers' tools for the search, and keeps the index.
    fn index(&self, tools: Vec<Value>) -> Arc<Searchable> {
        let routes = lock(&self.routes);
        let servers: Vec<Option<&str>> = tools
            .iter()
            .map(|tool| {
                let name = tool["name"].as_str().unwrap_or_default();
                routes
                    .tools
                    .get(name)
                    .map(|route| self.slots[route.index].upstream.name.as_str())
            })
            .collect();
        let index =
            crate::search::ToolIndex::new(tools.iter().zip(&servers).map(|(tool, server)| {
                let text = crate::search::ToolText::new(
                    tool["name"].as_str().unwrap_or_default(),
                    tool["description"].as_str().unwrap_or_default(),
                    &tool["inputSchema"],
                );
                match server {
                    Some(server) => text.with_server(server),
                    None => text,
                }
            }));
        drop(routes);
        let searchable = Arc::new(Searchable { index, tools });
        *lock(&self.searchable) = Some(Arc::clone(&searchable));
        searchable
    }

    /// `search_tools`: the servers' tools that match, best first, whole within the cap; they
    /// are loaded, and the client told its list changed.
    async fn search(&self, arguments: &Value) -> Value {
        let query = arguments["query"].as_str().unwrap_or_default();
        let limit = arguments["limit"]
            .as_u64()
            .map_or(5, |n| n.clamp(1, 20) as usize);
        let existing = lock(&self.searchable).clone();
        let searchable = match existing {
            Some(searchable) if lock(&self.routes).tools_listed => searchable,
            _ => {
                let tools = self.servers_tools().await;
                self.index(tools)
            }
        };
        let hits = searchable.index.search(query, limit);
        if hits.is_empty() {
            return json!({ "content": [{ "type": "text", "text": format!(
                "No tool matches `{query}`. Try broader words of what the tool does (`issue`, \
                 `file`, `browser`, `message`), not a name."
            ) }] });
        }
        let room = self.settings.fitting.cap.saturating_sub(300);
        let mut body = String::new();
        let mut found = Vec::new();
        let mut named_only = Vec::new();
        for hit in hits {
            let tool = &searchable.tools[hit.tool];
            let name = tool["name"].as_str().unwrap_or_default().to_owned();
            let line = tool.to_string();
            if body.chars().count() + line.chars().count() < room {
                body.push_str(&line);
                body.push('\n');
                found.push(name);
            } else {
                named_only.push(name);
            }
        }
        let mut text = format!(
            "[{} of the tools that match `{query}`, best first; they are loaded: call them by \
             name, or with call_tool]\n{body}",
            found.len()
        );
        if !named_only.is_empty() {
            text.push_str(&format!(
                "[also matching, not shown for want of room: {}; search for one of them alone]\n",
                named_only.join(", ")
            ));
        }
        let grew = {
            let mut loaded = lock(&self.loaded);
            let before = loaded.names().len();
            for name in &found {
                loaded.load(name.clone());
            }
            loaded.names().len() > before
        };
        if grew {
            self.client
                .notify("notifications/tools/list_changed", None)
                .await;
        }
        json!({ "content": [{ "type": "text", "text": text }] })
    }

    /// Every server's tools, named so no two collide, each with its cap (and the routes to
    /// them, kept).
    async fn servers_tools(&self) -> Vec<Value> {
        let lists = self.lists_of("tools", "tools/list", "tools").await;
        let named = self.name_all(&lists);
        let cap = self.settings.fitting.cap;
        let mut routes = HashMap::new();
        let mut tools = Vec::with_capacity(named.len() + 1);
        for (index, mut tool, exposed, original) in named {
            let has_output_schema = tool.get("outputSchema").is_some_and(Value::is_object);
            let schemas = tool["inputSchema"].to_string().len()
                + if has_output_schema {
                    tool["outputSchema"].to_string().len()
                } else {
                    0
                };
            let server = &self.slots[index].upstream.name;
            if let Some(why) = caps::schema_refusal(server, &original, schemas) {
                tracing::warn!("{why}");
                continue;
            }
            if let Value::Object(object) = &mut tool {
                object.insert("name".to_owned(), Value::String(exposed.clone()));
                let description = object
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let description = format!("{}{}", caps::description(description), cap_note(cap));
                object.insert("description".to_owned(), Value::String(description));
                let meta = object.entry("_meta").or_insert_with(|| json!({}));
                if let Value::Object(meta) = meta {
                    meta.insert(MAX_RESULT_META_KEY.to_owned(), cap.into());
                }
            }
            let output_schema = tool
                .get("outputSchema")
                .filter(|_| has_output_schema)
                .map(|schema| Arc::new(OutputSchema::new(schema)));
            routes.insert(
                exposed,
                Route {
                    index,
                    name: original,
                    output_schema,
                },
            );
            tools.push(tool);
        }
        let mut table = lock(&self.routes);
        table.tools = routes;
        table.tools_listed = true;
        tools
    }

    /// Names every listed item (`name` field) so no two collide: a server that asks for it,
    /// and every name two servers share (or the proxy's own `read_artifact`), get the server's
    /// name in front. Returns `(server, item, exposed name, the server's name for it)`.
    fn name_all(&self, lists: &[(usize, Vec<Value>)]) -> Vec<(usize, Value, String, String)> {
        let mut count: HashMap<&str, usize> = HashMap::new();
        for (_, list) in lists {
            for item in list {
                if let Some(name) = item["name"].as_str() {
                    *count.entry(name).or_default() += 1;
                }
            }
        }
        let mut taken = HashSet::new();
        let mut named = Vec::new();
        for (index, list) in lists {
            let upstream = &self.slots[*index].upstream;
            for item in list {
                let Some(name) = item["name"].as_str() else {
                    continue;
                };
                let prefixed = upstream.prefix == Prefix::Always
                    || count.get(name).copied().unwrap_or(0) > 1
                    || name == READ_ARTIFACT
                    || (self.settings.tool_search && (name == SEARCH_TOOLS || name == CALL_TOOL));
                let exposed = if prefixed {
                    crate::names::sanitize_tool_name(&format!(
                        "{}{PREFIX_SEPARATOR}{name}",
                        upstream.name
                    ))
                } else {
                    name.to_owned()
                };
                if !taken.insert(exposed.clone()) {
                    tracing::warn!(server = %upstream.name, "`{name}` is listed twice as `{exposed}`; the second is not served");
                    continue;
                }
                named.push((*index, item.clone(), exposed, name.to_owned()));
            }
        }
        named
    }

    /// The listings of every server that serves `capability`, each read whole (`method`'s
    /// pages, the items under `field`); a server whose listing fails is left out, in the log.
    async fn lists_of(
        &self,
        capability: &str,
        method: &str,
        field: &str,
    ) -> Vec<(usize, Vec<Value>)> {
        let servers = self.serving(capability).await;
        let lists = join_all(
            servers
                .iter()
                .map(|&index| self.list_all(index, method, field)),
        )
        .await;
        servers
            .into_iter()
            .zip(lists)
            .filter_map(|(index, list)| match list {
                Ok(list) => Some((index, list)),
                Err(why) => {
                    tracing::warn!("{why}");
                    None
                }
            })
            .collect()
    }

    /// Every server's prompts, resources or templates, in one listing.
    async fn list(&self, method: &str, field: &str, capability: &str) -> Result<Value, Value> {
        let lists = self.lists_of(capability, method, field).await;
        let items: Vec<Value> = if field == "prompts" {
            let named = self.name_all(&lists);
            let mut table = lock(&self.routes);
            table.prompts.clear();
            named
                .into_iter()
                .map(|(index, mut item, exposed, original)| {
                    item["name"] = Value::String(exposed.clone());
                    table.prompts.insert(
                        exposed,
                        Route {
                            index,
                            name: original,
                            output_schema: None,
                        },
                    );
                    item
                })
                .collect()
        } else {
            let mut table = lock(&self.routes);
            let mut items = Vec::new();
            for (index, list) in lists {
                for item in list {
                    if let Some(uri) = item["uri"].as_str() {
                        table.resources.insert(uri.to_owned(), index);
                    }
                    if let Some(template) = item["uriTemplate"].as_str() {
                        table.templates.push((template.to_owned(), index));
                    }
                    items.push(item);
                }
            }
            items
        };
        let mut result = Map::new();
        result.insert(field.to_owned(), Value::Array(items));
        Ok(Value::Object(result))
    }

    async fn prompt_route(&self, name: &str) -> Result<Route, Value> {
        if let Some(route) = lock(&self.routes).prompts.get(name) {
            return Ok(route.clone());
        }
        if self.slots.len() == 1 {
            return Ok(Route {
                index: 0,
                name: name.to_owned(),
                output_schema: None,
            });
        }
        self.list("prompts/list", "prompts", "prompts").await?;
        lock(&self.routes)
            .prompts
            .get(name)
            .cloned()
            .ok_or_else(|| wire::error(INVALID_PARAMS, format!("unknown prompt: `{name}`")))
    }

    async fn resource_route(&self, uri: &str) -> Result<usize, Value> {
        if self.slots.len() == 1 {
            return Ok(0);
        }
        let known = |routes: &Routes| {
            routes.resources.get(uri).copied().or_else(|| {
                // A template's fixed beginning (`file:///{path}` → `file:///`) names its server.
                routes
                    .templates
                    .iter()
                    .filter(|(template, _)| {
                        uri.starts_with(template.split('{').next().unwrap_or_default())
                    })
                    .max_by_key(|(template, _)| {
                        template.split('{').next().unwrap_or_default().len()
                    })
                    .map(|&(_, index)| index)
            })
        };
        if let Some(index) = known(&lock(&self.routes)) {
            return Ok(index);
        }
        self.list("resources/list", "resources", "resources")
            .await?;
        self.list("resources/templates/list", "resourceTemplates", "resources")
            .await?;
        known(&lock(&self.routes)).ok_or_else(|| {
            wire::error(
                INVALID_PARAMS,
                format!("unknown resource: `{uri}` (no server of this proxy lists it)"),
            )
        })
    }

    /// A tool call: `read_artifact` answered here, any other tool sent to its server and its
    /// result fitted to the cap.
    async fn call_tool(
        &self,
        mut params: Value,
        sent: &Arc<Mutex<Option<(usize, Value)>>>,
    ) -> Outcome {
        let mut name = params["name"].as_str().unwrap_or_default().to_owned();
        if name == READ_ARTIFACT {
            return ok(&self.read_artifact(&params).await);
        }
        if self.settings.tool_search && name == SEARCH_TOOLS {
            return ok(&self.search(&params["arguments"]).await);
        }
        if self.settings.tool_search && name == CALL_TOOL {
            // A found tool, called through the tool every client lists.
            let arguments = params["arguments"].clone();
            name = arguments["name"].as_str().unwrap_or_default().to_owned();
            if name == SEARCH_TOOLS || name == CALL_TOOL || name == READ_ARTIFACT {
                return ok(&fit::error_result(format!(
                    "call_tool calls the servers' tools; call `{name}` itself"
                )));
            }
            params["name"] = Value::String(name.clone());
            params["arguments"] = arguments
                .get("arguments")
                .cloned()
                .unwrap_or_else(|| json!({}));
        }
        let route = match self.tool_route(&name).await {
            Some(route) => route,
            None => return failed(INVALID_PARAMS, format!("Unknown tool: `{name}`")),
        };
        params["name"] = Value::String(route.name.clone());
        let live = match self.live(route.index).await {
            Ok(live) => live,
            Err(why) => {
                return ok(&fit::error_result(format!(
                    "{why}; the next call tries to start it again"
                )));
            }
        };
        let pending = live
            .peer
            .request("tools/call", Some(wire::raw(&params)))
            .await;
        let upstream_id = pending.id.clone();
        *lock(sent) = Some((route.index, upstream_id.clone()));
        let server = &self.slots[route.index].upstream.name;
        let answer = match tokio::time::timeout(self.settings.timeout, pending.answer()).await {
            Ok(answer) => answer,
            Err(_) => {
                live.peer.forget(&upstream_id);
                let reason = format!(
                    "timed out after {}",
                    crate::tool::DisplayDuration(self.settings.timeout)
                );
                let cancel = json!({ "requestId": upstream_id, "reason": reason });
                live.peer
                    .notify("notifications/cancelled", Some(wire::raw(&cancel)))
                    .await;
                return ok(&fit::error_result(format!(
                    "the call to `{name}` {reason}; the MCP server `{server}` was told to cancel it"
                )));
            }
        };
        match answer {
            Ok(result) => {
                match fit::tool_result(
                    &result,
                    route.output_schema.as_deref(),
                    &self.settings.fitting,
                )
                .await
                {
                    Ok(fitted) => ok(&fitted),
                    Err(why) => ok(&fit::error_result(format!(
                        "the MCP server `{server}` sent an answer to `{}` that cannot be read: {why}",
                        route.name
                    ))),
                }
            }
            Err(_) if live.peer.is_closed() => ok(&fit::error_result(format!(
                "the MCP server `{server}` ended while running `{}`; the next call starts it again",
                route.name
            ))),
            Err(error) => Err(error),
        }
    }

    async fn tool_route(&self, name: &str) -> Option<Route> {
        let listed = {
            let routes = lock(&self.routes);
            if let Some(route) = routes.tools.get(name) {
                return Some(route.clone());
            }
            routes.tools_listed
        };
        if !listed {
            let _ = self.list_tools().await;
            if let Some(route) = lock(&self.routes).tools.get(name) {
                return Some(route.clone());
            }
        }
        // One server: a name it did not list is its to answer, in its own words.
        (self.slots.len() == 1).then(|| Route {
            index: 0,
            name: name.to_owned(),
            output_schema: None,
        })
    }

    /// `read_artifact`: media come back as the content they were; text is paged within the cap.
    async fn read_artifact(&self, params: &Value) -> Value {
        let arguments = params
            .get("arguments")
            .cloned()
            .unwrap_or_else(|| json!({}));
        if let Some(id) = arguments["id"]
            .as_str()
            .and_then(|id| ArtifactId::parse(id).ok())
        {
            let store = Arc::clone(&self.settings.fitting.store);
            let read_id = id.clone();
            let media = tokio::task::spawn_blocking(move || {
                crate::artifacts::read_media(store.as_ref(), &read_id)
            })
            .await
            .ok()
            .flatten();
            if let Some(media) = media {
                return json!({ "content": [fit::media_block(media, &id)] });
            }
        }
        let call = ToolCall::new("proxy-read", READ_ARTIFACT, arguments);
        let mut results = self.settings.reader.turn().execute([call]).await;
        let result = results.pop();
        let (text, is_error) = result.map_or_else(
            || ("the artifact could not be read".to_owned(), true),
            |result| {
                let is_error = result.is_error();
                (result.content, is_error)
            },
        );
        json!({ "content": [{ "type": "text", "text": text }], "isError": is_error })
    }

    /// A request or notification of server `index`'s, which came over `peer`.
    async fn on_upstream(&self, index: usize, peer: Arc<Peer>, incoming: Incoming) {
        match incoming {
            Incoming::Notification { method, params } => {
                match method.as_str() {
                    "notifications/cancelled" => {
                        let params = params.as_deref().map(value).unwrap_or(Value::Null);
                        let relayed = params
                            .get("requestId")
                            .and_then(|id| lock(&self.relayed).remove(&(index, key(id))));
                        if let Some(client_id) = relayed {
                            let mut forwarded = params;
                            forwarded["requestId"] = client_id.clone();
                            self.client.forget(&client_id);
                            self.client
                                .notify(&method, Some(wire::raw(&forwarded)))
                                .await;
                        }
                    }
                    _ => {
                        if method == "notifications/tools/list_changed" {
                            lock(&self.routes).tools_listed = false;
                        }
                        // As it came, in order: before the answer it preceded.
                        self.client.notify(&method, params).await;
                    }
                }
            }
            Incoming::Request { id, method, params } => {
                if method == "ping" {
                    peer.answer(&id, ok(&json!({}))).await;
                    return;
                }
                let session = self.arc();
                tokio::spawn(async move {
                    let pending = session.client.request(&method, params).await;
                    let relay_key = (index, key(&id));
                    lock(&session.relayed).insert(relay_key.clone(), pending.id.clone());
                    let outcome = pending.answer().await;
                    let still_wanted = lock(&session.relayed).remove(&relay_key).is_some();
                    if still_wanted {
                        peer.answer(&id, outcome).await;
                    }
                });
            }
        }
    }
}

/// `search_tools` as the proxy lists it.
fn search_listing(count: usize) -> Value {
    json!({
        "name": SEARCH_TOOLS,
        "description": format!(
            "Finds tools by what they do, among the {} tools of this proxy's servers, which are \
             not listed until found. Describe the task in a few words (`merge a pull request`, \
             `screenshot of the page`); the best matches come back with their definitions, and \
             are then listed and callable (by name, or with call_tool).",
            grouped(count)
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": { "type": "string", "description": "What the tool should do, in words." },
                "limit": { "type": "integer", "description": "How many tools to return, best first (5 by default, 20 at most)." },
            },
            "required": ["query"],
        },
        "annotations": { "readOnlyHint": true },
    })
}

/// `call_tool` as the proxy lists it.
fn call_listing() -> Value {
    json!({
        "name": CALL_TOOL,
        "description": "Calls a tool search_tools found, by its name, with its arguments: for a \
                        client that does not refresh its list of tools.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": { "type": "string", "description": "The tool's name, as search_tools gave it." },
                "arguments": { "type": "object", "description": "Its arguments, as its definition describes them." },
            },
            "required": ["name"],
        },
    })
}

/// What a listed tool's description gains: its cap.
fn cap_note(cap: usize) -> String {
    format!(
        "\n\nResults over {} characters are cut to that size (what matters kept, with a marker); \
         the whole result stays readable with read_artifact.",
        grouped(cap)
    )
}

/// `a` and `b` merged: objects key by key, `true` wins over `false`, `a` wins otherwise.
fn merge(a: Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Object(mut a), Value::Object(b)) => {
            for (key, value) in b {
                let merged = match a.remove(key) {
                    Some(existing) => merge(existing, value),
                    None => value.clone(),
                };
                a.insert(key.clone(), merged);
            }
            Value::Object(a)
        }
        (Value::Bool(a), Value::Bool(b)) => Value::Bool(a || *b),
        (Value::Null, b) => b.clone(),
        (a, _) => a,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_merge_key_by_key() {
        let merged = merge(
            json!({ "tools": { "listChanged": false }, "logging": {} }),
            &json!({ "tools": { "listChanged": true }, "resources": { "subscribe": true } }),
        );
        assert_eq!(
            merged,
            json!({ "tools": { "listChanged": true }, "logging": {}, "resources": { "subscribe": true } })
        );
    }
}
