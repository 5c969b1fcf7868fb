//! Tool search over the servers' tools: `search_tools` and `call_tool`.

use super::{CALL_TOOL, SEARCH_TOOLS, Searchable, Session};
use crate::figures::grouped;
use crate::mcp::outgoing;
use crate::sync::lock;
use serde_json::Value;
use serde_json::json;
use std::sync::Arc;

impl Session {
    /// Indexes the servers' tools for the search, and keeps the index.
    pub(super) fn index(&self, tools: Vec<Value>) -> Arc<Searchable> {
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
    pub(super) async fn search(&self, arguments: &Value) -> Value {
        let query = arguments["query"].as_str().unwrap_or_default();
        let limit = arguments["limit"]
            .as_u64()
            .map_or(5, |n| n.clamp(1, 20) as usize);
        let existing = lock(&self.searchable).clone();
        let searchable = match existing {
            Some(searchable) if lock(&self.routes).tools_listed => searchable,
            _ => match self.servers_tools().await {
                Ok(tools) => self.index(tools),
                Err(why) => return outgoing::error_result(why),
            },
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
        // A 2026-07-28 client's listing does not vary with its searches: what a search finds
        // is called with call_tool.
        let modern = self.modern.load(std::sync::atomic::Ordering::SeqCst);
        let how = if modern {
            "call them with call_tool (`{\"name\": …, \"arguments\": {…}}`)"
        } else {
            "they are loaded: call them by name, or with call_tool"
        };
        let mut text = format!(
            "[{} of the tools that match `{query}`, best first; {how}]\n{body}",
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
        if grew && !modern {
            self.client
                .notify("notifications/tools/list_changed", None)
                .await;
        }
        json!({ "content": [{ "type": "text", "text": text }] })
    }
}

/// `search_tools` as the proxy lists it.
pub(super) fn search_listing(count: usize) -> Value {
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
pub(super) fn call_listing() -> Value {
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
