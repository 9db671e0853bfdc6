//! Invoices: what the pharmacy owes a vendor, with paid, pending and status computed on read.

mod engine;
pub mod rules;
pub mod store;

use jiff::Timestamp;
use rust_decimal::Decimal;

use crate::base::tidy::{decimal_text, tidy_optional, tidy_required};
use crate::clock::parse_datetime;
use crate::error::FieldErrors;
use crate::ids::{BranchId, InvoiceId, VendorId};
use crate::money::{Amount, parse_decimal};
use crate::paging::{
    ListFilter, ListQuery, Params, Sort, SortDir, SortKey, read_bool, read_branch_filter, read_days, read_id,
};
use crate::text::{self, CODE_MAX, Lines, TEXT_MAX};

use crate::vendors::VendorBrief;

/// An invoice's computed status (spec, States and transitions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InvoiceStatus {
    /// Active, something still pending, not past due.
    PartiallyPaid,
    /// Active, nothing pending (pending at or below zero).
    FullyPaid,
    /// Active, something pending, due date before today.
    Overdue,
    /// Soft-deleted.
    Canceled,
}

/// Whether an invoice whose pending amount (`amount - paid - credited`, D44) is `pending` still
/// owes something: pending above zero (D10). An invoice that does, while active, is open:
/// Overdue or PartiallyPaid. The one definition; stores select such invoices by
/// [`StatusTerm::Owes`].
pub fn owes(pending: Decimal) -> bool {
    pending > Decimal::ZERO
}

/// One condition of the status table (D10), over what a store keeps of an invoice: whether it
/// is active, whether it still owes something ([`owes`]) and whether its due date falls before
/// today. Each status is the conjunction of its terms ([`InvoiceStatus::terms`]); a store that
/// selects or counts invoices by status renders these terms in its own query language, so the
/// table has this one definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StatusTerm {
    /// The invoice is active (`true`) or canceled (`false`).
    Active(bool),
    /// The invoice still owes something (`true`, [`owes`]) or not.
    Owes(bool),
    /// Its due date is before the first instant of today in the business time zone (D3), or
    /// not.
    DueBeforeToday(bool),
}

impl StatusTerm {
    /// Whether an invoice meets the term, given whether it is active, still owes something and
    /// falls due before today.
    pub fn holds(self, is_active: bool, owing: bool, due_before_today: bool) -> bool {
        match self {
            StatusTerm::Active(wanted) => is_active == wanted,
            StatusTerm::Owes(wanted) => owing == wanted,
            StatusTerm::DueBeforeToday(wanted) => due_before_today == wanted,
        }
    }
}

/// The terms of an open invoice: active and still owing something (Overdue or PartiallyPaid,
/// D10). What falls due soon (D32), the kept open-invoice figures (D41) and a vendor payment's
/// invoices (D31) are open invoices.
pub const OPEN: &[StatusTerm] = &[StatusTerm::Active(true), StatusTerm::Owes(true)];

/// Whether an invoice, active or not and with `pending` still to pay, is open: meets [`OPEN`].
pub fn is_open(is_active: bool, pending: Decimal) -> bool {
    OPEN.iter().all(|term| term.holds(is_active, owes(pending), false))
}

impl InvoiceStatus {
    /// Every status.
    pub const ALL: [InvoiceStatus; 4] =
        [InvoiceStatus::PartiallyPaid, InvoiceStatus::FullyPaid, InvoiceStatus::Overdue, InvoiceStatus::Canceled];

