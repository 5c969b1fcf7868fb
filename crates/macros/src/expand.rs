//! The generated code. It names only absolute paths into the core crate (by default
//! `::toolsmith`, or the `crate = "…"` path), never the user's imports.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::{DeriveInput, Ident, ItemFn};

use crate::ast::{ArgsStruct, ToolFn};
use crate::attr::{self, ToolAttrs};
use crate::check::{self, pascal_case, snake_case};
use crate::ctxt::Ctxt;
use crate::fallback;

/// `#[derive(Tool)]`.
pub(crate) fn derive(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    let cx = Ctxt::default();
    let attrs = ToolAttrs::from_attributes(&cx, &input.attrs);
    let args = ArgsStruct::from_input(&cx, &input);
    let docs = attr::docs(&input.attrs);
    let names: Vec<&Ident> = args
        .as_ref()
        .map(|args| args.field_names().collect())
        .unwrap_or_default();
    let default_name = snake_case(&input.ident.to_string());
    let name = check::check(
        &cx,
        &attrs,
        &default_name,
        &input.ident,
        docs.is_some(),
        &names,
    );
    let krate = krate(&attrs);
    match (cx.check(), args) {
        (Ok(()), Some(args)) => expand_derive(&args, &attrs, &name, docs, &krate),
        (Err(error), _) => {
            let mut out = error.to_compile_error();
            out.extend(fallback::derive(&input, &krate));
            out
        }
        (Ok(()), None) => fallback::derive(&input, &krate),
    }
}

/// `#[tool]` on an async fn.
pub(crate) fn tool_fn(args: TokenStream, item: TokenStream) -> TokenStream {
    let item: ItemFn = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(error) => {
            let mut out = syn::Error::new(
                error.span(),
                "#[tool] goes on an `async fn`, or use `#[derive(Tool)]` on an arguments struct",
            )
            .to_compile_error();
            out.extend(item);
            return out;
        }
    };
    let cx = Ctxt::default();
    let attrs = ToolAttrs::from_tokens(&cx, args);
    let view = ToolFn::from_item(&cx, &item);
    let docs = attr::docs(&item.attrs);
    let names: Vec<&Ident> = view
        .as_ref()
        .map(|view| view.arguments().map(|p| p.ident).collect())
        .unwrap_or_default();
    let ident = &item.sig.ident;
    let name = check::check(
        &cx,
        &attrs,
        &ident.to_string(),
        ident,
        docs.is_some(),
        &names,
    );
    let krate = krate(&attrs);
    match (cx.check(), view) {
        (Ok(()), Some(view)) => expand_fn(&view, &attrs, &name, docs, &krate),
        (Err(error), _) => {
            let mut out = error.to_compile_error();
            out.extend(fallback::tool_fn(&item, &name, &krate));
            out
        }
        (Ok(()), None) => fallback::tool_fn(&item, &name, &krate),
    }
}

/// The path of the core crate.
pub(crate) fn krate(attrs: &ToolAttrs) -> TokenStream {
    match &attrs.krate {
        Some(path) => path.to_token_stream(),
        None => quote!(::toolsmith),
    }
}

fn expand_derive(
    args: &ArgsStruct<'_>,
    attrs: &ToolAttrs,
    name: &str,
    docs: Option<TokenStream>,
    krate: &TokenStream,
) -> TokenStream {
    let input = args.original;
    let ident = &input.ident;
    let vis = &input.vis;
    let methods = tool_args_methods(attrs, name, docs, krate);
    let name_rule = name_rule(attrs, name, ident, krate);
    // Spanned at the struct, so a missing or mistyped `run` is reported there.
    let run = quote_spanned!(ident.span()=>
        #krate::__private::IntoToolResult::into_tool_result(#ident::run(self, __toolsmith_cx).await)
    );
    quote! {
        #name_rule

        #[automatically_derived]
        impl #krate::tool::ToolArgs for #ident {
            #methods

            fn run_tool(
                self,
                __toolsmith_cx: &#krate::tool::ToolContext,
            ) -> #krate::tool::BoxFuture<'_, #krate::__private::Result<#krate::tool::ToolOutput, #krate::tool::ToolError>> {
                #krate::__private::Box::pin(async move { #run })
            }
        }

        #[automatically_derived]
        impl #ident {
            /// The tool these arguments define, to register with `Registry::builder().tool(…)`.
            #vis fn tool() -> #krate::tool::ArgsTool<Self> {
                #krate::tool::ArgsTool::new()
            }
        }
    }
}

