//! What an import's rows may create, judged against the stored records a store loaded under
//! its lock (D45).
//!
//! A store loads the active vendors and invoices the rows name ([`InvoiceKeys`],
//! [`VendorKeys`]), locks them, and asks [`plan_invoices`] or [`plan_vendors`]; it writes the
//! plan's records only when every row passed, all in one transaction.
//! - An invoice's vendor is the active vendor with the row's GSTIN when that cell is filled,
//!   else the one active vendor with its name (ignoring case and surrounding spaces); none or
//!   several is an error on `vendor`, as is a licence that `ExpiredLicensePolicy = Block`
//!   refuses (D36, by [`crate::invoices::rules::check_invoice`]).
//! - A row matching an active record exactly is `unchanged`: an invoice with the same number
//!   (D4), vendor, amount and dates; a vendor with the same name or GSTIN (D37) and the same
//!   fields. One that matches but differs, or repeats an earlier row of the file, is an error.
//!   An OwnPharmacy row is unchanged when it is the pharmacy's own vendor (the vendors report
//!   lists it) and refused otherwise, as `POST /api/vendors` refuses it (D14).
//! - Dates are the same when they are the same instant or, when the cell named a day, when the
//!   stored instant falls on that day in the business calendar (D3), so a report imports back.

use crate::branches::Scope;
use std::collections::{BTreeSet, HashMap};

use jiff::Timestamp;
use jiff::civil::Date;

use crate::branches::rules as branch_rules;
use crate::clock::BusinessCalendar;
use crate::ids::{BranchId, InvoiceId, VendorId};
use crate::imports::{ImportPlan, InvoiceRow, RowErrors, VendorRow};
use crate::invoices::NewInvoice;
use crate::invoices::rules;
use crate::money::Amount;
use crate::store::StoreError;
use crate::text::key;
use crate::vendors::OWN_PHARMACY_AT_ONBOARDING;
use crate::vendors::licence::ExpiredLicensePolicy;
use crate::vendors::{NewVendor, VendorType};

/// An active vendor as an import sees it: its id and its fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredVendor {
    /// Id.
    pub id: VendorId,
    /// Its fields (its further licences are not compared and may be left empty).
    pub fields: NewVendor,
}

/// An active invoice whose number a row of the file holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredInvoice {
    /// Id.
    pub id: InvoiceId,
    /// Its vendor.
    pub vendor_id: VendorId,
    /// Its branch (D49).
    pub branch_id: BranchId,
    /// Its number.
    pub invoice_number: String,
    /// Its amount.
    pub amount: Amount,
    /// Its invoice date.
    pub invoice_date: Timestamp,
    /// Its due date.
    pub due_date: Timestamp,
}

/// What a store loads for an invoice import: the active vendors whose name key
/// ([`crate::text::key`]) or GSTIN a row names, and the active invoices whose number key a row
/// holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InvoiceKeys {
    /// Vendor name keys.
    pub vendor_names: BTreeSet<String>,
    /// Vendor GSTINs.
    pub gstins: BTreeSet<String>,
    /// Invoice number keys.
    pub numbers: BTreeSet<String>,
}

impl InvoiceKeys {
    /// The keys `rows` name.
    pub fn of(rows: &[InvoiceRow]) -> Self {
        let mut keys = Self::default();
        for row in rows {
            match (&row.vendor_gstin, &row.vendor_name) {
                (Some(gstin), _) => keys.gstins.insert(gstin.as_str().to_owned()),
                (None, Some(name)) => keys.vendor_names.insert(key(name)),
                (None, None) => false,
            };
            keys.numbers.insert(key(&row.invoice.invoice_number));
        }
        keys
    }
}

/// What a store loads for a vendor import: the active vendors whose name key or GSTIN a row
/// holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VendorKeys {
    /// Name keys.
    pub names: BTreeSet<String>,
    /// GSTINs.
    pub gstins: BTreeSet<String>,
}

impl VendorKeys {
    /// The keys `rows` hold.
    pub fn of(rows: &[VendorRow]) -> Self {
        let mut keys = Self::default();
        for row in rows {
            keys.names.insert(key(&row.vendor.name));
            if let Some(gstin) = &row.vendor.gstin {
                keys.gstins.insert(gstin.as_str().to_owned());
            }
        }
        keys
    }
}

