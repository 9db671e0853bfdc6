//! The steps of a random history for property tests, and the strategies that generate them:
//! vendor, invoice, payment and credit operations (creates, updates, deletes, restores,
//! decisions and applications) interleaved with moves of the clock and changes of the settings. [`Model`](super::model::Model) applies
//! them.

use proptest::prelude::*;

use crate::transactions::TransactionType;

pub(super) const NAMES: [&str; 5] = ["Acme", "acme", "Beta Traders", "gamma", "Delta"];
pub(super) const NUMBERS: [&str; 6] = ["N-1", "n-1", "N-2", "N-3", "N-4", "N-5"];
pub(super) const KINDS: [TransactionType; 3] =
    [TransactionType::Cash, TransactionType::Upi, TransactionType::NetBanking];

/// One step of a random history. Indexes pick among the records created so far (modulo count).
#[derive(Clone, Debug)]
pub enum Op {
    /// Create a vendor with one of a few names (some equal but for case).
    CreateVendor {
        /// Name index.
        name: u8,
    },
    /// Replace a vendor's name, type, drug licence date and GSTIN.
    UpdateVendor {
        /// Which vendor.
        vendor: u8,
        /// Name index.
        name: u8,
        /// Index into the licence offsets (days from now, around D36's edges); past them, none.
        licence: u8,
        /// GSTIN index: one of three, or none (D37).
        gstin: u8,
    },
    /// Soft-delete a vendor.
    DeleteVendor {
        /// Which vendor.
        vendor: u8,
    },
    /// Restore a vendor.
    RestoreVendor {
        /// Which vendor.
        vendor: u8,
    },
    /// Create an invoice (numbers repeat, so conflicts happen).
    CreateInvoice {
        /// Which vendor.
        vendor: u8,
        /// Number index.
        number: u8,
        /// Amount in hundredths.
        cents: u32,
        /// Due date, in days from now.
        due_days: i8,
    },
    /// Import invoices from a CSV file (D45): `rows` rows for one vendor, named by its name,
    /// with numbers from `number` on, so that some rows repeat stored invoices exactly (unchanged)
    /// or not (refused).
    ImportInvoices {
        /// Which vendor.
        vendor: u8,
        /// Number index of the first row.
        number: u8,
        /// Rows, 1 to 3.
        rows: u8,
        /// Amount in hundredths of each row.
        cents: u32,
        /// Due date, in days from now.
        due_days: i8,
    },
    /// Replace an invoice.
    UpdateInvoice {
        /// Which invoice.
        invoice: u8,
        /// Which vendor.
        vendor: u8,
        /// Number index.
        number: u8,
        /// Amount in hundredths.
        cents: u32,
        /// Due date, in days from now.
        due_days: i8,
    },
    /// Cancel an invoice.
    DeleteInvoice {
        /// Which invoice.
        invoice: u8,
    },
    /// Restore an invoice.
    RestoreInvoice {
        /// Which invoice.
        invoice: u8,
    },
    /// Record a payment.
    Pay {
        /// Which invoice.
        invoice: u8,
        /// Amount in ten-thousandths.
        units: u32,
        /// Dated this many days ago.
        days_ago: u8,
        /// Payment type index.
        kind: u8,
        /// Reference index: most pick none, a few pick one of a few spellings of two keys (D30).
        reference: u8,
    },
    /// Pay a vendor over several invoices (D31).
    PayVendor {
        /// Which vendor.
        vendor: u8,
        /// Amount in hundredths.
        cents: u32,
        /// How many invoices to allocate to, picked from `first` on; 0 pays the oldest due first.
        shares: u8,
        /// The first invoice allocated to.
        first: u8,
        /// Reference index, as for a payment.
        reference: u8,
    },
    /// Delete a vendor payment with all its parts (D31).
    DeleteVendorPayment {
        /// Which vendor payment.
        payment: u8,
    },
    /// Replace a payment, possibly moving it to another invoice.
    UpdatePayment {
        /// Which payment.
        payment: u8,
        /// Which invoice.
        invoice: u8,
        /// Amount in ten-thousandths.
        units: u32,
    },
    /// Delete a payment.
    DeletePayment {
        /// Which payment.
        payment: u8,
    },
    /// Restore a payment.
    RestorePayment {
        /// Which payment.
        payment: u8,
    },
    /// Move the clock forward.
    AdvanceHours(u16),
    /// Change the `TimeZone` setting, which moves payments between business days (D3, D41).
    SetTimeZone {
        /// Zone index.
        zone: u8,
    },
    /// Set `ExpiredLicensePolicy` to `Block` or back to `Warn` (D36).
    SetLicencePolicy {
        /// Whether invoices of lapsed vendors are refused.
        block: bool,
    },
    /// Claim a credit from a vendor (D44); numbers repeat, so conflicts happen.
    ClaimCredit {
        /// Which vendor.
        vendor: u8,
        /// Number index.
        number: u8,
        /// Claimed, in hundredths.
        cents: u32,
        /// Claimed this many days ago.
        days_ago: u8,
        /// An invoice it is about, picked among all; past them, none.
        against: u8,
    },
    /// Replace a credit's claim, possibly with another vendor (D44).
    UpdateCredit {
        /// Which credit.
        credit: u8,
        /// Which vendor.
        vendor: u8,
        /// Claimed, in hundredths.
        cents: u32,
    },
    /// Record a decision on a credit (D44).
    DecideCredit {
        /// Which credit.
        credit: u8,
        /// Accepted, in thousandths of the claim (above 1000 is refused).
        permille: u16,
    },
    /// Apply a credit (D44), like a vendor payment (D31).
    ApplyCredit {
        /// Which credit.
        credit: u8,
        /// Amount in hundredths; 0 applies all that is available.
        cents: u32,
        /// How many invoices to allocate to, picked from `first` on; 0 credits the oldest due first.
        shares: u8,
        /// The first invoice allocated to.
        first: u8,
    },
    /// Undo an application of a credit (D44).
    UndoApplication {
        /// Which credit.
        credit: u8,
        /// Which of its active applications.
        application: u8,
    },
    /// Soft-delete a credit and its applications (D44).
    DeleteCredit {
        /// Which credit.
        credit: u8,
    },
    /// Restore a credit, without its applications (D44).
    RestoreCredit {
        /// Which credit.
        credit: u8,
    },
}

