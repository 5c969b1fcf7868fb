//! The processes a call (or an MCP server) starts, and how all of them are stopped.
//!
//! A command runs in its own process group, and the group is killed when its owner is done
//! with it. A process can leave the group (`setsid`, `set -m`, `setpgid`, a double fork), and
//! then it is out of the group's reach and, once its parent exits, re-parented away from us. So
//! each command's environment also carries a tag, `TOOLSMITH_CALL=<tag>`, which every process it
//! starts inherits whatever its group, session or parent. When the owner is done — the call
//! exits, times out, is cancelled or its future is dropped; the server's session ends — every
//! process of this user whose environment holds the tag is killed. The search reads `/proc`, so
//! it finds a process however it was re-parented; it does not rely on parentage, so no
//! process-wide setting (a child subreaper) is needed and no orphan becomes this process's
//! zombie.
//!
//! What it does not catch: a process that deliberately empties its environment (`env -i`) and
//! leaves the group. Confinement by the kernel (namespaces, cgroups) is the defence against a
//! program that tries to escape on purpose. Outside Linux only the group is killed.
//!
//! ```no_run
//! use toolsmith::process::ProcessTree;
//!
//! # async fn run() -> std::io::Result<()> {
//! let mut tree = ProcessTree::new();
//! let mut command = tokio::process::Command::new("sh");
//! command.arg("-c").arg("setsid sleep 600 & echo started");
//! tree.prepare(&mut command);
//! let child = command.spawn()?;
//! tree.started(&child);
//! // … dropping the tree kills the shell's group and the `sleep` that left it.
//! drop(tree);
//! # Ok(()) }
//! ```

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher as _, Hasher as _};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// The environment variable every process of a tree carries.
pub const TAG_VARIABLE: &str = "TOOLSMITH_CALL";

fn withheld() -> &'static std::sync::Mutex<Vec<std::ffi::OsString>> {
    static WITHHELD: OnceLock<std::sync::Mutex<Vec<std::ffi::OsString>>> = OnceLock::new();
    WITHHELD.get_or_init(Default::default)
}

/// Keeps the variable `name` of this process's environment out of every process a tree starts
/// from now on: a secret this process holds (a gateway's token) never reaches a tool's command
/// or a server it runs, where a model could read it in a result.
pub fn withhold_variable(name: impl Into<std::ffi::OsString>) {
    let name = name.into();
    let mut withheld = crate::sync::lock(withheld());
    if !withheld.contains(&name) {
        withheld.push(name);
    }
}

/// The processes started for one owner: their process group and every process carrying the
/// owner's tag. Killed, all of them, by [`kill`](Self::kill) or when dropped (unless
/// [disarmed](Self::disarm)).
#[derive(Debug)]
pub struct ProcessTree {
    tag: String,
    /// The group's id once its leader started.
    group: Option<i32>,
    /// The leader, which its `Child` reaps: the tag sweep never signals it, so its exit status
    /// stays its own.
    leader: Option<u32>,
    armed: bool,
}

impl Default for ProcessTree {
    fn default() -> Self {
        Self::new()
    }
}

impl ProcessTree {
    /// A tree with a tag of its own: unique on this machine while this process lives.
    pub fn new() -> Self {
        static PROCESS: OnceLock<u64> = OnceLock::new();
        static TREES: AtomicU64 = AtomicU64::new(0);
        // A random number per process, so a later process reusing this pid never shares tags.
        let process = *PROCESS.get_or_init(|| RandomState::new().build_hasher().finish());
        let tree = TREES.fetch_add(1, Ordering::Relaxed);
        ProcessTree {
            tag: format!("{}-{process:016x}-{tree}", std::process::id()),
            group: None,
            leader: None,
            armed: true,
        }
    }

    /// The tag's value (what [`TAG_VARIABLE`] is set to in the tree's processes).
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// Makes `command` start the tree: in a process group of its own, with the tag in its
    /// environment and without the variables [withheld](withhold_variable).
    pub fn prepare(&self, command: &mut tokio::process::Command) {
        command.env(TAG_VARIABLE, &self.tag).process_group(0);
        for name in crate::sync::lock(withheld()).iter() {
            command.env_remove(name);
        }
    }

    /// Records the tree's leader, the child `prepare`d command started: its group is the tree's.
    pub fn started(&mut self, child: &tokio::process::Child) {
        self.leader = child.id();
        self.group = child.id().and_then(|pid| i32::try_from(pid).ok());
    }

    /// Kills the group and every tagged process but the leader (which its `Child` reaps), and
    /// returns once each process it killed is dead (for at most 127 ms).
    pub fn kill(&self) {
        // ESRCH (the group is already empty) is the common, harmless case: nothing to wait for.
        let signalled = self
            .group
            .filter(|&group| killpg(Pid::from_raw(group), Signal::SIGKILL).is_ok());
        let killed = kill_tagged(&self.tag, self.leader);
        await_deaths(&killed, signalled);
    }

