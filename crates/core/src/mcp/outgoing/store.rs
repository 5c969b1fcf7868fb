//! Storing what a cut leaves out: each text and media once per result, off the runtime's
//! threads, a store that fails or panics said in the marker rather than failing the result.

use std::sync::Arc;

use super::Fitting;
use crate::artifacts::{self, ArtifactId, ArtifactStore, store_text};

/// What storing a text gave: its artifact and the bytes the store's cap left out, or why not.
pub(super) type StoreOutcome = Result<(ArtifactId, u64), String>;

/// The artifacts one result's fittings have written, by a hash of what they hold. The hash's
/// keys are random, new for each result: an upstream cannot make two of its texts share a key
/// (and one be read back as the other).
#[derive(Debug, Default)]
pub(crate) struct Stored {
    keys: std::hash::RandomState,
    written: std::sync::Mutex<Vec<(u64, StoreOutcome)>>,
}

impl Stored {
    pub(super) fn key(&self, parts: &[&str]) -> u64 {
        use std::hash::BuildHasher as _;
        self.keys.hash_one(parts)
    }

    pub(super) fn get(&self, key: u64) -> Option<StoreOutcome> {
        let written = crate::sync::lock(&self.written);
        written
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, stored)| stored.clone())
    }

    /// Every artifact written, in order.
    pub(super) fn written(&self) -> Vec<ArtifactId> {
        let written = crate::sync::lock(&self.written);
        written
            .iter()
            .filter_map(|(_, stored)| stored.as_ref().ok().map(|(id, _)| id.clone()))
            .collect()
    }

    pub(super) fn put(&self, key: u64, stored: &StoreOutcome) {
        let mut written = crate::sync::lock(&self.written);
        written.push((key, stored.clone()));
    }
}

/// Runs blocking store work off the runtime's threads.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    tokio::task::spawn_blocking(work).await.ok()
}

/// Stores `text` whole; the id and the bytes the store's cap left out, or why it failed.
pub(super) async fn store(fitting: &Fitting, text: String) -> StoreOutcome {
    store_and_give_back(fitting, text).await.0
}

/// Stores `text` and gives it back: a large text is held once while it is stored and cut. A
/// text this result's fitting stored already is not stored again.
pub(super) async fn store_and_give_back(fitting: &Fitting, text: String) -> (StoreOutcome, String) {
    let memo = fitting.memo(&[&text]);
    if let Some(done) = memo.and_then(|(stored, key)| stored.get(key)) {
        return (done, text);
    }
    let (done, text) = store_once(&fitting.store, text).await;
    if let Some((stored, key)) = memo {
        stored.put(key, &done);
    }
    (done, text)
}

async fn store_once(store: &Arc<dyn ArtifactStore>, text: String) -> (StoreOutcome, String) {
    let store = Arc::clone(store);
    // A store that panics gives the text back too: the cut goes on without the artifact.
    let (stored, text) = blocking(move || {
        let stored = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            store_text(store.as_ref(), &text)
        }));
        (stored, text)
    })
    .await
    .unwrap_or_else(|| {
        (
            Ok(Err(crate::artifacts::ArtifactError::Io(
                std::io::Error::other("the artifact writer's task failed"),
            ))),
            String::new(),
        )
    });
    let stored = match stored {
        Ok(stored) => stored.map_err(|error| format!("the artifact store failed ({error})")),
        Err(_) => Err("the artifact store panicked".to_owned()),
    };
    (stored, text)
}

/// Stores a media block's data as an artifact `read_artifact` returns as the same content
/// type.
pub(super) async fn store_media(
    fitting: &Fitting,
    kind: &str,
    mime: &str,
    data: &str,
) -> Result<ArtifactId, String> {
    let memo = fitting.memo(&[kind, mime, data]);
    if let Some(done) = memo.and_then(|(stored, key)| stored.get(key)) {
        return done.map(|(id, _)| id);
    }
    let done = store_media_once(fitting, kind, mime, data).await;
    if let Some((stored, key)) = memo {
        stored.put(key, &done.clone().map(|id| (id, 0)));
    }
    done
}

async fn store_media_once(
    fitting: &Fitting,
    kind: &str,
    mime: &str,
    data: &str,
) -> Result<ArtifactId, String> {
    let store = Arc::clone(&fitting.store);
    let (kind, mime, data) = (kind.to_owned(), mime.to_owned(), data.to_owned());
    blocking(move || {
        artifacts::store_media(store.as_ref(), &kind, &mime, &data).map_err(|e| e.to_string())
    })
    .await
    .unwrap_or_else(|| Err("the artifact store failed".to_owned()))
}
