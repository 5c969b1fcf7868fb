//! An MCP server over any [`Registry`], with the official Rust SDK (`rmcp`). Behind the `mcp`
//! feature.
//!
//! `tools/list` serves the registry's specs; each `tools/call` runs as a one-call turn of the
//! registry, so it gets the budget, the post-trim, the artifacts and the error results of any
//! other call. A cancelled request cancels its turn (a running command is killed); progress the
//! tool reports is forwarded as progress notifications when the client asked for them.

mod transport;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ServerCapabilities,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt as _};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::context::Event;
use crate::registry::{Registry, ToolCall};
use crate::schema::Dialect;

/// Serves `registry` over MCP on this process's stdin and stdout until the client disconnects.
///
/// Each message is one line of at most 16 MiB; a longer one, a line that is not JSON and a
/// request without the `params` it needs are each answered with a JSON-RPC error, and the
/// session goes on. When stdin closes, calls still running are cancelled (their commands
/// killed) and the function returns.
///
/// # Errors
///
/// When the MCP session cannot be set up (the client did not initialize) or ends abnormally.
pub async fn serve_stdio(
    registry: Registry,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let closed = CancellationToken::new();
    let transport =
        transport::LineTransport::new(tokio::io::stdin(), tokio::io::stdout(), closed.clone());
    let mut server = McpServer::new(registry);
    server.shutdown = closed;
    let service = server.serve(transport).await?;
    service.waiting().await?;
    Ok(())
}

/// The MCP handler of a [`Registry`]. Serve it on any rmcp transport; [`serve_stdio`] does it
/// on stdio.
#[derive(Debug, Clone)]
pub struct McpServer {
    registry: Registry,
    tools: Arc<Vec<rmcp::model::Tool>>,
    /// Cancelled when the session's input ends: running calls stop.
    shutdown: CancellationToken,
}

impl McpServer {
    /// A server for `registry`.
    pub fn new(registry: Registry) -> Self {
        let tools = registry
            .tools()
            .filter_map(|tool| {
                let rendered = Dialect::Mcp.render(tool.spec()).ok()?;
                let schema = match rendered.get("inputSchema") {
                    Some(Value::Object(schema)) => schema.clone(),
                    _ => return None,
                };
                let tool_spec = tool.spec();
                let mut listed = rmcp::model::Tool::new(
                    tool_spec.name.clone(),
                    tool_spec.description.clone(),
                    schema,
                );
                if !tool_spec.annotations.is_empty() {
                    let hints = &tool_spec.annotations;
                    let mut annotations = rmcp::model::ToolAnnotations::new();
                    annotations.read_only_hint = hints.read_only;
                    annotations.destructive_hint = hints.destructive;
                    annotations.idempotent_hint = hints.idempotent;
                    annotations.open_world_hint = hints.open_world;
                    listed = listed.with_annotations(annotations);
                }
                Some(listed)
            })
            .collect();
        McpServer {
            registry,
            tools: Arc::new(tools),
            shutdown: CancellationToken::new(),
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("toolsmith", crate::VERSION))
            .with_instructions(
                "Every tool result fits its budget. A result cut short ends its kept part with a \
                 [toolsmith: …] marker that says what was kept and how to read the rest \
                 (read_artifact with the artifact id).",
            )
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
        let call_id = format!("mcp-{}", context.id);
        let arguments = request
            .arguments
            .map_or_else(|| Value::Object(serde_json::Map::new()), Value::Object);
        let call = ToolCall::new(call_id.clone(), request.name.to_string(), arguments);

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
        let forwarder = context.meta.get_progress_token().map(|token| {
            let mut events = self.registry.subscribe();
            let peer = context.peer.clone();
            tokio::spawn(async move {
                let mut step = 0.0;
                while let Ok(event) = events.recv().await {
                    if let Event::Progress {
                        call_id: of,
                        message,
                        ..
                    } = event
                        && *of == *call_id
                    {
                        step += 1.0;
                        let param = ProgressNotificationParam::new(token.clone(), step)
                            .with_message(message);
                        // A client that went away is not the tool's failure.
                        let _ = peer.notify_progress(param).await;
                    }
                }
            })
        });

        let mut results = turn.execute([call]).await;
        canceller.abort();
        if let Some(forwarder) = forwarder {
            forwarder.abort();
        }
        let result = results.pop().ok_or_else(|| {
            McpError::internal_error("the registry returned no result for the call", None)
        })?;
        let content = vec![ContentBlock::text(result.content)];
        Ok(if result.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
        .into())
    }
}
