//! Images and audio: what a tool returns beside its text ([`Media`]), and how many of them a
//! model is shown ([`MediaLimits`]).
//!
//! Media are not text: they do not count against a result's allowance in chars. What bounds
//! them is a count and a size, the same rule for the registry and the proxy: a result shows at
//! most [`MediaLimits::max_blocks`] of them, a batch at most
//! [`MediaLimits::max_batch_blocks`], each at most [`MediaLimits::max_bytes`] of base64. One over
//! a limit is stored whole as an artifact that `read_artifact` returns as the same image or
//! audio clip, and a one-line note in the result's text says so; an image read back that way is
//! shown whatever its size (the model asked for it by name), within the counts.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

use super::ToolError;
use crate::artifacts::{ArtifactId, READ_ARTIFACT, is_mime_type};
use crate::figures::grouped;

/// What kind of media a [`Media`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MediaKind {
    /// An image (`image/png`, `image/jpeg`, …).
    Image,
    /// An audio clip (`audio/wav`, `audio/mpeg`, …).
    Audio,
}

impl MediaKind {
    /// The kind as MCP names its content type: `image` or `audio`.
    pub fn as_str(self) -> &'static str {
        match self {
            MediaKind::Image => "image",
            MediaKind::Audio => "audio",
        }
    }

    /// The kind an MCP content type names, `image` or `audio`.
    pub fn from_content_type(content_type: &str) -> Option<Self> {
        match content_type {
            "image" => Some(MediaKind::Image),
            "audio" => Some(MediaKind::Audio),
            _ => None,
        }
    }
}

impl fmt::Display for MediaKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An image or an audio clip a tool returns beside its text
/// ([`ToolOutput::with_media`](crate::ToolOutput::with_media)), held as base64 — the form MCP
/// and the model providers carry it in.
///
/// ```
/// use toolsmith::tool::{Media, MediaKind};
///
/// let png = Media::image(b"\x89PNG\r\n\x1a\n", "image/png");
/// assert_eq!(png.kind(), MediaKind::Image);
/// assert_eq!(png.base64(), "iVBORw0KGgo=");
/// assert_eq!(png.size(), 8);
///
/// // Base64 from elsewhere is checked: a model provider refuses a request with bad base64.
/// assert!(Media::from_base64(MediaKind::Audio, "not base64!", "audio/wav").is_err());
/// ```
#[derive(Clone)]
pub struct Media {
    kind: MediaKind,
    mime_type: String,
    data: String,
    annotations: Option<Map<String, Value>>,
    /// The artifact it was read back from, by `read_artifact`: shown whatever its size.
    pub(crate) from_artifact: Option<ArtifactId>,
}

/// Media are equal when they are the same image or clip: kind, MIME type, data and
/// annotations (not where they were read from).
impl PartialEq for Media {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
            && self.mime_type == other.mime_type
            && self.data == other.data
            && self.annotations == other.annotations
    }
}

impl Eq for Media {}

impl fmt::Debug for Media {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Media")
            .field("kind", &self.kind)
            .field("mime_type", &self.mime_type)
            .field("base64_bytes", &self.data.len())
            .field("annotations", &self.annotations)
            .finish_non_exhaustive()
    }
}

