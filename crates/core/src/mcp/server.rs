//! An MCP server over any [`Registry`].
//!
//! `tools/list` serves the registry's specs; each `tools/call` runs as a one-call turn of the
//! registry, so it gets the budget, the post-trim, the artifacts and the error results of any
//! other call. A cancelled request cancels its turn (a running command is killed); progress the
//! tool reports is forwarded as progress notifications when the client asked for them.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use rmcp::model::{
    AudioContent, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    ImageContent, Implementation, InitializeResult, ListResourceTemplatesResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities,
};
// Logging is deprecated by SEP-2577 (rmcp marks it so); clients of the protocol versions before
// it still use it.
#[allow(deprecated)]
use rmcp::model::{LoggingMessageNotificationParam, SetLevelRequestParams};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt as _};
use serde_json::Value;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::approve::ClientApprover;
use super::caps::MAX_RESULT_META_KEY;
use super::outgoing::{link_after_cut, link_chars};
use super::transport;
use crate::registry::{Registry, ToolCall, ToolResult};
use crate::schema::{Dialect, DialectError};
use crate::tool::{Event, LogLevel, Media, MediaKind};

/// Serves `registry` over MCP on this process's stdin and stdout until the client disconnects.
///
/// Each message is one line of at most 16 MiB; a longer one, a line that is not JSON and a
/// request without the `params` it needs are each answered with a JSON-RPC error, and the
/// session goes on. When stdin ends, every request read is answered before the function
/// returns; when the client closes its end of stdout (it went away), calls still running are
/// cancelled (their commands killed) and the function returns.
///
/// # Errors
///
/// [`ServeError`]: a tool that MCP's dialect cannot state, or a session that cannot be set up
/// or ends abnormally (an input that ends before the client asked anything is not an error).
pub async fn serve_stdio(registry: Registry) -> Result<(), ServeError> {
    McpServer::new(registry)?.serve_stdio().await
}

