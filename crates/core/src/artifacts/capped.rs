//! An artifact being written to a file, capped: the first half of the cap kept as it comes, the
//! last half as a ring in the file's second half, and on commit the three parts — head, a
//! notice line saying what was left out, tail — given in order. The one owner of the cap and of
//! its notice, for every store that writes through a file.

use std::fs::File;
use std::io::{self, BufWriter, Read as _, Seek as _, SeekFrom, Write};

use crate::figures::grouped;

/// The smallest per-artifact cap a store accepts: room for a head and a tail worth reading.
pub(super) const MIN_ARTIFACT_BYTES: u64 = 1024;

/// A capped artifact in a file: straight to it up to the cap; past it, the last half of the cap
/// is kept as a ring in the file's second half.
pub(super) struct CappedFile {
    file: BufWriter<File>,
    /// Bytes given so far.
    written: u64,
    cap: u64,
    head_cap: u64,
}

impl CappedFile {
    /// Writes to `file` (empty, opened for reading and writing), keeping at most `cap` bytes.
    pub(super) fn new(file: File, cap: u64) -> Self {
        Self {
            file: BufWriter::with_capacity(64 * 1024, file),
            written: 0,
            cap,
            head_cap: cap / 2,
        }
    }

    /// Whether more was written than the cap keeps.
    pub(super) fn is_capped(&self) -> bool {
        self.written > self.cap
    }

    /// Bytes written that the artifact will not keep.
    pub(super) fn omitted_bytes(&self) -> u64 {
        self.written.saturating_sub(self.cap)
    }

    /// The bytes written, when nothing was left out: the file holds them as they came.
    pub(super) fn written(&self) -> u64 {
        self.written
    }

    fn tail_cap(&self) -> u64 {
        self.cap - self.head_cap
    }

    /// Where the stream's byte at `offset` (past the head) lives in the file.
    fn ring_position(&self, offset: u64) -> u64 {
        self.head_cap + (offset - self.head_cap) % self.tail_cap()
    }

    /// Writes bytes past the cap into the ring, only the last `tail_cap` of them mattering.
    fn write_ring(&mut self, bytes: &[u8], offset: u64) -> io::Result<()> {
        let tail_cap = self.tail_cap();
        let skip = (bytes.len() as u64).saturating_sub(tail_cap);
        let mut bytes = &bytes[usize::try_from(skip).unwrap_or(usize::MAX)..];
        let mut offset = offset + skip;
        while !bytes.is_empty() {
            let at = self.ring_position(offset);
            let room = usize::try_from(self.cap - at).unwrap_or(usize::MAX);
            let (now, rest) = bytes.split_at(bytes.len().min(room));
            let file = self.file.get_mut();
            file.seek(SeekFrom::Start(at))?;
            file.write_all(now)?;
            offset += now.len() as u64;
            bytes = rest;
        }
        Ok(())
    }

    /// Writes the artifact in order to `out` — when capped: head, notice, tail — and returns
    /// the bytes written.
    pub(super) fn write_ordered(&mut self, out: &mut dyn Write) -> io::Result<u64> {
        self.file.flush()?;
        let (written, cap, head_cap) = (self.written, self.cap, self.head_cap);
        let tail_cap = self.tail_cap();
        let source = self.file.get_mut();
        source.seek(SeekFrom::Start(0))?;
        if written <= cap {
            io::copy(&mut (&*source).take(written), out)?;
            return Ok(written);
        }
        // The oldest byte of the ring is the one the next write would overwrite.
        let oldest = (written - head_cap) % tail_cap;
        io::copy(&mut (&*source).take(head_cap), out)?;
        let mut last = [0u8];
        source.seek(SeekFrom::Start(head_cap - 1))?;
        source.read_exact(&mut last)?;
        let notice = format!(
            "{}[toolsmith: {} bytes of output left out here; the artifact keeps the first {} and \
             the last {} of {} bytes]\n",
            if last[0] == b'\n' { "" } else { "\n" },
            grouped(written - cap),
            grouped(head_cap),
            grouped(tail_cap),
            grouped(written),
        );
        out.write_all(notice.as_bytes())?;
        source.seek(SeekFrom::Start(head_cap + oldest))?;
        io::copy(&mut (&*source).take(tail_cap - oldest), out)?;
        source.seek(SeekFrom::Start(head_cap))?;
        io::copy(&mut (&*source).take(oldest), out)?;
        Ok(cap + notice.len() as u64)
    }
}

impl Write for CappedFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = usize::try_from(self.cap.saturating_sub(self.written)).unwrap_or(usize::MAX);
        if buf.len() <= room {
            self.file.write_all(buf)?;
        } else {
            self.file.write_all(&buf[..room])?;
            // The ring is written in place, under the buffer: empty it first.
            self.file.flush()?;
            let offset = self.written + room as u64;
            self.write_ring(&buf[room..], offset)?;
        }
        self.written += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}