impl Media {
    /// An image of these bytes (`image/png`, `image/jpeg`, `image/gif`, `image/webp` are what
    /// the model providers read).
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Media::encode(MediaKind::Image, bytes.as_ref(), mime_type.into())
    }

    /// An audio clip of these bytes (`audio/wav`, `audio/mpeg`, …).
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Media::encode(MediaKind::Audio, bytes.as_ref(), mime_type.into())
    }

    fn encode(kind: MediaKind, bytes: &[u8], mime_type: String) -> Self {
        Media {
            kind,
            mime_type,
            data: STANDARD.encode(bytes),
            annotations: None,
            from_artifact: None,
        }
    }

    /// Media already in base64 (standard alphabet, padded), as an MCP server sends it.
    ///
    /// # Errors
    ///
    /// An [`ErrorKind::Failed`](crate::tool::ErrorKind::Failed) error naming what is wrong when
    /// `data` is not base64 or `mime_type` is not a MIME type (`type/subtype`): passed on, either
    /// would make the model provider refuse the whole request.
    pub fn from_base64(
        kind: MediaKind,
        data: impl Into<String>,
        mime_type: impl Into<String>,
    ) -> Result<Self, ToolError> {
        let data = data.into();
        let mime_type = mime_type.into();
        if let Some(problem) = problem_of(kind, &data, &mime_type) {
            return Err(ToolError::failed(problem));
        }
        Ok(Media {
            kind,
            mime_type,
            data,
            annotations: None,
            from_artifact: None,
        })
    }

    /// The same media with these annotations (MCP's `audience`, `priority`,
    /// `lastModified`), passed on to whoever shows it.
    pub fn with_annotations(mut self, annotations: Map<String, Value>) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// An image or an audio clip.
    pub fn kind(&self) -> MediaKind {
        self.kind
    }

    /// Its MIME type.
    pub fn mime_type(&self) -> &str {
        &self.mime_type
    }

    /// Its data in base64.
    pub fn base64(&self) -> &str {
        &self.data
    }

    /// Its data in base64, taken out.
    pub fn into_base64(self) -> String {
        self.data
    }

    /// Its annotations, when it has any.
    pub fn annotations(&self) -> Option<&Map<String, Value>> {
        self.annotations.as_ref()
    }

    /// Whether the model is among its audience: true unless its annotations name an
    /// `audience` without `"assistant"` (MCP's `["user"]`: content for the person, not the
    /// model).
    pub fn for_the_model(&self) -> bool {
        match self.annotations.as_ref().and_then(|a| a.get("audience")) {
            Some(Value::Array(audience)) => audience.iter().any(|who| who == "assistant"),
            _ => true,
        }
    }

    /// Its size in bytes, decoded.
    pub fn size(&self) -> usize {
        let padding = self
            .data
            .bytes()
            .rev()
            .take(2)
            .filter(|&b| b == b'=')
            .count();
        (self.data.len() / 4 * 3).saturating_sub(padding)
    }

    /// Its bytes, decoded.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Checked when made: base64 this type encoded or checked.
        STANDARD.decode(&self.data).unwrap_or_default()
    }

    /// The artifact `read_artifact` read it back from, when it was.
    pub fn artifact(&self) -> Option<&ArtifactId> {
        self.from_artifact.as_ref()
    }

    /// The same media, read back from artifact `id` by `read_artifact`.
    pub(crate) fn read_back_from(mut self, id: &ArtifactId) -> Self {
        self.from_artifact = Some(id.clone());
        self
    }

    /// Media made by the crate from data it holds as base64 (an artifact, a relayed block): not
    /// checked again.
    pub(crate) fn from_trusted(kind: MediaKind, data: String, mime_type: String) -> Self {
        Media {
            kind,
            mime_type,
            data,
            annotations: None,
            from_artifact: None,
        }
    }
}

/// What is wrong with media of this base64 and MIME type, if anything: in words, for an error
/// or a note.
pub(crate) fn problem_of(kind: MediaKind, data: &str, mime_type: &str) -> Option<String> {
    if !is_mime_type(mime_type) {
        return Some(format!(
            "the {kind}'s MIME type `{}` is not of the form type/subtype",
            mime_type
                .chars()
                .take(100)
                .collect::<String>()
                .escape_debug()
        ));
    }
    STANDARD.decode(data).err().map(|error| {
        format!(
            "the {kind}'s data ({} bytes) is not base64: {error}",
            grouped(data.len())
        )
    })
}

/// How many images and audio clips a model is shown, and how large each may be.
///
/// ```
/// use toolsmith::tool::MediaLimits;
///
/// let limits = MediaLimits::default().with_max_blocks(2).with_max_bytes(256 * 1024);
/// assert_eq!(limits.max_blocks(), 2);
/// assert_eq!(limits.max_batch_blocks(), 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaLimits {
    max_blocks: usize,
    max_bytes: usize,
    max_batch_blocks: usize,
}

impl Default for MediaLimits {
    /// 4 a result, 20 a batch, 1 MiB of base64 each: within what the model providers take in
    /// one request (Anthropic scales every image down once a request has over 20).
    fn default() -> Self {
        MediaLimits {
            max_blocks: 4,
            max_bytes: 1 << 20,
            max_batch_blocks: 20,
        }
    }
}

