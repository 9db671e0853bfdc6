//! The ledger in memory: [`VendorStore`], [`InvoiceStore`] and [`TransactionStore`] for
//! [`MemoryStore`].
//!
//! Vendors carry totals over their active invoices (D11), read from the kept figures (D41),
//! invoices a status computed from the kept paid total (D10) and numbers unique among active
//! invoices (D4). Every write takes a snapshot of the rows whose figures it may move and keeps
//! the figures as the rows then stand; every payment write moves its invoice's kept paid total
//! under the same lock; [`ledger::receive`] says whether
//! the invoice may take it (D1, D15). The OwnPharmacy rules are [`vendor_rules`]' and restores
//! under an inactive parent are [`restore`]'s to refuse.

use pharmapay_core::domain::invoice::is_open;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use pharmapay_core::domain::gstin::Gstin;
use pharmapay_core::domain::licence::{EXPIRED_LICENSE_POLICY, ExpiredLicensePolicy, LicenseStatus};
use pharmapay_core::domain::{
    Invoice, InvoiceBrief, InvoiceDetail, InvoiceFilter, InvoiceQuery, InvoiceSortKey, InvoiceStatus, NewInvoice,
    NewTransaction, NewVendor, PaymentReference, Transaction, TransactionFilter, TransactionQuery, TransactionSortKey,
    TransactionType, Vendor, VendorBrief, VendorFilter, VendorQuery, VendorSortKey,
};
use pharmapay_core::figures::VendorFigures;
use pharmapay_core::ids::{InvoiceId, TransactionId, VendorId, VendorPaymentId};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::rules::ledger::{self, PaidInvoice, PaymentWrite};
use pharmapay_core::rules::references::{self, Holder, KeyHolder};
use pharmapay_core::rules::{licence, restore, vendors as vendor_rules};
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::{InvoiceStore, StoreResult, TransactionStore, UniqueKey, VendorStore, WriteContext};
use pharmapay_core::text::key;
use pharmapay_core::{Entity, Page, SortDir, StoreError};

use crate::figures::Touch;
use crate::{InvoiceRow, MemoryStore, State, TransactionRow, VendorRow, cmp_then_id};

impl VendorRow {
    /// Replaces the fields a vendor write sets, at `at`.
    pub(crate) fn replace(&mut self, vendor: NewVendor, at: Timestamp) {
        self.name_key = key(&vendor.name);
        self.name = vendor.name;
        self.vendor_type = vendor.vendor_type;
        self.address = vendor.address;
        self.phone = vendor.phone;
        self.email = vendor.email;
        self.drug_license_number1 = vendor.drug_license_number1;
        self.drug_license_number2 = vendor.drug_license_number2;
        self.additional_drug_license_numbers = vendor.additional_drug_license_numbers;
        self.drug_license_valid_until = vendor.drug_license_valid_until;
        self.gstin = vendor.gstin.map(|gstin| gstin.as_str().to_owned());
        self.updated_at = at;
    }
}

impl State {
    /// The vendor's kept figures over its active invoices (D11, D41).
    pub(crate) fn vendor_figures(&self, vendor_id: i64) -> VendorFigures {
        self.figures.vendor(VendorId(vendor_id))
    }

