//! The `toolsmith` binary end to end, one test binary: every command (`test_cli`), `serve` and
//! `proxy` over stdio and HTTP against rmcp (`test_mcp`, `test_proxy`), the official MCP SDK
//! clients and servers (`test_interop`), one answer per request (`test_answers`), the gateway
//! under pressure, operated, and replicated (`test_gateway`, `test_operate`, `test_replicas`).
//! One binary links the crate and its dependencies once, not once per area; each area is a module
//! (`cargo test -p toolsmith-cli test_proxy::` runs one, and builds the fixture server, an
//! example of this package, with the tests).

#[path = "../common/mod.rs"]
mod common;
#[path = "../fixture/mod.rs"]
mod fixture;

mod test_answers;
mod test_cli;
mod test_gateway;
mod test_interop;
mod test_mcp;
mod test_operate;
mod test_proxy;
mod test_replicas;
