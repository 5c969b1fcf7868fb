//! What the bench binaries share: the process's memory, as Linux reports it.

/// A memory figure of this process in MiB, from `/proc/self/status`: `VmHWM:` is the peak
/// resident set, `VmRSS:` the current one. NaN where the file is missing (not Linux).
pub(crate) fn resident_mib(field: &str) -> f64 {
    toolsmith_workspace::status_kib(None, field).map_or(f64::NAN, |kib| kib as f64 / 1024.0)
}

/// The peak resident memory of this process so far, in MiB.
#[allow(dead_code)] // not every bench reads the peak this way
pub(crate) fn peak_resident_mib() -> f64 {
    resident_mib("VmHWM:")
}
