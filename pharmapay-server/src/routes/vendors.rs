//! `/api/vendors` (spec, Vendors; D11, D14, D36, D37): the pharmacy's suppliers, their body,
//! their DTO and their operations.

use pharmapay_core::Action::Read;
use pharmapay_core::Collection::Vendor;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::text::{CODE_MAX, EMAIL_MAX, NAME_MAX, TEXT_MAX};
use pharmapay_core::vendors::MAX_EXTRA_LICENSES;
use pharmapay_core::vendors::gstin::GSTIN_LEN;
use pharmapay_core::vendors::licence::{EXPIRING_SOON_DAYS, LicenseStatus};
use pharmapay_core::vendors::{NewVendor, VendorQuery, VendorType};
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::{Route, kept_routes};
use crate::decode::{List, Slot, bodies};
use crate::dto::{PageDto, instant, money, optional_instant, page_schema};
use crate::guard::needs;
use crate::openapi::ACTIVE_ONLY;
use crate::openapi::schema::{self, either, names};
use crate::openapi::{Crud, Json, Operation, SORT_DIR, Schema, describe, object, query, search, sort_by};

/// The vendor routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    kept_routes! {
        "/api/vendors" as "vendors", Vendor, reads: needs(Vendor, Read), dto: VendorDto;
        list: |call| Box::pin(call.page(VendorQuery::from_params, PharmaPay::list_vendors, VendorDto::from));
        engine: create_vendor, get_vendor, update_vendor, delete_vendor, restore_vendor;
    }
}

const CRUD: Crud = Crud { base: "/api/vendors", tag: "Vendors", singular: "vendor", restore_parent: None };

fn list() -> Operation {
    let defaults = VendorQuery::default();
    CRUD.page::<PageDto<VendorDto>>(
        "; `isActive=false` (soft-deleted vendors) also needs an admin token, otherwise 403. Paginated (D8).",
        defaults.page.page_size(),
    )
    .parameters(filters(true))
    .parameter(sort_by(defaults.sort.key))
    .parameter(SORT_DIR)
}

fn create() -> Operation {
    CRUD.create::<VendorBody, VendorDto>("`vendorType` OwnPharmacy is a 400; a taken GSTIN is a 409 (D37). ")
}

fn get() -> Operation {
    CRUD.get::<VendorDto>("")
}

fn update() -> Operation {
    CRUD.update::<VendorBody, VendorDto>(
        "A vendor cannot be changed to or from OwnPharmacy (400); a taken GSTIN is a 409 (D37).",
    )
}

fn delete() -> Operation {
    CRUD.delete("Its invoices and payments are kept. The OwnPharmacy vendor cannot be deleted (400).")
}

fn restore() -> Operation {
    CRUD.restore::<VendorDto>()
}

/// The filters of the vendor list, which the vendors report reads too (`listing` false).
pub fn filters(listing: bool) -> Vec<Json> {
    let types = names(&VendorType::ALL, VendorType::name);
    let statuses = names(&LicenseStatus::ALL, LicenseStatus::name);
    vec![
        search("search", "Partial, case-insensitive match on the name."),
        query(
            "vendorType",
            format!("Only this type: {}, matched case-insensitively; anything else is a 400 (D8).", either(&types)),
            schema::choice(&types),
        ),
        query(
            "isActive",
            if listing {
                "`true` (default) lists active vendors, `false` soft-deleted ones (admin only, else 403)."
            } else {
                ACTIVE_ONLY
            },
            object! { "type": "boolean" },
        ),
        query(
            "licenseStatus",
            format!(
                "Only vendors whose drug licence has this status today: {}, matched case-insensitively; anything else is \
                 a 400 (D36).",
                either(&statuses)
            ),
            schema::choice(&statuses),
        ),
    ]
}

bodies! {
    /// Vendor create and replace (spec; D14).
    VendorBody => NewVendor as "VendorInput":
        "Vendor create and full replacement (D14: every field as on create; omitted optional fields become empty). \
         Unknown fields (such as `id`, `isActive` or the totals) are ignored." {
        name: Slot => string("name") as schema::name("Name."),
        vendor_type: Slot => choice("vendorType", VendorType::parse, VendorType::expected()) as vendor_type_input(),
        address: Slot => optional_string("address") as schema::free_text("Postal address."),
        phone: Slot => optional_string("phone") as schema::code("Phone number."),
        email: Slot => optional_string("email") as schema::optional_email("Email."),
        drug_license_number1: Slot => optional_string("drugLicenseNumber1") as schema::code("Primary drug licence."),
        drug_license_number2: Slot => optional_string("drugLicenseNumber2") as schema::code("Secondary drug licence."),
        additional_drug_license_numbers: List => strings("additionalDrugLicenseNumbers") as extra_licences(),
        drug_license_valid_until: Slot => optional_datetime("drugLicenseValidUntil")
            as "The day the drug licence is valid until (D36); optional, null means unknown.",
        gstin: Slot => optional_gstin("gstin"),
    }
}

/// `vendorType` in a body: any type but OwnPharmacy, which onboarding alone makes.
fn vendor_type_input() -> (Vec<&'static str>, String) {
    let types = names(&VendorType::ALL, VendorType::name);
    let description = format!(
        "One of {}, matched case-insensitively (D7). OwnPharmacy is made at onboarding only: creating one is a 400, and \
         a vendor cannot be changed to or from OwnPharmacy (400), so the pharmacy's own vendor keeps OwnPharmacy and \
         every other vendor one of the other five.",
        types.join(", ")
    );
    (types, description)
}

