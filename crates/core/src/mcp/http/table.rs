//! The endpoint's sessions: each bound to the credential that opened it, named by an id of 128
//! random bits matched exactly, expired once idle, and the least recently used idle one
//! evicted when a new client comes at the limit.

use crate::sync::lock;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::Sessions;
use crate::artifacts::{ArtifactId, Owner};
use crate::mcp::link::{Link, QUEUE};
use crate::mcp::metrics::{Metrics, SessionEnd, Telemetry};
use crate::mcp::wire::{self, Received, era};

/// Messages of a session waiting for a stream to carry them, at most; older notifications go
/// first when more come.
const MAX_QUEUED: usize = 1_024;

/// Which credential a request carried: its index among the endpoint's tokens, `None` when the
/// endpoint takes requests without one.
pub(super) type Credential = Option<usize>;

/// One client session: where its messages go, the streams that carry what it sends back, and
/// whose it is.
pub(super) struct LiveSession {
    pub(super) to_session: mpsc::Sender<Received>,
    pub(super) router: Arc<Mutex<Router>>,
    credential: Credential,
    _task: AbortOnDrop,
}

struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Which stream carries each message the session sends, and when the session last worked.
pub(super) struct Router {
    /// The streams of requests waiting for their answers, by request id.
    waiting: HashMap<String, mpsc::Sender<String>>,
    /// The order the waiting requests came in (the newest last).
    order: Vec<String>,
    /// Progress tokens of waiting requests, to their request ids.
    tokens: HashMap<String, String>,
    /// The client's GET stream, if open.
    listening: Option<mpsc::Sender<String>>,
    /// What no stream could carry yet.
    queue: VecDeque<String>,
    /// When the last request came or the last answer went: the idle clock starts there, and
    /// runs only while no request waits.
    last_active: Instant,
}

impl Router {
    fn new() -> Self {
        Router {
            waiting: HashMap::new(),
            order: Vec::new(),
            tokens: HashMap::new(),
            listening: None,
            queue: VecDeque::new(),
            last_active: Instant::now(),
        }
    }

    /// How long the session has been idle at `now`; `None` while a request waits for its
    /// answer (an open GET stream alone is not work).
    fn idle(&self, now: Instant) -> Option<Duration> {
        self.waiting
            .is_empty()
            .then(|| now.saturating_duration_since(self.last_active))
    }

    /// A request of the client's, waiting for its answer on `stream`.
    pub(super) fn wait(&mut self, request: String, token: String, stream: mpsc::Sender<String>) {
        self.last_active = Instant::now();
        self.waiting.insert(request.clone(), stream);
        self.order.push(request.clone());
        if token != "null" {
            self.tokens.insert(token, request);
        }
    }

    /// A client's `subscriptions/listen` request (2026-07-28), its frames on `stream`: only
    /// what names it goes there.
    pub(super) fn wait_listen(&mut self, request: String, stream: mpsc::Sender<String>) {
        self.last_active = Instant::now();
        self.waiting.insert(request, stream);
    }

    /// A request whose client stopped waiting: nothing more goes to its stream.
    pub(super) fn abandon(&mut self, request: &str) {
        self.waiting.remove(request);
        self.order.retain(|waiting| waiting != request);
        self.tokens.retain(|_, waiting| waiting != request);
    }

    /// The client's GET stream: what was queued goes first. `false` when one is open already.
    pub(super) fn listen(&mut self, stream: mpsc::Sender<String>) -> bool {
        if self
            .listening
            .as_ref()
            .is_some_and(|open| !open.is_closed())
        {
            return false;
        }
        while let Some(queued) = self.queue.pop_front() {
            if stream.try_send(queued).is_err() {
                break;
            }
        }
        self.listening = Some(stream);
        true
    }

    /// Ends every stream: the session is over.
    fn close(&mut self) {
        self.waiting.clear();
        self.order.clear();
        self.tokens.clear();
        self.listening = None;
    }

