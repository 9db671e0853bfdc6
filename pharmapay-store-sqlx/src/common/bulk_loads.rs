//! Bulk loads: [`BulkLoadStore`] over SQL. One transaction per call, multi-row inserts with
//! ids reserved up front (so the ids returned follow the input order), no audit entries; the
//! whole batch is checked before any of it is written, and the kept figures (D41) move once
//! per call by what the whole batch contributes.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use pharmapay_core::BusinessCalendar;
use pharmapay_core::branches::rules as branch_rules;
use pharmapay_core::credits::rules as credit_rules;
use pharmapay_core::figures::{FigureChange, InvoiceFacts, KeptFigures, PaymentFacts, VendorFacts};
use pharmapay_core::ids::{InvoiceId, TransactionId, VendorCreditId, VendorId};
use pharmapay_core::invoices::NewInvoice;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::{
    BulkCredit, BulkInvoice, BulkLoadStore, BulkTransaction, BulkVendor, StoreResult, UniqueKey,
};
use pharmapay_core::text::key;
use pharmapay_core::transactions::TransactionType;
use pharmapay_core::transactions::rules as transaction_rules;
use pharmapay_core::vendor_payments::rules::PayableInvoice;
use pharmapay_core::vendors::NewVendor;
use pharmapay_core::vendors::rules as vendor_rules;
use pharmapay_core::{Entity, StoreError};
use sqlx::Row;

use super::binds::{Binds, rows_in};
use super::figures::{self, invoice_facts};
use super::guards::existing_ids;
use super::guards::{check_free, check_new_references, lock_vendors_of};
use super::rows::scaled;
use super::rows::{licences_json, micros, transaction_type, wide_decimal};
use super::{Conn, IMPORT_CHUNK, Result, SqlStore, Table, answer, refused, reserve_ids};
use crate::error::Error;

/// Inserts `records` under the reserved `ids` in multi-row statements of at most
/// [`IMPORT_CHUNK`] rows: `head` names the table and its columns, `values` writes one record's
/// values in that order, every one of them bound, so each full chunk is the same statement text
/// and the connection's statement cache spares it the parsing.
pub(super) async fn insert_chunks<R, const N: usize>(
    conn: &mut Conn,
    head: &str,
    records: &[R],
    ids: &[i64],
    values: impl Fn(&mut Binds, &R, i64) -> [String; N],
) -> Result<()> {
    for (chunk, chunk_ids) in records.chunks(IMPORT_CHUNK).zip(ids.chunks(IMPORT_CHUNK)) {
        let mut binds = Binds::in_order();
        let rows: Vec<String> = chunk
            .iter()
            .zip(chunk_ids)
            .map(|(record, id)| format!("({})", values(&mut binds, record, *id).join(", ")))
            .collect();
        binds.query(format!("{head} VALUES {}", rows.join(", "))).execute(&mut *conn).await?;
    }
    Ok(())
}

/// The head of a multi-row insert of vendors under reserved ids, [`vendor_values`]' columns.
pub(super) const VENDOR_INSERT: &str = "INSERT INTO vendors (id, name, name_key, vendor_type, address, phone, email, \
     drug_license_number1, drug_license_number2, additional_drug_license_numbers, is_active, created_at, updated_at, \
     drug_license_valid_until, gstin)";

/// One vendor's values for [`VENDOR_INSERT`].
pub(super) fn vendor_values(
    binds: &mut Binds,
    vendor: &NewVendor,
    is_active: bool,
    at: Timestamp,
    id: i64,
) -> [String; 15] {
    let at = micros(at);
    [
        binds.int(id),
        binds.text(vendor.name.clone()),
        binds.text(key(&vendor.name)),
        binds.text(vendor.vendor_type.name()),
        binds.opt_text(vendor.address.clone()),
        binds.opt_text(vendor.phone.clone()),
        binds.opt_text(vendor.email.clone()),
        binds.opt_text(vendor.drug_license_number1.clone()),
        binds.opt_text(vendor.drug_license_number2.clone()),
        binds.text(licences_json(&vendor.additional_drug_license_numbers)),
        binds.flag(is_active),
        binds.int(at),
        binds.int(at),
        binds.int(vendor.drug_license_valid_until.map(micros)),
        binds.opt_text(vendor.gstin.as_ref().map(|gstin| gstin.as_str().to_owned())),
    ]
}

