//! One connection with a server: starting it (a child process, or an HTTP endpoint), initializing
//! it within the init timeout, and starting it again after it died.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::service::{RoleClient, RunningService};
use tokio_util::sync::CancellationToken;

use super::McpClientError;
use super::progress::{Handler, Progress, Routed};
use crate::figures::DisplayDuration;
use crate::mcp::child::{self, Process};
use crate::mcp::target::Target;
use crate::mcp::transport::LineTransport;
use crate::tool::ToolError;

/// The shared state of a client and its tools.
pub(super) struct Inner {
    pub(super) name: String,
    pub(super) target: Target,
    pub(super) init_timeout: Duration,
    pub(super) max_message_bytes: usize,
    /// Where each running call's progress goes, by the progress token of its request.
    pub(super) progress: Progress,
    /// The live connection, if any: `None` before the first connect after the server died.
    pub(super) connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
}

/// One connection with the server: the service and, for a command, its process.
pub(super) struct Connection {
    pub(super) service: RunningService<RoleClient, Handler>,
    /// The server's process (killed on drop) and, on Unix, everything it started (`npx` starts
    /// node, which starts the server; a server may `setsid` a helper): killed when the connection
    /// ends.
    pub(super) _process: Option<Process>,
}

/// How long a server has to answer the `server/discover` probe before it is taken for a server
/// of the handshake era that leaves an unknown request unanswered (the init timeout, when
/// shorter): the official Rust SDK's wait.
const PROBE_WAIT: Duration = Duration::from_secs(10);

/// What a failed `server/discover` probe says of the server: of the handshake era (the method
/// unknown or refused before a handshake, the probe unanswered, or the server ended by it), or
/// refused in words no handshake changes ([`wire::era::probe_verdict`](crate::mcp::wire::era)).
fn is_legacy(error: &rmcp::service::ClientInitializeError) -> bool {
    use crate::mcp::wire::era::{ProbeVerdict, probe_verdict};
    use rmcp::service::ClientInitializeError as E;
    match error {
        E::JsonRpcError(refusal) => {
            probe_verdict(i64::from(refusal.code.0), refusal.data.as_ref()) == ProbeVerdict::Legacy
        }
        // A server that speaks only versions of the handshake era.
        E::NoCompatibleProtocolVersion {
            server_supported, ..
        } => server_supported
            .iter()
            .all(|version| crate::mcp::wire::era::HANDSHAKE.contains(&version.as_str())),
        E::ConnectionClosed(_) | E::TransportError { .. } | E::ExpectedInitResult(_) => true,
        _ => false,
    }
}

impl Inner {
    pub(super) fn handshake(&self, what: String) -> McpClientError {
        McpClientError::Handshake {
            server: self.name.clone(),
            what,
        }
    }

