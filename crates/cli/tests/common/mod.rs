//! What the MCP tests share: a call through rmcp's client, a result's text, and whether a
//! process still runs. Each test binary uses some of it.
#![allow(dead_code)]

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult};
use rmcp::service::{Peer, RoleClient};
use serde_json::Value;

/// Calls `tool` with `args` (an object) and waits for its complete result.
pub(crate) async fn call(peer: &Peer<RoleClient>, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(arguments) = args else {
        panic!("arguments are an object");
    };
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    match peer
        .call_tool_once(params)
        .await
        .expect("the call is answered")
    {
        CallToolResponse::Complete(result) => result,
        other => panic!("expected a complete result, got {other:?}"),
    }
}

/// The text blocks of a result, joined.
pub(crate) fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.clone()))
        .collect()
}

/// Whether process `pid` is running (a zombie counts as ended).
pub(crate) fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}
