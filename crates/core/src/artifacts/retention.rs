//! [`Retention`]: how long a [`DirStore`](super::DirStore) keeps artifacts.

use std::time::Duration;

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
