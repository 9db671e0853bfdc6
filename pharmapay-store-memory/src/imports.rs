//! The file imports of D45 in memory: [`FileImportStore`] for [`MemoryStore`]. A file's rows
//! are planned by core (`imports::rules`) over the active vendors and the invoices holding the
//! file's numbers, and the plan is written whole or not at all.

use pharmapay_core::ids::{BranchId, InvoiceId, VendorId};
use pharmapay_core::imports::rules as import_rules;
use pharmapay_core::imports::rules::{InvoiceKeys, StoredInvoice, StoredVendor};
use pharmapay_core::imports::{ImportPlan, ImportSummary, InvoiceRow, VendorRow};
use pharmapay_core::store::{FileImportStore, StoreResult, WriteContext};
use pharmapay_core::vendors::NewVendor;
use pharmapay_core::vendors::gstin::Gstin;
use pharmapay_core::{Entity, StoreError};

use crate::{MemoryStore, State};

/// The active vendors, as imports judge them (D45).
fn active_vendors(state: &State) -> Vec<StoredVendor> {
    let stored = |(id, row): (&i64, &crate::VendorRow)| StoredVendor {
        id: VendorId(*id),
        fields: NewVendor {
            name: row.name.clone(),
            vendor_type: row.vendor_type,
            address: row.address.clone(),
            phone: row.phone.clone(),
            email: row.email.clone(),
            drug_license_number1: row.drug_license_number1.clone(),
            drug_license_number2: row.drug_license_number2.clone(),
            additional_drug_license_numbers: Vec::new(),
            drug_license_valid_until: row.drug_license_valid_until,
            gstin: row.gstin.as_deref().and_then(|gstin| Gstin::parse(gstin).ok()),
        },
    };
    state.vendors.iter().filter(|(_, row)| row.is_active).map(stored).collect()
}

/// Ends an import of `row_count` rows as `plan` says: unless `dry_run`, each record is added
/// by `add`, which answers its id and the values written, and gets its `create` audit entry as a
/// record of `entity` (D22); the claim of `ctx` is completed with the summary (D23).
fn write_plan<T>(
    state: &mut State,
    ctx: &WriteContext,
    (dry_run, row_count): (bool, usize),
    plan: ImportPlan<T>,
    entity: Entity,
    mut add: impl FnMut(&mut State, T) -> (i64, String),
) -> ImportSummary {
    let summary = plan.summary(dry_run, row_count);
    if dry_run {
        return summary;
    }
    for (_, record) in plan.create {
        let (id, changes) = add(state, record);
        let mut entry = ctx.audit("create", entity, Some(id));
        entry.changes = Some(changes);
        state.audit(entry);
        // D47: one `created` event per record.
        state.announce(ctx, ctx.announcements(("create", entity, id), &[], []));
    }
    if let Some(ticket) = &ctx.idempotency {
        state.complete_claim(ticket, summary.to_claim_id());
    }
    summary
}

impl FileImportStore for MemoryStore {
    async fn import_invoice_rows(
        &self,
        rows: Vec<InvoiceRow>,
        ctx: WriteContext,
        dry_run: bool,
    ) -> StoreResult<ImportSummary> {
        let mut state = self.write();
        let row_count = rows.len();
        let keys = InvoiceKeys::of(&rows);
        let stored: Vec<StoredInvoice> = state
            .invoices
            .iter()
            .filter(|(_, row)| row.is_active && keys.numbers.contains(&row.number_key))
            .map(|(id, row)| StoredInvoice {
                id: InvoiceId(*id),
                vendor_id: VendorId(row.vendor_id),
                branch_id: BranchId(row.branch_id),
                invoice_number: row.invoice_number.clone(),
                amount: row.amount,
                invoice_date: row.invoice_date,
                due_date: row.due_date,
            })
            .collect();
        let plan = import_rules::plan_invoices_in(
            &ctx.scope,
            rows,
            &active_vendors(&state),
            &state.active_branches(),
            &stored,
            (state.licence_policy(), &state.calendar),
        )
        .map_err(StoreError::Rows)?;
        Ok(write_plan(&mut state, &ctx, (dry_run, row_count), plan, Entity::Invoice, |state, invoice| {
            let changes = invoice.audit_changes();
            (state.add_invoice(invoice, true, ctx.at), changes)
        }))
    }

    async fn import_vendor_rows(
        &self,
        rows: Vec<VendorRow>,
        ctx: WriteContext,
        dry_run: bool,
    ) -> StoreResult<ImportSummary> {
        let mut state = self.write();
        let row_count = rows.len();
        let plan =
            import_rules::plan_vendors(rows, &active_vendors(&state), &state.calendar).map_err(StoreError::Rows)?;
        Ok(write_plan(&mut state, &ctx, (dry_run, row_count), plan, Entity::Vendor, |state, vendor| {
            let changes = vendor.audit_changes();
            (state.add_vendor(vendor, true, ctx.at), changes)
        }))
    }
}
