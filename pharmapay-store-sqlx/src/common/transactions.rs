//! Payments (the spec's transactions) over SQL: [`TransactionStore`].
//!
//! Every payment write reads the business calendar first (the `TimeZone` setting, under which
//! payments are filed by day, D41), then locks in the one order every write keeps (D48): the
//! reference, the payment, the vendors of its invoices, then the invoices in id order, so
//! writers never wait in a cycle (`guards::lock_vendors_of`). It moves its invoice's kept paid total in the same
//! transaction, and `transactions::rules` says whether the invoice may take the payment (D1, D15);
//! the kept figures then move by the change core computes from the payment's and the invoices'
//! facts before and after the write.

use pharmapay_core::BusinessCalendar;
use pharmapay_core::branches::rules as branch_rules;
use pharmapay_core::figures::{FigureChange, InvoiceFacts, KeptCount, PaymentFacts};
use pharmapay_core::ids::{InvoiceId, TransactionId, VendorPaymentId};
use pharmapay_core::invoices::InvoiceBrief;
use pharmapay_core::money::from_scaled;
use pharmapay_core::store::{StoreResult, TransactionStore, WriteContext};
use pharmapay_core::transactions::holders::Holder;
use pharmapay_core::transactions::reference::PaymentReference;
use pharmapay_core::transactions::rules as transaction_rules;
use pharmapay_core::transactions::rules::{PaidInvoice, PaymentWrite};
use pharmapay_core::transactions::{
    NewTransaction, Transaction, TransactionFilter, TransactionQuery, TransactionSortKey, TransactionType,
};
use pharmapay_core::{Entity, Page, StoreError};
use sqlx::Row;

use super::binds::{Binds, branch_condition, conditions, direction, instant_range, page_limits};
use super::figures::{invoice_facts, kept_count, unscaled};
use super::guards::{check_reference, lock_reference, lock_vendors_of};
use super::rows::{amount, instant, invoice_brief_from, micros, transaction_from, transaction_in, transaction_type};
use super::{
    Conn, Result, SqlStore, answer, commit_announcing, commit_moving, lines, lock, refused, row_by_id, set_active,
};
use crate::Lock;
use crate::error::Error;
use crate::statements;

pub(super) fn transaction_conditions(binds: &mut Binds, filter: &TransactionFilter) -> String {
    let mut parts = vec![if filter.is_active { "t.is_active" } else { "NOT t.is_active" }.to_owned()];
    if let Some(invoice_id) = filter.invoice_id {
        parts.push(format!("t.invoice_id = {}", binds.int(invoice_id.get())));
    }
    if let Some(kind) = filter.transaction_type {
        parts.push(format!("t.transaction_type = {}", binds.text(kind.name())));
    }
    if let Some(key) = &filter.reference {
        parts.push(format!("t.reference_key = {}", binds.text(key.clone())));
    }
    instant_range(&mut parts, binds, "t.transaction_date", (filter.from_date, filter.to_date));
    if let Some(branches) = &filter.branches {
        // D49: a payment is of its invoice's branch.
        let invoices = branch_condition(binds, "b.branch_id", branches);
        parts.push(format!("t.invoice_id IN (SELECT b.id FROM invoices b WHERE {invoices})"));
    }
    conditions(parts)
}

pub(super) fn transaction_sort(key: TransactionSortKey) -> &'static str {
    match key {
        TransactionSortKey::TransactionDate => "t.transaction_date",
        TransactionSortKey::Amount => "t.amount",
        TransactionSortKey::TransactionType => "t.transaction_type",
        TransactionSortKey::CreatedAt => "t.created_at",
    }
}

/// A payment locked for a change.
pub(super) struct LockedPayment {
    /// Its invoice.
    pub(super) invoice_id: i64,
    /// Its amount, scaled.
    pub(super) scaled: i64,
    /// Its type.
    pub(super) kind: TransactionType,
    /// Its reference's key.
    pub(super) reference_key: Option<String>,
    /// The vendor payment it is part of.
    pub(super) vendor_payment_id: Option<VendorPaymentId>,
    /// Its facts for the kept figures.
    pub(super) facts: PaymentFacts,
}