fn expand_fn(
    view: &ToolFn<'_>,
    attrs: &ToolAttrs,
    name: &str,
    docs: Option<TokenStream>,
    krate: &TokenStream,
) -> TokenStream {
    let item = view.original;
    let vis = &item.vis;
    let fn_ident = &item.sig.ident;
    let args_ident = args_ident(fn_ident);
    let fn_docs: Vec<&syn::Attribute> = item
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .collect();
    let serde_crate = format!("{}::__private::serde", path_string(krate));
    let schemars_crate = format!("{}::__private::schemars", path_string(krate));

    let fields = view.arguments().map(|param| {
        let attrs = param.attrs;
        let ident = param.ident;
        let ty = param.ty;
        quote!(#(#attrs)* #vis #ident: #ty)
    });
    let bindings: Vec<&Ident> = view.arguments().map(|param| param.ident).collect();
    let call_args = view.params.iter().map(|param| {
        if param.is_context {
            quote_spanned!(param.ty.span()=> __toolsmith_cx)
        } else {
            param.ident.to_token_stream()
        }
    });

    // The function itself moves, unchanged but for its parameters' attributes (they went to
    // the fields), into an associated function of the arguments struct; in its place stands a
    // function of the same name that returns the tool.
    let inner = without_param_attrs(item);
    let output_span = match &item.sig.output {
        syn::ReturnType::Type(_, ty) => ty.span(),
        syn::ReturnType::Default => fn_ident.span(),
    };
    let run = quote_spanned!(output_span=> Self::#fn_ident(#(#call_args),*).await);
    let run =
        quote_spanned!(output_span=> #krate::__private::IntoToolResult::into_tool_result(#run));
    let methods = tool_args_methods(attrs, name, docs, krate);
    // A function that returns `Json<T>` states its result's shape: `T`'s schema.
    // (When `T` has a schema: a `T` that is only `Serialize` states none, and still compiles.)
    let output_schema = json_output(&item.sig.output).map(|shape| {
        quote! {
            fn tool_output_schema()
                -> #krate::__private::Option<#krate::__private::serde_json::Value> {
                #[allow(unused_imports)]
                use #krate::__private::{NoSchemaOfShape as _, SchemaOfShape as _};
                (&#krate::__private::OutputShape::<#shape>::new()).output_schema()
            }
        }
    });
    let name_rule = name_rule(attrs, name, fn_ident, krate);
    quote! {
        #name_rule

        #(#fn_docs)*
        #[derive(#krate::__private::serde::Deserialize, #krate::__private::schemars::JsonSchema)]
        #[serde(crate = #serde_crate)]
        #[schemars(crate = #schemars_crate)]
        #[allow(missing_docs)]
        #vis struct #args_ident {
            #(#fields),*
        }

        impl #args_ident {
            #[allow(clippy::too_many_arguments)]
            #inner
        }

        #[automatically_derived]
        impl #krate::tool::ToolArgs for #args_ident {
            #methods
            #output_schema

            fn run_tool(
                self,
                __toolsmith_cx: &#krate::tool::ToolContext,
            ) -> #krate::tool::BoxFuture<'_, #krate::__private::Result<#krate::tool::ToolOutput, #krate::tool::ToolError>> {
                #krate::__private::Box::pin(async move {
                    let Self { #(#bindings),* } = self;
                    #run
                })
            }
        }

        #(#fn_docs)*
        ///
        /// Returns the tool, to register with `Registry::builder().tool(…)`.
        #vis fn #fn_ident() -> #krate::tool::ArgsTool<#args_ident> {
            #krate::tool::ArgsTool::new()
        }
    }
}

