//! Vendors: the pharmacy's suppliers, plus the one OwnPharmacy record made at onboarding.

mod engine;
pub mod gstin;
pub mod licence;
pub mod rules;
pub mod store;

use jiff::Timestamp;
use rust_decimal::Decimal;

use crate::base::tidy::{tidy_optional, tidy_optional_email, tidy_required};
use crate::error::FieldErrors;
use crate::ids::VendorId;
use crate::paging::{ListFilter, ListQuery, Params, Sort, SortDir, SortKey, read_bool};
use crate::text::{self, CODE_MAX, Lines, NAME_MAX, TEXT_MAX};

use crate::vendors::gstin::Gstin;
use crate::vendors::licence::{LicenceBounds, LicenseStatus};

/// Most extra licence numbers one vendor may list.
pub const MAX_EXTRA_LICENSES: usize = 20;

/// What kind of business a vendor is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VendorType {
    /// Produces pharmaceutical products.
    Manufacturer,
    /// Bulk distributor.
    Wholesaler,
    /// Authorised sales agent.
    Agency,
    /// Local reseller.
    Dealer,
    /// Another pharmacy.
    Pharmacy,
    /// The operator's own pharmacy: exactly one, made at onboarding.
    OwnPharmacy,
}

impl VendorType {
    /// Every type.
    pub const ALL: [VendorType; 6] = [
        VendorType::Manufacturer,
        VendorType::Wholesaler,
        VendorType::Agency,
        VendorType::Dealer,
        VendorType::Pharmacy,
        VendorType::OwnPharmacy,
    ];

    /// Parses a type name in any case (D7).
    pub fn parse(value: &str) -> Option<Self> {
        let value = value.trim();
        Self::ALL.into_iter().find(|t| t.name().eq_ignore_ascii_case(value))
    }

    /// The canonical name.
    pub fn name(self) -> &'static str {
        match self {
            VendorType::Manufacturer => "Manufacturer",
            VendorType::Wholesaler => "Wholesaler",
            VendorType::Agency => "Agency",
            VendorType::Dealer => "Dealer",
            VendorType::Pharmacy => "Pharmacy",
            VendorType::OwnPharmacy => "OwnPharmacy",
        }
    }

    /// The error message for a value that is not a type.
    pub fn expected() -> &'static str {
        "must be one of Manufacturer, Wholesaler, Agency, Dealer, Pharmacy"
    }
}

/// A vendor's computed totals over its active invoices (D11), as
/// `figures::VendorFigures::totals` makes them from the figures a store keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VendorTotals {
    /// Sum of `amount` over active invoices.
    pub total_invoice_value: Decimal,
    /// Sum of active payments on those invoices.
    pub total_paid_amount: Decimal,
    /// Sum of the credits applied to those invoices (D44).
    pub total_credited_amount: Decimal,
    /// `total_invoice_value - total_paid_amount - total_credited_amount` (D11, D44).
    pub outstanding_balance: Decimal,
    /// What the vendor's active credits still have to set against bills (D44).
    pub available_credit: Decimal,
}

/// A vendor with its computed totals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vendor {
    /// Id.
    pub id: VendorId,
    /// Name.
    pub name: String,
    /// Kind of business.
    pub vendor_type: VendorType,
    /// Postal address.
    pub address: Option<String>,
    /// Phone number.
    pub phone: Option<String>,
    /// Email address.
    pub email: Option<String>,
    /// Primary drug licence.
    pub drug_license_number1: Option<String>,
    /// Secondary drug licence.
    pub drug_license_number2: Option<String>,
    /// Further licences.
    pub additional_drug_license_numbers: Vec<String>,
    /// The day the drug licence is valid until, as an instant (D36).
    pub drug_license_valid_until: Option<Timestamp>,
    /// The licence's status as of today (D36). Stores answer `Unknown`; the engine computes it
    /// for today in the business time zone before handing a vendor out.
    pub license_status: LicenseStatus,
    /// The GSTIN, upper-cased (D37).
    pub gstin: Option<String>,
    /// False once soft-deleted.
    pub is_active: bool,
    /// Computed totals (D11).
    pub totals: VendorTotals,
    /// When created.
    pub created_at: Timestamp,
    /// When last changed.
    pub updated_at: Timestamp,
}

/// The vendor fields nested in a single invoice (D13).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VendorBrief {
    /// Id.
    pub id: VendorId,
    /// Name.
    pub name: String,
    /// Kind of business.
    pub vendor_type: VendorType,
    /// Postal address.
    pub address: Option<String>,
    /// Phone number.
    pub phone: Option<String>,
    /// Email address.
    pub email: Option<String>,
    /// Primary drug licence.
    pub drug_license_number1: Option<String>,
    /// Secondary drug licence.
    pub drug_license_number2: Option<String>,
    /// False once soft-deleted.
    pub is_active: bool,
}

