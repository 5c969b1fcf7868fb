//! Compile-time contracts of the macros: each file in `tests/ui/` makes one kind of mistake (or,
//! for `three_errors_at_once`, several) and its `.stderr` is the exact error the user sees.
//!
//! After an intended change to an error, regenerate with `TRYBUILD=overwrite cargo test -p
//! toolsmith-macros-ui --test ui` and review the diff of the `.stderr` files.
//!
//! They live in a package of their own: trybuild builds each case against the package's
//! dependencies and dev-dependencies, and these are few (the core, serde, schemars), where the
//! root package's are every model client the adapters are proved with; and in the macros'
//! package the core would be a dev-dependency of a proc-macro, built a second time for the
//! host.

use std::process::Command;

/// Set in the run of this test that builds the cases (see `compile_fail`).
const UNDER_CASE_FLAGS: &str = "TOOLSMITH_UI_UNDER_CASE_FLAGS";

/// The flags trybuild 1.0 gives rustc when it builds the cases, joined as cargo's
/// `CARGO_ENCODED_RUSTFLAGS` joins them.
const CASE_FLAGS: &str =
    "--cfg\x1ftrybuild\x1f--verbose\x1f-A\x1fdead_code\x1f--diagnostic-width=140";

#[test]
fn compile_fail() {
    // trybuild checks the cases' dependencies (the core, tokio, jsonschema, ...) first under one
    // set of rustc flags and then builds the cases under another (it adds
    // `--diagnostic-width=140`), so every dependency was checked twice: 51 s on a fresh build,
    // 34 s with them checked once.
    // Cargo takes `CARGO_ENCODED_RUSTFLAGS` in place of the flags trybuild passes as
    // configuration: set to the cases' flags, both builds run with them and the dependencies
    // are checked once. It is set for a child run of this test (setting the environment of a
    // running test binary is `unsafe`, and forbidden here).
    if std::env::var_os(UNDER_CASE_FLAGS).is_none() {
        let status = Command::new(std::env::current_exe().expect("the test's own path"))
            .args(["compile_fail", "--exact", "--nocapture"])
            .env(UNDER_CASE_FLAGS, "1")
            .env("CARGO_ENCODED_RUSTFLAGS", CASE_FLAGS)
            .status()
            .expect("the test runs itself under the cases' flags");
        assert!(status.success(), "the compile-fail cases failed (above)");
        return;
    }
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
