//! Borrowed views of what the macros are applied to, keeping the original for spans.

use syn::{Attribute, Data, DeriveInput, Fields, FieldsNamed, FnArg, Ident, ItemFn, Pat, Type};

use crate::ctxt::Ctxt;

/// The arguments struct of `#[derive(Tool)]`.
pub(crate) struct ArgsStruct<'a> {
    pub(crate) original: &'a DeriveInput,
    pub(crate) fields: &'a FieldsNamed,
}

impl<'a> ArgsStruct<'a> {
    /// The struct, or `None` (with the errors recorded) when it cannot be a tool's arguments.
    pub(crate) fn from_input(cx: &Ctxt, input: &'a DeriveInput) -> Option<Self> {
        if !input.generics.params.is_empty() || input.generics.where_clause.is_some() {
            cx.error_spanned_by(
                &input.generics,
                "#[derive(Tool)] does not support generic structs: a tool's input schema must be \
                 one concrete type",
            );
        }
        let object = "the model's arguments are always a JSON object";
        match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(fields) => Some(ArgsStruct {
                    original: input,
                    fields,
                }),
                Fields::Unnamed(_) => {
                    cx.error_spanned_by(
                        &input.ident,
                        format!("#[derive(Tool)] needs a struct with named fields, not a tuple struct: {object}"),
                    );
                    None
                }
                Fields::Unit => {
                    cx.error_spanned_by(
                        &input.ident,
                        format!("#[derive(Tool)] needs a struct with named fields; for a tool without arguments write `struct {} {{}}`: {object}", input.ident),
                    );
                    None
                }
            },
            Data::Enum(data) => {
                cx.error_spanned_by(
                    data.enum_token,
                    format!(
                        "#[derive(Tool)] needs a struct with named fields, not an enum: {object}"
                    ),
                );
                None
            }
            Data::Union(data) => {
                cx.error_spanned_by(
                    data.union_token,
                    format!(
                        "#[derive(Tool)] needs a struct with named fields, not a union: {object}"
                    ),
                );
                None
            }
        }
    }

    /// The names of the fields, as written.
    pub(crate) fn field_names(&self) -> impl Iterator<Item = &'a Ident> {
        self.fields
            .named
            .iter()
            .filter_map(|field| field.ident.as_ref())
    }
}

/// A parameter of a `#[tool]` function.
pub(crate) struct Param<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) ty: &'a Type,
    pub(crate) attrs: &'a [Attribute],
    /// A reference parameter: the `&ToolContext`. Arguments are owned (they are deserialized),
    /// so a reference can only be the context; the compiler checks its type.
    pub(crate) is_context: bool,
}

/// The function of `#[tool]`.
pub(crate) struct ToolFn<'a> {
    pub(crate) original: &'a ItemFn,
    pub(crate) params: Vec<Param<'a>>,
}

impl<'a> ToolFn<'a> {
    /// The function's view; its errors are recorded (the view is still returned when the
    /// parameters could be read, so their errors are reported too).
    pub(crate) fn from_item(cx: &Ctxt, item: &'a ItemFn) -> Option<Self> {
        let sig = &item.sig;
        if sig.asyncness.is_none() {
            cx.error_spanned_by(
                sig.fn_token,
                "#[tool] functions must be `async`: write `async fn`",
            );
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            cx.error_spanned_by(
                &sig.generics,
                "#[tool] does not support generic functions: a tool's input schema must be one \
                 concrete type",
            );
        }
        if let Some(constness) = sig.constness {
            cx.error_spanned_by(constness, "#[tool] functions cannot be `const`");
        }
        if let syn::Safety::Unsafe(unsafety) = &sig.safety {
            cx.error_spanned_by(unsafety, "#[tool] functions cannot be `unsafe`");
        }
        if let Some(abi) = &sig.abi {
            cx.error_spanned_by(abi, "#[tool] functions cannot have an ABI");
        }
        if let Some(variadic) = &sig.variadic {
            cx.error_spanned_by(variadic, "#[tool] functions cannot be variadic");
        }
        let mut params = Vec::new();
        let mut ok = true;
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(receiver) => {
                    cx.error_spanned_by(
                        receiver,
                        "#[tool] functions cannot take `self`: a tool is a free function; put \
                         shared state in a struct that implements `Tool`, or derive `Tool` on \
                         an arguments struct",
                    );
                    ok = false;
                }
                FnArg::Typed(typed) => {
                    let Pat::Ident(pat) = &*typed.pat else {
                        cx.error_spanned_by(
                            &typed.pat,
                            "#[tool] parameters must be plain names (they become the argument \
                             names the model sees), not patterns",
                        );
                        ok = false;
                        continue;
                    };
                    params.push(Param {
                        ident: &pat.ident,
                        ty: &typed.ty,
                        attrs: &typed.attrs,
                        is_context: matches!(*typed.ty, Type::Reference(_)),
                    });
                }
            }
        }
        let contexts: Vec<&Param<'_>> = params.iter().filter(|p| p.is_context).collect();
        if let Some(extra) = contexts.get(1) {
            cx.error_spanned_by(
                extra.ty,
                "a #[tool] function takes at most one reference parameter, the `&ToolContext`; \
                 arguments are owned values",
            );
        }
        ok.then_some(ToolFn {
            original: item,
            params,
        })
    }

    /// The parameters that are arguments (all but the context).
    pub(crate) fn arguments(&self) -> impl Iterator<Item = &Param<'a>> {
        self.params.iter().filter(|p| !p.is_context)
    }
}
