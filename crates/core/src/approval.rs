//! Consent before a call runs: allow, deny with a reason, or ask someone.
//!
//! An [`ApprovalPolicy`] is a value the registry holds ([`RegistryBuilder::approval`]). Before
//! each admitted call runs, its rule is looked up — the tool's own, else the rule for read-only
//! tools or for the others, by the tool's [`ToolAnnotations`] — and applied: allow, deny, or ask
//! the policy's [`Approver`] (a terminal prompt, a UI, an MCP elicitation). A denied call is not
//! run; the model gets the reason as an error result. An approver that fails, or does not answer
//! within the call's timeout, denies.
//!
//! [`RegistryBuilder::approval`]: crate::registry::RegistryBuilder::approval

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::tool::ToolAnnotations;

/// What to do with a call before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rule {
    /// Run it.
    Allow,
    /// Refuse it; the model is told the user's policy does not allow it.
    Deny,
    /// Ask the policy's [`Approver`]; with none, deny.
    Ask,
}

/// An approver's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Approval {
    /// Run the call.
    Allow,
    /// Do not run it; the reason is what the model reads.
    Deny(String),
}

/// A call waiting for approval.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ApprovalRequest<'a> {
    /// The call's id.
    pub call_id: &'a str,
    /// The tool.
    pub tool: &'a str,
    /// The call's arguments.
    pub arguments: &'a Value,
    /// What the tool says it does to the world.
    pub annotations: ToolAnnotations,
}

/// Whoever is asked when a rule says [`Rule::Ask`]: a person at a terminal, a UI, a client.
#[async_trait]
pub trait Approver: Send + Sync + fmt::Debug + 'static {
    /// Decides on one call. It may take as long as the call's timeout allows.
    ///
    /// # Errors
    ///
    /// When no decision could be had (no terminal, the client went away); the call is denied
    /// with the error as the reason.
    async fn approve(
        &self,
        request: ApprovalRequest<'_>,
    ) -> Result<Approval, Box<dyn std::error::Error + Send + Sync>>;
}

/// The rules that decide, before each call, whether it runs.
///
/// By default every call is allowed: read-only tools and the others alike, with no approver.
///
/// ```
/// use toolsmith::approval::{ApprovalPolicy, Rule};
///
/// // Reads run; anything that changes something is refused, but `write_file` asks.
/// let policy = ApprovalPolicy::new()
///     .for_others(Rule::Deny)
///     .for_tool("write_file", Rule::Ask);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct ApprovalPolicy {
    read_only: Rule,
    others: Rule,
    tools: HashMap<String, Rule>,
    approver: Option<Arc<dyn Approver>>,
}

impl Default for ApprovalPolicy {
    fn default() -> Self {
        ApprovalPolicy {
            read_only: Rule::Allow,
            others: Rule::Allow,
            tools: HashMap::new(),
            approver: None,
        }
    }
}

impl ApprovalPolicy {
    /// Allows everything (the default).
    pub fn new() -> Self {
        Self::default()
    }

    /// The rule for tools that say they are read-only. By default [`Rule::Allow`].
    #[must_use]
    pub fn for_read_only(mut self, rule: Rule) -> Self {
        self.read_only = rule;
        self
    }

    /// The rule for every other tool (those that change something, or do not say). By default
    /// [`Rule::Allow`].
    #[must_use]
    pub fn for_others(mut self, rule: Rule) -> Self {
        self.others = rule;
        self
    }

    /// The rule for one tool, over the two above. The registry refuses to build with a rule
    /// for a tool it does not have.
    #[must_use]
    pub fn for_tool(mut self, tool: impl Into<String>, rule: Rule) -> Self {
        self.tools.insert(tool.into(), rule);
        self
    }

    /// Who is asked when a rule says [`Rule::Ask`]. Without one, asking denies.
    #[must_use]
    pub fn with_approver(mut self, approver: impl Approver) -> Self {
        self.approver = Some(Arc::new(approver));
        self
    }

    /// The tools the policy names, for the registry to check.
    pub(crate) fn named_tools(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// The rule for a call of `tool`.
    pub fn rule_for(&self, tool: &str, annotations: &ToolAnnotations) -> Rule {
        match self.tools.get(tool) {
            Some(rule) => *rule,
            None if annotations.is_read_only() => self.read_only,
            None => self.others,
        }
    }

    /// Whether every call is allowed without a question, so the registry can skip the policy.
    pub(crate) fn allows_everything(&self) -> bool {
        self.read_only == Rule::Allow
            && self.others == Rule::Allow
            && self.tools.values().all(|rule| *rule == Rule::Allow)
    }

    /// Decides on one call: `Ok(())` to run it, or the reason it may not.
    pub(crate) async fn decide(&self, request: ApprovalRequest<'_>) -> Result<(), String> {
        match self.rule_for(request.tool, &request.annotations) {
            Rule::Allow => Ok(()),
            Rule::Deny => Err(format!(
                "the user's approval policy does not allow `{}` calls",
                request.tool
            )),
            Rule::Ask => match &self.approver {
                None => Err(format!(
                    "`{}` calls need the user's approval, and no one can be asked",
                    request.tool
                )),
                Some(approver) => match approver.approve(request).await {
                    Ok(Approval::Allow) => Ok(()),
                    Ok(Approval::Deny(reason)) => Err(reason),
                    Err(error) => Err(format!("approval could not be asked ({error})")),
                },
            },
        }
    }
}
