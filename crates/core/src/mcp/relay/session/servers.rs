//! Starting the servers of a session, answering `initialize` for them, and what they send.

use super::super::peer::Incoming;
use super::super::peer::Outcome;
use super::super::peer::Peer;
use super::super::upstream;
use super::super::upstream::Live;
use super::{Session, key, ok, raw_error, value};
use crate::mcp::wire;
use crate::mcp::wire::INTERNAL_ERROR;
use crate::mcp::wire::INVALID_REQUEST;
use crate::mcp::wire::METHOD_NOT_FOUND;
use crate::sync::lock;
use futures_util::future::BoxFuture;
use futures_util::future::join_all;
use serde_json::Value;
use serde_json::json;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::Ordering;

impl Session {
    /// Starts the servers with the client's own `initialize`, and answers for them together.
    pub(super) async fn initialize(&self, params: Value) -> Result<Value, Value> {
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
        let mut answer = self.started(started);
        // A server set never to prefix its names: a name it shares refuses the session, naming
        // both servers, before the client is told anything else.
        if answer.is_ok()
            && self
                .slots
                .iter()
                .any(|slot| slot.upstream.prefix == upstream::Prefix::Never)
            && let Err(why) = self.servers_tools().await
        {
            tracing::error!("{why}");
            *lock(&self.none_started) = Some(why.clone());
            answer = Err(wire::error(INTERNAL_ERROR, why));
        }
        if let Some(shared) = &self.settings.shared {
            shared.join(self.me.clone());
            // The version is the session's own, not the one the gateway asked the server for.
            if let Ok(result) = &mut answer {
                let asked = params["protocolVersion"].as_str().unwrap_or_default();
                let server = result["protocolVersion"].as_str().unwrap_or_default();
                match super::shared::negotiate(asked, server) {
                    Ok(version) => result["protocolVersion"] = Value::String(version),
                    Err(why) => {
                        let mut error = wire::error(wire::INVALID_PARAMS, why);
                        error["data"] = json!({
                            "requested": asked,
                            "supported": super::shared::spoken(server),
                        });
                        answer = Err(error);
                    }
                }
            }
        }
        let _ = self.started_answer.set(answer.clone());
        self.ready.send_replace(true);
        answer
    }

    /// The answer to `initialize`, from how each server's start went.
    pub(super) fn started(&self, started: Vec<Result<Arc<Live>, String>>) -> Result<Value, Value> {
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
    pub(super) fn initialize_result(
        &self,
        answers: &[(usize, Value)],
        failures: &[String],
    ) -> Value {
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
        // Artifacts are resources of the proxy's own (`toolsmith://artifact/{id}`): resources
        // are always served.
        if !result["capabilities"]["resources"].is_object() {
            result["capabilities"]["resources"] = json!({});
        }
        // A shared server's resource updates are not relayed: subscriptions are not offered.
        if self.settings.shared.is_some()
            && let Some(resources) = result["capabilities"]["resources"].as_object_mut()
        {
            resources.remove("subscribe");
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
    pub(super) async fn live(&self, index: usize) -> Result<Arc<Live>, String> {
        if let Some(shared) = &self.settings.shared {
            return shared.live(index, self.settings.connecting).await;
        }
        let slot = &self.slots[index];
        upstream::up_or_start(&slot.live, || async {
            let params = self
                .params
                .get()
                .cloned()
                .ok_or_else(|| "the session is not initialized".to_owned())?;
            let session = self.me.clone();
            let on_incoming =
                move |peer: Arc<Peer>, incoming: Incoming| -> BoxFuture<'static, ()> {
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
                self.settings.warm.as_deref(),
                on_incoming,
            )
            .await?;
            if self.initialized.load(Ordering::SeqCst) {
                // Started again mid-session: it is told the client is initialized at once.
                started.peer.notify("notifications/initialized", None).await;
                if let Some(telemetry) = &self.settings.telemetry {
                    telemetry.metrics.restart(&slot.upstream.name);
                }
            }
            Ok(started)
        })
        .await
    }

    /// The servers up (or startable) that declared `capability`.
    pub(super) async fn serving(&self, capability: &str) -> Vec<usize> {
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
    pub(super) async fn forward(
        &self,
        index: usize,
        method: &str,
        params: Option<Value>,
        sent: &Arc<Mutex<Option<(usize, Value)>>>,
    ) -> Outcome {
        let mut params = params;
        let _progress = self.route_progress(index, params.as_mut());
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
    /// A request or notification of server `index`'s, which came over `peer`.
    pub(super) async fn on_upstream(&self, index: usize, peer: Arc<Peer>, incoming: Incoming) {
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
                    "notifications/progress" => {
                        let params = params.as_deref().map(value).unwrap_or(Value::Null);
                        if let Some((session, forwarded)) = self.progress.back(index, params) {
                            session
                                .client
                                .notify(&method, Some(wire::raw(&forwarded)))
                                .await;
                        }
                    }
                    "notifications/message"
                        if !self.wants_log(
                            params
                                .as_deref()
                                .map(value)
                                .as_ref()
                                .and_then(|params| params["level"].as_str())
                                .unwrap_or("info"),
                        ) => {}
                    _ => {
                        if method == "notifications/tools/list_changed" {
                            lock(&self.routes).tools_listed = false;
                        }
                        if self.modern.load(Ordering::SeqCst) && super::listen::is_listened(&method)
                        {
                            // To the listens that asked for it, and to no one else.
                            self.deliver(&method, params).await;
                            return;
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
                if self.modern.load(Ordering::SeqCst) {
                    // A call waits on this server: its client is asked in the call's answer.
                    let waiting = lock(&self.asking).get(&index).cloned();
                    if let Some(waiting) = waiting {
                        let ask = super::crossing::Ask {
                            id: id.clone(),
                            method: method.clone(),
                            params: params.clone(),
                        };
                        // Never waits here: this loop reads the server's every message.
                        if waiting.try_send(ask).is_ok() {
                            return;
                        }
                    }
                    // 2026-07-28 has no requests from server to client.
                    let why = format!(
                        "this proxy's client speaks MCP {}, which has no requests from a \
                         server to its client: `{method}` cannot be asked",
                        wire::era::MODERN
                    );
                    peer.answer(&id, Err(wire::raw(&wire::error(METHOD_NOT_FOUND, why))))
                        .await;
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

/// `a` and `b` merged: objects key by key, `true` wins over `false`, `a` wins otherwise.
pub(super) fn merge(a: Value, b: &Value) -> Value {
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
    pub(super) fn capabilities_merge_key_by_key() {
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
