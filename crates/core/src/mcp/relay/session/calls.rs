//! Tool calls: sent to their server and fitted to the cap, or `read_artifact` answered here.

use super::super::peer::Outcome;
use super::{CALL_TOOL, SEARCH_TOOLS, Session, crossing, failed, ok};
use crate::artifacts::ArtifactId;
use crate::artifacts::READ_ARTIFACT;
use crate::mcp::metrics;
use crate::mcp::outgoing;
use crate::mcp::wire;
use crate::mcp::wire::{INVALID_PARAMS, RESOURCE_NOT_FOUND};
use crate::registry::ToolCall;
use crate::sync::lock;
use crate::tool::OverCap;
use serde_json::Value;
use serde_json::json;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::Instant;
use tokio::sync::mpsc;

/// A request whose server may ask its client on the way: a tool's call or a prompt's get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Crossed {
    Call,
    Prompt,
}

impl Crossed {
    /// The request's method.
    fn method(self) -> &'static str {
        match self {
            Crossed::Call => "tools/call",
            Crossed::Prompt => "prompts/get",
        }
    }

    /// The answer that says why the request failed: an error result for a tool (the model
    /// reads it), a JSON-RPC error for a prompt (a prompt has no error result).
    fn failed(self, why: String) -> Outcome {
        match self {
            Crossed::Call => ok(&outgoing::error_result(why)),
            Crossed::Prompt => failed(wire::INTERNAL_ERROR, why),
        }
    }
}

/// What a call's server may be asked of its client for: the call, and the client's word.
struct Asked<'a> {
    /// What the request is.
    crossed: Crossed,
    /// The tool (or prompt) as the client named it.
    name: &'a str,
    /// The call as sent to the server.
    params: &'a Value,
    /// What the client declared it can be asked (2026-07-28).
    capabilities: &'a Value,
    /// What a park of the call is bound to.
    bound: &'a [u8],
    /// Whether the client speaks 2026-07-28.
    modern: bool,
}

/// What ended a call's wait on its server.
enum Waited {
    Answer(Outcome),
    /// The server's requests, asked at once.
    Asked(Vec<crossing::Ask>),
    TimedOut,
}

/// What the metrics count of a call, filled in as it goes.
#[derive(Debug, Default)]
struct Counted {
    /// The server's place in the session, for a call sent to one.
    server: Option<usize>,
    /// The tool's name: the server's for it, or the proxy's own.
    tool: String,
    /// What fitting did, for a result that was fitted.
    report: Option<outgoing::CutFacts>,
    /// Whether the result is an error result.
    is_error: bool,
}

/// Whether the server's requests `asks` (one, as it came) can be asked of the client: one the
/// client cannot be asked (no such request in 2026-07-28, or a capability it did not declare)
/// is answered here with the error such a client gives, and taken out.
async fn askable(
    live: &super::super::upstream::Live,
    asks: &mut Vec<crossing::Ask>,
    capabilities: &Value,
) -> bool {
    let mut kept = Vec::with_capacity(asks.len());
    for ask in asks.drain(..) {
        let error = match crossing::capability_of(&ask.method) {
            None => {
                let why = format!(
                    "the proxy's client cannot be asked `{}` while a call waits",
                    ask.method
                );
                wire::raw(&wire::error(wire::METHOD_NOT_FOUND, why))
            }
            // What a client without the capability answers; the server decides.
            Some(capability) if capabilities.get(capability).is_none_or(Value::is_null) => {
                crossing::missing_capability(&ask.method, capability)
            }
            Some(_) => {
                kept.push(ask);
                continue;
            }
        };
        live.peer.answer(&ask.id, Err(error)).await;
    }
    *asks = kept;
    !asks.is_empty()
}

