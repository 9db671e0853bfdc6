//! Vendor credits (D44): what a credit's replacement, its decision and its applications may do,
//! judged over the credit and the invoices as a store loaded and locked them.
//!
//! A claim is decided against what is stored: the distributor cannot accept more than was
//! claimed, a credit cannot be decided below what is already applied from it, nor dated before
//! its claim; a replacement cannot claim less than was accepted, nor move a credit that is
//! already set against one vendor's bills to another vendor; an application
//! ([`plan_application`]) sets what is available against the vendor's invoices as D31 splits a
//! payment; and an invoice with credit applied keeps its vendor ([`check_invoice_move`]). Each
//! refusal names its field, as a 400 (D44).

use jiff::Timestamp;
use rust_decimal::Decimal;

use crate::branches::rules as branch_rules;
use crate::clock::BusinessCalendar;
use crate::credits::{CreditDecision, NewCreditApplication, NewVendorCredit};
use crate::error::FieldErrors;
pub use crate::figures::CreditFacts;
use crate::figures::InvoiceFacts;
use crate::ids::{BranchId, VendorId};
use crate::money::Amount;
use crate::store::{BulkCredit, StoreError, StoreResult};
use crate::vendor_payments::rules as vendor_payment_rules;
use crate::vendor_payments::rules::{Allocation, PayableInvoice};

/// A replacement of `credit` by `new` (D14, D44) may go on when it claims at least what was
/// accepted and, once anything is applied, keeps the vendor and the branch (D49).
///
/// # Errors
/// `Invalid` naming `claimedAmount`, `vendorId` or `branchId`.
pub fn check_update(credit: &CreditFacts, new: &NewVendorCredit) -> StoreResult<()> {
    let mut errors = FieldErrors::new();
    if let Some(accepted) = credit.accepted
        && new.claimed_amount.get() < accepted
    {
        errors.add("claimedAmount", format!("must not be below the accepted amount, {}", accepted.normalize()));
    }
    if new.vendor_id != credit.vendor_id && credit.applied > Decimal::ZERO {
        errors.add("vendorId", "cannot change once the credit is applied to the vendor's invoices");
    }
    // D49: a credit is set against its own branch's bills, so once applied it keeps its branch.
    if new.branch_id.is_some_and(|branch| branch != credit.branch_id) && credit.applied > Decimal::ZERO {
        errors.add("branchId", "cannot change once the credit is applied to the branch's invoices");
    }
    refuse_unless_empty(errors)
}

/// A decision on `credit` (D44) may go on when it accepts at most what is claimed and at least
/// what is applied, and is dated no earlier than the claim. (A decision dated after today is
/// refused before any credit is read, by [`CreditDecision::validate`].)
///
/// # Errors
/// `Invalid` naming `acceptedAmount` or `decisionDate`.
pub fn check_decision(credit: &CreditFacts, decision: &CreditDecision) -> StoreResult<()> {
    let mut errors = FieldErrors::new();
    if decision.accepted_amount > credit.claimed {
        errors.add("acceptedAmount", format!("must not be above the claimed amount, {}", credit.claimed.normalize()));
    } else if decision.accepted_amount < credit.applied {
        errors.add(
            "acceptedAmount",
            format!("must not be below the amount already applied, {}", credit.applied.normalize()),
        );
    }
    if decision.decision_date < credit.claim_date {
        errors.add("decisionDate", "must not be earlier than claimDate");
    }
    refuse_unless_empty(errors)
}