/// A payment locked for a change, its facts in `calendar`'s days.
pub(super) async fn payment_for_change(
    conn: &mut Conn,
    id: i64,
    calendar: &BusinessCalendar,
) -> Result<Option<LockedPayment>> {
    let row = row_by_id(
        conn,
        concat!(
            "SELECT invoice_id, amount, transaction_date, transaction_type, reference_key, vendor_payment_id, \
             is_active FROM transactions WHERE id = $1",
            for_update!()
        ),
        id,
    )
    .await?;
    row.map(|row| {
        let scaled: i64 = row.try_get("amount")?;
        let date = instant(row.try_get("transaction_date")?)?;
        Ok(LockedPayment {
            invoice_id: row.try_get("invoice_id")?,
            scaled,
            kind: transaction_type(row.try_get("transaction_type")?)?,
            reference_key: row.try_get("reference_key")?,
            vendor_payment_id: row.try_get::<Option<i64>, _>("vendor_payment_id")?.map(VendorPaymentId),
            facts: PaymentFacts::dated(row.try_get("is_active")?, unscaled(i128::from(scaled)), date, calendar),
        })
    })
    .transpose()
}

/// A payment's type and reference key, read without a lock.
async fn payment_reference(conn: &mut Conn, id: i64) -> Result<Option<(TransactionType, Option<String>)>> {
    let row = row_by_id(conn, "SELECT transaction_type, reference_key FROM transactions WHERE id = $1", id).await?;
    row.map(|row| Ok((transaction_type(row.try_get("transaction_type")?)?, row.try_get("reference_key")?))).transpose()
}

/// Inserts an active payment made at `at`, part of `vendor_payment` if any; answers its id.
pub(super) async fn insert_payment_row(
    conn: &mut Conn,
    transaction: &NewTransaction,
    at: pharmapay_core::jiff::Timestamp,
    vendor_payment: Option<i64>,
) -> Result<i64> {
    let row = sqlx::query(statements::INSERT_PAYMENT)
        .bind(transaction.invoice_id.get())
        .bind(transaction.amount.to_scaled())
        .bind(micros(transaction.transaction_date))
        .bind(transaction.transaction_type.name())
        .bind(transaction.description.clone())
        .bind(micros(at))
        .bind(transaction.reference.as_ref().map(|reference| reference.as_str().to_owned()))
        .bind(transaction.reference.as_ref().map(|reference| reference.key().to_owned()))
        .bind(vendor_payment)
        .fetch_one(&mut *conn)
        .await?;
    Ok(row.try_get(0)?)
}

/// Adds a payment to an invoice's paid total and asks [`transaction_rules::receive`] whether the invoice,
/// as the statement left it, may keep it. One atomic statement adds, locks the invoice row
/// (concurrent payments queue instead of losing updates) and returns the row as it now
/// stands; a refusal returns before the commit, so dropping the transaction undoes the
/// addition. Answers the payment's nested invoice and the invoice's facts before and after.
pub(super) async fn add_paid_to(
    conn: &mut Conn,
    invoice_id: i64,
    scaled: i64,
    write: PaymentWrite,
    calendar: &BusinessCalendar,
) -> Result<(InvoiceBrief, InvoiceFacts, InvoiceFacts)> {
    // RETURNING also gives the payment's nested invoice as it stands after the change, so
    // the new payment need not be read back inside the write transaction.
    let changed = sqlx::query(statements::ADD_PAID).bind(invoice_id).bind(scaled).fetch_optional(&mut *conn).await?;
    let paid_invoice = changed
        .as_ref()
        .map(|row| -> Result<PaidInvoice> {
            Ok(PaidInvoice { is_active: row.try_get("is_active")?, paid: from_scaled(row.try_get("invoice_paid")?) })
        })
        .transpose()?;
    transaction_rules::receive(paid_invoice, write)?;
    let row = changed.ok_or_else(|| Error::corrupt("an invoice the ledger accepted has no row"))?;
    let after = invoice_facts(&row, "invoice_amount", "invoice_paid", calendar)?;
    let before = InvoiceFacts { paid: after.paid - unscaled(i128::from(scaled)), ..after };
    Ok((invoice_brief_from(&row, InvoiceId(invoice_id))?, before, after))
}