    /// Sends a message of the session's (one line of JSON) to the stream it belongs on.
    fn route(&mut self, line: String) {
        let Received::Message(message) = wire::parse(line.as_bytes()) else {
            return;
        };
        if message.method.is_none()
            && let Some(id) = &message.id
        {
            let id = id.to_string();
            if let Some(stream) = self.waiting.remove(&id) {
                self.last_active = Instant::now();
                self.order.retain(|waiting| *waiting != id);
                self.tokens.retain(|_, request| *request != id);
                // The answer ends the response (its sender dropped once it is sent), however
                // full the stream is.
                if let Err(mpsc::error::TrySendError::Full(line)) = stream.try_send(line) {
                    tokio::spawn(async move { stream.send(line).await });
                }
            }
            return;
        }
        let params = message.params_value();
        let subscription = &params["_meta"][era::SUBSCRIPTION_ID_KEY];
        if !subscription.is_null() {
            // A listen's frame goes on its stream, or nowhere (2026-07-28 sends no change
            // notification a client did not listen for).
            if let Some(stream) = self.waiting.get(&subscription.to_string()) {
                let _ = stream.try_send(line);
            }
            return;
        }
        let token = params["progressToken"].to_string();
        let message = line;
        let related = self
            .tokens
            .get(&token)
            .cloned()
            .or_else(|| self.order.last().cloned());
        if let Some(id) = related
            && let Some(stream) = self.waiting.get(&id)
            && stream.try_send(message.clone()).is_ok()
        {
            return;
        }
        if let Some(stream) = &self.listening
            && stream.try_send(message.clone()).is_ok()
        {
            return;
        }
        if self.queue.len() >= MAX_QUEUED {
            self.queue.pop_front();
        }
        self.queue.push_back(message);
    }
}

/// Why a session could not be opened.
pub(super) enum Refused {
    /// At the limit, every session busy.
    Full(usize),
    /// No random id could be made.
    NoId(String),
}

/// The sessions of one endpoint.
pub(super) struct Table {
    live: Mutex<HashMap<String, Arc<LiveSession>>>,
    /// The session each credential's 2026-07-28 requests go to (they name none).
    modern: Mutex<HashMap<Credential, String>>,
    max: usize,
    idle_timeout: Duration,
    metrics: Metrics,
}

impl Table {
    pub(super) fn new(max: usize, idle_timeout: Duration, metrics: Metrics) -> Self {
        Table {
            live: Mutex::default(),
            modern: Mutex::default(),
            max: max.max(1),
            idle_timeout,
            metrics,
        }
    }

    /// The session `id`, if it is open and was opened with `credential`: an id compared
    /// exactly, as issued, and a session of another credential answered as one that never was.
    pub(super) fn get(&self, id: &str, credential: Credential) -> Option<Arc<LiveSession>> {
        lock(&self.live)
            .get(id)
            .filter(|live| live.credential == credential)
            .cloned()
    }

    /// The session the 2026-07-28 requests of `credential` go to: open while it lives, a new
    /// one (by [`open`](Self::open)) when it ended. Those requests name no session: any
    /// replica's session of the principal answers them alike.
    pub(super) fn modern(
        &self,
        sessions: &Sessions,
        credential: Credential,
        owner_of: impl FnOnce(&str) -> Owner,
        telemetry: Telemetry,
    ) -> Result<Arc<LiveSession>, Refused> {
        let known = lock(&self.modern).get(&credential).cloned();
        if let Some(live) = known.and_then(|id| self.get(&id, credential)) {
            return Ok(live);
        }
        let (id, live) = self.open(sessions, credential, owner_of, telemetry)?;
        lock(&self.modern).insert(credential, id);
        Ok(live)
    }

    /// Ends the session `id` of `credential`; `false` when there is none.
    pub(super) fn remove(&self, id: &str, credential: Credential) -> bool {
        let mut live = lock(&self.live);
        if live.get(id).is_some_and(|s| s.credential == credential) {
            live.remove(id);
            self.metrics.session_ended(SessionEnd::Deleted);
            return true;
        }
        false
    }

