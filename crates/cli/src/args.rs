//! The command line: the commands, their options and their help.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use toolsmith::schema::Dialect;

use crate::approve::Approve;

/// Budgeted tools for LLM agents: run the standard tools as a model would, see what it sees.
#[derive(Debug, Parser)]
#[command(name = "toolsmith", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Options every command that runs tools shares.
#[derive(Debug, clap::Args)]
pub(crate) struct Workspace {
    /// The workspace the file tools may touch.
    #[arg(long, default_value = ".")]
    pub(crate) root: PathBuf,
    /// Where full outputs of trimmed results are kept: a private directory (mode 0700, yours,
    /// not a symlink) that is new, empty or already a store's, or a bucket: s3://bucket/prefix,
    /// gs://bucket/prefix, az://container/prefix (credentials, region and endpoint from the
    /// standard variables: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION,
    /// AWS_ENDPOINT_URL, AWS_ALLOW_HTTP; GOOGLE_*; AZURE_*), or file:///a/directory. Default:
    /// `toolsmith/artifacts` in your cache directory (`~/.cache` on Linux), so a later
    /// `call read_artifact` finds them.
    #[arg(long, value_name = "DIR|URL")]
    pub(crate) artifacts: Option<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Print the standard tools' definitions as JSON, in a provider's dialect.
    Schema {
        /// The dialect.
        #[arg(long, value_enum, default_value_t = Format::Anthropic)]
        format: Format,
        #[command(flatten)]
        workspace: Workspace,
    },
    /// Run one tool call and print what the model would see.
    Call {
        /// The tool, e.g. read_file.
        tool: String,
        /// The arguments, as JSON.
        #[arg(default_value = "{}")]
        args: String,
        /// The call's budget in chars (the batch budget of a batch of one).
        #[arg(long)]
        budget: Option<usize>,
        /// Print the result with its figures, as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        tokens: Tokens,
        /// Calls of tools that change something: run, refuse, or ask on the terminal.
        #[arg(long, value_enum, default_value_t = Approve::Allow)]
        approve: Approve,
        #[command(flatten)]
        workspace: Workspace,
    },
    /// Run a batch of tool calls (an Anthropic assistant message, or a JSON array of tool_use
    /// blocks) and print the tool_result blocks as JSON; a table of the budget on stderr.
    Batch {
        /// The file to read, or - for standard input.
        input: String,
        /// The batch budget in chars.
        #[arg(long)]
        budget: Option<usize>,
        /// How the budget is split.
        #[arg(long, value_enum, default_value_t = Split::Fair)]
        split: Split,
        /// Calls of tools that change something: run, refuse, or ask on the terminal.
        #[arg(long, value_enum, default_value_t = Approve::Allow)]
        approve: Approve,
        #[command(flatten)]
        workspace: Workspace,
    },
    /// Serve the standard tools over MCP, on stdio or (with --http) streamable HTTP.
    Serve {
        /// The budget of one call in chars (each request is a batch of one); by default the
        /// registry's, 80,000, within each tool's own cap.
        #[arg(long)]
        budget: Option<usize>,
        /// Calls of tools that change something: run them, refuse them, or ask the client's
        /// user (by MCP elicitation; refused when the client cannot ask).
        #[arg(long, value_enum, default_value_t = Approve::Allow)]
        approve: Approve,
        #[command(flatten)]
        workspace: Workspace,
        #[command(flatten)]
        http: Http,
        #[command(flatten)]
        tokens: Tokens,
        /// MCP servers whose tools are served beside the standard tools, through the
        /// registry (budgeted, images and audio within the media limits): a configuration
        /// file as `proxy --config` reads it. A server that does not start is named on stderr
        /// and left out.
        #[arg(long)]
        config: Option<PathBuf>,
        #[command(flatten)]
        media: Media,
    },
    /// Serve MCP servers again, transparently, with every result within a cap: oversized
    /// results are cut (what matters kept), kept whole as artifacts, and read back with
    /// read_artifact; everything else passes as it came.
    Proxy(Proxy),
    /// Repair the pairing of calls and results of a history and print it.
    Repair {
        /// The file to read, or - for standard input.
        input: String,
        /// The history's format.
        #[arg(long, value_enum, default_value_t = HistoryFormat::Anthropic)]
        format: HistoryFormat,
    },
    /// Microcompact old tool results of a history and print it.
    Compact {
        /// The file to read, or - for standard input.
        input: String,
        /// The history's format.
        #[arg(long, value_enum, default_value_t = HistoryFormat::Anthropic)]
        format: HistoryFormat,
        /// More tools whose results are never compacted, beside those the standard tools mark
        /// `preserve` (write_file, edit_file, run_command).
        #[arg(long, value_delimiter = ',')]
        preserve: Vec<String>,
    },
    /// Show the registry at work: a batch of parallel calls over the workspace that overflows
    /// its budget, with the split, the refusals, the trims, the markers and the artifacts.
    Demo {
        /// The batch budget in chars.
        #[arg(long, default_value_t = 24_000)]
        budget: usize,
        #[command(flatten)]
        workspace: Workspace,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum Format {
    Anthropic,
    Openai,
    Mcp,
    Gemini,
}

impl Format {
    pub(crate) fn dialect(self) -> Dialect {
        match self {
            Format::Anthropic => Dialect::Anthropic,
            Format::Openai => Dialect::OpenAiStrict,
            Format::Mcp => Dialect::Mcp,
            Format::Gemini => Dialect::Gemini,
        }
    }
}

/// The shape of a history given to `repair` and `compact`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum HistoryFormat {
    /// Anthropic Messages: an array of messages, or an object with `messages`.
    Anthropic,
    /// OpenAI Chat Completions: an array of messages, or an object with `messages`.
    Openai,
    /// OpenAI's Responses API: an array of input items, or an object with `input`.
    Responses,
    /// Gemini: an array of contents, or an object with `contents`.
    Gemini,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum Split {
    Even,
    Fair,
}

/// Serving over streamable HTTP instead of stdio.
#[derive(Debug, clap::Args)]
pub(crate) struct Http {
    /// Serve over MCP's streamable HTTP at this address (`127.0.0.1:8080`; port 0 picks one),
    /// endpoint `/mcp`, instead of stdio. Clients need a token: --token-env or --tokens, or
    /// one is made and printed.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<String>,
    /// The environment variable holding the token clients must send as
    /// `Authorization: Bearer TOKEN` (16 chars or more). No server or command started sees it.
    #[arg(long, value_name = "VAR", requires = "http")]
    pub(crate) token_env: Option<String>,
    /// A JSON file of tokens, each naming its principal: `{"TOKEN": "alice", …}` (readable by
    /// you alone). A principal's sessions share its artifacts; no other principal reads them.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub(crate) tokens: Option<PathBuf>,
    /// Take requests without a token. Anyone who can reach the address can then run the
    /// servers' tools and read every artifact of every session.
    #[arg(long, requires = "http", conflicts_with_all = ["token_env", "tokens"])]
    pub(crate) allow_unauthenticated: bool,
    /// A web origin allowed beside loopback ones (`https://app.example.com`); repeatable.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub(crate) allow_origin: Vec<String>,
    /// A `Host` allowed beside loopback ones and the listening address; repeatable.
    #[arg(long, value_name = "HOST", requires = "http")]
    pub(crate) allow_host: Vec<String>,
    /// The most client sessions at once; at the limit, the least recently used idle one ends.
    #[arg(long, default_value_t = 256, requires = "http")]
    pub(crate) max_sessions: usize,
    /// Seconds a session may sit idle (nothing asked, nothing in flight) before it ends and
    /// its servers stop.
    #[arg(
        long,
        default_value_t = 1800,
        value_name = "SECONDS",
        requires = "http"
    )]
    pub(crate) session_idle_timeout: u64,
    /// Requests a principal may send a minute (a burst of as many); over it, 429 with
    /// `Retry-After`. A principal is what a --tokens token names; other clients are one.
    #[arg(long, value_name = "N", requires = "http", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) rate_limit: Option<u32>,
    /// Tool calls a principal may have running at once; over it, 429.
    #[arg(long, value_name = "N", requires = "http", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_calls_per_principal: Option<u64>,
    /// Tool calls the server runs at once across principals; over it, 429.
    #[arg(long, value_name = "N", requires = "http", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_calls: Option<u64>,
    /// Label tool calls in `/metrics` with the principal that made them (one series per
    /// principal and tool).
    #[arg(long, requires = "http")]
    pub(crate) metrics_by_principal: bool,
    /// Serve no `/metrics` (the figures are kept either way).
    #[arg(long, requires = "http")]
    pub(crate) no_metrics: bool,
}