/// The `T` of a function that returns `Result<Json<T>, E>` (`Json` by any path,
/// `toolsmith::Json<T>` too): read from the signature as written.
fn json_output(output: &syn::ReturnType) -> Option<&syn::Type> {
    let syn::ReturnType::Type(_, returned) = output else {
        return None;
    };
    type_argument(type_argument(returned, "Result")?, "Json")
}

/// The first type argument of `ty` when its path ends in `name` (`Result<T, E>` → `T`).
fn type_argument<'a>(ty: &'a syn::Type, name: &str) -> Option<&'a syn::Type> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    let syn::PathArguments::AngleBracketed(arguments) = &last.arguments else {
        return None;
    };
    if last.ident != name {
        return None;
    }
    arguments.args.iter().find_map(|argument| match argument {
        syn::GenericArgument::Type(ty) => Some(ty),
        _ => None,
    })
}

/// The function with its parameters' attributes (doc comments, serde attributes) removed:
/// they belong to the arguments struct's fields.
pub(crate) fn without_param_attrs(item: &ItemFn) -> ItemFn {
    let mut item = item.clone();
    for input in &mut item.sig.inputs {
        if let syn::FnArg::Typed(typed) = input {
            typed.attrs.clear();
        }
    }
    item
}

/// `read_file` → `ReadFileArgs`, spanned at the function's name.
pub(crate) fn args_ident(fn_ident: &Ident) -> Ident {
    format_ident!(
        "{}Args",
        pascal_case(&fn_ident.to_string()),
        span = fn_ident.span()
    )
}

/// A constant that fails the build, at the name's tokens, when the tool's name is not one every
/// provider accepts: the rule is the core crate's (`is_valid_tool_name`, a `const fn`), so the
/// macros hold no copy of it.
fn name_rule(
    attrs: &ToolAttrs,
    name: &str,
    item_ident: &Ident,
    krate: &TokenStream,
) -> TokenStream {
    let (span, message) = match &attrs.name {
        Some(explicit) => (
            explicit.span,
            format!(
                "invalid tool name `{name}`: names must match ^[a-zA-Z0-9_-]{{1,64}}$ (letters, digits, `_` and `-`)"
            ),
        ),
        None => (
            item_ident.span(),
            format!(
                "the tool name `{name}` (from `{item_ident}`) is not valid: names must match ^[a-zA-Z0-9_-]{{1,64}}$; set one with `#[tool(name = \"…\")]`"
            ),
        ),
    };
    quote_spanned! {span=>
        const _: () = if !#krate::__private::is_valid_tool_name(#name) {
            ::core::panic!("{}", #message)
        };
    }
}

/// The methods of `ToolArgs` other than `run_tool`.
fn tool_args_methods(
    attrs: &ToolAttrs,
    name: &str,
    docs: Option<TokenStream>,
    krate: &TokenStream,
) -> TokenStream {
    let description = match &attrs.description {
        Some(description) => description.value.to_token_stream(),
        None => docs.unwrap_or_else(|| quote!("")),
    };
    let limits = limits(attrs, krate);
    let annotations = annotations(attrs, krate);
    // Unknown argument fields are refused unless the tool allows them: a model's typo in a
    // field name is then an error it can fix, not a default silently used.
    let schema = if attrs.allow_unknown_fields.is_some() {
        quote!(#krate::tool::schema_of::<Self>())
    } else {
        quote!(#krate::tool::close_schema(#krate::tool::schema_of::<Self>()))
    };
    let needs = (!attrs.state.is_empty()).then(|| {
        let types = &attrs.state;
        quote! {
            fn tool_needs() -> ::std::vec::Vec<#krate::tool::StateNeed> {
                ::std::vec![#(#krate::tool::StateNeed::of_type::<#types>()),*]
            }
        }
    });
    let size_hint = attrs.size_hint.as_ref().map(|path| {
        quote! {
            fn size_hint<'__toolsmith>(
                &'__toolsmith self,
                __toolsmith_cx: &'__toolsmith #krate::tool::ToolContext,
            ) -> #krate::__private::Option<#krate::tool::BoxFuture<
                '__toolsmith,
                #krate::__private::Result<#krate::__private::Option<#krate::tool::SizeHint>, #krate::tool::ToolError>,
            >> {
                #krate::__private::Option::Some(#krate::__private::Box::pin(async move {
                    #path(self, __toolsmith_cx).await
                }))
            }
        }
    });
    quote! {
        fn tool_name() -> #krate::__private::Cow<'static, str> {
            #krate::__private::Cow::Borrowed(#name)
        }

        fn tool_description() -> #krate::__private::Cow<'static, str> {
            #krate::__private::Cow::Borrowed(#description)
        }

        fn tool_limits() -> #krate::tool::ToolLimits {
            #limits
        }

        fn tool_annotations() -> #krate::tool::ToolAnnotations {
            #annotations
        }

        fn tool_input_schema() -> #krate::__private::serde_json::Value {
            // Computed once per type.
            static SCHEMA: #krate::__private::OnceLock<#krate::__private::serde_json::Value> =
                #krate::__private::OnceLock::new();
            ::core::clone::Clone::clone(SCHEMA.get_or_init(|| #schema))
        }

        #needs

        #size_hint
    }
}