impl From<&Vendor> for VendorBrief {
    fn from(vendor: &Vendor) -> Self {
        Self {
            id: vendor.id,
            name: vendor.name.clone(),
            vendor_type: vendor.vendor_type,
            address: vendor.address.clone(),
            phone: vendor.phone.clone(),
            email: vendor.email.clone(),
            drug_license_number1: vendor.drug_license_number1.clone(),
            drug_license_number2: vendor.drug_license_number2.clone(),
            is_active: vendor.is_active,
        }
    }
}

/// The fields of a vendor create, and of a full replacement (D14).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewVendor {
    /// Name (required).
    pub name: String,
    /// Kind of business (required).
    pub vendor_type: VendorType,
    /// Postal address.
    pub address: Option<String>,
    /// Phone number.
    pub phone: Option<String>,
    /// Email address, shaped like `local@domain` when given.
    pub email: Option<String>,
    /// Primary drug licence.
    pub drug_license_number1: Option<String>,
    /// Secondary drug licence.
    pub drug_license_number2: Option<String>,
    /// Further licences.
    pub additional_drug_license_numbers: Vec<String>,
    /// The day the drug licence is valid until (D36).
    pub drug_license_valid_until: Option<Timestamp>,
    /// The GSTIN (D37), unique among active vendors.
    pub gstin: Option<Gstin>,
}

impl NewVendor {
    /// A vendor with only the required fields.
    pub fn new(name: impl Into<String>, vendor_type: VendorType) -> Self {
        Self {
            name: name.into(),
            vendor_type,
            address: None,
            phone: None,
            email: None,
            drug_license_number1: None,
            drug_license_number2: None,
            additional_drug_license_numbers: Vec::new(),
            drug_license_valid_until: None,
            gstin: None,
        }
    }

    /// Trims every field and checks the text rules.
    ///
    /// # Errors
    /// The messages by field path.
    pub fn validate(mut self) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        tidy_required(&mut self.name, "name", NAME_MAX, &mut errors);
        tidy_optional(&mut self.address, "address", TEXT_MAX, Lines::Multi, &mut errors);
        tidy_optional(&mut self.phone, "phone", CODE_MAX, Lines::Single, &mut errors);
        tidy_optional_email(&mut self.email, "email", &mut errors);
        tidy_optional(&mut self.drug_license_number1, "drugLicenseNumber1", CODE_MAX, Lines::Single, &mut errors);
        tidy_optional(&mut self.drug_license_number2, "drugLicenseNumber2", CODE_MAX, Lines::Single, &mut errors);
        if self.additional_drug_license_numbers.len() > MAX_EXTRA_LICENSES {
            errors.add("additionalDrugLicenseNumbers", format!("must list at most {MAX_EXTRA_LICENSES} numbers"));
        }
        let mut extra = Vec::with_capacity(self.additional_drug_license_numbers.len());
        for (index, number) in self.additional_drug_license_numbers.iter().enumerate() {
            match text::optional(Some(number), CODE_MAX, Lines::Single) {
                Ok(Some(number)) => extra.push(number),
                Ok(None) => {}
                Err(error) => errors.add(format!("additionalDrugLicenseNumbers[{index}]"), error.to_string()),
            }
        }
        self.additional_drug_license_numbers = extra;
        if errors.is_empty() { Ok(self) } else { Err(errors) }
    }

    /// [`NewVendor::validate`] for a create, which may not make an OwnPharmacy vendor (spec,
    /// Vendors; D14): the checks of `POST /api/vendors` and of each row of a vendor import
    /// (D45).
    ///
    /// # Errors
    /// The messages by field path.
    pub fn validate_new(self) -> Result<Self, FieldErrors> {
        let own = self.vendor_type == VendorType::OwnPharmacy;
        let mut errors = FieldErrors::new();
        if own {
            errors.add("vendorType", OWN_PHARMACY_AT_ONBOARDING);
        }
        match self.validate() {
            Ok(vendor) if !own => Ok(vendor),
            Ok(_) => Err(errors),
            Err(fields) => {
                errors.merge(fields);
                Err(errors)
            }
        }
    }
}

/// Why a create of an OwnPharmacy vendor is refused (D14).
pub const OWN_PHARMACY_AT_ONBOARDING: &str = "OwnPharmacy is created at onboarding only";

/// What to sort vendors by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VendorSortKey {
    /// Name, case-insensitively.
    Name,
    /// Type name.
    VendorType,
    /// Outstanding balance (D11).
    OutstandingBalance,
}

impl SortKey for VendorSortKey {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("name", VendorSortKey::Name),
        ("vendorType", VendorSortKey::VendorType),
        ("outstandingBalance", VendorSortKey::OutstandingBalance),
    ];

    const DEFAULT: Sort<Self> = Sort { key: VendorSortKey::Name, dir: SortDir::Asc };
}