/// The invoices `rows` create, each with its vendor set, and how many are already there.
///
/// `vendors` are the active vendors a store loaded for [`InvoiceKeys::of`] (more do no harm),
/// `branches` the active branches (id and code) locked so that they stay active, `stored` the
/// active invoices holding its numbers, `policy` the `ExpiredLicensePolicy`. A row naming no
/// branch goes where a create naming none goes (D49).
///
/// # Errors
/// Every row's errors, keyed `row<N>.<field>`.
pub fn plan_invoices(
    rows: Vec<InvoiceRow>,
    vendors: &[StoredVendor],
    branches: &[(BranchId, String)],
    stored: &[StoredInvoice],
    policy: ExpiredLicensePolicy,
    calendar: &BusinessCalendar,
) -> Result<ImportPlan<NewInvoice>, RowErrors> {
    plan_invoices_in(&Scope::All, rows, vendors, branches, stored, (policy, calendar))
}

/// [`plan_invoices`] for a writer of `scope` (D49): a row naming a branch outside the scope is a
/// row error on `branch`, as one naming no active branch is; a row naming none goes to the
/// writer's only branch (a row error for a writer of several); a stored invoice of another
/// branch holding the row's number is named by its number only, never matched as unchanged.
///
/// # Errors
/// Every row's errors, keyed `row<N>.<field>`.
pub fn plan_invoices_in(
    scope: &Scope,
    rows: Vec<InvoiceRow>,
    vendors: &[StoredVendor],
    branches: &[(BranchId, String)],
    stored: &[StoredInvoice],
    (policy, calendar): (ExpiredLicensePolicy, &BusinessCalendar),
) -> Result<ImportPlan<NewInvoice>, RowErrors> {
    let mut by_gstin = HashMap::new();
    let mut by_name: HashMap<String, Vec<&StoredVendor>> = HashMap::new();
    for vendor in vendors {
        if let Some(gstin) = &vendor.fields.gstin {
            by_gstin.insert(gstin.as_str(), vendor);
        }
        by_name.entry(key(&vendor.fields.name)).or_default().push(vendor);
    }
    let stored: HashMap<String, &StoredInvoice> =
        stored.iter().map(|invoice| (key(&invoice.invoice_number), invoice)).collect();
    let mut seen: HashMap<String, u32> = HashMap::new();
    let mut errors = RowErrors::new();
    let mut plan = ImportPlan { create: Vec::new(), unchanged: 0 };
    for mut row in rows {
        let vendor = match (&row.vendor_gstin, &row.vendor_name) {
            (Some(gstin), _) => {
                by_gstin.get(gstin.as_str()).copied().ok_or_else(|| format!("no active vendor has GSTIN {gstin}"))
            }
            (None, Some(name)) => match by_name.get(&key(name)).map(Vec::as_slice).unwrap_or_default() {
                [vendor] => Ok(*vendor),
                [] => Err(format!("no active vendor is named {}", name.trim())),
                several => {
                    Err(format!("{} active vendors are named {}; give the vendor's GSTIN", several.len(), name.trim()))
                }
            },
            (None, None) => Err("needs the vendor's name or GSTIN".to_owned()),
        };
        let number_key = key(&row.invoice.invoice_number);
        if let Some(earlier) = seen.get(&number_key) {
            errors.add(row.row, "invoiceNumber", format!("repeats the invoice number of row {earlier}"));
            continue;
        }
        seen.insert(number_key.clone(), row.row);
        let vendor = match vendor {
            Ok(vendor) => vendor,
            Err(message) => {
                errors.add(row.row, "vendor", message);
                continue;
            }
        };
        row.invoice.vendor_id = vendor.id;
        if let Some(code) = &row.branch_code {
            match branches.iter().find(|(_, branch)| branch == code) {
                Some((id, _)) if scope.contains(*id) => row.invoice.branch_id = Some(*id),
                Some(_) => {
                    errors.add(row.row, "branch", format!("branch {code} is not one of yours"));
                    continue;
                }
                None => {
                    errors.add(row.row, "branch", format!("no active branch has code {code}"));
                    continue;
                }
            }
        } else if !scope.is_all() {
            match branch_rules::default_branch(scope) {
                Ok(branch) => row.invoice.branch_id = Some(branch),
                Err(_) => {
                    errors.add(row.row, "branch", "is required: you hold several branches, so name one");
                    continue;
                }
            }
        }
        if let Some(existing) = stored.get(&number_key) {
            if !scope.contains(existing.branch_id) {
                // D49: another branch's invoice: its number is disclosed, nothing else.
                errors.add(row.row, "invoiceNumber", format!("invoice {} already exists", existing.invoice_number));
            } else if same_invoice(existing, &row, calendar) {
                plan.unchanged += 1;
            } else {
                errors.add(
                    row.row,
                    "invoiceNumber",
                    format!(
                        "invoice {} already exists (id {}) with another vendor, branch, amount or date",
                        existing.invoice_number, existing.id
                    ),
                );
            }
            continue;
        }
        let day_start = calendar.start_of(calendar.date_of(row.invoice.invoice_date));
        if let Err(StoreError::Invalid(fields)) =
            rules::check_invoice(policy, vendor.fields.drug_license_valid_until, day_start)
        {
            for (_, messages) in fields.iter() {
                for message in messages {
                    errors.add(row.row, "vendor", message.clone());
                }
            }
            continue;
        }
        plan.create.push((row.row, row.invoice));
    }
    errors.into_result().map(|()| plan)
}

