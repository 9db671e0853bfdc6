//! The lists' total counts (D8's `totalCount`) that kept figures answer (D41): a status is a
//! conjunction of the status table's terms (`invoices`), and its count is the matching
//! sum of kept figures, found by inclusion and exclusion, so the table is never restated here.

use jiff::Timestamp;

use super::kept::KeptFigures;
use crate::invoices::InvoiceFilter;
use crate::invoices::StatusTerm;
use crate::transactions::TransactionFilter;
use crate::vendors::VendorFilter;

/// A list's total count (D8's `totalCount`) that kept figures answer, when the list's filter
/// asks only for a status or a state (active or deleted); other filters are counted row by row.
/// It is a sum of kept figures, each with its sign, which a store adds up in SQL or in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptCount {
    terms: Vec<(KeptTerm, i64)>,
}

/// The kinds of status term, as indexes: whether active, whether owing, whether due before
/// today.
const ACTIVE: usize = 0;
const OWES: usize = 1;
const DUE_BEFORE_TODAY: usize = 2;

impl KeptCount {
    /// The kept count of an invoice list with `filter`, if any: the invoices meeting the terms
    /// of its status (D10) and its state.
    pub fn of_invoices(filter: &InvoiceFilter) -> Option<Self> {
        let status_or_state =
            InvoiceFilter { status: filter.status, is_active: filter.is_active, ..InvoiceFilter::default() };
        if *filter != status_or_state {
            return None;
        }
        let mut terms: Vec<StatusTerm> = filter.status.map(|status| status.terms().to_vec()).unwrap_or_default();
        terms.extend(filter.is_active.map(StatusTerm::Active));
        Self::of_invoice_terms(&terms)
    }

    /// The count of the invoices meeting every one of `terms`, from the invoice figures kept:
    /// every invoice, the active ones, the open ones (active and owing) and the open ones due
    /// before today. A term asked for both ways matches nothing; a negated term is taken away
    /// by inclusion and exclusion (`active and not owing` is `active` less `active and owing`).
    /// `None` when the terms ask for a set no kept figure counts.
    fn of_invoice_terms(terms: &[StatusTerm]) -> Option<Self> {
        let mut wanted: [Option<bool>; 3] = [None; 3];
        for term in terms {
            let (kind, value) = match *term {
                StatusTerm::Active(value) => (ACTIVE, value),
                StatusTerm::Owes(value) => (OWES, value),
                StatusTerm::DueBeforeToday(value) => (DUE_BEFORE_TODAY, value),
            };
            match wanted[kind] {
                Some(already) if already != value => return Some(Self { terms: Vec::new() }),
                _ => wanted[kind] = Some(value),
            }
        }
        let positive: Vec<usize> = (0..3).filter(|kind| wanted[*kind] == Some(true)).collect();
        let negative: Vec<usize> = (0..3).filter(|kind| wanted[*kind] == Some(false)).collect();
        let mut counted = Vec::new();
        for subset in 0..1_u32 << negative.len() {
            let mut kinds = [false; 3];
            for kind in &positive {
                kinds[*kind] = true;
            }
            for (bit, kind) in negative.iter().enumerate() {
                kinds[*kind] |= subset & (1 << bit) != 0;
            }
            let sign = if subset.count_ones() % 2 == 0 { 1 } else { -1 };
            counted.push((invoice_figure(kinds)?, sign));
        }
        Some(Self { terms: counted })
    }

    /// The kept count of a vendor list with `filter`, if any.
    pub fn of_vendors(filter: &VendorFilter) -> Option<Self> {
        let state_only = VendorFilter { is_active: filter.is_active, ..VendorFilter::default() };
        (*filter == state_only).then(|| Self::of_state(filter.is_active, KeptTerm::Vendors, KeptTerm::ActiveVendors))
    }

