//! `/api/vendors` (spec, Vendors; D11, D14, D36, D37): the pharmacy's suppliers, their body and
//! their DTO.

use pharmapay_core::Action::{Create, Delete, Read, Update};
use pharmapay_core::Collection::Vendor;
use pharmapay_core::domain::{NewVendor, VendorQuery, VendorType};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::Route;
use crate::app::needs;
use crate::decode::{List, Slot, bodies};
use crate::dto::{instant, money, optional_instant};

/// The vendor routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/vendors", needs(Vendor, Read), |call| {
            Box::pin(call.page(VendorQuery::from_params, PharmaPay::list_vendors, VendorDto::from))
        }),
        Route::post("/api/vendors", needs(Vendor, Create), |call| {
            Box::pin(call.create("vendors", PharmaPay::create_vendor, |vendor| vendor.id.get(), VendorDto::from))
        }),
        Route::get("/api/vendors/{id}", needs(Vendor, Read), |call| {
            Box::pin(call.by_id(PharmaPay::get_vendor, VendorDto::from))
        }),
        Route::put("/api/vendors/{id}", needs(Vendor, Update), |call| {
            Box::pin(call.replace(PharmaPay::update_vendor, VendorDto::from))
        }),
        Route::delete("/api/vendors/{id}", needs(Vendor, Delete), |call| {
            Box::pin(call.delete(PharmaPay::delete_vendor))
        }),
        Route::post("/api/vendors/{id}/restore", needs(Vendor, Update), |call| {
            Box::pin(call.by_id(PharmaPay::restore_vendor, VendorDto::from))
        }),
    ]
}

bodies! {
    /// Vendor create and replace (spec; D14).
    VendorBody => NewVendor {
        name: Slot => string("name"),
        vendor_type: Slot => choice("vendorType", VendorType::parse, VendorType::expected()),
        address: Slot => optional_string("address"),
        phone: Slot => optional_string("phone"),
        email: Slot => optional_string("email"),
        drug_license_number1: Slot => optional_string("drugLicenseNumber1"),
        drug_license_number2: Slot => optional_string("drugLicenseNumber2"),
        additional_drug_license_numbers: List => strings("additionalDrugLicenseNumbers"),
        drug_license_valid_until: Slot => optional_datetime("drugLicenseValidUntil"),
        gstin: Slot => optional_gstin("gstin"),
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
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
    #[serde(serialize_with = "instant")]
    updated_at: Timestamp,
}

impl From<pharmapay_core::domain::Vendor> for VendorDto {
    fn from(vendor: pharmapay_core::domain::Vendor) -> Self {
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
            created_at: vendor.created_at,
            updated_at: vendor.updated_at,
        }
    }
}