/// Why serving a registry over MCP on stdio failed, a variant a caller can match.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// A tool's schema cannot be stated in MCP's dialect (its name and the keyword are said).
    #[error(transparent)]
    Schema(#[from] DialectError),
    /// The session could not be set up: the client's first messages were not a session's
    /// start, or the transport failed before it was.
    #[error("the MCP session could not be set up ({0})")]
    Setup(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The session's task ended abnormally (it panicked or was cancelled).
    #[error("the MCP session ended abnormally ({0})")]
    Ended(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// The MCP handler of a [`Registry`]. Serve it on any rmcp transport, or on stdio with
/// [`McpServer::serve_stdio`].
///
/// Each listed tool carries its annotations and, in `_meta`, the most characters one of its
/// results can have ([`MAX_RESULT_META_KEY`]).
#[derive(Debug, Clone)]
pub struct McpServer {
    registry: Registry,
    tools: Arc<Vec<rmcp::model::Tool>>,
    /// Cancelled when the session's input ends: running calls stop.
    shutdown: CancellationToken,
    /// Asks the client's user about calls, when the registry's policy asks it.
    approver: Option<ClientApprover>,
    /// The least severe level of log message the client wants (`logging/setLevel`), as an
    /// index of [`LogLevel::ALL`]: debug, every message, until the client sets one. Per
    /// session.
    log_level: Arc<AtomicU8>,
    /// Where the session's calls are counted, when it is served over HTTP.
    telemetry: Option<super::metrics::Telemetry>,
    /// Seals the state a 2026-07-28 client echoes when it answers a question (an approval):
    /// authenticated, bound to the principal and the call, expiring.
    request_states: Arc<rmcp::model::RequestStateCodec>,
    /// The sealed states already redeemed, until they expire: each answers one call.
    redeemed: Arc<std::sync::Mutex<HashMap<String, std::time::Instant>>>,
}

/// How long a 2026-07-28 client has to answer a question before its sealed state expires.
const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(600);
/// The key of the approval's form among a 2026-07-28 result's input requests.
const APPROVAL_INPUT: &str = "approve";

/// Numbers the calls of all servers of the process, so every call id is unique.
static CALLS: AtomicU64 = AtomicU64::new(1);

impl McpServer {
    /// A server for `registry`.
    ///
    /// # Errors
    ///
    /// [`DialectError`] naming the tool and the keyword, when a tool's input schema cannot be
    /// rendered for MCP (its root is not an object, say): a tool is never left out silently.
    pub fn new(registry: Registry) -> Result<Self, DialectError> {
        let budget = registry.budget();
        let tools = registry
            .tools()
            .map(|tool| {
                let spec = tool.spec();
                let rendered = Dialect::Mcp.render(spec)?;
                let Some(Value::Object(schema)) = rendered.get("inputSchema") else {
                    return Err(DialectError {
                        tool: spec.name.clone(),
                        dialect: Dialect::Mcp,
                        keyword: "type".to_owned(),
                        path: "#".to_owned(),
                        why: "the input schema's root must be an object".to_owned(),
                    });
                };
                let mut listed = rmcp::model::Tool::new(
                    spec.name.clone(),
                    spec.description.clone(),
                    schema.clone(),
                );
                listed.title.clone_from(&spec.title);
                // With the member a cut structure names its cut in, where the schema admits it.
                if let Some(output) = &spec.output_schema
                    && let Value::Object(output) = crate::structure::listed_schema(output)
                {
                    listed.output_schema = Some(Arc::new(output));
                }
                if !spec.annotations.is_empty() {
                    let hints = &spec.annotations;
                    let mut annotations = rmcp::model::ToolAnnotations::new();
                    annotations.read_only_hint = hints.read_only;
                    annotations.destructive_hint = hints.destructive;
                    annotations.idempotent_hint = hints.idempotent;
                    annotations.open_world_hint = hints.open_world;
                    listed = listed.with_annotations(annotations);
                }
                // A call runs alone in its turn: its cap is the one-call allowance.
                let cap = budget.allowances(
                    budget.batch_budget_chars,
                    &[crate::budget::Claim::new().with_cap(spec.limits.max_result_chars)],
                )[0];
                let mut meta = rmcp::model::MetaObject::new();
                meta.0.insert(MAX_RESULT_META_KEY.to_owned(), cap.into());
                Ok(listed.with_meta(meta))
            })
            .collect::<Result<_, _>>()?;
        // Sent over MCP: a structure that repeats its text shares the allowance with it, and a
        // cut text is followed by a link to its artifact where the link costs little.
        let registry = registry.sending(crate::registry::Sending {
            structure_shares: true,
            structure_notes: true,
            trailer_room: link_chars(),
        });
        // A key of the process's own: a state sealed here is redeemed here.
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|error| DialectError {
            tool: String::new(),
            dialect: Dialect::Mcp,
            keyword: String::new(),
            path: String::new(),
            why: format!("no random key for sealing request states ({error})"),
        })?;
        let request_states =
            rmcp::model::RequestStateCodec::try_new(key.to_vec()).map_err(|error| {
                DialectError {
                    tool: String::new(),
                    dialect: Dialect::Mcp,
                    keyword: String::new(),
                    path: String::new(),
                    why: format!("no codec for request states ({error})"),
                }
            })?;
        Ok(McpServer {
            request_states: Arc::new(request_states),
            redeemed: Arc::default(),
            registry,
            tools: Arc::new(tools),
            shutdown: CancellationToken::new(),
            approver: None,
            log_level: Arc::new(AtomicU8::new(0)),
            telemetry: None,
        })
    }

    /// Lets `approver` (also given to the registry's approval policy) ask this server's client:
    /// the server tells it which client each call came from.
    ///
    /// ```
    /// use toolsmith::mcp::{ClientApprover, McpServer};
    /// use toolsmith::Registry;
    /// use toolsmith::approval::{ApprovalPolicy, Rule};
    ///
    /// let asker = ClientApprover::new(Rule::Deny); // clients that cannot be asked: deny
    /// let registry = Registry::builder()
    ///     .approval(ApprovalPolicy::new().for_others(Rule::Ask).with_approver(asker.clone()))
    ///     .build()?;
    /// let server = McpServer::new(registry)?.with_client_approver(asker);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_client_approver(mut self, approver: ClientApprover) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Serves on this process's stdin and stdout until the client disconnects: see
    /// [`serve_stdio`].
    ///
    /// # Errors
    ///
    /// [`ServeError::Setup`] when the MCP session cannot be set up, [`ServeError::Ended`] when
    /// it ends abnormally (an input that ends before the client asked anything is not an
    /// error).
    pub async fn serve_stdio(mut self) -> Result<(), ServeError> {
        let closed = CancellationToken::new();
        // Pipes (as a client starts its server) on the runtime's reactor: a message crosses no
        // thread of tokio's blocking pool.
        let (read, write) = transport::stdio();
        let transport = transport::LineTransport::new(read, write, closed.clone())
            .draining(transport::stdout_gone());
        self.shutdown = closed;
        let service = match self.serve(transport).await {
            Ok(service) => service,
            // The input ended before the client asked anything: nothing is owed.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(error) => return Err(ServeError::Setup(Box::new(error))),
        };
        service
            .waiting()
            .await
            .map_err(|error| ServeError::Ended(Box::new(error)))?;
        Ok(())
    }

    /// Serves clients over MCP's streamable HTTP, as [`HttpOptions`](super::HttpOptions) say (an address, a bearer
    /// token, the origins allowed): each client session is a session of its own over the same
    /// registry, its artifacts kept in its own part of the registry's store
    /// ([`ArtifactStore::scoped`](crate::artifacts::ArtifactStore::scoped): the session's, or
    /// its principal's), so no client reads another's. Returns once listening; the server runs
    /// until dropped or shut down.
    ///
    /// # Errors
    ///
    /// [`HttpError`](super::HttpError) when the address cannot be listened on, or the
    /// registry's store cannot keep clients apart.
    #[cfg(feature = "mcp-http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
    pub async fn serve_http(
        self,
        options: super::HttpOptions,
    ) -> Result<super::HttpServer, super::HttpError> {
        if let Some(store) = self.registry.artifacts() {
            super::http::check_apart(store.as_ref()).map_err(super::HttpError::Artifacts)?;
        }
        let metrics = super::Metrics::new(options.metrics.clone());
        let sessions = super::http::over_streams(move |stream, owner, telemetry| {
            let mut server = self.clone();
            server.telemetry = Some(telemetry);
            if let Some(store) = server.registry.artifacts() {
                // Each client reads only the artifacts of its own session (or principal).
                let store = super::http::store_for(store, &owner);
                server.registry = server.registry.over_store(store);
            }
            // Each client session sets its own log level.
            server.log_level = Arc::new(AtomicU8::new(0));
            Box::pin(async move {
                let (read, write) = tokio::io::split(stream);
                let closed = CancellationToken::new();
                server.shutdown = closed.clone();
                let transport = transport::LineTransport::new(read, write, closed);
                if let Ok(service) = server.serve(transport).await {
                    let _ = service.waiting().await;
                }
            })
        });
        super::HttpServer::start(options, metrics, sessions).await
    }
}

impl ServerHandler for McpServer {
    #[allow(deprecated)] // the logging capability: see `log_param`
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                // The registry's artifacts, read as resources (`toolsmith://artifact/{id}`).
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("toolsmith", crate::VERSION))
        .with_instructions(
            "Every tool result fits its budget. A result cut short ends its kept part with a \
                 [toolsmith: …] marker that says what was kept and how to read the rest \
                 (read_artifact with the artifact id).",
        )
    }

    // Logging is deprecated by SEP-2577 (rmcp marks it so); clients of the protocol versions
    // before it still set a level.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let name = super::logging::log_level_of(request.level);
        let index = LogLevel::ALL.iter().position(|l| *l == name).unwrap_or(0);
        self.log_level
            .store(u8::try_from(index).unwrap_or(0), Ordering::Relaxed);
        Ok(())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let templates = match self.registry.artifacts() {
            Some(_) => {
                let template = crate::artifacts::artifact_template();
                vec![serde_json::from_value(template).map_err(|error| {
                    McpError::internal_error(format!("the artifact template: {error}"), None)
                })?]
            }
            None => Vec::new(),
        };
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    /// An artifact of this session (or principal), read as `read_artifact` reads it: a page by
    /// the URI's query, the first page of a large one unranged.
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri;
        // An unknown resource's error names it (SEP-2164).
        let named = || Some(serde_json::json!({ "uri": uri }));
        let (_, arguments) = crate::artifacts::ArtifactId::parse_uri(&uri)
            .map_err(|why| McpError::resource_not_found(why, named()))?;
        if self.registry.artifacts().is_none() {
            return Err(McpError::resource_not_found(
                "this server keeps no artifacts",
                named(),
            ));
        }
        let call = crate::ToolCall::new("resource", crate::artifacts::READ_ARTIFACT, arguments);
        let result = self
            .registry
            .turn()
            .execute([call])
            .await
            .pop()
            .ok_or_else(|| {
                McpError::internal_error("the registry returned no result for the read", None)
            })?;
        if result.is_error() {
            return Err(McpError::resource_not_found(result.content, named()));
        }
        let base = uri.split('?').next().unwrap_or(&uri).to_owned();
        let mut contents = Vec::with_capacity(1 + result.media.len());
        if !result.content.is_empty() || result.media.is_empty() {
            contents.push(rmcp::model::ResourceContents::text(
                result.content,
                uri.clone(),
            ));
        }
        contents.extend(result.media.iter().map(|media| {
            rmcp::model::ResourceContents::blob(media.base64(), base.clone())
                .with_mime_type(media.mime_type())
        }));
        Ok(rmcp::model::ReadResourceResult::new(contents).into())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let call_id = format!("mcp-{}", CALLS.fetch_add(1, Ordering::Relaxed));
        let _asking = self
            .approver
            .as_ref()
            .map(|approver| approver.register(&call_id, context.peer.clone()));
        let arguments = request
            .arguments
            .clone()
            .map_or_else(|| Value::Object(serde_json::Map::new()), Value::Object);
        let modern = context
            .protocol_version()
            .is_some_and(|version| version >= rmcp::model::ProtocolVersion::V_2026_07_28);
        // A 2026-07-28 client is asked without a request to it: the call answers the question
        // (`InputRequiredResult`, its state sealed), and the client's retry carries the answer.
        let _decided = if modern {
            match self.approve_without_asking(&request, &arguments, &call_id)? {
                Approving::Ask(asked) => return Ok(CallToolResponse::InputRequired(asked)),
                Approving::Decided(decided) => decided,
            }
        } else {
            None
        };
        let call = ToolCall::new(call_id.clone(), request.name.to_string(), arguments);
        let started = std::time::Instant::now();
        let result = self.run(call, &context, modern).await?;
        if let Some(telemetry) = &self.telemetry {
            count(telemetry, &result, started.elapsed());
        }
        Ok(answer_of(result).into())
    }
}

