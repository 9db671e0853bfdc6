//! Exact money (D1).
//!
//! Amounts are [`rust_decimal::Decimal`] values with at most four fractional digits and an
//! absolute value of at most 999,999,999,999.9999. [`Amount`] is an amount a person entered and
//! must be positive; computed figures (paid, pending, totals) are plain `Decimal`s, which may be
//! zero, negative (an overpaid invoice) or, as sums, larger than one amount.
//! Nothing here ever passes through a float.
//!
//! Stores that cannot hold decimals natively keep amounts as *scaled integers*: the number of
//! ten-thousandths, see [`to_scaled`] and [`from_scaled`].

use std::fmt;
use std::str::FromStr;

use rust_decimal::Decimal;

/// Most fractional digits an amount may carry.
pub const MAX_FRACTION_DIGITS: u32 = 4;

/// Ten to the power of [`MAX_FRACTION_DIGITS`]: the scaled-integer unit.
pub const SCALE_FACTOR: i64 = 10_000;

/// The largest amount accepted anywhere: 999,999,999,999.9999.
pub const MAX_AMOUNT: Decimal = Decimal::from_parts(0x6FC0_FFFF, 0x0023_86F2, 0, false, 4);

/// Why a text did not parse as money.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    /// Not a decimal number.
    #[error("must be a decimal number")]
    NotANumber,
    /// More than four fractional digits.
    #[error("must have at most 4 decimal places")]
    TooManyDecimals,
    /// Zero or negative where a positive amount is required.
    #[error("must be greater than zero")]
    NotPositive,
    /// Larger in magnitude than [`MAX_AMOUNT`].
    #[error("must be at most 999999999999.9999")]
    TooLarge,
}

/// Parses the text of a JSON number or query parameter into an exact decimal.
///
/// Accepts plain (`12.50`, `-3`) and exponent (`1.5e2`) notation; rejects more than four
/// fractional digits after normalising trailing zeros away (`1.50000` is fine) and magnitudes
/// above [`MAX_AMOUNT`].
///
/// # Errors
/// [`AmountError`] naming the first rule broken.
pub fn parse_decimal(text: &str) -> Result<Decimal, AmountError> {
    let text = text.trim();
    if text.is_empty() || text.len() > 64 {
        return Err(AmountError::NotANumber);
    }
    let value = match plain_parts(text) {
        Some((integer, _)) => Decimal::from_str_exact(text).map_err(|_| {
            // A well-formed plain number only fails by needing more than 28 digits.
            if integer.trim_start_matches('0').len() > 12 {
                AmountError::TooLarge
            } else {
                AmountError::TooManyDecimals
            }
        })?,
        None if is_exponent_form(text) => Decimal::from_scientific(text).map_err(|_| AmountError::NotANumber)?,
        None => return Err(AmountError::NotANumber),
    };
    check_range(value.normalize())
}

