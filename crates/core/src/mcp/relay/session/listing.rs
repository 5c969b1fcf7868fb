//! Listings: every server's tools, prompts and resources in one, named so none collide, and the routes from a listed name back to its server.

use super::super::upstream::Prefix;
use super::super::upstream::error_text;
use super::search::call_listing;
use super::search::search_listing;
use super::{CALL_TOOL, MAX_ITEMS, MAX_PAGES, Route, Routes, SEARCH_TOOLS, Session, value};
use crate::artifacts::READ_ARTIFACT;
use crate::figures::grouped;
use crate::mcp::caps;
use crate::mcp::caps::MAX_RESULT_META_KEY;
use crate::mcp::client::PREFIX_SEPARATOR;
use crate::mcp::outgoing::Copies;
use crate::mcp::outgoing::structure::OutputSchema;
use crate::mcp::wire;
use crate::mcp::wire::INTERNAL_ERROR;
use crate::mcp::wire::INVALID_PARAMS;
use crate::mcp::wire::bounded;
use crate::sync::lock;
use futures_util::future::join_all;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;
use std::collections::HashMap;
use std::collections::HashSet;
use std::sync::Arc;

/// Numbers the paged listings of every session of the process.
static LISTINGS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// What the proxy's cursors start with: `toolsmith-tools:LISTING:OFFSET`.
const CURSOR_PREFIX: &str = "toolsmith-tools:";