/// Where a call of a 2026-07-28 client stands with an approver that asks.
enum Approving<D> {
    /// The client is to be asked: the question, its state sealed.
    Ask(rmcp::model::InputRequiredResult),
    /// The call goes on, decided by the client's answer (held while the call runs), or not
    /// asked.
    Decided(Option<D>),
}

/// A registry's result as `serve` answers it: its text, the link to its artifact where the
/// registry left room for it, its media and its structure; what the tool stated beside its
/// content and what a cut did in `_meta`, the structure and the link counted as the proxy
/// counts them.
fn answer_of(result: ToolResult) -> CallToolResult {
    let is_error = result.is_error();
    let link =
        link_after_cut(&result).and_then(|link| serde_json::from_value::<ContentBlock>(link).ok());
    let structured = structure_of(&result);
    let mut facts = result.cut_facts();
    if let (Some(facts), Some(sent)) = (&mut facts, &structured) {
        // The structure is read beside the text: counted as the proxy counts it.
        let sent = crate::structure::compact_chars(sent) as u64;
        let whole = result
            .meta
            .structure_cut
            .as_ref()
            .and_then(|cut| cut["originalChars"].as_u64())
            .unwrap_or(sent);
        for (key, add) in [("receivedChars", whole), ("sentChars", sent)] {
            facts[key] = (facts[key].as_u64().unwrap_or(0) + add).into();
        }
    }
    if let (Some(facts), Some(_)) = (&mut facts, &link) {
        let sent = facts["sentChars"].as_u64().unwrap_or(0);
        facts["sentChars"] = (sent + link_chars() as u64).into();
    }
    let mut content = Vec::with_capacity(3 + result.media.len());
    if !result.content.is_empty() || result.media.is_empty() {
        content.push(ContentBlock::text(result.content));
    }
    content.extend(link);
    content.extend(result.media.into_iter().map(media_block));
    // What the tool stated beside its content (run_command's confinement, an upstream
    // server's own `_meta`) is the result's `_meta`, and beside it what a cut did.
    let mut tool_meta = result.meta.tool_meta;
    if let Some(facts) = facts {
        tool_meta.insert(crate::registry::CUT_META_KEY.to_owned(), facts);
    }
    let meta = (!tool_meta.is_empty()).then(|| rmcp::model::MetaObject(tool_meta));
    let mut answer = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    answer.structured_content = structured;
    answer.with_meta(meta)
}