/// The head of a multi-row insert of invoices under reserved ids, [`invoice_values`]' columns.
pub(super) const INVOICE_INSERT: &str = "INSERT INTO invoices (id, vendor_id, invoice_number, number_key, amount, \
     invoice_date, due_date, description, is_active, created_at, updated_at, branch_id)";

/// One invoice's values for [`INVOICE_INSERT`].
pub(super) fn invoice_values(
    binds: &mut Binds,
    invoice: &NewInvoice,
    is_active: bool,
    at: Timestamp,
    id: i64,
) -> [String; 12] {
    let at = micros(at);
    [
        binds.int(id),
        binds.int(invoice.vendor_id.get()),
        binds.text(invoice.invoice_number.clone()),
        binds.text(key(&invoice.invoice_number)),
        binds.int(invoice.amount.to_scaled()),
        binds.int(micros(invoice.invoice_date)),
        binds.int(micros(invoice.due_date)),
        binds.opt_text(invoice.description.clone()),
        binds.flag(is_active),
        binds.int(at),
        binds.int(at),
        binds.int(branch_rules::branch_of_create(invoice.branch_id).get()),
    ]
}

impl BulkLoadStore for SqlStore {
    async fn begin_bulk_load(&self) -> StoreResult<()> {
        answer(|| super::bulk::defer(self.writer())).await
    }

    async fn finish_bulk_load(&self) -> StoreResult<()> {
        answer(|| super::bulk::rebuild_deferred(self.writer(), false)).await
    }

    async fn load_vendors(&self, vendors: Vec<BulkVendor>) -> StoreResult<Vec<VendorId>> {
        answer(|| async {
            for imported in &vendors {
                vendor_rules::check_insert(imported.vendor.vendor_type)?;
            }
            if vendors.is_empty() {
                return Ok(Vec::new());
            }
            let mut db_tx = self.begin().await?;
            // D37: the active vendors' GSTINs, each free among stored active vendors and the batch.
            let mut gstins = HashSet::new();
            for imported in vendors.iter().filter(|imported| imported.is_active) {
                let Some(gstin) = &imported.vendor.gstin else { continue };
                if !gstins.insert(gstin.as_str()) {
                    return refused(StoreError::Conflict(UniqueKey::Gstin));
                }
                check_free(&mut db_tx, UniqueKey::Gstin, gstin.as_str(), None).await?;
            }
            let ids = reserve_ids(&mut db_tx, Table::Vendors, vendors.len()).await?;
            insert_chunks(&mut db_tx, VENDOR_INSERT, &vendors, &ids, |binds, imported, id| {
                vendor_values(binds, &imported.vendor, imported.is_active, imported.created_at, id)
            })
            .await?;
            let facts = vendors.iter().map(|imported| VendorFacts { is_active: imported.is_active });
            figures::apply(&mut db_tx, &KeptFigures::recount(facts).as_change()).await?;
            db_tx.commit().await?;
            Ok(ids.into_iter().map(VendorId).collect())
        })
        .await
    }

