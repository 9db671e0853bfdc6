//! What each row contributes to the kept figures (D41): the facts of a vendor, an invoice and a
//! payment a write loads under its lock, and the [`FigureChange`] a write applies.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use jiff::civil::Date;
use rust_decimal::Decimal;

use super::kinds::{DayFigures, LedgerTotals, OpenFigures, VendorDayFigures, VendorFigures};
use crate::clock::BusinessCalendar;
use crate::ids::{BranchId, VendorId};
use crate::invoices::is_open;

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
    /// Its branch (D49).
    pub branch_id: BranchId,
    /// Whether it is active (not canceled).
    pub is_active: bool,
    /// Its amount.
    pub amount: Decimal,
    /// Its paid total: the sum of its active payments.
    pub paid: Decimal,
    /// What credits applied to it: the sum of its active applications (D44).
    pub credited: Decimal,
    /// When it falls due.
    pub due_date: Timestamp,
    /// The business day of its invoice date (D3), the day of its statement line (D35).
    pub day: Date,
}

impl InvoiceFacts {
    /// What it still owes: `amount - paid - credited` (D10, D44).
    pub fn pending(&self) -> Decimal {
        self.amount - self.paid - self.credited
    }

    /// Whether it still owes something and counts as open (Overdue or PartiallyPaid, D10).
    pub fn is_open(&self) -> bool {
        is_open(self.is_active, self.pending())
    }
}

/// What the figures, and the rules of [`crate::credits::rules`], depend on of a vendor credit
/// (D44).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreditFacts {
    /// Its vendor.
    pub vendor_id: VendorId,
    /// Its branch (D49): it is set against that branch's bills only.
    pub branch_id: BranchId,
    /// Whether it is active.
    pub is_active: bool,
    /// What it claims.
    pub claimed: Decimal,
    /// When claimed.
    pub claim_date: Timestamp,
    /// What was accepted; `None` while undecided.
    pub accepted: Option<Decimal>,
    /// When decided.
    pub decision_date: Option<Timestamp>,
    /// The business day of its decision (D3), the day of its statement line (D35).
    pub decided_on: Option<Date>,
    /// The sum of its active applications.
    pub applied: Decimal,
}

impl CreditFacts {
    /// What is left to set against bills: accepted (or nothing) less applied.
    pub fn available(&self) -> Decimal {
        self.accepted.unwrap_or_default() - self.applied
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
    /// The vendor whose statement shows it (D35): its invoice's, while that invoice is active.
    pub owner: Option<VendorId>,
}

impl PaymentFacts {
    /// The facts of a payment of `amount` dated `transaction_date`, in `calendar`'s days, on an
    /// invoice whose facts are `invoice`.
    pub fn new(
        is_active: bool,
        amount: Decimal,
        transaction_date: Timestamp,
        calendar: &BusinessCalendar,
        invoice: &InvoiceFacts,
    ) -> Self {
        Self::dated(is_active, amount, transaction_date, calendar).on(invoice)
    }

    /// The facts of a payment whose invoice is not known yet: [`Self::on`] names it.
    pub fn dated(is_active: bool, amount: Decimal, transaction_date: Timestamp, calendar: &BusinessCalendar) -> Self {
        Self { is_active, amount, day: calendar.date_of(transaction_date), owner: None }
    }