    /// Starts the server and initializes a connection, within the init timeout: a command's
    /// process, or an HTTP endpoint. A server of MCP 2026-07-28 only refuses the handshake
    /// naming that version: it is spoken to without one (rmcp's `Discover` lifecycle).
    pub(super) async fn start(&self) -> Result<Connection, McpClientError> {
        let handler = Handler {
            progress: Arc::clone(&self.progress),
        };
        match &self.target {
            Target::Command {
                program: command,
                args,
                env,
                cwd,
            } => {
                let spawn = || {
                    let (process, stdout, stdin) = child::spawn(command, args, env, cwd.as_deref())
                        .map_err(|source| McpClientError::Spawn {
                            server: self.name.clone(),
                            command: command.clone(),
                            source,
                        })?;
                    let transport = Routed {
                        inner: LineTransport::new(stdout, stdin, CancellationToken::new())
                            .with_max_line(self.max_message_bytes),
                        progress: Arc::clone(&handler.progress),
                    };
                    Ok::<_, McpClientError>((process, transport))
                };
                self.start_command(handler.clone(), spawn).await
            }
            #[cfg(not(feature = "mcp-http"))]
            Target::Url { .. } => Err(self
                .handshake("is reached over HTTP, which needs the `mcp-http` feature".to_owned())),
            #[cfg(feature = "mcp-http")]
            Target::Url { url, headers } => {
                let custom = self.http_headers(headers)?;
                let transport = || {
                    let config = rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url.as_str())
                        .custom_headers(custom.clone());
                    Routed {
                        inner: rmcp::transport::StreamableHttpClientTransport::from_config(config),
                        progress: Arc::clone(&handler.progress),
                    }
                };
                self.start_http(handler.clone(), transport).await
            }
        }
    }

    /// Why a start did not answer within the init timeout.
    fn late(&self) -> McpClientError {
        self.handshake(format!(
            "did not answer `initialize` within {}",
            DisplayDuration(self.init_timeout)
        ))
    }

    /// The `server/discover` probe over `transport`, as the official clients open: a service
    /// of 2026-07-28 when the server answers; `Err` with the probe's failure otherwise, or
    /// `None` when it went unanswered.
    async fn probe<T, E, A>(
        &self,
        handler: Handler,
        transport: T,
    ) -> Result<RunningService<RoleClient, Handler>, Option<rmcp::service::ClientInitializeError>>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let modern = rmcp::service::ClientLifecycleMode::Discover {
            preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
        };
        let serving =
            rmcp::service::ClientServiceExt::serve_with_lifecycle(handler, transport, modern);
        match tokio::time::timeout(PROBE_WAIT.min(self.init_timeout), serving).await {
            Ok(Ok(service)) => Ok(service),
            Ok(Err(error)) => Err(Some(error)),
            Err(_) => Err(None),
        }
    }

    /// Why the probe's failure ends the start, when it is not a server of the handshake era.
    fn refused(
        &self,
        error: Option<rmcp::service::ClientInitializeError>,
    ) -> Result<(), McpClientError> {
        match error {
            Some(error) if !is_legacy(&error) => {
                Err(self.handshake(format!("refused `server/discover`: {error}")))
            }
            _ => Ok(()),
        }
    }

    /// The handshake of the era before 2026-07-28 over `transport`, within the init timeout.
    async fn initialize<T, E, A>(
        &self,
        handler: Handler,
        transport: T,
    ) -> Result<
        RunningService<RoleClient, Handler>,
        Result<rmcp::service::ClientInitializeError, McpClientError>,
    >
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        match tokio::time::timeout(self.init_timeout, handler.serve(transport)).await {
            Ok(Ok(service)) => Ok(service),
            Ok(Err(error)) => Err(Ok(error)),
            Err(_) => Err(Err(self.late())),
        }
    }

    /// A command's connection: `spawn` starts its process. It is probed with `server/discover`
    /// first, as the official clients do; a server of the handshake era (the probe refused, or
    /// unanswered) is initialized over the same pipes, lent to the probe and back when it ends —
    /// or, when the probe ended it (an SDK that exits on any request before `initialize`), in a
    /// process started again. A refusal is the server's own words; a process that ended says
    /// why.
    async fn start_command<T>(
        &self,
        handler: Handler,
        spawn: impl Fn() -> Result<(Process, T), McpClientError>,
    ) -> Result<Connection, McpClientError>
    where
        T: rmcp::transport::Transport<RoleClient> + 'static,
    {
        let (mut process, transport) = spawn()?;
        let (transport, mut returned) = Lent::new(transport);
        let failure = match self.probe(handler.clone(), transport).await {
            Ok(service) => {
                return Ok(Connection {
                    service,
                    _process: Some(process),
                });
            }
            Err(failure) => failure,
        };
        self.refused(failure)?;
        // rmcp drops the transport of a lifecycle that failed; were it ever kept, or did the
        // probe end the server, it is started again, as a fresh process is sure to be unspoken to.
        let (mut process, transport, unspoken) = match returned.try_recv() {
            Ok(transport) if !process.has_exited() => (process, transport, false),
            _ => {
                drop(process);
                let (process, transport) = spawn()?;
                (process, transport, true)
            }
        };
        let mut attempt = self.initialize(handler.clone(), transport).await;
        if !unspoken
            && matches!(&attempt, Err(Ok(error)) if !matches!(error, rmcp::service::ClientInitializeError::JsonRpcError(_)))
        {
            // It ended as it answered the probe: one never spoken to is started.
            drop(process);
            let (fresh, transport) = spawn()?;
            process = fresh;
            attempt = self.initialize(handler, transport).await;
        }
        match attempt {
            Ok(service) => Ok(Connection {
                service,
                _process: Some(process),
            }),
            Err(Err(late)) => Err(late),
            Err(Ok(error)) => {
                // rmcp's error names its transport's types; the process says why, and a
                // refusal is the server's own words.
                tracing::debug!(server = %self.name, "initialize failed: {error}");
                if let rmcp::service::ClientInitializeError::JsonRpcError(refusal) = &error {
                    return Err(self.handshake(format!(
                        "refused `initialize`: {} ({})",
                        refusal.message, refusal.code.0
                    )));
                }
                let why = process.why_it_ended().await;
                Err(self.handshake(format!("ended before it was initialized: {why}")))
            }
        }
    }

    /// An HTTP endpoint's connection over a `transport`: probed with `server/discover` first;
    /// a server of the handshake era is initialized over a transport of its own.
    #[cfg(feature = "mcp-http")]
    async fn start_http<T, E, A>(
        &self,
        handler: Handler,
        transport: impl Fn() -> T,
    ) -> Result<Connection, McpClientError>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let failure = match self.probe(handler.clone(), transport()).await {
            Ok(service) => {
                return Ok(Connection {
                    service,
                    _process: None,
                });
            }
            Err(failure) => failure,
        };
        self.refused(failure)?;
        match self.initialize(handler, transport()).await {
            Ok(service) => Ok(Connection {
                service,
                _process: None,
            }),
            Err(Err(late)) => Err(late),
            Err(Ok(error)) => {
                Err(self.handshake(format!("ended before it was initialized ({error})")))
            }
        }
    }

    /// The endpoint's headers, checked: a name or value HTTP cannot carry is refused, named.
    #[cfg(feature = "mcp-http")]
    fn http_headers(
        &self,
        headers: &std::collections::BTreeMap<String, String>,
    ) -> Result<std::collections::HashMap<http::HeaderName, http::HeaderValue>, McpClientError>
    {
        let mut custom = std::collections::HashMap::new();
        for (key, value) in headers {
            let name = http::HeaderName::try_from(key.as_str()).map_err(|error| {
                self.handshake(format!(
                    "has a header name `{key}` that is not valid ({error})"
                ))
            })?;
            let value = http::HeaderValue::try_from(value.as_str()).map_err(|error| {
                self.handshake(format!(
                    "has a value of header `{key}` that is not valid ({error})"
                ))
            })?;
            custom.insert(name, value);
        }
        Ok(custom)
    }

    /// The live connection, started anew if the server died.
    pub(super) async fn connection(&self) -> Result<Arc<Connection>, ToolError> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref()
            && !connection.service.is_closed()
            && !connection.service.peer().is_transport_closed()
        {
            return Ok(Arc::clone(connection));
        }
        *slot = None;
        let connection = Arc::new(self.start().await.map_err(|error| {
            ToolError::failed(format!("{error}; the next call tries to start it again"))
        })?);
        *slot = Some(Arc::clone(&connection));
        Ok(connection)
    }

    /// Forgets `connection` (if it is still the live one) after it failed mid-call, and the error
    /// the call gets.
    pub(super) async fn ended(
        &self,
        connection: &Arc<Connection>,
        tool: &str,
        why: &str,
    ) -> ToolError {
        let mut slot = self.connection.lock().await;
        if slot
            .as_ref()
            .is_some_and(|live| Arc::ptr_eq(live, connection))
        {
            *slot = None;
        }
        ToolError::failed(format!(
            "the MCP server `{}` ended while running `{tool}` ({why}); the next call starts it again",
            self.name
        ))
    }
}