    async fn load_invoices(&self, invoices: Vec<BulkInvoice>) -> StoreResult<Vec<InvoiceId>> {
        answer(|| async {
            if invoices.is_empty() {
                return Ok(Vec::new());
            }
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            // Check the whole batch before writing any of it, in input order, as the memory store
            // does: the first invoice with a missing vendor or a taken number decides the error.
            let vendor_ids: BTreeSet<i64> = invoices.iter().map(|imported| imported.invoice.vendor_id.get()).collect();
            let vendors = existing_ids(&mut db_tx, "vendors", &vendor_ids).await?;
            let active_keys: BTreeSet<String> = invoices
                .iter()
                .filter(|imported| imported.is_active)
                .map(|imported| key(&imported.invoice.invoice_number))
                .collect();
            let taken = self::taken_numbers(&mut db_tx, &active_keys).await?;
            let mut batch_keys = HashSet::new();
            for imported in &invoices {
                if !vendors.contains(&imported.invoice.vendor_id.get()) {
                    return refused(StoreError::ParentInactive(Entity::Vendor));
                }
                if imported.is_active {
                    let number_key = key(&imported.invoice.invoice_number);
                    if taken.contains(&number_key) || !batch_keys.insert(number_key) {
                        return refused(StoreError::Conflict(UniqueKey::InvoiceNumber));
                    }
                }
            }
            let ids = reserve_ids(&mut db_tx, Table::Invoices, invoices.len()).await?;
            insert_chunks(&mut db_tx, INVOICE_INSERT, &invoices, &ids, |binds, imported, id| {
                invoice_values(binds, &imported.invoice, imported.is_active, imported.created_at, id)
            })
            .await?;
            let facts = invoices.iter().map(|imported| InvoiceFacts {
                vendor_id: imported.invoice.vendor_id,
                branch_id: branch_rules::branch_of_create(imported.invoice.branch_id),
                is_active: imported.is_active,
                amount: imported.invoice.amount.get(),
                paid: Decimal::ZERO,
                credited: Decimal::ZERO,
                due_date: imported.invoice.due_date,
                day: calendar.date_of(imported.invoice.invoice_date),
            });
            figures::apply(&mut db_tx, &KeptFigures::recount(facts).as_change()).await?;
            db_tx.commit().await?;
            Ok(ids.into_iter().map(InvoiceId).collect())
        })
        .await
    }

    async fn load_credits(&self, credits: Vec<BulkCredit>) -> StoreResult<Vec<VendorCreditId>> {
        answer(|| async {
            if credits.is_empty() {
                return Ok(Vec::new());
            }
            self.load_credit_batch(&credits).await
        })
        .await
    }

    async fn load_transactions(&self, transactions: Vec<BulkTransaction>) -> StoreResult<Vec<TransactionId>> {
        answer(|| async {
            if transactions.is_empty() {
                return Ok(Vec::new());
            }
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            // References are locked before any row, as in every write of one (D30).
            let ids = reserve_ids(&mut db_tx, Table::Transactions, transactions.len()).await?;
            check_imported_references(&mut db_tx, &transactions, &ids).await?;
            let invoice_ids: BTreeSet<i64> =
                transactions.iter().map(|imported| imported.transaction.invoice_id.get()).collect();
            // D48: the invoices' vendors first, then the invoices.
            let listed: Vec<i64> = invoice_ids.iter().copied().collect();
            let vendors = lock_vendors_of(&mut db_tx, &listed).await?;
            let invoices = locked_invoices(&mut db_tx, &invoice_ids, &calendar).await?;
            if invoices.len() != invoice_ids.len() {
                return refused(StoreError::ParentInactive(Entity::Invoice));
            }
            for facts in invoices.values() {
                vendors.hold(facts.vendor_id)?;
            }
            // The paid totals grow by the active payments imported (D10), and stay within the
            // largest amount (D1).
            let mut sums: BTreeMap<i64, i128> = BTreeMap::new();
            for imported in transactions.iter().filter(|imported| imported.is_active) {
                *sums.entry(imported.transaction.invoice_id.get()).or_default() +=
                    i128::from(imported.transaction.amount.to_scaled());
            }
            let mut change = FigureChange::new();
            for (invoice, sum) in &sums {
                let before = invoices.get(invoice).copied().ok_or_else(|| Error::corrupt("a locked invoice is gone"))?;
                let after = InvoiceFacts { paid: before.paid + wide_decimal(*sum), ..before };
                transaction_rules::check_paid_total(after.paid)?;
                change.row(Some(&before), Some(&after));
            }
            for imported in &transactions {
                let payment = &imported.transaction;
                let invoice = invoices
                    .get(&payment.invoice_id.get())
                    .ok_or_else(|| Error::corrupt("a locked invoice is gone"))?;
                let facts = PaymentFacts::new(
                    imported.is_active,
                    payment.amount.get(),
                    payment.transaction_date,
                    &calendar,
                    invoice,
                );
                change.row(None, Some(&facts));
            }
            let head = "INSERT INTO transactions (id, invoice_id, amount, transaction_date, transaction_type, description, \
                     is_active, created_at, updated_at, reference, reference_key, vendor_id)";
            insert_chunks(&mut db_tx, head, &transactions, &ids, |binds, imported, id| {
                let payment = &imported.transaction;
                let at = micros(imported.created_at);
                let vendor_id = invoices.get(&payment.invoice_id.get()).map_or(0, |invoice| invoice.vendor_id.get());
                [
                    binds.int(id),
                    binds.int(payment.invoice_id.get()),
                    binds.int(payment.amount.to_scaled()),
                    binds.int(micros(payment.transaction_date)),
                    binds.text(payment.transaction_type.name()),
                    binds.opt_text(payment.description.clone()),
                    binds.flag(imported.is_active),
                    binds.int(at),
                    binds.int(at),
                    binds.opt_text(payment.reference.as_ref().map(|reference| reference.as_str().to_owned())),
                    binds.opt_text(payment.reference.as_ref().map(|reference| reference.key().to_owned())),
                    binds.int(vendor_id),
                ]
            })
            .await?;
            let added = sums
                .into_iter()
                .map(|(invoice, sum)| {
                    Ok((invoice, i64::try_from(sum).map_err(|_| Error::corrupt("a paid total overflows"))?))
                })
                .collect::<Result<Vec<(i64, i64)>>>()?;
            for chunk in added.chunks(IMPORT_CHUNK) {
                let mut binds = Binds::in_order();
                let rows: Vec<String> =
                    chunk.iter().map(|(invoice, sum)| format!("({}, {})", binds.int(*invoice), binds.int(*sum))).collect();
                let sql = format!(
                    "UPDATE invoices SET paid = paid + added.column2 FROM (VALUES {}) AS added \
                     WHERE invoices.id = added.column1",
                    rows.join(", ")
                );
                binds.query(sql).execute(&mut *db_tx).await?;
            }
            figures::apply(&mut db_tx, &change).await?;
            db_tx.commit().await?;
            Ok(ids.into_iter().map(TransactionId).collect())
        })
        .await
    }
}

