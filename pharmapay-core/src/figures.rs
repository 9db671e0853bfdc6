//! Kept figures (D41): the running totals a store keeps beside its rows, so that a vendor's
//! balance, the dashboard and the totals of the lists read a handful of rows at a chain's scale
//! instead of summing a million.
//!
//! A kept figure is only ever the sum of what each row contributes to it, and this module is the
//! one place that says what a row contributes: [`Contribution`] of a vendor, an invoice or a
//! payment. A write therefore changes the figures by what its rows contribute after it less what
//! they contributed before; a store loads those rows' facts under its lock, builds a
//! [`FigureChange`] from them, and applies the change in the write's own transaction (D41: live
//! figures, never a cache that can be stale). The property model recounts every figure from the
//! rows after each random step and compares.
//!
//! The figures:
//! - per vendor ([`VendorFigures`]): its active invoices, their amounts and their paid totals
//!   (D11), so its outstanding balance, for ranking;
//! - per due date ([`OpenFigures`]): how many active invoices still owe something and how much,
//!   which splits open invoices into Overdue and PartiallyPaid on either side of today (D10)
//!   and sums what falls due in a window (D32);
//! - per business day ([`DayFigures`]): the active payments dated that day in the `TimeZone`
//!   setting's zone (D3), for the dashboard's months and recent payments (D12);
//! - for the installation ([`LedgerTotals`]): the counts and sums the summary shows and the
//!   totals of unfiltered lists.

use std::collections::BTreeMap;
use std::ops::Neg;

use jiff::Timestamp;
use jiff::civil::Date;
use rust_decimal::Decimal;

use crate::clock::BusinessCalendar;
use crate::dashboard::Summary;
use crate::domain::{InvoiceFilter, InvoiceStatus, TransactionFilter, VendorFilter};
use crate::ids::VendorId;

/// A vendor's figures over its active invoices (D11).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VendorFigures {
    /// How many of its invoices are active.
    pub active_invoices: i64,
    /// The sum of their amounts.
    pub invoiced: Decimal,
    /// The sum of their paid totals.
    pub paid: Decimal,
}

impl VendorFigures {
    /// What the vendor still owes: invoiced less paid (negative when overpaid).
    pub fn outstanding(&self) -> Decimal {
        self.invoiced - self.paid
    }

    /// Adds `change` to these figures.
    pub fn apply(&mut self, change: &VendorFigures) {
        self.active_invoices += change.active_invoices;
        self.invoiced += change.invoiced;
        self.paid += change.paid;
    }

    fn is_zero(&self) -> bool {
        *self == VendorFigures::default()
    }
}

impl Neg for VendorFigures {
    type Output = Self;

    fn neg(self) -> Self {
        Self { active_invoices: -self.active_invoices, invoiced: -self.invoiced, paid: -self.paid }
    }
}

/// The active payments dated on one business day.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DayFigures {
    /// How many.
    pub payments: i64,
    /// The sum of their amounts.
    pub amount: Decimal,
}

impl DayFigures {
    /// Adds `change` to these figures.
    pub fn apply(&mut self, change: &DayFigures) {
        self.payments += change.payments;
        self.amount += change.amount;
    }

    fn is_zero(&self) -> bool {
        *self == DayFigures::default()
    }
}

impl Neg for DayFigures {
    type Output = Self;

    fn neg(self) -> Self {
        Self { payments: -self.payments, amount: -self.amount }
    }
}

/// The open invoices (active, still owing something) of one due date: how many, and what they
/// still owe.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenFigures {
    /// How many.
    pub invoices: i64,
    /// The sum of their pending amounts.
    pub pending: Decimal,
}

impl OpenFigures {
    /// Adds `change` to these figures.
    pub fn apply(&mut self, change: &OpenFigures) {
        self.invoices += change.invoices;
        self.pending += change.pending;
    }

    fn is_zero(&self) -> bool {
        *self == OpenFigures::default()
    }
}