impl Session {
    /// A tool call: `read_artifact` answered here, any other tool sent to its server and its
    /// result fitted to the cap; counted in the endpoint's metrics when it keeps them.
    pub(super) async fn call_tool(
        &self,
        params: Value,
        sent: &Arc<Mutex<Option<(usize, Value)>>>,
    ) -> Outcome {
        use tracing::Instrument as _;
        use tracing::field::Empty;
        let mut counted = Counted::default();
        // One span per call, for a subscriber that exports it (OpenTelemetry): its server, its
        // tool, the chars before and after, and the artifacts.
        let span = tracing::info_span!(
            "tools/call",
            server = Empty,
            tool = Empty,
            outcome = Empty,
            chars.received = Empty,
            chars.sent = Empty,
            cut = Empty,
            artifact.id = Empty,
        );
        if self.settings.telemetry.is_none() && span.is_disabled() {
            return self.run_call(params, sent, &mut counted).await;
        }
        let started = std::time::Instant::now();
        let outcome = self
            .run_call(params, sent, &mut counted)
            .instrument(span.clone())
            .await;
        let server = counted
            .server
            .map_or("", |index| self.slots[index].upstream.name.as_str());
        let report = counted.report.unwrap_or_default();
        let ended = match (&outcome, counted.is_error) {
            (Err(_), _) => metrics::Outcome::Failed,
            (Ok(_), true) => metrics::Outcome::Error,
            (Ok(_), false) => metrics::Outcome::Ok,
        };
        if !span.is_disabled() {
            span.record("server", server);
            span.record("tool", counted.tool.as_str());
            span.record("outcome", ended.label());
            span.record("chars.received", report.received_chars);
            span.record("chars.sent", report.sent_chars);
            span.record("cut", report.cut);
            if !report.artifacts.is_empty() {
                let ids: Vec<&str> = report.artifacts.iter().map(ArtifactId::as_str).collect();
                span.record("artifact.id", ids.join(","));
            }
        }
        let Some(telemetry) = &self.settings.telemetry else {
            return outcome;
        };
        if counted.server.is_none() && counted.tool == READ_ARTIFACT {
            telemetry.metrics.artifact_read();
        }
        telemetry.metrics.call(&metrics::Call {
            server,
            tool: &counted.tool,
            principal: telemetry.principal.as_deref(),
            outcome: ended,
            elapsed: started.elapsed(),
            received_chars: report.received_chars,
            sent_chars: report.sent_chars,
            cut: report.cut,
            artifacts: report.artifacts.len(),
        });
        outcome
    }

    /// A tool call, in steps: the client's envelope read, the tool routed, the call sent (or a
    /// parked one resumed), its answer awaited (questions carried across the eras on the
    /// way), and the answer fitted.
    async fn run_call(
        &self,
        mut params: Value,
        sent: &Arc<Mutex<Option<(usize, Value)>>>,
        counted: &mut Counted,
    ) -> Outcome {
        // A 2026-07-28 client's call: what its envelope declares it can be asked, and, for a
        // retry, the state it echoes and its answers; none of it goes to the server.
        let modern = self.modern.load(Ordering::SeqCst);
        let (declared, retry) = if modern {
            crossing::envelope_of_call(&mut params)
        } else {
            // The level the client set with `logging/setLevel`, for a 2026-07-28 server.
            let log_level = lock(&self.log_level).clone();
            let declared = crossing::Declared {
                log_level,
                ..crossing::Declared::default()
            };
            (declared, None)
        };
        let bound = crossing::binding(
            self.principal(),
            params["name"].as_str().unwrap_or_default(),
            &params["arguments"],
        );
        let (name, route) = match self.route_call(&mut params, counted).await {
            Ok(routed) => routed,
            Err(answered) => return answered,
        };
        // Every way out below but the server's fitted result is an error result.
        counted.is_error = true;
        let crossing = (modern, &declared, &bound[..]);
        let (answer, waiting) = match self
            .crossed(
                Crossed::Call,
                &name,
                route.index,
                params,
                retry,
                crossing,
                sent,
            )
            .await
        {
            Ok(answered) => answered,
            Err(early) => return early,
        };
        if modern
            && let Ok(result) = &answer
            && result.get().contains("input_required")
            && crossing::asks(&super::value(result))
        {
            // A 2026-07-28 server's question to a 2026-07-28 client: as it came.
            counted.is_error = false;
            return answer;
        }
        self.fit_call_answer(answer, &route, &waiting.live, counted)
            .await
    }

