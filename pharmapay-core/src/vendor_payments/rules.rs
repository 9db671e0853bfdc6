//! One payment over several invoices (D31): how a vendor payment is split.
//!
//! A pharmacy pays a distributor one lump sum for many bills. The payment names the invoices
//! and how much goes to each, or leaves the split to the rule: the vendor's invoices still
//! owing, oldest due first (due date, then invoice date, then id), each taking at most what it
//! owes. Either way each allocation goes to an active invoice of that vendor, listed once,
//! positive and at most what the invoice owes at that moment, and the allocations add up to the
//! payment exactly; a vendor payment never overpays (D33).
//!
//! [`check_request`] judges what needs no stored facts (an empty or overlong list, an invoice
//! listed twice, allocations that do not add up), so those errors come back in one answer
//! before anything is read. [`allocate`] judges the rest over the invoices a store loaded and
//! locked in the payment's own transaction, so two payments racing for one invoice can never
//! both take what it owes.

use crate::base::tidy::decimal_text;
use crate::invoices::is_open;
use jiff::Timestamp;
use rust_decimal::Decimal;

use crate::error::FieldErrors;
use crate::ids::{BranchId, InvoiceId, VendorId};
use crate::money::Amount;
use crate::store::{StoreError, StoreResult};

/// The most allocations one vendor payment may list.
pub const MAX_ALLOCATIONS: usize = 200;

/// A share of a payment a request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestedAllocation {
    /// The invoice to pay.
    pub invoice_id: InvoiceId,
    /// How much of the payment goes to it.
    pub amount: Amount,
}

/// An invoice a vendor payment may pay, as a store loaded it under its lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PayableInvoice {
    /// The invoice.
    pub id: InvoiceId,
    /// Its vendor.
    pub vendor_id: VendorId,
    /// Its branch (D49).
    pub branch_id: BranchId,
    /// Whether it is active.
    pub is_active: bool,
    /// What it still owes (`amount - paid`, negative when overpaid).
    pub pending: Decimal,
    /// When it falls due.
    pub due_date: Timestamp,
    /// Its date.
    pub invoice_date: Timestamp,
}

/// A share of a payment, as decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// The invoice paid.
    pub invoice_id: InvoiceId,
    /// How much of the payment goes to it.
    pub amount: Amount,
}

