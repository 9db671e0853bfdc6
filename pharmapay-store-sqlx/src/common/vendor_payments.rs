//! Vendor payments over SQL (D31): [`VendorPaymentStore`].
//!
//! A vendor payment is one write transaction: the business calendar, the reference's lock
//! (D30), the vendor's row, then the invoices it may pay in id order (D48's lock order), all locked before
//! `vendor_payments::rules` splits the amount over them, so two payments racing for one invoice can
//! never both take what it owes. Each share becomes a payment row naming the vendor payment,
//! added to its invoice's paid total, and the kept figures move by what the write changed.

use std::collections::BTreeMap;

use pharmapay_core::BusinessCalendar;
use pharmapay_core::figures::{FigureChange, InvoiceFacts, PaymentFacts};
use pharmapay_core::ids::{InvoiceId, VendorId, VendorPaymentId};
use pharmapay_core::invoices::OPEN;
use pharmapay_core::store::{StoreResult, VendorPaymentStore, WriteContext};
use pharmapay_core::transactions::holders::Holder;
use pharmapay_core::transactions::reference::PaymentReference;
use pharmapay_core::transactions::{NewTransaction, Transaction};
use pharmapay_core::vendor_payments::rules as vendor_payment_rules;
use pharmapay_core::vendor_payments::rules::{PayableInvoice, RequestedAllocation};
use pharmapay_core::vendor_payments::{NewVendorPayment, VendorPayment};
use pharmapay_core::{Entity, StoreError};
use sqlx::Row;

use super::binds::{rows_in, terms_condition};
use super::figures::invoice_facts;
use super::guards::{check_reference, lock_reference, lock_vendors_of};
use super::rows::{amount, instant, micros, transaction_from, transaction_type};
use super::transactions::{insert_payment_row, payment_for_change, take_paid_from};
use super::{Conn, Result, SqlStore, answer, commit_announcing, commit_moving, lock, refused, row_by_id};
use crate::Lock;

/// The invoices a vendor payment may pay, locked in id order: those among `ids`, or, without
/// `ids`, the vendor's active invoices still owing. Answers them with their facts.
async fn payable_invoices(
    conn: &mut Conn,
    vendor_id: i64,
    ids: Option<Vec<i64>>,
    calendar: &BusinessCalendar,
) -> Result<Vec<(i64, InvoiceFacts)>> {
    let columns = "id, vendor_id, branch_id, is_active, amount, paid, credited, due_date, invoice_date";
    let rows = match ids {
        Some(mut ids) => {
            ids.sort_unstable();
            ids.dedup();
            let sql = |list: &str| {
                format!("SELECT {columns} FROM invoices WHERE id IN ({list}) ORDER BY id{}", for_update!())
            };
            rows_in(conn, &ids, sql).await?
        }
        None => {
            // The vendor's open invoices (D31): active and still owing something.
            let sql = format!(
                "SELECT {columns} FROM invoices WHERE invoices.vendor_id = $1 AND {} ORDER BY id{}",
                terms_condition("invoices", OPEN, None),
                for_update!()
            );
            sqlx::query(sqlx::AssertSqlSafe(sql)).bind(vendor_id).fetch_all(&mut *conn).await?
        }
    };
    rows.iter().map(|row| Ok((row.try_get::<i64, _>("id")?, invoice_facts(row, "amount", "paid", calendar)?))).collect()
}

/// The invoices a vendor payment, or a credit's application (D44), may pay, locked in id order
/// (those its `allocations` name, or the vendor's open invoices), as `vendor_payments::rules` reads
/// them, with their facts for the kept figures.
pub(super) async fn payable(
    conn: &mut Conn,
    vendor_id: i64,
    allocations: Option<&[RequestedAllocation]>,
    calendar: &BusinessCalendar,
) -> Result<(Vec<PayableInvoice>, BTreeMap<i64, InvoiceFacts>)> {
    let asked: Option<Vec<i64>> =
        allocations.map(|allocations| allocations.iter().map(|allocation| allocation.invoice_id.get()).collect());
    let invoices = payable_invoices(conn, vendor_id, asked, calendar).await?;
    let ids: Vec<i64> = invoices.iter().map(|(id, _)| *id).collect();
    let dates = invoice_dates(conn, &ids).await?;
    let payable = invoices
        .iter()
        .map(|(id, facts)| {
            Ok(PayableInvoice {
                id: InvoiceId(*id),
                vendor_id: facts.vendor_id,
                branch_id: facts.branch_id,
                is_active: facts.is_active,
                pending: facts.pending(),
                due_date: facts.due_date,
                invoice_date: instant(dates.get(id).copied().unwrap_or_default())?,
            })
        })
        .collect::<Result<Vec<PayableInvoice>>>()?;
    Ok((payable, invoices.into_iter().collect()))
}