/// `read_only`, `destructive`, `idempotent` and `open_world` as a `ToolAnnotations` chain.
fn annotations(attrs: &ToolAttrs, krate: &TokenStream) -> TokenStream {
    let mut chain = quote!(#krate::tool::ToolAnnotations::new());
    for (set, method) in [
        (&attrs.read_only, quote!(with_read_only)),
        (&attrs.destructive, quote!(with_destructive)),
        (&attrs.idempotent, quote!(with_idempotent)),
        (&attrs.open_world, quote!(with_open_world)),
    ] {
        if set.is_some() {
            chain.extend(quote!(.#method(true)));
        }
    }
    chain
}

fn limits(attrs: &ToolAttrs, krate: &TokenStream) -> TokenStream {
    let mut chain = quote!(#krate::tool::ToolLimits::default());
    let some = quote!(#krate::__private::Option::Some);
    if let Some(chars) = &attrs.max_result_chars {
        let chars = chars.value;
        chain.extend(quote!(.with_max_result_chars(#some(#chars))));
    }
    if let Some(tokens) = &attrs.max_result_tokens {
        let tokens = tokens.value;
        chain.extend(quote!(.with_max_result_tokens(#some(#tokens))));
    }
    // Paginate first: it makes the head ratio 1.0 unless one is given, which comes after.
    if attrs.paginate.is_some() {
        chain.extend(quote!(.with_paginate(true)));
    }
    if let Some(ms) = &attrs.timeout_ms {
        let ms = ms.value;
        chain.extend(quote!(.with_timeout(#some(#krate::__private::Duration::from_millis(#ms)))));
    }
    if attrs.defer.is_some() {
        chain.extend(quote!(.with_defer(true)));
    }
    if attrs.preserve.is_some() {
        chain.extend(quote!(.with_preserve(true)));
    }
    if attrs
        .over_cap_error
        .as_ref()
        .is_some_and(|error| error.value)
    {
        chain.extend(quote!(.with_over_cap(#krate::tool::OverCap::Error)));
    }
    // How a cut keeps what it keeps: the trim style's own setters, over the style so far.
    let mut trim = TokenStream::new();
    if let Some(lines) = &attrs.max_result_lines {
        let lines = lines.value;
        trim.extend(quote!(.with_max_lines(#some(#lines))));
    }
    if let Some(ratio) = &attrs.head_ratio {
        let ratio = ratio.value;
        trim.extend(quote!(.with_head_ratio(#ratio)));
    }
    if attrs.terminal_output.is_some() {
        trim.extend(quote!(.with_render(#krate::trim::Render::Always)));
    }
    if trim.is_empty() {
        return chain;
    }
    quote!({
        let limits = #chain;
        let trim = limits.trim #trim;
        limits.with_trim(trim)
    })
}

/// A path as the string serde's and schemars' `crate = "…"` attributes want.
pub(crate) fn path_string(path: &TokenStream) -> String {
    path.to_string().replace(' ', "")
}

trait SpanOf {
    fn span(&self) -> proc_macro2::Span;
}

impl<T: ToTokens> SpanOf for T {
    fn span(&self) -> proc_macro2::Span {
        syn::spanned::Spanned::span(self)
    }
}
