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
    /// Where commands may read files. `None` (the default): everywhere but the artifact store.
    /// `Some(dirs)`: only the workspace, the call's temporary directory, the directories
    /// programs need to run ([`SYSTEM_READABLE`]) and `dirs`, none of which may hold the
    /// artifact store.
    pub readable: Option<Vec<PathBuf>>,
}

/// The directories a confined command may always read when its policy restricts reading
/// ([`CommandPolicy::with_readable`]): the programs, their libraries and configuration, and the
/// kernel's views a shell needs. Those missing on a system are skipped.
pub const SYSTEM_READABLE: &[&str] = &[
    "/bin",
    "/sbin",
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/dev",
    "/proc",
    "/sys",
    "/opt",
    "/nix",
    "/run/current-system",
];

impl Default for CommandPolicy {
    fn default() -> Self {
        CommandPolicy {
            network: true,
            require_confinement: false,
            writable: Vec::new(),
            readable: None,
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

    /// Restricts reading to the workspace, the call's temporary directory, the
    /// [`SYSTEM_READABLE`] directories and the directories added this way; the first call
    /// turns the restriction on. Useful to keep a model's commands out of `~/.ssh` and the
    /// user's other projects:
    ///
    /// ```
    /// use toolsmith_std::CommandPolicy;
    ///
    /// // Commands read the workspace, the system and the cargo registry; nothing else of $HOME.
    /// let home = std::env::var_os("HOME").unwrap_or_default();
    /// let policy = CommandPolicy::new()
    ///     .with_readable(std::path::Path::new(&home).join(".cargo"))
    ///     .with_network(false);
    /// assert!(policy.readable.is_some());
    /// ```
    #[must_use]
    pub fn with_readable(mut self, dir: impl Into<PathBuf>) -> Self {
        self.readable.get_or_insert_with(Vec::new).push(dir.into());
        self
    }

    /// The paths whose files a command of this policy may read: `always` (the workspace and the
    /// call's temporary directory) and the configured ones, or everything around `hidden` (the
    /// artifact store) when reading is not restricted.
    ///
    /// # Errors
    ///
    /// When a configured directory holds `hidden`: reading it would expose the store.
    pub(crate) fn readable_paths(
        &self,
        always: &[PathBuf],
        hidden: Option<&std::path::Path>,
    ) -> Result<Vec<PathBuf>, String> {
        let Some(configured) = &self.readable else {
            return Ok(readable_around(hidden));
        };
        let hidden = hidden.and_then(|path| std::fs::canonicalize(path).ok());
        let mut paths = always.to_vec();
        for dir in configured {
            let Ok(real) = std::fs::canonicalize(dir) else {
                continue; // nothing there to read
            };
            if let Some(hidden) = &hidden
                && hidden.starts_with(&real)
            {
                return Err(format!(
                    "the command policy lets commands read `{}`, which holds the artifact \
                     store `{}`; list directories beside the store instead",
                    dir.display(),
                    hidden.display()
                ));
            }
            paths.push(real);
        }
        paths.extend(
            SYSTEM_READABLE
                .iter()
                .map(PathBuf::from)
                .filter(|path| path.exists()),
        );
        Ok(paths)
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
    /// The level in a word, as the result's [`CONFINEMENT_META_KEY`](crate::CONFINEMENT_META_KEY)
    /// states it: `full`, `partial` or `none`.
    pub(crate) fn level(&self) -> &'static str {
        match self {
            Confinement::Full => "full",
            Confinement::Partial => "partial",
            Confinement::None(_) => "none",
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

/// The paths whose files may be read: everything but what lies beneath `hidden`, as the
/// siblings of each directory on the way from `/` down to it. Landlock grants, never denies, so
/// a subtree is left out by granting everything around it.
fn readable_around(hidden: Option<&std::path::Path>) -> Vec<PathBuf> {
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

/// What this system's kernel can confine, found once by confining a throwaway thread: the
/// level the standard tools' spec states.
pub(crate) fn available() -> &'static Confinement {
    static AVAILABLE: std::sync::OnceLock<Confinement> = std::sync::OnceLock::new();
    AVAILABLE.get_or_init(|| {
        std::thread::spawn(|| restrict_this_thread(&[], &[PathBuf::from("/")], true))
            .join()
            .unwrap_or_else(|_| Confinement::None("the probe failed".to_owned()))
    })
}

/// Why a command may not run at `confinement` under `policy`, if it may not.
pub(crate) fn refusal(policy: &CommandPolicy, confinement: &Confinement) -> Option<String> {
    (policy.require_confinement && *confinement != Confinement::Full).then(|| {
        format!(
            "the command was not run: the policy requires confinement, and it is {}",
            confinement.describe(policy.network)
        )
    })
}

/// Restricts the calling thread: reads where `readable` says, writes beneath `writable`,
/// network as asked. Call it on a thread that will only spawn the command: the restriction
/// cannot be lifted.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_requiring_confinement_refuses_anything_less() {
        let required = CommandPolicy::new().with_require_confinement(true);
        for level in [
            Confinement::None("this kernel has no Landlock".to_owned()),
            Confinement::Partial,
        ] {
            let refusal = refusal(&required, &level).expect("an unconfined run was allowed");
            assert!(
                refusal.contains("requires confinement") && refusal.contains("confined"),
                "{refusal}"
            );
        }
        assert_eq!(refusal(&required, &Confinement::Full), None);
        let lenient = CommandPolicy::new();
        assert_eq!(refusal(&lenient, &Confinement::None("no".to_owned())), None);
    }

    #[test]
    fn a_read_set_holding_the_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        std::fs::create_dir(&store).unwrap();
        let policy = CommandPolicy::new().with_readable(dir.path());
        let error = policy.readable_paths(&[], Some(&store)).unwrap_err();
        assert!(error.contains("holds the artifact store"), "{error}");
        let beside = CommandPolicy::new().with_readable(store.join("..").join("elsewhere"));
        assert!(beside.readable_paths(&[], Some(&store)).is_ok());
    }
}