impl SqlStore {
    /// [`BulkLoadStore::import_credits`]: checks the whole batch (vendors, numbers, decisions, and
    /// applications over their invoices, locked after their vendors, as the batch leaves them),
    /// then writes the credits, their applications and the invoices' credited totals in
    /// multi-row statements, and moves the kept figures once.
    async fn load_credit_batch(&self, credits: &[BulkCredit]) -> Result<Vec<VendorCreditId>> {
        let (mut db_tx, calendar) = self.begin_with_calendar().await?;
        let vendor_ids: BTreeSet<i64> = credits.iter().map(|imported| imported.credit.vendor_id.get()).collect();
        let vendors = existing_ids(&mut db_tx, "vendors", &vendor_ids).await?;
        let branch_ids: BTreeSet<i64> =
            credits.iter().map(|imported| branch_rules::branch_of_create(imported.credit.branch_id).get()).collect();
        if existing_ids(&mut db_tx, "branches", &branch_ids).await?.len() < branch_ids.len() {
            return refused(StoreError::ParentInactive(Entity::Branch));
        }
        let listed: Vec<i64> = vendor_ids.iter().copied().collect();
        let sql = |list: &str| {
            format!("SELECT vendor_id, number_key FROM vendor_credits WHERE is_active AND vendor_id IN ({list})")
        };
        let mut taken: HashSet<(i64, String)> = rows_in(&mut db_tx, &listed, sql)
            .await?
            .iter()
            .map(|row| Ok((row.try_get::<i64, _>("vendor_id")?, row.try_get::<String, _>("number_key")?)))
            .collect::<Result<_>>()?;
        // D48: the invoices' vendors, then the invoices, as every write that credits them.
        let invoice_ids: BTreeSet<i64> = credits
            .iter()
            .filter_map(|imported| imported.application.as_ref()?.allocations.as_ref())
            .flatten()
            .map(|allocation| allocation.invoice_id.get())
            .collect();
        let ordered: Vec<i64> = invoice_ids.iter().copied().collect();
        lock_vendors_of(&mut db_tx, &ordered).await?;
        let mut invoices: HashMap<i64, InvoiceFacts> = locked_invoices(&mut db_tx, &invoice_ids, &calendar).await?;
        let mut plans = Vec::with_capacity(credits.len());
        let mut change = FigureChange::new();
        for imported in credits {
            let vendor_id = imported.credit.vendor_id.get();
            if !vendors.contains(&vendor_id) {
                return refused(StoreError::ParentInactive(Entity::Vendor));
            }
            if imported.is_active && !taken.insert((vendor_id, key(&imported.credit.credit_number))) {
                return refused(StoreError::Conflict(UniqueKey::CreditNumber));
            }
            let mut facts = credit_rules::check_import(imported, &calendar)?;
            let mut shares = Vec::new();
            if let (Some(application), true) = (&imported.application, imported.is_active) {
                // The invoices its allocations name, as the batch left them so far; explicit
                // allocations are split as listed, so the rule reads no invoice dates.
                let payable: Vec<PayableInvoice> = application
                    .allocations
                    .iter()
                    .flatten()
                    .filter_map(|allocation| {
                        let invoice = invoices.get(&allocation.invoice_id.get())?;
                        Some(PayableInvoice {
                            id: allocation.invoice_id,
                            vendor_id: invoice.vendor_id,
                            branch_id: invoice.branch_id,
                            is_active: invoice.is_active,
                            pending: invoice.pending(),
                            due_date: invoice.due_date,
                            invoice_date: invoice.due_date,
                        })
                    })
                    .collect();
                let at = application.date.unwrap_or(imported.created_at);
                for share in credit_rules::plan_application(&facts, application, at, &payable)? {
                    let invoice = invoices
                        .get_mut(&share.invoice_id.get())
                        .ok_or_else(|| Error::corrupt("a locked invoice is gone"))?;
                    let after = InvoiceFacts { credited: invoice.credited + share.amount.get(), ..*invoice };
                    change.row(Some(&*invoice), Some(&after));
                    *invoice = after;
                    facts.applied += share.amount.get();
                    shares.push((share, at));
                }
            }
            change.row(None, Some(&facts));
            plans.push((facts, shares));
        }
        let ids = reserve_ids(&mut db_tx, Table::Credits, credits.len()).await?;
        let head = "INSERT INTO vendor_credits (id, vendor_id, credit_number, number_key, kind, claimed, claim_date, \
                    against_invoice_id, accepted, decision_date, distributor_reference, applied, description, is_active, \
                    created_at, updated_at, branch_id)";
        let rows = credits
            .iter()
            .zip(&plans)
            .map(|(imported, (facts, _))| {
                let accepted =
                    imported.decision.as_ref().map(|decision| scaled(decision.accepted_amount)).transpose()?;
                Ok((imported, scaled(facts.applied)?, accepted))
            })
            .collect::<Result<Vec<(&BulkCredit, i64, Option<i64>)>>>()?;
        insert_chunks(&mut db_tx, head, &rows, &ids, |binds, (imported, applied, accepted), id| {
            let (credit, decision) = (&imported.credit, imported.decision.as_ref());
            let at = micros(imported.created_at);
            [
                binds.int(id),
                binds.int(credit.vendor_id.get()),
                binds.text(credit.credit_number.clone()),
                binds.text(key(&credit.credit_number)),
                binds.text(credit.kind.name()),
                binds.int(credit.claimed_amount.to_scaled()),
                binds.int(micros(credit.claim_date)),
                binds.int(credit.against_invoice_id.map(InvoiceId::get)),
                binds.int(*accepted),
                binds.int(decision.map(|decision| micros(decision.decision_date))),
                binds.opt_text(decision.and_then(|decision| decision.distributor_reference.clone())),
                binds.int(*applied),
                binds.opt_text(credit.description.clone()),
                binds.flag(imported.is_active),
                binds.int(at),
                binds.int(at),
                binds.int(branch_rules::branch_of_create(credit.branch_id).get()),
            ]
        })
        .await?;
        let applications: Vec<(i64, i64, i64, i64, i64)> = ids
            .iter()
            .zip(credits.iter().zip(&plans))
            .flat_map(|(id, (imported, (_, shares)))| {
                shares.iter().map(move |(share, at)| {
                    (*id, share.invoice_id.get(), share.amount.to_scaled(), micros(*at), micros(imported.created_at))
                })
            })
            .collect();
        let application_ids = reserve_ids(&mut db_tx, Table::CreditApplications, applications.len()).await?;
        let head = "INSERT INTO credit_applications (id, credit_id, invoice_id, amount, date, is_active, created_at)";
        insert_chunks(&mut db_tx, head, &applications, &application_ids, |binds, row, id| {
            let (credit_id, invoice_id, amount, date, created_at) = *row;
            [
                binds.int(id),
                binds.int(credit_id),
                binds.int(invoice_id),
                binds.int(amount),
                binds.int(date),
                binds.flag(true),
                binds.int(created_at),
            ]
        })
        .await?;
        let mut added: BTreeMap<i64, i64> = BTreeMap::new();
        for (_, invoice_id, amount, _, _) in &applications {
            *added.entry(*invoice_id).or_default() += amount;
        }
        let added: Vec<(i64, i64)> = added.into_iter().collect();
        for chunk in added.chunks(IMPORT_CHUNK) {
            let mut binds = Binds::in_order();
            let rows: Vec<String> =
                chunk.iter().map(|(invoice, sum)| format!("({}, {})", binds.int(*invoice), binds.int(*sum))).collect();
            let sql = format!(
                "UPDATE invoices SET credited = credited + added.column2 FROM (VALUES {}) AS added \
                 WHERE invoices.id = added.column1",
                rows.join(", ")
            );
            binds.query(sql).execute(&mut *db_tx).await?;
        }
        figures::apply(&mut db_tx, &change).await?;
        db_tx.commit().await?;
        Ok(ids.into_iter().map(VendorCreditId).collect())
    }
}

