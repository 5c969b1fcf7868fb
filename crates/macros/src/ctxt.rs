//! Collects every error of one expansion, so a user with three mistakes sees three errors.

use std::cell::RefCell;
use std::fmt::Display;
use std::thread;

use quote::ToTokens;

/// The errors of one expansion. [`check`](Ctxt::check) must be called before it is dropped: an
/// error recorded and never reported would let a broken item through, so dropping an unchecked
/// context panics (as serde's does).
pub(crate) struct Ctxt {
    /// `None` once checked.
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Default for Ctxt {
    fn default() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }
}

impl Ctxt {
    /// Records an error spanned at `tokens`.
    pub(crate) fn error_spanned_by(&self, tokens: impl ToTokens, message: impl Display) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Records an error syn produced.
    pub(crate) fn syn_error(&self, error: syn::Error) {
        // `check` consumes the context, so the errors are always still there to push to.
        if let Some(errors) = self.errors.borrow_mut().as_mut() {
            errors.push(error);
        }
    }

    /// All errors, combined into one, or `Ok` if there were none.
    pub(crate) fn check(self) -> syn::Result<()> {
        let errors = self.errors.borrow_mut().take().unwrap_or_default();
        let mut errors = errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !thread::panicking() && self.errors.borrow().is_some() {
            panic!("a context of errors was dropped without being checked");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_is_reported_together() {
        let cx = Ctxt::default();
        cx.error_spanned_by(quote::quote!(a), "first");
        cx.error_spanned_by(quote::quote!(b), "second");
        let error = cx.check().unwrap_err();
        assert_eq!(error.into_iter().count(), 2);
        assert!(Ctxt::default().check().is_ok());
    }

    #[test]
    #[should_panic(expected = "dropped without being checked")]
    fn an_unchecked_context_is_a_bug_caught_at_once() {
        let cx = Ctxt::default();
        cx.error_spanned_by(quote::quote!(a), "lost");
    }
}
