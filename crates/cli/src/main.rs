//! The `toolsmith` command-line tool.
//!
//! No subcommand is implemented yet (`schema`, `call`, `batch`, `serve`, `repair`, `compact` and
//! `demo` are planned). Until then the binary prints what it is and exits with status 2, so no
//! script mistakes it for a working command.

use std::process::ExitCode;

fn main() -> ExitCode {
    let version = toolsmith::VERSION;
    eprintln!(
        "toolsmith {version}: no subcommand is implemented yet.\n\
         Use the library (crate `toolsmith`) directly; see README.md."
    );
    ExitCode::from(2)
}
