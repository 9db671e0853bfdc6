//! Records read by id as their GET answers them, which the feed renders into the events of the
//! writes that touch them (D47) as their own families answer them: a vendor credit with its
//! applications (D44), a bank statement (D46), an invoice with its vendor (D13).

use pharmapay_core::bank::{BankLine, BankStatement, LineCounts, LineStatus, MatchedBy};
use pharmapay_core::credits::{CreditApplication, CreditKind, VendorCredit};
use pharmapay_core::ids::{
    BankLineId, BankStatementId, BranchId, CreditApplicationId, InvoiceId, TransactionId, VendorCreditId, VendorId,
    VendorPaymentId,
};
use pharmapay_core::invoices::InvoiceDetail;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::jiff::civil::Date;
use pharmapay_core::money::from_scaled;
use pharmapay_core::transactions::holders::Holder;
use pharmapay_core::vendors::VendorBrief;
use sqlx::Row;

use super::rows::{amount, day, instant, invoice_from, small, vendor_type};
use super::{Conn, DbRow, Result, row_by_id};
use crate::error::Error;

/// The columns a credit is read with, over `vendor_credits c JOIN vendors v`.
macro_rules! credit_columns {
    () => {
        "c.id, c.vendor_id, v.name AS vendor_name, c.branch_id, \
         (SELECT b.code FROM branches b WHERE b.id = c.branch_id) AS branch_code, c.credit_number, c.kind, c.against_invoice_id, c.claimed, \
         c.claim_date, c.accepted, c.decision_date, c.distributor_reference, c.applied, c.description, c.is_active, \
         c.created_at, c.updated_at"
    };
}

pub(super) use credit_columns;

pub(super) fn credit_from(row: &DbRow) -> Result<VendorCredit> {
    let kind: &str = row.try_get("kind")?;
    Ok(VendorCredit {
        id: VendorCreditId(row.try_get("id")?),
        vendor_id: VendorId(row.try_get("vendor_id")?),
        vendor_name: row.try_get("vendor_name")?,
        branch_id: BranchId(row.try_get("branch_id")?),
        branch_code: row.try_get("branch_code")?,
        credit_number: row.try_get("credit_number")?,
        kind: CreditKind::parse(kind).ok_or_else(|| Error::corrupt(format!("credit kind {kind}")))?,
        against_invoice_id: row.try_get::<Option<i64>, _>("against_invoice_id")?.map(InvoiceId),
        claimed_amount: amount(row.try_get("claimed")?)?,
        claim_date: instant(row.try_get("claim_date")?)?,
        accepted_amount: row.try_get::<Option<i64>, _>("accepted")?.map(|scaled| from_scaled(scaled).normalize()),
        decision_date: row.try_get::<Option<i64>, _>("decision_date")?.map(instant).transpose()?,
        distributor_reference: row.try_get("distributor_reference")?,
        applied_amount: from_scaled(row.try_get("applied")?).normalize(),
        description: row.try_get("description")?,
        is_active: row.try_get("is_active")?,
        created_at: instant(row.try_get("created_at")?)?,
        updated_at: instant(row.try_get("updated_at")?)?,
        applications: Vec::new(),
    })
}

