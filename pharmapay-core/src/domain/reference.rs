//! Payment references (D30): the UPI UTR, bank reference or cheque number a payment was made
//! with.
//!
//! A reference is kept as typed, trimmed, and compared by its key: upper-cased with spaces,
//! hyphens and slashes removed, so `utr 4123-889/01` and `UTR412388901` are one payment. Among
//! active payments one key per payment type belongs to one payment; recording it again is the
//! commonest way money is paid twice, so the store refuses it (see [`crate::rules::references`]).

use std::fmt;

use crate::text;

/// Most characters of a reference, after trimming.
pub const REFERENCE_MAX: usize = 64;

/// A payment reference as typed (trimmed) and its matching key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PaymentReference {
    text: String,
    key: String,
}

/// Why text is not a reference.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReferenceError {
    /// Empty, too long, or holding control characters.
    #[error("{0}")]
    Text(#[from] text::TextError),
    /// Nothing is left once spaces, hyphens and slashes are taken out.
    #[error("must hold a letter or a digit")]
    NoKey,
}

impl PaymentReference {
    /// Trims `text` and checks it is 1 to 64 characters on one line with something to match by.
    ///
    /// # Errors
    /// [`ReferenceError`] saying what is wrong.
    pub fn parse(text: &str) -> Result<Self, ReferenceError> {
        // One line, no control characters, 1 to 64 characters once trimmed.
        let text = text::required(text, REFERENCE_MAX)?;
        let key = Self::key_of(&text);
        if key.is_empty() {
            return Err(ReferenceError::NoKey);
        }
        Ok(Self { text, key })
    }

    /// The reference as typed, trimmed.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The key references are matched by.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The key of any text: upper-cased, with spaces, hyphens and slashes removed. Filters match
    /// by it too, so `reference=utr-1` finds `UTR 1`.
    pub fn key_of(text: &str) -> String {
        text.chars().filter(|c| !matches!(c, ' ' | '-' | '/')).flat_map(char::to_uppercase).collect()
    }
}

impl fmt::Display for PaymentReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_keep_their_text_and_match_by_key() {
        let typed = PaymentReference::parse("  utr 4123-889/01 ").unwrap();
        assert_eq!(typed.as_str(), "utr 4123-889/01");
        assert_eq!(typed.key(), "UTR412388901");
        assert_eq!(PaymentReference::parse("UTR412388901").unwrap().key(), typed.key());
        assert_eq!(PaymentReference::key_of("chq/000 12"), "CHQ00012");
    }

    #[test]
    fn bounds_and_odd_text_are_refused() {
        assert!(PaymentReference::parse(&"9".repeat(REFERENCE_MAX)).is_ok());
        for bad in ["", "   ", &"9".repeat(REFERENCE_MAX + 1), "a\0b", "ref\none", "- / -"] {
            assert!(PaymentReference::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(PaymentReference::parse("-/-"), Err(ReferenceError::NoKey));
    }
}
