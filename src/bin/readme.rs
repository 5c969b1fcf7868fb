//! The README's program ("Use it in your crate"), as the README gives it: the build script
//! writes it out of README.md. The tests run it (`test_readme`), and check that the README's
//! `Cargo.toml` lines compile it in a crate of its own.

include!(concat!(env!("OUT_DIR"), "/readme.rs"));