impl McpServer {
    /// A 2026-07-28 client's call of a tool the approver asks about: the question, when the
    /// call carries no state; else the decision its sealed state and answer make.
    fn approve_without_asking(
        &self,
        request: &CallToolRequestParams,
        arguments: &Value,
        call_id: &str,
    ) -> Result<Approving<impl Sized + use<>>, McpError> {
        let Some(approver) = self
            .approver
            .as_ref()
            .filter(|_| self.registry.asks(&request.name))
        else {
            return Ok(Approving::Decided(None));
        };
        let bound = self.binding(&request.name, arguments);
        let Some(state) = &request.request_state else {
            let asked = self.ask(&request.name, arguments, &bound).map_err(|why| {
                McpError::internal_error(format!("the question could not be made ({why})"), None)
            })?;
            return Ok(Approving::Ask(asked));
        };
        let approval = self.redeem(
            &request.name,
            state,
            &bound,
            request.input_responses.as_ref(),
        );
        Ok(Approving::Decided(Some(approver.decide(call_id, approval))))
    }

    /// Runs one call in a turn of its own, cancelled with its request or the server's
    /// shutdown; its progress (when the client sent a token) and log messages (at or above
    /// the level the client set, or a 2026-07-28 request opted in to) go to the client while
    /// it runs, all of them before its result.
    async fn run(
        &self,
        call: ToolCall,
        context: &RequestContext<RoleServer>,
        modern: bool,
    ) -> Result<ToolResult, McpError> {
        let call_id = call.id.clone();
        let mut turn = self.registry.turn();
        let cancel_turn = turn.cancellation_token();
        let request_cancelled = context.ct.clone();
        let shutdown = self.shutdown.clone();
        let canceller = tokio::spawn(async move {
            tokio::select! {
                () = request_cancelled.cancelled() => {}
                () = shutdown.cancelled() => {}
            }
            cancel_turn.cancel();
        });
        let forwarding = Forwarding {
            call_id,
            token: context.meta.get_progress_token(),
            level: if modern {
                let wanted = context
                    .meta
                    .get(crate::mcp::wire::era::LOG_LEVEL_KEY)
                    .and_then(Value::as_str);
                Arc::new(AtomicU8::new(opted_in_level(wanted)))
            } else {
                Arc::clone(&self.log_level)
            },
            peer: context.peer.clone(),
        };
        let finished = CancellationToken::new();
        let forwarder = tokio::spawn(forwarding.run(self.registry.subscribe(), finished.clone()));
        let mut results = turn.execute([call]).await;
        canceller.abort();
        finished.cancel();
        // Every event of the call was sent before its result: the forwarder drains them all.
        let _ = forwarder.await;
        results.pop().ok_or_else(|| {
            McpError::internal_error("the registry returned no result for the call", None)
        })
    }
}