    /// The status table (spec; D10), each row the terms an invoice of that status meets:
    /// 1. Canceled when inactive; 2. FullyPaid when active and owing nothing (`pending <= 0`);
    /// 3. Overdue when active, owing something and due before today, that is, with `due_date`
    ///    earlier than the first instant of today in the business zone (D3);
    /// 4. PartiallyPaid when active, owing something and due today or later.
    ///
    /// The rows exclude each other, so an invoice meets exactly one.
    pub fn terms(self) -> &'static [StatusTerm] {
        use StatusTerm::{Active, DueBeforeToday, Owes};
        match self {
            InvoiceStatus::Canceled => &[Active(false)],
            InvoiceStatus::FullyPaid => &[Active(true), Owes(false)],
            InvoiceStatus::Overdue => &[Active(true), Owes(true), DueBeforeToday(true)],
            InvoiceStatus::PartiallyPaid => &[Active(true), Owes(true), DueBeforeToday(false)],
        }
    }

    /// The status of an invoice, the one whose [`InvoiceStatus::terms`] it meets: `pending` is
    /// `amount - paid`, and today begins at `today_start` in the business time zone (D3, D10).
    pub fn compute(is_active: bool, pending: Decimal, due_date: Timestamp, today_start: Timestamp) -> Self {
        let (owing, late) = (owes(pending), due_date < today_start);
        Self::ALL
            .into_iter()
            .find(|status| status.terms().iter().all(|term| term.holds(is_active, owing, late)))
            .unwrap_or(InvoiceStatus::PartiallyPaid)
    }

    /// Parses a status name in any case (D7).
    pub fn parse(value: &str) -> Option<Self> {
        let value = value.trim();
        Self::ALL.into_iter().find(|s| s.name().eq_ignore_ascii_case(value))
    }

    /// The canonical name.
    pub fn name(self) -> &'static str {
        match self {
            InvoiceStatus::PartiallyPaid => "PartiallyPaid",
            InvoiceStatus::FullyPaid => "FullyPaid",
            InvoiceStatus::Overdue => "Overdue",
            InvoiceStatus::Canceled => "Canceled",
        }
    }
}

/// An invoice with its computed figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invoice {
    /// Id.
    pub id: InvoiceId,
    /// The vendor billed by.
    pub vendor_id: VendorId,
    /// That vendor's name.
    pub vendor_name: String,
    /// The branch whose bill it is (D49).
    pub branch_id: BranchId,
    /// That branch's code.
    pub branch_code: String,
    /// The vendor's invoice number, unique among active invoices (D4).
    pub invoice_number: String,
    /// Total amount.
    pub amount: Amount,
    /// Sum of active payments (D10).
    pub paid_amount: Decimal,
    /// Sum of the active applications of vendor credits to it (D44).
    pub credited_amount: Decimal,
    /// Invoice date.
    pub invoice_date: Timestamp,
    /// Due date.
    pub due_date: Timestamp,
    /// Free text.
    pub description: Option<String>,
    /// False once canceled.
    pub is_active: bool,
    /// When created.
    pub created_at: Timestamp,
    /// When last changed.
    pub updated_at: Timestamp,
    /// Computed status as of the `today_start` it was read with.
    pub status: InvoiceStatus,
}

impl Invoice {
    /// `amount - paid_amount - credited_amount`; negative when overpaid (D10, D44).
    pub fn pending_amount(&self) -> Decimal {
        (self.amount.get() - self.paid_amount - self.credited_amount).normalize()
    }

    /// Recomputes [`Invoice::status`] for the day starting at `today_start`.
    pub fn with_status_at(mut self, today_start: Timestamp) -> Self {
        self.status = InvoiceStatus::compute(self.is_active, self.pending_amount(), self.due_date, today_start);
        self
    }
}

/// One invoice with its vendor, as the single-invoice read returns it (D13).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvoiceDetail {
    /// The invoice.
    pub invoice: Invoice,
    /// Its vendor.
    pub vendor: VendorBrief,
}

/// The invoice fields nested in a transaction (spec; D13).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvoiceBrief {
    /// Id.
    pub id: InvoiceId,
    /// Invoice number.
    pub invoice_number: String,
    /// Vendor id.
    pub vendor_id: VendorId,
    /// Vendor name.
    pub vendor_name: String,
    /// The invoice's branch, which is its payments' too (D49).
    pub branch_id: BranchId,
    /// That branch's code.
    pub branch_code: String,
    /// Total amount.
    pub amount: Amount,
    /// Amount still unpaid.
    pub pending_amount: Decimal,
}