/// Checks the allocations a request lists, if any, against each other and the payment's
/// `amount`: at least one and at most [`MAX_ALLOCATIONS`], no invoice twice, and a sum equal
/// to `amount`. Every problem is reported at once, by field path (`allocations[3].invoiceId`).
///
/// # Errors
/// The messages by field path.
pub fn check_request(amount: Amount, allocations: Option<&[RequestedAllocation]>) -> Result<(), FieldErrors> {
    let Some(allocations) = allocations else { return Ok(()) };
    let mut errors = FieldErrors::new();
    if allocations.is_empty() {
        errors.add("allocations", "must list at least one invoice, or be left out to pay the oldest first");
    }
    if allocations.len() > MAX_ALLOCATIONS {
        errors.add("allocations", format!("must list at most {MAX_ALLOCATIONS} invoices"));
    }
    for (index, allocation) in allocations.iter().enumerate() {
        if allocations[..index].iter().any(|earlier| earlier.invoice_id == allocation.invoice_id) {
            errors.add(format!("allocations[{index}].invoiceId"), "lists an invoice already listed");
        }
    }
    let sum: Decimal = allocations.iter().map(|allocation| allocation.amount.get()).sum();
    if !allocations.is_empty() && sum != amount.get() {
        errors.add("amount", format!("must equal the sum of the allocations, {}", sum.normalize()));
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

/// Splits a payment of `amount` to vendor `vendor_id` over `invoices`, loaded and locked by the
/// store in the payment's transaction: with `requested` allocations, the invoices they name
/// (those that exist); without, the vendor's invoices (the rule keeps the active ones still
/// owing and pays the oldest first). Answers the allocations, in the order given or oldest
/// first.
///
/// # Errors
/// `Invalid` naming `allocations[i].invoiceId` for an invoice that is missing, inactive or
/// another vendor's, `allocations[i].amount` for more than an invoice owes, and `amount` for a
/// sum that does not match or more than the vendor's invoices owe; nothing may be written then.
pub fn allocate(
    vendor_id: VendorId,
    amount: Amount,
    requested: Option<&[RequestedAllocation]>,
    invoices: &[PayableInvoice],
) -> StoreResult<Vec<Allocation>> {
    match requested {
        Some(requested) => allocate_as_asked(vendor_id, amount, requested, invoices),
        None => allocate_oldest_first(vendor_id, amount, invoices),
    }
}

/// Splits a payment of `amount` to vendor `vendor_id` over `invoices` as [`allocate`] does,
/// taking only the invoices of the writer's `scope` (D49), and of `branch` when the payment is
/// limited to one (a vendor payment's `branchId`, a store's bank statement): another branch's
/// invoice named in an allocation is refused as a missing one, and the oldest-first split
/// passes over it.
///
/// # Errors
/// As [`allocate`].
pub fn plan_payment(
    vendor_id: VendorId,
    (amount, requested): (Amount, Option<&[RequestedAllocation]>),
    (scope, branch): (&crate::branches::Scope, Option<BranchId>),
    invoices: &[PayableInvoice],
) -> StoreResult<Vec<Allocation>> {
    if scope.is_all() && branch.is_none() {
        return allocate(vendor_id, amount, requested, invoices);
    }
    let reachable: Vec<PayableInvoice> = invoices
        .iter()
        .filter(|invoice| scope.contains(invoice.branch_id) && branch.is_none_or(|only| invoice.branch_id == only))
        .copied()
        .collect();
    allocate(vendor_id, amount, requested, &reachable)
}

fn allocate_as_asked(
    vendor_id: VendorId,
    amount: Amount,
    requested: &[RequestedAllocation],
    invoices: &[PayableInvoice],
) -> StoreResult<Vec<Allocation>> {
    check_request(amount, Some(requested)).map_err(StoreError::Invalid)?;
    let mut errors = FieldErrors::new();
    for (index, allocation) in requested.iter().enumerate() {
        let invoice = invoices.iter().find(|invoice| invoice.id == allocation.invoice_id);
        match invoice {
            Some(invoice) if invoice.is_active && invoice.vendor_id == vendor_id => {
                if allocation.amount.get() > invoice.pending {
                    let owed = invoice.pending.max(Decimal::ZERO).normalize();
                    errors.add(
                        format!("allocations[{index}].amount"),
                        format!("is more than the invoice still owes, {owed}"),
                    );
                }
            }
            _ => errors.add(format!("allocations[{index}].invoiceId"), "must be an active invoice of this vendor"),
        }
    }
    if !errors.is_empty() {
        return Err(StoreError::Invalid(errors));
    }
    Ok(requested
        .iter()
        .map(|allocation| Allocation { invoice_id: allocation.invoice_id, amount: allocation.amount })
        .collect())
}

/// The vendor's open invoices among `invoices` (D31: as the status table has them), oldest
/// due first, as a payment without allocations takes them.
fn owing(vendor_id: VendorId, invoices: &[PayableInvoice]) -> Vec<&PayableInvoice> {
    let mut owing: Vec<&PayableInvoice> = invoices
        .iter()
        .filter(|invoice| is_open(invoice.is_active, invoice.pending) && invoice.vendor_id == vendor_id)
        .collect();
    owing.sort_by_key(|invoice| (invoice.due_date, invoice.invoice_date, invoice.id));
    owing
}

/// What vendor `vendor_id`'s open invoices among `invoices` still owe in all: the most a
/// payment without allocations may take (D31), and what a credit applied without an amount
/// takes when it has more available (D51 amending D44).
pub fn owed_by_open_invoices(vendor_id: VendorId, invoices: &[PayableInvoice]) -> Decimal {
    owing(vendor_id, invoices).iter().map(|invoice| invoice.pending).sum()
}

fn allocate_oldest_first(
    vendor_id: VendorId,
    amount: Amount,
    invoices: &[PayableInvoice],
) -> StoreResult<Vec<Allocation>> {
    let owing = owing(vendor_id, invoices);
    let owed: Decimal = owing.iter().map(|invoice| invoice.pending).sum();
    if amount.get() > owed {
        let message = format!("is more than this vendor's invoices still owe, {}", owed.normalize());
        return Err(StoreError::Invalid(FieldErrors::single("amount", message)));
    }
    let mut left = amount.get();
    let mut allocations = Vec::new();
    for invoice in owing {
        if left.is_zero() {
            break;
        }
        let share = left.min(invoice.pending);
        left -= share;
        let share = Amount::try_from(share).expect("a positive share of an exact amount is an amount");
        allocations.push(Allocation { invoice_id: invoice.id, amount: share });
    }
    Ok(allocations)
}

/// Allocations over invoices as the audit log writes them (D22, D31, D44): `[{invoiceId, amount}]`,
/// or `null` when the split was left to the rule.
pub(crate) fn allocations_json(allocations: Option<&[RequestedAllocation]>) -> serde_json::Value {
    let Some(allocations) = allocations else { return serde_json::Value::Null };
    allocations
        .iter()
        .map(|allocation| {
            serde_json::json!({ "invoiceId": allocation.invoice_id.get(), "amount": decimal_text(allocation.amount.get()) })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn amount(text: &str) -> Amount {
        Amount::parse(text).unwrap()
    }

    fn dec(text: &str) -> Decimal {
        Decimal::from_str_exact(text).unwrap()
    }

    fn at(day: u32) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + i64::from(day) * 86_400).unwrap()
    }

    fn invoice(id: i64, pending: &str, due: u32, dated: u32) -> PayableInvoice {
        PayableInvoice {
            id: InvoiceId(id),
            vendor_id: VendorId(1),
            branch_id: BranchId(1),
            is_active: true,
            pending: dec(pending),
            due_date: at(due),
            invoice_date: at(dated),
        }
    }

    fn ask(id: i64, share: &str) -> RequestedAllocation {
        RequestedAllocation { invoice_id: InvoiceId(id), amount: amount(share) }
    }

    fn invalid_fields(result: StoreResult<Vec<Allocation>>) -> Vec<String> {
        match result {
            Err(StoreError::Invalid(errors)) => errors.iter().map(|(field, _)| field.to_owned()).collect(),
            other => panic!("expected field errors, got {other:?}"),
        }
    }

    #[test]
    fn without_allocations_the_oldest_due_is_paid_first() {
        let invoices = [
            invoice(3, "50", 10, 1),
            invoice(1, "30", 5, 2),
            invoice(2, "40", 5, 1),
            invoice(4, "0", 1, 1),
            invoice(5, "-5", 1, 1),
        ];
        let paid = allocate(VendorId(1), amount("60.5"), None, &invoices).unwrap();
        let split: Vec<(i64, Decimal)> = paid.iter().map(|a| (a.invoice_id.get(), a.amount.get())).collect();
        assert_eq!(
            split,
            [(2, dec("40")), (1, dec("20.5"))],
            "due date, then invoice date; nothing to invoices owing nothing"
        );
    }

    #[test]
    fn without_allocations_the_payment_may_settle_everything_but_never_more() {
        let invoices = [invoice(1, "30", 5, 1), invoice(2, "40.25", 6, 1)];
        let all = allocate(VendorId(1), amount("70.25"), None, &invoices).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(invalid_fields(allocate(VendorId(1), amount("70.2501"), None, &invoices)), ["amount"]);
        let mut other = invoice(9, "100", 1, 1);
        other.vendor_id = VendorId(2);
        assert_eq!(
            invalid_fields(allocate(VendorId(1), amount("1"), None, &[other])),
            ["amount"],
            "another vendor's invoice owes this vendor nothing"
        );
    }

    #[test]
    fn allocations_go_only_to_this_vendors_active_invoices_within_what_they_owe() {
        let mut canceled = invoice(2, "10", 5, 1);
        canceled.is_active = false;
        let mut foreign = invoice(3, "10", 5, 1);
        foreign.vendor_id = VendorId(7);
        let invoices = [invoice(1, "10", 5, 1), canceled, foreign];
        let fields = invalid_fields(allocate(
            VendorId(1),
            amount("42"),
            Some(&[ask(1, "10.0001"), ask(2, "10"), ask(3, "10"), ask(4, "11.9999")]),
            &invoices,
        ));
        assert_eq!(
            fields,
            [
                "allocations[0].amount",
                "allocations[1].invoiceId",
                "allocations[2].invoiceId",
                "allocations[3].invoiceId"
            ]
        );
        let paid = allocate(VendorId(1), amount("10"), Some(&[ask(1, "10")]), &invoices).unwrap();
        assert_eq!(
            paid,
            [Allocation { invoice_id: InvoiceId(1), amount: amount("10") }],
            "exactly what it owes is fine"
        );
    }

    #[test]
    fn a_payment_limited_to_a_branch_pays_only_its_bills() {
        // D49: the head office pays one store's bills with `branchId`, and a store's bank
        // statement records over its own bills only.
        let mut other_store = invoice(1, "30", 1, 1);
        other_store.branch_id = BranchId(3);
        let invoices = [other_store, invoice(2, "40", 5, 1), invoice(3, "25", 6, 1)];
        let fifty = amount("50");
        let all = crate::branches::Scope::All;
        let everywhere = plan_payment(VendorId(1), (fifty, None), (&all, None), &invoices).unwrap();
        assert_eq!(everywhere.first().map(|a| a.invoice_id), Some(InvoiceId(1)), "the oldest bill of any branch");
        let head = plan_payment(VendorId(1), (fifty, None), (&all, Some(BranchId(1))), &invoices).unwrap();
        let split: Vec<(i64, Decimal)> = head.iter().map(|a| (a.invoice_id.get(), a.amount.get())).collect();
        assert_eq!(split, [(2, dec("40")), (3, dec("10"))]);
        let asked = [ask(1, "30"), ask(2, "20")];
        assert_eq!(
            invalid_fields(plan_payment(VendorId(1), (fifty, Some(&asked)), (&all, Some(BranchId(1))), &invoices)),
            ["allocations[0].invoiceId"],
            "another branch's bill is refused as a missing one"
        );
        assert_eq!(
            invalid_fields(plan_payment(VendorId(1), (fifty, None), (&all, Some(BranchId(3))), &invoices)),
            ["amount"]
        );
        // A store's user pays their own bills only, whatever the allocations name.
        let store = crate::branches::Scope::of([BranchId(3)]);
        let own = plan_payment(VendorId(1), (amount("30"), None), (&store, None), &invoices).unwrap();
        assert_eq!(own.iter().map(|a| a.invoice_id).collect::<Vec<_>>(), [InvoiceId(1)]);
        assert_eq!(
            invalid_fields(plan_payment(VendorId(1), (amount("30"), Some(&[ask(2, "30")])), (&store, None), &invoices)),
            ["allocations[0].invoiceId"]
        );
    }

    #[test]
    fn request_shapes_are_judged_before_anything_is_read() {
        let fields =
            |result: Result<(), FieldErrors>| result.unwrap_err().iter().map(|(f, _)| f.to_owned()).collect::<Vec<_>>();
        assert_eq!(fields(check_request(amount("1"), Some(&[]))), ["allocations"]);
        assert_eq!(
            fields(check_request(amount("3"), Some(&[ask(1, "1"), ask(2, "1"), ask(1, "1")]))),
            ["allocations[2].invoiceId"]
        );
        assert_eq!(fields(check_request(amount("3"), Some(&[ask(1, "1"), ask(2, "1")]))), ["amount"]);
        let many: Vec<RequestedAllocation> = (1..=201).map(|id| ask(id, "1")).collect();
        assert_eq!(fields(check_request(amount("201"), Some(&many))), ["allocations"]);
        assert!(check_request(amount("2"), Some(&[ask(1, "1.5"), ask(2, "0.5")])).is_ok());
        assert!(check_request(amount("2"), None).is_ok());
    }
}