/// Takes a payment of `scaled` off an invoice's paid total; answers the invoice's facts before
/// and after.
pub(super) async fn take_paid_from(
    conn: &mut Conn,
    invoice_id: i64,
    scaled: i64,
    calendar: &BusinessCalendar,
) -> Result<(InvoiceFacts, InvoiceFacts)> {
    let row = sqlx::query(
        "UPDATE invoices SET paid = paid - $2 WHERE id = $1 \
         RETURNING vendor_id, branch_id, is_active, amount, paid, credited, due_date, invoice_date",
    )
    .bind(invoice_id)
    .bind(scaled)
    .fetch_one(&mut *conn)
    .await?;
    let after = invoice_facts(&row, "amount", "paid", calendar)?;
    Ok((InvoiceFacts { paid: after.paid + unscaled(i128::from(scaled)), ..after }, after))
}

impl TransactionStore for SqlStore {
    async fn insert_transaction(&self, transaction: NewTransaction, ctx: WriteContext) -> StoreResult<Transaction> {
        answer(|| async {
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            let kind = transaction.transaction_type;
            let key = transaction.reference.as_ref().map(PaymentReference::key);
            lock_reference(&mut db_tx, kind, key).await?;
            let scaled = transaction.amount.to_scaled();
            // D48: the invoice's vendor first, then the invoice.
            let vendors = lock_vendors_of(&mut db_tx, &[transaction.invoice_id.get()]).await?;
            let (invoice, before, after) =
                add_paid_to(&mut db_tx, transaction.invoice_id.get(), scaled, PaymentWrite::Record, &calendar).await?;
            vendors.hold(after.vendor_id)?;
            // D49: another branch's invoice is as a missing one (the addition is rolled back).
            transaction_rules::check_invoice_reach(&ctx.scope, after.branch_id)?;
            check_reference(&mut db_tx, kind, key, None).await?;
            let id = insert_payment_row(&mut db_tx, &transaction, ctx.at, None).await?;
            let payment =
                PaymentFacts::new(true, transaction.amount.get(), transaction.transaction_date, &calendar, &after);
            let mut change = FigureChange::new();
            change.invoice(transaction.invoice_id.get(), Some(&before), Some(&after)).row(None, Some(&payment));
            // The payment as a read would give it: instants at the stored precision (microseconds)
            // and the amount through the stored scale, exactly as `transaction_from` builds it.
            let created_at = instant(micros(ctx.at))?;
            let created = Transaction {
                id: TransactionId(id),
                invoice_id: transaction.invoice_id,
                amount: amount(scaled)?,
                transaction_date: instant(micros(transaction.transaction_date))?,
                transaction_type: transaction.transaction_type,
                reference: transaction.reference.as_ref().map(|reference| reference.as_str().to_owned()),
                description: transaction.description.clone(),
                vendor_payment_id: None,
                is_active: true,
                created_at,
                updated_at: created_at,
                invoice,
            };
            commit_moving(db_tx, &ctx, ("create", Entity::Transaction, id), Some(created), Some(&change)).await
        })
        .await
    }

    async fn get_transaction(&self, id: TransactionId) -> StoreResult<Option<Transaction>> {
        self.answer_read(|| async move { transaction_in(&mut *self.read().await?, id.get()).await }).await
    }

