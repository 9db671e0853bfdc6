//! A vendor file's rows (D45): the vendors report's headers (`Name`, `Type`, `Address`,
//! `Phone`, `Email`, `Drug License 1`, `Drug License 2`, `GSTIN`, `License Valid Until`), so
//! the report (D26) imports back. Each row becomes the [`NewVendor`] of `POST /api/vendors`,
//! checked by [`NewVendor::validate`] with the API's readers of types, GSTINs (D37) and dates;
//! what it repeats of the stored vendors, and whether an OwnPharmacy row is the pharmacy's own
//! vendor unchanged or a create refused as `POST /api/vendors` refuses it (D14), is
//! [`crate::imports::rules::plan_vendors`]' to say.

use jiff::civil::Date;

use super::{ImportFile, ReadError, RowCells, RowErrors, cells};
use crate::vendors::gstin::Gstin;
use crate::vendors::{NewVendor, VendorType};

/// The columns a vendor file is read by, each with whether it is required (D45).
pub const COLUMNS: [(&str, bool); 9] = [
    ("Name", true),
    ("Type", true),
    ("Address", false),
    ("Phone", false),
    ("Email", false),
    ("Drug License 1", false),
    ("Drug License 2", false),
    ("GSTIN", false),
    ("License Valid Until", false),
];

/// One data row of a vendor file, checked as `POST /api/vendors` checks a body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VendorRow {
    /// Its row number (the header is row 1).
    pub row: u32,
    /// The vendor.
    pub vendor: NewVendor,
    /// The licence's last day, when the cell named a day rather than an instant (D36).
    pub valid_until_day: Option<Date>,
}

/// Reads every data row of `file`: the rows that pass the checks of the matching create, the
/// errors of those that do not, and how many data rows there were.
pub(crate) fn read(
    file: &ImportFile,
    progress: &dyn Fn(usize),
) -> Result<(usize, Vec<VendorRow>, RowErrors), ReadError> {
    let read = super::read_data_rows(file, &COLUMNS, progress, read_row)?;
    Ok((read.count, read.rows, read.errors))
}

fn read_row(row: u32, found: &RowCells<'_>, errors: &mut RowErrors) -> Option<VendorRow> {
    let cell = |index| found.get(index);
    let name = cells::text(cell(0)).unwrap_or_default();
    let vendor_type = super::required(
        row,
        "vendorType",
        cells::text(cell(1))
            .map(|text| VendorType::parse(&text).ok_or_else(|| VendorType::expected().to_owned()))
            .transpose(),
        errors,
    );
    let gstin = super::optional(
        row,
        "gstin",
        cells::text(cell(7)).map(|text| Gstin::parse(&text).map_err(|error| error.to_string())).transpose(),
        errors,
    );
    let valid_until = super::optional(row, "drugLicenseValidUntil", cells::date(cell(8)), errors);
    let vendor_type = vendor_type?;
    let vendor = NewVendor {
        name,
        vendor_type,
        address: cells::text(cell(2)),
        phone: cells::text(cell(3)),
        email: cells::text(cell(4)),
        drug_license_number1: cells::text(cell(5)),
        drug_license_number2: cells::text(cell(6)),
        additional_drug_license_numbers: Vec::new(),
        drug_license_valid_until: valid_until.as_ref().map(|date| date.instant),
        gstin,
    };
    // An OwnPharmacy row passes here so that the vendors report, which lists the pharmacy's
    // own vendor, imports back: `plan_vendors` finds it unchanged, or refuses it as a create
    // would (D14).
    let vendor = super::passed(row, vendor.validate(), errors)?;
    Some(VendorRow { row, vendor, valid_until_day: valid_until.and_then(|date| date.day) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(text: &str) -> ImportFile {
        ImportFile::csv(text)
    }

    #[test]
    fn the_vendors_report_headers_read_a_vendor_and_the_apis_checks_refuse_the_rest() {
        let file = csv(
            "ID,Name,Type,Address,Phone,Email,Drug License 1,Drug License 2,Outstanding Balance,GSTIN,License Valid Until\n\
             1,Acme Pharma,wholesaler,\"12 MG Road\nPune\",9876543210,a@acme.in,DL-1,,0,27AAPFU0939F1ZV,31/12/2026\n\
             2,Own,OwnPharmacy,,,,,,0,,\n\
             3,,Dealer,,,not-an-email,,,0,27AAPFU0939F1ZX,someday\n",
        );
        let (count, rows, errors) = read(&file, &|_| {}).unwrap();
        assert_eq!((count, rows.len()), (3, 2));
        assert_eq!(rows[1].vendor.vendor_type, VendorType::OwnPharmacy, "the plan, not the reading, judges it");
        let vendor = &rows[0].vendor;
        assert_eq!((vendor.name.as_str(), vendor.vendor_type), ("Acme Pharma", VendorType::Wholesaler));
        assert_eq!(vendor.address.as_deref(), Some("12 MG Road\nPune"));
        assert_eq!(vendor.gstin.as_ref().map(Gstin::as_str), Some("27AAPFU0939F1ZV"));
        assert_eq!(rows[0].valid_until_day, Some(Date::constant(2026, 12, 31)));
        let keys: Vec<&str> = errors.errors().iter().map(|(key, _)| key).collect();
        assert_eq!(
            keys,
            ["row4.drugLicenseValidUntil", "row4.email", "row4.gstin", "row4.name"],
            "a quoted cell's newline does not move the row numbers on"
        );
    }

    #[test]
    fn name_and_type_are_required_headers() {
        let error = read(&csv("Name,Address\nA,B\n"), &|_| {}).unwrap_err();
        assert!(matches!(error, ReadError::File(message) if message.contains("`Type`")));
    }
}
