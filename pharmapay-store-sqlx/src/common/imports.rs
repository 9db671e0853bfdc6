//! Imported files (D45): [`FileImportStore`] over SQL. One transaction per file: it finds the
//! active vendors the rows name and locks them by id in ascending order (the order every write
//! locks vendors in), loads the active invoices holding the file's numbers, asks
//! `imports::rules` what the rows create, and writes the plan in multi-row statements with an
//! audit entry per record (D22), the kept figures it moves (D41) and the idempotency claim
//! (D23). A dry run rolls back before writing anything.
//!
//! A vendor import first takes the vendor imports' lock (`Lock::VendorImports`), so a second
//! import of the same new names waits, then finds the first one's vendors and counts its rows
//! `unchanged` (D51): locking the vendors it finds cannot serialise two imports of vendors
//! that do not exist yet, and one lock per name would exhaust PostgreSQL's lock table.

use std::collections::BTreeSet;

use pharmapay_core::branches::rules as branch_rules;
use pharmapay_core::figures::{InvoiceFacts, KeptFigures, VendorFacts};
use pharmapay_core::ids::BranchId;
use pharmapay_core::ids::{InvoiceId, VendorId};
use pharmapay_core::imports::rules as import_rules;
use pharmapay_core::imports::rules::{InvoiceKeys, StoredInvoice, StoredVendor, VendorKeys};
use pharmapay_core::imports::{ImportPlan, ImportSummary, InvoiceRow, VendorRow};
use pharmapay_core::invoices::NewInvoice;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::{FileImportStore, StoreResult, WriteContext};
use pharmapay_core::vendors::NewVendor;
use pharmapay_core::vendors::gstin::Gstin;
use pharmapay_core::{Entity, StoreError};
use sqlx::Row;

use super::binds::{Binds, rows_in};
use super::branches::active_branches;
use super::bulk_loads::{INVOICE_INSERT, VENDOR_INSERT, insert_chunks, invoice_values, vendor_values};
use super::invoices::licence_policy;
use super::rows::{amount, instant, micros, vendor_type};
use super::{Conn, JSON_TEXTS, Result, SqlStore, Table, WriteTx, answer, events, figures, lock, reserve_ids};
use crate::Lock;
use crate::error::Error;

/// The active vendors whose name key is among `names` or whose GSTIN is among `gstins`, locked
/// until the transaction ends: their ids are found first, then locked in ascending order.
async fn locked_vendors(
    conn: &mut Conn,
    names: &BTreeSet<String>,
    gstins: &BTreeSet<String>,
) -> Result<Vec<StoredVendor>> {
    let mut ids = BTreeSet::new();
    for (column, values) in [("name_key", names), ("gstin", gstins)] {
        let sql = format!("SELECT id FROM vendors WHERE is_active AND {column} IN ({JSON_TEXTS})");
        for row in sqlx::query(sqlx::AssertSqlSafe(sql)).bind(json_list(values)).fetch_all(&mut *conn).await? {
            ids.insert(row.try_get::<i64, _>(0)?);
        }
    }
    let ids: Vec<i64> = ids.into_iter().collect();
    let sql = |list: &str| {
        format!(
            "SELECT id, name, vendor_type, address, phone, email, drug_license_number1, drug_license_number2, \
             drug_license_valid_until, gstin FROM vendors WHERE is_active AND id IN ({list}) ORDER BY id{}",
            for_update!()
        )
    };
    let mut vendors = Vec::with_capacity(ids.len());
    for row in rows_in(conn, &ids, sql).await? {
        let gstin: Option<String> = row.try_get("gstin")?;
        vendors.push(StoredVendor {
            id: VendorId(row.try_get("id")?),
            fields: NewVendor {
                name: row.try_get("name")?,
                vendor_type: vendor_type(row.try_get("vendor_type")?)?,
                address: row.try_get("address")?,
                phone: row.try_get("phone")?,
                email: row.try_get("email")?,
                drug_license_number1: row.try_get("drug_license_number1")?,
                drug_license_number2: row.try_get("drug_license_number2")?,
                additional_drug_license_numbers: Vec::new(),
                drug_license_valid_until: row
                    .try_get::<Option<i64>, _>("drug_license_valid_until")?
                    .map(instant)
                    .transpose()?,
                gstin: gstin
                    .as_deref()
                    .map(Gstin::parse)
                    .transpose()
                    .map_err(|error| Error::corrupt(error.to_string()))?,
            },
        });
    }
    Ok(vendors)
}

/// `values` as the JSON array [`JSON_TEXTS`] reads.
fn json_list(values: &BTreeSet<String>) -> String {
    serde_json::to_string(values).unwrap_or_else(|_| "[]".to_owned())
}