impl From<&Invoice> for InvoiceBrief {
    fn from(invoice: &Invoice) -> Self {
        Self {
            id: invoice.id,
            invoice_number: invoice.invoice_number.clone(),
            vendor_id: invoice.vendor_id,
            vendor_name: invoice.vendor_name.clone(),
            branch_id: invoice.branch_id,
            branch_code: invoice.branch_code.clone(),
            amount: invoice.amount,
            pending_amount: invoice.pending_amount(),
        }
    }
}

/// The fields of an invoice create, and of a full replacement (D14).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewInvoice {
    /// The vendor; must be active.
    pub vendor_id: VendorId,
    /// The branch whose bill it is; must be active (D49). `None` on a create is the default
    /// branch of [`crate::branches::rules::branch_of_create`]; on a replacement, the invoice's
    /// branch as it is.
    pub branch_id: Option<BranchId>,
    /// Invoice number; unique among active invoices (D4).
    pub invoice_number: String,
    /// Total amount, positive (D1).
    pub amount: Amount,
    /// Invoice date.
    pub invoice_date: Timestamp,
    /// Due date; not before the invoice date (D2).
    pub due_date: Timestamp,
    /// Free text.
    pub description: Option<String>,
}

impl NewInvoice {
    /// Trims the text fields and checks the rules that span fields (D2).
    ///
    /// # Errors
    /// The messages by field path.
    pub fn validate(mut self) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        tidy_required(&mut self.invoice_number, "invoiceNumber", CODE_MAX, &mut errors);
        tidy_optional(&mut self.description, "description", TEXT_MAX, Lines::Multi, &mut errors);
        if self.due_date < self.invoice_date {
            errors.add("dueDate", "must not be earlier than invoiceDate");
        }
        if errors.is_empty() { Ok(self) } else { Err(errors) }
    }
}

/// What to sort invoices by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InvoiceSortKey {
    /// Invoice date (the default, newest first).
    InvoiceDate,
    /// Due date.
    DueDate,
    /// Amount.
    Amount,
    /// Pending amount.
    PendingAmount,
    /// Paid amount.
    PaidAmount,
    /// Invoice number, case-insensitively.
    InvoiceNumber,
    /// Vendor name, case-insensitively.
    VendorName,
}

impl SortKey for InvoiceSortKey {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("invoiceDate", InvoiceSortKey::InvoiceDate),
        ("dueDate", InvoiceSortKey::DueDate),
        ("amount", InvoiceSortKey::Amount),
        ("pendingAmount", InvoiceSortKey::PendingAmount),
        ("paidAmount", InvoiceSortKey::PaidAmount),
        ("invoiceNumber", InvoiceSortKey::InvoiceNumber),
        ("vendorName", InvoiceSortKey::VendorName),
    ];

    const DEFAULT: Sort<Self> = Sort { key: InvoiceSortKey::InvoiceDate, dir: SortDir::Desc };
}

/// Which invoices to list (spec, Invoice list query).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InvoiceFilter {
    /// Only this computed status.
    pub status: Option<InvoiceStatus>,
    /// Lower-cased substring of the invoice number or the vendor name.
    pub search: Option<String>,
    /// Only this vendor's invoices.
    pub vendor_id: Option<VendorId>,
    /// Lower-cased substring of the invoice number.
    pub invoice_number: Option<String>,
    /// Invoice date at or after.
    pub from_date: Option<Timestamp>,
    /// Invoice date at or before.
    pub to_date: Option<Timestamp>,
    /// Amount at or above.
    pub min_amount: Option<Decimal>,
    /// Amount at or below.
    pub max_amount: Option<Decimal>,
    /// Active only (true), canceled only (false) or all (`None`, the default).
    pub is_active: Option<bool>,
    /// Only active invoices still owing something and due from today to today plus this many
    /// days (D32); the engine turns it into [`InvoiceFilter::due_window`].
    pub due_within_days: Option<u16>,
    /// Only active invoices still owing something and due from the first instant (included) to
    /// the second (excluded): `due_within_days` in the business calendar (D32). Stores read this,
    /// never the days.
    pub due_window: Option<(Timestamp, Timestamp)>,
    /// Only overpaid invoices (pending below zero, `true`) or the others (`false`) (D33).
    pub overpaid: Option<bool>,
    /// Only these branches' invoices (D49): as read, the repeatable `branchId`; once the engine
    /// has judged it against the caller's scope, the branches kept (`None`: every branch).
    pub branches: Option<Vec<BranchId>>,
}

