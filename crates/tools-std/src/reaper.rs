//! No process a command started outlives its call.
//!
//! A command runs in its own process group, and the group is killed when the call ends. A
//! process can leave the group (`setsid`, `set -m`, `setpgid`, a double fork), and then it is
//! out of the group's reach and, once its parent exits, re-parented away from us. So each
//! command's environment also carries a tag naming its call, `TOOLSMITH_CALL=<tag>`, which every
//! process it starts inherits whatever its group, session or parent. When the call ends — it
//! exits, times out, is cancelled or its future is dropped — every process of this user whose
//! environment holds the tag is killed. The search reads `/proc`, so it finds a process however
//! it was re-parented; it does not rely on parentage, so no process-wide setting (a child
//! subreaper) is needed and no orphan becomes this process's zombie.
//!
//! What it does not catch: a process that deliberately empties its environment (`env -i`) and
//! leaves the group. Confinement by the kernel (namespaces, cgroups) is the defence against a
//! command that tries to escape on purpose.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher as _, Hasher as _};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The environment variable every process of a command carries.
pub(crate) const TAG_VARIABLE: &str = "TOOLSMITH_CALL";

/// The tag of one call's processes: unique on this machine while this process lives.
#[derive(Debug)]
pub(crate) struct CallTag {
    value: String,
}

impl CallTag {
    pub(crate) fn new() -> Self {
        static PROCESS: OnceLock<u64> = OnceLock::new();
        static CALLS: AtomicU64 = AtomicU64::new(0);
        // A random number per process, so a later process reusing this pid never shares tags.
        let process = *PROCESS.get_or_init(|| RandomState::new().build_hasher().finish());
        let call = CALLS.fetch_add(1, Ordering::Relaxed);
        CallTag {
            value: format!("{}-{process:016x}-{call}", std::process::id()),
        }
    }

    /// The tag's value, for the command's environment.
    pub(crate) fn value(&self) -> &str {
        &self.value
    }

    /// Kills every process that carries this tag but `spare` (the command's own shell, which
    /// its owner reaps); returns how many were signalled.
    pub(crate) fn kill_all(&self, spare: Option<u32>) -> usize {
        #[cfg(target_os = "linux")]
        {
            let mut entry = Vec::with_capacity(TAG_VARIABLE.len() + self.value.len() + 2);
            entry.extend_from_slice(TAG_VARIABLE.as_bytes());
            entry.push(b'=');
            entry.extend_from_slice(self.value.as_bytes());
            entry.push(0);
            let me = std::process::id();
            let mut killed = std::collections::HashSet::new();
            // A tagged process may fork between the listing and the kill: go round until a
            // pass finds nobody new (a killed process is listed until it is reaped).
            for _ in 0..8 {
                let found: Vec<u32> = tagged_processes(&entry)
                    .filter(|&pid| pid != me && Some(pid) != spare && !killed.contains(&pid))
                    .collect();
                if found.is_empty() {
                    break;
                }
                for pid in found {
                    let Ok(raw) = i32::try_from(pid) else {
                        continue;
                    };
                    if kill(Pid::from_raw(raw), Signal::SIGKILL).is_ok() {
                        killed.insert(pid);
                    }
                }
            }
            killed.len()
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = spare;
            0
        }
    }
}

/// The processes whose environment holds `entry` (`NAME=value\0`), as far as this user may read
/// environments. Zombies have none and are not listed: they are dead already.
#[cfg(target_os = "linux")]
fn tagged_processes(entry: &[u8]) -> impl Iterator<Item = u32> + '_ {
    let finder = memchr::memmem::Finder::new(entry);
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|dir| dir.file_name().to_str()?.parse::<u32>().ok())
        .filter(move |pid| {
            let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
                return false;
            };
            // The entry starts the environment or follows another entry's NUL.
            environ.starts_with(entry)
                || finder
                    .find_iter(&environ)
                    .any(|at| at > 0 && environ[at - 1] == 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_differ_per_call() {
        let (a, b) = (CallTag::new(), CallTag::new());
        assert_ne!(a.value(), b.value());
        assert!(a.value().starts_with(&format!("{}-", std::process::id())));
    }
}
