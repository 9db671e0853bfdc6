//! Dashboard figures (D12): read live on every request from the figures stores keep beside
//! their rows in the same transaction as every write (D41, see [`crate::figures`]).

use jiff::Timestamp;
use jiff::civil::Date;
use rust_decimal::Decimal;

use crate::clock::MonthWindow;
use crate::figures::{DayFigures, LedgerTotals, OpenFigures};
use crate::ids::VendorId;

/// The summary card (spec, Summary definitions; D12).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Every vendor record, active and inactive.
    pub total_vendors: u64,
    /// Every invoice record, active and canceled.
    pub total_invoices: u64,
    /// Sum of `pendingAmount` over active invoices.
    pub total_due: Decimal,
    /// Sum of active payments, whatever their invoice's state.
    pub total_paid: Decimal,
    /// Active payments dated within the last 30 days, today included.
    pub recent_transactions: u64,
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

/// One row of the top-vendors ranking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopVendor {
    /// Vendor id.
    pub vendor_id: VendorId,
    /// Vendor name.
    pub vendor_name: String,
    /// Outstanding balance over active invoices (D11).
    pub outstanding_balance: Decimal,
    /// Number of active invoices.
    pub total_invoices: u64,
}

/// One month of payments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MonthlyTotal {
    /// `YYYY-MM` in the business time zone (D3).
    pub month: String,
    /// Sum of the month's active payments.
    pub total_amount: Decimal,
    /// How many there were.
    pub transaction_count: u64,
}

/// What falls due in one window (D32): the open invoices' pending amounts and how many.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DueFigures {
    /// The sum of their pending amounts.
    pub amount: Decimal,
    /// How many invoices.
    pub invoice_count: u64,
}

impl From<OpenFigures> for DueFigures {
    fn from(open: OpenFigures) -> Self {
        DueFigures { amount: open.pending.normalize(), invoice_count: u64::try_from(open.invoices).unwrap_or(0) }
    }
}

/// Credit still to set against bills (D44): what the active credits have available, over those
/// with something available.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AvailableCredit {
    /// The sum of their available amounts.
    pub amount: Decimal,
    /// How many credits.
    pub credit_count: u64,
}

/// Claims still waiting for the distributor's decision (D44).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PendingClaims {
    /// The sum of their claimed amounts.
    pub amount: Decimal,
    /// How many claims.
    pub credit_count: u64,
    /// The earliest claim date among them; `None` when there is none.
    pub oldest_claim_date: Option<Timestamp>,
}

/// The payables dashboard's credit cards (D44).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreditSummary {
    /// Credit still to apply.
    pub available_credit: AvailableCredit,
    /// Claims not yet decided.
    pub pending_claims: PendingClaims,
}

impl CreditSummary {
    /// The cards of the kept `totals` (D41), with the oldest undecided claim's date.
    pub fn of(totals: &LedgerTotals, oldest_claim_date: Option<Timestamp>) -> Self {
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
        Self {
            available_credit: AvailableCredit {
                amount: totals.available_credit.normalize(),
                credit_count: count(totals.credits_available),
            },
            pending_claims: PendingClaims {
                amount: totals.pending_claimed.normalize(),
                credit_count: count(totals.pending_claims),
                oldest_claim_date,
            },
        }
    }
}

/// The dashboard's payables (D32): over active invoices still owing something, what is overdue,
/// due today, due within 7 days and within 30 days (the last two from tomorrow on, so the 30
/// days include the 7); and the credit cards (D44).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Payables {
    /// Due before today.
    pub overdue: DueFigures,
    /// Due today.
    pub due_today: DueFigures,
    /// Due from tomorrow to today + 7.
    pub due_in_7_days: DueFigures,
    /// Due from tomorrow to today + 30.
    pub due_in_30_days: DueFigures,
    /// Credit still to apply, and claims still undecided (D44).
    pub credits: CreditSummary,
}

/// The dashboard's twelve months (D12) from the kept day figures of those months: for each
/// month of `months` (newest first, as [`BusinessCalendar::last_twelve_months`] gives them), the
/// sum and count of its days' payments; months without payments are zero rows.
///
/// [`BusinessCalendar::last_twelve_months`]: crate::clock::BusinessCalendar::last_twelve_months
pub fn monthly_totals(months: &[MonthWindow], days: &[(Date, DayFigures)]) -> Vec<MonthlyTotal> {
    months
        .iter()
        .map(|window| {
            let mut sum = DayFigures::default();
            for (day, figures) in days {
                if day.year() == window.month.year() && day.month() == window.month.month() {
                    sum.apply(figures);
                }
            }
            MonthlyTotal {
                month: window.label(),
                total_amount: sum.amount.normalize(),
                transaction_count: u64::try_from(sum.payments).unwrap_or(0),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::BusinessCalendar;

    #[test]
    fn months_add_up_their_days_and_empty_months_are_zero_rows() {
        let calendar = BusinessCalendar::utc();
        let months = calendar.last_twelve_months("2024-05-20T10:00:00Z".parse().unwrap());
        let day = |text: &str| text.parse::<Date>().unwrap();
        let figures = |payments, amount: &str| DayFigures { payments, amount: amount.parse().unwrap() };
        let days = [
            (day("2023-06-30"), figures(9, "9")),
            (day("2024-04-01"), figures(1, "1.5")),
            (day("2024-04-30"), figures(2, "2.25")),
            (day("2024-05-20"), figures(1, "10")),
        ];
        let totals = monthly_totals(&months, &days);
        assert_eq!(totals.len(), 12);
        assert_eq!((totals[0].month.as_str(), totals[0].transaction_count), ("2024-05", 1));
        assert_eq!((totals[1].month.as_str(), totals[1].total_amount), ("2024-04", "3.75".parse().unwrap()));
        assert_eq!(totals[1].transaction_count, 3);
        assert_eq!((totals[11].month.as_str(), totals[11].transaction_count), ("2023-06", 9));
        assert!(totals[2..11].iter().all(|month| month.transaction_count == 0 && month.total_amount.is_zero()));
    }
}