/// A cap in tokens, and what counts them.
#[derive(Debug, clap::Args)]
pub(crate) struct Tokens {
    /// The most tokens a result may have, beside the cap in chars: a result over it is cut
    /// until it holds, its marker naming the cap (`cut to a 2,000-token cap`). 100 or more.
    #[arg(long, value_name = "N")]
    pub(crate) max_result_tokens: Option<usize>,
    /// What counts the tokens of --max-result-tokens: OpenAI's o200k encoder (exact for
    /// GPT-4o and later, close for other models), or an estimate of four chars a token.
    #[arg(long, value_enum, default_value_t = TokenCount::O200k, requires = "max_result_tokens")]
    pub(crate) token_count: TokenCount,
}

/// What counts tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TokenCount {
    /// OpenAI's o200k encoder.
    O200k,
    /// Four chars a token, rounded up.
    Estimate,
}

impl Tokens {
    /// The cap and its counter, when a cap in tokens is asked for; an error for a cap too small
    /// to hold a marker and some content.
    pub(crate) fn cap(&self) -> Result<Option<toolsmith::tokens::TokenCap>, crate::Failure> {
        let Some(max) = self.max_result_tokens else {
            return Ok(None);
        };
        if max < 100 {
            return Err(crate::fail(format!(
                "--max-result-tokens {max}: too small to hold a marker and some content; use \
                 100 or more"
            )));
        }
        let counter: std::sync::Arc<dyn toolsmith::tokens::TokenCounter> = match self.token_count {
            TokenCount::O200k => toolsmith::tokens::default_counter(),
            TokenCount::Estimate => {
                std::sync::Arc::new(toolsmith::tokens::CharsPerToken::default())
            }
        };
        Ok(Some(toolsmith::tokens::TokenCap::new(max, counter)))
    }
}