    /// Ends every session.
    pub(super) fn clear(&self) {
        let ended = std::mem::take(&mut *lock(&self.live));
        drop(ended);
    }

    /// A new session of `credential`, running `sessions` for the owner `owner_of` names from its
    /// id. At the limit, the least recently used idle session is evicted to make room.
    pub(super) fn open(
        &self,
        sessions: &Sessions,
        credential: Credential,
        owner_of: impl FnOnce(&str) -> Owner,
        telemetry: Telemetry,
    ) -> Result<(String, Arc<LiveSession>), Refused> {
        let id = ArtifactId::generate()
            .map(|id| id.to_string())
            .map_err(|error| Refused::NoId(error.to_string()))?;
        let evicted;
        {
            let mut live = lock(&self.live);
            evicted = if live.len() >= self.max {
                let now = Instant::now();
                let oldest = live
                    .iter()
                    .filter_map(|(id, session)| Some((lock(&session.router).idle(now)?, id)))
                    .max_by_key(|(idle, _)| *idle)
                    .map(|(_, id)| id.clone());
                let Some(oldest) = oldest else {
                    return Err(Refused::Full(live.len()));
                };
                tracing::warn!(
                    session = %oldest,
                    "{} sessions are open, the most this server takes: the least recently used \
                     idle one ended to make room for a new client",
                    live.len()
                );
                self.metrics.session_ended(SessionEnd::Evicted);
                live.remove(&oldest)
            } else {
                None
            };
        }
        // Ended outside the lock: its task's drop stops its servers.
        drop(evicted);
        let (to_session, incoming) = mpsc::channel(QUEUE);
        let (outgoing, mut from_session) = mpsc::channel::<String>(QUEUE);
        let router = Arc::new(Mutex::new(Router::new()));
        let routing = Arc::clone(&router);
        let closing = Arc::clone(&router);
        let run = sessions(
            Link {
                incoming: incoming.into(),
                outgoing: outgoing.into(),
            },
            owner_of(&id),
            telemetry,
        );
        let task = tokio::spawn(async move {
            let routes = async move {
                while let Some(message) = from_session.recv().await {
                    lock(&routing).route(message);
                }
            };
            tokio::join!(run, routes);
            // The session ended: a request it left unanswered ends its stream rather than wait.
            lock(&closing).close();
        });
        let session = Arc::new(LiveSession {
            to_session,
            router,
            credential,
            _task: AbortOnDrop(task.abort_handle()),
        });
        lock(&self.live).insert(id.clone(), Arc::clone(&session));
        self.metrics.session_opened();
        Ok((id, session))
    }

    /// Ends every session idle longer than the timeout at `now`; returns how many.
    pub(super) fn expire(&self, now: Instant) -> usize {
        let expired: Vec<(String, Arc<LiveSession>)> = {
            let mut live = lock(&self.live);
            let ids: Vec<String> = live
                .iter()
                .filter(|(_, session)| {
                    lock(&session.router)
                        .idle(now)
                        .is_some_and(|idle| idle >= self.idle_timeout)
                })
                .map(|(id, _)| id.clone())
                .collect();
            ids.into_iter()
                .filter_map(|id| live.remove(&id).map(|session| (id, session)))
                .collect()
        };
        for (id, _) in &expired {
            self.metrics.session_ended(SessionEnd::Expired);
            tracing::info!(session = %id, "session ended: idle for {}", crate::figures::DisplayDuration(self.idle_timeout));
        }
        expired.len()
    }

