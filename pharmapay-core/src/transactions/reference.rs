//! Payment references (D30): the UPI UTR, bank reference or cheque number a payment was made
//! with.
//!
//! A reference is kept as typed, trimmed, and compared by its key (D48, amending D30): the text
//! in Unicode NFKC, upper-cased, keeping its letters and digits only, so `utr 4123-889/01`,
//! `UTR.412388901`, a fullwidth `ＵＴＲ４１２３８８９０１` and `UTR412388901` with a zero-width
//! space are one payment. Among
//! active payments one key per payment type belongs to one payment; recording it again is the
//! commonest way money is paid twice, so the store refuses it (see [`crate::transactions::holders`]).

use std::fmt;

use unicode_normalization::UnicodeNormalization;

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
    /// Nothing is left once everything but letters and digits is taken out.
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

    /// The key of any text (D48): its NFKC form (fullwidth and other compatibility forms become
    /// their plain letters and digits), upper-cased, keeping only letters and digits (spaces,
    /// punctuation, and invisible characters such as a zero-width space go). Filters match by it
    /// too, so `reference=utr-1` finds `UTR 1`.
    pub fn key_of(text: &str) -> String {
        text.nfkc().flat_map(char::to_uppercase).filter(|c| c.is_alphanumeric()).collect()
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
    fn variants_of_one_reference_share_its_key() {
        // D48: punctuation, case, compatibility forms and invisible characters do not make a
        // second reference.
        for variant in [
            "UTR-123",
            "utr 123",
            "UTR.123",
            "UTR_123",
            "ＵＴＲ１２３",
            "UTR\u{200B}123",
            "U\u{FEFF}TR 1-2-3",
            "utr:123;",
        ] {
            assert_eq!(PaymentReference::parse(variant).unwrap().key(), "UTR123", "{variant:?}");
        }
        assert_ne!(PaymentReference::key_of("UTR1234"), "UTR123", "a different digit is a different reference");
        assert_eq!(PaymentReference::key_of("चेक 12"), "चेक12", "letters of any script count");
        assert_eq!(PaymentReference::parse("._\u{200B}"), Err(ReferenceError::NoKey));
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