    /// These facts, on an invoice whose facts are `invoice`: a payment belongs to the
    /// statement of its invoice's vendor while that invoice is active.
    pub fn on(self, invoice: &InvoiceFacts) -> Self {
        Self { owner: invoice.is_active.then_some(invoice.vendor_id), ..self }
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
        let mut vendor = VendorFigures {
            active_invoices: sign,
            invoiced: self.amount * factor,
            paid: self.paid * factor,
            credited: self.credited * factor,
            ..VendorFigures::default()
        };
        change.totals.active_invoices += sign;
        change.totals.invoiced += vendor.invoiced;
        change.totals.invoice_paid += vendor.paid;
        change.totals.invoice_credited += vendor.credited;
        if self.is_open() {
            change.totals.open_invoices += sign;
            let open = OpenFigures { invoices: sign, pending: self.pending() * factor };
            change.open_by_due_date.entry(self.due_date).or_default().apply(&open);
            vendor = vendor.with_open(open.invoices, open.pending);
        }
        change.vendors.entry(self.vendor_id).or_default().apply(&vendor);
        let line = VendorDayFigures { invoices: sign, invoiced: vendor.invoiced, ..VendorDayFigures::default() };
        change.vendor_days.entry((self.vendor_id, self.day)).or_default().apply(&line);
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
        if let Some(owner) = self.owner {
            let line = VendorDayFigures { payments: sign, paid: day.amount, ..VendorDayFigures::default() };
            change.vendor_days.entry((owner, self.day)).or_default().apply(&line);
        }
    }
}

impl Contribution for CreditFacts {
    fn add_to(&self, change: &mut FigureChange, sign: i64) {
        if !self.is_active {
            return;
        }
        let factor = Decimal::from(sign);
        let available = self.available() * factor;
        let vendor = VendorFigures { available_credit: available, ..VendorFigures::default() };
        change.vendors.entry(self.vendor_id).or_default().apply(&vendor);
        change.totals.available_credit += available;
        if self.available() > Decimal::ZERO {
            change.totals.credits_available += sign;
        }
        match (self.accepted, self.decided_on) {
            (None, _) => {
                change.totals.pending_claims += sign;
                change.totals.pending_claimed += self.claimed * factor;
            }
            (Some(accepted), Some(day)) if accepted > Decimal::ZERO => {
                let line =
                    VendorDayFigures { credits: sign, credited: accepted * factor, ..VendorDayFigures::default() };
                change.vendor_days.entry((self.vendor_id, day)).or_default().apply(&line);
            }
            _ => {}
        }
    }
}

/// How one write changes the kept figures: what its rows contribute after it, less what they
/// contributed before. Build it with [`FigureChange::row`] once per row the write touches (a
/// row it creates has no `before`; none is ever removed), then apply each part; every part
/// lists only what changes, in ascending key order, so stores lock figure rows in one order and
/// concurrent writes cannot wait on each other in a cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FigureChange {
    pub(super) vendors: BTreeMap<VendorId, VendorFigures>,
    pub(super) open_by_due_date: BTreeMap<Timestamp, OpenFigures>,
    pub(super) days: BTreeMap<Date, DayFigures>,
    pub(super) vendor_days: BTreeMap<(VendorId, Date), VendorDayFigures>,
    pub(super) totals: LedgerTotals,
    /// The invoices the write brought to FullyPaid, which it announces (D47).
    pub(super) paid: BTreeSet<i64>,
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

    /// Adds the change of invoice number `id` from `before` to `after`, as [`Self::row`]
    /// does, and notes the invoice when the write brings it to FullyPaid (D47).
    pub fn invoice(&mut self, id: i64, before: Option<&InvoiceFacts>, after: Option<&InvoiceFacts>) -> &mut Self {
        if let (Some(before), Some(after)) = (before, after)
            && became_paid(before, after)
        {
            self.paid.insert(id);
        }
        self.row(before, after)
    }

    /// The invoices the write brought to FullyPaid, by id (D47).
    pub fn paid_invoices(&self) -> impl Iterator<Item = i64> + '_ {
        self.paid.iter().copied()
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

    /// The change of each vendor's statement lines per business day, by vendor and day; those
    /// that stay are left out.
    pub fn vendor_days(&self) -> impl Iterator<Item = ((VendorId, Date), &VendorDayFigures)> {
        self.vendor_days.iter().filter(|(_, change)| !change.is_zero()).map(|(key, change)| (*key, change))
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
            && self.vendor_days().next().is_none()
            && self.totals().is_none()
    }
}