/// A transport lent to one attempt at a lifecycle: when the attempt drops it (a handshake that
/// failed), it goes back to its lender, who can speak to the same process again.
struct Lent<T> {
    /// `Some` until the lent transport is dropped.
    transport: Option<T>,
    back: Option<tokio::sync::oneshot::Sender<T>>,
}

impl<T> Lent<T> {
    /// `transport`, lent; the receiver has it back once the lent one is dropped.
    fn new(transport: T) -> (Self, tokio::sync::oneshot::Receiver<T>) {
        let (back, returned) = tokio::sync::oneshot::channel();
        let lent = Lent {
            transport: Some(transport),
            back: Some(back),
        };
        (lent, returned)
    }

    fn transport(&mut self) -> &mut T {
        self.transport
            .as_mut()
            .expect("a lent transport is there until it is dropped")
    }
}

impl<T> Drop for Lent<T> {
    fn drop(&mut self) {
        if let (Some(transport), Some(back)) = (self.transport.take(), self.back.take()) {
            // A lender that no longer waits (the connection started, or gave up) lets it go.
            let _ = back.send(transport);
        }
    }
}

impl<T: rmcp::transport::Transport<RoleClient>> rmcp::transport::Transport<RoleClient> for Lent<T> {
    type Error = T::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport().send(item)
    }

    fn receive(
        &mut self,
    ) -> impl Future<Output = Option<rmcp::service::RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport().receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.transport().close()
    }
}

#[cfg(test)]
mod tests {
    use super::Lent;

    #[test]
    fn a_lent_transport_comes_back_when_dropped_and_goes_when_nobody_waits() {
        let (lent, mut returned) = Lent::new("the server's pipes".to_owned());
        assert!(returned.try_recv().is_err(), "still lent");
        drop(lent);
        assert_eq!(returned.try_recv().unwrap(), "the server's pipes");

        // A lender that started its connection no longer waits: the transport is let go.
        let (lent, returned) = Lent::new("kept by the service".to_owned());
        drop(returned);
        drop(lent);
    }
}
