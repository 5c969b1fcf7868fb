//! Compile-time contracts of the macros: each file in `tests/ui/` makes one kind of mistake (or,
//! for `three_errors_at_once`, several) and its `.stderr` is the exact error the user sees.
//!
//! After an intended change to an error, regenerate with `TRYBUILD=overwrite cargo test -p
//! toolsmith-macros --test ui` and review the diff of the `.stderr` files.
//!
//! They live in the macros' own package: trybuild builds each case against the package's
//! dependencies and dev-dependencies, and these are few (the core, serde, schemars), where the
//! root package's are every model client the adapters are proved with.

#[test]
fn compile_fail() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
