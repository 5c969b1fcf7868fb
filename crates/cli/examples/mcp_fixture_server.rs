//! An MCP server written with rmcp alone, with tools that misbehave on demand: the upstream the
//! proxy's tests put behind `toolsmith proxy`.
//!
//! `cargo run -p toolsmith-cli --example mcp_fixture_server` serves on stdio;
//! `-- --http 127.0.0.1:0` serves streamable HTTP at `/mcp` and prints the address it bound;
//! `-- --hang` reads its input and never answers (a server stuck before `initialize`).
//!
//! Tools: `echo` (read-only), `big` (a numbered text of N chars), `fail` (an `isError`
//! result), `flood` (progress notifications in bulk), `slow` (progress every 50 ms for N
//! seconds; writes `cancelled` to a file if the call is cancelled), `die` (the process exits
//! mid-call), `image` (an image beside text), `structured` (only `structuredContent`), `pid`
//! (the server's process id), `odd` (a schema with `patternProperties`) and `rendezvous`
//! (waits until `n` calls have arrived: concurrent calls meet, serialized ones do not).

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ServerCapabilities, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt as _};
use serde_json::{Map, Value, json};

#[derive(Clone)]
struct Fixture {
    /// Calls of `rendezvous` that have arrived.
    arrived: Arc<tokio::sync::Semaphore>,
}

impl Default for Fixture {
    fn default() -> Self {
        Fixture {
            arrived: Arc::new(tokio::sync::Semaphore::new(0)),
        }
    }
}

fn tool(name: &'static str, description: &'static str, properties: Value) -> Tool {
    let Value::Object(schema) = json!({ "type": "object", "properties": properties }) else {
        unreachable!("the schema is an object")
    };
    Tool::new(name, description, Arc::new(schema))
}

fn text(result: impl Into<String>) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(result)]).into()
}