/// The level a 2026-07-28 request opted in to (`logLevel` in its `_meta`), as the index of
/// the least level sent; none sent without it.
fn opted_in_level(wanted: Option<&str>) -> u8 {
    let index = wanted
        .and_then(|name| {
            LogLevel::ALL
                .iter()
                .position(|level| level.as_str() == name)
        })
        .unwrap_or(LogLevel::ALL.len());
    u8::try_from(index).unwrap_or(u8::MAX)
}

impl McpServer {
    /// What a sealed state is bound to: the principal (over HTTP; the one client over stdio),
    /// the tool and the call's arguments. A state is redeemed only for the same call of the same
    /// principal.
    fn binding(&self, tool: &str, arguments: &Value) -> Vec<u8> {
        let principal = self
            .telemetry
            .as_ref()
            .and_then(|telemetry| telemetry.principal.as_deref())
            .unwrap_or_default();
        format!("toolsmith approval\n{principal}\n{tool}\n{arguments}").into_bytes()
    }

    /// The question for a 2026-07-28 client: the approval's form, and a sealed state holding a
    /// one-time nonce, bound to the call, expiring in [`ANSWER_WITHIN`].
    fn ask(
        &self,
        tool: &str,
        arguments: &Value,
        bound: &[u8],
    ) -> Result<rmcp::model::InputRequiredResult, Box<dyn std::error::Error + Send + Sync>> {
        let (message, schema) = super::approve::question(tool, arguments)?;
        let ask = rmcp::model::ElicitRequest::new(
            rmcp::model::ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema: schema,
            },
        );
        let mut requests = rmcp::model::InputRequests::new();
        requests.insert(
            APPROVAL_INPUT.to_owned(),
            rmcp::model::InputRequest::Elicitation(ask),
        );
        let nonce = crate::artifacts::ArtifactId::generate()?.to_string();
        let options = rmcp::model::SealOptions::new()
            .associated_data(bound)
            .ttl(ANSWER_WITHIN);
        let sealed = self.request_states.seal_with(nonce.as_bytes(), &options);
        Ok(rmcp::model::InputRequiredResult::new(
            Some(requests),
            Some(sealed),
        ))
    }

    /// The user's answer a 2026-07-28 client's retry carries, if its sealed state is one this
    /// server made, for this call and principal, unexpired and not redeemed before; a denial
    /// saying why otherwise.
    fn redeem(
        &self,
        tool: &str,
        state: &str,
        bound: &[u8],
        answers: Option<&rmcp::model::InputResponses>,
    ) -> crate::approval::Approval {
        use crate::approval::Approval;
        let ask_again = "call again to be asked anew";
        let nonce = match self.request_states.open_with(state, bound) {
            Ok(nonce) => String::from_utf8_lossy(&nonce).into_owned(),
            Err(rmcp::model::RequestStateError::Expired) => {
                return Approval::Deny(format!(
                    "the approval of this `{tool}` call expired; {ask_again}"
                ));
            }
            Err(_) => {
                return Approval::Deny(format!(
                    "the approval of this `{tool}` call could not be verified (it was made for \
                     another call or principal, or altered); {ask_again}"
                ));
            }
        };
        {
            let now = std::time::Instant::now();
            let mut redeemed = crate::sync::lock(&self.redeemed);
            redeemed.retain(|_, until| *until > now);
            if redeemed.contains_key(&nonce) {
                return Approval::Deny(format!(
                    "this approval of `{tool}` was used already; {ask_again}"
                ));
            }
            redeemed.insert(nonce, now + ANSWER_WITHIN);
        }
        let Some(answer) = answers.and_then(|answers| answers.get(APPROVAL_INPUT)) else {
            return Approval::Deny(format!(
                "the user's answer about this `{tool}` call is missing; {ask_again}"
            ));
        };
        let action = answer
            .get("action")
            .cloned()
            .and_then(|action| {
                serde_json::from_value::<rmcp::model::ElicitationAction>(action).ok()
            })
            .unwrap_or(rmcp::model::ElicitationAction::Decline);
        super::approve::answered(tool, &action, answer.get("content"))
    }
}

