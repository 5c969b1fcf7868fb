//! Images and audio kept as artifacts: one header line naming the content type, the MIME type
//! and a tag, then the base64 on lines of 76 chars. `read_artifact` (the registry's and the
//! proxy's) reads such an artifact back as the block it was, and pages it as text like any
//! other when asked for lines.
//!
//! The tag is a keyed hash of the rest (SipHash under a key drawn at random once per process):
//! an artifact of text that only looks like a media artifact — a command's output that prints
//! such a header, cut and stored — is read as the text it is, never shown to the model as an
//! image (one that is not an image would make the provider refuse the whole request). A media
//! artifact of an earlier process is read as its text too.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher as _, Hasher as _};
use std::io::Write;
use std::sync::OnceLock;

use super::{ArtifactError, ArtifactId, ArtifactStore, PageRequest};

/// The first line of a media artifact: `toolsmith-media: <kind> <mime type> <tag>`.
const MEDIA_HEADER: &str = "toolsmith-media:";

/// The keyed hash of a media artifact's kind, MIME type and data: only this process can make it.
fn tag(kind: &str, mime_type: &str, data: &[u8]) -> u64 {
    static KEY: OnceLock<RandomState> = OnceLock::new();
    let mut hasher = KEY.get_or_init(RandomState::new).build_hasher();
    hasher.write(kind.as_bytes());
    hasher.write_u8(0);
    hasher.write(mime_type.as_bytes());
    hasher.write_u8(0);
    hasher.write(data);
    hasher.finish()
}

/// Media as an artifact holds it: its content type (`image`, `audio`, or the proxy's `blob` for
/// an embedded resource), its MIME type and its base64.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredMedia {
    pub(crate) kind: String,
    pub(crate) mime_type: String,
    pub(crate) data: String,
}

/// Stores media as an artifact `try_read_media` gives back. A MIME type that is not one (from a
/// hostile upstream: spaces, line breaks) is stored as `application/octet-stream`.
///
/// # Errors
///
/// As the store's writes, and an I/O error when the store's size cap would cut the data (media
/// cut in the middle cannot be shown).
pub(crate) fn store_media(
    store: &dyn ArtifactStore,
    kind: &str,
    mime_type: &str,
    data: &str,
) -> Result<ArtifactId, ArtifactError> {
    let mime_type = if is_mime_type(mime_type) && !mime_type.contains(' ') {
        mime_type
    } else {
        "application/octet-stream"
    };
    let tag = tag(kind, mime_type, data.as_bytes());
    let mut writer = store.begin()?;
    writer.write_all(format!("{MEDIA_HEADER} {kind} {mime_type} {tag:016x}\n").as_bytes())?;
    let mut buffer = Vec::with_capacity(64 * 1024);
    for line in data.as_bytes().chunks(76) {
        buffer.extend_from_slice(line);
        buffer.push(b'\n');
        if buffer.len() >= 63 * 1024 {
            writer.write_all(&buffer)?;
            buffer.clear();
        }
    }
    writer.write_all(&buffer)?;
    if writer.omitted_bytes() > 0 {
        return Err(ArtifactError::Io(std::io::Error::other(format!(
            "the {kind} is over the artifact store's size cap"
        ))));
    }
    writer.commit()
}

/// The most bytes a media artifact may hold to be given back whole, as the block it was: half
/// of the 16 MiB an MCP message may carry, so the answer, its JSON and its envelope fit one
/// message with room. A larger one is refused at once (its base64 can still be paged as text).
pub(crate) const MAX_MEDIA_READ_BYTES: u64 = 8 << 20;

/// What reading an artifact as media found.
#[derive(Debug)]
pub(crate) enum MediaRead {
    /// The artifact is not media (or text that only looks like it).
    NotMedia,
    /// The media, whole.
    Media(StoredMedia),
    /// Media too large to give back in one message: nothing of it was read but its header.
    TooLarge {
        /// `image`, `audio` or `blob`.
        kind: String,
        /// Its MIME type.
        mime_type: String,
        /// The artifact's bytes (its base64 and header).
        bytes: u64,
    },
}

