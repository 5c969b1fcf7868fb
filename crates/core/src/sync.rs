//! Locks that outlive a panic: a task that panicked while holding a lock leaves data that is
//! still whole (every critical section here writes it in one step), so the next holder takes
//! it as it is instead of panicking in turn.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, taking it over from a holder that panicked.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    #[test]
    fn a_lock_whose_holder_panicked_is_taken_over_whole() {
        let mutex = Arc::new(Mutex::new(vec![1]));
        let held = Arc::clone(&mutex);
        let panicked = std::thread::spawn(move || {
            let mut guard = held.lock().unwrap();
            guard.push(2);
            panic!("a holder that panics");
        })
        .join();
        assert!(panicked.is_err());
        assert!(mutex.is_poisoned());
        assert_eq!(*super::lock(&mutex), [1, 2]);
    }

    /// Every lock of a standard mutex in the crate's own code goes through the owner: a new
    /// `.lock().unwrap()` would turn one panicking task into a panic in every task after it.
    #[test]
    fn every_lock_of_the_crate_goes_through_the_owner() {
        let mut bypasses = Vec::new();
        for (path, code) in crate::own_code("sync.rs") {
            // Read without whitespace, so a chain split over lines is still seen.
            let code: String = code.chars().filter(|c| !c.is_whitespace()).collect();
            for bypass in [
                "PoisonError",
                ".lock().unwrap(",
                ".lock().expect(",
                ".lock()?",
            ] {
                if code.contains(bypass) {
                    bypasses.push(format!("{}: {bypass}", path.display()));
                }
            }
        }
        assert!(
            bypasses.is_empty(),
            "locks taken besides crate::sync::lock: {bypasses:#?}"
        );
    }
}