/// The installation's figures: what the dashboard's summary shows (D12) and the totals of the
/// unfiltered lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LedgerTotals {
    /// Every vendor record, active or not.
    pub vendors: i64,
    /// Active vendors.
    pub active_vendors: i64,
    /// Every invoice record, active or canceled.
    pub invoices: i64,
    /// Active invoices.
    pub active_invoices: i64,
    /// Active invoices still owing something (`amount > paid`): Overdue or PartiallyPaid.
    pub open_invoices: i64,
    /// The sum of the active invoices' amounts.
    pub invoiced: Decimal,
    /// The sum of the active invoices' paid totals.
    pub invoice_paid: Decimal,
    /// Every payment record, active or deleted.
    pub payments: i64,
    /// Active payments.
    pub active_payments: i64,
    /// The sum of the active payments, whatever their invoice's state (D12's `totalPaid`).
    pub paid_out: Decimal,
}

impl LedgerTotals {
    /// The sum of `pendingAmount` over active invoices (D12's `totalDue`).
    pub fn total_due(&self) -> Decimal {
        self.invoiced - self.invoice_paid
    }

    /// Adds `change` to these totals.
    pub fn apply(&mut self, change: &LedgerTotals) {
        self.vendors += change.vendors;
        self.active_vendors += change.active_vendors;
        self.invoices += change.invoices;
        self.active_invoices += change.active_invoices;
        self.open_invoices += change.open_invoices;
        self.invoiced += change.invoiced;
        self.invoice_paid += change.invoice_paid;
        self.payments += change.payments;
        self.active_payments += change.active_payments;
        self.paid_out += change.paid_out;
    }

    fn is_zero(&self) -> bool {
        *self == LedgerTotals::default()
    }
}

impl Neg for LedgerTotals {
    type Output = Self;

    fn neg(self) -> Self {
        Self {
            vendors: -self.vendors,
            active_vendors: -self.active_vendors,
            invoices: -self.invoices,
            active_invoices: -self.active_invoices,
            open_invoices: -self.open_invoices,
            invoiced: -self.invoiced,
            invoice_paid: -self.invoice_paid,
            payments: -self.payments,
            active_payments: -self.active_payments,
            paid_out: -self.paid_out,
        }
    }
}

/// What the dashboard's summary reads (D12), in one read: the installation's totals and the
/// payments of the recent days.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SummaryFigures {
    /// The installation's totals.
    pub totals: LedgerTotals,
    /// The active payments dated on a recent day.
    pub recent: DayFigures,
}

impl SummaryFigures {
    /// The summary card these figures give.
    pub fn summary(&self) -> Summary {
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
        Summary {
            total_vendors: count(self.totals.vendors),
            total_invoices: count(self.totals.invoices),
            total_due: self.totals.total_due().normalize(),
            total_paid: self.totals.paid_out.normalize(),
            recent_transactions: count(self.recent.payments),
        }
    }
}

/// A list's total count (D8's `totalCount`) that kept figures answer, when the list's filter
/// asks only for a status or a state (active or deleted); other filters are counted row by row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeptCount {
    /// Every invoice.
    AllInvoices,
    /// Active invoices.
    ActiveInvoices,
    /// Canceled invoices.
    CanceledInvoices,
    /// Active invoices owing nothing (D10: FullyPaid).
    FullyPaidInvoices,
    /// Open invoices due before today (D10: Overdue).
    OpenInvoicesDueBeforeToday,
    /// Open invoices due today or later (D10: PartiallyPaid).
    OpenInvoicesDueFromToday,
    /// Active vendors.
    ActiveVendors,
    /// Deleted vendors.
    DeletedVendors,
    /// Active payments.
    ActivePayments,
    /// Deleted payments.
    DeletedPayments,
    /// Nothing can match.
    Nothing,
}

impl KeptCount {
    /// The kept count of an invoice list with `filter`, if any.
    pub fn of_invoices(filter: &InvoiceFilter) -> Option<Self> {
        let status_or_state =
            InvoiceFilter { status: filter.status, is_active: filter.is_active, ..InvoiceFilter::default() };
        if *filter != status_or_state {
            return None;
        }
        Some(match (filter.status, filter.is_active) {
            (None, None) => KeptCount::AllInvoices,
            (None, Some(true)) => KeptCount::ActiveInvoices,
            (None | Some(InvoiceStatus::Canceled), Some(false)) | (Some(InvoiceStatus::Canceled), None) => {
                KeptCount::CanceledInvoices
            }
            (Some(InvoiceStatus::Canceled), Some(true)) | (Some(_), Some(false)) => KeptCount::Nothing,
            (Some(InvoiceStatus::FullyPaid), _) => KeptCount::FullyPaidInvoices,
            (Some(InvoiceStatus::Overdue), _) => KeptCount::OpenInvoicesDueBeforeToday,
            (Some(InvoiceStatus::PartiallyPaid), _) => KeptCount::OpenInvoicesDueFromToday,
        })
    }