/// `additionalDrugLicenseNumbers`: at most [`MAX_EXTRA_LICENSES`] codes.
fn extra_licences() -> Json {
    object! {
        "maxItems": MAX_EXTRA_LICENSES,
        "description": format!(
            "Further licence numbers; at most {MAX_EXTRA_LICENSES} entries, blank entries are dropped. Null or absent \
             means none."
        ),
        "items": object! {
            "type": "string",
            "pattern": schema::optional_line_pattern(CODE_MAX),
            "description": format!("A licence number, at most {CODE_MAX} characters, single line."),
        },
    }
}

/// `VendorDto`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VendorDto {
    id: i64,
    name: String,
    address: Option<String>,
    phone: Option<String>,
    email: Option<String>,
    vendor_type: &'static str,
    drug_license_number1: Option<String>,
    drug_license_number2: Option<String>,
    additional_drug_license_numbers: Vec<String>,
    /// D36.
    #[serde(serialize_with = "optional_instant")]
    drug_license_valid_until: Option<Timestamp>,
    license_status: &'static str,
    /// D37.
    gstin: Option<String>,
    is_active: bool,
    #[serde(serialize_with = "money")]
    outstanding_balance: Decimal,
    #[serde(serialize_with = "money")]
    total_invoice_value: Decimal,
    #[serde(serialize_with = "money")]
    total_paid_amount: Decimal,
    /// D44.
    #[serde(serialize_with = "money")]
    total_credited_amount: Decimal,
    #[serde(serialize_with = "money")]
    available_credit: Decimal,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
    #[serde(serialize_with = "instant")]
    updated_at: Timestamp,
}

impl From<pharmapay_core::vendors::Vendor> for VendorDto {
    fn from(vendor: pharmapay_core::vendors::Vendor) -> Self {
        Self {
            id: vendor.id.get(),
            name: vendor.name,
            address: vendor.address,
            phone: vendor.phone,
            email: vendor.email,
            vendor_type: vendor.vendor_type.name(),
            drug_license_number1: vendor.drug_license_number1,
            drug_license_number2: vendor.drug_license_number2,
            additional_drug_license_numbers: vendor.additional_drug_license_numbers,
            drug_license_valid_until: vendor.drug_license_valid_until,
            license_status: vendor.license_status.name(),
            gstin: vendor.gstin,
            is_active: vendor.is_active,
            outstanding_balance: vendor.totals.outstanding_balance,
            total_invoice_value: vendor.totals.total_invoice_value,
            total_paid_amount: vendor.totals.total_paid_amount,
            total_credited_amount: vendor.totals.total_credited_amount,
            available_credit: vendor.totals.available_credit,
            created_at: vendor.created_at,
            updated_at: vendor.updated_at,
        }
    }
}

describe! {
    VendorDto as "Vendor": "VendorDto: a vendor with its computed totals." {
        id: schema::id("Vendor id."),
        name: schema::text(NAME_MAX, "Name."),
        address: schema::nullable_text(TEXT_MAX, "Postal address, or null."),
        phone: schema::nullable_text(CODE_MAX, "Phone number, or null."),
        email: schema::nullable_text(EMAIL_MAX, "Email, or null."),
        vendor_type: schema::one_of(&names(&VendorType::ALL, VendorType::name), "Kind of business, in canonical case."),
        drug_license_number1: schema::nullable_text(CODE_MAX, "Primary drug licence, or null."),
        drug_license_number2: schema::nullable_text(CODE_MAX, "Secondary drug licence, or null."),
        additional_drug_license_numbers: schema::array(object! { "type": "string", "maxLength": CODE_MAX })
            .with("maxItems", MAX_EXTRA_LICENSES)
            .with("description", "Further licences (empty when none)."),
        is_active: schema::boolean("False once soft-deleted."),
        outstanding_balance: schema::money(
            "`totalInvoiceValue - totalPaidAmount - totalCreditedAmount` (D11, D44); may be negative when overpaid.",
        ),
        total_invoice_value: schema::money("Sum of `amount` over the vendor's active invoices (D11)."),
        total_paid_amount: schema::money("Sum of the active payments on those invoices (D11)."),
        total_credited_amount: schema::money("Sum of the vendor credits applied to those invoices (D44)."),
        available_credit: schema::money(
            "Sum of `availableAmount` over the vendor's active credits: accepted and not yet applied (D44).",
        ),
        created_at: schema::instant("When created."),
        updated_at: schema::instant("When last changed."),
        drug_license_valid_until: object! {
            "type": ["string", "null"],
            "format": "date-time",
            "maxLength": schema::INSTANT_MAX,
            "description": "The day the drug licence is valid until, as an RFC 3339 UTC timestamp, or null (D36).",
        },
        license_status: schema::one_of(
            &names(&LicenseStatus::ALL, LicenseStatus::name),
            format!(
                "The licence as of today in the business time zone (D36): Unknown without a date, Expired before today, \
                 ExpiringSoon from today to today + {EXPIRING_SOON_DAYS}, Valid after that."
            ),
        ),
        gstin: schema::nullable_text(GSTIN_LEN, "GSTIN, upper-cased, or null (D37)."),
    }
}

impl Schema for PageDto<VendorDto> {
    const NAME: &'static str = "VendorPage";

    fn schema() -> Json {
        page_schema::<VendorDto>("A page of vendors.")
    }
}
