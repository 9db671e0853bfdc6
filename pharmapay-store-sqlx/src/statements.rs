//! The statement texts the SQL store sends, where they are worth naming outside it.
//!
//! Both backends send the same text (numbered `$n` placeholders, which both drivers bind by
//! number), so this module is compiled once, and the store itself uses what it defines: the
//! fragments many statements share (macros, so that `concat!` builds whole statements at
//! compile time) and the fixed statements of the hot paths. A benchmark that times the bare
//! SQL of an endpoint can therefore import the very text the store runs. Statements whose text
//! depends on a request (lists built from filters, sorts and pages) are assembled in the
//! resource's own file of `common/`.
//!
//! Row-lock clauses differ between the backends, so no statement here takes a lock.

/// The two columns `<alias>_high`, `<alias>_low` that hold a kept sum as an exact pair
/// (migration 4), named at compile time: every vendor row reads two pairs, and naming them
/// while decoding cost two allocations a row.
macro_rules! pair_columns {
    ($alias:literal) => {
        [concat!($alias, "_high"), concat!($alias, "_low")]
    };
}

/// A vendor's columns and its kept figures over its active invoices (D11, D41), from
/// `vendors v`: how many, their amounts and what they still owe, as exact pairs (migration 4),
/// and what credits applied to them and what its credits still have available (D44,
/// migration 16).
macro_rules! vendor_columns {
    () => {
        "v.id, v.name, v.vendor_type, v.address, v.phone, v.email, v.drug_license_number1, \
         v.drug_license_number2, v.additional_drug_license_numbers, v.drug_license_valid_until, v.gstin, \
         v.is_active, v.created_at, v.updated_at, v.active_invoices, v.invoiced_high, v.invoiced_low, \
         v.outstanding_high, v.outstanding_low, v.credited_high, v.credited_low, v.available_credit_high, \
         v.available_credit_low"
    };
}

/// The exact sum of a non-negative integer expression, as two columns `<alias>_high` and
/// `<alias>_low` that [`exact_sum`] adds up. One `SUM` of scaled amounts can pass `i64::MAX`
/// (a thousand invoices of the largest amount do), where SQLite fails with "integer overflow"
/// and PostgreSQL's cast back from NUMERIC fails too; the sums of the values' high and low 32
/// bits stay far inside 64 bits for any number of rows a table can hold.
macro_rules! exact_sum {
    ($expression:literal, $alias:literal) => {
        concat!(
            "CAST(COALESCE(SUM((",
            $expression,
            ") / 4294967296), 0) AS BIGINT) AS ",
            $alias,
            "_high, CAST(COALESCE(SUM((",
            $expression,
            ") % 4294967296), 0) AS BIGINT) AS ",
            $alias,
            "_low"
        )
    };
}

/// An invoice's columns with its vendor's name, from `invoices i JOIN vendors v`.
macro_rules! invoice_columns {
    () => {
        "i.id, i.vendor_id, v.name AS vendor_name, i.branch_id, \
         (SELECT b.code FROM branches b WHERE b.id = i.branch_id) AS branch_code, i.invoice_number, i.amount, i.paid, \
         i.credited, i.invoice_date, i.due_date, i.description, i.is_active, i.created_at, i.updated_at"
    };
}

/// A payment's columns with the invoice it pays (D13), from `transactions t JOIN invoices i
/// JOIN vendors v`.
macro_rules! transaction_columns {
    () => {
        "t.id, t.invoice_id, t.amount, t.transaction_date, t.transaction_type, t.reference, t.description, \
         t.vendor_payment_id, t.is_active, t.created_at, t.updated_at, i.invoice_number, i.vendor_id, \
         v.name AS vendor_name, i.amount AS invoice_amount, i.paid AS invoice_paid, i.credited AS invoice_credited, \
         i.branch_id AS invoice_branch_id, \
         (SELECT b.code FROM branches b WHERE b.id = i.branch_id) AS invoice_branch_code"
    };
}

macro_rules! invoices_with_vendor {
    () => {
        "invoices i JOIN vendors v ON v.id = i.vendor_id"
    };
}

macro_rules! transactions_with_invoice {
    () => {
        "transactions t JOIN invoices i ON i.id = t.invoice_id JOIN vendors v ON v.id = i.vendor_id"
    };
}

macro_rules! user_columns {
    () => {
        "u.id, u.first_name, u.last_name, u.email, u.role_id, u.branch_ids, u.is_active, u.created_at"
    };
}

macro_rules! role_columns {
    () => {
        "r.id, r.name, r.description, r.is_system, r.is_active, r.created_at"
    };
}

/// The session check every authenticated request makes
/// ([`SessionStore::session_state`](pharmapay_core::store::SessionStore::session_state)).
/// Binds: the user's id.
pub const SESSION_STATE: &str = "SELECT is_active, tokens_revoked_at FROM users WHERE id = $1";

/// One vendor with its totals (D11), as `get_vendor` and the writes that read a vendor back
/// send it. Binds: the vendor's id.
pub const VENDOR_BY_ID: &str = concat!("SELECT ", vendor_columns!(), " FROM vendors v WHERE v.id = $1");