/// The active invoices whose number key is among `numbers`, in one statement however many.
async fn stored_invoices(conn: &mut Conn, numbers: &BTreeSet<String>) -> Result<Vec<StoredInvoice>> {
    let sql = format!(
        "SELECT id, vendor_id, branch_id, invoice_number, amount, invoice_date, due_date FROM invoices \
         WHERE is_active AND number_key IN ({JSON_TEXTS})"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(json_list(numbers)).fetch_all(&mut *conn).await?;
    rows.iter()
        .map(|row| {
            Ok(StoredInvoice {
                id: InvoiceId(row.try_get("id")?),
                vendor_id: VendorId(row.try_get("vendor_id")?),
                branch_id: BranchId(row.try_get("branch_id")?),
                invoice_number: row.try_get("invoice_number")?,
                amount: amount(row.try_get("amount")?)?,
                invoice_date: instant(row.try_get("invoice_date")?)?,
                due_date: instant(row.try_get("due_date")?)?,
            })
        })
        .collect()
}

/// How an import's records are written: the table their ids are reserved in, the kind of
/// record they are audited as, and the head of their multi-row insert (`insert_chunks`).
type Written = (Table, Entity, &'static str);

/// Ends an import as `plan` says: a dry run rolls back; otherwise the plan's records are
/// inserted under ids reserved in `table`, each written by `values` and audited as a `create`
/// of `entity` with the values `changes` says (D22), the kept figures move by what `facts`
/// recounts of them (D41), the claim of `ctx` is completed with the summary (D23), and the
/// transaction commits.
async fn write_plan<T, const N: usize>(
    mut db_tx: WriteTx,
    ctx: &WriteContext,
    summary: ImportSummary,
    plan: ImportPlan<T>,
    (table, entity, head): Written,
    (values, changes): (impl Fn(&mut Binds, &T, i64) -> [String; N], impl Fn(&T) -> String),
    facts: impl FnOnce(&[T]) -> KeptFigures,
) -> Result<ImportSummary> {
    if summary.dry_run {
        db_tx.rollback().await?;
        return Ok(summary);
    }
    let records: Vec<T> = plan.create.into_iter().map(|(_, record)| record).collect();
    let ids = reserve_ids(&mut db_tx, table, records.len()).await?;
    insert_chunks(&mut db_tx, head, &records, &ids, values).await?;
    figures::apply(&mut db_tx, &facts(&records).as_change()).await?;
    let entry = ctx.audit("create", entity, None);
    let audit_head = "INSERT INTO audit_log (at, user_id, action, entity, entity_key, entity_id, reason, changes)";
    insert_chunks(&mut db_tx, audit_head, &records, &ids, |binds, record, id| {
        [
            binds.int(micros(entry.at)),
            binds.int(entry.user_id.map(|user| user.get())),
            binds.text(entry.action),
            binds.text(entry.entity),
            binds.text(entry.entity.to_ascii_lowercase()),
            binds.int(id),
            binds.opt_text(None),
            binds.text(changes(record)),
        ]
    })
    .await?;
    // D47: one `created` event per record, each read as it now stands.
    events::write_created(&mut db_tx, ctx, entity, &ids).await?;
    if let Some(ticket) = &ctx.idempotency {
        let mut binds = Binds::default();
        let sql = format!(
            "UPDATE idempotency_keys SET entity_id = {} WHERE user_id = {} AND key = {}",
            binds.int(summary.to_claim_id()),
            binds.int(ticket.user_id.get()),
            binds.text(ticket.key.as_str())
        );
        binds.query(sql).execute(&mut *db_tx).await?;
    }
    db_tx.commit().await?;
    Ok(summary)
}

impl FileImportStore for SqlStore {
    async fn import_invoice_rows(
        &self,
        rows: Vec<InvoiceRow>,
        ctx: WriteContext,
        dry_run: bool,
    ) -> StoreResult<ImportSummary> {
        let keys = InvoiceKeys::of(&rows);
        answer(|| async {
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            // D48, D49: the branches first (shared), then the vendors.
            let branches = active_branches(&mut db_tx).await?;
            let vendors = locked_vendors(&mut db_tx, &keys.vendor_names, &keys.gstins).await?;
            let stored = stored_invoices(&mut db_tx, &keys.numbers).await?;
            let policy = licence_policy(&mut db_tx).await?;
            let plan = import_rules::plan_invoices_in(
                &ctx.scope,
                rows.clone(),
                &vendors,
                &branches,
                &stored,
                (policy, &calendar),
            )
            .map_err(|errors| Error::Refused(StoreError::Rows(errors)))?;
            let summary = plan.summary(dry_run, rows.len());
            let written = (Table::Invoices, Entity::Invoice, INVOICE_INSERT);
            let values = |binds: &mut Binds, invoice: &NewInvoice, id| invoice_values(binds, invoice, true, ctx.at, id);
            write_plan(db_tx, &ctx, summary, plan, written, (values, NewInvoice::audit_changes), |invoices| {
                KeptFigures::recount(invoices.iter().map(|invoice| InvoiceFacts {
                    vendor_id: invoice.vendor_id,
                    branch_id: branch_rules::branch_of_create(invoice.branch_id),
                    is_active: true,
                    amount: invoice.amount.get(),
                    paid: Decimal::ZERO,
                    credited: Decimal::ZERO,
                    due_date: invoice.due_date,
                    day: calendar.date_of(invoice.invoice_date),
                }))
            })
            .await
        })
        .await
    }

    async fn import_vendor_rows(
        &self,
        rows: Vec<VendorRow>,
        ctx: WriteContext,
        dry_run: bool,
    ) -> StoreResult<ImportSummary> {
        let keys = VendorKeys::of(&rows);
        answer(|| async {
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            lock(&mut db_tx, Lock::VendorImports).await?;
            let stored = locked_vendors(&mut db_tx, &keys.names, &keys.gstins).await?;
            let plan = import_rules::plan_vendors(rows.clone(), &stored, &calendar)
                .map_err(|errors| Error::Refused(StoreError::Rows(errors)))?;
            let summary = plan.summary(dry_run, rows.len());
            // Under a race the GSTIN's partial unique index decides, as a Conflict (D37).
            let written = (Table::Vendors, Entity::Vendor, VENDOR_INSERT);
            let values = |binds: &mut Binds, vendor: &NewVendor, id| vendor_values(binds, vendor, true, ctx.at, id);
            write_plan(db_tx, &ctx, summary, plan, written, (values, NewVendor::audit_changes), |vendors| {
                KeptFigures::recount(vendors.iter().map(|_| VendorFacts { is_active: true }))
            })
            .await
        })
        .await
    }
}