    /// The kept count of a payment list with `filter`, if any.
    pub fn of_payments(filter: &TransactionFilter) -> Option<Self> {
        let state_only = TransactionFilter { is_active: filter.is_active, ..TransactionFilter::default() };
        (*filter == state_only).then(|| Self::of_state(filter.is_active, KeptTerm::Payments, KeptTerm::ActivePayments))
    }

    /// The active records of a kind (`all` of them, `active` of them), or the deleted ones.
    fn of_state(is_active: bool, all: KeptTerm, active: KeptTerm) -> Self {
        let terms = if is_active { vec![(active, 1)] } else { vec![(all, 1), (active, -1)] };
        Self { terms }
    }

    /// The count as a sum of kept figures, each with its sign (none: nothing can match).
    pub fn terms(&self) -> &[(KeptTerm, i64)] {
        &self.terms
    }
}

/// The kept invoice figure counting the invoices that are active, owe something and fall due
/// before today where `kinds` says so, and whatever they are elsewhere; `None` for a set no
/// figure counts.
fn invoice_figure(kinds: [bool; 3]) -> Option<KeptTerm> {
    match kinds {
        [false, false, false] => Some(KeptTerm::Invoices),
        [true, false, false] => Some(KeptTerm::ActiveInvoices),
        [true, true, false] => Some(KeptTerm::OpenInvoices),
        [true, true, true] => Some(KeptTerm::OpenInvoicesDueBeforeToday),
        _ => None,
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
    pub fn count(&self, count: &KeptCount, today_start: Timestamp) -> i64 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::test_values::{dec, ts};
    use crate::figures::{LedgerTotals, OpenFigures};
    use crate::invoices::InvoiceStatus;

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
            let count = KeptCount::of_invoices(&filter).map(|kept| figures.count(&kept, today));
            assert_eq!(count, expected, "{label}");
        }
        let searched = InvoiceFilter { search: Some("inv".into()), ..InvoiceFilter::default() };
        assert_eq!(KeptCount::of_invoices(&searched), None, "other filters are counted row by row");
        let count = |kept: Option<KeptCount>| kept.map(|kept| figures.count(&kept, today));
        assert_eq!(count(KeptCount::of_vendors(&VendorFilter::default())), Some(5));
        assert_eq!(
            count(KeptCount::of_vendors(&VendorFilter { is_active: false, ..VendorFilter::default() })),
            Some(2)
        );
        let typed = VendorFilter { vendor_type: Some(crate::vendors::VendorType::Dealer), ..VendorFilter::default() };
        assert_eq!(KeptCount::of_vendors(&typed), None);
        assert_eq!(count(KeptCount::of_payments(&TransactionFilter::default())), Some(6));
        let deleted = TransactionFilter { is_active: false, ..TransactionFilter::default() };
        assert_eq!(count(KeptCount::of_payments(&deleted)), Some(3));
    }

    #[test]
    fn status_counts_are_the_status_tables_terms_over_the_kept_figures() {
        use KeptTerm::{ActiveInvoices, Invoices, OpenInvoices, OpenInvoicesDueBeforeToday};
        let of = |status| KeptCount::of_invoices(&InvoiceFilter { status: Some(status), ..InvoiceFilter::default() });
        assert_eq!(of(InvoiceStatus::Canceled).unwrap().terms(), [(Invoices, 1), (ActiveInvoices, -1)]);
        assert_eq!(of(InvoiceStatus::FullyPaid).unwrap().terms(), [(ActiveInvoices, 1), (OpenInvoices, -1)]);
        assert_eq!(of(InvoiceStatus::Overdue).unwrap().terms(), [(OpenInvoicesDueBeforeToday, 1)]);
        assert_eq!(
            of(InvoiceStatus::PartiallyPaid).unwrap().terms(),
            [(OpenInvoices, 1), (OpenInvoicesDueBeforeToday, -1)]
        );
        let due_without_owing = [StatusTerm::Active(true), StatusTerm::DueBeforeToday(true)];
        assert_eq!(KeptCount::of_invoice_terms(&due_without_owing), None, "no figure counts it");
    }
}