    /// A prompt's get, for a 2026-07-28 client: its server's questions on the way carried
    /// across as a call's are; the answer as the server gave it.
    pub(super) async fn get_prompt(
        &self,
        mut params: Value,
        index: usize,
        sent: &Arc<Mutex<Option<(usize, Value)>>>,
    ) -> Outcome {
        let (declared, retry) = crossing::envelope_of_call(&mut params);
        let name = params["name"].as_str().unwrap_or_default().to_owned();
        let bound = crossing::binding(self.principal(), &name, &params["arguments"]);
        let crossing = (true, &declared, &bound[..]);
        match self
            .crossed(Crossed::Prompt, &name, index, params, retry, crossing, sent)
            .await
        {
            Ok((answer, _)) => answer,
            Err(early) => early,
        }
    }

    /// A request to server `index` whose server may ask its client on the way: sent (or a
    /// parked one resumed by the client's `retry`), its answer awaited, the server's questions
    /// carried across the eras meanwhile (`crossing`: whether the client speaks 2026-07-28,
    /// what it declared it can be asked, what a park is bound to). The answer and the request
    /// it answered, or the session's early answer.
    #[allow(clippy::too_many_arguments)]
    async fn crossed(
        &self,
        crossed: Crossed,
        name: &str,
        index: usize,
        mut params: Value,
        retry: Option<crossing::Retry>,
        (modern, declared, bound): (bool, &crossing::Declared, &[u8]),
        sent: &Arc<Mutex<Option<(usize, Value)>>>,
    ) -> Result<(Outcome, crossing::Waiting), Outcome> {
        let _progress;
        let waiting = match retry {
            Some(retry) if retry.is_ours() => {
                match self.resume(&retry, bound, name).await {
                    Ok(waiting) => waiting,
                    // A state that opens no park is the request's fault: a JSON-RPC error.
                    Err(why) => return Err(failed(INVALID_PARAMS, why)),
                }
            }
            retry => {
                let live = match self.live(index).await {
                    Ok(live) => live,
                    Err(why) => {
                        return Err(
                            crossed.failed(format!("{why}; the next call tries to start it again"))
                        );
                    }
                };
                match retry {
                    // A state of the server's own: its to open, as it came; answers given
                    // without a state are its to read.
                    Some(retry) if live.peer.is_modern() => retry.put_back(&mut params),
                    Some(retry) if retry.state.is_some() => {
                        return Err(failed(INVALID_PARAMS, crossing::not_verified(name)));
                    }
                    // Answers before any question, for a server of the handshake era, which
                    // asks as it works: nothing to answer yet.
                    _ => {}
                }
                // A 2026-07-28 server reads what this request's client declared it can be
                // asked and the logs it wants (the session's envelope gives the rest).
                if live.peer.is_modern() {
                    if !declared.capabilities.is_null() {
                        params["_meta"][wire::era::CLIENT_CAPABILITIES_KEY] =
                            declared.capabilities.clone();
                    }
                    if let Some(level) = &declared.log_level {
                        params["_meta"][wire::era::LOG_LEVEL_KEY] = Value::String(level.clone());
                    }
                }
                _progress = self.route_progress(index, Some(&mut params));
                self.send_call(live, index, crossed.method(), &params, modern)
                    .await
            }
        };
        let asked = Asked {
            crossed,
            name,
            params: &params,
            capabilities: &declared.capabilities,
            bound,
            modern,
        };
        self.answer_of(waiting, &asked, sent).await
    }

    /// The principal the session serves, when the endpoint knows one.
    fn principal(&self) -> Option<&str> {
        self.settings
            .telemetry
            .as_ref()
            .and_then(|telemetry| telemetry.principal.as_deref())
    }