/// The invoice dates of `invoices`' rows, which the oldest-first split orders by.
async fn invoice_dates(conn: &mut Conn, ids: &[i64]) -> Result<BTreeMap<i64, i64>> {
    let sql = |list: &str| format!("SELECT id, invoice_date FROM invoices WHERE id IN ({list})");
    let rows = rows_in(conn, ids, sql).await?;
    rows.iter().map(|row| Ok((row.try_get::<i64, _>("id")?, row.try_get::<i64, _>("invoice_date")?))).collect()
}

/// Records a vendor payment (D31) in the write transaction on `conn`, whose calendar is
/// `calendar`: the reference's lock (D30), the vendor's row, then the invoices it may pay in id
/// order, all locked before `vendor_payments::rules` splits the amount over them; a payment row per
/// share, added to its invoice's paid total. Answers its id and the kept figures it moves, for
/// the caller to apply when it commits.
pub(super) async fn write_vendor_payment(
    conn: &mut Conn,
    calendar: &BusinessCalendar,
    vendor_id: VendorId,
    payment: &NewVendorPayment,
    (scope, at): (&pharmapay_core::branches::Scope, pharmapay_core::jiff::Timestamp),
) -> Result<(i64, FigureChange)> {
    let kind = payment.transaction_type;
    let key = payment.reference.as_ref().map(PaymentReference::key);
    lock_reference(&mut *conn, kind, key).await?;
    let vendor =
        row_by_id(&mut *conn, concat!("SELECT is_active FROM vendors WHERE id = $1", for_update!()), vendor_id.get())
            .await?;
    if vendor.map(|row| row.try_get::<bool, _>("is_active")).transpose()? != Some(true) {
        return refused(StoreError::NotFound(Entity::Vendor));
    }
    check_reference(&mut *conn, kind, key, None).await?;
    let (payable, facts) = payable(&mut *conn, vendor_id.get(), payment.allocations.as_deref(), calendar).await?;
    let allocations = vendor_payment_rules::plan_payment(
        vendor_id,
        (payment.amount, payment.allocations.as_deref()),
        (scope, payment.branch_id),
        &payable,
    )?;

    let row = sqlx::query(
        "INSERT INTO vendor_payments (vendor_id, amount, transaction_date, transaction_type, reference, \
         description, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
    )
    .bind(vendor_id.get())
    .bind(payment.amount.to_scaled())
    .bind(micros(payment.transaction_date))
    .bind(kind.name())
    .bind(payment.reference.as_ref().map(|reference| reference.as_str().to_owned()))
    .bind(payment.description.clone())
    .bind(micros(at))
    .fetch_one(&mut *conn)
    .await?;
    let id: i64 = row.try_get(0)?;
    let mut change = FigureChange::new();
    for share in &allocations {
        let part = NewTransaction {
            invoice_id: share.invoice_id,
            amount: share.amount,
            transaction_date: payment.transaction_date,
            transaction_type: kind,
            reference: payment.reference.clone(),
            description: payment.description.clone(),
        };
        insert_payment_row(&mut *conn, &part, at, Some(id)).await?;
        let scaled = share.amount.to_scaled();
        sqlx::query("UPDATE invoices SET paid = paid + $2 WHERE id = $1")
            .bind(share.invoice_id.get())
            .bind(scaled)
            .execute(&mut *conn)
            .await?;
        let before = facts
            .get(&share.invoice_id.get())
            .copied()
            .ok_or_else(|| crate::error::Error::corrupt("an allocated invoice was not locked"))?;
        let after = InvoiceFacts { paid: before.paid + share.amount.get(), ..before };
        let paid = PaymentFacts::new(true, share.amount.get(), payment.transaction_date, calendar, &after);
        change.invoice(share.invoice_id.get(), Some(&before), Some(&after)).row(None, Some(&paid));
    }
    Ok((id, change))
}

impl SqlStore {
    /// The vendor payment `id` as stored, with its active parts, read on `conn`.
    pub(super) async fn vendor_payment_in(conn: &mut Conn, id: i64) -> Result<Option<VendorPayment>> {
        let row = row_by_id(
            conn,
            "SELECT p.id, p.vendor_id, v.name AS vendor_name, p.amount, p.transaction_date, p.transaction_type, \
             p.reference, p.description, p.created_at FROM vendor_payments p JOIN vendors v ON v.id = p.vendor_id \
             WHERE p.id = $1",
            id,
        )
        .await?;
        let Some(row) = row else { return Ok(None) };
        let parts = sqlx::query(concat!(
            "SELECT ",
            transaction_columns!(),
            " FROM ",
            transactions_with_invoice!(),
            " WHERE t.vendor_payment_id = $1 AND t.is_active ORDER BY t.id"
        ))
        .bind(id)
        .fetch_all(&mut *conn)
        .await?;
        Ok(Some(VendorPayment {
            id: VendorPaymentId(row.try_get("id")?),
            vendor_id: VendorId(row.try_get("vendor_id")?),
            vendor_name: row.try_get("vendor_name")?,
            amount: amount(row.try_get("amount")?)?,
            transaction_date: instant(row.try_get("transaction_date")?)?,
            transaction_type: transaction_type(row.try_get("transaction_type")?)?,
            reference: row.try_get("reference")?,
            description: row.try_get("description")?,
            created_at: instant(row.try_get("created_at")?)?,
            transactions: parts.iter().map(transaction_from).collect::<Result<Vec<Transaction>>>()?,
        }))
    }
}

