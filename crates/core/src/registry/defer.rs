//! Deferred tools: which tools wait for a search before their definitions are offered, the
//! `search_tools` built over them, and the definitions a conversation is offered as it loads
//! them.

use std::sync::Arc;

use serde_json::Value;

use super::builder::describe;
use super::search_tools::{self, Loaded, SEARCH_TOOLS};
use super::{BuildError, Registry, RegistryBuilder};
use crate::tool::into_dyn;

/// The type of Anthropic's BM25 tool search tool, as [`Registry::anthropic_native_search`]
/// offers it.
pub const ANTHROPIC_SEARCH_TOOL_TYPE: &str = "tool_search_tool_bm25_20251119";
/// The name of Anthropic's BM25 tool search tool.
pub const ANTHROPIC_SEARCH_TOOL_NAME: &str = "tool_search_tool_bm25";

impl Registry {
    /// The definitions to offer the model, in `dialect`: every tool that is not deferred, in
    /// registration order (with `search_tools` when some are). Same as
    /// [`schemas_with`](Self::schemas_with) with nothing loaded.
    ///
    /// # Errors
    ///
    /// The first [`DialectError`](crate::schema::DialectError): a tool whose schema the dialect
    /// cannot express, naming the keyword.
    pub fn schemas(
        &self,
        dialect: crate::schema::Dialect,
    ) -> Result<Vec<Value>, crate::schema::DialectError> {
        self.schemas_with(dialect, &Loaded::new())
    }

    /// The definitions to offer the model in a conversation that has loaded `loaded`: the tools
    /// that are not deferred, in registration order, then the deferred tools the conversation
    /// found, in the order it found them — so a list grows only at its end, and a provider's
    /// prompt cache of it survives.
    ///
    /// ```
    /// use toolsmith::registry::Loaded;
    /// use toolsmith::schema::Dialect;
    /// use toolsmith::{Registry, ToolCall};
    /// # use toolsmith::{ToolContext, ToolError};
    ///
    /// /// Merges a pull request.
    /// #[toolsmith::tool(defer)]
    /// async fn merge_pull_request(number: u32) -> Result<String, ToolError> {
    ///     Ok(format!("merged #{number}"))
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let registry = Registry::builder().tool(merge_pull_request()).build()?;
    /// let names = |defs: Vec<serde_json::Value>| -> Vec<String> {
    ///     defs.iter().map(|d| d["name"].as_str().unwrap().to_owned()).collect()
    /// };
    /// let mut loaded = Loaded::new();
    /// assert_eq!(names(registry.schemas_with(Dialect::Anthropic, &loaded)?), ["search_tools"]);
    ///
    /// let search = ToolCall::new("s", "search_tools", serde_json::json!({ "query": "merge a PR" }));
    /// let results = registry.turn().execute([search]).await;
    /// loaded.absorb(&results);
    /// assert_eq!(
    ///     names(registry.schemas_with(Dialect::Anthropic, &loaded)?),
    ///     ["search_tools", "merge_pull_request"]
    /// );
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`schemas`](Self::schemas).
    pub fn schemas_with(
        &self,
        dialect: crate::schema::Dialect,
        loaded: &Loaded,
    ) -> Result<Vec<Value>, crate::schema::DialectError> {
        let offered = self
            .tools()
            .zip(&self.inner.deferred)
            .filter(|(_, deferred)| !**deferred)
            .map(|(tool, _)| tool);
        let found = loaded
            .names()
            .iter()
            .filter_map(|name| self.get(name))
            .filter(|tool| self.is_deferred(&tool.spec().name));
        offered
            .chain(found)
            .map(|tool| dialect.render(tool.spec()))
            .collect()
    }

    /// Every tool in Anthropic's dialect for Anthropic's own tool search: the deferred tools
    /// marked `"defer_loading": true`, and Anthropic's BM25 search tool in place of
    /// `search_tools` (the API then finds and loads tools itself, answering with
    /// `tool_reference` blocks the history keeps as they are). Without deferred tools, the same
    /// as [`schemas`](Self::schemas).
    ///
    /// # Errors
    ///
    /// As [`schemas`](Self::schemas).
    pub fn anthropic_native_search(&self) -> Result<Vec<Value>, crate::schema::DialectError> {
        let dialect = crate::schema::Dialect::Anthropic;
        if !self.inner.deferred.contains(&true) {
            return self.schemas(dialect);
        }
        let mut definitions = vec![serde_json::json!({
            "type": ANTHROPIC_SEARCH_TOOL_TYPE,
            "name": ANTHROPIC_SEARCH_TOOL_NAME,
        })];
        for (tool, deferred) in self.tools().zip(&self.inner.deferred) {
            if tool.spec().name == SEARCH_TOOLS {
                continue;
            }
            let mut definition = dialect.render(tool.spec())?;
            if *deferred {
                definition["defer_loading"] = Value::Bool(true);
            }
            definitions.push(definition);
        }
        Ok(definitions)
    }

    /// Whether the tool named `name` is deferred: offered only once a search finds it. (A
    /// deferred tool can be called at any time; it is its definition that waits.)
    pub fn is_deferred(&self, name: &str) -> bool {
        self.inner
            .by_name
            .get(name)
            .is_some_and(|&i| self.inner.deferred[i])
    }
}

