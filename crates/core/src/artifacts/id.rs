//! [`ArtifactId`]: 128 random bits as 32 lowercase hex digits, the only name an artifact has.

use std::fmt;
use std::io;

use super::ArtifactError;

/// The id of a stored artifact: 32 lowercase hex digits (128 random bits).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArtifactId(String);

impl ArtifactId {
    const LEN: usize = 32;

    /// A new random id.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::Io`] if the operating system's random source fails.
    pub fn generate() -> Result<Self, ArtifactError> {
        let mut bytes = [0u8; Self::LEN / 2];
        getrandom::fill(&mut bytes)
            .map_err(|error| ArtifactError::Io(io::Error::other(error.to_string())))?;
        let mut id = String::with_capacity(Self::LEN);
        for byte in bytes {
            use fmt::Write as _;
            let _ = write!(id, "{byte:02x}");
        }
        Ok(ArtifactId(id))
    }

    /// Parses an id as the model writes it, refusing anything that is not 32 hex digits (so an
    /// id can never name a path outside the store).
    ///
    /// # Errors
    ///
    /// [`ArtifactError::InvalidId`] naming what was given.
    pub fn parse(id: &str) -> Result<Self, ArtifactError> {
        let id = id.trim();
        if id.len() == Self::LEN && id.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(ArtifactId(id.to_ascii_lowercase()))
        } else {
            Err(ArtifactError::InvalidId(id.chars().take(80).collect()))
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The URI the artifact is named by in machine-readable cut facts
    /// ([`CUT_META_KEY`](crate::registry::CUT_META_KEY)): `toolsmith://artifact/<id>`.
    ///
    /// ```
    /// let id = toolsmith::artifacts::ArtifactId::parse("0123456789abcdef0123456789abcdef").unwrap();
    /// assert_eq!(id.uri(), "toolsmith://artifact/0123456789abcdef0123456789abcdef");
    /// ```
    pub fn uri(&self) -> String {
        format!("{}{}", Self::URI_PREFIX, self.0)
    }

    /// What every artifact's [`uri`](Self::uri) starts with.
    pub const URI_PREFIX: &'static str = "toolsmith://artifact/";

    /// Reads an artifact's URI as a reader asks for a page of it:
    /// `toolsmith://artifact/<id>?offset=120&limit=200&char_offset=0` (each query field
    /// optional, `read_artifact`'s arguments of the same names). The id and the arguments, or
    /// what is wrong with the URI.
    #[cfg(feature = "mcp")]
    pub(crate) fn parse_uri(uri: &str) -> Result<(ArtifactId, serde_json::Value), String> {
        let rest = uri.strip_prefix(Self::URI_PREFIX).ok_or_else(|| {
            format!(
                "`{uri}` is not an artifact's URI ({}<id>)",
                Self::URI_PREFIX
            )
        })?;
        let (id, query) = rest.split_once('?').unwrap_or((rest, ""));
        let id = ArtifactId::parse(id).map_err(|error| error.to_string())?;
        let mut arguments = serde_json::json!({ "id": id.as_str() });
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            if !matches!(key, "offset" | "limit" | "char_offset") {
                return Err(format!(
                    "`{key}` is not a query field of an artifact's URI; use offset, limit and \
                     char_offset"
                ));
            }
            let number: u64 = value
                .parse()
                .map_err(|_| format!("`{key}={value}` in `{uri}` is not a whole number"))?;
            arguments[key] = number.into();
        }
        Ok((id, arguments))
    }
}

impl fmt::Display for ArtifactId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "mcp")]
    #[test]
    fn an_artifacts_uri_names_its_page_and_nothing_else() {
        let id = "0123456789abcdef0123456789abcdef";
        let (parsed, args) =
            ArtifactId::parse_uri(&format!("toolsmith://artifact/{id}?offset=120&limit=5"))
                .unwrap();
        assert_eq!(parsed.as_str(), id);
        assert_eq!(
            args,
            serde_json::json!({ "id": id, "offset": 120, "limit": 5 })
        );
        let (_, args) = ArtifactId::parse_uri(&format!("toolsmith://artifact/{id}")).unwrap();
        assert_eq!(args, serde_json::json!({ "id": id }));
        // A path, another field, a number that is not one, another scheme: refused, named.
        for (uri, says) in [
            (
                "toolsmith://artifact/../../etc/passwd".to_owned(),
                "artifact id",
            ),
            (
                format!("toolsmith://artifact/{id}?path=/etc"),
                "`path` is not a query field",
            ),
            (
                format!("toolsmith://artifact/{id}?offset=-1"),
                "`offset=-1`",
            ),
            (format!("file:///{id}"), "is not an artifact's URI"),
        ] {
            let why = ArtifactId::parse_uri(&uri).unwrap_err();
            assert!(why.contains(says), "{uri}: {why}");
        }
    }

    #[test]
    fn ids_are_hex_and_refuse_paths() {
        let id = ArtifactId::generate().unwrap();
        assert_eq!(ArtifactId::parse(id.as_str()).unwrap(), id);
        assert!(ArtifactId::parse("../../etc/passwd").is_err());
        assert!(ArtifactId::parse("").is_err());
        assert_ne!(ArtifactId::generate().unwrap(), id);
    }
}
