//! Procedural macros of [toolsmith](https://docs.rs/toolsmith): `#[derive(Tool)]` on an
//! arguments struct and `#[tool]` on an async fn.
//!
//! Depend on `toolsmith`, which re-exports both (with its default `macros` feature) and
//! documents them with examples; never on this crate directly. The generated code names only
//! `::toolsmith` (or the path given with `#[tool(crate = "…")]`).

#![forbid(unsafe_code)]

mod ast;
mod attr;
mod check;
mod ctxt;
mod expand;
mod fallback;

use proc_macro::TokenStream;

/// Makes an arguments struct a tool.
///
/// Implements `toolsmith::ToolArgs` for the struct and adds `fn tool()`, which returns the tool
/// to register. The struct must have named fields and also derive `serde::Deserialize` and
/// `schemars::JsonSchema`; its doc comment is the description, unless
/// `#[tool(description = "…")]` gives one. The work is an inherent
/// `async fn run(self, cx: &ToolContext) -> Result<T, E>`, with `T: Into<ToolOutput>` and
/// `E: Into<ToolError>`.
///
/// The keys of `#[tool(...)]` are the same in both forms; the `toolsmith` crate's root
/// documentation has their table, with examples (the one list of them is the parser's, and a
/// test holds the table to it).
#[proc_macro_derive(Tool, attributes(tool))]
pub fn derive_tool(input: TokenStream) -> TokenStream {
    expand::derive(input.into()).into()
}

/// Makes an async fn a tool.
///
/// The parameters become the fields of a generated arguments struct (`read_file` →
/// `ReadFileArgs`; doc comments on parameters become descriptions, `Option<T>` parameters are
/// optional); a reference parameter receives the `&ToolContext`. The function moves into
/// `ReadFileArgs::read_file`, and in its place stands `fn read_file()`, which returns the tool to
/// register. Same keys as `#[derive(Tool)]`; the `toolsmith` crate's root documentation
/// explains them, with examples.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool_fn(args.into(), item.into()).into()
}