fn number(arguments: &Map<String, Value>, key: &str, default: u64) -> u64 {
    arguments
        .get(key)
        .and_then(Value::as_u64)
        .unwrap_or(default)
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("fixture", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut echo = tool(
            "echo",
            "Returns its text.",
            json!({ "text": { "type": "string" } }),
        );
        echo = echo.with_annotations(ToolAnnotations::new().read_only(true));
        Ok(ListToolsResult::with_all_items(vec![
            echo,
            tool(
                "big",
                "A numbered text of `chars` characters.",
                json!({ "chars": { "type": "integer" } }),
            ),
            tool("fail", "Fails on purpose.", json!({})),
            tool(
                "slow",
                "Reports progress for `secs` seconds; writes `cancelled` to `marker` when cancelled.",
                json!({ "secs": { "type": "integer" }, "marker": { "type": "string" } }),
            ),
            tool("die", "The server exits mid-call.", json!({}))
                .with_annotations(ToolAnnotations::new().destructive(true)),
            tool(
                "image",
                "An image and a caption; the image of `bytes` bytes of base64 when asked.",
                json!({ "bytes": { "type": "integer" } }),
            ),
            tool("structured", "Only structured content.", json!({})),
            tool("pid", "The server's process id.", json!({})),
            tool(
                "odd",
                "A schema some providers cannot take.",
                json!({ "tags": { "type": "object", "patternProperties": { "^x-": { "type": "string" } } } }),
            ),
            tool(
                "flood",
                "Sends `count` progress notifications of `chars` chars each, at once, then answers.",
                json!({ "count": { "type": "integer" }, "chars": { "type": "integer" } }),
            ),
            tool(
                "rendezvous",
                "Waits until `n` calls of it have arrived (10 s at most).",
                json!({ "n": { "type": "integer" } }),
            ),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        match request.name.as_ref() {
            "echo" => Ok(text(
                arguments
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            )),
            "big" => {
                let chars = usize::try_from(number(&arguments, "chars", 1_000)).unwrap_or(0);
                let mut out = String::with_capacity(chars + 64);
                let mut line = 1;
                while out.len() < chars {
                    out.push_str(&format!("line {line:08} {}\n", "x".repeat(50)));
                    line += 1;
                }
                out.truncate(chars);
                Ok(text(out))
            }
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text(
                "the upstream failed on purpose",
            )])
            .into()),
            "slow" => {
                let steps = number(&arguments, "secs", 1) * 20;
                let marker = arguments
                    .get("marker")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let token = context.meta.get_progress_token();
                for step in 0..steps {
                    tokio::select! {
                        () = context.ct.cancelled() => {
                            if let Some(marker) = marker {
                                let _ = std::fs::write(marker, "cancelled");
                            }
                            return Err(ErrorData::internal_error("cancelled", None));
                        }
                        () = tokio::time::sleep(Duration::from_millis(50)) => {}
                    }
                    if let Some(token) = &token {
                        let _ = context
                            .peer
                            .notify_progress(
                                ProgressNotificationParam::new(token.clone(), step as f64)
                                    .with_message(format!("step {step}")),
                            )
                            .await;
                    }
                }
                Ok(text("done"))
            }
            "flood" => {
                let count = number(&arguments, "count", 1_000);
                let chars = usize::try_from(number(&arguments, "chars", 10)).unwrap_or(10);
                if let Some(token) = context.meta.get_progress_token() {
                    for step in 0..count {
                        let _ = context
                            .peer
                            .notify_progress(
                                ProgressNotificationParam::new(token.clone(), step as f64)
                                    .with_message(format!("{step} {}", "p".repeat(chars))),
                            )
                            .await;
                    }
                }
                Ok(text("flooded"))
            }
            "die" => std::process::exit(3),
            "image" => {
                let data = match usize::try_from(number(&arguments, "bytes", 0)).unwrap_or(0) {
                    0 => "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB".to_owned(),
                    bytes => "A".repeat(bytes / 4 * 4),
                };
                Ok(CallToolResult::success(vec![
                    ContentBlock::text("a caption"),
                    ContentBlock::image(data, "image/png"),
                ])
                .into())
            }
            "structured" => {
                let rows: Vec<Value> = (0..2_000)
                    .map(|i| json!({ "id": i, "title": format!("issue number {i}") }))
                    .collect();
                Ok(CallToolResult::structured(json!({ "issues": rows })).into())
            }
            "pid" => Ok(text(std::process::id().to_string())),
            "odd" => Ok(text("odd")),
            "rendezvous" => {
                let n = u32::try_from(number(&arguments, "n", 2)).unwrap_or(2);
                self.arrived.add_permits(1);
                let met =
                    tokio::time::timeout(Duration::from_secs(10), self.arrived.acquire_many(n))
                        .await;
                match met {
                    Ok(Ok(permits)) => {
                        // Let the others through too.
                        drop(permits);
                        Ok(text("met"))
                    }
                    _ => Ok(text("alone")),
                }
            }
            other => Err(ErrorData::invalid_params(
                format!("no tool `{other}`"),
                None,
            )),
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--hang") => {
            // Reads everything, answers nothing.
            let mut sink = tokio::io::sink();
            tokio::io::copy(&mut tokio::io::stdin(), &mut sink).await?;
            Ok(())
        }
        Some("--http") => serve_http(args.get(1).map_or("127.0.0.1:0", String::as_str)).await,
        _ => {
            let service = Fixture::default()
                .serve((tokio::io::stdin(), tokio::io::stdout()))
                .await?;
            service.waiting().await?;
            Ok(())
        }
    }
}

/// Serves streamable HTTP at `/mcp` on `address`, printing `http://ADDRESS/mcp` once bound.
async fn serve_http(address: &str) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    use hyper_util::rt::TokioIo;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let listener = tokio::net::TcpListener::bind(address).await?;
    println!("http://{}/mcp", listener.local_addr()?);
    let service = StreamableHttpService::new(
        || Ok(Fixture::default()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    loop {
        let (stream, _) = listener.accept().await?;
        let service = hyper_util::service::TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
