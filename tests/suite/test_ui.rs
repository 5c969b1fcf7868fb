//! Compile-time contracts of the macros: each file in `tests/ui/` makes one kind of mistake (or,
//! for `three_errors_at_once`, several) and its `.stderr` is the exact error the user sees.
//!
//! After an intended change to an error, regenerate with `TRYBUILD=overwrite cargo test --test
//! test_ui` and review the diff of the `.stderr` files.

#[test]
fn compile_fail() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
