//! Kept figures in memory (D41): per vendor, per due date, per business day and for the
//! installation, changed under the same lock as every write that moves them, by the change
//! [`pharmapay_core::figures`] computes from the touched rows' facts before and after.
//!
//! A write takes a [`State::snapshot`] of the rows whose figures it may move (a row it is about
//! to create has no facts yet) and hands it to [`State::keep_figures`] once it is done.

use pharmapay_core::BusinessCalendar;
use pharmapay_core::figures::{
    Contribution, CreditFacts, DayFigures, FigureChange, InvoiceFacts, KeptFigures, PaymentFacts, VendorFacts,
};
use pharmapay_core::ids::{BranchId, VendorId};

use crate::State;

/// A row whose contribution to the figures a write may change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Touch {
    Vendor(i64),
    Invoice(i64),
    Payment(i64),
    Credit(i64),
}

/// A touched row's facts at one moment (`None` before it exists).
#[derive(Clone, Copy)]
pub(crate) enum Facts {
    Vendor(Option<VendorFacts>),
    Invoice(Option<InvoiceFacts>),
    Payment(Option<PaymentFacts>),
    Credit(Option<CreditFacts>),
}

impl Contribution for Facts {
    fn add_to(&self, change: &mut FigureChange, sign: i64) {
        match self {
            Facts::Vendor(facts) => facts.iter().for_each(|facts| facts.add_to(change, sign)),
            Facts::Invoice(facts) => facts.iter().for_each(|facts| facts.add_to(change, sign)),
            Facts::Payment(facts) => facts.iter().for_each(|facts| facts.add_to(change, sign)),
            Facts::Credit(facts) => facts.iter().for_each(|facts| facts.add_to(change, sign)),
        }
    }
}

/// The facts of touched rows before a write, for [`State::keep_figures`].
pub(crate) struct Snapshot(Vec<(Touch, Facts)>);

impl State {
    fn facts(&self, touch: Touch) -> Facts {
        match touch {
            Touch::Vendor(id) => {
                Facts::Vendor(self.vendors.get(&id).map(|row| VendorFacts { is_active: row.is_active }))
            }
            Touch::Invoice(id) => Facts::Invoice(self.invoice_facts(id)),
            Touch::Payment(id) => Facts::Payment(self.transactions.get(&id).map(|row| {
                let payment =
                    PaymentFacts::dated(row.is_active, row.amount.get(), row.transaction_date, &self.calendar);
                match self.invoice_facts(row.invoice_id) {
                    Some(invoice) => payment.on(&invoice),
                    None => payment,
                }
            })),
            Touch::Credit(id) => Facts::Credit(self.credit_facts(id)),
        }
    }

    pub(crate) fn invoice_facts(&self, id: i64) -> Option<InvoiceFacts> {
        self.invoices.get(&id).map(|row| InvoiceFacts {
            vendor_id: VendorId(row.vendor_id),
            branch_id: BranchId(row.branch_id),
            is_active: row.is_active,
            amount: row.amount.get(),
            paid: row.paid,
            credited: row.credited,
            due_date: row.due_date,
            day: self.calendar.date_of(row.invoice_date),
        })
    }

    /// An invoice with its payments, whose statement lines (D35) follow it when a write deletes,
    /// restores or moves it.
    pub(crate) fn invoice_and_payments(&self, invoice_id: i64) -> Vec<Touch> {
        let payments = self.transactions.iter().filter(|(_, row)| row.invoice_id == invoice_id);
        std::iter::once(Touch::Invoice(invoice_id)).chain(payments.map(|(id, _)| Touch::Payment(*id))).collect()
    }

    /// The facts of `touched` as they stand, before a write changes them.
    pub(crate) fn snapshot(&self, touched: &[Touch]) -> Snapshot {
        let mut snapshot: Vec<(Touch, Facts)> = Vec::with_capacity(touched.len());
        for touch in touched {
            // A row named twice (a payment moved within its own invoice) counts once.
            if !snapshot.iter().any(|(seen, _)| seen == touch) {
                snapshot.push((*touch, self.facts(*touch)));
            }
        }
        Snapshot(snapshot)
    }

    /// Applies what the rows of `before` contribute now, less what they contributed then.
    pub(crate) fn keep_figures(&mut self, before: Snapshot) {
        let mut change = FigureChange::new();
        for (touch, then) in before.0 {
            match (touch, then, self.facts(touch)) {
                (Touch::Invoice(id), Facts::Invoice(then), Facts::Invoice(now)) => {
                    change.invoice(id, then.as_ref(), now.as_ref());
                }
                (_, then, now) => {
                    change.row(Some(&then), Some(&now));
                }
            }
        }
        self.figures.apply(&change);
        // D47: the write announces the invoices it brought to FullyPaid where it ends.
        self.paid_now.extend(change.paid_invoices());
    }

    /// Switches the business calendar to `calendar` and recounts every day figure in its days
    /// (D41).
    pub(crate) fn recount_days(&mut self, calendar: BusinessCalendar) {
        self.calendar = calendar;
        let groups = self
            .transactions
            .values()
            .filter(|row| row.is_active)
            .map(|row| (row.transaction_date, DayFigures { payments: 1, amount: row.amount.get() }));
        let days = pharmapay_core::figures::days_of(&self.calendar, groups);
        self.figures.days = days;
        // Statement lines per vendor and day follow the new days too.
        self.figures.vendor_days = self.recount().vendor_days;
    }

    /// Every figure recounted from the rows.
    fn recount(&self) -> KeptFigures {
        let vendors = self.vendors.keys().map(|id| self.facts(Touch::Vendor(*id)));
        let invoices = self.invoices.keys().map(|id| self.facts(Touch::Invoice(*id)));
        let payments = self.transactions.keys().map(|id| self.facts(Touch::Payment(*id)));
        let credits = self.credits.keys().map(|id| self.facts(Touch::Credit(*id)));
        KeptFigures::recount(vendors.chain(invoices).chain(payments).chain(credits))
    }
}

impl crate::MemoryStore {
    /// Checks that every kept figure equals the figure recounted from the rows (D41); the
    /// property tests call it after every step.
    ///
    /// # Errors
    /// Both sets of figures, when they differ.
    pub fn check_figures(&self) -> Result<(), String> {
        let state = self.read();
        let recount = state.recount();
        if state.figures == recount {
            Ok(())
        } else {
            Err(format!("kept figures {:?} differ from the recount {:?}", state.figures, recount))
        }
    }
}
