//! `#[tool(...)]` keys and doc comments: parsing, one key at a time.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned as _;
use syn::{Attribute, Expr, ExprLit, Lit, LitStr, Meta};

use crate::ctxt::Ctxt;

/// Every key `#[tool(...)]` accepts: the one list of them. The unknown-key error names them
/// from it, and a test holds the table of keys in the `toolsmith` crate's docs to it.
pub(crate) const KEYS: &[&str] = &[
    "name",
    "description",
    "max_result_chars",
    "max_result_tokens",
    "max_result_lines",
    "paginate",
    "head_ratio",
    "timeout",
    "preserve",
    "defer",
    "terminal_output",
    "over_cap",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "allow_unknown_fields",
    "state",
    "size_hint",
    "crate",
];

/// The keys as an error message lists them.
fn keys() -> String {
    KEYS.iter()
        .map(|key| format!("`{key}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A value and the tokens it came from (for spans of later errors).
pub(crate) struct Spanned<T> {
    pub(crate) value: T,
    pub(crate) span: Span,
}

/// The parsed `#[tool(...)]` keys.
#[derive(Default)]
pub(crate) struct ToolAttrs {
    pub(crate) name: Option<Spanned<String>>,
    pub(crate) description: Option<Spanned<String>>,
    pub(crate) max_result_chars: Option<Spanned<usize>>,
    pub(crate) max_result_tokens: Option<Spanned<usize>>,
    pub(crate) max_result_lines: Option<Spanned<usize>>,
    pub(crate) paginate: Option<Span>,
    pub(crate) head_ratio: Option<Spanned<f64>>,
    pub(crate) timeout_ms: Option<Spanned<u64>>,
    pub(crate) preserve: Option<Span>,
    pub(crate) defer: Option<Span>,
    pub(crate) terminal_output: Option<Span>,
    /// `over_cap = "error"`: a result over its cap is an error, not a cut.
    pub(crate) over_cap_error: Option<Spanned<bool>>,
    pub(crate) read_only: Option<Span>,
    pub(crate) destructive: Option<Span>,
    pub(crate) idempotent: Option<Span>,
    pub(crate) open_world: Option<Span>,
    pub(crate) allow_unknown_fields: Option<Span>,
    pub(crate) size_hint: Option<syn::Path>,
    /// `state = Type`, once per type the tool reads with `cx.state::<Type>()`.
    pub(crate) state: Vec<syn::Type>,
    pub(crate) krate: Option<syn::Path>,
}

impl ToolAttrs {
    /// Parses every `#[tool(...)]` among `attrs` (the derive form).
    pub(crate) fn from_attributes(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut parsed = ToolAttrs::default();
        for attr in attrs.iter().filter(|attr| attr.path().is_ident("tool")) {
            if let Meta::Path(_) = attr.meta {
                continue; // a bare `#[tool]`: nothing to parse
            }
            if let Err(error) = attr.parse_nested_meta(|meta| parsed.parse_key(cx, meta)) {
                cx.syn_error(error);
            }
        }
        parsed
    }

    /// Parses the arguments of `#[tool(...)]` on a function.
    pub(crate) fn from_tokens(cx: &Ctxt, tokens: TokenStream) -> Self {
        let mut parsed = ToolAttrs::default();
        let parser = syn::meta::parser(|meta| parsed.parse_key(cx, meta));
        if let Err(error) = syn::parse::Parser::parse2(parser, tokens) {
            cx.syn_error(error);
        }
        parsed
    }

    /// One key. A key's own error is recorded and parsing goes on with the next key, so every
    /// mistake is reported in one build.
    fn parse_key(&mut self, cx: &Ctxt, meta: ParseNestedMeta<'_>) -> syn::Result<()> {
        let key = meta.path.clone();
        let Some(ident) = key.get_ident().map(ToString::to_string) else {
            cx.error_spanned_by(
                &key,
                format!("unknown tool attribute; expected one of {}", keys()),
            );
            return skip_value(&meta);
        };
        let duplicate = |cx: &Ctxt| {
            cx.error_spanned_by(&key, format!("duplicate tool attribute `{ident}`"));
        };
        match ident.as_str() {
            // #[tool(name = "read_file")]
            "name" => {
                let value = string_value(cx, &meta, "name", "name = \"read_file\"")?;
                if let Some(value) = value {
                    set(cx, &mut self.name, value, duplicate);
                }
            }
            // #[tool(description = "Reads a file.")]
            "description" => {
                let value = string_value(cx, &meta, "description", "description = \"…\"")?;
                if let Some(value) = value {
                    set(cx, &mut self.description, value, duplicate);
                }
            }
            // #[tool(max_result_chars = 20_000)]
            "max_result_chars" => {
                if let Some(value) = positive_int(cx, &meta, "max_result_chars", "20_000")? {
                    set(cx, &mut self.max_result_chars, value, duplicate);
                }
            }
            // #[tool(max_result_tokens = 5_000)]
            "max_result_tokens" => {
                if let Some(value) = positive_int(cx, &meta, "max_result_tokens", "5_000")? {
                    set(cx, &mut self.max_result_tokens, value, duplicate);
                }
            }
            // #[tool(max_result_lines = 200)]
            "max_result_lines" => {
                if let Some(value) = positive_int(cx, &meta, "max_result_lines", "200")? {
                    set(cx, &mut self.max_result_lines, value, duplicate);
                }
            }
            // #[tool(paginate)]
            "paginate" => {
                flag(cx, &meta, "paginate")?;
                set_flag(&mut self.paginate, key.span(), duplicate, cx);
            }
            // #[tool(defer)]
            "defer" => {
                flag(cx, &meta, "defer")?;
                set_flag(&mut self.defer, key.span(), duplicate, cx);
            }
            // #[tool(preserve)]
            "preserve" => {
                flag(cx, &meta, "preserve")?;
                set_flag(&mut self.preserve, key.span(), duplicate, cx);
            }
            // #[tool(terminal_output)]
            "terminal_output" => {
                flag(cx, &meta, "terminal_output")?;
                set_flag(&mut self.terminal_output, key.span(), duplicate, cx);
            }
            // #[tool(read_only)]
            "read_only" => {
                flag(cx, &meta, "read_only")?;
                set_flag(&mut self.read_only, key.span(), duplicate, cx);
            }
            // #[tool(destructive)]
            "destructive" => {
                flag(cx, &meta, "destructive")?;
                set_flag(&mut self.destructive, key.span(), duplicate, cx);
            }
            // #[tool(idempotent)]
            "idempotent" => {
                flag(cx, &meta, "idempotent")?;
                set_flag(&mut self.idempotent, key.span(), duplicate, cx);
            }
            // #[tool(allow_unknown_fields)]
            "allow_unknown_fields" => {
                flag(cx, &meta, "allow_unknown_fields")?;
                set_flag(&mut self.allow_unknown_fields, key.span(), duplicate, cx);
            }
            // #[tool(open_world)]
            "open_world" => {
                flag(cx, &meta, "open_world")?;
                set_flag(&mut self.open_world, key.span(), duplicate, cx);
            }
            // #[tool(over_cap = "error")]
            "over_cap" => {
                if let Some(value) = string_value(cx, &meta, "over_cap", "over_cap = \"error\"")? {
                    let error = match value.value.as_str() {
                        "error" => Some(true),
                        "cut" => Some(false),
                        other => {
                            cx.syn_error(syn::Error::new(
                                value.span,
                                format!(
                                    "`over_cap` is \"cut\" (the default) or \"error\"; got \"{other}\""
                                ),
                            ));
                            None
                        }
                    };
                    if let Some(error) = error {
                        let value = Spanned {
                            value: error,
                            span: value.span,
                        };
                        set(cx, &mut self.over_cap_error, value, duplicate);
                    }
                }
            }
            // #[tool(head_ratio = 0.3)]
            "head_ratio" => {
                if let Some(value) = ratio(cx, &meta)? {
                    set(cx, &mut self.head_ratio, value, duplicate);
                }
            }
            // #[tool(timeout = "30s")]
            "timeout" => {
                if let Some(value) = timeout(cx, &meta)? {
                    set(cx, &mut self.timeout_ms, value, duplicate);
                }
            }
            // #[tool(state = Database)]: the tool needs a `Database` in the registry's state
            "state" => {
                let ty: syn::Type = meta.value()?.parse()?;
                self.state.push(ty);
            }
            // #[tool(size_hint = Self::estimate)] or size_hint = "Self::estimate"
            "size_hint" => {
                let path = path_value(&meta)?;
                if self.size_hint.is_some() {
                    duplicate(cx);
                } else {
                    self.size_hint = Some(path);
                }
            }
            // #[tool(crate = "my_toolsmith")] or crate = my_toolsmith
            "crate" => {
                let path = path_value(&meta)?;
                if self.krate.is_some() {
                    duplicate(cx);
                } else {
                    self.krate = Some(path);
                }
            }
            _ => {
                cx.error_spanned_by(
                    &key,
                    format!(
                        "unknown tool attribute `{ident}`; expected one of {}",
                        keys()
                    ),
                );
                skip_value(&meta)?;
            }
        }
        Ok(())
    }
}

fn set<T>(cx: &Ctxt, slot: &mut Option<T>, value: T, duplicate: impl Fn(&Ctxt)) {
    if slot.is_some() {
        duplicate(cx);
    } else {
        *slot = Some(value);
    }
}

fn set_flag(slot: &mut Option<Span>, span: Span, duplicate: impl Fn(&Ctxt), cx: &Ctxt) {
    if slot.is_some() {
        duplicate(cx);
    } else {
        *slot = Some(span);
    }
}

/// Consumes `= value` after an unknown key, so the keys after it are still parsed.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_value(&inner))?;
    }
    Ok(())
}

/// The expression after `=`, or an error saying the key needs one.
fn value_expr(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    key: &str,
    example: &str,
) -> syn::Result<Option<Expr>> {
    if !meta.input.peek(syn::Token![=]) {
        cx.error_spanned_by(
            &meta.path,
            format!("`{key}` needs a value, like `{example}`"),
        );
        skip_value(meta)?;
        return Ok(None);
    }
    Ok(Some(meta.value()?.parse::<Expr>()?))
}

fn string_value(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    key: &str,
    example: &str,
) -> syn::Result<Option<Spanned<String>>> {
    let Some(expr) = value_expr(cx, meta, key, example)? else {
        return Ok(None);
    };
    match &expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => Ok(Some(Spanned {
            value: lit.value(),
            span: lit.span(),
        })),
        _ => {
            cx.error_spanned_by(
                &expr,
                format!("expected a string for `{key}`, like `{example}`"),
            );
            Ok(None)
        }
    }
}