    /// Leaves the processes alone when the tree is dropped (they were killed or ended already).
    pub fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for ProcessTree {
    fn drop(&mut self) {
        if self.armed {
            self.kill();
        }
    }
}

/// Kills every process that carries `tag` but `spare`; returns those signalled.
fn kill_tagged(tag: &str, spare: Option<u32>) -> std::collections::HashSet<u32> {
    #[cfg(target_os = "linux")]
    {
        let mut entry = Vec::with_capacity(TAG_VARIABLE.len() + tag.len() + 2);
        entry.extend_from_slice(TAG_VARIABLE.as_bytes());
        entry.push(b'=');
        entry.extend_from_slice(tag.as_bytes());
        entry.push(0);
        let me = std::process::id();
        let mut killed = std::collections::HashSet::new();
        let (mut rounds, mut looked_again) = (0, 0);
        // A tagged process may fork between the listing and the kill: go round (at most 8
        // rounds of killing) until a pass finds nobody new (a killed process is listed until it
        // is reaped). A process in the middle of an exec reads an empty environment for a
        // moment (its new image has none yet): while a pass finds such a process and nobody to
        // kill, it looks again, after 1, 2, 4 and 8 ms, without using up a round. While a
        // process of this user that really has no environment lives (`env -i`), every kill that
        // finds nobody to kill pays those 15 ms.
        while rounds < 8 {
            let mut found = Vec::new();
            let mut unsure = false;
            for (pid, seen) in processes(&entry) {
                if pid == me || Some(pid) == spare || killed.contains(&pid) {
                    continue;
                }
                match seen {
                    Seen::Tagged => found.push(pid),
                    Seen::Unsure => unsure = true,
                    Seen::Other => {}
                }
            }
            if found.is_empty() {
                if !unsure || looked_again == 4 {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(1 << looked_again));
                looked_again += 1;
                continue;
            }
            for pid in found {
                let Ok(raw) = i32::try_from(pid) else {
                    continue;
                };
                if kill(Pid::from_raw(raw), Signal::SIGKILL).is_ok() {
                    killed.insert(pid);
                }
            }
            rounds += 1;
        }
        killed
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (tag, spare, kill);
        std::collections::HashSet::new()
    }
}

/// Waits until each of `pids`, and every process of `group`, is dead (a zombie, or gone), for at
/// most 127 ms in all: a process dies of SIGKILL only when the scheduler next runs it, and on a
/// loaded machine that was after the kill returned (a test saw a killed `sleep` still sleeping).
/// The group is looked at whole because the tag sweep cannot see every process the group kill
/// caught: one in the middle of exiting has let its memory go (its environment reads empty) but
/// is not a zombie yet. No process outlives its kill but one the kernel holds longer, in an
/// uninterruptible wait.
#[cfg(target_os = "linux")]
fn await_deaths(pids: &std::collections::HashSet<u32>, group: Option<i32>) {
    for wait in 0..8 {
        if pids.iter().all(|&pid| !alive(pid)) && group.is_none_or(|group| !group_alive(group)) {
            return;
        }
        if wait < 7 {
            std::thread::sleep(std::time::Duration::from_millis(1 << wait));
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn await_deaths(_pids: &std::collections::HashSet<u32>, _group: Option<i32>) {}

/// Whether a process of process group `group` has not died yet.
#[cfg(target_os = "linux")]
fn group_alive(group: i32) -> bool {
    let group = group.to_string();
    pids().filter_map(stat_fields).any(|fields| {
        // The state, the parent, the group.
        let mut fields = fields.split(' ');
        let state = fields.next();
        fields.nth(1) == Some(group.as_str()) && !dead_state(state)
    })
}

/// Whether process `pid` has not died yet: it is listed, and not as a zombie.
#[cfg(target_os = "linux")]
fn alive(pid: u32) -> bool {
    stat_fields(pid).is_some_and(|fields| !dead_state(fields.split(' ').next()))
}

/// The fields of `/proc/<pid>/stat` after the command's name (which may hold spaces and
/// parentheses): the state, then the parent, group, session, terminal, its group, the flags, …
#[cfg(target_os = "linux")]
fn stat_fields(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, fields) = stat.rsplit_once(") ")?;
    Some(fields.to_owned())
}

/// Whether a state read from `/proc/<pid>/stat` is a dead process's (a zombie's, or one being
/// reaped); no state reads as dead.
#[cfg(target_os = "linux")]
fn dead_state(state: Option<&str>) -> bool {
    matches!(state, None | Some("Z" | "X" | "x"))
}

/// What a process's environment says of it.
#[cfg(target_os = "linux")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// It holds the entry.
    Tagged,
    /// It reads empty, and the process is neither a zombie nor a kernel thread: it may be in the
    /// middle of an exec.
    Unsure,
    /// It does not hold the entry, or cannot be read (another user's process, or gone).
    Other,
}

/// Every process this user may see, and whether its environment holds `entry` (`NAME=value\0`).
#[cfg(target_os = "linux")]
fn processes(entry: &[u8]) -> impl Iterator<Item = (u32, Seen)> + '_ {
    let finder = memchr::memmem::Finder::new(entry);
    pids().map(move |pid| (pid, seen(pid, entry, &finder)))
}

/// The id of every process listed in `/proc`.
#[cfg(target_os = "linux")]
fn pids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|dir| dir.file_name().to_str()?.parse::<u32>().ok())
}