    /// The kept count of a vendor list with `filter`, if any.
    pub fn of_vendors(filter: &VendorFilter) -> Option<Self> {
        let state_only = VendorFilter { is_active: filter.is_active, ..VendorFilter::default() };
        (*filter == state_only).then_some(if filter.is_active {
            KeptCount::ActiveVendors
        } else {
            KeptCount::DeletedVendors
        })
    }

    /// The kept count of a payment list with `filter`, if any.
    pub fn of_payments(filter: &TransactionFilter) -> Option<Self> {
        let state_only = TransactionFilter { is_active: filter.is_active, ..TransactionFilter::default() };
        (*filter == state_only).then_some(if filter.is_active {
            KeptCount::ActivePayments
        } else {
            KeptCount::DeletedPayments
        })
    }

    /// The count as a sum of kept figures, each with its sign: what a store adds up (in SQL or
    /// in memory) to answer it.
    pub fn terms(self) -> &'static [(KeptTerm, i64)] {
        use KeptTerm::*;
        match self {
            KeptCount::AllInvoices => &[(Invoices, 1)],
            KeptCount::ActiveInvoices => &[(ActiveInvoices, 1)],
            KeptCount::CanceledInvoices => &[(Invoices, 1), (ActiveInvoices, -1)],
            KeptCount::FullyPaidInvoices => &[(ActiveInvoices, 1), (OpenInvoices, -1)],
            KeptCount::OpenInvoicesDueBeforeToday => &[(OpenInvoicesDueBeforeToday, 1)],
            KeptCount::OpenInvoicesDueFromToday => &[(OpenInvoices, 1), (OpenInvoicesDueBeforeToday, -1)],
            KeptCount::ActiveVendors => &[(ActiveVendors, 1)],
            KeptCount::DeletedVendors => &[(Vendors, 1), (ActiveVendors, -1)],
            KeptCount::ActivePayments => &[(ActivePayments, 1)],
            KeptCount::DeletedPayments => &[(Payments, 1), (ActivePayments, -1)],
            KeptCount::Nothing => &[],
        }
    }
}

/// A kept figure a [`KeptCount`] adds up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeptTerm {
    /// [`LedgerTotals::vendors`].
    Vendors,
    /// [`LedgerTotals::active_vendors`].
    ActiveVendors,
    /// [`LedgerTotals::invoices`].
    Invoices,
    /// [`LedgerTotals::active_invoices`].
    ActiveInvoices,
    /// [`LedgerTotals::open_invoices`].
    OpenInvoices,
    /// The open invoices due before the start of today: the sum of the per-due-date counts of
    /// the due dates before it.
    OpenInvoicesDueBeforeToday,
    /// [`LedgerTotals::payments`].
    Payments,
    /// [`LedgerTotals::active_payments`].
    ActivePayments,
}

impl KeptFigures {
    /// The value of `count` over these figures, today starting at `today_start`.
    pub fn count(&self, count: KeptCount, today_start: Timestamp) -> i64 {
        let totals = &self.totals;
        count
            .terms()
            .iter()
            .map(|(term, sign)| {
                sign * match term {
                    KeptTerm::Vendors => totals.vendors,
                    KeptTerm::ActiveVendors => totals.active_vendors,
                    KeptTerm::Invoices => totals.invoices,
                    KeptTerm::ActiveInvoices => totals.active_invoices,
                    KeptTerm::OpenInvoices => totals.open_invoices,
                    KeptTerm::OpenInvoicesDueBeforeToday => self.open_due_before(today_start),
                    KeptTerm::Payments => totals.payments,
                    KeptTerm::ActivePayments => totals.active_payments,
                }
            })
            .sum()
    }
}

/// What the figures depend on of a vendor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VendorFacts {
    /// Whether it is active.
    pub is_active: bool,
}