/// Counts a call the registry ran, with the figures of its result's meta: the chars the tool
/// gave, the chars sent, what was cut and kept.
fn count(telemetry: &super::metrics::Telemetry, result: &ToolResult, elapsed: std::time::Duration) {
    use super::metrics::{Call, Outcome};
    let meta = &result.meta;
    let artifacts = usize::from(meta.artifact.is_some())
        + meta
            .media_left_out
            .iter()
            .filter(|left_out| left_out.artifact.is_some())
            .count();
    // A tool the registry does not have is not a series of its own.
    let known = meta.error_kind != Some(crate::tool::ErrorKind::UnknownTool);
    let tool = if known {
        result.tool.as_str()
    } else {
        "_unknown"
    };
    if tool == crate::artifacts::READ_ARTIFACT {
        telemetry.metrics.artifact_read();
    }
    telemetry.metrics.call(&Call {
        server: "",
        tool,
        principal: telemetry.principal.as_deref(),
        outcome: if result.is_error() {
            Outcome::Error
        } else {
            Outcome::Ok
        },
        elapsed,
        received_chars: meta.original_chars as u64,
        sent_chars: result.content.chars().count() as u64,
        cut: meta.trimmed() || !meta.media_left_out.is_empty(),
        artifacts,
    });
}

/// The structure a result sends beside its text (`structuredContent`): the tool's JSON as it
/// wrote it, or the structure the registry fitted beside the text (cut by the tool's output
/// schema when the two were over the allowance). An error, a text alone, and a JSON result
/// without a schema that was cut (its text is the cut, markers inside) have none.
fn structure_of(result: &ToolResult) -> Option<Value> {
    if result.is_error() {
        return None;
    }
    if result.meta.structured {
        return serde_json::from_str::<Value>(&result.content)
            .ok()
            .filter(Value::is_object);
    }
    result.structure.clone().filter(Value::is_object)
}

/// What goes to the client while one call runs.
struct Forwarding {
    call_id: String,
    token: Option<rmcp::model::ProgressToken>,
    /// The least severe level of log message the client wants ([`LogLevel::ALL`]'s index).
    level: Arc<AtomicU8>,
    peer: rmcp::Peer<RoleServer>,
}

