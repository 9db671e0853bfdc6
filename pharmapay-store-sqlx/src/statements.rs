//! The statement texts the SQL store sends, where they are worth naming outside it.
//!
//! Both backends send the same text (numbered `$n` placeholders, which both drivers bind by
//! number), so this module is compiled once, and the store itself uses what it defines: the
//! fragments many statements share (macros, so that `concat!` builds whole statements at
//! compile time) and the fixed statements of the hot paths. A benchmark that times the bare
//! SQL of an endpoint can therefore import the very text the store runs. Statements whose text
//! depends on a request (lists built from filters, sorts and pages) are assembled in the
//! resource's own file of `common/`, except [`payment_totals`], whose shape depends only on the
//! number of windows.
//!
//! Row-lock clauses differ between the backends, so no statement here takes a lock.

/// A vendor's columns and its totals over its active invoices (D11), from `vendors v`. The
/// totals are correlated sub-queries over the covering index `invoices_by_vendor`, so they are
/// computed only for the rows returned.
macro_rules! vendor_columns {
    () => {
        concat!(
            "v.id, v.name, v.vendor_type, v.address, v.phone, v.email, v.drug_license_number1, \
             v.drug_license_number2, v.additional_drug_license_numbers, v.is_active, v.created_at, v.updated_at, ",
            vendor_total!("amount", "/", "total_value_high"),
            ", ",
            vendor_total!("amount", "%", "total_value_low"),
            ", ",
            vendor_total!("paid", "/", "total_paid_high"),
            ", ",
            vendor_total!("paid", "%", "total_paid_low")
        )
    };
}

