//! The listener: an endpoint started on its address, its accept loop (which backs off and sheds
//! idle connections when descriptors run out), and the sweep of idle sessions.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::sync::{Notify, Semaphore};
use tokio_util::sync::CancellationToken;

use super::guard::Credentials;
use super::table::Table;
use super::{HttpError, HttpOptions, Sessions, limits};
use crate::artifacts::Owner;
use crate::mcp::metrics::Metrics;

/// A running HTTP endpoint. Dropping it (or [`shutdown`](Self::shutdown)) stops it and ends
/// every session.
#[derive(Debug)]
pub struct HttpServer {
    pub(super) addr: SocketAddr,
    pub(super) metrics: Metrics,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl HttpServer {
    /// Listens as `options` say and serves each session with `sessions`.
    pub(crate) async fn start(
        options: HttpOptions,
        metrics: Metrics,
        sessions: Sessions,
    ) -> Result<Self, HttpError> {
        for (_, principal) in &options.principal_tokens {
            Owner::principal(principal).map_err(HttpError::Artifacts)?;
        }
        let listener =
            TcpListener::bind(options.addr)
                .await
                .map_err(|source| HttpError::Listen {
                    addr: options.addr,
                    source,
                })?;
        let addr = listener.local_addr().map_err(|source| HttpError::Listen {
            addr: options.addr,
            source,
        })?;
        let stop = CancellationToken::new();
        let endpoint = Arc::new(Endpoint {
            credentials: Credentials::new(&options),
            table: Table::new(
                options.max_sessions,
                options.session_idle_timeout,
                metrics.clone(),
            ),
            limiter: limits::Limiter::new(options.limits.clone(), metrics.clone()),
            metrics: metrics.clone(),
            bodies: Arc::new(Semaphore::new(
                options.max_body_bytes_in_flight.min(Semaphore::MAX_PERMITS),
            )),
            shed: Notify::new(),
            modern_ids: std::sync::atomic::AtomicU64::new(1),
            options,
            addr,
            sessions,
        });
        tokio::spawn(sweep(Arc::clone(&endpoint), stop.clone()));
        let task = tokio::spawn(accept(listener, endpoint, stop.clone()));
        Ok(HttpServer {
            addr,
            metrics,
            stop,
            task: Some(task),
        })
    }

    /// The address it listens on (with the port chosen, for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint's figures, as `GET /metrics` serves them.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Stops listening and ends every session.
    pub fn shutdown(&self) {
        self.stop.cancel();
    }

    /// Serves until [`shutdown`](Self::shutdown) is called from elsewhere (or the listener
    /// fails).
    ///
    /// # Errors
    ///
    /// [`HttpError::Listener`] when the listener failed.
    pub async fn wait(mut self) -> Result<(), HttpError> {
        match self.task.take() {
            Some(task) => task.await.map_err(HttpError::Listener),
            None => Ok(()),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

pub(super) struct Endpoint {
    pub(super) options: HttpOptions,
    pub(super) addr: SocketAddr,
    pub(super) sessions: Sessions,
    pub(super) credentials: Credentials,
    pub(super) table: Table,
    pub(super) limiter: limits::Limiter,
    pub(super) metrics: Metrics,
    /// Permits for the bytes of request bodies being read, across connections.
    pub(super) bodies: Arc<Semaphore>,
    /// Told when descriptors ran out: every connection closes once its response is done.
    pub(super) shed: Notify,
    /// Numbers the 2026-07-28 requests sent on to sessions, so no two share an id.
    pub(super) modern_ids: std::sync::atomic::AtomicU64,
}

/// Ends idle sessions until the endpoint stops.
async fn sweep(endpoint: Arc<Endpoint>, stop: CancellationToken) {
    let every = endpoint.table.sweep_every();
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        endpoint.table.expire(Instant::now());
    }
}

/// Whether an `accept` failed for want of a resource the process gets back when connections
/// close (descriptors, buffers), rather than for one connection's fault.
fn is_exhaustion(error: &std::io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc_errno::EMFILE | libc_errno::ENFILE | libc_errno::ENOBUFS | libc_errno::ENOMEM)
    )
}

/// The error numbers of exhaustion, as Linux and the BSDs number them.
mod libc_errno {
    pub(super) const ENOMEM: i32 = 12;
    pub(super) const ENFILE: i32 = 23;
    pub(super) const EMFILE: i32 = 24;
    #[cfg(target_os = "linux")]
    pub(super) const ENOBUFS: i32 = 105;
    #[cfg(not(target_os = "linux"))]
    pub(super) const ENOBUFS: i32 = 55;
}

async fn accept(listener: TcpListener, endpoint: Arc<Endpoint>, stop: CancellationToken) {
    const FIRST_PAUSE: Duration = Duration::from_millis(10);
    const LONGEST_PAUSE: Duration = Duration::from_secs(1);
    let mut pause = FIRST_PAUSE;
    let mut exhausted = false;
    loop {
        let (stream, _) = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) if is_exhaustion(&error) => {
                    // Retrying at once would spin: the connection waits in the backlog until a
                    // descriptor comes back. Idle connections go first.
                    if !exhausted {
                        tracing::warn!(
                            "cannot accept a connection ({error}): closing idle connections, \
                             retrying with backoff"
                        );
                        exhausted = true;
                    }
                    endpoint.shed.notify_waiters();
                    tokio::select! {
                        () = stop.cancelled() => break,
                        () = tokio::time::sleep(pause) => {}
                    }
                    pause = (pause * 2).min(LONGEST_PAUSE);
                    continue;
                }
                // One connection's failure (reset before it was accepted): the next one.
                Err(_) => continue,
            },
        };
        let stream = crate::net::accepted(stream);
        if exhausted {
            tracing::warn!("accepting connections again");
            exhausted = false;
        }
        pause = FIRST_PAUSE;
        let endpoint = Arc::clone(&endpoint);
        let stop = stop.clone();
        tokio::spawn(async move {
            let serving = Arc::clone(&endpoint);
            let service = hyper::service::service_fn(move |request| {
                let endpoint = Arc::clone(&serving);
                async move { Ok::<_, Infallible>(endpoint.handle(request).await) }
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(endpoint.options.header_read_timeout);
            let connection =
                builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            let shed = endpoint.shed.notified();
            tokio::select! {
                _ = connection.as_mut() => return,
                () = stop.cancelled() => return,
                () = shed => connection.as_mut().graceful_shutdown(),
            }
            tokio::select! {
                _ = connection => {}
                () = stop.cancelled() => {}
            }
        });
    }
    endpoint.table.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exhaustion_is_running_out_of_what_closing_connections_gives_back() {
        for errno in [
            libc_errno::EMFILE,
            libc_errno::ENFILE,
            libc_errno::ENOBUFS,
            libc_errno::ENOMEM,
        ] {
            assert!(is_exhaustion(&std::io::Error::from_raw_os_error(errno)));
        }
        // A connection reset before it was accepted is that connection's fault: no backoff.
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert!(!is_exhaustion(&reset));
        assert!(!is_exhaustion(&std::io::Error::from_raw_os_error(104)));
    }
}