impl ListFilter for InvoiceFilter {
    const PAGE_SIZE: u32 = 15;

    /// Reads the filter parameters of `GET /api/invoices` (also used by the report, D26).
    fn read(params: &(impl Params + ?Sized), errors: &mut FieldErrors) -> Self {
        let mut filter = Self::default();
        if let Some(value) = params.get("status") {
            match InvoiceStatus::parse(value) {
                Some(status) => filter.status = Some(status),
                None => errors.add("status", "must be one of FullyPaid, PartiallyPaid, Overdue, Canceled"),
            }
        }
        if let Some(search) = params.get("search") {
            filter.search = errors.check("search", text::search_term(search)).flatten();
        }
        filter.vendor_id = read_id(params, "vendorId", errors).map(VendorId);
        filter.branches = read_branch_filter(params, errors);
        if let Some(number) = params.get("invoiceNumber") {
            filter.invoice_number = errors.check("invoiceNumber", text::search_term(number)).flatten();
        }
        filter.from_date = read_date(params, "fromDate", errors);
        filter.to_date = read_date(params, "toDate", errors);
        if let (Some(from), Some(to)) = (filter.from_date, filter.to_date)
            && to < from
        {
            errors.add("toDate", "must not be earlier than fromDate");
        }
        filter.min_amount = read_decimal(params, "minAmount", errors);
        filter.max_amount = read_decimal(params, "maxAmount", errors);
        if let (Some(min), Some(max)) = (filter.min_amount, filter.max_amount)
            && max < min
        {
            errors.add("maxAmount", "must not be less than minAmount");
        }
        filter.is_active = read_bool(params, "isActive", errors);
        filter.due_within_days = read_days(params, "dueWithinDays", errors);
        filter.overpaid = read_bool(params, "overpaid", errors);
        filter
    }
}

/// A page of the list: filter, sort and page (D8).
pub type InvoiceQuery = ListQuery<InvoiceFilter, Sort<InvoiceSortKey>>;

pub(crate) fn read_date(params: &(impl Params + ?Sized), name: &str, errors: &mut FieldErrors) -> Option<Timestamp> {
    let value = params.get(name)?;
    errors.check(name, parse_datetime(value))
}

fn read_decimal(params: &(impl Params + ?Sized), name: &str, errors: &mut FieldErrors) -> Option<Decimal> {
    let value = params.get(name)?;
    errors.check(name, parse_decimal(value))
}

