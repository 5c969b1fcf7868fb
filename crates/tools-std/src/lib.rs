//! Standard tools for toolsmith agents.
//!
//! This crate will hold `read_file`, `write_file`, `edit_file`, `list_directory`, `glob`, `grep`
//! and `run_command`, each held to toolsmith's budget contract. It provides no tool yet; the
//! per-tool limits it will use are documented in the project's `docs/design.md`.
