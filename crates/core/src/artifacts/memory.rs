//! [`MemoryStore`]: artifacts in memory.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use super::page::read_page_from;
use super::{ArtifactError, ArtifactId, ArtifactPage, ArtifactStore, ArtifactWriter, PageRequest};

/// Artifacts in memory, for tests and short-lived agents. Clones share the same artifacts.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    artifacts: Arc<Mutex<HashMap<ArtifactId, Arc<[u8]>>>>,
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
