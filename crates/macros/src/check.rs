//! Rules that span several attributes, or attributes and the item.

use syn::Ident;

use crate::attr::ToolAttrs;
use crate::ctxt::Ctxt;

/// Checks the description, and `paginate` against the argument names. Returns the name to use
/// (explicit, or derived from `default_name`).
pub(crate) fn check(
    cx: &Ctxt,
    attrs: &ToolAttrs,
    default_name: &str,
    item_ident: &Ident,
    has_docs: bool,
    argument_names: &[&Ident],
) -> String {
    // Whether the name is one providers accept is the core crate's rule, checked at compile
    // time by the constant the expansion emits (`expand::name_rule`).
    let name = match &attrs.name {
        Some(name) => name.value.clone(),
        None => default_name.to_owned(),
    };
    if attrs.description.is_none() && !has_docs {
        cx.error_spanned_by(
            item_ident,
            format!(
                "the tool `{name}` needs a description for the model: add a doc comment, or `#[tool(description = \"…\")]`"
            ),
        );
    }
    if let Some(span) = attrs.paginate {
        for arg in argument_names {
            if *arg == "offset" || *arg == "limit" {
                cx.syn_error(syn::Error::new(
                    span,
                    format!(
                        "`paginate` adds the `offset` and `limit` arguments itself, but the arguments already have `{arg}`; remove the field and read `cx.page()`, or drop `paginate`"
                    ),
                ));
                cx.error_spanned_by(arg, format!("`{arg}` declared here"));
            }
        }
    }
    name
}

/// `ReadFile` → `read_file`; `HTTPGet` → `http_get`.
pub(crate) fn snake_case(ident: &str) -> String {
    let chars: Vec<char> = ident.chars().collect();
    let mut out = String::with_capacity(ident.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1);
            let boundary = prev.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit())
                || (prev.is_some_and(char::is_uppercase) && next.is_some_and(|n| n.is_lowercase()));
            if boundary && !out.ends_with('_') {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `read_file` → `ReadFile`.
pub(crate) fn pascal_case(ident: &str) -> String {
    ident
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases() {
        assert_eq!(snake_case("ReadFile"), "read_file");
        assert_eq!(snake_case("HTTPGet"), "http_get");
        assert_eq!(snake_case("Grep2Files"), "grep2_files");
        assert_eq!(snake_case("already_snake"), "already_snake");
        assert_eq!(pascal_case("read_file"), "ReadFile");
        assert_eq!(pascal_case("__grep"), "Grep");
    }
}
