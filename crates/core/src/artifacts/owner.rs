//! [`Owner`]: whose artifacts a scoped store keeps, so one client of a gateway never reads
//! another's.

use std::fmt;

use super::ArtifactError;

/// Whose artifacts a [scoped](super::ArtifactStore::scoped) store keeps: a gateway's session,
/// whose artifacts go when it ends, or a principal (a named credential), whose artifacts stay
/// across its sessions and processes under the store's retention.
///
/// A name is 1 to 64 of `A-Z a-z 0-9 _ . -`, not starting with a dot, so it can name a
/// directory or an object prefix as it is.
///
/// ```
/// use toolsmith::artifacts::Owner;
///
/// let alice = Owner::principal("alice").unwrap();
/// assert!(alice.is_kept());
/// assert!(Owner::principal("../bob").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Owner {
    kind: Kind,
    name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Session,
    Principal,
}

impl Owner {
    /// A session named `id`: its artifacts are removed once the store scoped to it is dropped.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::InvalidOwner`] for a name that is not 1 to 64 of `A-Z a-z 0-9 _ . -`
    /// or starts with a dot.
    pub fn session(id: &str) -> Result<Self, ArtifactError> {
        Self::new(Kind::Session, id)
    }

    /// A principal named `name`: its artifacts stay after its sessions end.
    ///
    /// # Errors
    ///
    /// [`ArtifactError::InvalidOwner`], as for [`session`](Self::session).
    pub fn principal(name: &str) -> Result<Self, ArtifactError> {
        Self::new(Kind::Principal, name)
    }

    fn new(kind: Kind, name: &str) -> Result<Self, ArtifactError> {
        let valid = (1..=64).contains(&name.len())
            && !name.starts_with('.')
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
        if !valid {
            return Err(ArtifactError::InvalidOwner(name.to_owned()));
        }
        Ok(Owner {
            kind,
            name: name.to_owned(),
        })
    }

    /// The owner's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether its artifacts outlive the store scoped to it: `true` for a principal.
    pub fn is_kept(&self) -> bool {
        self.kind == Kind::Principal
    }

    /// The owner as one path segment, its kind first: `session-<id>`, `principal-<name>`.
    pub fn segment(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            Kind::Session => "session",
            Kind::Principal => "principal",
        };
        write!(f, "{kind}-{}", self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_leave_their_directory_are_refused() {
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "a/b",
            "a\0b",
            ".hidden",
            &"x".repeat(65),
        ] {
            assert!(Owner::principal(bad).is_err(), "{bad:?}");
        }
        let owner = Owner::session("0123abcd").unwrap();
        assert_eq!(owner.segment(), "session-0123abcd");
        assert!(!owner.is_kept());
        assert_eq!(
            Owner::principal("ci-bot.2").unwrap().segment(),
            "principal-ci-bot.2"
        );
    }
}