/// Whether process `pid`'s environment holds `entry`.
#[cfg(target_os = "linux")]
fn seen(pid: u32, entry: &[u8], finder: &memchr::memmem::Finder<'_>) -> Seen {
    let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return Seen::Other;
    };
    if environ.is_empty() {
        return if alive_with_memory(pid) {
            Seen::Unsure
        } else {
            Seen::Other
        };
    }
    // The entry starts the environment or follows another entry's NUL.
    let tagged = environ.starts_with(entry)
        || finder
            .find_iter(&environ)
            .any(|at| at > 0 && environ[at - 1] == 0);
    if tagged { Seen::Tagged } else { Seen::Other }
}

/// Whether process `pid` is neither a zombie (dead already) nor a kernel thread (never has an
/// environment), by its `/proc/<pid>/stat`.
#[cfg(target_os = "linux")]
fn alive_with_memory(pid: u32) -> bool {
    /// The kernel's flag for its own threads (`PF_KTHREAD`).
    const KERNEL_THREAD: u64 = 0x0020_0000;
    let Some(fields) = stat_fields(pid) else {
        return false;
    };
    let mut fields = fields.split_ascii_whitespace();
    let state = fields.next();
    let flags = fields.nth(5).and_then(|flags| flags.parse::<u64>().ok());
    !dead_state(state) && flags.is_some_and(|flags| flags & KERNEL_THREAD == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The children, killed and reaped however the test ends.
    struct Reaped(Vec<std::process::Child>);

    impl Drop for Reaped {
        fn drop(&mut self) {
            for child in &mut self.0 {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn every_process_killed_is_dead_when_the_kill_returns() {
        let mut tree = ProcessTree::new();
        let children = Reaped(
            (0..4)
                .map(|_| {
                    std::process::Command::new("sleep")
                        .arg("30")
                        .env(TAG_VARIABLE, tree.tag())
                        .spawn()
                        .expect("sleep runs")
                })
                .collect(),
        );
        tree.kill();
        tree.disarm();
        for child in &children.0 {
            assert!(
                !alive(child.id()),
                "{} still runs after the kill returned",
                child.id()
            );
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn every_process_of_the_group_is_dead_when_the_kill_returns() {
        use std::os::unix::process::CommandExt as _;

        // Untagged: only the group kill reaches them, as it reaches a process the tag sweep
        // cannot read (one in the middle of exiting).
        let sleep = |group: i32| {
            std::process::Command::new("sleep")
                .arg("30")
                .process_group(group)
                .spawn()
                .expect("sleep runs")
        };
        let leader = sleep(0);
        let group = i32::try_from(leader.id()).expect("a pid");
        let mut children = vec![leader];
        children.extend((0..3).map(|_| sleep(group)));
        let children = Reaped(children);
        let mut tree = ProcessTree::new();
        tree.group = Some(group);
        tree.kill();
        tree.disarm();
        for child in &children.0 {
            assert!(
                !alive(child.id()),
                "{} of the group still runs after the kill returned",
                child.id()
            );
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_environment_that_reads_empty_is_looked_at_again_unless_the_process_is_dead() {
        let entry = b"TOOLSMITH_TEST_ENTRY=seen\0";
        let finder = memchr::memmem::Finder::new(entry);
        let tagged = std::process::Command::new("sleep")
            .arg("30")
            .env("TOOLSMITH_TEST_ENTRY", "seen")
            .spawn()
            .expect("sleep runs");
        // A process started with no environment at all reads as one in the middle of an exec.
        let bare = std::process::Command::new("sleep")
            .arg("30")
            .env_clear()
            .spawn()
            .expect("sleep runs");
        let dead = std::process::Command::new("true")
            .spawn()
            .expect("true runs");
        let (tagged_pid, bare_pid, dead_pid) = (tagged.id(), bare.id(), dead.id());
        let _children = Reaped(vec![tagged, bare, dead]);
        // Not reaped yet: a zombie, whose environment reads empty too.
        while std::fs::read_to_string(format!("/proc/{dead_pid}/stat"))
            .map(|stat| !stat.contains(") Z "))
            .unwrap_or(false)
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(seen(tagged_pid, entry, &finder), Seen::Tagged);
        assert_eq!(seen(bare_pid, entry, &finder), Seen::Unsure);
        assert_eq!(seen(dead_pid, entry, &finder), Seen::Other);
        assert_eq!(seen(std::process::id(), entry, &finder), Seen::Other);
    }

    #[test]
    fn tags_differ_per_tree() {
        let (mut a, mut b) = (ProcessTree::new(), ProcessTree::new());
        assert_ne!(a.tag(), b.tag());
        assert!(a.tag().starts_with(&format!("{}-", std::process::id())));
        a.disarm();
        b.disarm();
    }
}