/// Plans setting `request` of `credit` against the vendor's bills (D44) at `at` (the write's
/// instant, the application's date when the request gives none), over `invoices`, which the
/// store loaded and locked as for a vendor payment (D31): the ones the allocations name, or the
/// vendor's invoices. The credit must be accepted (something above zero); the amount is the
/// request's, or its allocations' sum, or else the smaller of what is available and what the
/// vendor's open invoices owe (D51 amending D44: refused only when that is 0), and may not be
/// more than is available; the date may not be before the decision; then the amount is split
/// as D31 splits a payment, each invoice taking at most what it still owes. Only the invoices
/// of the credit's branch take any (D49): another branch's invoice named in an allocation is
/// refused as a missing one. Answers the allocations.
///
/// # Errors
/// `Invalid` naming `amount`, `date`, `allocations[i].invoiceId` or `allocations[i].amount`.
pub fn plan_application(
    credit: &CreditFacts,
    request: &NewCreditApplication,
    at: Timestamp,
    invoices: &[PayableInvoice],
) -> StoreResult<Vec<Allocation>> {
    let own_branch: Vec<PayableInvoice> =
        invoices.iter().filter(|invoice| invoice.branch_id == credit.branch_id).cloned().collect();
    let invoices = own_branch.as_slice();
    if credit.accepted.is_none_or(|accepted| accepted <= Decimal::ZERO) {
        return refuse("amount", "cannot be applied: the credit is not accepted");
    }
    let available = credit.available();
    let allocated: Option<Decimal> = request
        .allocations
        .as_ref()
        .map(|allocations| allocations.iter().map(|allocation| allocation.amount.get()).sum());
    let amount = request
        .amount
        .map(Amount::get)
        .or(allocated)
        .unwrap_or_else(|| available.min(vendor_payment_rules::owed_by_open_invoices(credit.vendor_id, invoices)));
    let mut errors = FieldErrors::new();
    if amount > available {
        errors.add("amount", format!("is more than the credit has available, {}", available.normalize()));
    }
    if credit.decision_date.is_some_and(|decided| request.date.unwrap_or(at) < decided) {
        errors.add("date", "must not be earlier than decisionDate");
    }
    if !errors.is_empty() {
        return Err(StoreError::Invalid(errors));
    }
    let Ok(amount) = Amount::try_from(amount) else {
        let why =
            if available > Decimal::ZERO { "the vendor's open invoices owe nothing" } else { "nothing is available" };
        return refuse("amount", &format!("cannot be applied: {why}"));
    };
    vendor_payment_rules::allocate(credit.vendor_id, amount, request.allocations.as_deref(), invoices)
}

/// An invoice replaced with vendor `new_vendor` (D14) may go on when it keeps its vendor
/// `invoice.vendor_id` or no credit is applied to it (`invoice.credited` is zero): a credit is set
/// against its own vendor's bills only, as an applied credit keeps its vendor (D44).
///
/// # Errors
/// `Invalid` naming `vendorId`.
pub fn check_invoice_move(invoice: &InvoiceFacts, new_vendor: VendorId) -> StoreResult<()> {
    if invoice.vendor_id != new_vendor && invoice.credited > Decimal::ZERO {
        return refuse("vendorId", "cannot change while a vendor credit is applied to the invoice");
    }
    Ok(())
}

/// An invoice may move from its branch to `to` only while no credit is applied to it: a credit
/// is set against its own branch's bills only (D44, D49).
///
/// # Errors
/// `Invalid` naming `branchId`.
pub fn check_branch_move(invoice: &InvoiceFacts, to: BranchId) -> StoreResult<()> {
    if invoice.branch_id != to && invoice.credited > Decimal::ZERO {
        return refuse("branchId", "cannot change while a vendor credit is applied to the invoice");
    }
    Ok(())
}

/// The facts of an imported credit (D44) once its decision, if any, is recorded: the decision
/// is judged by [`check_decision`] as a written one is, nothing is applied yet, and the decision
/// falls on a day of `calendar`.
///
/// # Errors
/// As [`check_decision`].
pub fn check_import(imported: &BulkCredit, calendar: &BusinessCalendar) -> StoreResult<CreditFacts> {
    let credit = &imported.credit;
    let mut facts = CreditFacts {
        vendor_id: credit.vendor_id,
        branch_id: branch_rules::branch_of_create(credit.branch_id),
        is_active: imported.is_active,
        claimed: credit.claimed_amount.get(),
        claim_date: credit.claim_date,
        accepted: None,
        decision_date: None,
        decided_on: None,
        applied: Decimal::ZERO,
    };
    if let Some(decision) = &imported.decision {
        check_decision(&facts, decision)?;
        facts.accepted = Some(decision.accepted_amount);
        facts.decision_date = Some(decision.decision_date);
        facts.decided_on = Some(calendar.date_of(decision.decision_date));
    }
    Ok(facts)
}

