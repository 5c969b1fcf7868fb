//! One tool of a server, as a [`DynTool`]: a call forwarded, its progress routed, its
//! cancellation sent on.

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest, RequestId,
    ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::Value;
use tokio::sync::mpsc;

use super::PREFIX_SEPARATOR;
use super::connection::Inner;
use super::progress::{PROGRESS_BACKLOG, ProgressRoute, Reported, Route};
use crate::artifacts::READ_ARTIFACT;
use crate::figures::grouped;
use crate::mcp::wire::ANSWER_TOO_LARGE;
use crate::tool::{
    Audience, CallArgs, DynTool, ToolAnnotations, ToolContext, ToolError, ToolLimits, ToolOutput,
    ToolSpec,
};

/// One tool of a server.
pub(super) struct RemoteTool {
    inner: Arc<Inner>,
    /// Its name on the server.
    remote: String,
    spec: ToolSpec,
    /// Whether the server's schema only wraps the text: its results go as the text alone.
    wraps_text: bool,
}

impl RemoteTool {
    pub(super) fn new(
        inner: &Arc<Inner>,
        tool: rmcp::model::Tool,
        prefixed: bool,
        limits: ToolLimits,
    ) -> Self {
        let remote = tool.name.to_string();
        let with_server = format!("{}{PREFIX_SEPARATOR}{remote}", inner.name);
        let local = if prefixed {
            with_server
        } else if crate::names::sanitize_tool_name(&remote) == READ_ARTIFACT {
            // The registry's own reader keeps its name: a server's tool that would take it
            // (before or after sanitizing) gets the server's name in front.
            tracing::warn!(
                "the MCP server `{}` has a tool `{remote}`, which would take the registry's \
                 `{READ_ARTIFACT}`; it is served as `{with_server}`",
                inner.name
            );
            with_server
        } else {
            remote.clone()
        };
        let description = match tool.description.as_deref() {
            Some(description) if !description.trim().is_empty() => {
                crate::mcp::caps::description(description).into_owned()
            }
            _ => format!("The `{remote}` tool of the MCP server `{}`.", inner.name),
        };
        let annotations =
            tool.annotations
                .as_ref()
                .map_or_else(ToolAnnotations::default, |hints| ToolAnnotations {
                    read_only: hints.read_only_hint,
                    destructive: hints.destructive_hint,
                    idempotent: hints.idempotent_hint,
                    open_world: hints.open_world_hint,
                });
        let spec = ToolSpec::new(
            crate::names::sanitize_tool_name(&local),
            description,
            Value::Object(tool.input_schema.as_ref().clone()),
        )
        // A tool its server says may destroy data is a write tool: its results are kept out of
        // history compaction, as the standard write and exec tools' are.
        .with_limits(limits.with_preserve(limits.preserve || annotations.destructive == Some(true)))
        .with_annotations(annotations)
        .with_origin(format!("the MCP server `{}`", inner.name));
        // What the server said of the tool for people and of its result, passed on as said.
        let spec = match tool.title.clone() {
            Some(title) => spec.with_title(title),
            None => spec,
        };
        // A schema that only wraps the text (`{"result": "…"}`) is not kept: the text alone
        // goes, as the proxy sends it by default.
        let schema = tool
            .output_schema
            .as_ref()
            .map(|schema| Value::Object(schema.as_ref().clone()))
            .filter(|schema| !crate::structure::wraps_text(schema));
        let wraps_text = tool.output_schema.is_some() && schema.is_none();
        let spec = match schema {
            Some(schema) => spec.with_output_schema(schema),
            None => spec,
        };
        RemoteTool {
            inner: Arc::clone(inner),
            remote,
            spec,
            wraps_text,
        }
    }
}

/// Sends `notifications/cancelled` for a request still running when its call ends early (the
/// registry cancelled it, or its timeout passed and the call was dropped).
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    request: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(request) = self.request.take() else {
            return;
        };
        let peer = self.peer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let cancelled = CancelledNotificationParam::new(
                    Some(request),
                    Some("the call was cancelled".to_owned()),
                );
                let _ = peer.notify_cancelled(cancelled).await;
            });
        }
    }
}

#[async_trait]
#[async_trait]
impl DynTool for RemoteTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: CallArgs, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Value::Object(arguments) = args.into_json()? else {
            return Err(ToolError::invalid_arguments(
                "the arguments must be a JSON object",
            ));
        };
        let connection = self.inner.connection().await?;
        let peer = connection.service.peer().clone();
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(self.remote.clone()).with_arguments(arguments),
        ));
        let handle = match peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(error) => {
                return Err(self
                    .inner
                    .ended(&connection, &self.remote, &error.to_string())
                    .await);
            }
        };
        let (sender, mut progress) = mpsc::channel(PROGRESS_BACKLOG);
        crate::sync::lock(&self.inner.progress)
            .insert(handle.progress_token.clone(), Route::new(sender));
        let _route = ProgressRoute {
            progress: Arc::clone(&self.inner.progress),
            token: handle.progress_token.clone(),
        };
        let mut cancel = CancelOnDrop {
            peer,
            request: Some(handle.id.clone()),
        };
        let mut response = handle.rx;
        let pass_on = |reported: Reported| match reported {
            Reported::Progress(message, done, total) => {
                cx.progress_of(Audience::User, message, done, total);
            }
            Reported::Log(level, logger, data) => cx.log(level, logger.as_deref(), data),
        };
        let answer = loop {
            tokio::select! {
                answer = &mut response => break answer,
                Some(reported) = progress.recv() => pass_on(reported),
                () = cx.cancelled() => {
                    return Err(ToolError::failed("the call was cancelled"));
                }
            }
        };
        // What came in before the answer and is still queued goes first.
        while let Ok(reported) = progress.try_recv() {
            pass_on(reported);
        }
        cancel.request = None;
        match answer {
            Ok(Ok(ServerResult::CallToolResult(result))) => {
                let mut result = result;
                if self.wraps_text {
                    result.structured_content = None;
                }
                super::content::output(&self.remote, result, cx).await
            }
            Ok(Ok(_)) => Err(ToolError::failed(format!(
                "the MCP server `{}` answered `{}` with something other than a tool result",
                self.inner.name, self.remote
            ))),
            Ok(Err(ServiceError::McpError(error))) if error.code.0 == ANSWER_TOO_LARGE => {
                Err(ToolError::failed(format!(
                    "the MCP server `{}` answered `{}` with a message over the client's limit of \
                     {} bytes, so it was not read. Ask for less in one call (a narrower query, \
                     a smaller page)",
                    self.inner.name,
                    self.remote,
                    grouped(self.inner.max_message_bytes)
                )))
            }
            Ok(Err(ServiceError::McpError(error))) => Err(ToolError::failed(format!(
                "the MCP server `{}` refused the call: {}",
                self.inner.name, error.message
            ))),
            Ok(Err(error)) => Err(self
                .inner
                .ended(&connection, &self.remote, &error.to_string())
                .await),
            Err(_) => Err(self
                .inner
                .ended(&connection, &self.remote, "its connection closed")
                .await),
        }
    }
}
