//! The records pharmapay keeps, the inputs that create and change them, and the filters that
//! list them. One file per resource; each input has a `validate` that applies the text rules of
//! [`crate::text`] and the cross-field rules of the decisions, so stores only ever see clean data.

pub mod aging;
pub mod audit;
pub mod bank_statement;
pub mod credit;
pub mod gstin;
pub mod invoice;
pub mod licence;
pub mod policy;
pub mod reference;
pub mod role;
pub mod setting;
pub mod statement;
pub mod transaction;
pub mod user;
pub mod vendor;
pub mod vendor_payment;
pub mod webhook;

pub use audit::{AuditEntry, AuditFilter, AuditQuery, NewAuditEntry};
pub use credit::{
    CreditApplication, CreditDecision, CreditFilter, CreditKind, CreditQuery, CreditStatus, NewCreditApplication,
    NewVendorCredit, VendorCredit,
};
pub use invoice::{
    Invoice, InvoiceBrief, InvoiceDetail, InvoiceFilter, InvoiceQuery, InvoiceSortKey, InvoiceStatus, NewInvoice,
};
pub use policy::{NewPolicy, Policy};
pub use reference::PaymentReference;
pub use role::{NewRole, Role};
pub use setting::Setting;
pub use transaction::{
    NewTransaction, Transaction, TransactionFilter, TransactionQuery, TransactionSortKey, TransactionType,
};
pub use user::{NewUser, PasswordChange, Profile, ProfileUpdate, User, UserUpdate};
pub use vendor::{NewVendor, Vendor, VendorBrief, VendorFilter, VendorQuery, VendorSortKey, VendorTotals, VendorType};
pub use vendor_payment::{NewVendorPayment, VendorPayment};

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

/// Allocations over invoices as the audit log writes them (D22, D31, D44): `[{invoiceId, amount}]`,
/// or `null` when the split was left to the rule.
pub(crate) fn allocations_json(
    allocations: Option<&[crate::rules::allocation::RequestedAllocation]>,
) -> serde_json::Value {
    let Some(allocations) = allocations else { return serde_json::Value::Null };
    allocations
        .iter()
        .map(|allocation| {
            serde_json::json!({ "invoiceId": allocation.invoice_id.get(), "amount": decimal_text(allocation.amount.get()) })
        })
        .collect()
}

/// An exact decimal as the audit log writes it: normalised text in a JSON string (D1).
pub(crate) fn decimal_text(value: rust_decimal::Decimal) -> serde_json::Value {
    serde_json::Value::String(value.normalize().to_string())
}