impl NewInvoice {
    /// The values written, as the audit log keeps them (D22).
    pub fn audit_changes(&self) -> String {
        let mut changes = serde_json::json!({
            "vendorId": self.vendor_id.get(),
            "invoiceNumber": self.invoice_number,
            "amount": decimal_text(self.amount.get()),
            "invoiceDate": self.invoice_date.to_string(),
            "dueDate": self.due_date.to_string(),
            "description": self.description,
        });
        if let Some(branch) = self.branch_id {
            changes["branchId"] = branch.get().into();
        }
        changes.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn dec(text: &str) -> Decimal {
        Decimal::from_str_exact(text).unwrap()
    }

    #[test]
    fn status_table_rows_in_priority_order() {
        let today = ts("2024-05-10T00:00:00Z");
        let past = ts("2024-05-09T23:59:59Z");
        let future = ts("2024-05-10T00:00:00Z");
        // (label, is_active, pending, due, expected)
        let rows = [
            ("canceled beats fully paid", false, dec("0"), past, InvoiceStatus::Canceled),
            ("canceled beats overdue", false, dec("10"), past, InvoiceStatus::Canceled),
            ("fully paid beats overdue", true, dec("0"), past, InvoiceStatus::FullyPaid),
            ("overpaid is fully paid", true, dec("-0.01"), future, InvoiceStatus::FullyPaid),
            ("pending and past due is overdue", true, dec("0.0001"), past, InvoiceStatus::Overdue),
            ("due today is not overdue", true, dec("5"), future, InvoiceStatus::PartiallyPaid),
            ("nothing paid yet counts as partially paid", true, dec("100"), future, InvoiceStatus::PartiallyPaid),
        ];
        for (label, is_active, pending, due, expected) in rows {
            assert_eq!(InvoiceStatus::compute(is_active, pending, due, today), expected, "{label}");
        }
    }

    #[test]
    fn every_invoice_meets_the_terms_of_exactly_one_status() {
        for is_active in [true, false] {
            for owing in [true, false] {
                for late in [true, false] {
                    let met: Vec<InvoiceStatus> = InvoiceStatus::ALL
                        .into_iter()
                        .filter(|status| status.terms().iter().all(|term| term.holds(is_active, owing, late)))
                        .collect();
                    assert_eq!(met.len(), 1, "active {is_active}, owing {owing}, late {late}: {met:?}");
                }
            }
        }
        assert!(owes(dec("0.0001")) && !owes(dec("0")) && !owes(dec("-1")), "pending above zero, and only that");
        assert!(OPEN.iter().all(|term| term.holds(true, true, false)), "an open invoice is active and owes");
    }

    #[test]
    fn statuses_parse_in_any_case() {
        assert_eq!(InvoiceStatus::parse("overdue"), Some(InvoiceStatus::Overdue));
        assert_eq!(InvoiceStatus::parse("FULLYPAID"), Some(InvoiceStatus::FullyPaid));
        assert_eq!(InvoiceStatus::parse("Paid"), None);
    }

    #[test]
    fn due_date_before_invoice_date_is_refused() {
        let invoice = NewInvoice {
            vendor_id: VendorId(1),
            branch_id: None,
            invoice_number: " INV-1 ".into(),
            amount: Amount::parse("10").unwrap(),
            invoice_date: ts("2024-05-10T00:00:00Z"),
            due_date: ts("2024-05-09T00:00:00Z"),
            description: None,
        };
        let errors = invoice.clone().validate().unwrap_err();
        assert!(errors.contains("dueDate"));
        let fixed = NewInvoice { due_date: ts("2024-05-10T00:00:00Z"), ..invoice }.validate().unwrap();
        assert_eq!(fixed.invoice_number, "INV-1");
    }

    #[test]
    fn list_parameters_are_checked() {
        let query = InvoiceQuery::from_params(&[]).unwrap();
        assert_eq!(query.sort, Sort { key: InvoiceSortKey::InvoiceDate, dir: SortDir::Desc });
        assert_eq!(query.page.page_size(), 15);
        assert_eq!(query.filter.is_active, None);
        let errors = InvoiceQuery::from_params(&[
            ("status", "Late"),
            ("minAmount", "1.23456"),
            ("fromDate", "yesterday"),
            ("vendorId", "x"),
        ])
        .unwrap_err();
        for field in ["status", "minAmount", "fromDate", "vendorId"] {
            assert!(errors.contains(field), "{field}: {errors}");
        }
        let errors = InvoiceQuery::from_params(&[("minAmount", "10"), ("maxAmount", "5")]).unwrap_err();
        assert!(errors.contains("maxAmount"));
    }
}
