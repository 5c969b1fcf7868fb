//! Spooling a stream to an artifact off the reading path: a blocking task owns the writer, and
//! the capture hands it chunks through a bounded channel.

use std::io::{self, Write};
use std::sync::{Arc, Mutex, mpsc};

use super::{ArtifactError, ArtifactId, ArtifactStore, ArtifactWriter};
use crate::trim::{OpenSpool, Spool};

/// Chunks in flight between the capture and the writer: with chunks of up to 256 KiB, at most
/// 4 MiB waits for the disk.
const CHUNKS_IN_FLIGHT: usize = 16;

type Committed = Result<(ArtifactId, u64), ArtifactError>;

/// The artifact a spool wrote, once its stream ended: `None` if the stream never outgrew the
/// capture, so no spool was opened.
#[derive(Default, Clone)]
pub(crate) struct SpoolSlot(Arc<Mutex<Option<tokio::task::JoinHandle<Committed>>>>);

impl SpoolSlot {
    /// Waits for the writer to commit (the capture dropped its sink when it finished).
    pub(crate) async fn committed(&self) -> Option<Committed> {
        let handle = crate::sync::lock(&self.0).take()?;
        Some(handle.await.unwrap_or_else(|error| {
            Err(ArtifactError::Io(io::Error::other(format!(
                "the artifact writer failed ({error})"
            ))))
        }))
    }
}

/// An [`OpenSpool`] that begins an artifact in `store` and writes it from a blocking task;
/// the slot yields the committed artifact.
pub(crate) fn spool_to(store: Arc<dyn ArtifactStore>) -> (OpenSpool, SpoolSlot) {
    let slot = SpoolSlot::default();
    let filled = slot.clone();
    let open: OpenSpool = Box::new(move || {
        let writer = store.begin().map_err(io::Error::other)?;
        let (sender, chunks) = mpsc::sync_channel::<Vec<u8>>(CHUNKS_IN_FLIGHT);
        let handle = tokio::task::spawn_blocking(move || write_all(writer, &chunks));
        *crate::sync::lock(&filled.0) = Some(handle);
        Ok(Box::new(ChannelSink(sender)) as Box<dyn Spool>)
    });
    (open, slot)
}

fn write_all(mut writer: Box<dyn ArtifactWriter>, chunks: &mpsc::Receiver<Vec<u8>>) -> Committed {
    for chunk in chunks {
        writer.write_all(&chunk)?;
    }
    let omitted = writer.omitted_bytes();
    Ok((writer.commit()?, omitted))
}

/// The capture's end of the channel.
struct ChannelSink(mpsc::SyncSender<Vec<u8>>);

impl Spool for ChannelSink {
    fn write_owned(&mut self, chunk: Vec<u8>) -> io::Result<()> {
        self.0.send(chunk).map_err(|_| stopped())
    }
}

fn stopped() -> io::Error {
    io::Error::other("the artifact writer stopped (it failed to write; see the marker)")
}

impl Write for ChannelSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.send(buf.to_vec()).map_err(|_| stopped())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
