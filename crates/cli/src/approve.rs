//! `--approve`: what the CLI does with calls of tools that change something.

use std::io::{BufRead as _, Write as _};

use clap::ValueEnum;
use toolsmith::approval::{Approval, ApprovalPolicy, ApprovalRequest, Approver, Rule};
use toolsmith::async_trait;

/// What to do with calls of tools that are not read-only (read-only tools always run).
#[derive(Debug, Clone, Copy, Default, ValueEnum)]
pub(crate) enum Approve {
    /// Run them.
    #[default]
    Allow,
    /// Refuse them; the model is told why.
    Deny,
    /// Ask on the terminal, one call at a time.
    Ask,
}

impl Approve {
    pub(crate) fn policy(self) -> ApprovalPolicy {
        match self {
            Approve::Allow => ApprovalPolicy::new(),
            Approve::Deny => ApprovalPolicy::new().for_others(Rule::Deny),
            Approve::Ask => ApprovalPolicy::new()
                .for_others(Rule::Ask)
                .with_approver(Terminal::default()),
        }
    }
}

/// Asks on the controlling terminal (`/dev/tty`), so standard input stays free for `batch -`.
#[derive(Debug, Default)]
struct Terminal {
    /// One question at a time.
    asking: tokio::sync::Mutex<()>,
}

#[async_trait]
impl Approver for Terminal {
    async fn approve(
        &self,
        request: ApprovalRequest<'_>,
    ) -> Result<Approval, Box<dyn std::error::Error + Send + Sync>> {
        let _turn = self.asking.lock().await;
        let arguments: String = request.arguments.to_string().chars().take(400).collect();
        let question = format!(
            "toolsmith: run {} `{}` {arguments}? [y/N] ",
            request.call_id, request.tool
        );
        let tool = request.tool.to_owned();
        tokio::task::spawn_blocking(move || {
            let tty = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/tty")
                .map_err(|error| format!("no terminal to ask on ({error})"))?;
            (&tty).write_all(question.as_bytes())?;
            let mut answer = String::new();
            std::io::BufReader::new(&tty).read_line(&mut answer)?;
            Ok(match answer.trim() {
                "y" | "Y" | "yes" => Approval::Allow,
                _ => Approval::Deny(format!("the user declined this `{tool}` call")),
            })
        })
        .await?
    }
}
