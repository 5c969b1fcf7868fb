//! The standard tools through a registry, one test binary: reading files (`test_read_file`),
//! listing and searching (`test_list_grep`), writing and editing (`test_write_edit`), running
//! commands (`test_run_command`), and the sandbox against the attacks a prompt-injected model
//! or a hostile workspace may try (`test_sandbox`). `cargo test -p toolsmith-std --test suite
//! test_sandbox::` runs one area.

mod common;

mod test_list_grep;
mod test_read_file;
mod test_run_command;
mod test_sandbox;
mod test_write_edit;