fn same_invoice(stored: &StoredInvoice, row: &InvoiceRow, calendar: &BusinessCalendar) -> bool {
    stored.vendor_id == row.invoice.vendor_id
        && stored.branch_id == branch_rules::branch_of_create(row.invoice.branch_id)
        && stored.amount == row.invoice.amount
        && same_date(stored.invoice_date, row.invoice.invoice_date, row.invoice_day, calendar)
        && same_date(stored.due_date, row.invoice.due_date, row.due_day, calendar)
}

/// The vendors `rows` create, and how many are already there.
///
/// `stored` are the active vendors a store loaded for [`VendorKeys::of`].
///
/// # Errors
/// Every row's errors, keyed `row<N>.<field>`.
pub fn plan_vendors(
    rows: Vec<VendorRow>,
    stored: &[StoredVendor],
    calendar: &BusinessCalendar,
) -> Result<ImportPlan<NewVendor>, RowErrors> {
    let mut by_gstin = HashMap::new();
    let mut by_name: HashMap<String, Vec<&StoredVendor>> = HashMap::new();
    for vendor in stored {
        if let Some(gstin) = &vendor.fields.gstin {
            by_gstin.insert(gstin.as_str().to_owned(), vendor);
        }
        by_name.entry(key(&vendor.fields.name)).or_default().push(vendor);
    }
    let (mut seen_names, mut seen_gstins) = (HashMap::new(), HashMap::new());
    let mut errors = RowErrors::new();
    let mut plan = ImportPlan { create: Vec::new(), unchanged: 0 };
    for row in rows {
        let name_key = key(&row.vendor.name);
        let gstin = row.vendor.gstin.as_ref().map(|gstin| gstin.as_str().to_owned());
        if let Some(earlier) = seen_names.get(&name_key) {
            errors.add(row.row, "name", format!("repeats the vendor name of row {earlier}"));
            continue;
        }
        if let Some(earlier) = gstin.as_ref().and_then(|gstin| seen_gstins.get(gstin)) {
            errors.add(row.row, "gstin", format!("repeats the GSTIN of row {earlier}"));
            continue;
        }
        seen_names.insert(name_key.clone(), row.row);
        if let Some(gstin) = &gstin {
            seen_gstins.insert(gstin.clone(), row.row);
        }
        let by_gstin = gstin.as_ref().and_then(|gstin| by_gstin.get(gstin)).copied();
        let named = by_name.get(&name_key).map(Vec::as_slice).unwrap_or_default();
        let matches: Vec<&StoredVendor> = by_gstin.into_iter().chain(named.iter().copied()).collect();
        if matches.iter().any(|stored| same_vendor(stored, &row, calendar)) {
            plan.unchanged += 1;
        } else if row.vendor.vendor_type == VendorType::OwnPharmacy {
            errors.add(row.row, "vendorType", OWN_PHARMACY_AT_ONBOARDING);
        } else if matches.is_empty() {
            plan.create.push((row.row, row.vendor));
        } else if let Some(stored) = by_gstin {
            errors.add(
                row.row,
                "gstin",
                format!(
                    "the active vendor {} (id {}) holds this GSTIN with other details",
                    stored.fields.name, stored.id
                ),
            );
        } else {
            errors.add(
                row.row,
                "name",
                format!("an active vendor of this name (id {}) has other details", matches[0].id),
            );
        }
    }
    errors.into_result().map(|()| plan)
}

