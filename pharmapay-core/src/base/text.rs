//! Text inputs: names, free text, emails and passwords, each with a length bound.
//!
//! Every string a request can carry is bounded here, so no input makes the engine or a store
//! hold more than a few kilobytes per field. Single-line fields are trimmed and may not contain
//! control characters; free text may contain line breaks and tabs. Empty optional fields become
//! `None`.

use std::fmt;

/// Longest name (vendor, person, role, policy): 200 characters.
pub const NAME_MAX: usize = 200;
/// Longest short code (phone, licence, invoice number, setting value): 100 characters.
pub const CODE_MAX: usize = 100;
/// Longest free text (address, description, reason): 2,000 characters.
pub const TEXT_MAX: usize = 2_000;
/// Longest search term: 200 characters.
pub const SEARCH_MAX: usize = 200;
/// Longest email address: 254 characters (RFC 5321 path limit).
pub const EMAIL_MAX: usize = 254;
/// Shortest password (D29).
pub const PASSWORD_MIN: usize = 8;
/// Longest password: 1,024 bytes, enough for any passphrase and bounded for hashing.
pub const PASSWORD_MAX_BYTES: usize = 1_024;

/// Why a text field was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    /// Missing or blank where required.
    #[error("is required")]
    Required,
    /// Longer than allowed.
    #[error("must be at most {0} characters")]
    TooLong(usize),
    /// Contains control characters.
    #[error("must not contain control characters")]
    ControlCharacters,
    /// Not shaped like `local@domain` (D29).
    #[error("must be an email address like name@example.com")]
    Email,
    /// Shorter than [`PASSWORD_MIN`].
    #[error("must be at least 8 characters")]
    PasswordTooShort,
    /// Longer than [`PASSWORD_MAX_BYTES`].
    #[error("must be at most 1024 bytes")]
    PasswordTooLong,
}

/// Whether a field may hold line breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lines {
    /// One line: trimmed, no control characters at all.
    Single,
    /// Free text: trimmed, line breaks and tabs allowed.
    Multi,
}

fn clean(value: &str, max: usize, lines: Lines) -> Result<String, TextError> {
    let value = value.trim();
    let allowed = |c: char| lines == Lines::Multi && matches!(c, '\n' | '\r' | '\t');
    if value.chars().any(|c| c.is_control() && !allowed(c)) {
        return Err(TextError::ControlCharacters);
    }
    if value.chars().count() > max {
        return Err(TextError::TooLong(max));
    }
    Ok(value.to_owned())
}

/// A required single-line text of at most `max` characters.
///
/// # Errors
/// [`TextError`] when blank, too long or holding control characters.
pub fn required(value: &str, max: usize) -> Result<String, TextError> {
    let value = clean(value, max, Lines::Single)?;
    if value.is_empty() { Err(TextError::Required) } else { Ok(value) }
}

/// An optional text of at most `max` characters; blank becomes `None`.
///
/// # Errors
/// [`TextError`] when too long or holding forbidden control characters.
pub fn optional(value: Option<&str>, max: usize, lines: Lines) -> Result<Option<String>, TextError> {
    match value {
        None => Ok(None),
        Some(value) => {
            let value = clean(value, max, lines)?;
            Ok(if value.is_empty() { None } else { Some(value) })
        }
    }
}

/// The comparison key of a unique or searchable text: trimmed and lower-cased (D4).
///
/// Lower-casing is Unicode-aware and done here, once, so every store compares the same keys.
pub fn key(value: &str) -> String {
    value.trim().to_lowercase()
}

/// An email address shaped like `local@domain` (D29), kept as written but compared by [`key`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Email(String);