    /// How often the sweeper looks for idle sessions: a quarter of the timeout, between 50 ms
    /// and 30 s.
    pub(super) fn sweep_every(&self) -> Duration {
        (self.idle_timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(30))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sessions that hold their link and never answer.
    fn silent() -> Sessions {
        Arc::new(|link: Link, _owner: Owner, _telemetry: Telemetry| {
            Box::pin(async move {
                let _link = link;
                std::future::pending::<()>().await;
            })
        })
    }

    fn telemetry(table: &Table) -> Telemetry {
        Telemetry {
            metrics: table.metrics.clone(),
            principal: None,
        }
    }

    fn open(table: &Table, credential: Credential) -> String {
        let owner = |id: &str| Owner::session(id).unwrap();
        match table.open(&silent(), credential, owner, telemetry(table)) {
            Ok((id, _)) => id,
            Err(_) => panic!("the session opens"),
        }
    }

    #[tokio::test]
    async fn a_session_answers_its_own_credential_and_its_exact_id_only() {
        let table = Table::new(4, Duration::from_secs(60), Metrics::default());
        let id = open(&table, Some(0));
        assert_eq!(id.len(), 32);
        assert!(table.get(&id, Some(0)).is_some());
        assert!(table.get(&id, Some(1)).is_none());
        assert!(table.get(&id, None).is_none());
        assert!(table.get(&id.to_uppercase(), Some(0)).is_none());
        assert!(table.get(&format!(" {id}"), Some(0)).is_none());
        assert!(!table.remove(&id, Some(1)));
        assert!(table.remove(&id, Some(0)));
        assert!(table.get(&id, Some(0)).is_none());
    }

    #[tokio::test]
    async fn idle_sessions_expire_but_not_while_a_request_waits() {
        let idle = Duration::from_secs(60);
        let table = Table::new(4, idle, Metrics::default());
        let quiet = open(&table, None);
        let working = open(&table, None);
        let (stream, _answers) = mpsc::channel(1);
        lock(&table.get(&working, None).unwrap().router).wait("1".into(), "null".into(), stream);
        // A GET stream alone is not work.
        let (listening, _events) = mpsc::channel(1);
        assert!(lock(&table.get(&quiet, None).unwrap().router).listen(listening));
        let later = Instant::now() + idle * 2;
        assert_eq!(table.expire(later), 1);
        assert!(table.get(&quiet, None).is_none());
        assert!(table.get(&working, None).is_some());
        // Answered: its idle clock starts then.
        let live = table.get(&working, None).unwrap();
        lock(&live.router).route(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.into());
        assert_eq!(table.expire(Instant::now() + idle / 2), 0);
        assert_eq!(table.expire(Instant::now() + idle * 2), 1);
    }

    #[tokio::test]
    async fn at_the_limit_the_least_recently_used_idle_session_makes_room() {
        let table = Table::new(2, Duration::from_secs(60), Metrics::default());
        let oldest = open(&table, None);
        std::thread::sleep(Duration::from_millis(5));
        let newer = open(&table, None);
        let third = open(&table, None);
        assert!(table.get(&oldest, None).is_none());
        assert!(table.get(&newer, None).is_some());
        assert!(table.get(&third, None).is_some());
        // Every session busy: refused, nothing evicted.
        let mut streams = Vec::new();
        for id in [&newer, &third] {
            let (stream, answers) = mpsc::channel(1);
            streams.push(answers);
            lock(&table.get(id, None).unwrap().router).wait("1".into(), "null".into(), stream);
        }
        let owner = |id: &str| Owner::session(id).unwrap();
        assert!(matches!(
            table.open(&silent(), None, owner, telemetry(&table)),
            Err(Refused::Full(2))
        ));
        assert!(table.get(&newer, None).is_some() && table.get(&third, None).is_some());
        let figures = table.metrics.render();
        assert!(
            figures.contains("toolsmith_sessions_opened_total 3"),
            "{figures}"
        );
        assert!(figures.contains("toolsmith_sessions_open 2"), "{figures}");
        assert!(
            figures.contains(r#"toolsmith_sessions_ended_total{reason="evicted"} 1"#),
            "{figures}"
        );
    }
}