    pub(crate) fn vendor(&self, id: i64) -> Option<Vendor> {
        let row = self.vendors.get(&id)?;
        Some(Vendor {
            id: VendorId(id),
            name: row.name.clone(),
            vendor_type: row.vendor_type,
            address: row.address.clone(),
            phone: row.phone.clone(),
            email: row.email.clone(),
            drug_license_number1: row.drug_license_number1.clone(),
            drug_license_number2: row.drug_license_number2.clone(),
            additional_drug_license_numbers: row.additional_drug_license_numbers.clone(),
            drug_license_valid_until: row.drug_license_valid_until,
            // Computed for today by the engine (D36).
            license_status: LicenseStatus::Unknown,
            gstin: row.gstin.clone(),
            is_active: row.is_active,
            totals: self.vendor_figures(id).totals(),
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }

    pub(crate) fn vendor_brief(&self, id: i64) -> Option<VendorBrief> {
        let row = self.vendors.get(&id)?;
        Some(VendorBrief {
            id: VendorId(id),
            name: row.name.clone(),
            vendor_type: row.vendor_type,
            address: row.address.clone(),
            phone: row.phone.clone(),
            email: row.email.clone(),
            drug_license_number1: row.drug_license_number1.clone(),
            drug_license_number2: row.drug_license_number2.clone(),
            is_active: row.is_active,
        })
    }

    /// Inserts a vendor, active or not, made at `at`; answers its id.
    pub(crate) fn add_vendor(&mut self, vendor: NewVendor, is_active: bool, at: Timestamp) -> i64 {
        let id = self.next("vendor");
        let before = self.snapshot(&[Touch::Vendor(id)]);
        let row = VendorRow {
            name_key: key(&vendor.name),
            name: vendor.name,
            vendor_type: vendor.vendor_type,
            address: vendor.address,
            phone: vendor.phone,
            email: vendor.email,
            drug_license_number1: vendor.drug_license_number1,
            drug_license_number2: vendor.drug_license_number2,
            additional_drug_license_numbers: vendor.additional_drug_license_numbers,
            drug_license_valid_until: vendor.drug_license_valid_until,
            gstin: vendor.gstin.map(|gstin| gstin.as_str().to_owned()),
            is_active,
            created_at: at,
            updated_at: at,
        };
        self.vendors.insert(id, row);
        self.keep_figures(before);
        id
    }

    /// Inserts an invoice with nothing paid yet, active or not, made at `at`, and files it
    /// under its vendor; answers its id.
    pub(crate) fn add_invoice(&mut self, invoice: NewInvoice, is_active: bool, at: Timestamp) -> i64 {
        let id = self.next("invoice");
        let before = self.snapshot(&[Touch::Invoice(id)]);
        let vendor_id = invoice.vendor_id.get();
        let row = InvoiceRow {
            vendor_id,
            number_key: key(&invoice.invoice_number),
            invoice_number: invoice.invoice_number,
            amount: invoice.amount,
            paid: Decimal::ZERO,
            invoice_date: invoice.invoice_date,
            due_date: invoice.due_date,
            description: invoice.description,
            is_active,
            created_at: at,
            updated_at: at,
        };
        self.invoices.insert(id, row);
        self.invoices_by_vendor.entry(vendor_id).or_default().insert(id);
        self.keep_figures(before);
        id
    }

    /// Inserts a payment, active or not, made at `at`; an active one adds to its invoice's paid
    /// total. Answers its id.
    pub(crate) fn add_transaction(
        &mut self,
        transaction: NewTransaction,
        is_active: bool,
        at: Timestamp,
        vendor_payment_id: Option<i64>,
    ) -> i64 {
        let id = self.next("transaction");
        let (invoice_id, amount) = (transaction.invoice_id.get(), transaction.amount);
        let before = self.snapshot(&[Touch::Invoice(invoice_id), Touch::Payment(id)]);
        let row = TransactionRow {
            invoice_id,
            amount,
            transaction_date: transaction.transaction_date,
            transaction_type: transaction.transaction_type,
            reference: transaction.reference,
            description: transaction.description,
            vendor_payment_id,
            is_active,
            created_at: at,
            updated_at: at,
        };
        if let Some(reference) = &row.reference {
            self.payments_by_reference.entry(reference.key().to_owned()).or_default().insert(id);
        }
        if let Some(vendor_payment_id) = vendor_payment_id {
            self.vendor_payment_parts.entry(vendor_payment_id).or_default().push(id);
        }
        self.transactions.insert(id, row);
        if is_active {
            self.add_paid(invoice_id, amount.get());
        }
        self.keep_figures(before);
        id
    }

    /// D37: refuses `gstin` when an active vendor other than `except` holds it.
    pub(crate) fn check_gstin(&self, gstin: Option<&str>, except: Option<i64>) -> StoreResult<()> {
        let Some(gstin) = gstin else { return Ok(()) };
        let taken = self
            .vendors
            .iter()
            .any(|(id, row)| row.is_active && row.gstin.as_deref() == Some(gstin) && Some(*id) != except);
        if taken { Err(StoreError::Conflict(UniqueKey::Gstin)) } else { Ok(()) }
    }

    /// D36: refuses, as [`licence::check_invoice`] decides, an invoice dated `invoice_date` for
    /// the vendor `vendor_id` when the `ExpiredLicensePolicy` setting blocks.
    pub(crate) fn check_licence(&self, vendor_id: i64, invoice_date: Timestamp) -> StoreResult<()> {
        let policy = self
            .settings
            .get(EXPIRED_LICENSE_POLICY)
            .and_then(|setting| ExpiredLicensePolicy::parse(&setting.value))
            .unwrap_or_default();
        let valid_until = self.vendors.get(&vendor_id).and_then(|vendor| vendor.drug_license_valid_until);
        let day_start = self.calendar.start_of(self.calendar.date_of(invoice_date));
        licence::check_invoice(policy, valid_until, day_start)
    }

    pub(crate) fn active_vendor(&self, id: i64) -> bool {
        self.vendors.get(&id).is_some_and(|vendor| vendor.is_active)
    }

    pub(crate) fn invoice(&self, id: i64, today_start: Timestamp) -> Option<Invoice> {
        let row = self.invoices.get(&id)?;
        let vendor_name = self.vendors.get(&row.vendor_id).map(|vendor| vendor.name.clone()).unwrap_or_default();
        let pending = row.amount.get() - row.paid;
        Some(Invoice {
            id: InvoiceId(id),
            vendor_id: VendorId(row.vendor_id),
            vendor_name,
            invoice_number: row.invoice_number.clone(),
            amount: row.amount,
            paid_amount: row.paid.normalize(),
            invoice_date: row.invoice_date,
            due_date: row.due_date,
            description: row.description.clone(),
            is_active: row.is_active,
            created_at: row.created_at,
            updated_at: row.updated_at,
            status: InvoiceStatus::compute(row.is_active, pending, row.due_date, today_start),
        })
    }

    pub(crate) fn invoice_brief(&self, id: i64) -> InvoiceBrief {
        let row = &self.invoices[&id];
        InvoiceBrief {
            id: InvoiceId(id),
            invoice_number: row.invoice_number.clone(),
            vendor_id: VendorId(row.vendor_id),
            vendor_name: self.vendors.get(&row.vendor_id).map(|vendor| vendor.name.clone()).unwrap_or_default(),
            amount: row.amount,
            pending_amount: (row.amount.get() - row.paid).normalize(),
        }
    }

    pub(crate) fn number_taken(&self, number_key: &str, except: Option<i64>) -> bool {
        self.invoices
            .iter()
            .any(|(id, invoice)| invoice.is_active && invoice.number_key == number_key && Some(*id) != except)
    }

    pub(crate) fn active_invoice(&self, id: i64) -> bool {
        self.invoices.get(&id).is_some_and(|invoice| invoice.is_active)
    }

    pub(crate) fn invoice_status(&self, id: i64, today_start: Timestamp) -> InvoiceStatus {
        let row = &self.invoices[&id];
        InvoiceStatus::compute(row.is_active, row.amount.get() - row.paid, row.due_date, today_start)
    }

    pub(crate) fn vendor_name_key(&self, vendor_id: i64) -> &str {
        self.vendors.get(&vendor_id).map(|vendor| vendor.name_key.as_str()).unwrap_or("")
    }

    pub(crate) fn invoice_matches(
        &self,
        id: i64,
        row: &InvoiceRow,
        filter: &InvoiceFilter,
        today_start: Timestamp,
    ) -> bool {
        filter.is_active.is_none_or(|active| row.is_active == active)
            && filter.vendor_id.is_none_or(|vendor| row.vendor_id == vendor.get())
            && filter.invoice_number.as_deref().is_none_or(|number| row.number_key.contains(number))
            && filter.search.as_deref().is_none_or(|search| {
                row.number_key.contains(search) || self.vendor_name_key(row.vendor_id).contains(search)
            })
            && filter.from_date.is_none_or(|from| row.invoice_date >= from)
            && filter.to_date.is_none_or(|to| row.invoice_date <= to)
            && filter.min_amount.is_none_or(|min| row.amount.get() >= min)
            && filter.max_amount.is_none_or(|max| row.amount.get() <= max)
            && filter.status.is_none_or(|status| self.invoice_status(id, today_start) == status)
            && filter.due_window.is_none_or(|(from, before)| {
                // D32: active invoices still owing something, due within the window.
                is_open(row.is_active, row.amount.get() - row.paid) && row.due_date >= from && row.due_date < before
            })
            // D33: overpaid invoices owe less than nothing.
            && filter.overpaid.is_none_or(|overpaid| (row.amount.get() < row.paid) == overpaid)
    }

    pub(crate) fn transaction(&self, id: i64) -> Option<Transaction> {
        let row = self.transactions.get(&id)?;
        Some(Transaction {
            id: TransactionId(id),
            invoice_id: InvoiceId(row.invoice_id),
            amount: row.amount,
            transaction_date: row.transaction_date,
            transaction_type: row.transaction_type,
            reference: row.reference.as_ref().map(|reference| reference.as_str().to_owned()),
            description: row.description.clone(),
            vendor_payment_id: row.vendor_payment_id.map(VendorPaymentId),
            is_active: row.is_active,
            created_at: row.created_at,
            updated_at: row.updated_at,
            invoice: self.invoice_brief(row.invoice_id),
        })
    }

    /// The invoice as it would stand with `added` more paid, for [`ledger::receive`].
    pub(crate) fn paid_invoice_after(&self, invoice_id: i64, added: Decimal) -> Option<PaidInvoice> {
        let invoice = self.invoices.get(&invoice_id)?;
        Some(PaidInvoice { is_active: invoice.is_active, paid: invoice.paid + added })
    }

    /// D30: refuses `reference` among active payments of type `kind` when a payment of another
    /// holder than `writer` holds its key, as [`references::check`] decides.
    pub(crate) fn check_reference(
        &self,
        kind: TransactionType,
        reference: Option<&PaymentReference>,
        writer: Option<Holder>,
    ) -> StoreResult<()> {
        let Some(reference) = reference else { return Ok(()) };
        let holders: Vec<KeyHolder> = self
            .payments_by_reference
            .get(reference.key())
            .into_iter()
            .flatten()
            .filter_map(|id| Some((*id, self.transactions.get(id)?)))
            .filter(|(_, row)| {
                row.is_active
                    && row.transaction_type == kind
                    && row.reference.as_ref().is_some_and(|held| held.key() == reference.key())
            })
            .map(|(id, row)| KeyHolder {
                transaction_id: TransactionId(id),
                vendor_payment_id: row.vendor_payment_id.map(VendorPaymentId),
            })
            .collect();
        references::check(&holders, writer)
    }

    /// The holders of every active payment reference, by type and key: one pass over the
    /// payments for an import that checks thousands of references.
    pub(crate) fn reference_holders(&self) -> HashMap<(TransactionType, String), Vec<KeyHolder>> {
        let mut held: HashMap<(TransactionType, String), Vec<KeyHolder>> = HashMap::new();
        for (id, row) in self.transactions.iter().filter(|(_, row)| row.is_active) {
            let Some(reference) = &row.reference else { continue };
            held.entry((row.transaction_type, reference.key().to_owned())).or_default().push(KeyHolder {
                transaction_id: TransactionId(*id),
                vendor_payment_id: row.vendor_payment_id.map(VendorPaymentId),
            });
        }
        held
    }

    /// The number keys of the active invoices, for an import's many numbers.
    pub(crate) fn active_number_keys(&self) -> HashSet<String> {
        self.invoices.values().filter(|invoice| invoice.is_active).map(|invoice| invoice.number_key.clone()).collect()
    }

    pub(crate) fn add_paid(&mut self, invoice_id: i64, amount: Decimal) {
        if let Some(invoice) = self.invoices.get_mut(&invoice_id) {
            invoice.paid += amount;
        }
    }
}

/// Whether a vendor row matches a list's or an export's filter.
pub(crate) fn vendor_matches(vendor: &VendorRow, filter: &VendorFilter) -> bool {
    vendor.is_active == filter.is_active
        && filter.vendor_type.is_none_or(|vendor_type| vendor.vendor_type == vendor_type)
        && filter.search.as_deref().is_none_or(|search| vendor.name_key.contains(search))
        && filter
            .licence
            .is_none_or(|(status, bounds)| LicenseStatus::of(vendor.drug_license_valid_until, &bounds) == status)
}

impl VendorStore for MemoryStore {
    async fn insert_vendor(&self, vendor: NewVendor, ctx: WriteContext) -> StoreResult<Vendor> {
        vendor_rules::check_insert(vendor.vendor_type)?;
        let mut state = self.write();
        state.check_gstin(vendor.gstin.as_ref().map(Gstin::as_str), None)?;
        let id = state.add_vendor(vendor, true, ctx.at);
        state.finish_write(&ctx, "create", Entity::Vendor, id);
        Ok(state.vendor(id).expect("just written"))
    }

    async fn get_vendor(&self, id: VendorId) -> StoreResult<Option<Vendor>> {
        Ok(self.read().vendor(id.get()))
    }

    async fn update_vendor(&self, id: VendorId, vendor: NewVendor, ctx: WriteContext) -> StoreResult<Vendor> {
        let mut state = self.write();
        let current =
            state.vendors.get(&id.get()).filter(|row| row.is_active).ok_or(StoreError::NotFound(Entity::Vendor))?;
        let current_type = current.vendor_type;
        state.check_gstin(vendor.gstin.as_ref().map(Gstin::as_str), Some(id.get()))?;
        vendor_rules::check_update(current_type, vendor.vendor_type)?;
        let row = state.vendors.get_mut(&id.get()).expect("checked above");
        row.replace(vendor, ctx.at);
        state.finish_write(&ctx, "update", Entity::Vendor, id.get());
        Ok(state.vendor(id.get()).expect("just written"))
    }

    async fn delete_vendor(&self, id: VendorId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        let row =
            state.vendors.get_mut(&id.get()).filter(|row| row.is_active).ok_or(StoreError::NotFound(Entity::Vendor))?;
        vendor_rules::check_delete(row.vendor_type)?;
        let before = state.snapshot(&[Touch::Vendor(id.get())]);
        let row = state.vendors.get_mut(&id.get()).expect("checked above");
        row.is_active = false;
        row.updated_at = ctx.at;
        state.keep_figures(before);
        state.finish_write(&ctx, "delete", Entity::Vendor, id.get());
        Ok(())
    }

    async fn restore_vendor(&self, id: VendorId, ctx: WriteContext) -> StoreResult<Vendor> {
        let mut state = self.write();
        let row =
            state.vendors.get(&id.get()).filter(|row| !row.is_active).ok_or(StoreError::NotFound(Entity::Vendor))?;
        state.check_gstin(row.gstin.clone().as_deref(), Some(id.get()))?;
        let before = state.snapshot(&[Touch::Vendor(id.get())]);
        let row = state.vendors.get_mut(&id.get()).expect("checked above");
        row.is_active = true;
        row.updated_at = ctx.at;
        state.keep_figures(before);
        state.finish_write(&ctx, "restore", Entity::Vendor, id.get());
        Ok(state.vendor(id.get()).expect("just written"))
    }

    async fn list_vendors(&self, query: &VendorQuery) -> StoreResult<Page<Vendor>> {
        let state = self.read();
        let rows: Vec<(SortKey, i64)> = state
            .vendors
            .iter()
            .filter(|(_, vendor)| vendor_matches(vendor, &query.filter))
            .map(|(id, vendor)| {
                let key = match query.sort.key {
                    VendorSortKey::Name => SortKey::Text(&vendor.name_key),
                    VendorSortKey::VendorType => SortKey::Text(vendor.vendor_type.name()),
                    VendorSortKey::OutstandingBalance => SortKey::Money(state.vendor_figures(*id).outstanding()),
                };
                (key, *id)
            })
            .collect();
        let page = query.page.sorted_slice(rows, by_key_then_id(query.sort.dir));
        Ok(page.map(|(_, id)| state.vendor(id).expect("listed above")))
    }
}

impl InvoiceStore for MemoryStore {
    async fn insert_invoice(
        &self,
        invoice: NewInvoice,
        ctx: WriteContext,
        today_start: Timestamp,
    ) -> StoreResult<Invoice> {
        let mut state = self.write();
        let number_key = key(&invoice.invoice_number);
        if !state.active_vendor(invoice.vendor_id.get()) {
            return Err(StoreError::ParentInactive(Entity::Vendor));
        }
        if state.number_taken(&number_key, None) {
            return Err(StoreError::Conflict(UniqueKey::InvoiceNumber));
        }
        state.check_licence(invoice.vendor_id.get(), invoice.invoice_date)?;
        let id = state.add_invoice(invoice, true, ctx.at);
        state.finish_write(&ctx, "create", Entity::Invoice, id);
        Ok(state.invoice(id, today_start).expect("just written"))
    }

    async fn get_invoice(&self, id: InvoiceId, today_start: Timestamp) -> StoreResult<Option<InvoiceDetail>> {
        let state = self.read();
        let Some(invoice) = state.invoice(id.get(), today_start) else { return Ok(None) };
        let vendor = state.vendor_brief(invoice.vendor_id.get()).expect("an invoice's vendor exists");
        Ok(Some(InvoiceDetail { invoice, vendor }))
    }

    async fn update_invoice(
        &self,
        id: InvoiceId,
        invoice: NewInvoice,
        ctx: WriteContext,
        today_start: Timestamp,
    ) -> StoreResult<Invoice> {
        let mut state = self.write();
        if !state.active_invoice(id.get()) {
            return Err(StoreError::NotFound(Entity::Invoice));
        }
        let number_key = key(&invoice.invoice_number);
        if !state.active_vendor(invoice.vendor_id.get()) {
            return Err(StoreError::ParentInactive(Entity::Vendor));
        }
        if state.number_taken(&number_key, Some(id.get())) {
            return Err(StoreError::Conflict(UniqueKey::InvoiceNumber));
        }
        state.check_licence(invoice.vendor_id.get(), invoice.invoice_date)?;
        let before = state.snapshot(&[Touch::Invoice(id.get())]);
        let row = state.invoices.get_mut(&id.get()).expect("checked above");
        let old_vendor = row.vendor_id;
        row.vendor_id = invoice.vendor_id.get();
        row.invoice_number = invoice.invoice_number;
        row.number_key = number_key;
        row.amount = invoice.amount;
        row.invoice_date = invoice.invoice_date;
        row.due_date = invoice.due_date;
        row.description = invoice.description;
        row.updated_at = ctx.at;
        if old_vendor != invoice.vendor_id.get() {
            if let Some(set) = state.invoices_by_vendor.get_mut(&old_vendor) {
                set.remove(&id.get());
            }
            state.invoices_by_vendor.entry(invoice.vendor_id.get()).or_default().insert(id.get());
        }
        state.keep_figures(before);
        state.finish_write(&ctx, "update", Entity::Invoice, id.get());
        Ok(state.invoice(id.get(), today_start).expect("just written"))
    }

    async fn delete_invoice(&self, id: InvoiceId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        state.invoices.get(&id.get()).filter(|row| row.is_active).ok_or(StoreError::NotFound(Entity::Invoice))?;
        let before = state.snapshot(&[Touch::Invoice(id.get())]);
        let row = state.invoices.get_mut(&id.get()).expect("checked above");
        row.is_active = false;
        row.updated_at = ctx.at;
        state.keep_figures(before);
        state.finish_write(&ctx, "delete", Entity::Invoice, id.get());
        Ok(())
    }

    async fn restore_invoice(&self, id: InvoiceId, ctx: WriteContext, today_start: Timestamp) -> StoreResult<Invoice> {
        let mut state = self.write();
        let row =
            state.invoices.get(&id.get()).filter(|row| !row.is_active).ok_or(StoreError::NotFound(Entity::Invoice))?;
        restore::check_parent(Entity::Vendor, state.active_vendor(row.vendor_id))?;
        if state.number_taken(&row.number_key.clone(), Some(id.get())) {
            return Err(StoreError::Conflict(UniqueKey::InvoiceNumber));
        }
        // D48: under Block, restoring is refused as creating would be (D36).
        let (vendor_id, invoice_date) = (row.vendor_id, row.invoice_date);
        state.check_licence(vendor_id, invoice_date)?;
        let before = state.snapshot(&[Touch::Invoice(id.get())]);
        let row = state.invoices.get_mut(&id.get()).expect("checked above");
        row.is_active = true;
        row.updated_at = ctx.at;
        state.keep_figures(before);
        state.finish_write(&ctx, "restore", Entity::Invoice, id.get());
        Ok(state.invoice(id.get(), today_start).expect("just written"))
    }

    async fn list_invoices(&self, query: &InvoiceQuery, today_start: Timestamp) -> StoreResult<Page<Invoice>> {
        let state = self.read();
        let vendor_key =
            |vendor_id: i64| state.vendors.get(&vendor_id).map(|vendor| vendor.name_key.as_str()).unwrap_or("");
        let rows: Vec<(SortKey, i64)> = state
            .invoices
            .iter()
            .filter(|(id, row)| state.invoice_matches(**id, row, &query.filter, today_start))
            .map(|(id, row)| {
                let key = match query.sort.key {
                    InvoiceSortKey::InvoiceDate => SortKey::Instant(row.invoice_date),
                    InvoiceSortKey::DueDate => SortKey::Instant(row.due_date),
                    InvoiceSortKey::Amount => SortKey::Money(row.amount.get()),
                    InvoiceSortKey::PendingAmount => SortKey::Money(row.amount.get() - row.paid),
                    InvoiceSortKey::PaidAmount => SortKey::Money(row.paid),
                    InvoiceSortKey::InvoiceNumber => SortKey::Text(&row.number_key),
                    InvoiceSortKey::VendorName => SortKey::Text(vendor_key(row.vendor_id)),
                };
                (key, *id)
            })
            .collect();
        let page = query.page.sorted_slice(rows, by_key_then_id(query.sort.dir));
        Ok(page.map(|(_, id)| state.invoice(id, today_start).expect("listed above")))
    }
}

/// A listed row's value in its list's order, taken out of the row once: the rows of a long
/// list are compared many times while its page is cut, and reading each value through its row
/// cost a visit to memory far from the list (the first page of 90,000 payments spent half its
/// time in those comparisons). All the rows of one list hold the same variant.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum SortKey<'a> {
    Instant(Timestamp),
    Money(Decimal),
    Text(&'a str),
}

/// The order of a list's `(key, id)` rows in direction `dir`, ties broken by id.
fn by_key_then_id(dir: SortDir) -> impl Fn(&(SortKey<'_>, i64), &(SortKey<'_>, i64)) -> Ordering {
    move |(a_key, a_id), (b_key, b_id)| cmp_then_id(a_key.cmp(b_key), *a_id, *b_id, dir)
}

/// Whether a payment row matches a list's or an export's filter.
pub(crate) fn transaction_matches(row: &TransactionRow, filter: &TransactionFilter) -> bool {
    row.is_active == filter.is_active
        && filter.invoice_id.is_none_or(|invoice| row.invoice_id == invoice.get())
        && filter.transaction_type.is_none_or(|kind| row.transaction_type == kind)
        && filter.reference.as_deref().is_none_or(|key| row.reference.as_ref().is_some_and(|held| held.key() == key))
        && filter.from_date.is_none_or(|from| row.transaction_date >= from)
        && filter.to_date.is_none_or(|to| row.transaction_date <= to)
}

impl TransactionStore for MemoryStore {
    async fn insert_transaction(&self, transaction: NewTransaction, ctx: WriteContext) -> StoreResult<Transaction> {
        let mut state = self.write();
        let invoice_id = transaction.invoice_id.get();
        ledger::receive(state.paid_invoice_after(invoice_id, transaction.amount.get()), PaymentWrite::Record)?;
        state.check_reference(transaction.transaction_type, transaction.reference.as_ref(), None)?;
        let id = state.add_transaction(transaction, true, ctx.at, None);
        state.finish_write(&ctx, "create", Entity::Transaction, id);
        Ok(state.transaction(id).expect("just written"))
    }

    async fn get_transaction(&self, id: TransactionId) -> StoreResult<Option<Transaction>> {
        Ok(self.read().transaction(id.get()))
    }

    async fn update_transaction(
        &self,
        id: TransactionId,
        transaction: NewTransaction,
        ctx: WriteContext,
    ) -> StoreResult<Transaction> {
        let mut state = self.write();
        let old = state
            .transactions
            .get(&id.get())
            .filter(|row| row.is_active)
            .cloned()
            .ok_or(StoreError::NotFound(Entity::Transaction))?;
        let new_invoice = transaction.invoice_id.get();
        // A payment that stays on its invoice frees its old amount there first.
        let freed = if old.invoice_id == new_invoice { old.amount.get() } else { Decimal::ZERO };
        let target = state.paid_invoice_after(new_invoice, transaction.amount.get() - freed);
        ledger::receive(target, PaymentWrite::Record)?;
        let holder = Holder::of(id, old.vendor_payment_id.map(VendorPaymentId));
        state.check_reference(transaction.transaction_type, transaction.reference.as_ref(), Some(holder))?;
        let before =
            state.snapshot(&[Touch::Payment(id.get()), Touch::Invoice(old.invoice_id), Touch::Invoice(new_invoice)]);
        state.add_paid(old.invoice_id, -old.amount.get());
        state.add_paid(new_invoice, transaction.amount.get());
        let row = state.transactions.get_mut(&id.get()).expect("checked above");
        row.invoice_id = new_invoice;
        row.amount = transaction.amount;
        row.transaction_date = transaction.transaction_date;
        row.transaction_type = transaction.transaction_type;
        row.reference = transaction.reference;
        row.description = transaction.description;
        row.updated_at = ctx.at;
        if let Some(reference) = &row.reference {
            let key = reference.key().to_owned();
            state.payments_by_reference.entry(key).or_default().insert(id.get());
        }
        state.keep_figures(before);
        state.finish_write(&ctx, "update", Entity::Transaction, id.get());
        Ok(state.transaction(id.get()).expect("just written"))
    }

    async fn delete_transaction(&self, id: TransactionId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        let row = state
            .transactions
            .get(&id.get())
            .filter(|row| row.is_active)
            .ok_or(StoreError::NotFound(Entity::Transaction))?;
        let (invoice_id, amount) = (row.invoice_id, row.amount.get());
        let before = state.snapshot(&[Touch::Payment(id.get()), Touch::Invoice(invoice_id)]);
        let row = state.transactions.get_mut(&id.get()).expect("checked above");
        row.is_active = false;
        row.updated_at = ctx.at;
        state.add_paid(invoice_id, -amount);
        state.keep_figures(before);
        state.finish_write(&ctx, "delete", Entity::Transaction, id.get());
        Ok(())
    }

    async fn restore_transaction(&self, id: TransactionId, ctx: WriteContext) -> StoreResult<Transaction> {
        let mut state = self.write();
        let row = state
            .transactions
            .get(&id.get())
            .filter(|row| !row.is_active)
            .ok_or(StoreError::NotFound(Entity::Transaction))?;
        let (invoice_id, amount) = (row.invoice_id, row.amount.get());
        let holder = Holder::of(id, row.vendor_payment_id.map(VendorPaymentId));
        let (kind, reference) = (row.transaction_type, row.reference.clone());
        ledger::receive(state.paid_invoice_after(invoice_id, amount), PaymentWrite::Restore)?;
        state.check_reference(kind, reference.as_ref(), Some(holder))?;
        let before = state.snapshot(&[Touch::Payment(id.get()), Touch::Invoice(invoice_id)]);
        let row = state.transactions.get_mut(&id.get()).expect("checked above");
        row.is_active = true;
        row.updated_at = ctx.at;
        state.add_paid(invoice_id, amount);
        state.keep_figures(before);
        state.finish_write(&ctx, "restore", Entity::Transaction, id.get());
        Ok(state.transaction(id.get()).expect("just written"))
    }

    async fn list_transactions(&self, query: &TransactionQuery) -> StoreResult<Page<Transaction>> {
        let state = self.read();
        let rows: Vec<(SortKey, i64)> = state
            .transactions
            .iter()
            .filter(|(_, row)| transaction_matches(row, &query.filter))
            .map(|(id, row)| {
                let key = match query.sort.key {
                    TransactionSortKey::TransactionDate => SortKey::Instant(row.transaction_date),
                    TransactionSortKey::Amount => SortKey::Money(row.amount.get()),
                    TransactionSortKey::TransactionType => SortKey::Text(row.transaction_type.name()),
                    TransactionSortKey::CreatedAt => SortKey::Instant(row.created_at),
                };
                (key, *id)
            })
            .collect();
        let page = query.page.sorted_slice(rows, by_key_then_id(query.sort.dir));
        Ok(page.map(|(_, id)| state.transaction(id).expect("listed above")))
    }
}
