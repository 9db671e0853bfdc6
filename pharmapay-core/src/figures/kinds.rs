//! The kinds of kept figure (D41): per vendor, per due date, per business day and for the
//! installation. Each adds a change to itself; what a row contributes is `contribution.rs`'s.

use std::ops::Neg;

use rust_decimal::Decimal;

use crate::domain::VendorTotals;

/// A vendor's figures over its active invoices (D11), and over those of them still owing
/// something, which rank the vendors of today's aging (D34, D43).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VendorFigures {
    /// How many of its invoices are active.
    pub active_invoices: i64,
    /// The sum of their amounts.
    pub invoiced: Decimal,
    /// The sum of their paid totals.
    pub paid: Decimal,
    /// How many of its active invoices still owe something (`amount > paid`).
    pub open_invoices: i64,
    /// What those still owe: the sum of their positive pending amounts, so overpaid invoices
    /// take nothing off it (unlike [`VendorFigures::outstanding`]).
    pub owed: Decimal,
}

impl VendorFigures {
    /// What the vendor still owes: invoiced less paid (negative when overpaid, D11). The one
    /// definition of a vendor's outstanding balance.
    pub fn outstanding(&self) -> Decimal {
        self.invoiced - self.paid
    }

    /// The figures of a vendor as a store keeps them: its invoiced total and its outstanding
    /// balance ([`VendorFigures::outstanding`], which ranks vendors), rather than what was paid.
    pub fn of_balance(active_invoices: i64, invoiced: Decimal, outstanding: Decimal) -> Self {
        Self { active_invoices, invoiced, paid: invoiced - outstanding, ..Self::default() }
    }

    /// These figures with the open invoices' part, as a store keeps it.
    pub fn with_open(self, open_invoices: i64, owed: Decimal) -> Self {
        Self { open_invoices, owed, ..self }
    }

    /// The vendor's totals as its reads show them (D11).
    pub fn totals(&self) -> VendorTotals {
        VendorTotals {
            total_invoice_value: self.invoiced.normalize(),
            total_paid_amount: self.paid.normalize(),
            outstanding_balance: self.outstanding().normalize(),
        }
    }

    /// Adds `change` to these figures.
    pub fn apply(&mut self, change: &VendorFigures) {
        self.active_invoices += change.active_invoices;
        self.invoiced += change.invoiced;
        self.paid += change.paid;
        self.open_invoices += change.open_invoices;
        self.owed += change.owed;
    }

    pub(super) fn is_zero(&self) -> bool {
        *self == VendorFigures::default()
    }
}

impl Neg for VendorFigures {
    type Output = Self;

    fn neg(self) -> Self {
        Self {
            active_invoices: -self.active_invoices,
            invoiced: -self.invoiced,
            paid: -self.paid,
            open_invoices: -self.open_invoices,
            owed: -self.owed,
        }
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

    pub(super) fn is_zero(&self) -> bool {
        *self == DayFigures::default()
    }
}

impl Neg for DayFigures {
    type Output = Self;

    fn neg(self) -> Self {
        Self { payments: -self.payments, amount: -self.amount }
    }
}

/// One vendor's statement lines of one business day (D35): its active invoices dated that day,
/// and the active payments of its active invoices dated that day.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VendorDayFigures {
    /// How many invoices.
    pub invoices: i64,
    /// The sum of their amounts.
    pub invoiced: Decimal,
    /// How many payments.
    pub payments: i64,
    /// The sum of their amounts.
    pub paid: Decimal,
}

impl VendorDayFigures {
    /// Adds `change` to these figures.
    pub fn apply(&mut self, change: &VendorDayFigures) {
        self.invoices += change.invoices;
        self.invoiced += change.invoiced;
        self.payments += change.payments;
        self.paid += change.paid;
    }

    /// The statement lines of the day.
    pub fn lines(&self) -> i64 {
        self.invoices + self.payments
    }

    /// What the day adds to the vendor's balance: invoiced less paid.
    pub fn net(&self) -> Decimal {
        self.invoiced - self.paid
    }

    pub(super) fn is_zero(&self) -> bool {
        *self == VendorDayFigures::default()
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

    pub(super) fn is_zero(&self) -> bool {
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

    pub(super) fn is_zero(&self) -> bool {
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
