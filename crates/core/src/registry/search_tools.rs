//! Deferred tools and the built-in `search_tools` tool: how a registry of hundreds of tools
//! offers a few of them and finds the rest when the model asks.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ToolResult;
use crate::figures::grouped;
use crate::search::ToolIndex;
use crate::tool::{Tool, ToolAnnotations, ToolContext, ToolError, ToolLimits, ToolOutput};

/// The name of the built-in search tool, which a registry registers when any of its tools is
/// deferred. No other tool may take it.
pub const SEARCH_TOOLS: &str = "search_tools";

/// The key of a search result's [`tool_meta`](super::ResultMeta::tool_meta) that lists the tools
/// it loaded, in the order found.
pub const LOADED_META_KEY: &str = "toolsmith/loaded";

/// The deferred tools a conversation has loaded, in the order they were found: what
/// [`Registry::schemas_with`](super::Registry::schemas_with) offers beside the tools that are
/// always loaded. It belongs to the conversation, not to the process: keep it with the
/// history (it serializes as a list of names) and restore it with it.
///
/// ```
/// use toolsmith::registry::Loaded;
///
/// let mut loaded = Loaded::new();
/// loaded.load("github__merge_pull_request");
/// loaded.load("github__merge_pull_request"); // once
/// let saved = serde_json::to_string(&loaded)?;
/// assert_eq!(saved, r#"["github__merge_pull_request"]"#);
/// assert_eq!(serde_json::from_str::<Loaded>(&saved)?, loaded);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Loaded {
    names: Vec<String>,
}

impl Loaded {
    /// Nothing loaded.
    pub fn new() -> Self {
        Self::default()
    }

    /// Loads `name` (after those loaded before it); a name loaded already stays where it is,
    /// so the tool list's prefix, and the provider's prompt cache of it, stay as they were.
    pub fn load(&mut self, name: impl Into<String>) {
        let name = name.into();
        if !self.names.contains(&name) {
            self.names.push(name);
        }
    }

    /// Loads what the searches among `results` found ([`LOADED_META_KEY`]).
    pub fn absorb(&mut self, results: &[ToolResult]) {
        for result in results {
            if let Some(Value::Array(names)) = result.meta.tool_meta.get(LOADED_META_KEY) {
                for name in names.iter().filter_map(Value::as_str) {
                    self.load(name);
                }
            }
        }
    }

    /// Whether `name` is loaded.
    pub fn contains(&self, name: &str) -> bool {
        self.names.iter().any(|loaded| loaded == name)
    }

    /// The names, in load order.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

/// What the search tool searches: the deferred tools, indexed, and their definitions.
pub(crate) struct Catalog {
    pub(crate) index: ToolIndex,
    pub(crate) names: Vec<String>,
    /// Each tool's definition, rendered once in the search's dialect.
    pub(crate) definitions: Vec<Value>,
}

/// The arguments of `search_tools`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchToolsArgs {
    /// What the tool should do, in words: `merge a pull request`, `take a screenshot of the
    /// page`, `list kubernetes pods`.
    pub query: String,
    /// How many tools to return, best first: 5 by default, 20 at most.
    #[serde(default)]
    pub limit: Option<usize>,
}

/// The built-in tool search: finds deferred tools by what they do and returns their full
/// definitions, which loads them.
pub(crate) struct SearchTools {
    pub(crate) catalog: Arc<Catalog>,
}

impl fmt::Debug for SearchTools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SearchTools")
            .field("tools", &self.catalog.names.len())
            .finish()
    }
}

/// The most tools one search returns.
const MAX_LIMIT: usize = 20;

#[async_trait]
impl Tool for SearchTools {
    type Args = SearchToolsArgs;

    fn name(&self) -> Cow<'static, str> {
        SEARCH_TOOLS.into()
    }

    fn description(&self) -> Cow<'static, str> {
        format!(
            "Finds tools by what they do, among {} more tools than are listed. Describe the task \
             in a few words (`merge a pull request`, `screenshot of the page`); the best matches \
             come back with their full definitions, and are then callable by name.",
            grouped(self.catalog.names.len())
        )
        .into()
    }

    fn limits(&self) -> ToolLimits {
        ToolLimits::default().with_trim(crate::trim::TrimStyle::default().with_head_ratio(1.0))
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::new().with_read_only(true)
    }

    async fn call(&self, args: SearchToolsArgs, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let limit = args.limit.unwrap_or(5).clamp(1, MAX_LIMIT);
        let hits = self.catalog.index.search(&args.query, limit);
        if hits.is_empty() {
            return Ok(ToolOutput::text(format!(
                "No tool matches `{}`. Try broader words of what the tool does (`issue`, `file`, \
                 `browser`, `message`), not a name.",
                args.query
            )));
        }
        // Best first, each whole, within the allowance: what does not fit is named only.
        let room = cx.allowance().saturating_sub(200);
        let mut body = String::new();
        let mut loaded = Vec::new();
        let mut named_only = Vec::new();
        for hit in &hits {
            let line = self.catalog.definitions[hit.tool].to_string();
            let name = &self.catalog.names[hit.tool];
            if body.chars().count() + line.chars().count() < room {
                body.push_str(&line);
                body.push('\n');
                loaded.push(Value::String(name.clone()));
            } else {
                named_only.push(name.as_str());
            }
        }
        let mut text = format!(
            "[{} of the tools that match `{}`, best first; they are loaded: call them by name]\n",
            grouped(loaded.len()),
            args.query
        );
        text.push_str(&body);
        if !named_only.is_empty() {
            text.push_str(&format!(
                "[also matching, not shown for want of room: {}; search for one of them alone]\n",
                named_only.join(", ")
            ));
        }
        Ok(ToolOutput::text(text).with_meta(LOADED_META_KEY, Value::Array(loaded)))
    }
}