/// Whether an invoice that stood as `before` and stands as `after` became FullyPaid (active
/// and owing nothing, D10): a payment of any kind, a credit applied, an amount lowered or a
/// restore may bring it there, and the write then announces `invoice.paid` (D47).
pub fn became_paid(before: &InvoiceFacts, after: &InvoiceFacts) -> bool {
    let fully_paid = |facts: &InvoiceFacts| facts.is_active && facts.pending() <= rust_decimal::Decimal::ZERO;
    fully_paid(after) && !fully_paid(before)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::test_values::{dec, ts};

    fn invoice(vendor: i64, is_active: bool, amount: &str, paid: &str, due: &str) -> InvoiceFacts {
        InvoiceFacts {
            vendor_id: VendorId(vendor),
            branch_id: crate::branches::HEAD_OFFICE_ID,
            is_active,
            amount: dec(amount),
            paid: dec(paid),
            credited: dec("0"),
            due_date: ts(due),
            day: "2024-05-01".parse().unwrap(),
        }
    }

    fn payment(is_active: bool, amount: &str, day: &str) -> PaymentFacts {
        PaymentFacts { is_active, amount: dec(amount), day: day.parse().unwrap(), owner: Some(VendorId(7)) }
    }

    #[test]
    fn a_new_invoice_adds_to_its_vendor_the_totals_and_its_due_date() {
        let due = "2024-06-01T00:00:00Z";
        let mut change = FigureChange::new();
        change.row(None, Some(&invoice(7, true, "100", "0", due)));
        let vendors: Vec<_> = change.vendors().collect();
        assert_eq!(
            vendors,
            [(
                VendorId(7),
                &VendorFigures {
                    active_invoices: 1,
                    invoiced: dec("100"),
                    open_invoices: 1,
                    owed: dec("100"),
                    ..VendorFigures::default()
                }
            )]
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
            [(
                VendorId(7),
                &VendorFigures { paid: dec("60"), open_invoices: -1, owed: dec("-60"), ..VendorFigures::default() }
            )],
            "settled: no longer owing anything"
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
    fn an_overpayment_lowers_the_balance_but_not_what_the_vendor_is_owed() {
        // D33: a single payment may overpay; D11's balance goes below what the open invoices
        // owe, which is what ranks today's aging (D34, D43).
        let due = "2024-06-01T00:00:00Z";
        let mut change = FigureChange::new();
        change
            .row(None, Some(&invoice(7, true, "100", "130", due)))
            .row(None, Some(&invoice(7, true, "50", "20", due)));
        let (_, vendor) = change.vendors().next().unwrap();
        assert_eq!(vendor.outstanding(), dec("0"));
        assert_eq!((vendor.open_invoices, vendor.owed), (1, dec("30")));
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
                (3, VendorFigures::of_balance(1, dec("120"), dec("90")).with_open(1, dec("90"))),
                (9, VendorFigures::of_balance(-1, dec("-100"), dec("-70")).with_open(-1, dec("-70"))),
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
    fn a_credit_applied_lowers_the_balance_and_what_is_owed_as_a_payment_would() {
        // D44: pending is amount - paid - credited; an application moves the invoice's credited
        // total and the credit's applied total in one write.
        let due = "2024-06-01T00:00:00Z";
        let before = invoice(7, true, "100", "40", due);
        let after = InvoiceFacts { credited: dec("60"), ..before };
        let claim = CreditFacts {
            vendor_id: VendorId(7),
            branch_id: crate::branches::HEAD_OFFICE_ID,
            is_active: true,
            claimed: dec("80"),
            claim_date: ts("2024-05-01T00:00:00Z"),
            accepted: Some(dec("70")),
            decision_date: Some(ts("2024-05-02T00:00:00Z")),
            decided_on: Some("2024-05-02".parse().unwrap()),
            applied: dec("0"),
        };
        let applied = CreditFacts { applied: dec("60"), ..claim };
        let mut change = FigureChange::new();
        change.row(Some(&before), Some(&after)).row(Some(&claim), Some(&applied));
        let (_, vendor) = change.vendors().next().unwrap();
        assert_eq!(
            *vendor,
            VendorFigures {
                credited: dec("60"),
                open_invoices: -1,
                owed: dec("-60"),
                available_credit: dec("-60"),
                ..VendorFigures::default()
            }
        );
        assert_eq!(vendor.outstanding(), dec("-60"));
        let totals = change.totals().unwrap();
        assert_eq!(
            (totals.total_due(), totals.available_credit, totals.credits_available),
            (dec("-60"), dec("-60"), 0)
        );
        assert_eq!(change.vendor_days().count(), 0, "the credit's line is its decision, which stays");

        let mut decided = FigureChange::new();
        let undecided = CreditFacts { accepted: None, decision_date: None, decided_on: None, ..claim };
        decided.row(Some(&undecided), Some(&claim));
        let totals = decided.totals().unwrap();
        assert_eq!((totals.pending_claims, totals.pending_claimed), (-1, dec("-80")));
        assert_eq!((totals.credits_available, totals.available_credit), (1, dec("70")));
        let day: Date = "2024-05-02".parse().unwrap();
        let line = VendorDayFigures { credits: 1, credited: dec("70"), ..VendorDayFigures::default() };
        assert_eq!(decided.vendor_days().collect::<Vec<_>>(), [((VendorId(7), day), &line)]);
        let rejected = CreditFacts { accepted: Some(dec("0")), ..claim };
        let mut nothing = FigureChange::new();
        nothing.row(None, Some(&rejected));
        assert_eq!(nothing.vendor_days().count(), 0, "a rejected claim shows no line");
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
}
