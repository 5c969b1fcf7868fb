//! What the bench binaries share: the process's memory, as Linux reports it.

/// A memory figure of this process in MiB, from `/proc/self/status`: `VmHWM:` is the peak
/// resident set, `VmRSS:` the current one. NaN where the file is missing (not Linux).
pub(crate) fn resident_mib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find(|line| line.starts_with(field))
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|kib| kib.parse().ok())
        .unwrap_or(f64::NAN);
    kib / 1024.0
}

/// The peak resident memory of this process so far, in MiB.
#[allow(dead_code)] // not every bench reads the peak this way
pub(crate) fn peak_resident_mib() -> f64 {
    resident_mib("VmHWM:")
}