/// How many images and audio clips a result shows, and how large each may be.
#[derive(Debug, clap::Args)]
pub(crate) struct Media {
    /// The most images and audio clips one result carries; later ones become artifacts.
    #[arg(long, default_value_t = 4)]
    pub(crate) max_media_blocks: usize,
    /// The most bytes of base64 one image or audio clip may have; a larger one becomes an
    /// artifact read_artifact returns as the same content.
    #[arg(long, default_value_t = 1 << 20)]
    pub(crate) max_media_bytes: usize,
}

impl Media {
    /// The limits as the registry and the proxy take them.
    pub(crate) fn limits(&self) -> toolsmith::tool::MediaLimits {
        toolsmith::tool::MediaLimits::default()
            .with_max_blocks(self.max_media_blocks)
            .with_max_bytes(self.max_media_bytes)
    }
}

/// What `proxy` was asked to serve.
#[derive(Debug, clap::Args)]
pub(crate) struct Proxy {
    /// The most characters of text a result may have; longer ones are cut (what matters kept)
    /// and kept whole as artifacts read with read_artifact.
    #[arg(long, default_value_t = 20_000)]
    pub(crate) max_result_chars: usize,
    #[command(flatten)]
    pub(crate) tokens: Tokens,
    #[command(flatten)]
    pub(crate) media: Media,
    /// Name every tool and prompt `<server>__<name>`, not only names two servers share.
    #[arg(long)]
    pub(crate) prefix_all: bool,
    /// List the servers' tools only once `search_tools` finds them: the client is offered
    /// search_tools, call_tool and read_artifact, and each search's finds are added.
    #[arg(long)]
    pub(crate) tool_search: bool,
    #[command(flatten)]
    pub(crate) http: Http,
    /// With --http: start each server once and share it among every client session (for
    /// servers that keep nothing per client; sessions then open in milliseconds). The
    /// servers get no client's roots, sampling or elicitation, their logs and resource
    /// updates are not relayed; results and artifacts stay each session's own.
    #[arg(long, requires = "http")]
    pub(crate) share_upstreams: bool,
    /// With --http and servers per session: keep this many processes of each server started
    /// ahead of the sessions that will take them, so a session opens without waiting for a
    /// runtime to load.
    #[arg(
        long,
        default_value_t = 0,
        value_name = "COUNT",
        requires = "http",
        conflicts_with = "share_upstreams"
    )]
    pub(crate) warm_upstreams: usize,
    /// Where full outputs of cut results are kept, a directory or a bucket's URL (as for the
    /// other commands: s3://, gs://, az://, file://). Default: `toolsmith/artifacts` in your
    /// cache directory. Replicas behind a load balancer share one bucket prefix.
    #[arg(long, value_name = "DIR|URL")]
    pub(crate) artifacts: Option<String>,
    /// A configuration file of servers, `{"mcpServers": {"name": {"command": …, "args": […],
    /// "env": {…}}, "remote": {"url": …, "headers": {…}}}}` (as Claude Desktop, Claude Code
    /// and Cursor write it, `${VAR}` and `${VAR:-default}` expanded): served together, a name
    /// two servers share named `<server>__<name>`.
    #[arg(long, conflicts_with = "command")]
    pub(crate) config: Option<PathBuf>,
    /// Seconds a server has to start and answer `initialize`.
    #[arg(long, default_value_t = 30)]
    pub(crate) init_timeout: u64,
    /// Seconds a call may run before it is cancelled.
    #[arg(long, default_value_t = 600)]
    pub(crate) timeout: u64,
    /// The server to start, after `--`: `toolsmith proxy -- npx -y @some/server`.
    #[arg(last = true, value_name = "CMD")]
    pub(crate) command: Vec<String>,
}