/// The page of `tools` from `at`, and the cursor of the next one when there is one.
fn page_of(tools: &[Value], number: u64, at: usize) -> Value {
    let end = (at + caps::RELAY_PAGE_TOOLS).min(tools.len());
    let mut page = json!({ "tools": &tools[at..end] });
    if end < tools.len() {
        page["nextCursor"] = Value::String(format!("{CURSOR_PREFIX}{number}:{end}"));
    }
    page
}

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
                            crate::figures::DisplayDuration(self.settings.connecting.init_timeout)
                        ));
                    }
                };
            // Read in memory proportional to what is kept: items past the room are skipped.
            let most = if field == "tools" {
                caps::MAX_RELAYED_TOOLS
            } else {
                MAX_ITEMS
            };
            let room = most.saturating_sub(items.len());
            // What nests deeper than a value can be read is replaced first, so a tool with a
            // schema 10,000 deep is served (with a permissive schema there), not lost.
            let text = bounded::within_depth(answer.get(), bounded::MAX_LISTING_DEPTH);
            let page = bounded::page(&text, field, room).map_err(|error| {
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
    /// cap, then `read_artifact`, in pages of [`caps::RELAY_PAGE_TOOLS`] (a cursor names the
    /// listing it pages through, which stays as it was while the client pages); with tool
    /// search, `search_tools`, `call_tool`, `read_artifact` and the tools the session's
    /// searches found, in the order found.
    pub(super) async fn list_tools(&self, params: Option<&Value>) -> Result<Value, Value> {
        let cursor = params.and_then(|params| params.get("cursor"));
        if !self.settings.tool_search
            && let Some(cursor) = cursor
        {
            return self.next_page(cursor);
        }
        let tools = self
            .servers_tools()
            .await
            .map_err(|why| wire::error(INTERNAL_ERROR, why))?;
        if !self.settings.tool_search {
            let mut tools = tools;
            tools.push(self.settings.reader_listing.clone());
            if tools.len() <= caps::RELAY_PAGE_TOOLS {
                return Ok(json!({ "tools": tools }));
            }
            let number = LISTINGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let tools = Arc::new(tools);
            *lock(&self.paged) = Some((number, Arc::clone(&tools)));
            return Ok(page_of(&tools, number, 0));
        }
        let searchable = self.index(tools);
        let loaded = lock(&self.loaded).clone();
        let mut offered = vec![
            search_listing(searchable.tools.len()),
            call_listing(),
            self.settings.reader_listing.clone(),
        ];
        // A 2026-07-28 client's listing is the same whatever it searched (a list must not vary
        // per connection): the tools it found are called with call_tool.
        if !self.modern.load(std::sync::atomic::Ordering::SeqCst) {
            offered.extend(
                loaded
                    .names()
                    .iter()
                    .filter_map(|name| searchable.tools.iter().find(|t| t["name"] == name.as_str()))
                    .cloned(),
            );
        }
        Ok(json!({ "tools": offered }))
    }

    /// The page a cursor names, of the listing the client is paging through.
    fn next_page(&self, cursor: &Value) -> Result<Value, Value> {
        let stale = || {
            wire::error(
                INVALID_PARAMS,
                "the cursor names no listing of this session (the listing changed, or the \
                 cursor was not given by this proxy); list the tools again without a cursor",
            )
        };
        let (number, at) = cursor
            .as_str()
            .and_then(|cursor| cursor.strip_prefix(CURSOR_PREFIX))
            .and_then(|rest| rest.split_once(':'))
            .and_then(|(number, at)| Some((number.parse::<u64>().ok()?, at.parse::<usize>().ok()?)))
            .ok_or_else(stale)?;
        let paged = lock(&self.paged).clone();
        match paged {
            Some((current, tools)) if current == number && at < tools.len() => {
                Ok(page_of(&tools, number, at))
            }
            _ => Err(stale()),
        }
    }

    /// Every server's tools, named so no two collide, each with its cap (and the routes to
    /// them, kept).
    pub(super) async fn servers_tools(&self) -> Result<Vec<Value>, String> {
        let lists = self.lists_of("tools", "tools/list", "tools").await;
        let named = self.name_all(&lists, true)?;
        let cap = self.settings.fitting.cap;
        let mut routes = HashMap::new();
        let mut tools = Vec::with_capacity(named.len() + 1);
        for (index, mut tool, exposed, original) in named {
            // A structure that only wraps the text is not sent by default: the text alone goes.
            let send = match self.slots[index].upstream.send {
                Copies::Auto
                    if tool
                        .get("outputSchema")
                        .is_some_and(crate::structure::wraps_text) =>
                {
                    Copies::TextOnly
                }
                Copies::Auto => Copies::Both,
                send => send,
            };
            if send == Copies::TextOnly
                && let Value::Object(object) = &mut tool
            {
                // Its results go without a structure: a schema would make a client refuse them.
                object.remove("outputSchema");
            }
            let has_output_schema = tool.get("outputSchema").is_some_and(Value::is_object);
            let input_schema = tool["inputSchema"].to_string();
            let output_schema = has_output_schema.then(|| tool["outputSchema"].to_string());
            let schemas = input_schema.len() + output_schema.as_ref().map_or(0, String::len);
            let too_deep = input_schema.contains(bounded::TOO_DEEP)
                || output_schema.is_some_and(|schema| schema.contains(bounded::TOO_DEEP));
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
                let deep_note = if too_deep {
                    tracing::warn!(server = %server, "the schema of `{original}` nests deeper than {} levels; served with what is deeper accepting any value", bounded::MAX_LISTING_DEPTH);
                    "\n\n(toolsmith: this tool's schema nests too deep to relay; past that depth \
                     any value is accepted, and the server checks what it gets.)"
                } else {
                    ""
                };
                let description = format!(
                    "{}{deep_note}{}",
                    caps::description(description),
                    cap_note(cap)
                );
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
            // Listed with the member a cut structure names its cut in, where it admits it.
            if output_schema.is_some()
                && let Some(listed) = tool.get_mut("outputSchema")
            {
                *listed = crate::structure::listed_schema(listed);
            }
            routes.insert(
                exposed,
                Route {
                    index,
                    name: original,
                    output_schema,
                    send,
                },
            );
            tools.push(tool);
        }
        let mut table = lock(&self.routes);
        table.tools = routes;
        table.tools_listed = true;
        Ok(tools)
    }

    /// Names every listed item (`name` field) so no two collide: a server that asks for it,
    /// and every name two servers share (or one of the proxy's own tools), get the server's
    /// name in front; a tool's name is made one every provider accepts, and unique (see
    /// [`crate::names::expose`]), every renaming logged. Tools a server's filter hides are left
    /// out. Returns `(server, item, exposed name, the server's name for it)`, or, for a name a
    /// server set never to be prefixed shares, why it cannot be served.
    pub(super) fn name_all(
        &self,
        lists: &[(usize, Vec<Value>)],
        tools: bool,
    ) -> Result<Vec<(usize, Value, String, String)>, String> {
        let items: Vec<(usize, &Value, &str)> = lists
            .iter()
            .flat_map(|(index, list)| {
                list.iter()
                    .filter_map(move |item| Some((*index, item, item["name"].as_str()?)))
            })
            .filter(|(index, _, name)| !tools || self.settings.filters[*index].serves(name))
            .collect();
        let mut reserved = vec![READ_ARTIFACT];
        if self.settings.tool_search {
            reserved.extend([SEARCH_TOOLS, CALL_TOOL]);
        }
        // Which servers offer each name.
        let mut offered: HashMap<&str, Vec<usize>> = HashMap::new();
        for (index, _, name) in &items {
            let servers = offered.entry(name).or_default();
            if !servers.contains(index) {
                servers.push(*index);
            }
        }
        let server_name = |index: usize| self.slots[index].upstream.name.as_str();
        let mut wanted = Vec::with_capacity(items.len());
        for &(index, _, name) in &items {
            let upstream = &self.slots[index].upstream;
            let sharers = &offered[name];
            let shared = sharers.len() > 1;
            let own = reserved.contains(&name);
            if upstream.prefix == Prefix::Never && (shared || own) {
                let other = match sharers.iter().find(|&&other| other != index) {
                    Some(&other) => format!("the server `{}`", server_name(other)),
                    None => "the proxy's own tool".to_owned(),
                };
                return Err(format!(
                    "`{name}` of the server `{}` is also {other}'s, and `{}` is set never to \
                     prefix its names (\"prefix\": \"never\"); set \"prefix\" to \
                     \"on-collision\" or \"always\", or hide one of them with \"tools\": \
                     {{\"deny\": [\"{name}\"]}}",
                    upstream.name, upstream.name
                ));
            }
            wanted.push(crate::names::Wanted {
                server: &upstream.name,
                name,
                prefixed: upstream.prefix == Prefix::Always
                    || (upstream.prefix == Prefix::OnCollision && (shared || own)),
            });
        }
        let exposed = crate::names::expose(&wanted, &reserved, tools);
        let mut named = Vec::with_capacity(items.len());
        for ((index, item, name), (wanted, exposed)) in
            items.into_iter().zip(wanted.iter().zip(exposed))
        {
            let Some(exposed) = exposed else {
                tracing::warn!(server = %server_name(index), "`{name}` is listed twice; the second is not served");
                continue;
            };
            let plain = if wanted.prefixed {
                format!("{}{PREFIX_SEPARATOR}{name}", wanted.server)
            } else {
                name.to_owned()
            };
            if exposed != plain {
                tracing::warn!(
                    server = %server_name(index),
                    "{:?}{} is served as `{exposed}`: {}",
                    name.chars().take(200).collect::<String>(),
                    if name.chars().nth(200).is_some() { "…" } else { "" },
                    if tools && !crate::names::is_valid_tool_name(&plain) {
                        "a name providers refuse"
                    } else {
                        "its name is taken"
                    }
                );
            }
            named.push((index, item.clone(), exposed, name.to_owned()));
        }
        Ok(named)
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
            let named = self
                .name_all(&lists, false)
                .map_err(|why| wire::error(INTERNAL_ERROR, why))?;
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
                            send: Copies::Both,
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
                send: Copies::Both,
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
            let _ = self.list_tools(None).await;
            if let Some(route) = lock(&self.routes).tools.get(name) {
                return Some(route.clone());
            }
        }
        // One server: a name it did not list is its to answer, in its own words (unless its
        // filter hides it).
        (self.slots.len() == 1 && self.settings.filters[0].serves(name)).then(|| Route {
            index: 0,
            name: name.to_owned(),
            output_schema: None,
            send: self.slots[0].upstream.send,
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