    /// The tool a call names, as the client names it and as its server does: `read_artifact`
    /// and the search's own tools answered here (the answer is the error side), a found tool
    /// called through `call_tool` unwrapped, a name that is no tool refused.
    async fn route_call(
        &self,
        params: &mut Value,
        counted: &mut Counted,
    ) -> Result<(String, super::Route), Outcome> {
        let mut name = params["name"].as_str().unwrap_or_default().to_owned();
        if name == READ_ARTIFACT {
            counted.tool = name;
            let (read, is_error) = self.read_artifact(params).await;
            counted.is_error = is_error;
            return Err(ok(&read));
        }
        if self.settings.tool_search && name == SEARCH_TOOLS {
            counted.tool = name;
            return Err(ok(&self.search(&params["arguments"]).await));
        }
        if self.settings.tool_search && name == CALL_TOOL {
            // A found tool, called through the tool every client lists.
            let arguments = params["arguments"].clone();
            name = arguments["name"].as_str().unwrap_or_default().to_owned();
            if name == SEARCH_TOOLS || name == CALL_TOOL || name == READ_ARTIFACT {
                counted.tool = CALL_TOOL.to_owned();
                counted.is_error = true;
                return Err(ok(&outgoing::error_result(format!(
                    "call_tool calls the servers' tools; call `{name}` itself"
                ))));
            }
            params["name"] = Value::String(name.clone());
            params["arguments"] = arguments
                .get("arguments")
                .cloned()
                .unwrap_or_else(|| json!({}));
        }
        let Some(route) = self.tool_route(&name).await else {
            // Not a series of its own: a name the client made up is not a tool.
            counted.tool = "_unknown".to_owned();
            return Err(failed(INVALID_PARAMS, format!("Unknown tool: `{name}`")));
        };
        counted.server = Some(route.index);
        counted.tool.clone_from(&route.name);
        params["name"] = Value::String(route.name.clone());
        Ok((name, route))
    }

    /// A parked call, resumed by its client's retry: the client's answer goes to the server
    /// (which may ask again as soon as it has it), and the call waits on.
    async fn resume(
        &self,
        retry: &crossing::Retry,
        bound: &[u8],
        name: &str,
    ) -> Result<crossing::Waiting, String> {
        let parked = self.unpark(retry, bound, name)?;
        let waiting = parked.waiting;
        lock(&self.asking).insert(waiting.index, waiting.asking.clone());
        for (i, ask) in parked.asked.iter().enumerate() {
            let answer = retry.answer(&crossing::input_key(i));
            waiting.live.peer.answer(&ask.id, answer).await;
        }
        Ok(waiting)
    }

    /// The server's answer to a call, within the timeout. A question of the server's on the
    /// way parks the call for a 2026-07-28 client; a 2026-07-28 server's question in its
    /// answer is asked of a client of the handshake era, and the call made again with the
    /// answers. The answer and the call it answered, or the session's early answer.
    async fn answer_of(
        &self,
        mut waiting: crossing::Waiting,
        asked: &Asked<'_>,
        sent: &Arc<Mutex<Option<(usize, Value)>>>,
    ) -> Result<(Outcome, crossing::Waiting), Outcome> {
        let server = &self.slots[waiting.index].upstream.name;
        let name = asked.name;
        for round in 0..=crossing::ROUNDS {
            *lock(sent) = Some((waiting.index, waiting.upstream_id.clone()));
            let answer = match self
                .wait_on(&mut waiting, asked.modern, asked.capabilities)
                .await
            {
                Waited::Answer(answer) => answer,
                Waited::Asked(asks) => return Err(self.park(waiting, asks, asked)),
                Waited::TimedOut => {
                    let (live, index) = (Arc::clone(&waiting.live), waiting.index);
                    let why = self
                        .timed_out(&live, index, &waiting.upstream_id, name)
                        .await;
                    return Err(asked.crossed.failed(why));
                }
            };
            let Some(question) = answer
                .as_ref()
                .ok()
                .map(|raw| super::value(raw))
                .filter(|result| !asked.modern && crossing::asks(result))
            else {
                return Ok((answer, waiting));
            };
            if round == crossing::ROUNDS {
                break;
            }
            let answers = match self.ask_client(&question).await {
                Ok(answers) => answers,
                Err(why) => return Err(asked.crossed.failed(why)),
            };
            let mut again = asked.params.clone();
            if let Some(state) = question
                .get("requestState")
                .filter(|state| !state.is_null())
            {
                again["requestState"] = state.clone();
            }
            again["inputResponses"] = answers;
            let (live, index) = (Arc::clone(&waiting.live), waiting.index);
            waiting = self
                .send_call(live, index, asked.crossed.method(), &again, false)
                .await;
        }
        Err(asked.crossed.failed(format!(
            "the MCP server `{server}` asked the client {} times over for `{name}`; the proxy \
             stopped answering",
            crossing::ROUNDS
        )))
    }