/// What the figures depend on of an invoice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvoiceFacts {
    /// Its vendor.
    pub vendor_id: VendorId,
    /// Whether it is active (not canceled).
    pub is_active: bool,
    /// Its amount.
    pub amount: Decimal,
    /// Its paid total: the sum of its active payments.
    pub paid: Decimal,
    /// When it falls due.
    pub due_date: Timestamp,
}

impl InvoiceFacts {
    /// Whether it still owes something and counts as open (Overdue or PartiallyPaid, D10).
    pub fn is_open(&self) -> bool {
        self.is_active && self.amount > self.paid
    }
}

/// What the figures depend on of a payment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PaymentFacts {
    /// Whether it is active.
    pub is_active: bool,
    /// Its amount.
    pub amount: Decimal,
    /// The business day of its `transactionDate` (D3).
    pub day: Date,
}

impl PaymentFacts {
    /// The facts of a payment of `amount` dated `transaction_date`, in `calendar`'s days.
    pub fn new(is_active: bool, amount: Decimal, transaction_date: Timestamp, calendar: &BusinessCalendar) -> Self {
        Self { is_active, amount, day: calendar.date_of(transaction_date) }
    }
}

/// What one row adds to the kept figures.
pub trait Contribution {
    /// Adds what this row contributes, times `sign` (1 or -1), to `change`.
    fn add_to(&self, change: &mut FigureChange, sign: i64);
}

impl<R: Contribution> Contribution for &R {
    fn add_to(&self, change: &mut FigureChange, sign: i64) {
        (*self).add_to(change, sign);
    }
}

impl Contribution for VendorFacts {
    fn add_to(&self, change: &mut FigureChange, sign: i64) {
        change.totals.vendors += sign;
        change.totals.active_vendors += sign * i64::from(self.is_active);
    }
}

impl Contribution for InvoiceFacts {
    fn add_to(&self, change: &mut FigureChange, sign: i64) {
        change.totals.invoices += sign;
        if !self.is_active {
            return;
        }
        let factor = Decimal::from(sign);
        let vendor = VendorFigures { active_invoices: sign, invoiced: self.amount * factor, paid: self.paid * factor };
        change.vendors.entry(self.vendor_id).or_default().apply(&vendor);
        change.totals.active_invoices += sign;
        change.totals.invoiced += vendor.invoiced;
        change.totals.invoice_paid += vendor.paid;
        if self.is_open() {
            change.totals.open_invoices += sign;
            let open = OpenFigures { invoices: sign, pending: (self.amount - self.paid) * factor };
            change.open_by_due_date.entry(self.due_date).or_default().apply(&open);
        }
    }
}

impl Contribution for PaymentFacts {
    fn add_to(&self, change: &mut FigureChange, sign: i64) {
        change.totals.payments += sign;
        if !self.is_active {
            return;
        }
        let day = DayFigures { payments: sign, amount: self.amount * Decimal::from(sign) };
        change.days.entry(self.day).or_default().apply(&day);
        change.totals.active_payments += sign;
        change.totals.paid_out += day.amount;
    }
}

/// How one write changes the kept figures: what its rows contribute after it, less what they
/// contributed before. Build it with [`FigureChange::row`] once per row the write touches (a
/// row it creates has no `before`; none is ever removed), then apply each part; every part
/// lists only what changes, in ascending key order, so stores lock figure rows in one order and
/// concurrent writes cannot wait on each other in a cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FigureChange {
    vendors: BTreeMap<VendorId, VendorFigures>,
    open_by_due_date: BTreeMap<Timestamp, OpenFigures>,
    days: BTreeMap<Date, DayFigures>,
    totals: LedgerTotals,
}

impl FigureChange {
    /// No change yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the change of one row from `before` to `after`.
    pub fn row<R: Contribution>(&mut self, before: Option<&R>, after: Option<&R>) -> &mut Self {
        if let Some(before) = before {
            before.add_to(self, -1);
        }
        if let Some(after) = after {
            after.add_to(self, 1);
        }
        self
    }

