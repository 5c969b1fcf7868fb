//! [`MemoryStore`]: artifacts in memory.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use super::page::read_page_from;
use super::{
    ArtifactError, ArtifactId, ArtifactPage, ArtifactStore, ArtifactWriter, Owner, PageRequest,
};

/// Artifacts in memory, for tests and short-lived agents. Clones share the same artifacts.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    artifacts: Arc<Mutex<HashMap<ArtifactId, Arc<[u8]>>>>,
    /// The principals' parts, kept while the store is ([`ArtifactStore::scoped`]).
    principals: Arc<Mutex<HashMap<String, MemoryStore>>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many artifacts it holds.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The full text of an artifact.
    pub fn get(&self, id: &ArtifactId) -> Option<String> {
        let bytes = self.lock().get(id).cloned()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ArtifactId, Arc<[u8]>>> {
        // The map stays consistent even if a holder panicked: every update is one insert.
        crate::sync::lock(&self.artifacts)
    }
}

impl ArtifactStore for MemoryStore {
    fn begin(&self) -> Result<Box<dyn ArtifactWriter>, ArtifactError> {
        Ok(Box::new(MemoryWriter {
            store: self.clone(),
            buffer: Vec::new(),
        }))
    }

    fn read_page(&self, id: &ArtifactId, page: PageRequest) -> Result<ArtifactPage, ArtifactError> {
        let bytes = self
            .lock()
            .get(id)
            .cloned()
            .ok_or_else(|| ArtifactError::NotFound(id.clone()))?;
        read_page_from(&bytes[..], page, false)
    }

    /// A session's part is a store of its own, gone with it; a principal's is kept in this
    /// store, for the principal's next session.
    fn scoped(&self, owner: &Owner) -> Result<Arc<dyn ArtifactStore>, ArtifactError> {
        if !owner.is_kept() {
            return Ok(Arc::new(MemoryStore::new()));
        }
        let mut principals = crate::sync::lock(&self.principals);
        let part = principals.entry(owner.name().to_owned()).or_default();
        Ok(Arc::new(part.clone()))
    }
}

struct MemoryWriter {
    store: MemoryStore,
    buffer: Vec<u8>,
}

impl Write for MemoryWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl ArtifactWriter for MemoryWriter {
    fn commit(self: Box<Self>) -> Result<ArtifactId, ArtifactError> {
        let id = ArtifactId::generate()?;
        self.store.lock().insert(id.clone(), self.buffer.into());
        Ok(id)
    }
}