    /// A call its server did not answer within the timeout: the server told to cancel it; what
    /// the client is told.
    async fn timed_out(
        &self,
        live: &super::super::upstream::Live,
        index: usize,
        upstream_id: &Value,
        name: &str,
    ) -> String {
        let server = &self.slots[index].upstream.name;
        live.peer.forget(upstream_id);
        let reason = format!(
            "timed out after {}",
            crate::figures::DisplayDuration(self.settings.timeout)
        );
        let cancel = json!({ "requestId": upstream_id, "reason": reason });
        live.peer
            .notify("notifications/cancelled", Some(wire::raw(&cancel)))
            .await;
        format!("the call to `{name}` {reason}; the MCP server `{server}` was told to cancel it")
    }

    /// The server's answer to a call fitted to the cap (or, for a server set to, the over-cap
    /// error in its place); a failure said in the server's name.
    async fn fit_call_answer(
        &self,
        answer: Outcome,
        route: &super::Route,
        live: &super::super::upstream::Live,
        counted: &mut Counted,
    ) -> Outcome {
        let server = &self.slots[route.index].upstream.name;
        let result = match answer {
            Ok(result) => result,
            Err(_) if live.peer.is_closed() => {
                return ok(&outgoing::error_result(format!(
                    "the MCP server `{server}` ended while running `{}`; the next call starts it \
                     again",
                    route.name
                )));
            }
            Err(error) => return Err(error),
        };
        let call = outgoing::Call {
            tool: &route.name,
            schema: route.output_schema.as_deref(),
            send: route.send,
        };
        let (mut fitted, mut report) =
            match outgoing::tool_result(&result, &call, &self.settings.fitting).await {
                Ok(fitted) => fitted,
                Err(why) => {
                    return ok(&outgoing::error_result(format!(
                        "the MCP server `{server}` sent an answer to `{}` that cannot be read: \
                         {why}",
                        route.name
                    )));
                }
            };
        let over_cap = self.slots[route.index].upstream.over_cap;
        if over_cap == OverCap::Error
            && report.cut
            && fitted.get("isError") != Some(&Value::Bool(true))
        {
            // None of the result goes: an error saying where it all is.
            fitted = outgoing::over_cap_result(
                &route.name,
                &fitted,
                &mut report,
                &self.settings.fitting,
                outgoing::OverCapWhy::Asked,
            );
        }
        // A task the call made is this session's.
        if let Some(task) = fitted["task"]["taskId"].as_str() {
            lock(&self.tasks).insert(task.to_owned());
        }
        counted.is_error = fitted.get("isError") == Some(&Value::Bool(true));
        counted.report = Some(report);
        ok(&fitted)
    }

    /// Sends a call to server `index`. For a 2026-07-28 client (`modern`), the server's
    /// requests are the call's from before it is sent: a server may ask at once.
    async fn send_call(
        &self,
        live: Arc<super::super::upstream::Live>,
        index: usize,
        method: &'static str,
        params: &Value,
        modern: bool,
    ) -> crossing::Waiting {
        let (asking, asks) = mpsc::channel(crossing::ASKS_QUEUED);
        if modern {
            lock(&self.asking).insert(index, asking.clone());
        }
        let pending = live.peer.request(method, Some(wire::raw(params))).await;
        crossing::Waiting {
            upstream_id: pending.id.clone(),
            answer: Box::pin(pending.answer()),
            live,
            index,
            asks,
            asking,
        }
    }