    /// The change of each vendor's figures, by vendor id; vendors whose figures stay are left
    /// out.
    pub fn vendors(&self) -> impl Iterator<Item = (VendorId, &VendorFigures)> {
        self.vendors.iter().filter(|(_, change)| !change.is_zero()).map(|(id, change)| (*id, change))
    }

    /// The change of each due date's open invoices, by due date; due dates whose figures stay
    /// are left out.
    pub fn open_by_due_date(&self) -> impl Iterator<Item = (Timestamp, &OpenFigures)> {
        self.open_by_due_date.iter().filter(|(_, change)| !change.is_zero()).map(|(due, change)| (*due, change))
    }

    /// The change of each business day's payments, by day; days that stay are left out.
    pub fn days(&self) -> impl Iterator<Item = (Date, &DayFigures)> {
        self.days.iter().filter(|(_, change)| !change.is_zero()).map(|(day, change)| (*day, change))
    }

    /// The change of the installation's totals, unless they stay.
    pub fn totals(&self) -> Option<&LedgerTotals> {
        (!self.totals.is_zero()).then_some(&self.totals)
    }

    /// True when the write changes no figure.
    pub fn is_empty(&self) -> bool {
        self.vendors().next().is_none()
            && self.open_by_due_date().next().is_none()
            && self.days().next().is_none()
            && self.totals().is_none()
    }
}

/// Every kept figure at once: what a store keeps, or a recount of it from the rows. Entries
/// that hold nothing are left out, so two sets of figures are equal exactly when every figure
/// is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeptFigures {
    /// Per vendor.
    pub vendors: BTreeMap<VendorId, VendorFigures>,
    /// Open invoices per due date.
    pub open_by_due_date: BTreeMap<Timestamp, OpenFigures>,
    /// Active payments per business day.
    pub days: BTreeMap<Date, DayFigures>,
    /// The installation's totals.
    pub totals: LedgerTotals,
}

impl KeptFigures {
    /// The figures of `rows`, counted afresh.
    pub fn recount<R: Contribution>(rows: impl IntoIterator<Item = R>) -> Self {
        let mut figures = KeptFigures::default();
        figures.add_rows(rows);
        figures
    }

    /// Adds what `rows` contribute.
    pub fn add_rows<R: Contribution>(&mut self, rows: impl IntoIterator<Item = R>) {
        let mut change = FigureChange::new();
        for row in rows {
            row.add_to(&mut change, 1);
        }
        self.apply(&change);
    }

    /// Applies `change`.
    pub fn apply(&mut self, change: &FigureChange) {
        for (vendor_id, vendor) in change.vendors() {
            let figures = self.vendors.entry(vendor_id).or_default();
            figures.apply(vendor);
            if figures.is_zero() {
                self.vendors.remove(&vendor_id);
            }
        }
        for (due_date, open) in change.open_by_due_date() {
            let figures = self.open_by_due_date.entry(due_date).or_default();
            figures.apply(open);
            if figures.is_zero() {
                self.open_by_due_date.remove(&due_date);
            }
        }
        for (day, change) in change.days() {
            let figures = self.days.entry(day).or_default();
            figures.apply(change);
            if figures.is_zero() {
                self.days.remove(&day);
            }
        }
        if let Some(totals) = change.totals() {
            self.totals.apply(totals);
        }
    }

    /// These figures as a change from none at all, for a store that writes them afresh.
    pub fn as_change(&self) -> FigureChange {
        FigureChange {
            vendors: self.vendors.clone(),
            open_by_due_date: self.open_by_due_date.clone(),
            days: self.days.clone(),
            totals: self.totals,
        }
    }

    /// A vendor's figures (zero for a vendor without active invoices).
    pub fn vendor(&self, vendor_id: VendorId) -> VendorFigures {
        self.vendors.get(&vendor_id).copied().unwrap_or_default()
    }

    /// The open invoices due before `today_start`: the Overdue ones (D10).
    pub fn open_due_before(&self, today_start: Timestamp) -> i64 {
        self.open_by_due_date.range(..today_start).map(|(_, open)| open.invoices).sum()
    }

    /// The open invoices due from `from` (included) to `before` (excluded).
    pub fn open_due_between(&self, from: Timestamp, before: Timestamp) -> OpenFigures {
        let mut sum = OpenFigures::default();
        if from < before {
            for (_, open) in self.open_by_due_date.range(from..before) {
                sum.apply(open);
            }
        }
        sum
    }