impl VendorPaymentStore for SqlStore {
    async fn insert_vendor_payment(
        &self,
        vendor_id: VendorId,
        payment: NewVendorPayment,
        ctx: WriteContext,
    ) -> StoreResult<VendorPayment> {
        answer(|| async {
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            let (id, change) =
                write_vendor_payment(&mut db_tx, &calendar, vendor_id, &payment, (&ctx.scope, ctx.at)).await?;
            // The figures are applied at the end; the payment read back does not show them.
            let recorded = Self::vendor_payment_in(&mut db_tx, id).await?;
            commit_moving(db_tx, &ctx, ("create", Entity::VendorPayment, id), recorded, Some(&change)).await
        })
        .await
    }

    async fn get_vendor_payment(&self, id: VendorPaymentId) -> StoreResult<Option<VendorPayment>> {
        self.answer_read(|| async move { Self::vendor_payment_in(&mut *self.read().await?, id.get()).await }).await
    }

    async fn delete_vendor_payment(&self, id: VendorPaymentId, ctx: WriteContext) -> StoreResult<()> {
        answer(|| async {
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            // D51: a line holding the vendor payment is set back; D48: that lock before its rows'.
            lock(&mut db_tx, Lock::BankStatements).await?;
            let parts = sqlx::query(concat!(
                "SELECT id, invoice_id FROM transactions WHERE vendor_payment_id = $1 AND is_active ORDER BY id",
                for_update!()
            ))
            .bind(id.get())
            .fetch_all(&mut *db_tx)
            .await?;
            if parts.is_empty() {
                return refused(StoreError::NotFound(Entity::VendorPayment));
            }
            // D48: their invoices' vendors, then the invoices in id order, like every write that
            // locks several.
            let mut invoice_ids =
                parts.iter().map(|part| part.try_get::<i64, _>("invoice_id")).collect::<Result<Vec<i64>, _>>()?;
            invoice_ids.sort_unstable();
            invoice_ids.dedup();
            let vendors = lock_vendors_of(&mut db_tx, &invoice_ids).await?;
            let lock = |list: &str| {
                format!(
                    "SELECT id, vendor_id, branch_id FROM invoices WHERE id IN ({list}) ORDER BY id{}",
                    for_update!()
                )
            };
            for invoice in rows_in(&mut db_tx, &invoice_ids, lock).await? {
                vendors.hold(VendorId(invoice.try_get("vendor_id")?))?;
                // D49: a vendor payment is the writer's when all of its invoices are of their
                // branches.
                let branch = pharmapay_core::ids::BranchId(invoice.try_get("branch_id")?);
                pharmapay_core::branches::rules::check_in_scope(&ctx.scope, branch, Entity::VendorPayment)?;
            }
            let mut change = FigureChange::new();
            // Each invoice's facts before the first part taken off it and after the last.
            let mut invoices: BTreeMap<i64, (InvoiceFacts, InvoiceFacts)> = BTreeMap::new();
            for part in &parts {
                let part_id: i64 = part.try_get("id")?;
                let locked = payment_for_change(&mut db_tx, part_id, &calendar)
                    .await?
                    .ok_or_else(|| crate::error::Error::corrupt("a locked payment is gone"))?;
                sqlx::query("UPDATE transactions SET is_active = FALSE, updated_at = $2 WHERE id = $1")
                    .bind(part_id)
                    .bind(micros(ctx.at))
                    .execute(&mut *db_tx)
                    .await?;
                let (before, after) = take_paid_from(&mut db_tx, locked.invoice_id, locked.scaled, &calendar).await?;
                invoices.entry(locked.invoice_id).or_insert((before, after)).1 = after;
                let facts = locked.facts.on(&before);
                change.row(Some(&facts), Some(&PaymentFacts { is_active: false, ..facts }));
            }
            for (invoice_id, (before, after)) in &invoices {
                change.invoice(*invoice_id, Some(before), Some(after));
            }
            let released = super::lines::release_lines(&mut db_tx, Holder::VendorPayment(id)).await?;
            let head = ("delete", Entity::VendorPayment, id.get());
            commit_announcing(db_tx, &ctx, head, (Some(()), Some(&change)), &released).await
        })
        .await
    }
}