/// Days from now a drug licence is valid until: around the edges of D36's statuses.
pub(super) const LICENCE_DAYS: [i64; 9] = [-40, -31, -1, 0, 1, 29, 30, 31, 45];

/// GSTINs with valid check characters (D37); vendors share three, so some updates conflict.
pub(super) const GSTINS: [&str; 3] = ["27AAPFU0939F1ZV", "29AAGCR4375J1ZU", "07AAGFF2194N1Z1"];

/// References: two keys, spelled several ways (D30); most payments carry none.
const REFERENCES: [&str; 4] = ["UTR-1", "utr 1", "CHQ/9", "chq9"];

/// The reference a `reference` index picks: none five times in six.
pub(super) fn reference_of(index: u8) -> Option<crate::transactions::reference::PaymentReference> {
    let text = REFERENCES.get(usize::from(index % 24))?;
    Some(crate::transactions::reference::PaymentReference::parse(text).expect("a valid reference"))
}

/// Zones far apart, so a change moves payments across days and months.
pub(super) const ZONES: [&str; 4] = ["UTC", "Asia/Kolkata", "Pacific/Kiritimati", "Pacific/Pago_Pago"];

/// A strategy for one operation, weighted towards creates and payments.
pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => any::<u8>().prop_map(|name| Op::CreateVendor { name }),
        2 => (any::<u8>(), any::<u8>(), 0u8..=9, any::<u8>())
            .prop_map(|(vendor, name, licence, gstin)| Op::UpdateVendor { vendor, name, licence, gstin }),
        1 => any::<u8>().prop_map(|vendor| Op::DeleteVendor { vendor }),
        1 => any::<u8>().prop_map(|vendor| Op::RestoreVendor { vendor }),
        5 => (any::<u8>(), any::<u8>(), 1u32..=500_000, -20i8..=20)
            .prop_map(|(vendor, number, cents, due_days)| Op::CreateInvoice { vendor, number, cents, due_days }),
        1 => (any::<u8>(), any::<u8>(), any::<u8>(), 1u32..=500_000, -20i8..=20)
            .prop_map(|(invoice, vendor, number, cents, due_days)| Op::UpdateInvoice { invoice, vendor, number, cents, due_days }),
        2 => (any::<u8>(), any::<u8>(), 1u8..=3, 1u32..=500_000, -20i8..=20)
            .prop_map(|(vendor, number, rows, cents, due_days)| Op::ImportInvoices { vendor, number, rows, cents, due_days }),
        1 => any::<u8>().prop_map(|invoice| Op::DeleteInvoice { invoice }),
        1 => any::<u8>().prop_map(|invoice| Op::RestoreInvoice { invoice }),
        6 => (any::<u8>(), 1u32..=30_000_000, 0u8..=120, any::<u8>(), any::<u8>())
            .prop_map(|(invoice, units, days_ago, kind, reference)| Op::Pay { invoice, units, days_ago, kind, reference }),
        2 => (any::<u8>(), 1u32..=500_000, 0u8..=3, any::<u8>(), any::<u8>())
            .prop_map(|(vendor, cents, shares, first, reference)| Op::PayVendor { vendor, cents, shares, first, reference }),
        1 => any::<u8>().prop_map(|payment| Op::DeleteVendorPayment { payment }),
        1 => (any::<u8>(), any::<u8>(), 1u32..=30_000_000).prop_map(|(payment, invoice, units)| Op::UpdatePayment { payment, invoice, units }),
        1 => any::<u8>().prop_map(|payment| Op::DeletePayment { payment }),
        1 => any::<u8>().prop_map(|payment| Op::RestorePayment { payment }),
        1 => (1u16..=24 * 45).prop_map(Op::AdvanceHours),
        1 => any::<u8>().prop_map(|zone| Op::SetTimeZone { zone }),
        1 => any::<bool>().prop_map(|block| Op::SetLicencePolicy { block }),
        2 => (any::<u8>(), any::<u8>(), 1u32..=300_000, 0u8..=60, any::<u8>())
            .prop_map(|(vendor, number, cents, days_ago, against)| Op::ClaimCredit { vendor, number, cents, days_ago, against }),
        1 => (any::<u8>(), any::<u8>(), 1u32..=300_000).prop_map(|(credit, vendor, cents)| Op::UpdateCredit { credit, vendor, cents }),
        2 => (any::<u8>(), 0u16..=1_100).prop_map(|(credit, permille)| Op::DecideCredit { credit, permille }),
        3 => (any::<u8>(), prop_oneof![Just(0u32), 1u32..=200_000], 0u8..=3, any::<u8>())
            .prop_map(|(credit, cents, shares, first)| Op::ApplyCredit { credit, cents, shares, first }),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(credit, application)| Op::UndoApplication { credit, application }),
        1 => any::<u8>().prop_map(|credit| Op::DeleteCredit { credit }),
        1 => any::<u8>().prop_map(|credit| Op::RestoreCredit { credit }),
    ]
}

