//! What a bank line holds: the payment columns of a match, the write of a line's change with
//! its statement's counts (D46), and the lines a deleted payment frees (D51), which payment
//! deletes reach without the rest of the statements' family.

use std::collections::HashSet;

use pharmapay_core::bank::rules as bank_rules;
use pharmapay_core::bank::rules::LineChange;
use pharmapay_core::bank::{BankLine, LineStatus, MatchedBy};
use pharmapay_core::events::Announcement;
use pharmapay_core::transactions::holders::Holder;

use super::records::{LINE_COLUMNS, line_from};
use super::{Conn, Result};

/// The two payment columns of a line holding `payment`.
pub(super) fn holder_ids(payment: Option<Holder>) -> (Option<i64>, Option<i64>) {
    match payment {
        Some(Holder::Payment(id)) => (Some(id.get()), None),
        Some(Holder::VendorPayment(id)) => (None, Some(id.get())),
        None => (None, None),
    }
}

/// Sets back the lines of active statements holding `payment`, which this write deletes, as
/// core says (D51), with their statements' counts; answers one event per statement changed.
/// The caller holds the bank statements' lock (D48: before any payment's).
pub(super) async fn release_lines(conn: &mut Conn, payment: Holder) -> Result<Vec<Announcement>> {
    let (transaction, vendor_payment) = holder_ids(Some(payment));
    let sql = format!(
        "SELECT {LINE_COLUMNS} FROM bank_lines WHERE holds AND (transaction_id = $1 OR vendor_payment_id = $2) \
         ORDER BY id"
    );
    let rows =
        sqlx::query(sqlx::AssertSqlSafe(sql)).bind(transaction).bind(vendor_payment).fetch_all(&mut *conn).await?;
    let mut announced: Vec<Announcement> = Vec::new();
    let mut statements = HashSet::new();
    for row in &rows {
        let line = line_from(row)?;
        change_line(conn, &line, bank_rules::released()).await?;
        if statements.insert(line.statement_id) {
            announced.push(Announcement::statement_updated(line.id.get()));
        }
    }
    Ok(announced)
}

/// Writes `change` to `line` and moves its statement's counts.
pub(super) async fn change_line(conn: &mut Conn, line: &BankLine, change: LineChange) -> Result<()> {
    let (transaction, vendor_payment) = holder_ids(change.payment);
    sqlx::query(
        "UPDATE bank_lines SET status = $2, matched_by = $3, transaction_id = $4, vendor_payment_id = $5, holds = $6 \
         WHERE id = $1",
    )
    .bind(line.id.get())
    .bind(change.status.name())
    .bind(change.matched_by.map(MatchedBy::name))
    .bind(transaction)
    .bind(vendor_payment)
    .bind(change.payment.is_some())
    .execute(&mut *conn)
    .await?;
    if change.status != line.status {
        let sql = format!(
            "UPDATE bank_statements SET {from} = {from} - 1, {to} = {to} + 1 WHERE id = $1",
            from = count_column(line.status),
            to = count_column(change.status)
        );
        sqlx::query(sqlx::AssertSqlSafe(sql)).bind(line.statement_id.get()).execute(&mut *conn).await?;
    }
    Ok(())
}

pub(super) fn count_column(status: LineStatus) -> &'static str {
    match status {
        LineStatus::Matched => "matched",
        LineStatus::AmountDiffers => "amount_differs",
        LineStatus::Suggested => "suggested",
        LineStatus::Unmatched => "unmatched",
        LineStatus::Ignored => "ignored",
    }
}
