//! Kernel confinement of run_command's processes, with Landlock on Linux.
//!
//! Landlock restricts the calling *thread* and everything it starts afterwards, and the
//! restriction can never be lifted. So the command is spawned from a short-lived thread of its
//! own that first restricts itself: the command and all its descendants are confined, the host
//! process is not. This needs no `unsafe` (no `pre_exec` hook) and no helper binary.
//!
//! The rules: every file may be read and executed but the artifact store's (its directory may
//! be listed, its files not read: the model reads artifacts through `read_artifact`); writes
//! (create, delete, rename, truncate) only beneath the workspace root, a private temporary
//! directory of the call, and the few devices every shell writes to (`/dev/null`, `/dev/zero`,
//! `/dev/full`, `/dev/tty`); with the network off, no TCP connect or bind. What the running
//! kernel cannot enforce is reported.

use std::path::PathBuf;

/// What run_command may do beyond reading, as registry state (`.state(CommandPolicy::…)`).
/// Without one, commands may write only in the workspace and use the network, and run even
/// where the kernel cannot confine them.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CommandPolicy {
    /// Whether commands may open TCP connections and listen. By default `true`.
    pub network: bool,
    /// Whether to refuse to run a command the kernel cannot confine (no Landlock). By default
    /// `false`: such a command runs, and its result says it was not confined.
    pub require_confinement: bool,
    /// Directories besides the workspace commands may write to (a build cache, say).
    pub writable: Vec<PathBuf>,
}

impl Default for CommandPolicy {
    fn default() -> Self {
        CommandPolicy {
            network: true,
            require_confinement: false,
            writable: Vec::new(),
        }
    }
}

impl CommandPolicy {
    /// The default policy: writes in the workspace only, network on, unconfined runs allowed.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`network`](Self::network).
    #[must_use]
    pub fn with_network(mut self, network: bool) -> Self {
        self.network = network;
        self
    }

    /// Sets [`require_confinement`](Self::require_confinement).
    #[must_use]
    pub fn with_require_confinement(mut self, required: bool) -> Self {
        self.require_confinement = required;
        self
    }

    /// Adds a directory commands may write to.
    #[must_use]
    pub fn with_writable(mut self, dir: impl Into<PathBuf>) -> Self {
        self.writable.push(dir.into());
        self
    }
}

/// How far a command was confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Confinement {
    /// Writes (and, if asked, the network) restricted by the kernel.
    Full,
    /// Landlock is there but could not enforce everything asked (an older kernel).
    Partial,
    /// Not confined; why.
    None(String),
}

impl Confinement {
    /// The level, as `ResultMeta` reports it.
    pub(crate) fn level(&self) -> toolsmith::Confinement {
        match self {
            Confinement::Full => toolsmith::Confinement::Full,
            Confinement::Partial => toolsmith::Confinement::Partial,
            Confinement::None(_) => toolsmith::Confinement::None,
        }
    }

    /// The line the result states it on.
    pub(crate) fn describe(&self, network: bool) -> String {
        let net = if network { "on" } else { "off" };
        match self {
            Confinement::Full => {
                format!("confined: writes to the workspace only; network {net}")
            }
            Confinement::Partial => format!(
                "partly confined (the kernel enforces only part of the rules): writes to the \
                 workspace only; network {net}"
            ),
            Confinement::None(why) => {
                format!("not confined ({why}): the command can write anywhere you can")
            }
        }
    }
}

/// Restricts the calling thread: reads everywhere, writes beneath `writable`, network as
/// asked. Call it on a thread that will only spawn the command.
/// The paths whose files may be read: everything but what lies beneath `hidden`, as the
/// siblings of each directory on the way from `/` down to it. Landlock grants, never denies, so
/// a subtree is left out by granting everything around it.
pub(crate) fn readable_around(hidden: Option<&std::path::Path>) -> Vec<PathBuf> {
    let Some(hidden) = hidden.and_then(|path| std::fs::canonicalize(path).ok()) else {
        return vec![PathBuf::from("/")];
    };
    let mut readable = Vec::new();
    let mut ancestors: Vec<&std::path::Path> = hidden.ancestors().collect();
    ancestors.reverse(); // `/` first
    for pair in ancestors.windows(2) {
        let (dir, next) = (pair[0], pair[1]);
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        readable.extend(
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path != next),
        );
    }
    readable
}

#[cfg(target_os = "linux")]
pub(crate) fn restrict_this_thread(
    writable: &[PathBuf],
    readable: &[PathBuf],
    network: bool,
) -> Confinement {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
        path_beneath_rules,
    };
    let fs = ABI::V3;
    let build = || -> Result<RulesetStatus, landlock::RulesetError> {
        let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(fs))?;
        if !network {
            ruleset = ruleset.handle_access(AccessNet::from_all(ABI::V4))?;
        }
        let devices = ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];
        let status = ruleset
            .create()?
            // Directories may be listed everywhere; files read where `readable` says.
            .add_rules(path_beneath_rules(["/"], AccessFs::ReadDir))?
            .add_rules(path_beneath_rules(readable, AccessFs::from_read(fs)))?
            .add_rules(path_beneath_rules(writable, AccessFs::from_all(fs)))?
            .add_rules(path_beneath_rules(
                devices,
                AccessFs::from_read(fs) | AccessFs::WriteFile,
            ))?
            .restrict_self()?;
        Ok(status.ruleset)
    };
    match build() {
        Ok(RulesetStatus::FullyEnforced) => Confinement::Full,
        Ok(RulesetStatus::PartiallyEnforced) => Confinement::Partial,
        Ok(_) => Confinement::None("this kernel has no Landlock".to_owned()),
        Err(error) => Confinement::None(format!("Landlock failed: {error}")),
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn restrict_this_thread(
    _writable: &[PathBuf],
    _readable: &[PathBuf],
    _network: bool,
) -> Confinement {
    Confinement::None("confinement is implemented on Linux only".to_owned())
}
