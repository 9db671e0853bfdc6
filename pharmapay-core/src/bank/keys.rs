//! What a bank line says about the payment it was (D46): the keys a payment's reference may
//! have (D30's key, as D48 tightens it) and whether the bank says it went by UPI.

use crate::transactions::reference::PaymentReference;

/// The shortest run of letters and digits in a narration taken as a reference (D46).
pub const RUN_MIN: usize = 12;
/// The longest such run.
pub const RUN_MAX: usize = 22;
/// The fewest digits such a run holds: a UTR or a bank reference is mostly digits, a word never.
pub const RUN_DIGITS_MIN: usize = 6;

/// The candidate keys of a line (D46), in order, each once: the reference cell's key, then the
/// key of every run of 12 to 22 letters and digits in the narration holding at least 6 digits,
/// in the narration's order. Each is keyed as a payment's reference is (D30, D48), so the line's
/// `UTR 4123-8890-1234` finds a payment recorded as `412388901234`.
pub fn candidate_keys(reference: Option<&str>, narration: Option<&str>) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    let mut push = |key: String| {
        if !key.is_empty() && !keys.contains(&key) {
            keys.push(key);
        }
    };
    if let Some(reference) = reference {
        push(PaymentReference::key_of(reference));
    }
    for run in narration.unwrap_or_default().split(|c: char| !c.is_alphanumeric()) {
        let length = run.chars().count();
        let digits = run.chars().filter(char::is_ascii_digit).count();
        if (RUN_MIN..=RUN_MAX).contains(&length) && digits >= RUN_DIGITS_MIN {
            push(PaymentReference::key_of(run));
        }
    }
    keys
}

/// Whether the narration names UPI as a word of its own (`UPI/412345678901/...`,
/// `UPI-MEDPLUS`), as banks write a UPI payment's narration; `GROUPIE` does not.
pub fn says_upi(narration: Option<&str>) -> bool {
    narration.unwrap_or_default().split(|c: char| !c.is_alphanumeric()).any(|word| word.eq_ignore_ascii_case("upi"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_cell_comes_first_keyed_as_d30_keys_it() {
        assert_eq!(candidate_keys(Some(" utr-4123 8890 1234 "), None), ["UTR412388901234"]);
        assert_eq!(
            candidate_keys(Some("0000412345678901"), Some("UPI/412345678901/PAY")),
            ["0000412345678901", "412345678901"]
        );
    }

    #[test]
    fn narration_runs_of_12_to_22_with_6_digits_are_candidates() {
        // An HDFC-shaped UPI narration: the 12-digit UTR is the run that qualifies.
        let narration = "UPI-MEDPLUS DISTRIB-medplus@okhdfcbank-HDFC0000123-412345678901-PAYMENT";
        assert_eq!(candidate_keys(None, Some(narration)), ["412345678901"]);
        // An SBI-shaped NEFT narration: a 16-character reference with letters.
        assert_eq!(candidate_keys(None, Some("NEFT*HDFC0001234*N123456789012345*APOLLO PHARMA")), ["N123456789012345"]);
        // Too short (11), too long (23), too few digits (5 of 14).
        assert!(candidate_keys(None, Some("12345678901 ABCDEFGHIJKLMNOPQRSTU12 ABCDEFGHI12345")).is_empty());
        // The limits themselves qualify.
        assert_eq!(candidate_keys(None, Some("ABCDEF123456 X")), ["ABCDEF123456"]);
        assert_eq!(candidate_keys(None, Some("abcdefghijklmnop123456")), ["ABCDEFGHIJKLMNOP123456"]);
    }

    #[test]
    fn each_key_is_listed_once_in_order() {
        let keys = candidate_keys(Some("412345678901"), Some("IMPS 412345678901 998877665544 412345678901"));
        assert_eq!(keys, ["412345678901", "998877665544"]);
        assert!(candidate_keys(Some(" - "), Some("")).is_empty());
    }

    #[test]
    fn upi_is_a_word_of_the_narration() {
        assert!(says_upi(Some("UPI/412345678901/Paid to MedPlus")));
        assert!(says_upi(Some("to upi-medplus")));
        assert!(!says_upi(Some("NEFT GROUPIE PHARMA")));
        assert!(!says_upi(None));
    }
}
