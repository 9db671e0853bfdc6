//! The kinds of kept figure (D41): per vendor, per due date, per business day and for the
//! installation. Each adds a change to itself; what a row contributes is `contribution.rs`'s.

use std::ops::Neg;

use rust_decimal::Decimal;

use crate::vendors::VendorTotals;

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
    /// The sum of what credits applied to them (D44).
    pub credited: Decimal,
    /// How many of its active invoices still owe something (`amount > paid + credited`).
    pub open_invoices: i64,
    /// What those still owe: the sum of their positive pending amounts, so overpaid invoices
    /// take nothing off it (unlike [`VendorFigures::outstanding`]).
    pub owed: Decimal,
    /// What its active credits still have to set against bills: accepted less applied (D44).
    pub available_credit: Decimal,
}

impl VendorFigures {
    /// What the vendor still owes: invoiced less paid less credited (negative when overpaid,
    /// D11, D44). The one definition of a vendor's outstanding balance.
    pub fn outstanding(&self) -> Decimal {
        self.invoiced - self.paid - self.credited
    }

    /// The figures of a vendor as a store keeps them: its invoiced total and its outstanding
    /// balance ([`VendorFigures::outstanding`], which ranks vendors), rather than what was paid.
    pub fn of_balance(active_invoices: i64, invoiced: Decimal, outstanding: Decimal) -> Self {
        Self { active_invoices, invoiced, paid: invoiced - outstanding, ..Self::default() }
    }

    /// The balance a statement of everything closes at (D35, D44): the outstanding balance less
    /// what the vendor's credits still have to apply, that is, every active invoice less every
    /// active payment of them and every active credit's accepted amount.
    pub fn statement_balance(&self) -> Decimal {
        self.outstanding() - self.available_credit
    }

    /// These figures with what credits applied to the invoices (`credited`, taken from what
    /// [`VendorFigures::of_balance`] counted as paid) and what the vendor's credits still have
    /// to apply, as a store keeps them (D44).
    pub fn with_credits(self, credited: Decimal, available_credit: Decimal) -> Self {
        Self { paid: self.paid - credited, credited, available_credit, ..self }
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
            total_credited_amount: self.credited.normalize(),
            outstanding_balance: self.outstanding().normalize(),
            available_credit: self.available_credit.normalize(),
        }
    }

    /// Adds `change` to these figures.
    pub fn apply(&mut self, change: &VendorFigures) {
        self.active_invoices += change.active_invoices;
        self.invoiced += change.invoiced;
        self.paid += change.paid;
        self.credited += change.credited;
        self.open_invoices += change.open_invoices;
        self.owed += change.owed;
        self.available_credit += change.available_credit;
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
            credited: -self.credited,
            open_invoices: -self.open_invoices,
            owed: -self.owed,
            available_credit: -self.available_credit,
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
/// the active payments of its active invoices dated that day, and its active credits decided
/// that day with something accepted (D44).
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
    /// How many credits.
    pub credits: i64,
    /// The sum of their accepted amounts.
    pub credited: Decimal,
}

impl VendorDayFigures {
    /// Adds `change` to these figures.
    pub fn apply(&mut self, change: &VendorDayFigures) {
        self.invoices += change.invoices;
        self.invoiced += change.invoiced;
        self.payments += change.payments;
        self.paid += change.paid;
        self.credits += change.credits;
        self.credited += change.credited;
    }

    /// The statement lines of the day.
    pub fn lines(&self) -> i64 {
        self.invoices + self.payments + self.credits
    }

    /// What the day adds to the vendor's balance: invoiced less paid less credited.
    pub fn net(&self) -> Decimal {
        self.invoiced - self.paid - self.credited
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
    /// The sum of what credits applied to the active invoices (D44).
    pub invoice_credited: Decimal,
    /// Every payment record, active or deleted.
    pub payments: i64,
    /// Active payments.
    pub active_payments: i64,
    /// The sum of the active payments, whatever their invoice's state (D12's `totalPaid`).
    pub paid_out: Decimal,
    /// Active credits with something still available (D44's `availableCredit.creditCount`).
    pub credits_available: i64,
    /// What the active credits still have to apply (D44's `availableCredit.amount`).
    pub available_credit: Decimal,
    /// Active credits not yet decided (D44's `pendingClaims.creditCount`).
    pub pending_claims: i64,
    /// What those claim (D44's `pendingClaims.amount`).
    pub pending_claimed: Decimal,
}

impl LedgerTotals {
    /// The sum of `pendingAmount` over active invoices (D12's `totalDue`; D44: less credits).
    pub fn total_due(&self) -> Decimal {
        self.invoiced - self.invoice_paid - self.invoice_credited
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
        self.invoice_credited += change.invoice_credited;
        self.payments += change.payments;
        self.active_payments += change.active_payments;
        self.paid_out += change.paid_out;
        self.credits_available += change.credits_available;
        self.available_credit += change.available_credit;
        self.pending_claims += change.pending_claims;
        self.pending_claimed += change.pending_claimed;
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
            invoice_credited: -self.invoice_credited,
            payments: -self.payments,
            active_payments: -self.active_payments,
            paid_out: -self.paid_out,
            credits_available: -self.credits_available,
            available_credit: -self.available_credit,
            pending_claims: -self.pending_claims,
            pending_claimed: -self.pending_claimed,
        }
    }
}
