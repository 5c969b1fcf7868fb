//! The compile errors of `#[derive(Tool)]` and `#[tool]`: each file of `tests/ui/` makes one
//! kind of mistake and its `.stderr` is the exact error a user sees (`tests/ui.rs`). This
//! library holds nothing; the package exists so that the cases are built against the core as
//! a user's crate is (see its manifest).