/// A strategy for one operation of a history around vendor credits (D44): few vendors, many
/// invoices, and claims decided and applied often enough that applications meet payments,
/// deletes, restores and each other.
pub fn credit_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => any::<u8>().prop_map(|name| Op::CreateVendor { name }),
        4 => (any::<u8>(), any::<u8>(), 1u32..=100_000, -20i8..=20)
            .prop_map(|(vendor, number, cents, due_days)| Op::CreateInvoice { vendor, number, cents, due_days }),
        1 => (any::<u8>(), any::<u8>(), any::<u8>(), 1u32..=100_000, -20i8..=20)
            .prop_map(|(invoice, vendor, number, cents, due_days)| Op::UpdateInvoice { invoice, vendor, number, cents, due_days }),
        1 => any::<u8>().prop_map(|invoice| Op::DeleteInvoice { invoice }),
        1 => any::<u8>().prop_map(|invoice| Op::RestoreInvoice { invoice }),
        2 => (any::<u8>(), 1u32..=5_000_000, 0u8..=10, any::<u8>(), Just(0u8))
            .prop_map(|(invoice, units, days_ago, kind, reference)| Op::Pay { invoice, units, days_ago, kind, reference }),
        2 => (any::<u8>(), any::<u8>(), 1u32..=60_000, 0u8..=10, any::<u8>())
            .prop_map(|(vendor, number, cents, days_ago, against)| Op::ClaimCredit { vendor, number, cents, days_ago, against }),
        1 => (any::<u8>(), any::<u8>(), 1u32..=100_000).prop_map(|(credit, vendor, cents)| Op::UpdateCredit { credit, vendor, cents }),
        5 => (any::<u8>(), prop_oneof![Just(1000u16), 0u16..=1_050]).prop_map(|(credit, permille)| Op::DecideCredit { credit, permille }),
        8 => (any::<u8>(), prop_oneof![1 => Just(0u32), 4 => 1u32..=20_000], 0u8..=2, any::<u8>())
            .prop_map(|(credit, cents, shares, first)| Op::ApplyCredit { credit, cents, shares, first }),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(credit, application)| Op::UndoApplication { credit, application }),
        1 => any::<u8>().prop_map(|credit| Op::DeleteCredit { credit }),
        1 => any::<u8>().prop_map(|credit| Op::RestoreCredit { credit }),
        1 => (1u16..=24 * 10).prop_map(Op::AdvanceHours),
        1 => any::<u8>().prop_map(|zone| Op::SetTimeZone { zone }),
    ]
}

/// A strategy for a sequence of up to `max` operations around vendor credits ([`credit_op`]).
pub fn credit_ops(max: usize) -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(credit_op(), 1..=max)
}

/// A strategy for a sequence of up to `max` operations.
pub fn ops(max: usize) -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(op(), 1..=max)
}