impl Email {
    /// Parses and trims an email address.
    ///
    /// # Errors
    /// [`TextError::Required`], [`TextError::TooLong`] or [`TextError::Email`].
    pub fn parse(value: &str) -> Result<Self, TextError> {
        let value = value.trim();
        if value.is_empty() {
            return Err(TextError::Required);
        }
        if value.chars().count() > EMAIL_MAX {
            return Err(TextError::TooLong(EMAIL_MAX));
        }
        let Some((local, domain)) = value.rsplit_once('@') else {
            return Err(TextError::Email);
        };
        let bad_char = |c: char| c.is_whitespace() || c.is_control() || c == '@';
        let well_formed = !local.is_empty()
            && !domain.is_empty()
            && !local.chars().any(bad_char)
            && !domain.chars().any(bad_char)
            && !domain.starts_with('.')
            && !domain.ends_with('.');
        if well_formed { Ok(Email(value.to_owned())) } else { Err(TextError::Email) }
    }

    /// The address as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The case-insensitive comparison key.
    pub fn key(&self) -> String {
        key(&self.0)
    }
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A password that meets D29; its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    /// Checks the length rules of D29.
    ///
    /// # Errors
    /// [`TextError::PasswordTooShort`] or [`TextError::PasswordTooLong`].
    pub fn parse(value: &str) -> Result<Self, TextError> {
        if value.chars().count() < PASSWORD_MIN {
            return Err(TextError::PasswordTooShort);
        }
        if value.len() > PASSWORD_MAX_BYTES {
            return Err(TextError::PasswordTooLong);
        }
        Ok(Password(value.to_owned()))
    }

    /// The password itself, for hashing.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password([redacted])")
    }
}

/// A search term: trimmed, at most [`SEARCH_MAX`] characters, matched case-insensitively.
///
/// # Errors
/// [`TextError`] when too long or holding control characters.
pub fn search_term(value: &str) -> Result<Option<String>, TextError> {
    Ok(optional(Some(value), SEARCH_MAX, Lines::Single)?.map(|term| key(&term)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_text_is_trimmed_and_bounded() {
        assert_eq!(required("  Acme  ", 10).unwrap(), "Acme");
        assert_eq!(required("   ", 10), Err(TextError::Required));
        assert_eq!(required("abcdefghijk", 10), Err(TextError::TooLong(10)));
        assert_eq!(required("a\u{0}b", 10), Err(TextError::ControlCharacters));
        // Characters, not bytes, are counted.
        assert_eq!(required("दवाई", 4).unwrap(), "दवाई");
    }

    #[test]
    fn optional_text_turns_blank_into_none() {
        assert_eq!(optional(Some("  "), 10, Lines::Single).unwrap(), None);
        assert_eq!(optional(None, 10, Lines::Single).unwrap(), None);
        assert_eq!(optional(Some("a\nb"), 10, Lines::Multi).unwrap().as_deref(), Some("a\nb"));
        assert_eq!(optional(Some("a\nb"), 10, Lines::Single), Err(TextError::ControlCharacters));
    }

    #[test]
    fn emails_need_a_local_part_and_a_domain() {
        assert_eq!(Email::parse(" Admin@Pharmacy.In ").unwrap().as_str(), "Admin@Pharmacy.In");
        assert_eq!(Email::parse("Admin@Pharmacy.In").unwrap().key(), "admin@pharmacy.in");
        for bad in ["plain", "@domain", "local@", "a b@c.d", "a@b@c", "a@.com", "a@com."] {
            assert_eq!(Email::parse(bad), Err(TextError::Email), "input {bad:?}");
        }
        assert_eq!(Email::parse(""), Err(TextError::Required));
    }

    #[test]
    fn passwords_follow_d29_and_never_print() {
        assert_eq!(Password::parse("short"), Err(TextError::PasswordTooShort));
        assert!(Password::parse("long enough").is_ok());
        assert_eq!(Password::parse(&"x".repeat(2000)), Err(TextError::PasswordTooLong));
        assert_eq!(format!("{:?}", Password::parse("s3cret-pass").unwrap()), "Password([redacted])");
    }
}