    /// Replaces the day figures by the days of `calendar` (D41: a new `TimeZone`), from the
    /// active payments' dates and amounts, given as groups of payments sharing one date.
    pub fn recount_days(
        &mut self,
        calendar: &BusinessCalendar,
        groups: impl IntoIterator<Item = (Timestamp, DayFigures)>,
    ) {
        self.days = days_of(calendar, groups);
    }
}

/// The day figures of active payments given as groups sharing one `transactionDate`, filed
/// under their business days in `calendar` (D3).
pub fn days_of(
    calendar: &BusinessCalendar,
    groups: impl IntoIterator<Item = (Timestamp, DayFigures)>,
) -> BTreeMap<Date, DayFigures> {
    let mut days: BTreeMap<Date, DayFigures> = BTreeMap::new();
    for (date, group) in groups {
        days.entry(calendar.date_of(date)).or_default().apply(&group);
    }
    days.retain(|_, figures| !figures.is_zero());
    days
}

/// A business day as an integer `YYYYMMDD`, the key stores file day figures under: it orders
/// as the days do, and a month's days lie between `YYYYMM00` and `YYYYMM99`.
pub fn day_key(day: Date) -> i64 {
    i64::from(day.year()) * 10_000 + i64::from(day.month()) * 100 + i64::from(day.day())
}

