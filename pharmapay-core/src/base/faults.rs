//! How a store method fails: [`StoreError`], the unique values it can report taken
//! ([`UniqueKey`]), and the row errors of an imported file ([`RowErrors`], D45).

use std::collections::BTreeSet;
use std::error::Error as StdError;
use std::fmt;

use super::fields::{Entity, FieldErrors, RuleBroken};
use super::ids::{BankLineId, TransactionId};
use super::permissions::{Escalation, ScopeNeed};

/// The most `row<N>.<field>` keys an answer lists (D45); the count of failed rows is exact.
pub const MAX_ERROR_KEYS: usize = 1_000;

/// A boxed error from a backend.
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// The result of every store method.
pub type StoreResult<T> = Result<T, StoreError>;

/// How a store method failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The record (of the given kind) does not exist, or is not in the state the method needs.
    #[error("{0} not found")]
    NotFound(Entity),
    /// A unique value is taken.
    #[error("the {0} is already taken")]
    Conflict(UniqueKey),
    /// A referenced record (of the given kind) is missing or inactive.
    #[error("the referenced {0} is missing or inactive")]
    ParentInactive(Entity),
    /// A rule that spans rows refused the write.
    #[error("{}", .0.message())]
    Rule(RuleBroken),
    /// The write would give more than its context's authority holds (D38).
    #[error("the write would give {0}, which the caller does not hold")]
    Escalation(Escalation),
    /// The write reaches beyond its context's scope (D49): what the caller lacks.
    #[error("the write needs {0}, beyond the caller's scope")]
    OutOfScope(ScopeNeed),
    /// A rule found fields of the write wrong against what is stored (an allocation above an
    /// invoice's pending amount, D31; an invoice dated after its vendor's licence, D36).
    #[error("invalid input: {0}")]
    Invalid(FieldErrors),
    /// Rows of an imported file were refused (D45): their errors by `row<N>.<field>`.
    #[error("{0}")]
    Rows(RowErrors),
    /// The backend cannot be reached.
    #[error("the store is unavailable")]
    Unavailable(#[source] BoxError),
    /// The connection to the database was lost while a write's commit was under way, so
    /// whether the write was kept is unknown (D48). Its idempotency claim, if any, is kept: a
    /// retry with the same key replays the write if it was kept, and never writes it twice.
    #[error("the connection was lost during the commit; whether the write was kept is unknown")]
    OutcomeUnknown(#[source] BoxError),
    /// Anything else.
    #[error("store backend failure")]
    Backend(#[source] BoxError),
}

/// A value that must be unique, as a store reports it taken (D4, D5). It names what is unique,
/// never how a request spells it: the server maps each key to its field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UniqueKey {
    /// An invoice number, among active invoices.
    InvoiceNumber,
    /// A user's email, among active users.
    UserEmail,
    /// A role's name, among all roles.
    RoleName,
    /// A policy's name, among active policies.
    PolicyName,
    /// A vendor's GSTIN, among active vendors (D37).
    Gstin,
    /// A payment reference of a payment type, among active payments (D30); `existing` is an
    /// active payment holding it.
    PaymentReference {
        /// The lowest id among the payments holding it.
        existing: TransactionId,
    },
    /// The one OwnPharmacy vendor (D14). Stores refuse a second one by
    /// [`crate::vendors::rules::check_insert`] before any index could; a store whose unique
    /// index finds one anyway reports this key, and the engine answers it as that rule.
    OwnPharmacy,
    /// A vendor credit's number, among the vendor's active credits (D44).
    CreditNumber,
    /// A payment (a payment on its own or a whole vendor payment) matched to a line of an
    /// active bank statement (D46): it is matched to one line at most.
    BankMatch {
        /// The line holding it.
        line: BankLineId,
        /// Whether the payment is a vendor payment (else a payment on its own).
        vendor_payment: bool,
    },
    /// A branch's code, among active branches (D49).
    BranchCode,
}

impl UniqueKey {
    /// The kind of record holding the value.
    pub fn entity(self) -> Entity {
        match self {
            UniqueKey::InvoiceNumber => Entity::Invoice,
            UniqueKey::UserEmail => Entity::User,
            UniqueKey::RoleName => Entity::Role,
            UniqueKey::PolicyName => Entity::Policy,
            UniqueKey::Gstin => Entity::Vendor,
            UniqueKey::PaymentReference { .. } => Entity::Transaction,
            UniqueKey::OwnPharmacy => Entity::Vendor,
            UniqueKey::CreditNumber => Entity::VendorCredit,
            UniqueKey::BankMatch { .. } => Entity::BankLine,
            UniqueKey::BranchCode => Entity::Branch,
        }
    }
}

impl fmt::Display for UniqueKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UniqueKey::InvoiceNumber => "invoice number",
            UniqueKey::UserEmail => "email",
            UniqueKey::RoleName => "role name",
            UniqueKey::PolicyName => "policy name",
            UniqueKey::Gstin => "GSTIN",
            UniqueKey::PaymentReference { .. } => "payment reference",
            UniqueKey::OwnPharmacy => "OwnPharmacy vendor",
            UniqueKey::CreditNumber => "credit number",
            UniqueKey::BankMatch { .. } => "matched payment",
            UniqueKey::BranchCode => "branch code",
        })
    }
}

