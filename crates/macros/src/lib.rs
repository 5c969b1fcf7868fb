//! Procedural macros of [toolsmith](https://docs.rs/toolsmith).
//!
//! This crate will hold `#[derive(Tool)]` and `#[tool]` on async fns. It does not export any
//! macro yet: until it does, implement `toolsmith::Tool` by hand (see the core crate's docs).
//! Depend on `toolsmith`, which re-exports whatever this crate provides; never on this crate
//! directly.