/// The business day of a [`day_key`]; `None` for a number that names no day.
pub fn day_of_key(key: i64) -> Option<Date> {
    let year = i16::try_from(key / 10_000).ok()?;
    let month = i8::try_from(key / 100 % 100).ok()?;
    let day = i8::try_from(key % 100).ok()?;
    Date::new(year, month, day).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(text: &str) -> Decimal {
        text.parse().unwrap()
    }

    fn ts(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn invoice(vendor: i64, is_active: bool, amount: &str, paid: &str, due: &str) -> InvoiceFacts {
        InvoiceFacts { vendor_id: VendorId(vendor), is_active, amount: dec(amount), paid: dec(paid), due_date: ts(due) }
    }

    fn payment(is_active: bool, amount: &str, day: &str) -> PaymentFacts {
        PaymentFacts { is_active, amount: dec(amount), day: day.parse().unwrap() }
    }

    #[test]
    fn a_new_invoice_adds_to_its_vendor_the_totals_and_its_due_date() {
        let due = "2024-06-01T00:00:00Z";
        let mut change = FigureChange::new();
        change.row(None, Some(&invoice(7, true, "100", "0", due)));
        let vendors: Vec<_> = change.vendors().collect();
        assert_eq!(
            vendors,
            [(VendorId(7), &VendorFigures { active_invoices: 1, invoiced: dec("100"), paid: dec("0") })]
        );
        let open = OpenFigures { invoices: 1, pending: dec("100") };
        assert_eq!(change.open_by_due_date().collect::<Vec<_>>(), [(ts(due), &open)]);
        let totals = change.totals().unwrap();
        assert_eq!((totals.invoices, totals.active_invoices, totals.open_invoices), (1, 1, 1));
        assert_eq!(totals.total_due(), dec("100"));
        assert_eq!(change.days().count(), 0);
    }

    #[test]
    fn a_payment_moves_paid_and_closes_the_invoice_it_settles() {
        let due = "2024-06-01T00:00:00Z";
        let before = invoice(7, true, "100", "40", due);
        let after = invoice(7, true, "100", "100", due);
        let mut change = FigureChange::new();
        change.row(Some(&before), Some(&after)).row(None, Some(&payment(true, "60", "2024-05-20")));
        assert_eq!(
            change.vendors().collect::<Vec<_>>(),
            [(VendorId(7), &VendorFigures { active_invoices: 0, invoiced: dec("0"), paid: dec("60") })]
        );
        let closed = OpenFigures { invoices: -1, pending: dec("-60") };
        assert_eq!(change.open_by_due_date().collect::<Vec<_>>(), [(ts(due), &closed)], "settled: no longer open");
        let day: Date = "2024-05-20".parse().unwrap();
        assert_eq!(change.days().collect::<Vec<_>>(), [(day, &DayFigures { payments: 1, amount: dec("60") })]);
        let totals = change.totals().unwrap();
        assert_eq!((totals.payments, totals.active_payments, totals.open_invoices), (1, 1, -1));
        assert_eq!((totals.invoice_paid, totals.paid_out), (dec("60"), dec("60")));
    }

    #[test]
    fn a_payment_on_a_canceled_invoice_counts_only_as_paid_out() {
        // D12: totalPaid sums active payments whatever their invoice's state; D11 counts only
        // active invoices.
        let due = "2024-06-01T00:00:00Z";
        let mut change = FigureChange::new();
        change
            .row(Some(&invoice(7, false, "100", "0", due)), Some(&invoice(7, false, "100", "10", due)))
            .row(None, Some(&payment(true, "10", "2024-05-20")));
        assert_eq!(change.vendors().count(), 0);
        assert_eq!(change.open_by_due_date().count(), 0);
        let totals = change.totals().unwrap();
        assert_eq!((totals.invoice_paid, totals.paid_out), (dec("0"), dec("10")));
    }

    #[test]
    fn moving_an_invoice_to_another_vendor_moves_its_figures_in_vendor_order() {
        let due = "2024-06-01T00:00:00Z";
        let mut change = FigureChange::new();
        change.row(Some(&invoice(9, true, "100", "30", due)), Some(&invoice(3, true, "120", "30", due)));
        let vendors: Vec<_> = change.vendors().map(|(id, figures)| (id.get(), *figures)).collect();
        assert_eq!(
            vendors,
            [
                (3, VendorFigures { active_invoices: 1, invoiced: dec("120"), paid: dec("30") }),
                (9, VendorFigures { active_invoices: -1, invoiced: dec("-100"), paid: dec("-30") }),
            ],
            "ascending ids: the order stores lock vendor rows in"
        );
        let moved = OpenFigures { invoices: 0, pending: dec("20") };
        assert_eq!(
            change.open_by_due_date().collect::<Vec<_>>(),
            [(ts(due), &moved)],
            "open before and after on the same due date: only what it owes changes"
        );
        assert_eq!(change.totals().unwrap().invoiced, dec("20"));
    }

    #[test]
    fn cancel_and_restore_cancel_out() {
        let due = "2024-06-01T00:00:00Z";
        let active = invoice(7, true, "100", "40", due);
        let canceled = InvoiceFacts { is_active: false, ..active };
        let mut change = FigureChange::new();
        change.row(Some(&active), Some(&canceled)).row(Some(&canceled), Some(&active));
        assert!(change.is_empty(), "{change:?}");
    }

    #[test]
    fn moving_a_payment_between_days_moves_its_day_figures() {
        let mut change = FigureChange::new();
        change.row(Some(&payment(true, "10", "2024-05-20")), Some(&payment(true, "15", "2024-05-21")));
        let days: Vec<_> = change.days().map(|(day, figures)| (day.to_string(), *figures)).collect();
        assert_eq!(
            days,
            [
                ("2024-05-20".to_owned(), DayFigures { payments: -1, amount: dec("-10") }),
                ("2024-05-21".to_owned(), DayFigures { payments: 1, amount: dec("15") }),
            ]
        );
        assert_eq!(change.totals().unwrap().paid_out, dec("5"));
        assert_eq!(change.totals().unwrap().payments, 0);
    }

    #[test]
    fn vendors_count_in_the_totals_only() {
        let mut change = FigureChange::new();
        change.row(None, Some(&VendorFacts { is_active: true }));
        assert_eq!((change.totals().unwrap().vendors, change.totals().unwrap().active_vendors), (1, 1));
        let mut deleted = FigureChange::new();
        deleted.row(Some(&VendorFacts { is_active: true }), Some(&VendorFacts { is_active: false }));
        assert_eq!((deleted.totals().unwrap().vendors, deleted.totals().unwrap().active_vendors), (0, -1));
        assert_eq!(deleted.vendors().count(), 0);
    }

    #[test]
    fn status_and_state_filters_are_counted_from_kept_figures() {
        let today = ts("2024-06-01T00:00:00Z");
        let figures = KeptFigures {
            totals: LedgerTotals {
                vendors: 7,
                active_vendors: 5,
                invoices: 10,
                active_invoices: 8,
                open_invoices: 5,
                payments: 9,
                active_payments: 6,
                ..LedgerTotals::default()
            },
            open_by_due_date: [
                (ts("2024-05-01T00:00:00Z"), OpenFigures { invoices: 2, pending: dec("20") }),
                (today, OpenFigures { invoices: 1, pending: dec("1") }),
                (ts("2024-07-01T00:00:00Z"), OpenFigures { invoices: 2, pending: dec("3") }),
            ]
            .into(),
            ..KeptFigures::default()
        };
        let cases = [
            ("everything", None, None, Some(10)),
            ("active", None, Some(true), Some(8)),
            ("canceled by state", None, Some(false), Some(2)),
            ("canceled by status", Some(InvoiceStatus::Canceled), None, Some(2)),
            ("canceled and active", Some(InvoiceStatus::Canceled), Some(true), Some(0)),
            ("fully paid", Some(InvoiceStatus::FullyPaid), None, Some(3)),
            ("fully paid and canceled", Some(InvoiceStatus::FullyPaid), Some(false), Some(0)),
            ("overdue", Some(InvoiceStatus::Overdue), Some(true), Some(2)),
            ("partially paid", Some(InvoiceStatus::PartiallyPaid), None, Some(3)),
        ];
        for (label, status, is_active, expected) in cases {
            let filter = InvoiceFilter { status, is_active, ..InvoiceFilter::default() };
            let count = KeptCount::of_invoices(&filter).map(|kept| figures.count(kept, today));
            assert_eq!(count, expected, "{label}");
        }
        let searched = InvoiceFilter { search: Some("inv".into()), ..InvoiceFilter::default() };
        assert_eq!(KeptCount::of_invoices(&searched), None, "other filters are counted row by row");
        let count = |kept: Option<KeptCount>| kept.map(|kept| figures.count(kept, today));
        assert_eq!(count(KeptCount::of_vendors(&VendorFilter::default())), Some(5));
        assert_eq!(
            count(KeptCount::of_vendors(&VendorFilter { is_active: false, ..VendorFilter::default() })),
            Some(2)
        );
        let typed = VendorFilter { vendor_type: Some(crate::domain::VendorType::Dealer), ..VendorFilter::default() };
        assert_eq!(KeptCount::of_vendors(&typed), None);
        assert_eq!(count(KeptCount::of_payments(&TransactionFilter::default())), Some(6));
        let deleted = TransactionFilter { is_active: false, ..TransactionFilter::default() };
        assert_eq!(count(KeptCount::of_payments(&deleted)), Some(3));
    }

    #[test]
    fn day_keys_round_trip_and_order_like_days() {
        let day: Date = "2024-02-29".parse().unwrap();
        assert_eq!(day_key(day), 20_240_229);
        assert_eq!(day_of_key(20_240_229), Some(day));
        assert_eq!(day_of_key(20_240_230), None);
        assert!(day_key("2023-12-31".parse().unwrap()) < day_key("2024-01-01".parse().unwrap()));
    }

    #[test]
    fn payments_are_filed_under_their_business_day() {
        let kolkata = BusinessCalendar::parse("Asia/Kolkata").unwrap();
        let group = |at: &str, amount: &str| (ts(at), DayFigures { payments: 1, amount: dec(amount) });
        // A Kolkata day runs from 18:30 UTC to 18:30 UTC.
        let days = days_of(
            &kolkata,
            [
                group("2024-05-19T18:29:59Z", "1"),
                group("2024-05-19T18:30:00Z", "2"),
                group("2024-05-20T18:29:59Z", "4"),
            ],
        );
        let days: Vec<_> = days.iter().map(|(day, figures)| (day.to_string(), *figures)).collect();
        assert_eq!(
            days,
            [
                ("2024-05-19".to_owned(), DayFigures { payments: 1, amount: dec("1") }),
                ("2024-05-20".to_owned(), DayFigures { payments: 2, amount: dec("6") }),
            ]
        );
        let utc = days_of(&BusinessCalendar::utc(), [group("2024-05-19T18:30:00Z", "2")]);
        assert_eq!(utc.keys().next().map(ToString::to_string).as_deref(), Some("2024-05-19"));
    }
}