/// One half (`/`: the high part, `%`: the low part, see [`exact_sum`]) of the sum of a column
/// over the active invoices of vendor `v`.
macro_rules! vendor_total {
    ($column:literal, $op:literal, $alias:literal) => {
        concat!(
            "(SELECT CAST(COALESCE(SUM(vi.",
            $column,
            " ",
            $op,
            " 4294967296), 0) AS BIGINT) FROM invoices vi WHERE vi.vendor_id = v.id AND vi.is_active) AS ",
            $alias
        )
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

/// Each active vendor's outstanding balance (D11) as an exact pair (`balance_high`,
/// `balance_low`) that sorts like the balance itself: balance = high * 2^32 + low with low in
/// [0, 2^32). Pending amounts can be negative, so each is first offset by 2^54 (larger than any
/// amount or paid total) to split it into non-negative halves; the offsets are taken off again
/// with the invoice count and the carry of the low sums is moved into the high part.
macro_rules! vendor_balances {
    () => {
        "SELECT vendor_id, \
         CAST(SUM((amount - paid + 18014398509481984) / 4294967296) AS BIGINT) - COUNT(*) * 4194304 \
           + CAST(SUM((amount - paid + 18014398509481984) % 4294967296) AS BIGINT) / 4294967296 AS balance_high, \
         CAST(SUM((amount - paid + 18014398509481984) % 4294967296) AS BIGINT) % 4294967296 AS balance_low, \
         COUNT(*) AS n_invoices \
         FROM invoices WHERE is_active GROUP BY vendor_id"
    };
}

/// An invoice's columns with its vendor's name, from `invoices i JOIN vendors v`.
macro_rules! invoice_columns {
    () => {
        "i.id, i.vendor_id, v.name AS vendor_name, i.invoice_number, i.amount, i.paid, i.invoice_date, \
         i.due_date, i.description, i.is_active, i.created_at, i.updated_at"
    };
}

/// A payment's columns with the invoice it pays (D13), from `transactions t JOIN invoices i
/// JOIN vendors v`.
macro_rules! transaction_columns {
    () => {
        "t.id, t.invoice_id, t.amount, t.transaction_date, t.transaction_type, t.description, t.is_active, \
         t.created_at, t.updated_at, i.invoice_number, i.vendor_id, v.name AS vendor_name, \
         i.amount AS invoice_amount, i.paid AS invoice_paid"
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
        "u.id, u.first_name, u.last_name, u.email, u.role_id, u.is_active, u.created_at"
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

/// Each active vendor's outstanding balance as an exact pair, for the vendor list sorted by
/// balance and for the top vendors (see `vendor_balances!`).
pub const VENDOR_BALANCES: &str = vendor_balances!();

/// The dashboard summary (D12): one row of five one-row aggregates, each over its own covering
/// index. Binds: the first instant counted as recent.
pub const DASHBOARD_SUMMARY: &str = concat!(
    "SELECT * FROM (SELECT COUNT(*) AS n_vendors FROM vendors) AS counted_vendors, \
     (SELECT COUNT(*) AS n_invoices FROM invoices) AS counted_invoices, \
     (SELECT ",
    exact_sum!("amount", "invoiced"),
    ", ",
    exact_sum!("paid", "invoice_paid"),
    " FROM invoices WHERE is_active) AS active_invoices, \
     (SELECT ",
    exact_sum!("amount", "payments"),
    " FROM transactions WHERE is_active) AS active_payments, \
     (SELECT COUNT(*) AS n_recent FROM transactions WHERE transaction_date >= $1 AND is_active) AS recent"
);

/// Active vendors ranked by outstanding balance, then name, then id (D12). Binds: the limit.
pub const TOP_VENDORS: &str = concat!(
    "SELECT v.id, v.name, COALESCE(b.balance_high, 0) AS balance_high, \
     COALESCE(b.balance_low, 0) AS balance_low, COALESCE(b.n_invoices, 0) AS n_invoices \
     FROM vendors v LEFT JOIN (",
    vendor_balances!(),
    ") b ON b.vendor_id = v.id \
     WHERE v.is_active \
     ORDER BY COALESCE(b.balance_high, 0) DESC, COALESCE(b.balance_low, 0) DESC, v.name_key ASC, v.id ASC \
     LIMIT $1"
);

/// The newest invoices, canceled ones included (D12). Binds: the limit.
pub const RECENT_INVOICES: &str = concat!(
    "SELECT ",
    invoice_columns!(),
    " FROM ",
    invoices_with_vendor!(),
    " ORDER BY i.created_at DESC, i.id DESC LIMIT $1"
);

/// A payment write's first statement: adds the payment to its invoice's paid total, locking
/// the invoice row, and returns the row as it now stands (`is_active` and `invoice_paid` for
/// `rules::ledger::receive`, the rest for the payment's nested invoice). Binds: the invoice's
/// id, the scaled amount added.
pub const ADD_PAID: &str = "UPDATE invoices SET paid = paid + $2 WHERE id = $1 \
     RETURNING is_active, invoice_number, vendor_id, amount AS invoice_amount, paid AS invoice_paid, \
     (SELECT v.name FROM vendors v WHERE v.id = invoices.vendor_id) AS vendor_name";

/// Inserts a payment. Binds: the invoice's id, the scaled amount, the payment's date, its
/// type, its description and the instant it was created (also its last change).
pub const INSERT_PAYMENT: &str = "INSERT INTO transactions (invoice_id, amount, transaction_date, \
     transaction_type, description, is_active, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, TRUE, $6, $6) RETURNING id";

/// Records an audit entry (D22). Binds: the instant, the acting user, the action, the entity,
/// the entity's lower-cased name, its id, the reason and the changes.
pub const INSERT_AUDIT: &str = "INSERT INTO audit_log (at, user_id, action, entity, entity_key, entity_id, \
     reason, changes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

/// The payment totals of `windows` half-open windows in one `UNION ALL` statement (the
/// dashboard's monthly totals send twelve): each window is a range scan of the covering index
/// `transactions_by_date`, answering its index, its exact total and its count. Binds: each
/// window's start and end, in order.
pub fn payment_totals(windows: usize) -> String {
    (0..windows)
        .map(|index| {
            format!(
                "SELECT CAST({index} AS BIGINT) AS window_index, {total}, COUNT(*) AS n_payments \
                 FROM transactions WHERE transaction_date >= ${} AND transaction_date < ${} AND is_active",
                2 * index + 1,
                2 * index + 2,
                total = exact_sum!("amount", "total"),
            )
        })
        .collect::<Vec<_>>()
        .join(" UNION ALL ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payment_totals_bind_a_start_and_an_end_per_window() {
        let twelve = payment_totals(12);
        assert_eq!(twelve.matches(" UNION ALL ").count(), 11);
        assert!(twelve.starts_with(
            "SELECT CAST(0 AS BIGINT) AS window_index, CAST(COALESCE(SUM((amount) / 4294967296), 0) AS BIGINT) \
             AS total_high"
        ));
        assert!(twelve.ends_with("transaction_date >= $23 AND transaction_date < $24 AND is_active"));
        assert_eq!(payment_totals(0), "", "no window, no statement");
    }

    #[test]
    fn the_fixed_statements_take_no_row_lock_and_read_like_one_line() {
        for statement in [
            SESSION_STATE,
            VENDOR_BY_ID,
            VENDOR_BALANCES,
            DASHBOARD_SUMMARY,
            TOP_VENDORS,
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