    async fn update_transaction(
        &self,
        id: TransactionId,
        transaction: NewTransaction,
        ctx: WriteContext,
    ) -> StoreResult<Transaction> {
        answer(|| async {
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            let kind = transaction.transaction_type;
            let key = transaction.reference.as_ref().map(PaymentReference::key);
            lock_reference(&mut db_tx, kind, key).await?;
            let Some(found) = payment_for_change(&mut db_tx, id.get(), &calendar).await? else {
                return refused(StoreError::NotFound(Entity::Transaction));
            };
            let LockedPayment { invoice_id: old_invoice, scaled: old_amount, facts: payment_before, .. } = found;
            if !payment_before.is_active {
                return refused(StoreError::NotFound(Entity::Transaction));
            }
            let new_invoice = transaction.invoice_id.get();
            // D48: both invoices' vendors first, then both invoices in id order, so two moves in
            // opposite directions cannot deadlock.
            let vendors = lock_vendors_of(&mut db_tx, &[old_invoice, new_invoice]).await?;
            let locked = sqlx::query(concat!(
                "SELECT id, vendor_id, branch_id, is_active, amount, paid, credited, due_date, invoice_date FROM invoices \
                 WHERE id = $1 OR id = $2 ORDER BY id",
                for_update!()
            ))
            .bind(old_invoice)
            .bind(new_invoice)
            .fetch_all(&mut *db_tx)
            .await?;
            let new_amount = transaction.amount.to_scaled();
            let (old_decimal, new_decimal) = (unscaled(i128::from(old_amount)), transaction.amount.get());
            let mut change = FigureChange::new();
            let mut target = None;
            // Whose statement shows the payment before (its old invoice's) and after (its new one's).
            let (mut owner_before, mut owner_after) = (None, None);
            for row in &locked {
                let invoice_id: i64 = row.try_get("id")?;
                let before = invoice_facts(row, "amount", "paid", &calendar)?;
                if invoice_id == old_invoice {
                    owner_before = Some(before);
                }
                if invoice_id == new_invoice {
                    owner_after = Some(before);
                }
                vendors.hold(before.vendor_id)?;
                let mut paid = before.paid;
                if invoice_id == old_invoice {
                    paid -= old_decimal;
                }
                if invoice_id == new_invoice {
                    paid += new_decimal;
                    target = Some(PaidInvoice { is_active: before.is_active, paid });
                }
                change.invoice(invoice_id, Some(&before), Some(&InvoiceFacts { paid, ..before }));
            }
            transaction_rules::receive(target, PaymentWrite::Record)?;
            check_reference(&mut db_tx, kind, key, Some(Holder::of(id, found.vendor_payment_id))).await?;
            // One statement for both invoices' paid totals.
            sqlx::query(
                "UPDATE invoices SET paid = paid + CASE WHEN id = $1 THEN $2 ELSE 0 END \
                 + CASE WHEN id = $3 THEN $4 ELSE 0 END WHERE id = $1 OR id = $3",
            )
            .bind(old_invoice)
            .bind(-old_amount)
            .bind(new_invoice)
            .bind(new_amount)
            .execute(&mut *db_tx)
            .await?;
            sqlx::query(
                "UPDATE transactions SET invoice_id = $2, amount = $3, transaction_date = $4, transaction_type = $5, \
                 description = $6, updated_at = $7, reference = $8, reference_key = $9, \
                 vendor_id = (SELECT i.vendor_id FROM invoices i WHERE i.id = $2) WHERE id = $1",
            )
            .bind(id.get())
            .bind(new_invoice)
            .bind(new_amount)
            .bind(micros(transaction.transaction_date))
            .bind(transaction.transaction_type.name())
            .bind(transaction.description.clone())
            .bind(micros(ctx.at))
            .bind(transaction.reference.as_ref().map(|reference| reference.as_str().to_owned()))
            .bind(key.map(str::to_owned))
            .execute(&mut *db_tx)
            .await?;
            let (Some(owner_before), Some(owner_after)) = (owner_before, owner_after) else {
                return Err(Error::corrupt("a payment's invoice was not locked"));
            };
            // D49: another branch's payment is missing to the writer, another branch's invoice
            // as a missing one; refused before the commit, the writes above are rolled back.
            branch_rules::check_in_scope(&ctx.scope, owner_before.branch_id, Entity::Transaction)?;
            transaction_rules::check_invoice_reach(&ctx.scope, owner_after.branch_id)?;
            let payment_before = payment_before.on(&owner_before);
            let payment_after =
                PaymentFacts::new(true, new_decimal, transaction.transaction_date, &calendar, &owner_after);
            change.row(Some(&payment_before), Some(&payment_after));
            let transaction = transaction_in(&mut db_tx, id.get()).await?;
            commit_moving(db_tx, &ctx, ("update", Entity::Transaction, id.get()), transaction, Some(&change)).await
        })
        .await
    }

    async fn delete_transaction(&self, id: TransactionId, ctx: WriteContext) -> StoreResult<()> {
        answer(|| async {
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            // D51: a line holding the payment is set back; D48: that lock before the payment's.
            lock(&mut db_tx, Lock::BankStatements).await?;
            let Some(LockedPayment { invoice_id, scaled, facts: payment_before, .. }) =
                payment_for_change(&mut db_tx, id.get(), &calendar).await?.filter(|found| found.facts.is_active)
            else {
                return refused(StoreError::NotFound(Entity::Transaction));
            };
            // D48: the invoice's vendor before the invoice.
            let vendors = lock_vendors_of(&mut db_tx, &[invoice_id]).await?;
            set_active(
                &mut db_tx,
                "UPDATE transactions SET is_active = FALSE, updated_at = $2 WHERE id = $1",
                id.get(),
                Some(ctx.at),
            )
            .await?;
            let (before, after) = take_paid_from(&mut db_tx, invoice_id, scaled, &calendar).await?;
            vendors.hold(after.vendor_id)?;
            branch_rules::check_in_scope(&ctx.scope, after.branch_id, Entity::Transaction)?;
            let payment_before = payment_before.on(&before);
            let payment_after = PaymentFacts { is_active: false, ..payment_before };
            let mut change = FigureChange::new();
            change.invoice(invoice_id, Some(&before), Some(&after)).row(Some(&payment_before), Some(&payment_after));
            let released = lines::release_lines(&mut db_tx, Holder::Payment(id)).await?;
            let head = ("delete", Entity::Transaction, id.get());
            commit_announcing(db_tx, &ctx, head, (Some(()), Some(&change)), &released).await
        })
        .await
    }

