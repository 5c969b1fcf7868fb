//! [`Retention`]: how long a store keeps artifacts, and the index it is applied to.

use std::collections::VecDeque;
use std::time::{Duration, SystemTime};

/// How long artifacts of a [`DirStore`](super::DirStore) are kept.
///
/// By default: 24 hours, and 1 GiB in all (the oldest go first). The total is kept up to date
/// as artifacts are committed, so applying it costs nothing per artifact beyond what it removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retention {
    /// Artifacts older than this are removed. `None` means no age limit.
    pub max_age: Option<Duration>,
    /// When the artifacts' total size exceeds this, the oldest are removed until it does not
    /// (the newest artifact is always kept). `None` means no size limit.
    pub max_total_bytes: Option<u64>,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            max_age: Some(Duration::from_secs(24 * 60 * 60)),
            max_total_bytes: Some(1 << 30),
        }
    }
}

impl Retention {
    /// Keep everything.
    pub fn forever() -> Self {
        Retention {
            max_age: None,
            max_total_bytes: None,
        }
    }

    /// Sets [`max_age`](Self::max_age).
    #[must_use]
    pub fn with_max_age(mut self, max_age: Option<Duration>) -> Self {
        self.max_age = max_age;
        self
    }

    /// Sets [`max_total_bytes`](Self::max_total_bytes).
    #[must_use]
    pub fn with_max_total_bytes(mut self, max: Option<u64>) -> Self {
        self.max_total_bytes = max;
        self
    }
}

/// The artifacts a store knows of, oldest first, and their total size: what its [`Retention`]
/// is applied to, whichever medium the store keeps them on.
#[derive(Debug, Default)]
pub(super) struct Index {
    entries: VecDeque<Entry>,
    total_bytes: u64,
}

/// One artifact a store holds: when it was written, its name there, its size.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) modified: SystemTime,
    pub(super) name: String,
    pub(super) bytes: u64,
}

impl Index {
    pub(super) fn push(&mut self, entry: Entry) {
        self.total_bytes += entry.bytes;
        // Commits arrive in time order; a clock that stepped back still lands in place.
        let at = self
            .entries
            .iter()
            .rposition(|e| e.modified <= entry.modified)
            .map_or(0, |i| i + 1);
        self.entries.insert(at, entry);
    }

    /// Takes out what the retention policy no longer allows, oldest first (never the newest
    /// for size), for the store to remove. Costs only what it takes out.
    pub(super) fn expire(&mut self, retention: &Retention, now: SystemTime) -> Vec<Entry> {
        let mut expired = Vec::new();
        while let Some(oldest) = self.entries.front() {
            let age = now.duration_since(oldest.modified).unwrap_or_default();
            let too_old = retention.max_age.is_some_and(|max| age > max);
            let too_much = self.entries.len() > 1
                && retention
                    .max_total_bytes
                    .is_some_and(|max| self.total_bytes > max);
            if !(too_old || too_much) {
                break;
            }
            let Some(oldest) = self.entries.pop_front() else {
                break;
            };
            self.total_bytes -= oldest.bytes;
            expired.push(oldest);
        }
        expired
    }

    /// The names of every artifact it holds.
    #[cfg(feature = "object-store")]
    pub(super) fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|entry| entry.name.as_str())
    }
}