/// The credit `id` as stored, read on `conn`, with its active applications, oldest first.
pub(super) async fn credit_in(conn: &mut Conn, id: i64) -> Result<Option<VendorCredit>> {
    let sql = concat!(
        "SELECT ",
        credit_columns!(),
        " FROM vendor_credits c JOIN vendors v ON v.id = c.vendor_id WHERE c.id = $1"
    );
    let Some(mut credit) = row_by_id(conn, sql, id).await?.as_ref().map(credit_from).transpose()? else {
        return Ok(None);
    };
    let rows = sqlx::query(
        "SELECT a.id, a.invoice_id, i.invoice_number, a.amount, a.date, a.created_at FROM credit_applications a \
         JOIN invoices i ON i.id = a.invoice_id WHERE a.credit_id = $1 AND a.is_active ORDER BY a.date, a.id",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    credit.applications = rows
        .iter()
        .map(|row| {
            Ok(CreditApplication {
                id: CreditApplicationId(row.try_get("id")?),
                invoice_id: InvoiceId(row.try_get("invoice_id")?),
                invoice_number: row.try_get("invoice_number")?,
                amount: amount(row.try_get("amount")?)?,
                date: instant(row.try_get("date")?)?,
                created_at: instant(row.try_get("created_at")?)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(credit))
}

pub(super) const STATEMENT_COLUMNS: &str = "id, account, branch_id, \
     (SELECT b.code FROM branches b WHERE b.id = bank_statements.branch_id) AS branch_code, from_date, to_date, \
     matched, amount_differs, suggested, unmatched, ignored, duplicate_lines, deposit_lines, skipped_rows, is_active, \
     created_at";

pub(super) fn statement_from(row: &DbRow) -> Result<BankStatement> {
    let optional_day = |column: &str| -> Result<Option<Date>> {
        row.try_get::<Option<String>, _>(column)?.as_deref().map(day).transpose()
    };
    Ok(BankStatement {
        id: BankStatementId(row.try_get("id")?),
        account: row.try_get("account")?,
        branch_id: BranchId(row.try_get("branch_id")?),
        branch_code: row.try_get("branch_code")?,
        from_date: optional_day("from_date")?,
        to_date: optional_day("to_date")?,
        counts: LineCounts {
            matched: small(row.try_get("matched")?),
            amount_differs: small(row.try_get("amount_differs")?),
            suggested: small(row.try_get("suggested")?),
            unmatched: small(row.try_get("unmatched")?),
            ignored: small(row.try_get("ignored")?),
        },
        duplicate_lines: small(row.try_get("duplicate_lines")?),
        deposit_lines: small(row.try_get("deposit_lines")?),
        skipped_rows: small(row.try_get("skipped_rows")?),
        is_active: row.try_get("is_active")?,
        created_at: instant(row.try_get("created_at")?)?,
    })
}

pub(super) async fn statement_in(conn: &mut Conn, id: i64) -> Result<Option<BankStatement>> {
    let sql = format!("SELECT {STATEMENT_COLUMNS} FROM bank_statements WHERE id = $1");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&mut *conn).await?;
    row.as_ref().map(statement_from).transpose()
}

/// An invoice with its vendor's columns (D13): [`detail_from`] reads its rows.
pub(super) const INVOICE_DETAIL_SELECT: &str = concat!(
    "SELECT ",
    invoice_columns!(),
    ", v.vendor_type AS vendor_type, v.address AS vendor_address, v.phone AS vendor_phone, \
     v.email AS vendor_email, v.drug_license_number1 AS vendor_licence1, \
     v.drug_license_number2 AS vendor_licence2, v.is_active AS vendor_is_active FROM ",
    invoices_with_vendor!()
);

/// An invoice with its vendor from a row of [`INVOICE_DETAIL_SELECT`], its status for the day
/// starting at `today_start`.
pub(super) fn detail_from(row: &DbRow, today_start: Timestamp) -> Result<InvoiceDetail> {
    let invoice = invoice_from(row, today_start)?;
    let vendor = VendorBrief {
        id: invoice.vendor_id,
        name: invoice.vendor_name.clone(),
        vendor_type: vendor_type(row.try_get("vendor_type")?)?,
        address: row.try_get("vendor_address")?,
        phone: row.try_get("vendor_phone")?,
        email: row.try_get("vendor_email")?,
        drug_license_number1: row.try_get("vendor_licence1")?,
        drug_license_number2: row.try_get("vendor_licence2")?,
        is_active: row.try_get("vendor_is_active")?,
    };
    Ok(InvoiceDetail { invoice, vendor })
}

/// The invoice `id` with its vendor (D13), its status for the day starting at `today_start`,
/// read on `conn`.
pub(super) async fn invoice_detail_in(
    conn: &mut Conn,
    id: i64,
    today_start: Timestamp,
) -> Result<Option<InvoiceDetail>> {
    let sql = format!("{INVOICE_DETAIL_SELECT} WHERE i.id = $1");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&mut *conn).await?;
    row.map(|row| detail_from(&row, today_start)).transpose()
}

pub(super) const LINE_COLUMNS: &str = "id, statement_id, line_number, date, narration, reference, amount, status, matched_by, \
     transaction_id, vendor_payment_id";

pub(super) fn line_from(row: &DbRow) -> Result<BankLine> {
    let status: String = row.try_get("status")?;
    let matched_by: Option<String> = row.try_get("matched_by")?;
    Ok(BankLine {
        id: BankLineId(row.try_get("id")?),
        statement_id: BankStatementId(row.try_get("statement_id")?),
        line_number: small(row.try_get("line_number")?),
        date: day(&row.try_get::<String, _>("date")?)?,
        narration: row.try_get("narration")?,
        reference: row.try_get("reference")?,
        amount: amount(row.try_get("amount")?)?,
        status: LineStatus::parse(&status).ok_or_else(|| Error::corrupt("a stored line status is unknown"))?,
        matched_by: matched_by
            .map(|name| MatchedBy::parse(&name).ok_or_else(|| Error::corrupt("a stored match kind is unknown")))
            .transpose()?,
        payment: holder_from(row)?,
    })
}

/// The payment a line holds, from its two payment columns.
pub(super) fn holder_from(row: &DbRow) -> Result<Option<Holder>> {
    let transaction: Option<i64> = row.try_get("transaction_id")?;
    let vendor_payment: Option<i64> = row.try_get("vendor_payment_id")?;
    Ok(match (transaction, vendor_payment) {
        (Some(id), _) => Some(Holder::Payment(TransactionId(id))),
        (None, Some(id)) => Some(Holder::VendorPayment(VendorPaymentId(id))),
        (None, None) => None,
    })
}
