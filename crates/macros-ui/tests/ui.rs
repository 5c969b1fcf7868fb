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

#[test]
fn compile_fail() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