impl MediaLimits {
    /// The most media one result shows; later ones are stored as artifacts.
    pub fn with_max_blocks(mut self, max_blocks: usize) -> Self {
        self.max_blocks = max_blocks;
        self
    }

    /// The most bytes of base64 one media block may have; a larger one is stored as an
    /// artifact.
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// The most media the results of one batch show together, in call order (the registry's:
    /// the proxy answers one call a request, and applies the other two limits).
    pub fn with_max_batch_blocks(mut self, max_batch_blocks: usize) -> Self {
        self.max_batch_blocks = max_batch_blocks;
        self
    }

    /// The most media one result shows.
    pub fn max_blocks(&self) -> usize {
        self.max_blocks
    }

    /// The most bytes of base64 one media block may have.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// The most media one batch shows.
    pub fn max_batch_blocks(&self) -> usize {
        self.max_batch_blocks
    }

    /// Why a block of `base64_len` bytes is left out, when `in_result` and `in_batch` are
    /// already shown; `None` when it is shown. `asked_for`: read back from its artifact by
    /// name, so shown whatever its size.
    pub(crate) fn leave_out(
        &self,
        base64_len: usize,
        asked_for: bool,
        in_result: usize,
        in_batch: usize,
    ) -> Option<String> {
        if !asked_for && base64_len > self.max_bytes {
            Some(format!(
                "over the {}-byte limit for one",
                grouped(self.max_bytes)
            ))
        } else if in_result >= self.max_blocks {
            Some(format!(
                "past the {} a result may carry",
                grouped(self.max_blocks)
            ))
        } else if in_batch >= self.max_batch_blocks {
            Some(format!(
                "past the {} the results of one turn may carry",
                grouped(self.max_batch_blocks)
            ))
        } else {
            None
        }
    }
}

/// The one-line note that takes the place of a media block left out: what it was, why, and
/// where it is (`Ok`: the artifact; `Err`: why it could not be kept).
pub(crate) fn left_out_note(
    what: &str,
    mime_type: &str,
    base64_len: usize,
    why: &str,
    kept: Result<&ArtifactId, &str>,
) -> String {
    let kept = match kept {
        Ok(id) => format!("it is artifact {id}, read it with {READ_ARTIFACT}"),
        Err(why) => format!("it could not be kept: {why}"),
    };
    format!(
        "[toolsmith: {what} ({mime_type}, {} bytes of base64) left out, {why}; {kept}]",
        grouped(base64_len)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_the_decoded_bytes() {
        for len in 0..10 {
            let bytes = vec![7u8; len];
            let media = Media::image(&bytes, "image/png");
            assert_eq!(media.size(), len, "{len} bytes");
            assert_eq!(media.to_bytes(), bytes);
        }
    }

    #[test]
    fn base64_and_mime_types_from_elsewhere_are_checked() {
        assert!(Media::from_base64(MediaKind::Image, "iVBORw0KGgo=", "image/png").is_ok());
        let error = Media::from_base64(MediaKind::Image, "iVBORw0KGgo", "image/png").unwrap_err();
        assert!(error.to_string().contains("not base64"), "{error}");
        let error = Media::from_base64(MediaKind::Image, "iVBORw0KGgo=", "png").unwrap_err();
        assert!(error.to_string().contains("type/subtype"), "{error}");
        let error = Media::from_base64(MediaKind::Image, "", "image/png\nX: y").unwrap_err();
        assert!(error.to_string().contains("type/subtype"), "{error}");
        assert!(is_mime_type("audio/wav; rate=16000"));
    }

    #[test]
    fn the_limits_say_which_one_a_block_is_over() {
        let limits = MediaLimits::default()
            .with_max_blocks(2)
            .with_max_bytes(100)
            .with_max_batch_blocks(3);
        assert_eq!(limits.leave_out(100, false, 1, 2), None);
        assert!(
            limits
                .leave_out(101, false, 0, 0)
                .unwrap()
                .contains("100-byte")
        );
        assert_eq!(limits.leave_out(101, true, 0, 0), None);
        assert!(
            limits
                .leave_out(10, false, 2, 2)
                .unwrap()
                .contains("a result")
        );
        assert!(
            limits
                .leave_out(10, true, 1, 3)
                .unwrap()
                .contains("one turn")
        );
    }
}
