//! What every family of cases shares: list parameters, queries, the check of a field error, token
//! claims and idempotency requests.

use crate::error::Error;
use crate::idempotency::{IdempotencyKey, IdempotencyRequest};
use crate::invoices::InvoiceQuery;
use crate::transactions::TransactionQuery;
use crate::vendors::VendorQuery;
use serde_json::Value;

pub(super) fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

pub(super) fn invoice_query(pairs: &[(&str, &str)]) -> InvoiceQuery {
    InvoiceQuery::from_params(&params(pairs)).unwrap_or_else(|errors| panic!("query {pairs:?}: {errors}"))
}

pub(super) fn vendor_query(pairs: &[(&str, &str)]) -> VendorQuery {
    VendorQuery::from_params(&params(pairs)).unwrap_or_else(|errors| panic!("query {pairs:?}: {errors}"))
}

pub(super) fn transaction_query(pairs: &[(&str, &str)]) -> TransactionQuery {
    TransactionQuery::from_params(&params(pairs)).unwrap_or_else(|errors| panic!("query {pairs:?}: {errors}"))
}

pub(super) fn field_error<T: std::fmt::Debug>(result: Result<T, Error>, field: &str, label: &str) {
    match result {
        Err(Error::Validation(errors)) => {
            assert!(errors.contains(field), "{label}: expected an error on {field}, got {errors}")
        }
        other => panic!("{label}: expected a validation error on {field}, got {other:?}"),
    }
}

/// A token's claims as written, read without checking the signature.
pub(super) fn decode_claims(token: &str) -> Value {
    jsonwebtoken::dangerous::insecure_decode_claims(token).expect("a JWT whose payload is JSON")
}

pub(super) fn idem(key: &str, fingerprint: &str) -> IdempotencyRequest {
    IdempotencyRequest { key: IdempotencyKey::parse(key).unwrap(), fingerprint: fingerprint.into() }
}
