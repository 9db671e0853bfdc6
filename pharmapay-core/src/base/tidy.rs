//! The rules every record's fields share, applied in place: required and optional text, emails
//! (D29), and how the audit log writes amounts and allocations (D1, D22).

use crate::error::FieldErrors;
use crate::text::{self, Lines, TextError};

/// Applies a required single-line rule to `value` in place, recording a failure under `field`.
pub(crate) fn tidy_required(value: &mut String, field: &str, max: usize, errors: &mut FieldErrors) {
    match text::required(value, max) {
        Ok(clean) => *value = clean,
        Err(error) => errors.add(field, error.to_string()),
    }
}

/// Applies an optional-text rule to `value` in place, recording a failure under `field`.
pub(crate) fn tidy_optional(
    value: &mut Option<String>,
    field: &str,
    max: usize,
    lines: Lines,
    errors: &mut FieldErrors,
) {
    match text::optional(value.as_deref(), max, lines) {
        Ok(clean) => *value = clean,
        Err(error) => errors.add(field, error.to_string()),
    }
}

/// Applies the rules of a role's or a policy's `name` (required, one line) and `description`
/// (may be empty, several lines) in place.
pub(crate) fn tidy_name_and_description(name: &mut String, description: &mut String, errors: &mut FieldErrors) {
    tidy_required(name, "name", text::NAME_MAX, errors);
    let mut optional = Some(std::mem::take(description));
    tidy_optional(&mut optional, "description", text::TEXT_MAX, Lines::Multi, errors);
    *description = optional.unwrap_or_default();
}

/// Applies an optional email rule in place (D29): blank becomes `None`.
pub(crate) fn tidy_optional_email(value: &mut Option<String>, field: &str, errors: &mut FieldErrors) {
    let Some(raw) = value.as_deref() else { return };
    if raw.trim().is_empty() {
        *value = None;
        return;
    }
    match text::Email::parse(raw) {
        Ok(email) => *value = Some(email.as_str().to_owned()),
        Err(error) => errors.add(field, error.to_string()),
    }
}

/// Applies the required email rule in place (D29).
pub(crate) fn tidy_email(value: &mut String, field: &str, errors: &mut FieldErrors) {
    match text::Email::parse(value) {
        Ok(email) => *value = email.as_str().to_owned(),
        Err(error) => errors.add(field, error.to_string()),
    }
}

/// A required parse error message, for decoders that find a field absent.
pub fn required_message() -> String {
    TextError::Required.to_string()
}

/// An exact decimal as the audit log writes it: normalised text in a JSON string (D1).
pub(crate) fn decimal_text(value: rust_decimal::Decimal) -> serde_json::Value {
    serde_json::Value::String(value.normalize().to_string())
}
