//! Procedural macros of [toolsmith](https://docs.rs/toolsmith): `#[derive(Tool)]` on an
//! arguments struct and `#[tool]` on an async fn.
//!
//! Depend on `toolsmith`, which re-exports both (with its default `macros` feature) and
//! documents them with examples; never on this crate directly. The generated code names only
//! `::toolsmith` (or the path given with `#[tool(crate = "…")]`).

mod ast;
mod attr;
mod check;
mod ctxt;
mod expand;
mod fallback;

use proc_macro::TokenStream;

/// Implements `toolsmith::ToolArgs` for an arguments struct, and adds `fn tool()`, the tool to
/// register. See the `toolsmith` crate's documentation of `Tool`.
#[proc_macro_derive(Tool, attributes(tool))]
pub fn derive_tool(input: TokenStream) -> TokenStream {
    expand::derive(input.into()).into()
}

/// Turns an async fn into a tool: a function of the same name that returns the tool, and an
/// arguments struct made of its parameters. See the `toolsmith` crate's documentation of `tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool_fn(args.into(), item.into()).into()
}
