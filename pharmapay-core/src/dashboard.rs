//! Dashboard figures (D12): read-only aggregates computed live on every request.

use rust_decimal::Decimal;

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

/// Sum and count of payments in one window, as stores report them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeriodTotal {
    /// Sum of amounts.
    pub total_amount: Decimal,
    /// Number of payments.
    pub transaction_count: u64,
}