/// D30: refuses an import whose active payments carry a reference that a stored active payment
/// of the same type holds, or that an earlier payment of the batch (with the id `ids` gives it)
/// carries. SQLite holds the database for the write; PostgreSQL takes each reference's lock.
async fn check_imported_references(conn: &mut Conn, transactions: &[BulkTransaction], ids: &[i64]) -> Result<()> {
    let mut keys: BTreeMap<(&'static str, String), i64> = BTreeMap::new();
    for (imported, id) in transactions.iter().zip(ids).filter(|(imported, _)| imported.is_active) {
        let payment = &imported.transaction;
        let Some(reference) = &payment.reference else { continue };
        let key = (payment.transaction_type.name(), reference.key().to_owned());
        if let Some(existing) = keys.get(&key) {
            return refused(StoreError::Conflict(UniqueKey::PaymentReference { existing: TransactionId(*existing) }));
        }
        keys.insert(key, *id);
    }
    let keys = keys
        .into_keys()
        .map(|(kind, key)| Ok((transaction_type(kind)?, key)))
        .collect::<Result<Vec<(TransactionType, String)>>>()?;
    check_new_references(conn, &keys).await
}

/// Which of `keys` are numbers of active invoices (D4).
pub(super) async fn taken_numbers(conn: &mut Conn, keys: &BTreeSet<String>) -> Result<HashSet<String>> {
    let keys: Vec<String> = keys.iter().cloned().collect();
    let sql = |list: &str| format!("SELECT number_key FROM invoices WHERE is_active AND number_key IN ({list})");
    rows_in(conn, &keys, sql).await?.iter().map(|row| Ok(row.try_get::<String, _>(0)?)).collect()
}

/// The facts of the invoices among `ids` that exist, locked until the transaction ends.
pub(super) async fn locked_invoices(
    conn: &mut Conn,
    ids: &BTreeSet<i64>,
    calendar: &BusinessCalendar,
) -> Result<HashMap<i64, InvoiceFacts>> {
    let ids: Vec<i64> = ids.iter().copied().collect();
    let sql = |list: &str| {
        format!(
            "SELECT id, vendor_id, branch_id, is_active, amount, paid, credited, due_date, invoice_date FROM invoices \
             WHERE id IN ({list}) \
             ORDER BY id{}",
            for_update!()
        )
    };
    let rows = rows_in(conn, &ids, sql).await?;
    rows.iter().map(|row| Ok((row.try_get::<i64, _>("id")?, invoice_facts(row, "amount", "paid", calendar)?))).collect()
}