/// The media an artifact holds, when it is a media artifact and at most
/// [`MAX_MEDIA_READ_BYTES`]; read whole. The store's failure is an error (a read that cannot
/// reach the store says so at once, and is not tried again as text).
pub(crate) fn try_read_media(
    store: &dyn ArtifactStore,
    id: &ArtifactId,
) -> Result<MediaRead, ArtifactError> {
    let first = store.read_page(
        id,
        PageRequest {
            offset: 0,
            char_offset: 0,
            limit: Some(1),
            max_bytes: 512,
        },
    )?;
    let Some(header) = first.text.strip_prefix(MEDIA_HEADER).map(str::trim) else {
        return Ok(MediaRead::NotMedia);
    };
    let mut fields = header.split(' ');
    let (Some(kind), Some(mime_type), Some(stated), None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Ok(MediaRead::NotMedia);
    };
    if first.total_bytes > MAX_MEDIA_READ_BYTES {
        return Ok(MediaRead::TooLarge {
            kind: kind.to_owned(),
            mime_type: mime_type.to_owned(),
            bytes: first.total_bytes,
        });
    }
    let page = store.read_page(
        id,
        PageRequest {
            offset: 1,
            char_offset: 0,
            limit: None,
            max_bytes: usize::MAX,
        },
    )?;
    if page.capped {
        return Ok(MediaRead::NotMedia);
    }
    let data: String = page.text.lines().collect();
    // Written by this process as media, or text that only looks like it.
    if format!("{:016x}", tag(kind, mime_type, data.as_bytes())) != stated {
        return Ok(MediaRead::NotMedia);
    }
    Ok(MediaRead::Media(StoredMedia {
        kind: kind.to_owned(),
        mime_type: mime_type.to_owned(),
        data,
    }))
}

/// What `read_artifact` answers for media too large to give back whole: its size, the limit,
/// and how to get it — its base64 in pages, or the file an operator can reach.
pub(crate) fn too_large_to_read(
    id: &ArtifactId,
    kind: &str,
    mime_type: &str,
    bytes: u64,
    location: Option<&std::path::Path>,
) -> String {
    let mut text = format!(
        "artifact `{id}` holds {} ({mime_type}) of {} bytes, over the {} bytes one answer may \
         carry, so it is not given back whole. Read its base64 as text, in pages: read_artifact \
         with id `{id}`, offset=1 and a limit (line 0 is its header)",
        if kind == "audio" {
            "an audio clip"
        } else if kind == "image" {
            "an image"
        } else {
            "binary data"
        },
        crate::figures::grouped(bytes),
        crate::figures::grouped(MAX_MEDIA_READ_BYTES),
    );
    match location {
        Some(dir) => text.push_str(&format!(
            "; or an operator can take the whole of it from the artifact store at {}",
            dir.display()
        )),
        None => text.push('.'),
    }
    if location.is_some() {
        text.push('.');
    }
    text
}

/// Whether `text` reads as a MIME type: `type/subtype`, visible ASCII, parameters allowed.
pub(crate) fn is_mime_type(text: &str) -> bool {
    let essence = text.split(';').next().unwrap_or_default().trim();
    text.len() <= 255
        && text.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
        && essence
            .split_once('/')
            .is_some_and(|(kind, sub)| !kind.is_empty() && !sub.is_empty() && !sub.contains('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_media(store: &dyn ArtifactStore, id: &ArtifactId) -> Option<StoredMedia> {
        match try_read_media(store, id).ok()? {
            MediaRead::Media(media) => Some(media),
            _ => None,
        }
    }
    use crate::artifacts::MemoryStore;

    #[test]
    fn media_comes_back_as_it_was_stored() {
        let store = MemoryStore::new();
        let data = "QUJD".repeat(100_000);
        let id = store_media(&store, "image", "image/png", &data).unwrap();
        let back = read_media(&store, &id).unwrap();
        assert_eq!(
            (back.kind.as_str(), back.mime_type.as_str()),
            ("image", "image/png")
        );
        assert_eq!(back.data, data);
    }

    #[test]
    fn a_mime_type_that_is_not_one_does_not_break_the_header() {
        let store = MemoryStore::new();
        let id = store_media(&store, "audio", "audio/wav\nimage png", "QUJD").unwrap();
        let back = read_media(&store, &id).unwrap();
        assert_eq!(back.mime_type, "application/octet-stream");
        assert_eq!(back.data, "QUJD");
    }

    #[test]
    fn text_that_only_looks_like_media_is_text() {
        let store = MemoryStore::new();
        let id = store_media(&store, "image", "image/png", "QUJD").unwrap();
        let stored = store
            .read_page(
                &id,
                PageRequest {
                    offset: 0,
                    char_offset: 0,
                    limit: None,
                    max_bytes: 1 << 20,
                },
            )
            .unwrap()
            .text;
        // The same header over other data (a command printing it, say), or no tag at all.
        let forged = stored.replace("QUJD", "PHN2Zz4=");
        let forged = store.put(&forged).unwrap();
        assert_eq!(read_media(&store, &forged), None);
        let untagged = store
            .put("toolsmith-media: image image/png\nQUJD\n")
            .unwrap();
        assert_eq!(read_media(&store, &untagged), None);
        assert!(read_media(&store, &id).is_some());
    }

    #[test]
    fn a_text_artifact_is_not_media() {
        let store = MemoryStore::new();
        let id = store.put("toolsmith-media is a phrase\nand more").unwrap();
        assert_eq!(read_media(&store, &id), None);
    }
}