/// A claim of `vendor_id` and `branch_id` naming an invoice (D44) may go on when that invoice
/// exists and belongs to the credit's vendor and branch (D49), active or not: `invoice` is the
/// vendor and branch of the invoice the store found, `None` when there is none.
///
/// # Errors
/// `Invalid` naming `againstInvoiceId`.
pub fn check_against(
    (vendor_id, branch_id): (VendorId, BranchId),
    invoice: Option<(VendorId, BranchId)>,
) -> StoreResult<()> {
    match invoice {
        Some((vendor, _)) if vendor != vendor_id => {
            refuse("againstInvoiceId", "must be an invoice of the credit's vendor")
        }
        Some((_, branch)) if branch != branch_id => {
            refuse("againstInvoiceId", "must be an invoice of the credit's branch")
        }
        Some(_) => Ok(()),
        None => refuse("againstInvoiceId", "must be an existing invoice"),
    }
}

fn refuse<T>(field: &str, message: &str) -> StoreResult<T> {
    Err(StoreError::Invalid(FieldErrors::single(field, message)))
}

fn refuse_unless_empty(errors: FieldErrors) -> StoreResult<()> {
    if errors.is_empty() { Ok(()) } else { Err(StoreError::Invalid(errors)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credits::CreditKind;
    use crate::ids::InvoiceId;
    use crate::vendor_payments::rules::RequestedAllocation;

    fn dec(text: &str) -> Decimal {
        Decimal::from_str_exact(text).unwrap()
    }

    fn ts(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn facts(accepted: Option<&str>, applied: &str) -> CreditFacts {
        CreditFacts {
            vendor_id: VendorId(1),
            branch_id: BranchId(1),
            is_active: true,
            claimed: dec("100"),
            claim_date: ts("2024-05-01T00:00:00Z"),
            accepted: accepted.map(dec),
            decision_date: accepted.map(|_| ts("2024-05-02T00:00:00Z")),
            decided_on: None,
            applied: dec(applied),
        }
    }

    fn fields(result: StoreResult<()>) -> Vec<String> {
        match result {
            Ok(()) => Vec::new(),
            Err(StoreError::Invalid(errors)) => errors.iter().map(|(field, _)| field.to_owned()).collect(),
            Err(other) => panic!("unexpected refusal {other:?}"),
        }
    }

    fn replacement(vendor: i64, claimed: &str) -> NewVendorCredit {
        NewVendorCredit {
            vendor_id: VendorId(vendor),
            branch_id: None,
            credit_number: "CN-1".into(),
            kind: CreditKind::ExpiryReturn,
            claimed_amount: Amount::parse(claimed).unwrap(),
            claim_date: ts("2024-05-01T00:00:00Z"),
            against_invoice_id: None,
            description: None,
        }
    }

    fn decision(accepted: &str, date: &str) -> CreditDecision {
        CreditDecision { accepted_amount: dec(accepted), decision_date: ts(date), distributor_reference: None }
    }

    #[test]
    fn a_replacement_keeps_what_was_accepted_and_the_vendor_of_what_is_applied() {
        assert!(fields(check_update(&facts(None, "0"), &replacement(2, "1"))).is_empty(), "undecided, unapplied");
        assert_eq!(fields(check_update(&facts(Some("60"), "0"), &replacement(1, "59.9999"))), ["claimedAmount"]);
        assert!(fields(check_update(&facts(Some("60"), "0"), &replacement(2, "60"))).is_empty());
        assert_eq!(fields(check_update(&facts(Some("60"), "0.0001"), &replacement(2, "60"))), ["vendorId"]);
        assert!(fields(check_update(&facts(Some("60"), "10"), &replacement(1, "70"))).is_empty());
    }

    #[test]
    fn a_replacement_keeps_the_branch_of_what_is_applied() {
        // D49: a credit is set against its own branch's bills only.
        let moved = |branch: i64| NewVendorCredit { branch_id: Some(BranchId(branch)), ..replacement(1, "60") };
        assert!(fields(check_update(&facts(Some("60"), "0"), &moved(2))).is_empty(), "nothing applied yet");
        assert_eq!(fields(check_update(&facts(Some("60"), "0.0001"), &moved(2))), ["branchId"]);
        assert!(fields(check_update(&facts(Some("60"), "10"), &moved(1))).is_empty(), "the same branch");
        assert!(fields(check_update(&facts(Some("60"), "10"), &replacement(1, "60"))).is_empty(), "kept");
    }

    #[test]
    fn a_decision_lies_between_what_is_applied_and_what_is_claimed() {
        let claimed_on = "2024-05-01T00:00:00Z";
        assert!(fields(check_decision(&facts(None, "0"), &decision("0", claimed_on))).is_empty(), "rejected");
        assert!(fields(check_decision(&facts(None, "0"), &decision("100", claimed_on))).is_empty(), "in full");
        assert_eq!(fields(check_decision(&facts(None, "0"), &decision("100.0001", claimed_on))), ["acceptedAmount"]);
        assert_eq!(fields(check_decision(&facts(Some("80"), "50"), &decision("49", claimed_on))), ["acceptedAmount"]);
        assert!(fields(check_decision(&facts(Some("80"), "50"), &decision("50", claimed_on))).is_empty());
        assert_eq!(
            fields(check_decision(&facts(None, "0"), &decision("1", "2024-04-30T23:59:59Z"))),
            ["decisionDate"],
            "before the claim"
        );
    }

    fn payable(id: i64, pending: &str, due_day: u32) -> PayableInvoice {
        let due = ts(&format!("2024-06-{due_day:02}T00:00:00Z"));
        PayableInvoice {
            id: InvoiceId(id),
            vendor_id: VendorId(1),
            branch_id: BranchId(1),
            is_active: true,
            pending: dec(pending),
            due_date: due,
            invoice_date: due,
        }
    }

    fn request(amount: Option<&str>, allocations: &[(i64, &str)]) -> NewCreditApplication {
        NewCreditApplication {
            amount: amount.map(|amount| Amount::parse(amount).unwrap()),
            date: None,
            allocations: (!allocations.is_empty()).then(|| {
                allocations
                    .iter()
                    .map(|(id, amount)| RequestedAllocation {
                        invoice_id: InvoiceId(*id),
                        amount: Amount::parse(amount).unwrap(),
                    })
                    .collect()
            }),
        }
    }

    #[test]
    fn an_application_takes_what_is_available_oldest_due_first() {
        let at = ts("2024-05-10T10:00:00Z");
        let invoices = [payable(2, "30", 20), payable(1, "50", 10), payable(3, "-5", 1)];
        let planned = |credit: &CreditFacts, request: &NewCreditApplication| {
            plan_application(credit, request, at, &invoices)
                .map(|allocations| allocations.iter().map(|a| (a.invoice_id.get(), a.amount.get())).collect::<Vec<_>>())
        };
        // Accepted 80, 10 applied: 70 available, by default all of it, oldest due first.
        assert_eq!(planned(&facts(Some("80"), "10"), &request(None, &[])).unwrap(), [(1, dec("50")), (2, dec("20"))]);
        assert_eq!(
            planned(&facts(Some("80"), "10"), &request(Some("55"), &[])).unwrap(),
            [(1, dec("50")), (2, dec("5"))]
        );
        assert_eq!(planned(&facts(Some("80"), "10"), &request(None, &[(2, "30")])).unwrap(), [(2, dec("30"))]);
        assert_eq!(fields(planned(&facts(Some("80"), "10"), &request(Some("70.0001"), &[])).map(drop)), ["amount"]);
        // D51: without an amount, what is owed when that is less than what is available.
        assert_eq!(
            planned(&facts(Some("100"), "0"), &request(None, &[])).unwrap(),
            [(1, dec("50")), (2, dec("30"))],
            "owed 80 only: 80 of the 100 applied"
        );
        assert_eq!(
            fields(planned(&facts(Some("100"), "0"), &request(Some("80.0001"), &[])).map(drop)),
            ["amount"],
            "an amount asked for is still bounded by what is owed"
        );
        let nothing_owed = plan_application(&facts(Some("100"), "0"), &request(None, &[]), at, &invoices[2..]);
        let refused = fields(nothing_owed.map(drop));
        assert_eq!(refused, ["amount"], "nothing owed: a 400 on amount");
        assert_eq!(
            fields(planned(&facts(Some("80"), "0"), &request(None, &[(1, "50.0001")])).map(drop)),
            ["allocations[0].amount"]
        );
        assert_eq!(
            fields(planned(&facts(Some("80"), "0"), &request(None, &[(1, "50"), (2, "30.0001")])).map(drop)),
            ["amount"]
        );
        assert_eq!(fields(planned(&facts(None, "0"), &request(Some("1"), &[])).map(drop)), ["amount"], "undecided");
        assert_eq!(fields(planned(&facts(Some("0"), "0"), &request(Some("1"), &[])).map(drop)), ["amount"], "rejected");
        assert_eq!(fields(planned(&facts(Some("10"), "10"), &request(None, &[])).map(drop)), ["amount"], "all applied");
        let early = NewCreditApplication { date: Some(ts("2024-05-01T23:59:59Z")), ..request(Some("1"), &[]) };
        assert_eq!(fields(planned(&facts(Some("80"), "0"), &early).map(drop)), ["date"], "before the decision");
    }

    #[test]
    fn an_application_takes_only_the_credit_branch_invoices() {
        // D49: another branch's invoice is left out of the spreading and refused when named.
        let at = ts("2024-05-10T10:00:00Z");
        let other = PayableInvoice { branch_id: BranchId(2), ..payable(1, "50", 10) };
        let invoices = [other, payable(2, "30", 20)];
        let spread = plan_application(&facts(Some("80"), "0"), &request(None, &[]), at, &invoices).unwrap();
        let spread: Vec<(i64, Decimal)> = spread.iter().map(|a| (a.invoice_id.get(), a.amount.get())).collect();
        assert_eq!(spread, [(2, dec("30"))], "only branch 1's 30 is owed");
        let named = plan_application(&facts(Some("80"), "0"), &request(None, &[(1, "10")]), at, &invoices);
        assert_eq!(fields(named.map(drop)), ["allocations[0].invoiceId"]);
        let elsewhere = CreditFacts { branch_id: BranchId(2), ..facts(Some("80"), "0") };
        let spread = plan_application(&elsewhere, &request(None, &[]), at, &invoices).unwrap();
        assert_eq!(spread.iter().map(|a| a.invoice_id.get()).collect::<Vec<_>>(), [1]);
    }

    #[test]
    fn an_invoice_with_credit_applied_keeps_its_vendor() {
        let invoice = InvoiceFacts {
            vendor_id: VendorId(1),
            branch_id: BranchId(1),
            is_active: true,
            amount: dec("100"),
            paid: dec("0"),
            credited: dec("0.0001"),
            due_date: ts("2024-06-01T00:00:00Z"),
            day: "2024-05-01".parse().unwrap(),
        };
        assert_eq!(fields(check_invoice_move(&invoice, VendorId(2))), ["vendorId"]);
        assert!(check_invoice_move(&invoice, VendorId(1)).is_ok());
        assert!(check_invoice_move(&InvoiceFacts { credited: dec("0"), ..invoice }, VendorId(2)).is_ok());
    }

    #[test]
    fn a_claim_names_an_invoice_of_its_own_vendor_and_branch() {
        let (one, two) = (BranchId(1), BranchId(2));
        assert!(check_against((VendorId(1), one), Some((VendorId(1), one))).is_ok());
        assert_eq!(fields(check_against((VendorId(1), one), Some((VendorId(2), one)))), ["againstInvoiceId"]);
        assert_eq!(fields(check_against((VendorId(1), one), Some((VendorId(1), two)))), ["againstInvoiceId"], "D49");
        assert_eq!(fields(check_against((VendorId(1), one), None)), ["againstInvoiceId"]);
    }
}
