//! The README's program — the Rust block of its "Use it in your crate" section — written out for
//! the `readme` binary (`src/bin/readme.rs`), which the tests run: the README is its only source.

use std::path::Path;

const SECTION: &str = "## Use it in your crate\n";
const FENCE: &str = "```rust\n";

fn main() {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    println!("cargo::rerun-if-changed={}", readme.display());
    let text = std::fs::read_to_string(&readme)
        .unwrap_or_else(|error| panic!("{} cannot be read: {error}", readme.display()));
    let program = text
        .split_once(SECTION)
        .map(|(_, section)| section.split("\n## ").next().unwrap_or(section))
        .and_then(|section| section.split_once(FENCE))
        .and_then(|(_, block)| block.split_once("```"))
        .map(|(program, _)| program)
        .unwrap_or_else(|| {
            panic!(
                "{} has no ```rust block in its `{}` section: the `readme` binary is built from it",
                readme.display(),
                SECTION.trim_end()
            )
        });
    let out =
        Path::new(&std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("readme.rs");
    std::fs::write(&out, program)
        .unwrap_or_else(|error| panic!("{} cannot be written: {error}", out.display()));
}