fn positive_int(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    key: &str,
    example: &str,
) -> syn::Result<Option<Spanned<usize>>> {
    let Some(expr) = value_expr(cx, meta, key, &format!("{key} = {example}"))? else {
        return Ok(None);
    };
    let Expr::Lit(ExprLit {
        lit: Lit::Int(lit), ..
    }) = &expr
    else {
        cx.error_spanned_by(
            &expr,
            format!("expected an integer for `{key}`, like `{key} = {example}`"),
        );
        return Ok(None);
    };
    match lit.base10_parse::<usize>() {
        Ok(0) => {
            cx.error_spanned_by(
                lit,
                format!("`{key} = 0` would leave no room for any result; use at least 1, or leave the key out for no limit"),
            );
            Ok(None)
        }
        Ok(value) => Ok(Some(Spanned {
            value,
            span: lit.span(),
        })),
        Err(error) => {
            cx.error_spanned_by(lit, format!("invalid `{key}`: {error}"));
            Ok(None)
        }
    }
}

fn flag(cx: &Ctxt, meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) || meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            format!("`{key}` takes no value: write `#[tool({key})]`"),
        );
        skip_value(meta)?;
    }
    Ok(())
}

fn ratio(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<Spanned<f64>>> {
    let Some(expr) = value_expr(cx, meta, "head_ratio", "head_ratio = 0.3")? else {
        return Ok(None);
    };
    let value = match &expr {
        Expr::Lit(ExprLit {
            lit: Lit::Float(lit),
            ..
        }) => lit.base10_parse::<f64>().ok(),
        Expr::Lit(ExprLit {
            lit: Lit::Int(lit), ..
        }) => lit.base10_parse::<u8>().ok().map(f64::from),
        _ => None,
    };
    match value {
        Some(value) if (0.0..=1.0).contains(&value) => Ok(Some(Spanned {
            value,
            span: expr_span(&expr),
        })),
        Some(value) => {
            cx.error_spanned_by(
                &expr,
                format!("`head_ratio` must be between 0.0 and 1.0 (the share of a trimmed result kept from the top); got {value}"),
            );
            Ok(None)
        }
        None => {
            cx.error_spanned_by(
                &expr,
                "expected a number between 0.0 and 1.0 for `head_ratio`, like `head_ratio = 0.3`",
            );
            Ok(None)
        }
    }
}

fn timeout(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<Spanned<u64>>> {
    let Some(expr) = value_expr(cx, meta, "timeout", "timeout = \"30s\"")? else {
        return Ok(None);
    };
    let Expr::Lit(ExprLit {
        lit: Lit::Str(lit), ..
    }) = &expr
    else {
        cx.error_spanned_by(
            &expr,
            "expected a duration string for `timeout`, like `timeout = \"30s\"`",
        );
        return Ok(None);
    };
    match parse_duration_ms(&lit.value()) {
        Some(0) => {
            cx.error_spanned_by(
                lit,
                "`timeout` must be more than zero; leave it out to use the registry's default",
            );
            Ok(None)
        }
        Some(ms) => Ok(Some(Spanned {
            value: ms,
            span: lit.span(),
        })),
        None => {
            cx.error_spanned_by(
                lit,
                format!(
                    "invalid duration `{}`: use a number and a unit, like \"500ms\", \"30s\", \"2m\" or \"1h\"",
                    lit.value()
                ),
            );
            Ok(None)
        }
    }
}

/// `"30s"` → 30,000; `"1.5s"` → 1,500; `"250ms"`, `"2m"`, `"1h"`. `None` for anything else.
pub(crate) fn parse_duration_ms(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let scale = match unit.trim() {
        "ms" => 1.0,
        "s" => 1_000.0,
        "m" | "min" => 60_000.0,
        "h" => 3_600_000.0,
        _ => return None,
    };
    let ms = number * scale;
    (ms.is_finite() && ms >= 0.0 && ms.fract() == 0.0 && ms <= u64::MAX as f64).then_some(ms as u64)
}

fn path_value(meta: &ParseNestedMeta<'_>) -> syn::Result<syn::Path> {
    let value = meta.value()?;
    if value.peek(LitStr) {
        value.parse::<LitStr>()?.parse()
    } else {
        value.parse()
    }
}

fn expr_span(expr: &Expr) -> Span {
    syn::spanned::Spanned::span(expr)
}

/// The doc comments of an item, as the text (or `concat!` expression) of a description.
///
/// Every `#[doc]` counts, wherever it stands among other attributes; each line loses one
/// leading space (what `/// ` leaves) and nothing else; leading and trailing blank lines go.
pub(crate) fn docs(attrs: &[Attribute]) -> Option<TokenStream> {
    let mut parts: Vec<DocPart> = Vec::new();
    for attr in attrs {
        let Meta::NameValue(pair) = &attr.meta else {
            continue;
        };
        if !pair.path.is_ident("doc") {
            continue;
        }
        match &pair.value {
            Expr::Lit(ExprLit {
                lit: Lit::Str(lit), ..
            }) => parts.push(DocPart::Text(lit.value())),
            // `#[doc = include_str!("…")]` and other macro docs: kept as expressions.
            other => parts.push(DocPart::Expr(other.to_token_stream())),
        }
    }
    if parts.is_empty() {
        return None;
    }
    if parts.iter().all(|part| matches!(part, DocPart::Text(_))) {
        let lines: Vec<String> = parts
            .into_iter()
            .filter_map(|part| match part {
                DocPart::Text(text) => Some(text),
                DocPart::Expr(_) => None,
            })
            .flat_map(|text| text.split('\n').map(strip_one_space).collect::<Vec<_>>())
            .collect();
        let text = trim_blank_lines(&lines.join("\n"));
        return (!text.is_empty()).then(|| quote!(#text));
    }
    let pieces = parts.into_iter().enumerate().map(|(i, part)| {
        let separator = (i > 0).then(|| quote!("\n",));
        match part {
            DocPart::Text(text) => {
                let text = text
                    .split('\n')
                    .map(strip_one_space)
                    .collect::<Vec<_>>()
                    .join("\n");
                quote!(#separator #text,)
            }
            DocPart::Expr(expr) => quote!(#separator #expr,),
        }
    });
    Some(quote!(::core::concat!(#(#pieces)*)))
}

enum DocPart {
    Text(String),
    Expr(TokenStream),
}

fn strip_one_space(line: &str) -> String {
    line.strip_prefix(' ').unwrap_or(line).to_owned()
}

fn trim_blank_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    match (first, last) {
        (Some(first), Some(last)) => lines[first..=last].join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("30s"), Some(30_000));
        assert_eq!(parse_duration_ms("1.5s"), Some(1_500));
        assert_eq!(parse_duration_ms("250ms"), Some(250));
        assert_eq!(parse_duration_ms("2m"), Some(120_000));
        assert_eq!(parse_duration_ms("1h"), Some(3_600_000));
        assert_eq!(parse_duration_ms("0s"), Some(0));
        assert_eq!(parse_duration_ms("30"), None);
        assert_eq!(parse_duration_ms("s"), None);
        assert_eq!(parse_duration_ms("3 parsecs"), None);
        assert_eq!(parse_duration_ms("0.1ms"), None);
    }

    #[test]
    fn docs_keep_indentation_and_survive_other_attributes() {
        let item: syn::ItemStruct = syn::parse_quote! {
            /// Reads a file.
            #[serde(deny_unknown_fields)]
            ///
            /// Example:
            ///     read_file("a")
            struct S {}
        };
        let docs = docs(&item.attrs).unwrap().to_string();
        assert_eq!(
            docs,
            "\"Reads a file.\\n\\nExample:\\n    read_file(\\\"a\\\")\""
        );
    }

    #[test]
    fn macro_docs_become_concat() {
        let item: syn::ItemStruct = syn::parse_quote! {
            /// Intro.
            #[doc = include_str!("tool.md")]
            struct S {}
        };
        let docs = docs(&item.attrs).unwrap().to_string();
        assert!(docs.starts_with(":: core :: concat !"), "{docs}");
        assert!(docs.contains("include_str !"), "{docs}");
    }
}

#[cfg(test)]
mod keys {
    use std::collections::BTreeSet;

    use super::KEYS;

    /// The keys the table in the `toolsmith` crate's docs explains.
    fn documented() -> BTreeSet<&'static str> {
        include_str!("../../core/src/lib.rs")
            .lines()
            .skip_while(|line| !line.starts_with("//! The keys of `#[tool(...)]`"))
            .skip(1)
            .skip_while(|line| !line.starts_with("//! |"))
            .take_while(|line| line.starts_with("//! |"))
            .filter_map(|row| row.strip_prefix("//! | `"))
            .filter_map(|cell| cell.split([' ', '`']).next())
            .collect()
    }

    /// The keys `parse_key` has an arm for.
    fn parsed() -> BTreeSet<&'static str> {
        include_str!("attr.rs")
            .lines()
            .map(str::trim)
            .filter_map(|line| line.strip_prefix('"')?.strip_suffix("\" => {"))
            .collect()
    }

    #[test]
    fn the_docs_the_parser_and_the_error_name_the_same_keys() {
        let listed: BTreeSet<&str> = KEYS.iter().copied().collect();
        assert_eq!(listed.len(), KEYS.len(), "a key listed twice");
        assert_eq!(
            documented(),
            listed,
            "the docs' table of keys and KEYS disagree"
        );
        assert_eq!(parsed(), listed, "the parser's arms and KEYS disagree");
    }
}