    async fn restore_transaction(&self, id: TransactionId, ctx: WriteContext) -> StoreResult<Transaction> {
        answer(|| async {
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            // The reference's lock comes before the payment's row lock, as in every write of a
            // reference; the reference is read first without a lock and checked again under it.
            let reference = payment_reference(&mut db_tx, id.get()).await?;
            if let Some((kind, key)) = &reference {
                lock_reference(&mut db_tx, *kind, key.as_deref()).await?;
            }
            let Some(found) =
                payment_for_change(&mut db_tx, id.get(), &calendar).await?.filter(|found| !found.facts.is_active)
            else {
                return refused(StoreError::NotFound(Entity::Transaction));
            };
            if reference.as_ref() != Some(&(found.kind, found.reference_key.clone())) {
                // A deleted payment is never changed, so this cannot happen; refuse rather than
                // check a reference whose lock is not held.
                return Err(Error::corrupt("a deleted payment's reference changed during its restore"));
            }
            let LockedPayment { invoice_id, scaled, facts: payment_before, .. } = found;
            // D48: the invoice's vendor before the invoice.
            let vendors = lock_vendors_of(&mut db_tx, &[invoice_id]).await?;
            let (_, before, after) =
                add_paid_to(&mut db_tx, invoice_id, scaled, PaymentWrite::Restore, &calendar).await?;
            vendors.hold(after.vendor_id)?;
            branch_rules::check_in_scope(&ctx.scope, after.branch_id, Entity::Transaction)?;
            let key = found.reference_key.as_deref();
            check_reference(&mut db_tx, found.kind, key, Some(Holder::of(id, found.vendor_payment_id))).await?;
            set_active(
                &mut db_tx,
                "UPDATE transactions SET is_active = TRUE, updated_at = $2 WHERE id = $1",
                id.get(),
                Some(ctx.at),
            )
            .await?;
            let payment_before = payment_before.on(&before);
            let payment_after = PaymentFacts { is_active: true, ..payment_before }.on(&after);
            let mut change = FigureChange::new();
            change.invoice(invoice_id, Some(&before), Some(&after)).row(Some(&payment_before), Some(&payment_after));
            let transaction = transaction_in(&mut db_tx, id.get()).await?;
            commit_moving(db_tx, &ctx, ("restore", Entity::Transaction, id.get()), transaction, Some(&change)).await
        })
        .await
    }

    async fn list_transactions(&self, query: &TransactionQuery) -> StoreResult<Page<Transaction>> {
        self.answer_read(|| async move {
            let total = |binds: &mut Binds, filter: &str| match KeptCount::of_payments(&query.filter) {
                Some(kept) => kept_count(binds, kept, None),
                None => format!("SELECT COUNT(*) FROM transactions t WHERE {filter}"),
            };
            let mut binds = Binds::default();
            let filter = transaction_conditions(&mut binds, &query.filter);
            let dir = direction(query.sort.dir);
            let sort = transaction_sort(query.sort.key);
            let count = total(&mut binds, &filter);
            let (limit, offset) = page_limits(query.page);
            let sql = format!(
                "SELECT ({count}) AS total_count, {columns} \
                 FROM {from} WHERE {filter} ORDER BY {sort} {dir}, t.id {dir} LIMIT {limit} OFFSET {offset}",
                columns = transaction_columns!(),
                from = transactions_with_invoice!(),
            );
            let recount = || {
                let mut binds = Binds::default();
                let filter = transaction_conditions(&mut binds, &query.filter);
                let count = total(&mut binds, &filter);
                binds.query(count)
            };
            self.page(binds, sql, query.page, transaction_from, recount).await
        })
        .await
    }
}
