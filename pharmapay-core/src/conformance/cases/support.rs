//! What every family of cases shares: list parameters, queries, the check of a field error, token
//! claims and idempotency requests.

use crate::access::role::NewRole;
use crate::access::user::{NewUser, PasswordChange, UserUpdate};
use crate::access::{Access, Principal, Requirement};
use crate::conformance::{Fixture, amount, created, ts};
use crate::engine::Session;
use crate::error::Error;
use crate::idempotency::{IdempotencyKey, IdempotencyRequest};
use crate::ids::{InvoiceId, RoleId, TransactionId, VendorId};
use crate::invoices::{InvoiceQuery, NewInvoice};
use crate::reports::audit::{AuditEntry, AuditQuery};
use crate::store::{Store, UniqueKey};
use crate::text::Password;
use crate::transactions::reference::PaymentReference;
use crate::transactions::{NewTransaction, TransactionQuery, TransactionType};
use crate::vendor_payments::rules::RequestedAllocation;
use crate::vendor_payments::{NewVendorPayment, VendorPayment};
use crate::vendors::gstin::Gstin;
use crate::vendors::{NewVendor, Vendor, VendorQuery, VendorType};
use jiff::civil::Date;
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

pub(super) fn reference(text: &str) -> Option<PaymentReference> {
    Some(PaymentReference::parse(text).expect("a valid reference"))
}

/// The id a 409 on a reference names, or a panic naming what came instead.
pub(super) fn taken_by<T: std::fmt::Debug>(result: Result<T, Error>, label: &str) -> TransactionId {
    match result {
        Err(Error::Conflict(UniqueKey::PaymentReference { existing })) => existing,
        other => panic!("{label}: expected a taken reference (D30), got {other:?}"),
    }
}

pub(super) fn vendor_payment(total: &str, kind: TransactionType, reference_text: Option<&str>) -> NewVendorPayment {
    NewVendorPayment {
        amount: amount(total),
        transaction_date: ts("2024-05-10T09:00:00Z"),
        transaction_type: kind,
        reference: reference_text.and_then(reference),
        description: Some("NEFT".into()),
        allocations: None,
        branch_id: None,
    }
}

pub(super) fn share(invoice: InvoiceId, paid: &str) -> RequestedAllocation {
    RequestedAllocation { invoice_id: invoice, amount: amount(paid) }
}

pub(super) async fn pay_vendor<S: Store>(
    fx: &Fixture<S>,
    vendor: VendorId,
    payment: NewVendorPayment,
) -> Result<VendorPayment, Error> {
    fx.engine.create_vendor_payment(&fx.admin, vendor, payment, None).await.map(created)
}

/// Polls `write` until it is answered or has waited `waits` times, then drops it (a caller that
/// went away) and answers `None`.
pub(super) async fn answered_within<T>(waits: u64, write: impl Future<Output = T>) -> Option<T> {
    let mut write = std::pin::pin!(write);
    let mut left = waits;
    std::future::poll_fn(|cx| match write.as_mut().poll(cx) {
        std::task::Poll::Ready(answer) => std::task::Poll::Ready(Some(answer)),
        std::task::Poll::Pending if left == 0 => std::task::Poll::Ready(None),
        std::task::Poll::Pending => {
            left -= 1;
            std::task::Poll::Pending
        }
    })
    .await
}

pub(super) fn access(code: &str) -> Access {
    Access::parse(code).unwrap_or_else(|| panic!("{code} is a permission"))
}

/// What a refusal said was missing, as `Admin` and `Collection:Action` names.
pub(super) fn missing<T: std::fmt::Debug>(result: Result<T, Error>, label: &str) -> String {
    match result {
        Err(Error::Forbidden { required: Requirement::Grant(missing) }) => missing.to_string(),
        other => panic!("{label}: expected a 403 naming what is missing, got {other:?}"),
    }
}

pub(super) fn new_user(email: &str, role_id: RoleId) -> NewUser {
    NewUser {
        first_name: "Nila".into(),
        last_name: "Das".into(),
        email: email.into(),
        password: Password::parse("user-password").expect("a valid password"),
        role_id,
        branch_ids: None,
    }
}