/// Which vendors to list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VendorFilter {
    /// Lower-cased substring of the name.
    pub search: Option<String>,
    /// Only this type.
    pub vendor_type: Option<VendorType>,
    /// Active (true, the default) or soft-deleted (false) vendors.
    pub is_active: bool,
    /// Only vendors whose drug licence has this status today (D36); the engine turns it into
    /// [`VendorFilter::licence`].
    pub license_status: Option<LicenseStatus>,
    /// The licence status asked for with today's bounds, in the business calendar. Stores read
    /// this, never the bare status.
    pub licence: Option<(LicenseStatus, LicenceBounds)>,
}

impl Default for VendorFilter {
    fn default() -> Self {
        Self { search: None, vendor_type: None, is_active: true, license_status: None, licence: None }
    }
}

impl ListFilter for VendorFilter {
    const PAGE_SIZE: u32 = 10;

    /// Reads the filter parameters of `GET /api/vendors` (spec, Vendor list query).
    fn read(params: &(impl Params + ?Sized), errors: &mut FieldErrors) -> Self {
        let mut filter = Self::default();
        if let Some(search) = params.get("search") {
            filter.search = errors.check("search", text::search_term(search)).flatten();
        }
        if let Some(value) = params.get("vendorType") {
            match VendorType::parse(value) {
                Some(vendor_type) => filter.vendor_type = Some(vendor_type),
                None => errors.add("vendorType", VendorType::expected()),
            }
        }
        if let Some(is_active) = read_bool(params, "isActive", errors) {
            filter.is_active = is_active;
        }
        if let Some(value) = params.get("licenseStatus") {
            match LicenseStatus::parse(value) {
                Some(status) => filter.license_status = Some(status),
                None => errors.add("licenseStatus", "must be one of Unknown, Expired, ExpiringSoon, Valid"),
            }
        }
        filter
    }
}

/// A page of the list: filter, sort and page (D8).
pub type VendorQuery = ListQuery<VendorFilter, Sort<VendorSortKey>>;

impl NewVendor {
    /// The values written, as the audit log keeps them (D22).
    pub fn audit_changes(&self) -> String {
        serde_json::json!({
            "name": self.name,
            "vendorType": self.vendor_type.name(),
            "address": self.address,
            "phone": self.phone,
            "email": self.email,
            "drugLicenseNumber1": self.drug_license_number1,
            "drugLicenseNumber2": self.drug_license_number2,
            "additionalDrugLicenseNumbers": self.additional_drug_license_numbers,
            "drugLicenseValidUntil": self.drug_license_valid_until.map(|until| until.to_string()),
            "gstin": self.gstin.as_ref().map(Gstin::as_str),
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendor_types_parse_in_any_case() {
        assert_eq!(VendorType::parse("wholesaler"), Some(VendorType::Wholesaler));
        assert_eq!(VendorType::parse("OWNPHARMACY"), Some(VendorType::OwnPharmacy));
        assert_eq!(VendorType::parse("Distributor"), None);
    }

    #[test]
    fn validation_trims_and_reports_every_field() {
        let mut vendor = NewVendor::new("  Acme  ", VendorType::Dealer);
        vendor.email = Some("  ".into());
        vendor.additional_drug_license_numbers = vec![" DL-9 ".into(), "".into()];
        let clean = vendor.validate().unwrap();
        assert_eq!(clean.name, "Acme");
        assert_eq!(clean.email, None);
        assert_eq!(clean.additional_drug_license_numbers, vec!["DL-9".to_string()]);

        let mut bad = NewVendor::new("", VendorType::Dealer);
        bad.email = Some("not-an-email".into());
        bad.phone = Some("1".repeat(101));
        let errors = bad.validate().unwrap_err();
        assert!(errors.contains("name") && errors.contains("email") && errors.contains("phone"), "{errors}");
    }

    #[test]
    fn list_parameters_follow_the_spec_defaults() {
        let query = VendorQuery::from_params(&[]).unwrap();
        assert_eq!(query, VendorQuery::default());
        let query = VendorQuery::from_params(&[
            ("sortBy", "OUTSTANDINGBALANCE"),
            ("sortDir", "desc"),
            ("isActive", "false"),
            ("search", " AcMe "),
        ])
        .unwrap();
        assert_eq!(query.sort.key, VendorSortKey::OutstandingBalance);
        assert_eq!(query.sort.dir, SortDir::Desc);
        assert!(!query.filter.is_active);
        assert_eq!(query.filter.search.as_deref(), Some("acme"));
        let errors = VendorQuery::from_params(&[("sortBy", "price"), ("vendorType", "x")]).unwrap_err();
        assert!(errors.contains("sortBy") && errors.contains("vendorType"));
    }
}