fn same_vendor(stored: &StoredVendor, row: &VendorRow, calendar: &BusinessCalendar) -> bool {
    let (a, b) = (&stored.fields, &row.vendor);
    let valid_until = match (a.drug_license_valid_until, b.drug_license_valid_until) {
        (None, None) => true,
        (Some(stored), Some(file)) => same_date(stored, file, row.valid_until_day, calendar),
        _ => false,
    };
    key(&a.name) == key(&b.name)
        && a.vendor_type == b.vendor_type
        && a.address == b.address
        && a.phone == b.phone
        && a.email == b.email
        && a.drug_license_number1 == b.drug_license_number1
        && a.drug_license_number2 == b.drug_license_number2
        && a.gstin == b.gstin
        && valid_until
}

/// Whether a stored instant and a file's date are the same date: the same instant, or, when the
/// cell named `day`, the stored instant falls on that day in `calendar` (D3).
pub fn same_date(stored: Timestamp, file: Timestamp, day: Option<Date>, calendar: &BusinessCalendar) -> bool {
    stored == file || day.is_some_and(|day| calendar.date_of(stored) == day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vendors::gstin::Gstin;

    const GSTIN: &str = "27AAPFU0939F1ZV";

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn calendar() -> BusinessCalendar {
        BusinessCalendar::parse("Asia/Kolkata").unwrap()
    }

    fn vendor(id: i64, name: &str, gstin: Option<&str>) -> StoredVendor {
        let mut fields = NewVendor::new(name, VendorType::Wholesaler);
        fields.gstin = gstin.map(|text| Gstin::parse(text).unwrap());
        StoredVendor { id: VendorId(id), fields }
    }

    fn row(row: u32, number: &str, vendor: (Option<&str>, Option<&str>), amount: &str, day: &str) -> InvoiceRow {
        let instant = at(&format!("{day}T00:00:00Z"));
        InvoiceRow {
            row,
            vendor_name: vendor.0.map(str::to_owned),
            vendor_gstin: vendor.1.map(|text| Gstin::parse(text).unwrap()),
            branch_code: None,
            invoice: NewInvoice {
                vendor_id: VendorId(0),
                branch_id: None,
                invoice_number: number.into(),
                amount: Amount::parse(amount).unwrap(),
                invoice_date: instant,
                due_date: instant,
                description: None,
            },
            invoice_day: Some(day.parse().unwrap()),
            due_day: Some(day.parse().unwrap()),
        }
    }

    /// The head office and one more active branch.
    fn branches() -> Vec<(BranchId, String)> {
        vec![(crate::branches::HEAD_OFFICE_ID, "HO".into()), (BranchId(2), "AND".into())]
    }

    fn keys(errors: &RowErrors) -> Vec<&str> {
        errors.errors().iter().map(|(key, _)| key).collect()
    }

    #[test]
    fn the_vendor_is_found_by_gstin_first_then_by_a_unique_name() {
        let vendors = [vendor(1, "Acme", Some(GSTIN)), vendor(2, "Twin", None), vendor(3, " twin ", None)];
        let rows = vec![
            row(2, "A-1", (Some("someone else"), Some(GSTIN)), "10", "2026-04-01"),
            row(3, "A-2", (Some("  ACME "), None), "10", "2026-04-01"),
            row(4, "A-3", (Some("Twin"), None), "10", "2026-04-01"),
            row(5, "A-4", (Some("Nobody"), None), "10", "2026-04-01"),
        ];
        let errors = plan_invoices(rows.clone(), &vendors, &branches(), &[], ExpiredLicensePolicy::Warn, &calendar())
            .unwrap_err();
        assert_eq!(keys(&errors), ["row4.vendor", "row5.vendor"]);
        let plan =
            plan_invoices(rows[..2].to_vec(), &vendors, &branches(), &[], ExpiredLicensePolicy::Warn, &calendar())
                .unwrap();
        assert_eq!(
            plan.create.iter().map(|(row, invoice)| (*row, invoice.vendor_id.get())).collect::<Vec<_>>(),
            [(2, 1), (3, 1)]
        );
    }

    #[test]
    fn a_store_user_imports_into_their_branches_only() {
        // D49: rows go to the writer's only branch, may not name another, and an invoice of
        // another branch holding a row's number is named by its number alone.
        let vendors = [vendor(1, "Acme", None)];
        let with = |row_number, number: &str, code: Option<&str>| InvoiceRow {
            branch_code: code.map(str::to_owned),
            ..row(row_number, number, (Some("Acme"), None), "10", "2026-04-01")
        };
        let store = Scope::of([BranchId(2)]);
        let policy = (ExpiredLicensePolicy::Warn, &calendar());
        let rows = vec![with(2, "S-1", None), with(3, "S-2", Some("AND"))];
        let plan = plan_invoices_in(&store, rows, &vendors, &branches(), &[], policy).unwrap();
        assert!(plan.create.iter().all(|(_, invoice)| invoice.branch_id == Some(BranchId(2))), "{:?}", plan.create);
        let head = plan_invoices_in(&store, vec![with(2, "S-3", Some("HO"))], &vendors, &branches(), &[], policy);
        assert_eq!(keys(&head.unwrap_err()), ["row2.branch"]);
        let several = Scope::of([BranchId(1), BranchId(2)]);
        let unnamed = plan_invoices_in(&several, vec![with(2, "S-4", None)], &vendors, &branches(), &[], policy);
        assert_eq!(keys(&unnamed.unwrap_err()), ["row2.branch"]);
        let stored = StoredInvoice {
            id: InvoiceId(9),
            vendor_id: VendorId(1),
            branch_id: crate::branches::HEAD_OFFICE_ID,
            invoice_number: "S-5".into(),
            amount: Amount::parse("10").unwrap(),
            invoice_date: at("2026-04-01T00:00:00Z"),
            due_date: at("2026-04-01T00:00:00Z"),
        };
        let taken = plan_invoices_in(&store, vec![with(2, "S-5", None)], &vendors, &branches(), &[stored], policy);
        let taken = taken.unwrap_err();
        assert_eq!(keys(&taken), ["row2.invoiceNumber"]);
        let message = taken.errors().iter().next().map(|(_, messages)| messages.join(" ")).unwrap_or_default();
        assert!(!message.contains("id 9"), "nothing but the number is disclosed: {message}");
    }

    #[test]
    fn a_branch_column_names_an_active_branch_by_its_code() {
        let vendors = [vendor(1, "Acme", None)];
        let with = |row_number, number: &str, code: Option<&str>| InvoiceRow {
            branch_code: code.map(str::to_owned),
            ..row(row_number, number, (Some("Acme"), None), "10", "2026-04-01")
        };
        let rows = vec![with(2, "B-1", Some("AND")), with(3, "B-2", None), with(4, "B-3", Some("ZZZ"))];
        let errors = plan_invoices(rows.clone(), &vendors, &branches(), &[], ExpiredLicensePolicy::Warn, &calendar())
            .unwrap_err();
        assert_eq!(keys(&errors), ["row4.branch"]);
        let plan =
            plan_invoices(rows[..2].to_vec(), &vendors, &branches(), &[], ExpiredLicensePolicy::Warn, &calendar())
                .unwrap();
        let named: Vec<Option<i64>> =
            plan.create.iter().map(|(_, invoice)| invoice.branch_id.map(|b| b.get())).collect();
        assert_eq!(named, [Some(2), None], "an empty cell is the default of a create");
        let stored = StoredInvoice {
            id: InvoiceId(9),
            vendor_id: VendorId(1),
            branch_id: crate::branches::HEAD_OFFICE_ID,
            invoice_number: "B-1".into(),
            amount: Amount::parse("10").unwrap(),
            invoice_date: at("2026-04-01T00:00:00Z"),
            due_date: at("2026-04-01T00:00:00Z"),
        };
        let other = plan_invoices(
            vec![with(2, "B-1", Some("AND"))],
            &vendors,
            &branches(),
            std::slice::from_ref(&stored),
            ExpiredLicensePolicy::Warn,
            &calendar(),
        );
        assert_eq!(other.map_err(|errors| keys(&errors).join(",")), Err("row2.invoiceNumber".into()), "another branch");
        let same = plan_invoices(
            vec![with(2, "B-1", Some("HO"))],
            &vendors,
            &branches(),
            std::slice::from_ref(&stored),
            ExpiredLicensePolicy::Warn,
            &calendar(),
        );
        assert_eq!(same.map(|plan| plan.unchanged), Ok(1));
    }

    #[test]
    fn exact_matches_are_unchanged_and_other_matches_or_repeats_are_errors() {
        let vendors = [vendor(1, "Acme", None), vendor(2, "Other", None)];
        let stored = StoredInvoice {
            id: InvoiceId(9),
            vendor_id: VendorId(1),
            branch_id: crate::branches::HEAD_OFFICE_ID,
            invoice_number: "INV-1".into(),
            amount: Amount::parse("10.50").unwrap(),
            // 1 April in India, stored in the evening UTC of 31 March: the report shows 1 April.
            invoice_date: at("2026-03-31T20:00:00Z"),
            due_date: at("2026-03-31T20:00:00Z"),
        };
        let rows = vec![
            row(2, "inv-1", (Some("Acme"), None), "10.5", "2026-04-01"),
            row(3, "INV-1", (Some("Acme"), None), "10.5", "2026-04-01"),
            row(4, "New-1", (Some("Acme"), None), "1", "2026-04-01"),
        ];
        let plan = plan_invoices(
            rows[..1].to_vec(),
            &vendors,
            &branches(),
            std::slice::from_ref(&stored),
            ExpiredLicensePolicy::Warn,
            &calendar(),
        );
        assert_eq!(plan.map(|plan| (plan.create.len(), plan.unchanged)), Ok((0, 1)));
        let errors = plan_invoices(
            rows,
            &vendors,
            &branches(),
            std::slice::from_ref(&stored),
            ExpiredLicensePolicy::Warn,
            &calendar(),
        )
        .unwrap_err();
        assert_eq!(keys(&errors), ["row3.invoiceNumber"], "a repeat of row 2");
        for other in [
            row(2, "INV-1", (Some("Other"), None), "10.5", "2026-04-01"),
            row(2, "INV-1", (Some("Acme"), None), "10.51", "2026-04-01"),
            row(2, "INV-1", (Some("Acme"), None), "10.5", "2026-04-02"),
        ] {
            let errors = plan_invoices(
                vec![other],
                &vendors,
                &branches(),
                std::slice::from_ref(&stored),
                ExpiredLicensePolicy::Warn,
                &calendar(),
            );
            assert_eq!(errors.map_err(|errors| keys(&errors).join(",")), Err("row2.invoiceNumber".into()));
        }
    }

    #[test]
    fn a_blocked_licence_refuses_the_row_on_vendor() {
        let mut expired = vendor(1, "Acme", None);
        expired.fields.drug_license_valid_until = Some(at("2026-03-31T00:00:00Z"));
        let rows = vec![row(2, "A", (Some("Acme"), None), "1", "2026-04-02")];
        let errors =
            plan_invoices(rows.clone(), &[expired.clone()], &branches(), &[], ExpiredLicensePolicy::Block, &calendar());
        assert_eq!(errors.map_err(|errors| keys(&errors).join(",")), Err("row2.vendor".into()));
        assert!(plan_invoices(rows, &[expired], &branches(), &[], ExpiredLicensePolicy::Warn, &calendar()).is_ok());
    }

    #[test]
    fn vendors_match_by_name_or_gstin_and_must_then_be_the_same() {
        let stored = [vendor(1, "Acme", Some(GSTIN)), vendor(2, "Plain", None)];
        let same = |row: u32, name: &str, gstin: Option<&str>| VendorRow {
            row,
            vendor: vendor(0, name, gstin).fields,
            valid_until_day: None,
        };
        let plan = plan_vendors(
            vec![same(2, "acme", Some(GSTIN)), same(3, "PLAIN", None), same(4, "New", None)],
            &stored,
            &calendar(),
        );
        assert_eq!(plan.map(|plan| (plan.create.len(), plan.unchanged)), Ok((1, 2)));
        let mut differs = same(3, "Plain", None);
        differs.vendor.phone = Some("98".into());
        let errors = plan_vendors(
            vec![same(2, "Renamed", Some(GSTIN)), differs, same(4, "New", None), same(5, " new", None)],
            &stored,
            &calendar(),
        )
        .unwrap_err();
        assert_eq!(keys(&errors), ["row2.gstin", "row3.name", "row5.name"]);
        assert_eq!(errors.failed_rows(), 3);
    }

    #[test]
    fn a_day_matches_the_stored_instant_on_that_business_day() {
        let stored = at("2026-04-01T20:00:00Z"); // 2 April in India
        let file = at("2026-04-02T00:00:00Z");
        assert!(same_date(stored, file, Some(Date::constant(2026, 4, 2)), &calendar()));
        assert!(!same_date(stored, file, None, &calendar()), "an instant must be the same instant");
        assert!(!same_date(stored, file, Some(Date::constant(2026, 4, 1)), &calendar()));
    }
}