impl RegistryBuilder {
    /// Decides which tools are deferred and, when any is, registers `search_tools` over them.
    /// Returns, per tool in registration order (`search_tools` included), whether it is.
    pub(super) fn deferral(&mut self) -> Result<Vec<bool>, BuildError> {
        use crate::artifacts::READ_ARTIFACT;
        use crate::schema::Dialect;
        if let Some(other) = self.tools.iter().find(|t| t.spec().name == SEARCH_TOOLS) {
            return Err(BuildError::ReservedName {
                name: SEARCH_TOOLS.to_owned(),
                tool: describe(other.spec()),
            });
        }
        for (what, names) in [
            ("defer", &self.deferred),
            ("keep_loaded", &self.keep_loaded),
        ] {
            if let Some(unknown) = names
                .iter()
                .find(|name| !self.tools.iter().any(|t| t.spec().name == **name))
            {
                return Err(BuildError::InvalidLimit {
                    what: what.to_owned(),
                    problem: format!("names `{unknown}`, which no tool of the registry is"),
                });
            }
        }
        let mut deferred: Vec<bool> = self
            .tools
            .iter()
            .map(|tool| {
                let spec = tool.spec();
                spec.name != READ_ARTIFACT
                    && (spec.limits.defer || self.deferred.contains(&spec.name))
            })
            .collect();
        if let Some(tokens) = self.defer_over_tokens {
            let offered: usize = self
                .tools
                .iter()
                .zip(&deferred)
                .filter(|(_, deferred)| !**deferred)
                .map(|(tool, _)| {
                    Dialect::Anthropic
                        .render(tool.spec())
                        .map_or(0, |definition| definition.to_string().chars().count())
                })
                .sum();
            if offered / 4 > tokens {
                for (tool, deferred) in self.tools.iter().zip(deferred.iter_mut()) {
                    let name = &tool.spec().name;
                    if name != READ_ARTIFACT && !self.keep_loaded.contains(name) {
                        *deferred = true;
                    }
                }
            }
        }
        if !deferred.contains(&true) {
            return Ok(deferred);
        }
        let mut names = Vec::new();
        let mut definitions = Vec::new();
        let mut servers = Vec::new();
        for (tool, _) in self.tools.iter().zip(&deferred).filter(|(_, d)| **d) {
            let spec = tool.spec();
            definitions.push(self.search_dialect.render(spec).map_err(|error| {
                BuildError::InvalidLimit {
                    what: format!("`{}`", spec.name),
                    problem: format!("cannot be offered by search_tools: {error}"),
                }
            })?);
            names.push(spec.name.clone());
            servers.push(server_of(spec));
        }
        let index = crate::search::ToolIndex::new(
            self.tools
                .iter()
                .zip(&deferred)
                .filter(|(_, d)| **d)
                .zip(&servers)
                .map(|((tool, _), server)| {
                    let spec = tool.spec();
                    let text = crate::search::ToolText::new(
                        &spec.name,
                        &spec.description,
                        &spec.input_schema,
                    );
                    match server {
                        Some(server) => text.with_server(server),
                        None => text,
                    }
                }),
        );
        let catalog = search_tools::Catalog {
            index,
            names,
            definitions,
        };
        self.tools.push(into_dyn(search_tools::SearchTools {
            catalog: Arc::new(catalog),
        }));
        deferred.push(false);
        Ok(deferred)
    }
}

/// The server a tool comes from, when its origin says (`the MCP server `github``).
fn server_of(spec: &crate::tool::ToolSpec) -> Option<String> {
    let origin = spec.origin.as_deref()?;
    let name = origin.split('`').nth(1)?;
    Some(name.to_owned())
}