    /// Waits for the server's answer to a call, within the timeout. For a 2026-07-28 client
    /// (`modern`, declaring `capabilities`), a request the server sends meanwhile ends the wait
    /// when the client can be asked it; one it cannot is answered here, with an error.
    async fn wait_on(
        &self,
        waiting: &mut crossing::Waiting,
        modern: bool,
        capabilities: &Value,
    ) -> Waited {
        if modern {
            // The server's requests while the call waits are its client's to answer.
            lock(&self.asking).insert(waiting.index, waiting.asking.clone());
        }
        let deadline = tokio::time::Instant::now() + self.settings.timeout;
        let waited = loop {
            let waited = tokio::select! {
                outcome = &mut waiting.answer => Waited::Answer(outcome),
                Some(ask) = waiting.asks.recv() => Waited::Asked(vec![ask]),
                () = tokio::time::sleep_until(deadline) => Waited::TimedOut,
            };
            let Waited::Asked(mut asks) = waited else {
                break waited;
            };
            let live = Arc::clone(&waiting.live);
            if !askable(&live, &mut asks, capabilities).await {
                continue;
            }
            // What the server asks at once goes to the client at once.
            let gathering = tokio::time::Instant::now() + crossing::ASKED_AT_ONCE;
            while let Ok(Some(ask)) = tokio::time::timeout_at(gathering, waiting.asks.recv()).await
            {
                let mut more = vec![ask];
                if askable(&live, &mut more, capabilities).await {
                    asks.append(&mut more);
                }
            }
            // Parked, the call keeps the server's further requests (read when it resumes).
            return Waited::Asked(asks);
        };
        self.stop_asking(waiting);
        waited
    }