impl Forwarding {
    /// Sends the call's events until `finished`, then those still queued, and ends.
    async fn run(self, mut events: broadcast::Receiver<Event>, finished: CancellationToken) {
        // The tool's own figures when it gave them (an MCP server's, as it sent them); else the
        // count of its reports, going on from the last figure.
        let mut step = 0.0;
        loop {
            let event = tokio::select! {
                biased;
                event = events.recv() => event,
                () = finished.cancelled() => break,
            };
            match event {
                Ok(event) => self.send(event, &mut step).await,
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
        while let Ok(event) = events.try_recv() {
            self.send(event, &mut step).await;
        }
    }

    #[allow(deprecated)] // notifications/message: see `log_param`
    async fn send(&self, event: Event, step: &mut f64) {
        // A client that went away is not the tool's failure: sends are best-effort.
        match event {
            Event::Progress {
                call_id,
                message,
                progress,
                total,
                ..
            } if *call_id == *self.call_id => {
                let Some(token) = &self.token else { return };
                *step = progress.unwrap_or(*step + 1.0);
                let mut param =
                    ProgressNotificationParam::new(token.clone(), *step).with_message(message);
                if let Some(total) = total {
                    param = param.with_total(total);
                }
                let _ = self.peer.notify_progress(param).await;
            }
            Event::Log {
                call_id,
                level,
                logger,
                data,
                ..
            } if *call_id == *self.call_id => {
                // An index past the levels: no message is wanted (a 2026-07-28 request that
                // did not opt in).
                let wanted = LogLevel::ALL
                    .get(usize::from(self.level.load(Ordering::Relaxed)))
                    .copied();
                if wanted.is_some_and(|wanted| level >= wanted) {
                    let _ = self
                        .peer
                        .notify_logging_message(log_param(level, logger, data))
                        .await;
                }
            }
            _ => {}
        }
    }
}

/// A log message as MCP's `notifications/message` carries it. Logging is deprecated by SEP-2577
/// (rmcp marks it so); clients of the protocol versions before it still read it.
#[allow(deprecated)]
fn log_param(
    level: LogLevel,
    logger: Option<String>,
    data: Value,
) -> LoggingMessageNotificationParam {
    let mut param =
        LoggingMessageNotificationParam::new(super::logging::logging_level(level), data);
    param.logger = logger;
    param
}

/// An image or audio clip of a result as the MCP content block of its type, its annotations
/// kept.
fn media_block(media: Media) -> ContentBlock {
    let annotations = media
        .annotations()
        .and_then(|a| serde_json::from_value(Value::Object(a.clone())).ok());
    let (kind, mime_type) = (media.kind(), media.mime_type().to_owned());
    let data = media.into_base64();
    match kind {
        MediaKind::Audio => {
            let mut audio = AudioContent::new(data, mime_type);
            audio.annotations = annotations;
            ContentBlock::Audio(audio)
        }
        _ => {
            let mut image = ImageContent::new(data, mime_type);
            image.annotations = annotations;
            ContentBlock::Image(image)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{CallArgs, DynTool, ToolLimits, ToolSpec};
    use crate::{ToolContext, ToolError, ToolOutput};

    struct Odd(ToolSpec);

    #[async_trait::async_trait]
    impl DynTool for Odd {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        async fn call(&self, _: CallArgs, _: &ToolContext) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text("odd"))
        }
    }

    #[test]
    fn a_tool_mcp_cannot_list_is_an_error_not_a_silent_omission() {
        let spec = ToolSpec::new(
            "odd",
            "An array at the root.",
            serde_json::json!({ "type": "array" }),
        );
        // The registry refuses it before a server could leave it out.
        let error = Registry::builder()
            .dyn_tool(Arc::new(Odd(spec)))
            .build()
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`odd`") && error.contains("array"),
            "{error}"
        );
    }

    #[test]
    fn listed_tools_carry_their_cap_in_meta() {
        let spec = ToolSpec::new("fine", "Fine.", serde_json::json!({ "type": "object" }))
            .with_limits(ToolLimits::default().with_max_result_chars(Some(1_234)));
        let registry = Registry::builder()
            .dyn_tool(Arc::new(Odd(spec)))
            .build()
            .unwrap();
        let server = McpServer::new(registry).unwrap();
        let fine = server
            .tools
            .iter()
            .find(|tool| tool.name == "fine")
            .unwrap();
        let cap = fine
            .meta
            .as_ref()
            .and_then(|meta| meta.0.get(MAX_RESULT_META_KEY));
        assert_eq!(cap, Some(&Value::from(1_234)));
    }

    /// Greets, `times` times, with the greeting beside the text as `{ "result": ... }`, as the
    /// Python SDK's servers answer for a function returning `str`.
    struct Greeter(ToolSpec);

    #[async_trait::async_trait]
    impl DynTool for Greeter {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        async fn call(&self, args: CallArgs, _: &ToolContext) -> Result<ToolOutput, ToolError> {
            let times = args.into_json()?["times"].as_u64().unwrap_or(1);
            let text: String = (1..=times).map(|i| format!("hello, ada ({i})\n")).collect();
            let structure = serde_json::json!({ "result": text });
            Ok(ToolOutput::text(text).with_structure(structure))
        }
    }

    /// Calls each greeter (`name`, its output schema) once with `times`, through a server with
    /// a 2,000-char cap: the structures and the texts the client got.
    async fn greet(greeters: &[(&str, Option<Value>)], times: u64) -> Vec<CallToolResult> {
        let mut registry = Registry::builder().artifacts(crate::artifacts::MemoryStore::new());
        for (name, schema) in greeters {
            let spec = ToolSpec::new(*name, "Greets.", serde_json::json!({ "type": "object" }))
                .with_limits(ToolLimits::default().with_max_result_chars(Some(2_000)));
            let spec = match schema {
                Some(schema) => spec.with_output_schema(schema.clone()),
                None => spec,
            };
            registry = registry.dyn_tool(Arc::new(Greeter(spec)));
        }
        let server = McpServer::new(registry.build().unwrap()).unwrap();
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(service) = server.serve(tokio::io::split(theirs)).await {
                let _ = service.waiting().await;
            }
        });
        let client = rmcp::ServiceExt::serve((), tokio::io::split(ours))
            .await
            .unwrap();
        let mut results = Vec::new();
        for (name, _) in greeters {
            let mut arguments = serde_json::Map::new();
            arguments.insert("times".to_owned(), times.into());
            let params =
                rmcp::model::CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
            results.push(client.call_tool(params).await.unwrap());
        }
        results
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_structure_beside_the_text_is_sent_whole_or_cut_within_its_schema() {
        let string = serde_json::json!({
            "type": "object",
            "properties": { "result": { "type": "string" } },
            "required": ["result"],
        });
        // A pattern binds the string: no shortened one is known to match it.
        let strict = serde_json::json!({
            "type": "object",
            "properties": { "result": { "type": "string", "pattern": "^[a-z ,()0-9\n]*$" } },
            "required": ["result"],
        });
        let greeters = [
            ("plain", Some(string)),
            ("strict", Some(strict)),
            ("untyped", None),
        ];
        // Within the cap: each structure whole, as the tool stated it.
        for result in greet(&greeters, 1).await {
            assert_eq!(
                result.structured_content,
                Some(serde_json::json!({ "result": "hello, ada (1)\n" }))
            );
        }
        let [plain, strict, untyped] =
            <[CallToolResult; 3]>::try_from(greet(&greeters, 5_000).await).unwrap();
        let seen = |result: &CallToolResult| {
            let text: usize = result
                .content
                .iter()
                .filter_map(|block| block.as_text())
                .map(|text| text.text.chars().count())
                .sum();
            text + result
                .structured_content
                .as_ref()
                .map_or(0, |s| s.to_string().chars().count())
        };
        // Over it: the text and the structure within the cap together; the string shortened
        // by its schema, no marker inside, the facts in `_meta` naming the artifact.
        assert!(seen(&plain) <= 2_000, "{}", seen(&plain));
        let cut = plain.structured_content.clone().unwrap();
        let text = cut["result"].as_str().unwrap();
        assert!(
            text.starts_with("hello, ada (1)\n") && text.contains('…'),
            "{text}"
        );
        assert!(!text.contains("read_artifact"), "{text}");
        let meta = plain.meta.as_ref().unwrap();
        let facts = &meta.0[crate::registry::CUT_META_KEY]["structure"];
        assert_eq!(facts["cuts"][0]["pointer"], "/result");
        assert!(facts["artifact"].is_string(), "{facts}");
        // No cut the schema accepts: the over-cap error, none of it, never the whole.
        assert_eq!(strict.is_error, Some(true));
        assert!(strict.structured_content.is_none());
        assert!(seen(&strict) <= 2_000);
        // No schema asks for it: cut as JSON, within the cap with its text.
        assert!(seen(&untyped) <= 2_000, "{}", seen(&untyped));
        assert_eq!(untyped.is_error, Some(false));
    }

