//! Vendors in memory: [`VendorStore`] for [`MemoryStore`]. A vendor carries totals over its
//! active invoices (D11), read from the kept figures (D41); the OwnPharmacy rules are
//! [`vendor_rules`]' and restores under an inactive parent [`restore`]'s to refuse.

use pharmapay_core::figures::VendorFigures;
use pharmapay_core::ids::VendorId;
use pharmapay_core::invoices::rules as invoice_rules;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::store::{StoreResult, UniqueKey, VendorStore, WriteContext};
use pharmapay_core::text::key;
use pharmapay_core::vendors::gstin::Gstin;
use pharmapay_core::vendors::licence::{EXPIRED_LICENSE_POLICY, ExpiredLicensePolicy, LicenseStatus};
use pharmapay_core::vendors::rules as vendor_rules;
use pharmapay_core::vendors::{NewVendor, Vendor, VendorBrief, VendorFilter, VendorQuery, VendorSortKey};
use pharmapay_core::{Entity, Page, StoreError};

use crate::figures::Touch;
use crate::{MemoryStore, SortKey, State, VendorRow, by_key_then_id};

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

    /// D37: refuses `gstin` when an active vendor other than `except` holds it.
    pub(crate) fn check_gstin(&self, gstin: Option<&str>, except: Option<i64>) -> StoreResult<()> {
        let Some(gstin) = gstin else { return Ok(()) };
        let taken = self
            .vendors
            .iter()
            .any(|(id, row)| row.is_active && row.gstin.as_deref() == Some(gstin) && Some(*id) != except);
        if taken { Err(StoreError::Conflict(UniqueKey::Gstin)) } else { Ok(()) }
    }

    /// D36: refuses, as [`invoice_rules::check_invoice`] decides, an invoice dated `invoice_date` for
    /// the vendor `vendor_id` when the `ExpiredLicensePolicy` setting blocks.
    /// The `ExpiredLicensePolicy` setting (D36).
    pub(crate) fn licence_policy(&self) -> ExpiredLicensePolicy {
        self.settings
            .get(EXPIRED_LICENSE_POLICY)
            .and_then(|setting| ExpiredLicensePolicy::parse(&setting.value))
            .unwrap_or_default()
    }

    pub(crate) fn check_licence(&self, vendor_id: i64, invoice_date: Timestamp) -> StoreResult<()> {
        let policy = self.licence_policy();
        let valid_until = self.vendors.get(&vendor_id).and_then(|vendor| vendor.drug_license_valid_until);
        let day_start = self.calendar.start_of(self.calendar.date_of(invoice_date));
        invoice_rules::check_invoice(policy, valid_until, day_start)
    }

    pub(crate) fn active_vendor(&self, id: i64) -> bool {
        self.vendors.get(&id).is_some_and(|vendor| vendor.is_active)
    }

    pub(crate) fn vendor_name_key(&self, vendor_id: i64) -> &str {
        self.vendors.get(&vendor_id).map(|vendor| vendor.name_key.as_str()).unwrap_or("")
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
