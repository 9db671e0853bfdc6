//! GSTIN, the 15-character Goods and Services Tax identification number of a vendor (D37).
//!
//! A GSTIN reads: a two-digit state code, the holder's PAN (five letters, four digits, a
//! letter), an entity character, the letter `Z`, and a check character. The check character is
//! the GSTIN mod-36 checksum of the first fourteen: over the alphabet `0-9A-Z`, each character's
//! value is multiplied by 1 and 2 alternately from the left, each product is split into its
//! quotient and remainder by 36 and both are added up, and the check character is the one whose
//! value brings that sum to a multiple of 36. A typo in any single character changes it, so a
//! mistyped number is caught at entry instead of on a tax return.
//!
//! This module only parses; uniqueness among active vendors is the store's (D4, D5).

use std::fmt;

/// The characters of the checksum, in value order.
const ALPHABET: &[u8; 36] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// The length of every GSTIN.
pub const GSTIN_LEN: usize = 15;

/// A valid GSTIN, upper-cased.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Gstin(String);

/// Why text is not a GSTIN; the message says what a person should fix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GstinError {
    /// Not 15 characters after trimming.
    #[error("must be 15 characters")]
    Length,
    /// The first two characters are not a state code.
    #[error("must start with a state code from 01 to 38, or 97")]
    StateCode,
    /// Characters 3 to 12 are not a PAN.
    #[error("characters 3 to 12 must be a PAN: five letters, four digits and a letter")]
    Pan,
    /// Character 13 is not 1-9 or A-Z.
    #[error("character 13 must be a digit from 1 to 9 or a letter")]
    Entity,
    /// Character 14 is not `Z`.
    #[error("character 14 must be Z")]
    Fourteenth,
    /// The last character is not the checksum of the others.
    #[error("the check character does not match; the number may be mistyped")]
    CheckCharacter,
}

impl Gstin {
    /// Parses a GSTIN: trims, upper-cases and checks every part and the check character.
    ///
    /// # Errors
    /// The first rule the text breaks, in reading order.
    pub fn parse(text: &str) -> Result<Self, GstinError> {
        let upper = text.trim().to_ascii_uppercase();
        let bytes = upper.as_bytes();
        if bytes.len() != GSTIN_LEN || !upper.is_ascii() {
            return Err(GstinError::Length);
        }
        let state = &upper[0..2];
        let state_ok = state.bytes().all(|b| b.is_ascii_digit())
            && matches!(state.parse::<u8>(), Ok(code) if (1..=38).contains(&code) || code == 97);
        if !state_ok {
            return Err(GstinError::StateCode);
        }
        let pan = &bytes[2..12];
        let pan_ok = pan[..5].iter().all(u8::is_ascii_uppercase)
            && pan[5..9].iter().all(u8::is_ascii_digit)
            && pan[9].is_ascii_uppercase();
        if !pan_ok {
            return Err(GstinError::Pan);
        }
        if !(matches!(bytes[12], b'1'..=b'9') || bytes[12].is_ascii_uppercase()) {
            return Err(GstinError::Entity);
        }
        if bytes[13] != b'Z' {
            return Err(GstinError::Fourteenth);
        }
        if check_character(&bytes[..14]) != Some(bytes[14]) {
            return Err(GstinError::CheckCharacter);
        }
        Ok(Gstin(upper))
    }

    /// The GSTIN as stored and shown: 15 upper-case characters.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The two-digit state code.
    pub fn state_code(&self) -> u8 {
        self.0[0..2].parse().expect("a parsed GSTIN starts with two digits")
    }
}

impl fmt::Display for Gstin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The GSTIN check character of the first fourteen characters, or `None` when one of them is
/// outside `0-9A-Z`.
pub fn check_character(first: &[u8]) -> Option<u8> {
    let mut sum = 0u32;
    for (index, byte) in first.iter().enumerate() {
        let value = ALPHABET.iter().position(|c| c == byte)? as u32;
        let product = value * if index % 2 == 0 { 1 } else { 2 };
        sum += product / 36 + product % 36;
    }
    Some(ALPHABET[((36 - sum % 36) % 36) as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GSTINs of registered businesses as they are printed on their invoices.
    const REAL: [&str; 5] =
        ["27AAPFU0939F1ZV", "07AAGFF2194N1Z1", "29AAGCR4375J1ZU", "24AAACC1206D1ZM", "09AAACH7409R1ZZ"];

    #[test]
    fn real_gstins_parse() {
        for text in REAL {
            assert_eq!(Gstin::parse(text).map(|g| g.to_string()), Ok(text.to_owned()), "{text}");
        }
    }

    #[test]
    fn input_is_trimmed_and_upper_cased() {
        let gstin = Gstin::parse("  27aapfu0939f1zv ").unwrap();
        assert_eq!(gstin.as_str(), "27AAPFU0939F1ZV");
        assert_eq!(gstin.state_code(), 27);
    }

    #[test]
    fn every_single_character_typo_is_caught() {
        for text in REAL {
            for position in 0..GSTIN_LEN {
                for replacement in ALPHABET {
                    let mut typo = text.as_bytes().to_vec();
                    if typo[position] == *replacement {
                        continue;
                    }
                    typo[position] = *replacement;
                    let typo = String::from_utf8(typo).unwrap();
                    assert!(Gstin::parse(&typo).is_err(), "{typo} (from {text}) must be refused");
                }
            }
        }
    }

    #[test]
    fn each_part_is_named_when_wrong() {
        let cases = [
            ("27AAPFU0939F1Z", GstinError::Length),
            ("27AAPFU0939F1ZVX", GstinError::Length),
            ("27AAPFU0939F1ZΩ", GstinError::Length),
            ("00AAPFU0939F1ZV", GstinError::StateCode),
            ("39AAPFU0939F1ZV", GstinError::StateCode),
            ("AAAAPFU0939F1ZV", GstinError::StateCode),
            ("271APFU0939F1ZV", GstinError::Pan),
            ("27AAPFUA939F1ZV", GstinError::Pan),
            ("27AAPFU093911ZV", GstinError::Pan),
            ("27AAPFU0939F0ZV", GstinError::Entity),
            ("27AAPFU0939F1YV", GstinError::Fourteenth),
            ("27AAPFU0939F1ZW", GstinError::CheckCharacter),
        ];
        for (text, expected) in cases {
            assert_eq!(Gstin::parse(text), Err(expected), "{text}");
        }
    }

    #[test]
    fn state_code_97_is_accepted() {
        let first = b"97AAPFU0939F1Z";
        let check = check_character(first).unwrap();
        let text = format!("{}{}", std::str::from_utf8(first).unwrap(), check as char);
        assert!(Gstin::parse(&text).is_ok(), "{text}");
    }
}
