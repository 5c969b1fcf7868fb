//! Listings: every server's tools, prompts and resources in one, named so none collide, and the routes from a listed name back to its server.

use super::super::upstream::Prefix;
use super::super::upstream::error_text;
use super::search::call_listing;
use super::search::search_listing;
use super::{CALL_TOOL, MAX_ITEMS, MAX_PAGES, Route, Routes, SEARCH_TOOLS, Session, value};
use crate::artifacts::READ_ARTIFACT;
use crate::mcp::caps;
use crate::mcp::caps::MAX_RESULT_META_KEY;
use crate::mcp::client::PREFIX_SEPARATOR;
use crate::mcp::structure::OutputSchema;
use crate::mcp::wire;
use crate::mcp::wire::INVALID_PARAMS;
use crate::mcp::wire::bounded;
use crate::sync::lock;
use crate::trim::grouped;
use futures_util::future::join_all;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;
use std::collections::HashMap;
use std::collections::HashSet;
use std::sync::Arc;

impl Session {
    /// Reads every page of a listing of server `index` (bounded).
    pub(super) async fn list_all(
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
    pub(super) async fn list_tools(&self) -> Result<Value, Value> {
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

    /// Every server's tools, named so no two collide, each with its cap (and the routes to
    /// them, kept).
    pub(super) async fn servers_tools(&self) -> Vec<Value> {
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
    pub(super) fn name_all(
        &self,
        lists: &[(usize, Vec<Value>)],
    ) -> Vec<(usize, Value, String, String)> {
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
    pub(super) async fn lists_of(
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
    pub(super) async fn list(
        &self,
        method: &str,
        field: &str,
        capability: &str,
    ) -> Result<Value, Value> {
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

    pub(super) async fn prompt_route(&self, name: &str) -> Result<Route, Value> {
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

    pub(super) async fn resource_route(&self, uri: &str) -> Result<usize, Value> {
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

    pub(super) async fn tool_route(&self, name: &str) -> Option<Route> {
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
}

/// What a listed tool's description gains: its cap.
pub(super) fn cap_note(cap: usize) -> String {
    format!(
        "\n\nResults over {} characters are cut to that size (what matters kept, with a marker); \
         the whole result stays readable with read_artifact.",
        grouped(cap)
    )
}
