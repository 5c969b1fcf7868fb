//! What is emitted beside a compile error, so one mistake gives one error: the items the user's
//! other code refers to (`Args::tool()`, the tool's function) exist, with bodies never run.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{DeriveInput, ItemFn};

use crate::expand::{args_ident, path_string, without_param_attrs};

/// `impl ToolArgs` and `tool()` for a derive input that had errors.
pub(crate) fn derive(input: &DeriveInput, krate: &TokenStream) -> TokenStream {
    if !input.generics.params.is_empty() {
        // An impl without the generics would only add errors.
        return TokenStream::new();
    }
    let ident = &input.ident;
    let vis = &input.vis;
    let stub = stub_methods(krate);
    quote! {
        impl #krate::tool::ToolArgs for #ident {
            #stub
        }

        impl #ident {
            #vis fn tool() -> #krate::tool::ArgsTool<Self> {
                #krate::tool::ArgsTool::new()
            }
        }
    }
}

/// For a function that had errors: an empty arguments struct, the function returning the tool,
/// and the user's function kept as an associated function (so its body is still checked and its
/// imports still used). A method (`self`) stays where it is, as it was.
pub(crate) fn tool_fn(item: &ItemFn, name: &str, krate: &TokenStream) -> TokenStream {
    let original = without_param_attrs(item);
    if item
        .sig
        .inputs
        .iter()
        .any(|input| matches!(input, syn::FnArg::Receiver(_)))
    {
        return quote!(#original);
    }
    let vis = &item.vis;
    let fn_ident = &item.sig.ident;
    let args_ident = args_ident(fn_ident);
    let serde_crate = format!("{}::__private::serde", path_string(krate));
    let schemars_crate = format!("{}::__private::schemars", path_string(krate));
    let stub = stub_methods(krate);
    quote! {
        #[derive(#krate::__private::serde::Deserialize, #krate::__private::schemars::JsonSchema)]
        #[serde(crate = #serde_crate)]
        #[schemars(crate = #schemars_crate)]
        #[doc(hidden)]
        #vis struct #args_ident {}

        #[allow(dead_code, clippy::all)]
        impl #args_ident {
            #original
        }

        impl #krate::tool::ToolArgs for #args_ident {
            #stub
        }

        #[doc = #name]
        #vis fn #fn_ident() -> #krate::tool::ArgsTool<#args_ident> {
            #krate::tool::ArgsTool::new()
        }
    }
}

fn stub_methods(krate: &TokenStream) -> TokenStream {
    quote! {
        fn tool_name() -> #krate::__private::Cow<'static, str> {
            ::core::unreachable!()
        }

        fn tool_description() -> #krate::__private::Cow<'static, str> {
            ::core::unreachable!()
        }

        fn run_tool(
            self,
            _: &#krate::tool::ToolContext,
        ) -> #krate::tool::BoxFuture<'_, #krate::__private::Result<#krate::tool::ToolOutput, #krate::tool::ToolError>> {
            ::core::unreachable!()
        }
    }
}
