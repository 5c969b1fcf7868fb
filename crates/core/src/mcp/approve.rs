//! Asking the user of an MCP client, by elicitation, whether a call may run.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, Peer, RoleServer};

use crate::approval::{Approval, ApprovalRequest, Approver, Rule};

/// The field of the form the client shows: a checkbox, on by default.
const FIELD: &str = "approve";

/// An [`Approver`] that asks the user of the MCP client a call came from, by elicitation
/// (the client shows the question and a form; accepting it approves the call). A client that
/// does not support elicitation is not asked: its calls follow the `otherwise` rule given to
/// [`ClientApprover::new`] ([`Rule::Allow`], or deny for anything else).
///
/// Give one clone to the registry's [`ApprovalPolicy`](crate::approval::ApprovalPolicy) and one to the
/// [`McpServer`](super::McpServer) ([`with_client_approver`](super::McpServer::with_client_approver)),
/// which tells it which client each call came from.
#[derive(Clone)]
pub struct ClientApprover {
    /// The client of each call being served, by call id.
    peers: Arc<Mutex<HashMap<String, Peer<RoleServer>>>>,
    /// What a 2026-07-28 client answered before its call ran (its retry carried the answer),
    /// by call id.
    decided: Arc<Mutex<HashMap<String, Approval>>>,
    otherwise: Rule,
}

impl fmt::Debug for ClientApprover {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientApprover")
            .field("otherwise", &self.otherwise)
            .finish_non_exhaustive()
    }
}

impl ClientApprover {
    /// An approver whose calls from clients that cannot be asked follow `otherwise`.
    pub fn new(otherwise: Rule) -> Self {
        ClientApprover {
            peers: Arc::default(),
            decided: Arc::default(),
            otherwise,
        }
    }

    /// Records that `call_id` came from `peer` until the returned guard is dropped.
    pub(crate) fn register(&self, call_id: &str, peer: Peer<RoleServer>) -> Registered {
        crate::sync::lock(&self.peers).insert(call_id.to_owned(), peer);
        Registered {
            peers: Arc::clone(&self.peers),
            call_id: call_id.to_owned(),
        }
    }

    /// Records the user's answer for `call_id`, given before the call runs (a 2026-07-28
    /// client answers in its retry), until the returned guard is dropped.
    pub(crate) fn decide(&self, call_id: &str, approval: Approval) -> Decided {
        crate::sync::lock(&self.decided).insert(call_id.to_owned(), approval);
        Decided {
            decided: Arc::clone(&self.decided),
            call_id: call_id.to_owned(),
        }
    }

    fn peer_of(&self, call_id: &str) -> Option<Peer<RoleServer>> {
        crate::sync::lock(&self.peers).get(call_id).cloned()
    }
}

/// Forgets a call's client when the call ends.
pub(crate) struct Registered {
    peers: Arc<Mutex<HashMap<String, Peer<RoleServer>>>>,
    call_id: String,
}

impl Drop for Registered {
    fn drop(&mut self) {
        crate::sync::lock(&self.peers).remove(&self.call_id);
    }
}

/// Forgets a call's answer when the call ends.
pub(crate) struct Decided {
    decided: Arc<Mutex<HashMap<String, Approval>>>,
    call_id: String,
}

impl Drop for Decided {
    fn drop(&mut self) {
        crate::sync::lock(&self.decided).remove(&self.call_id);
    }
}

/// The form that asks the user about a call of `tool` with `arguments`: a checkbox, on.
pub(crate) fn question(
    tool: &str,
    arguments: &serde_json::Value,
) -> Result<(String, ElicitationSchema), Box<dyn std::error::Error + Send + Sync>> {
    let arguments: String = arguments.to_string().chars().take(1_000).collect();
    let schema = ElicitationSchema::builder()
        .optional_bool(FIELD, true)
        .description(format!("Allow this `{tool}` call"))
        .build()?;
    Ok((
        format!("Allow the agent to run `{tool}` with {arguments}?"),
        schema,
    ))
}

/// What the user's answer to [`question`] says: accepted with the box left on, or declined.
pub(crate) fn answered(
    tool: &str,
    action: &ElicitationAction,
    content: Option<&serde_json::Value>,
) -> Approval {
    let unchecked = content
        .and_then(|content| content.get(FIELD))
        .and_then(serde_json::Value::as_bool)
        == Some(false);
    match action {
        ElicitationAction::Accept if !unchecked => Approval::Allow,
        _ => Approval::Deny(format!("the user declined this `{tool}` call")),
    }
}

#[async_trait]
impl Approver for ClientApprover {
    async fn approve(
        &self,
        request: ApprovalRequest<'_>,
    ) -> Result<Approval, Box<dyn std::error::Error + Send + Sync>> {
        let tool = request.tool;
        if let Some(decided) = crate::sync::lock(&self.decided).get(request.call_id) {
            return Ok(decided.clone());
        }
        let peer = self.peer_of(request.call_id).filter(|peer| {
            peer.supported_elicitation_modes()
                .contains(&ElicitationMode::Form)
        });
        let Some(peer) = peer else {
            return Ok(match self.otherwise {
                Rule::Allow => Approval::Allow,
                _ => Approval::Deny(format!(
                    "`{tool}` calls need the user's approval, and this MCP client cannot ask \
                     (it does not support elicitation)"
                )),
            });
        };
        let (message, schema) = question(tool, request.arguments)?;
        let answer = peer
            .create_elicitation(ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema: schema,
            })
            .await?;
        Ok(answered(tool, &answer.action, answer.content.as_ref()))
    }
}
