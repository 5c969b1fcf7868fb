//! Which of a server's tools the proxy serves: its allow and deny globs, compiled once.

use super::upstream::Upstream;
use crate::mcp::ConfigError;
use globset::{Glob, GlobSet, GlobSetBuilder};

/// A server's tool globs, compiled.
#[derive(Debug, Clone)]
pub(crate) struct ToolFilter {
    /// Only these (`None`: every tool).
    allow: Option<GlobSet>,
    /// Never these.
    deny: GlobSet,
}

impl ToolFilter {
    /// The filter of `upstream`'s globs.
    pub(crate) fn of(upstream: &Upstream) -> Result<ToolFilter, ConfigError> {
        let set = |patterns: &[String]| {
            let mut builder = GlobSetBuilder::new();
            for pattern in patterns {
                builder.add(glob(pattern).map_err(|why| ConfigError::ToolPattern {
                    server: upstream.name.clone(),
                    pattern: pattern.clone(),
                    why,
                })?);
            }
            builder.build().map_err(|error| ConfigError::ToolPattern {
                server: upstream.name.clone(),
                pattern: patterns.join(", "),
                why: error.to_string(),
            })
        };
        Ok(ToolFilter {
            allow: (!upstream.allow.is_empty())
                .then(|| set(&upstream.allow))
                .transpose()?,
            deny: set(&upstream.deny)?,
        })
    }

    /// Whether the tool the server calls `name` is served.
    pub(crate) fn serves(&self, name: &str) -> bool {
        self.allow.as_ref().is_none_or(|allow| allow.is_match(name)) && !self.deny.is_match(name)
    }
}

/// `pattern` as a glob over tool names: `*` and `?` match any char (a `/` too), `{a,b}`
/// either, `[…]` a class.
pub(crate) fn glob(pattern: &str) -> Result<Glob, String> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .build()
        .map_err(|error| error.kind().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_then_deny() {
        let upstream = Upstream::command("git", "git")
            .allow_tools(["git_*", "{read,list}_file"])
            .deny_tools(["git_push", "git_reset*"]);
        let filter = ToolFilter::of(&upstream).unwrap();
        for served in ["git_status", "git_log", "read_file", "list_file", "git_/x"] {
            assert!(filter.serves(served), "{served}");
        }
        for hidden in ["git_push", "git_reset_hard", "write_file", "status"] {
            assert!(!filter.serves(hidden), "{hidden}");
        }
        let everything = ToolFilter::of(&Upstream::command("a", "a")).unwrap();
        assert!(everything.serves("anything at all"));
        let error = ToolFilter::of(&Upstream::command("a", "a").deny_tools(["[oops"]))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("server `a`") && error.contains("`[oops`"),
            "{error}"
        );
    }
}