impl StoreError {
    /// Wraps any error as [`StoreError::Backend`].
    pub fn backend(error: impl StdError + Send + Sync + 'static) -> Self {
        StoreError::Backend(Box::new(error))
    }
}

/// The errors of an import's rows (D45): messages keyed `row<N>.<field>`, at most
/// [`MAX_ERROR_KEYS`] keys, and the exact number of rows that failed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowErrors {
    errors: FieldErrors,
    keys: BTreeSet<String>,
    failed: BTreeSet<u32>,
}

impl RowErrors {
    /// No errors yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `message` for `field` of row `row`.
    pub fn add(&mut self, row: u32, field: &str, message: impl Into<String>) {
        self.failed.insert(row);
        let key = format!("row{row}.{field}");
        if self.keys.contains(&key) || self.keys.len() < MAX_ERROR_KEYS {
            self.keys.insert(key.clone());
            self.errors.add(key, message);
        }
    }

    /// Records every message of `errors`, the field errors of row `row`.
    pub fn add_fields(&mut self, row: u32, errors: &FieldErrors) {
        for (field, messages) in errors.iter() {
            for message in messages {
                self.add(row, field, message.clone());
            }
        }
    }

    /// Moves `other`'s errors in.
    pub fn merge(&mut self, other: RowErrors) {
        for (key, messages) in other.errors.iter() {
            if self.keys.contains(key) || self.keys.len() < MAX_ERROR_KEYS {
                self.keys.insert(key.to_owned());
                for message in messages {
                    self.errors.add(key, message.clone());
                }
            }
        }
        self.failed.extend(other.failed);
    }

    /// True when no row failed.
    pub fn is_empty(&self) -> bool {
        self.failed.is_empty()
    }

    /// How many rows failed.
    pub fn failed_rows(&self) -> usize {
        self.failed.len()
    }

    /// Whether row `row` failed.
    pub fn has_row(&self, row: u32) -> bool {
        self.failed.contains(&row)
    }

    /// The messages by `row<N>.<field>`.
    pub fn errors(&self) -> &FieldErrors {
        &self.errors
    }

    /// `Ok(())` when no row failed, `Err(self)` otherwise.
    pub fn into_result(self) -> Result<(), RowErrors> {
        if self.is_empty() { Ok(()) } else { Err(self) }
    }
}

impl fmt::Display for RowErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rows = self.failed_rows();
        write!(f, "{rows} row{} of the file failed", if rows == 1 { "" } else { "s" })
    }
}

/// The rule a refusal names, for the rules' tests: `None` when the write may go on.
///
/// # Panics
/// When the refusal is not a rule; a test failure.
#[cfg(test)]
pub(crate) fn refusal(result: StoreResult<()>) -> Option<crate::base::fields::RuleBroken> {
    match result {
        Ok(()) => None,
        Err(StoreError::Rule(rule)) => Some(rule),
        Err(other) => panic!("expected a rule, got {other:?}"),
    }
}