/// Splits `-?digits(.digits)?` into its integer and fraction digits.
fn plain_parts(text: &str) -> Option<(&str, &str)> {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (integer, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    let fraction_ok = !unsigned.contains('.') || !fraction.is_empty();
    (!integer.is_empty() && digits(integer) && digits(fraction) && fraction_ok).then_some((integer, fraction))
}

/// True for `mantissa(e|E)(+|-)?digits` with a plain mantissa.
fn is_exponent_form(text: &str) -> bool {
    let Some((mantissa, exponent)) = text.split_once(['e', 'E']) else { return false };
    let exponent = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
    plain_parts(mantissa).is_some()
        && !exponent.is_empty()
        && exponent.len() <= 3
        && exponent.bytes().all(|b| b.is_ascii_digit())
}

fn check_range(value: Decimal) -> Result<Decimal, AmountError> {
    if value.scale() > MAX_FRACTION_DIGITS {
        return Err(AmountError::TooManyDecimals);
    }
    if value.abs() > MAX_AMOUNT {
        return Err(AmountError::TooLarge);
    }
    Ok(value)
}

/// A positive amount of money with at most four fractional digits (D1).
///
/// The value is kept normalised (no trailing fractional zeros), so equal amounts compare,
/// hash and print the same whichever backend they came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Amount(Decimal);

impl Amount {
    /// Parses a positive amount from text (see [`parse_decimal`]).
    ///
    /// # Errors
    /// [`AmountError`] when the text is not a number, has too many decimals, is not positive or
    /// is too large.
    pub fn parse(text: &str) -> Result<Self, AmountError> {
        Self::try_from(parse_decimal(text)?)
    }

    /// The exact decimal value.
    pub fn get(self) -> Decimal {
        self.0
    }

    /// The amount in ten-thousandths (see [`to_scaled`]).
    pub fn to_scaled(self) -> i64 {
        to_scaled(self.0).expect("an amount is at most MAX_AMOUNT, which fits the scaled range")
    }

    /// Rebuilds an amount from ten-thousandths, as stored by SQL backends.
    ///
    /// # Errors
    /// [`AmountError`] when the stored value is not a valid positive amount.
    pub fn from_scaled(scaled: i64) -> Result<Self, AmountError> {
        Self::try_from(from_scaled(scaled))
    }
}

impl TryFrom<Decimal> for Amount {
    type Error = AmountError;

    fn try_from(value: Decimal) -> Result<Self, AmountError> {
        let value = check_range(value.normalize())?;
        if value <= Decimal::ZERO {
            return Err(AmountError::NotPositive);
        }
        Ok(Amount(value))
    }
}

impl FromStr for Amount {
    type Err = AmountError;

    fn from_str(text: &str) -> Result<Self, AmountError> {
        Amount::parse(text)
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<Amount> for Decimal {
    fn from(amount: Amount) -> Decimal {
        amount.0
    }
}

/// Converts a decimal with at most four fractional digits into ten-thousandths.
///
/// Returns `None` when the value has more digits or does not fit an `i64`.
pub fn to_scaled(value: Decimal) -> Option<i64> {
    let mut scaled = value.normalize();
    if scaled.scale() > MAX_FRACTION_DIGITS {
        return None;
    }
    scaled.rescale(MAX_FRACTION_DIGITS);
    i64::try_from(scaled.mantissa()).ok()
}

/// Converts ten-thousandths back into a normalised decimal.
pub fn from_scaled(scaled: i64) -> Decimal {
    Decimal::new(scaled, MAX_FRACTION_DIGITS).normalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_amount_constant_is_the_documented_bound() {
        assert_eq!(MAX_AMOUNT, Decimal::from_str_exact("999999999999.9999").unwrap());
    }

    #[test]
    fn parses_plain_and_exponent_notation_exactly() {
        let cases = [
            ("12.5", "12.5"),
            ("12.50", "12.5"),
            ("0.0001", "0.0001"),
            ("1.50000", "1.5"),
            ("1e3", "1000"),
            ("1.25E2", "125"),
            ("999999999999.9999", "999999999999.9999"),
        ];
        for (input, expected) in cases {
            let amount = Amount::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(amount.to_string(), expected, "input {input}");
        }
    }

    #[test]
    fn rejects_what_d1_forbids() {
        let cases = [
            ("1.23456", AmountError::TooManyDecimals),
            ("0", AmountError::NotPositive),
            ("0.0000", AmountError::NotPositive),
            ("-1", AmountError::NotPositive),
            ("-0.01", AmountError::NotPositive),
            ("1000000000000", AmountError::TooLarge),
            ("99999999999999999999999999999999", AmountError::TooLarge),
            ("abc", AmountError::NotANumber),
            ("NaN", AmountError::NotANumber),
            ("", AmountError::NotANumber),
            ("1.2.3", AmountError::NotANumber),
            (".5", AmountError::NotANumber),
            ("1e-5", AmountError::TooManyDecimals),
            ("0.000000000000000000000000000001", AmountError::TooManyDecimals),
        ];
        for (input, expected) in cases {
            assert_eq!(Amount::parse(input), Err(expected), "input {input:?}");
        }
    }

    #[test]
    fn scaled_round_trip_is_exact() {
        for text in ["0.0001", "1", "12.34", "999999999999.9999"] {
            let amount = Amount::parse(text).unwrap();
            let back = Amount::from_scaled(amount.to_scaled()).unwrap();
            assert_eq!(amount, back, "text {text}");
        }
        assert_eq!(Amount::parse("12.34").unwrap().to_scaled(), 123_400);
        assert_eq!(from_scaled(-5), Decimal::from_str_exact("-0.0005").unwrap());
        assert_eq!(to_scaled(Decimal::from_str_exact("1.23456").unwrap()), None);
    }

    #[test]
    fn bounds_for_filters_accept_zero_and_negative() {
        assert_eq!(parse_decimal("0").unwrap(), Decimal::ZERO);
        assert_eq!(parse_decimal("-4.5").unwrap(), Decimal::from_str_exact("-4.5").unwrap());
    }
}
