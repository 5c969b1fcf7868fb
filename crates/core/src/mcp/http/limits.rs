//! Limits per principal: requests per minute (a keyed GCRA limiter, `governor`), tool calls at
//! once per principal, and tool calls at once across the endpoint. A request over one is
//! answered 429 with `Retry-After`, and counted.
//!
//! A principal is the name a token names; requests with the endpoint's bearer token, or without
//! a token where none is needed, are one principal together. Keys come from the operator's
//! tokens, so the limiter's memory is bounded by them.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::clock::{Clock as _, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::mcp::metrics::{Limited, Metrics};
use crate::sync::lock;

/// What a principal may do, and what the endpoint takes at once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Requests a principal may send a minute (in a burst of as many), `None`: no limit.
    pub requests_per_minute: Option<NonZeroU32>,
    /// Tool calls a principal may have running at once, `None`: no limit.
    pub calls_per_principal: Option<usize>,
    /// Tool calls the endpoint runs at once across principals, `None`: no limit.
    pub calls: Option<usize>,
}

impl Limits {
    /// No limits.
    pub fn new() -> Self {
        Limits::default()
    }

    /// At most `requests` requests a minute per principal.
    #[must_use]
    pub fn with_requests_per_minute(mut self, requests: NonZeroU32) -> Self {
        self.requests_per_minute = Some(requests);
        self
    }

    /// At most `calls` tool calls running at once per principal.
    #[must_use]
    pub fn with_calls_per_principal(mut self, calls: usize) -> Self {
        self.calls_per_principal = Some(calls);
        self
    }

    /// At most `calls` tool calls running at once across the endpoint.
    #[must_use]
    pub fn with_calls(mut self, calls: usize) -> Self {
        self.calls = Some(calls);
        self
    }
}

/// A request refused by a limit: which, and when to try again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Refusal {
    pub(super) why: Limited,
    /// Whole seconds, at least 1.
    pub(super) retry_after: u64,
}

/// The permits a running call holds; released when the answer's stream ends.
#[derive(Debug, Default)]
pub(super) struct Held {
    _principal: Option<OwnedSemaphorePermit>,
    _global: Option<OwnedSemaphorePermit>,
}

/// The limits of one endpoint, and their state.
pub(super) struct Limiter {
    limits: Limits,
    rate: Option<DefaultKeyedRateLimiter<String>>,
    per_principal: Mutex<HashMap<String, Arc<Semaphore>>>,
    global: Option<Arc<Semaphore>>,
    metrics: Metrics,
}

impl Limiter {
    pub(super) fn new(limits: Limits, metrics: Metrics) -> Self {
        Limiter {
            rate: limits
                .requests_per_minute
                .map(|per_minute| RateLimiter::keyed(Quota::per_minute(per_minute))),
            global: limits
                .calls
                .map(|calls| Arc::new(Semaphore::new(calls.min(Semaphore::MAX_PERMITS)))),
            per_principal: Mutex::default(),
            limits,
            metrics,
        }
    }

    fn refuse(&self, why: Limited, retry_after: Duration) -> Refusal {
        self.metrics.limited(why);
        Refusal {
            why,
            retry_after: retry_after.as_secs_f64().ceil().max(1.0) as u64,
        }
    }

    /// Takes one request of `principal` against its rate.
    pub(super) fn request(&self, principal: &str) -> Result<(), Refusal> {
        let Some(rate) = &self.rate else {
            return Ok(());
        };
        // The limiter keys by owned strings; a principal's name is short.
        rate.check_key(&principal.to_owned()).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            self.refuse(Limited::Rate, wait)
        })
    }

    /// Takes a running call of `principal`: its own bound first, then the endpoint's.
    pub(super) fn call(&self, principal: &str) -> Result<Held, Refusal> {
        let mut held = Held::default();
        if let Some(most) = self.limits.calls_per_principal {
            let semaphore = Arc::clone(
                lock(&self.per_principal)
                    .entry(principal.to_owned())
                    .or_insert_with(|| Arc::new(Semaphore::new(most.min(Semaphore::MAX_PERMITS)))),
            );
            held._principal = Some(
                semaphore
                    .try_acquire_owned()
                    .map_err(|_| self.refuse(Limited::Concurrency, Duration::from_secs(1)))?,
            );
        }
        if let Some(global) = &self.global {
            held._global = Some(
                Arc::clone(global)
                    .try_acquire_owned()
                    .map_err(|_| self.refuse(Limited::Global, Duration::from_secs(1)))?,
            );
        }
        Ok(held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_principal_has_its_own_rate_and_its_own_calls() {
        let limiter = Limiter::new(
            Limits::new()
                .with_requests_per_minute(NonZeroU32::new(3).unwrap())
                .with_calls_per_principal(2)
                .with_calls(3),
            Metrics::default(),
        );
        for _ in 0..3 {
            assert!(limiter.request("alice").is_ok());
        }
        let refused = limiter.request("alice").unwrap_err();
        assert_eq!(refused.why, Limited::Rate);
        // One request every 20 s comes back: the next in at most 20 s.
        assert!((1..=20).contains(&refused.retry_after), "{refused:?}");
        assert!(limiter.request("bob").is_ok());

        let first = limiter.call("alice").unwrap();
        let _second = limiter.call("alice").unwrap();
        assert_eq!(limiter.call("alice").unwrap_err().why, Limited::Concurrency);
        let _bob = limiter.call("bob").unwrap();
        // Three running across the endpoint: the global bound.
        assert_eq!(limiter.call("carol").unwrap_err().why, Limited::Global);
        drop(first);
        assert!(limiter.call("alice").is_ok());
        let figures = limiter.metrics.render();
        assert!(figures.contains(r#"toolsmith_requests_limited_total{reason="rate"} 1"#));
        assert!(figures.contains(r#"toolsmith_requests_limited_total{reason="global"} 1"#));
    }
}