/// The dashboard's summary figures (D12, D41): the installation's kept totals and the sums of
/// the kept day figures from a first recent day on. Binds: that day's key (`YYYYMMDD`).
pub const DASHBOARD_FIGURES: &str = "SELECT t.vendors, t.active_vendors, t.invoices, t.active_invoices, \
     t.open_invoices, t.invoiced_high, t.invoiced_low, t.invoice_paid_high, t.invoice_paid_low, t.payments, \
     t.active_payments, t.paid_out_high, t.paid_out_low, t.invoice_credited_high, t.invoice_credited_low, \
     t.credits_available, t.available_credit_high, t.available_credit_low, t.pending_claims, t.pending_claimed_high, \
     t.pending_claimed_low, \
     (SELECT CAST(COALESCE(SUM(d.payments), 0) AS BIGINT) FROM payment_days d WHERE d.day >= $1) AS recent_payments, \
     (SELECT CAST(COALESCE(SUM(d.amount_high), 0) AS BIGINT) FROM payment_days d WHERE d.day >= $1) \
     AS recent_amount_high, \
     (SELECT CAST(COALESCE(SUM(d.amount_low), 0) AS BIGINT) FROM payment_days d WHERE d.day >= $1) \
     AS recent_amount_low \
     FROM ledger_totals t WHERE t.id = 1";

/// Active vendors ranked by outstanding balance, then name, then id (D12), from the kept
/// figures along the index `vendors_ranked`. Binds: the limit.
pub const TOP_VENDORS: &str = "SELECT v.id, v.name, v.outstanding_high, v.outstanding_low, v.active_invoices \
     FROM vendors v WHERE v.is_active = TRUE \
     ORDER BY v.outstanding_high DESC, v.outstanding_low DESC, v.name_key ASC, v.id ASC LIMIT $1";

/// The kept figures of the business days in a range that had payments (a day whose payments
/// were all deleted keeps a zero row). Binds: the first and the last day's keys.
pub const DAY_FIGURES: &str = "SELECT day, payments, amount_high, amount_low FROM payment_days \
     WHERE day >= $1 AND day <= $2 AND payments <> 0 ORDER BY day";

/// The newest invoices, canceled ones included (D12). Binds: the limit.
pub const RECENT_INVOICES: &str = concat!(
    "SELECT ",
    invoice_columns!(),
    " FROM ",
    invoices_with_vendor!(),
    " ORDER BY i.created_at DESC, i.id DESC LIMIT $1"
);

/// A payment write's first statement after reading the business calendar: adds the payment to
/// its invoice's paid total, locking the invoice row, and returns the row as it now stands
/// (`is_active` and `invoice_paid` for `transactions::rules::receive`, with `vendor_id`,
/// `invoice_amount` and `due_date` the facts the kept figures need, and the rest for the
/// payment's nested invoice). Binds: the invoice's id, the scaled amount added.
pub const ADD_PAID: &str = "UPDATE invoices SET paid = paid + $2 WHERE id = $1 \
     RETURNING is_active, invoice_number, vendor_id, due_date, invoice_date, amount AS invoice_amount, \
     paid AS invoice_paid, credited, credited AS invoice_credited, branch_id, branch_id AS invoice_branch_id, \
     (SELECT b.code FROM branches b WHERE b.id = invoices.branch_id) AS invoice_branch_code, \
     (SELECT v.name FROM vendors v WHERE v.id = invoices.vendor_id) AS vendor_name";

/// Inserts a payment. Binds: the invoice's id, the scaled amount, the payment's date, its
/// type, its description, the instant it was created (also its last change), its reference,
/// the reference's key and its vendor payment's id.
pub const INSERT_PAYMENT: &str = "INSERT INTO transactions (invoice_id, amount, transaction_date, \
     transaction_type, description, is_active, created_at, updated_at, reference, reference_key, vendor_payment_id, \
     vendor_id) VALUES ($1, $2, $3, $4, $5, TRUE, $6, $6, $7, $8, $9, \
     (SELECT i.vendor_id FROM invoices i WHERE i.id = $1)) RETURNING id";

/// Records an audit entry (D22). Binds: the instant, the acting user, the action, the entity,
/// the entity's lower-cased name, its id, the reason and the changes.
pub const INSERT_AUDIT: &str = "INSERT INTO audit_log (at, user_id, action, entity, entity_key, entity_id, \
     reason, changes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

/// A statement the store sends, with the values bound to it in placeholder order: what the
/// load harness times directly beside the server, so that it measures the store's own SQL rather
/// than a copy (`SqliteStore::invoice_page_statement` and friends).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundStatement {
    /// The text, with `$1`, `$2` ... placeholders.
    pub sql: String,
    /// The values, in placeholder order.
    pub values: Vec<BoundValue>,
}

/// A value bound to a statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoundValue {
    /// An integer, or NULL.
    Int(Option<i64>),
    /// A boolean.
    Bool(bool),
    /// Text, or NULL.
    Text(Option<String>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_statements_take_no_row_lock_and_read_like_one_line() {
        for statement in [
            SESSION_STATE,
            VENDOR_BY_ID,
            DASHBOARD_FIGURES,
            TOP_VENDORS,
            DAY_FIGURES,
            RECENT_INVOICES,
            ADD_PAID,
            INSERT_PAYMENT,
            INSERT_AUDIT,
        ] {
            assert!(!statement.contains("FOR UPDATE") && !statement.contains("FOR SHARE"), "{statement}");
            assert!(!statement.contains('\n') && !statement.contains("  "), "{statement}");
        }
    }
}