    /// Asks a client of the handshake era what a 2026-07-28 server's `InputRequiredResult`
    /// asks, one request each; its answers by the server's keys, or why it gave none.
    async fn ask_client(&self, question: &Value) -> Result<Value, String> {
        let mut answers = serde_json::Map::new();
        let requests = question["inputRequests"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (key, request) in requests {
            let method = request["method"].as_str().unwrap_or_default();
            let pending = self
                .client
                .request(method, request.get("params").map(wire::raw))
                .await;
            match pending.answer().await {
                Ok(answer) => {
                    answers.insert(key, super::value(&answer));
                }
                Err(error) => {
                    let error = super::value(&error);
                    return Err(format!(
                        "the client could not answer the server's `{method}`: {}",
                        error["message"].as_str().unwrap_or("no reason given")
                    ));
                }
            }
        }
        Ok(Value::Object(answers))
    }

    /// The call no longer waits on its server: the server's requests are no longer its.
    fn stop_asking(&self, waiting: &crossing::Waiting) {
        let mut asking = lock(&self.asking);
        if asking
            .get(&waiting.index)
            .is_some_and(|listed| listed.same_channel(&waiting.asking))
        {
            asking.remove(&waiting.index);
        }
    }

    /// Parks a call whose server asked `asks`, and answers its client with the questions, the
    /// park's key sealed for this call into the state the client is to echo.
    fn park(
        &self,
        waiting: crossing::Waiting,
        asks: Vec<crossing::Ask>,
        asked: &Asked<'_>,
    ) -> Outcome {
        let bound = asked.bound;
        self.sweep_parked();
        let sealed = ArtifactId::generate().ok().and_then(|nonce| {
            let sealed = crossing::seal(nonce.as_str(), bound)?;
            Some((nonce.to_string(), sealed))
        });
        let Some((nonce, sealed)) = sealed else {
            return asked.crossed.failed(format!(
                "the server asked `{}`, and the question could not be sealed for the client",
                asks[0].method
            ));
        };
        let question = crossing::input_required(&asks, sealed);
        let parked = crossing::Parked {
            waiting,
            asked: asks,
            until: Instant::now() + crossing::PARKED_FOR,
        };
        lock(&self.parked).insert(nonce, parked);
        ok(&question)
    }

    /// The call a retry's state names, taken from the parked ones: only with a state this
    /// process sealed for this call and principal, unexpired, once.
    fn unpark(
        &self,
        retry: &crossing::Retry,
        bound: &[u8],
        tool: &str,
    ) -> Result<crossing::Parked, String> {
        self.sweep_parked();
        let again = "call the tool again without it";
        let Some(nonce) = retry
            .state
            .as_deref()
            .and_then(|state| crossing::open(state, bound))
        else {
            return Err(crossing::not_verified(tool));
        };
        lock(&self.parked).remove(&nonce).ok_or_else(|| {
            format!(
                "no `{tool}` call waits on this requestState (it was answered already, or waited \
                 too long); {again}"
            )
        })
    }

    /// Parked calls their clients did not come back to: their questions answered with an
    /// error, their servers told to cancel them.
    fn sweep_parked(&self) {
        let now = Instant::now();
        let expired: Vec<crossing::Parked> = {
            let mut parked = lock(&self.parked);
            let nonces: Vec<String> = parked
                .iter()
                .filter(|(_, parked)| parked.until <= now)
                .map(|(nonce, _)| nonce.clone())
                .collect();
            nonces
                .iter()
                .filter_map(|nonce| parked.remove(nonce))
                .collect()
        };
        for parked in expired {
            tokio::spawn(async move {
                let peer = &parked.waiting.live.peer;
                let why = "the client did not answer in time";
                let error = wire::error(wire::INTERNAL_ERROR, why);
                for ask in &parked.asked {
                    peer.answer(&ask.id, Err(wire::raw(&error))).await;
                }
                peer.forget(&parked.waiting.upstream_id);
                let cancel = json!({ "requestId": parked.waiting.upstream_id, "reason": why });
                peer.notify("notifications/cancelled", Some(wire::raw(&cancel)))
                    .await;
            });
        }
    }

    /// `resources/read` of an artifact's URI: the page `read_artifact` gives for the same
    /// arguments (the URI's query), as a resource's contents; the session's own artifacts
    /// only, as `read_artifact` reads them. An unranged read of a large artifact is its first
    /// page, which says where the next starts.
    pub(super) async fn read_artifact_resource(&self, uri: &str) -> Outcome {
        let arguments = match ArtifactId::parse_uri(uri) {
            Ok((_, arguments)) => arguments,
            Err(why) => return failed(INVALID_PARAMS, why),
        };
        let (read, is_error) = self.read_artifact(&json!({ "arguments": arguments })).await;
        let blocks = read["content"].as_array().cloned().unwrap_or_default();
        if is_error {
            let why = blocks
                .iter()
                .filter_map(|block| block["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n");
            return failed(RESOURCE_NOT_FOUND, why);
        }
        let base = uri.split('?').next().unwrap_or(uri);
        let contents: Vec<Value> = blocks
            .iter()
            .map(|block| match block["type"].as_str() {
                Some("image" | "audio") => json!({
                    "uri": base,
                    "mimeType": block["mimeType"],
                    "blob": block["data"],
                }),
                _ => json!({ "uri": uri, "mimeType": "text/plain", "text": block["text"] }),
            })
            .collect();
        ok(&json!({ "contents": contents }))
    }

    /// `read_artifact`: media come back as the content they were; text is paged within the cap.
    /// The result, and whether it is an error.
    pub(super) async fn read_artifact(&self, params: &Value) -> (Value, bool) {
        let arguments = params
            .get("arguments")
            .cloned()
            .unwrap_or_else(|| json!({}));
        // An unranged read gives media back whole (or refuses at once); a ranged one pages its
        // base64 as text, as the refusal says: the registry's reader's rule.
        if let Some(id) = arguments["id"]
            .as_str()
            .and_then(|id| ArtifactId::parse(id).ok())
            .filter(|_| crate::registry::asks_whole(&arguments))
        {
            let store = Arc::clone(&self.settings.fitting.store);
            let read_id = id.clone();
            let read = tokio::task::spawn_blocking(move || {
                crate::artifacts::try_read_media(store.as_ref(), &read_id)
            })
            .await;
            let error = |text: String| (outgoing::error_result(text), true);
            match read {
                Ok(Ok(crate::artifacts::MediaRead::Media(media))) => {
                    return (
                        json!({ "content": [outgoing::media_block(media, &id)] }),
                        false,
                    );
                }
                // Refused before anything of it is read: the answer could not carry it.
                Ok(Ok(crate::artifacts::MediaRead::TooLarge {
                    kind,
                    mime_type,
                    bytes,
                })) => {
                    return error(crate::artifacts::too_large_to_read(
                        &id,
                        &kind,
                        &mime_type,
                        bytes,
                        self.settings.fitting.store.location(),
                    ));
                }
                Ok(Ok(crate::artifacts::MediaRead::NotMedia)) => {}
                // The store's failure, said at once: the page read would wait for it again.
                Ok(Err(failure)) => {
                    return error(crate::registry::read_failure(&id, failure).model_text());
                }
                Err(_) => return error("the artifact store failed".to_owned()),
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
        (
            json!({ "content": [{ "type": "text", "text": text }], "isError": is_error }),
            is_error,
        )
    }
}
