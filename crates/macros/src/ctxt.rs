//! Collects every error of one expansion, so a user with three mistakes sees three errors.

use std::cell::RefCell;
use std::fmt::Display;

use quote::ToTokens;

#[derive(Default)]
pub(crate) struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
    /// Records an error spanned at `tokens`.
    pub(crate) fn error_spanned_by(&self, tokens: impl ToTokens, message: impl Display) {
        self.errors
            .borrow_mut()
            .push(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Records an error syn produced.
    pub(crate) fn syn_error(&self, error: syn::Error) {
        self.errors.borrow_mut().push(error);
    }

    /// All errors, combined into one, or `Ok` if there were none.
    pub(crate) fn check(self) -> syn::Result<()> {
        let mut errors = self.errors.into_inner().into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}
