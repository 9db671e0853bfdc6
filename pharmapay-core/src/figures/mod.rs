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
//! # Layout
//! - `kinds.rs`, the kinds of figure: per vendor ([`VendorFigures`]: its active invoices, their
//!   amounts and their paid totals, D11, so its outstanding balance, for ranking); per due date
//!   ([`OpenFigures`]: how many active invoices still owe something and how much, which splits
//!   open invoices into Overdue and PartiallyPaid on either side of today, D10, and sums what
//!   falls due in a window, D32); per business day ([`DayFigures`]: the active payments dated
//!   that day in the `TimeZone` setting's zone, D3, for the dashboard's months and recent
//!   payments, D12); for the installation ([`LedgerTotals`]: the counts and sums the summary
//!   shows and the totals of unfiltered lists).
//! - `contribution.rs`, what each row contributes: the facts of a vendor, an invoice and a
//!   payment, [`Contribution`], and the [`FigureChange`] of a write.
//! - `counts.rs`, the lists' total counts the figures answer ([`KeptCount`]), derived from the
//!   status table of `invoices`.
//! - `kept.rs`, every figure at once ([`KeptFigures`]), as a store keeps them or a recount gives
//!   them, and the keys of business days.

mod contribution;
mod counts;
mod kept;
mod kinds;

pub use contribution::{Contribution, CreditFacts, FigureChange, InvoiceFacts, PaymentFacts, VendorFacts, became_paid};
pub use counts::{KeptCount, KeptTerm};
pub use kept::{KeptFigures, day_key, day_of_key, days_of, vendor_days_of};
pub use kinds::{DayFigures, LedgerTotals, OpenFigures, VendorDayFigures, VendorFigures};

/// Decimals and instants from text, for the tests of this module's files.
#[cfg(test)]
mod test_values {
    use jiff::Timestamp;
    use rust_decimal::Decimal;

    pub(super) fn dec(text: &str) -> Decimal {
        text.parse().unwrap()
    }

    pub(super) fn ts(text: &str) -> Timestamp {
        text.parse().unwrap()
    }
}