pub(super) fn update(email: &str, role_id: RoleId) -> UserUpdate {
    UserUpdate { first_name: "Nila".into(), last_name: "Das".into(), email: email.into(), role_id, branch_ids: None }
}

/// A password change from `current` to "a new password".
pub(super) fn to_new_password(current: &str) -> PasswordChange {
    PasswordChange { current_password: current.into(), new_password: Password::parse("a new password").unwrap() }
}

pub(super) const GSTIN_A: &str = "27AAPFU0939F1ZV";

pub(super) const GSTIN_B: &str = "29AAGCR4375J1ZU";

pub(super) fn gstin(text: &str) -> Gstin {
    Gstin::parse(text).unwrap_or_else(|error| panic!("test GSTIN {text:?}: {error}"))
}

pub(super) fn day(text: &str) -> Date {
    text.parse().unwrap_or_else(|_| panic!("test day {text:?} must parse"))
}

pub(super) fn conflict_on_gstin<T: std::fmt::Debug>(result: Result<T, Error>, label: &str) {
    assert!(
        matches!(result, Err(Error::Conflict(UniqueKey::Gstin))),
        "{label}: expected a 409 on gstin (D37), got {result:?}"
    );
}

pub(super) async fn vendor_with<S: Store>(fx: &Fixture<S>, input: NewVendor) -> Result<Vendor, Error> {
    fx.engine.create_vendor(&fx.admin, input, None).await.map(created)
}

pub(super) fn licensed_until(name: &str, until: Option<&str>) -> NewVendor {
    NewVendor { drug_license_valid_until: until.map(ts), ..NewVendor::new(name, VendorType::Manufacturer) }
}

/// An invoice of `vendor` dated `dated`, due `due` (RFC 3339 instants).
pub(super) async fn dated_invoice<S: Store>(
    fx: &Fixture<S>,
    vendor: VendorId,
    number: &str,
    total: &str,
    dated: &str,
    due: &str,
) -> InvoiceId {
    let input = NewInvoice {
        vendor_id: vendor,
        branch_id: None,
        invoice_number: number.into(),
        amount: amount(total),
        invoice_date: ts(dated),
        due_date: ts(due),
        description: None,
    };
    created(fx.engine.create_invoice(&fx.admin, input, None).await.expect("invoice created")).id
}

pub(super) async fn paid_on<S: Store>(fx: &Fixture<S>, invoice: InvoiceId, paid: &str, on: &str) -> NewTransaction {
    let payment = NewTransaction { transaction_date: ts(on), ..fx.new_payment(invoice, paid) };
    fx.engine.create_transaction(&fx.admin, payment.clone(), None).await.expect("payment recorded");
    payment
}

impl<S: Store> Fixture<S> {
    /// A role holding exactly `codes`, through one policy of its own.
    pub(super) async fn role_of(&self, name: &str, codes: &[&str]) -> RoleId {
        let role = NewRole { name: name.into(), description: String::new() };
        let role = created(self.engine.create_role(&self.admin, role, None).await.expect("role created")).id;
        let policy = self.policy_of(&format!("{name} policy"), codes).await;
        self.engine.attach_role_policy(&self.admin, role, policy).await.expect("policy attached");
        role
    }

    pub(super) async fn audit_entries(&self) -> Vec<AuditEntry> {
        let params = vec![("pageSize".to_owned(), "100".to_owned())];
        self.engine.list_audit(&self.admin, &AuditQuery::from_params(&params).unwrap()).await.unwrap().items
    }

    pub(super) async fn sign_in(&self, email: &str, password: &str) -> (Session, Principal) {
        let session = self.engine.login(email, password).await.unwrap_or_else(|e| panic!("{email} signs in: {e:?}"));
        let principal = self.engine.authenticate(&session.token.token).await.expect("a fresh token works");
        (session, principal)
    }

    pub(super) async fn token_works(&self, session: &Session) -> bool {
        self.engine.authenticate(&session.token.token).await.is_ok()
    }
}