    /// Reports progress twice with figures, then twice without.
    struct Counting(ToolSpec);

    #[async_trait::async_trait]
    impl DynTool for Counting {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        async fn call(&self, _: CallArgs, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
            use crate::tool::Audience;
            cx.progress_of(Audience::User, "a quarter", 25.0, Some(100.0));
            cx.progress_of(Audience::User, "half", 50.0, Some(100.0));
            cx.progress(Audience::User, "more");
            cx.progress(Audience::User, "more again");
            // The notifications go out before the result.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            Ok(ToolOutput::text("counted"))
        }
    }

    #[derive(Clone)]
    struct Watch(tokio::sync::mpsc::UnboundedSender<(f64, Option<f64>, Option<String>)>);

    impl rmcp::ClientHandler for Watch {
        async fn on_progress(
            &self,
            params: rmcp::model::ProgressNotificationParam,
            _: rmcp::service::NotificationContext<rmcp::RoleClient>,
        ) {
            let _ = self.0.send((params.progress, params.total, params.message));
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn progress_with_figures_reaches_the_client_as_the_tool_gave_them() {
        let spec = ToolSpec::new("count", "Counts.", serde_json::json!({ "type": "object" }));
        let registry = Registry::builder()
            .dyn_tool(Arc::new(Counting(spec)))
            .build()
            .unwrap();
        let server = McpServer::new(registry).unwrap();
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(service) = server.serve(tokio::io::split(theirs)).await {
                let _ = service.waiting().await;
            }
        });
        let (sender, mut seen) = tokio::sync::mpsc::unbounded_channel();
        let client = rmcp::ServiceExt::serve(Watch(sender), tokio::io::split(ours))
            .await
            .unwrap();
        let mut params = rmcp::model::CallToolRequestParams::new("count");
        let mut meta = rmcp::model::RequestMetaObject::default();
        meta.set_progress_token(rmcp::model::ProgressToken(
            rmcp::model::NumberOrString::Number(1),
        ));
        params.meta = Some(meta);
        client.call_tool_once(params).await.unwrap();
        let mut got = Vec::new();
        while got.len() < 4 {
            let next = tokio::time::timeout(std::time::Duration::from_secs(5), seen.recv())
                .await
                .expect("four notifications")
                .unwrap();
            got.push(next);
        }
        // rmcp's client handles notifications concurrently, so they may be seen out of the
        // order they were sent in: read them by their figures.
        got.sort_by(|a, b| a.0.total_cmp(&b.0));
        let figures: Vec<(f64, Option<f64>)> = got.iter().map(|(p, t, _)| (*p, *t)).collect();
        // As given, then counted on from the last figure: always increasing.
        assert_eq!(
            figures,
            [
                (25.0, Some(100.0)),
                (50.0, Some(100.0)),
                (51.0, None),
                (52.0, None)
            ]
        );
        assert_eq!(got[1].2.as_deref(), Some("half"));
        client.cancel().await.unwrap();
    }
}
