//! Vendor credits (D44): claims, decisions, replacements, deletes and restores, the list and
//! who may do what.

use std::sync::Arc;

use jiff::SignedDuration;
use rust_decimal::Decimal;

use super::{field_error, params};
use crate::access::role::NewRole;
use crate::conformance::{Fixture, amount, created, dec, ts};
use crate::credits::{
    CreditDecision, CreditKind, CreditQuery, CreditStatus, NewCreditApplication, NewVendorCredit, VendorCredit,
};
use crate::error::{Entity, Error, RuleBroken};
use crate::ids::{InvoiceId, VendorCreditId, VendorId};
use crate::invoices::InvoiceStatus;
use crate::reports::aging::AgingQuery;
use crate::reports::audit::AuditQuery;
use crate::reports::statement::{StatementLineKind, StatementQuery};
use crate::store::{BulkCredit, BulkLoadStore, Store, UniqueKey};
use crate::transactions::TransactionType;
use crate::vendor_payments::NewVendorPayment;
use crate::vendor_payments::rules::RequestedAllocation;

fn credit_query(pairs: &[(&str, &str)]) -> CreditQuery {
    CreditQuery::from_params(&params(pairs)).unwrap_or_else(|errors| panic!("query {pairs:?}: {errors}"))
}

/// A claim on `vendor` of `claimed`, made on `claim_date`.
fn claim(vendor: VendorId, number: &str, claimed: &str, claim_date: &str) -> NewVendorCredit {
    NewVendorCredit {
        vendor_id: vendor,
        branch_id: None,
        credit_number: number.into(),
        kind: CreditKind::ExpiryReturn,
        claimed_amount: amount(claimed),
        claim_date: ts(claim_date),
        against_invoice_id: None,
        description: None,
    }
}

fn decision(accepted: &str, date: &str) -> CreditDecision {
    CreditDecision { accepted_amount: dec(accepted), decision_date: ts(date), distributor_reference: None }
}

impl<S: Store> Fixture<S> {
    /// Records a claim.
    ///
    /// # Panics
    /// On failure.
    pub async fn credit(&self, input: NewVendorCredit) -> VendorCredit {
        created(self.engine.create_credit(&self.admin, input, None).await.expect("credit claimed"))
    }
}

/// D44: a claim is recorded against an active vendor under a number its active credits do not
/// hold, decided within what is claimed, replaced within what is accepted, and deleted and
/// restored like other records; every write is audited.
pub async fn credits_are_claimed_decided_replaced_deleted_and_restored<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let cipla = fx.vendor("Cipla").await;
    let sun = fx.vendor("Sun").await;
    let bill = fx.invoice(cipla.id, "INV-1", "500", "2024-06-01T00:00:00Z").await;
    let other_bill = fx.invoice(sun.id, "INV-9", "80", "2024-06-01T00:00:00Z").await;

    let mut input = claim(cipla.id, " CN-1 ", "120.50", "2024-05-09T00:00:00Z");
    input.kind = CreditKind::Breakage;
    input.against_invoice_id = Some(bill.id);
    input.description = Some("six strips broken".into());
    let credit = fx.credit(input.clone()).await;
    assert_eq!(credit.credit_number, "CN-1", "numbers are trimmed");
    assert_eq!((credit.vendor_id, credit.vendor_name.as_str()), (cipla.id, "Cipla"));
    assert_eq!((credit.kind, credit.against_invoice_id), (CreditKind::Breakage, Some(bill.id)));
    assert_eq!(
        (credit.accepted_amount, credit.decision_date, credit.distributor_reference.clone()),
        (None, None, None)
    );
    assert_eq!((credit.applied_amount, credit.available_amount()), (dec("0"), dec("0")));
    assert_eq!(credit.status(), CreditStatus::Claimed);
    assert!(credit.applications.is_empty());
    assert_eq!(fx.engine.get_credit(&fx.admin, credit.id).await.unwrap(), credit, "read returns what create returned");

    // The number is unique among the vendor's active credits only (D4, D5, D44).
    match fx.engine.create_credit(&fx.admin, claim(cipla.id, "cn-1", "1", "2024-05-09T00:00:00Z"), None).await {
        Err(Error::Conflict(UniqueKey::CreditNumber)) => {}
        other => panic!("a taken number: {other:?}"),
    }
    fx.credit(claim(sun.id, "CN-1", "1", "2024-05-09T00:00:00Z")).await;

    // Each bad field is named.
    let mut wrong_invoice = claim(cipla.id, "CN-2", "1", "2024-05-09T00:00:00Z");
    wrong_invoice.against_invoice_id = Some(other_bill.id);
    field_error(fx.engine.create_credit(&fx.admin, wrong_invoice.clone(), None).await, "againstInvoiceId", "other's");
    wrong_invoice.against_invoice_id = Some(InvoiceId(424242));
    field_error(fx.engine.create_credit(&fx.admin, wrong_invoice, None).await, "againstInvoiceId", "missing invoice");
    field_error(
        fx.engine.create_credit(&fx.admin, claim(cipla.id, "CN-2", "1", "2024-05-11T00:00:00Z"), None).await,
        "claimDate",
        "a claim dated after today",
    );
    field_error(
        fx.engine.create_credit(&fx.admin, claim(VendorId(424242), "CN-2", "1", "2024-05-09T00:00:00Z"), None).await,
        "vendorId",
        "an unknown vendor",
    );
    field_error(
        fx.engine.create_credit(&fx.admin, claim(cipla.id, &"N".repeat(65), "1", "2024-05-09T00:00:00Z"), None).await,
        "creditNumber",
        "a number over 64 characters",
    );

    // The decision lies between what is applied and what is claimed, dated from the claim to today.
    for (accepted, date, field, label) in [
        ("120.5001", "2024-05-10T00:00:00Z", "acceptedAmount", "above the claim"),
        ("-1", "2024-05-10T00:00:00Z", "acceptedAmount", "negative"),
        ("10", "2024-05-08T23:59:59Z", "decisionDate", "before the claim"),
        ("10", "2024-05-11T00:00:00Z", "decisionDate", "after today"),
    ] {
        field_error(fx.engine.decide_credit(&fx.admin, credit.id, decision(accepted, date)).await, field, label);
    }
    fx.advance(SignedDuration::from_mins(1));
    let mut partly = decision("100.00", "2024-05-10T00:00:00Z");
    partly.distributor_reference = Some(" DCN/77 ".into());
    let decided = fx.engine.decide_credit(&fx.admin, credit.id, partly).await.unwrap();
    assert_eq!(decided.accepted_amount, Some(dec("100")));
    assert_eq!(decided.decision_date, Some(ts("2024-05-10T00:00:00Z")));
    assert_eq!(decided.distributor_reference.as_deref(), Some("DCN/77"));
    assert_eq!((decided.status(), decided.available_amount()), (CreditStatus::PartlyAccepted, dec("100")));
    assert!(decided.updated_at > credit.updated_at);
    let full = fx.engine.decide_credit(&fx.admin, credit.id, decision("120.5", "2024-05-10T00:00:00Z")).await.unwrap();
    assert_eq!(full.status(), CreditStatus::Accepted, "a decided credit may be decided again");
    assert_eq!(full.distributor_reference, None, "the decision is replaced whole");
    let rejected = fx.engine.decide_credit(&fx.admin, credit.id, decision("0", "2024-05-09T00:00:00Z")).await.unwrap();
    assert_eq!((rejected.status(), rejected.available_amount()), (CreditStatus::Rejected, dec("0")));
    fx.engine.decide_credit(&fx.admin, credit.id, decision("100", "2024-05-10T00:00:00Z")).await.unwrap();

    // A replacement keeps the decision and cannot claim less than was accepted.
    field_error(
        fx.engine.update_credit(&fx.admin, credit.id, claim(cipla.id, "CN-1", "99.9999", "2024-05-09T00:00:00Z")).await,
        "claimedAmount",
        "a claim below the accepted amount",
    );
    let replaced = fx
        .engine
        .update_credit(&fx.admin, credit.id, claim(sun.id, "CN-3", "150", "2024-05-08T00:00:00Z"))
        .await
        .unwrap();
    assert_eq!((replaced.vendor_id, replaced.credit_number.as_str()), (sun.id, "CN-3"));
    assert_eq!(
        (replaced.kind, replaced.against_invoice_id, replaced.description.clone()),
        (CreditKind::ExpiryReturn, None, None)
    );
    assert_eq!((replaced.accepted_amount, replaced.status()), (Some(dec("100")), CreditStatus::PartlyAccepted));
    match fx.engine.update_credit(&fx.admin, credit.id, claim(sun.id, "cn-1", "150", "2024-05-08T00:00:00Z")).await {
        Err(Error::Conflict(UniqueKey::CreditNumber)) => {}
        other => panic!("a number the new vendor's credits hold: {other:?}"),
    }
    assert!(matches!(
        fx.engine
            .update_credit(&fx.admin, VendorCreditId(424242), claim(sun.id, "X", "1", "2024-05-08T00:00:00Z"))
            .await,
        Err(Error::NotFound { entity: Entity::VendorCredit })
    ));

    // Delete and restore (D15, D16): a restore needs the number free and the vendor active.
    fx.engine.delete_credit(&fx.admin, credit.id, Some("entered twice".into())).await.unwrap();
    assert!(matches!(
        fx.engine.get_credit(&fx.admin, credit.id).await,
        Err(Error::NotFound { entity: Entity::VendorCredit })
    ));
    assert!(matches!(fx.engine.delete_credit(&fx.admin, credit.id, None).await, Err(Error::NotFound { .. })));
    assert!(matches!(
        fx.engine.decide_credit(&fx.admin, credit.id, decision("1", "2024-05-10T00:00:00Z")).await,
        Err(Error::NotFound { .. })
    ));
    let holder = fx.credit(claim(sun.id, "CN-3", "5", "2024-05-09T00:00:00Z")).await;
    match fx.engine.restore_credit(&fx.admin, credit.id).await {
        Err(Error::Conflict(UniqueKey::CreditNumber)) => {}
        other => panic!("a restore whose number is taken again: {other:?}"),
    }
    fx.engine.delete_credit(&fx.admin, holder.id, None).await.unwrap();
    fx.engine.delete_vendor(&fx.admin, sun.id, None).await.unwrap();
    match fx.engine.restore_credit(&fx.admin, credit.id).await {
        Err(Error::Rule(RuleBroken::ParentInactive(Entity::Vendor))) => {}
        other => panic!("a restore under a deleted vendor: {other:?}"),
    }
    field_error(
        fx.engine.create_credit(&fx.admin, claim(sun.id, "CN-4", "1", "2024-05-09T00:00:00Z"), None).await,
        "vendorId",
        "a deleted vendor",
    );
    fx.engine.restore_vendor(&fx.admin, sun.id).await.unwrap();
    let restored = fx.engine.restore_credit(&fx.admin, credit.id).await.unwrap();
    assert!(restored.is_active);
    assert_eq!((restored.accepted_amount, restored.status()), (Some(dec("100")), CreditStatus::PartlyAccepted));
    assert!(matches!(fx.engine.restore_credit(&fx.admin, credit.id).await, Err(Error::NotFound { .. })), "D15");

    // D22: every write is audited, a delete with its reason.
    let id = credit.id.to_string();
    let query = AuditQuery::from_params(&params(&[("entity", "VendorCredit"), ("entityId", &id)])).unwrap();
    let entries = fx.engine.list_audit(&fx.admin, &query).await.unwrap();
    let actions: Vec<&str> = entries.items.iter().map(|entry| entry.action.as_str()).collect();
    assert_eq!(actions, ["restore", "delete", "update", "decide", "decide", "decide", "decide", "create"]);
    assert_eq!(entries.items[1].reason.as_deref(), Some("entered twice"));
    let changes: serde_json::Value = serde_json::from_str(entries.items[3].changes.as_deref().unwrap()).unwrap();
    assert_eq!(changes["acceptedAmount"], "100");
}

/// D44: the list is newest claim first, then id descending; it filters by vendor, status, kind,
/// claim dates and state, and `claimedBefore` finds the claims still undecided since before a
/// day.
pub async fn credit_list_filters_and_orders<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let cipla = fx.vendor("Cipla").await;
    let sun = fx.vendor("Sun").await;
    let old = fx.credit(claim(cipla.id, "C-1", "10", "2024-02-01T00:00:00Z")).await;
    let mut breakage = claim(cipla.id, "C-2", "20", "2024-04-01T00:00:00Z");
    breakage.kind = CreditKind::Breakage;
    let breakage = fx.credit(breakage).await;
    let same_day = fx.credit(claim(sun.id, "S-1", "30", "2024-04-01T00:00:00Z")).await;
    let recent = fx.credit(claim(sun.id, "S-2", "40", "2024-05-09T00:00:00Z")).await;
    let rejected = fx.credit(claim(sun.id, "S-3", "50", "2024-01-01T00:00:00Z")).await;
    fx.engine.decide_credit(&fx.admin, rejected.id, decision("0", "2024-01-05T00:00:00Z")).await.unwrap();
    fx.engine.decide_credit(&fx.admin, breakage.id, decision("20", "2024-04-02T00:00:00Z")).await.unwrap();
    let canceled = fx.credit(claim(sun.id, "S-4", "60", "2024-03-01T00:00:00Z")).await;
    fx.engine.delete_credit(&fx.admin, canceled.id, None).await.unwrap();

    let ids = |pairs: &[(&str, &str)]| {
        let query = credit_query(pairs);
        let engine = &fx.engine;
        let admin = &fx.admin;
        async move {
            let page = engine.list_credits(admin, &query).await.unwrap();
            assert!(page.items.iter().all(|credit| credit.applications.is_empty()), "list items carry none");
            (page.items.iter().map(|credit| credit.id).collect::<Vec<_>>(), page.total_count)
        }
    };
    assert_eq!(
        ids(&[]).await,
        (vec![recent.id, same_day.id, breakage.id, old.id, rejected.id], 5),
        "active only, newest claim first, then id descending"
    );
    assert_eq!(ids(&[("pageSize", "2"), ("page", "2")]).await, (vec![breakage.id, old.id], 5));
    assert_eq!(ids(&[("vendorId", &cipla.id.to_string())]).await, (vec![breakage.id, old.id], 2));
    assert_eq!(ids(&[("status", "claimed")]).await, (vec![recent.id, same_day.id, old.id], 3));
    assert_eq!(ids(&[("status", "Rejected")]).await, (vec![rejected.id], 1));
    assert_eq!(ids(&[("status", "Accepted")]).await, (vec![breakage.id], 1));
    assert_eq!(ids(&[("status", "Canceled")]).await, (vec![canceled.id], 1), "canceled ones are inactive");
    assert_eq!(ids(&[("isActive", "false")]).await, (vec![canceled.id], 1));
    assert_eq!(ids(&[("kind", "breakage")]).await, (vec![breakage.id], 1));
    assert_eq!(
        ids(&[("fromDate", "2024-03-01"), ("toDate", "2024-04-01")]).await,
        (vec![same_day.id, breakage.id], 2),
        "inclusive claim dates"
    );
    assert_eq!(
        ids(&[("claimedBefore", "2024-04-02")]).await,
        (vec![same_day.id, old.id], 2),
        "undecided claims older than the day: decided and canceled ones are not chased"
    );
    assert_eq!(ids(&[("claimedBefore", "2024-04-01")]).await, (vec![old.id], 1), "the day itself is not before it");
    assert_eq!(ids(&[("page", "9")]).await, (vec![], 5), "a page past the end still counts");
}

/// D44: credits need their own permissions (seeded 30 to 33); the Pharmacist Default policy
/// grants Read, Create and Update, not Delete.
pub async fn credit_permissions_follow_the_seeded_policy<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Cipla").await;
    let (_, pharmacist) = fx.pharmacist("pharmacist@example.com").await;
    let credit = created(
        fx.engine
            .create_credit(&pharmacist, claim(vendor.id, "C-1", "10", "2024-05-01T00:00:00Z"), None)
            .await
            .expect("a pharmacist claims"),
    );
    fx.engine.get_credit(&pharmacist, credit.id).await.expect("a pharmacist reads");
    fx.engine.list_credits(&pharmacist, &CreditQuery::default()).await.expect("a pharmacist lists");
    fx.engine
        .decide_credit(&pharmacist, credit.id, decision("5", "2024-05-10T00:00:00Z"))
        .await
        .expect("a pharmacist records the decision");
    match fx.engine.delete_credit(&pharmacist, credit.id, None).await {
        Err(Error::Forbidden { required }) => assert_eq!(required.to_string(), "VendorCredit:Delete"),
        other => panic!("a pharmacist deletes no credit: {other:?}"),
    }
    let role = NewRole { name: "Clerk".into(), description: String::new() };
    let role = created(fx.engine.create_role(&fx.admin, role, None).await.unwrap());
    let (_, clerk) = fx.user_with_role("clerk@example.com", role.id).await;
    match fx.engine.list_credits(&clerk, &CreditQuery::default()).await {
        Err(Error::Forbidden { required }) => assert_eq!(required.to_string(), "VendorCredit:Read"),
        other => panic!("a user without the permission lists no credit: {other:?}"),
    }
}

fn application(total: Option<&str>, allocations: &[(InvoiceId, &str)]) -> NewCreditApplication {
    NewCreditApplication {
        amount: total.map(amount),
        date: None,
        allocations: (!allocations.is_empty()).then(|| {
            allocations
                .iter()
                .map(|(invoice_id, share)| RequestedAllocation { invoice_id: *invoice_id, amount: amount(share) })
                .collect()
        }),
    }
}

/// D44: an accepted credit is set against the vendor's bills as a vendor payment is split (D31),
/// never beyond what is available or what an invoice owes; every balance counts it (D10, D11,
/// D12, D32, D34, D35); undoing an application, deleting the invoice or the credit gives it
/// back.
pub async fn credits_set_against_bills_lower_what_is_owed_everywhere<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Cipla").await;
    let other = fx.vendor("Sun").await;
    let early = fx.invoice(vendor.id, "E-1", "100", "2024-05-01T00:00:00Z").await;
    let later = fx.invoice(vendor.id, "E-2", "50", "2024-06-01T00:00:00Z").await;
    let foreign = fx.invoice(other.id, "F-1", "80", "2024-06-01T00:00:00Z").await;
    fx.pay(early.id, "30").await;
    let credit = fx.credit(claim(vendor.id, "CN-1", "120", "2024-05-08T00:00:00Z")).await;
    let apply = |request: NewCreditApplication| fx.engine.apply_credit(&fx.admin, credit.id, request, None);

    field_error(apply(application(Some("1"), &[])).await, "amount", "an undecided credit");
    fx.engine.decide_credit(&fx.admin, credit.id, decision("100", "2024-05-09T00:00:00Z")).await.unwrap();

    // Each breach is named, and nothing is written.
    field_error(apply(application(Some("100.0001"), &[])).await, "amount", "more than is available");
    field_error(apply(application(None, &[(later.id, "50.0001")])).await, "allocations[0].amount", "more than owed");
    field_error(apply(application(None, &[(foreign.id, "5")])).await, "allocations[0].invoiceId", "another's");
    field_error(
        apply(application(None, &[(early.id, "70"), (later.id, "30.0001")])).await,
        "amount",
        "allocations adding up to more than is available",
    );
    field_error(apply(application(Some("5"), &[(early.id, "4")])).await, "amount", "an amount that is not the sum");
    let early_date = NewCreditApplication { date: Some(ts("2024-05-08T23:59:59Z")), ..application(Some("1"), &[]) };
    field_error(apply(early_date).await, "date", "before the decision");
    let future = NewCreditApplication { date: Some(ts("2024-05-11T00:00:00Z")), ..application(Some("1"), &[]) };
    field_error(apply(future).await, "date", "after today");
    assert_eq!(fx.engine.get_credit(&fx.admin, credit.id).await.unwrap().applied_amount, dec("0"));

    // Oldest due first: 70 settles E-1, 20 goes to E-2.
    let applied = created(apply(application(Some("90"), &[])).await.unwrap());
    let shares: Vec<(InvoiceId, Decimal)> =
        applied.applications.iter().map(|application| (application.invoice_id, application.amount.get())).collect();
    assert_eq!(shares, [(early.id, dec("70")), (later.id, dec("20"))]);
    assert_eq!(applied.applications[0].invoice_number, "E-1");
    assert_eq!(applied.applications[0].date, fx.engine.now(), "dated now when no date is given");
    assert_eq!((applied.applied_amount, applied.available_amount()), (dec("90"), dec("10")));
    assert_eq!(applied.status(), CreditStatus::PartlyAccepted, "applying changes no status");

    let read = |id| fx.engine.get_invoice(&fx.admin, id);
    let settled = read(early.id).await.unwrap().invoice;
    assert_eq!(
        (settled.paid_amount, settled.credited_amount, settled.pending_amount()),
        (dec("30"), dec("70"), dec("0"))
    );
    assert_eq!(settled.status, InvoiceStatus::FullyPaid, "D10: a credit settles like a payment");
    assert_eq!(read(later.id).await.unwrap().invoice.pending_amount(), dec("30"));
    let totals = fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap().totals;
    assert_eq!(
        (totals.total_invoice_value, totals.total_paid_amount, totals.total_credited_amount),
        (dec("150"), dec("30"), dec("90"))
    );
    assert_eq!((totals.outstanding_balance, totals.available_credit), (dec("30"), dec("10")));
    assert_eq!(fx.engine.dashboard_summary(&fx.admin).await.unwrap().total_due, dec("110"), "30 + 80 still due");
    let payables = fx.engine.payables(&fx.admin).await.unwrap();
    assert_eq!(
        (payables.credits.available_credit.amount, payables.credits.available_credit.credit_count),
        (dec("10"), 1)
    );
    assert_eq!(payables.overdue.invoice_count, 0, "E-1 is settled, so nothing is overdue");
    let open = fx.engine.list_invoices(&fx.admin, &super::invoice_query(&[("status", "PartiallyPaid")])).await.unwrap();
    assert_eq!(open.total_count, 2);

    // A vendor payment sees what credits left owing (D31).
    let payment = NewVendorPayment {
        amount: amount("30.0001"),
        transaction_date: ts("2024-05-10T09:00:00Z"),
        transaction_type: TransactionType::Cash,
        reference: None,
        description: None,
        allocations: Some(vec![RequestedAllocation { invoice_id: later.id, amount: amount("30.0001") }]),
        branch_id: None,
    };
    field_error(
        fx.engine.create_vendor_payment(&fx.admin, vendor.id, payment, None).await,
        "allocations[0].amount",
        "D31",
    );

    // The aging counts applications on or before its day (D34).
    let aging = |day: &str| {
        let query = AgingQuery { as_of: Some(day.parse().unwrap()), vendor_id: Some(vendor.id), page: None };
        let engine = &fx.engine;
        let admin = &fx.admin;
        async move { engine.aging(admin, &query).await.unwrap().totals.total() }
    };
    assert_eq!(aging("2024-05-10").await, dec("30"));
    assert_eq!(
        aging("2024-05-09").await,
        dec("100"),
        "yesterday E-1 still owed all of it (paid and credited today), and E-2 was not yet billed"
    );

    // The statement shows the credit on its decision day and closes at the balance less what is
    // available (D35).
    let statement = fx
        .engine
        .vendor_statement(
            &fx.admin,
            vendor.id,
            &StatementQuery { from_date: Some("2024-05-01".parse().unwrap()), to_date: None, page: None },
        )
        .await
        .unwrap();
    let lines: Vec<(StatementLineKind, Decimal)> =
        statement.figures.lines.iter().map(|line| (line.entry.kind, line.credited)).collect();
    assert!(lines.contains(&(StatementLineKind::Credit, dec("100"))), "{lines:?}");
    let credit_line = statement.figures.lines.iter().find(|line| line.entry.kind == StatementLineKind::Credit).unwrap();
    assert_eq!((credit_line.entry.credit_id, credit_line.entry.invoice_id), (Some(credit.id), None));
    assert_eq!(credit_line.entry.credit_number.as_deref(), Some("CN-1"));
    assert_eq!(statement.figures.total_credited, dec("100"));
    assert_eq!(statement.figures.closing_balance, totals.outstanding_balance - totals.available_credit);
    let paged = fx
        .engine
        .vendor_statement(
            &fx.admin,
            vendor.id,
            &StatementQuery {
                from_date: Some("2024-05-01".parse().unwrap()),
                to_date: None,
                page: Some(crate::paging::PageRequest::new(1, 100)),
            },
        )
        .await
        .unwrap();
    assert_eq!(paged.figures, statement.figures, "D43: the one page of a short statement is the whole of it");

    // The decision can no longer go below what is applied.
    field_error(
        fx.engine.decide_credit(&fx.admin, credit.id, decision("89.9999", "2024-05-09T00:00:00Z")).await,
        "acceptedAmount",
        "below what is applied",
    );
    // Undo one application: the invoice owes it again, the credit has it again.
    let first = applied.applications[0].id;
    let other_credit = fx.credit(claim(vendor.id, "CN-2", "5", "2024-05-09T00:00:00Z")).await;
    assert!(matches!(
        fx.engine.undo_application(&fx.admin, other_credit.id, first).await,
        Err(Error::NotFound { entity: Entity::CreditApplication })
    ));
    fx.engine.undo_application(&fx.admin, credit.id, first).await.unwrap();
    assert!(matches!(fx.engine.undo_application(&fx.admin, credit.id, first).await, Err(Error::NotFound { .. })));
    assert_eq!(read(early.id).await.unwrap().invoice.pending_amount(), dec("70"));
    let undone = fx.engine.get_credit(&fx.admin, credit.id).await.unwrap();
    assert_eq!((undone.available_amount(), undone.applications.len()), (dec("80"), 1));

    // Deleting the invoice deletes the applications on it; restoring it does not bring them back.
    fx.engine.delete_invoice(&fx.admin, later.id, None).await.unwrap();
    assert_eq!(fx.engine.get_credit(&fx.admin, credit.id).await.unwrap().available_amount(), dec("100"));
    let restored = fx.engine.restore_invoice(&fx.admin, later.id).await.unwrap();
    assert_eq!((restored.credited_amount, restored.pending_amount()), (dec("0"), dec("50")));

    // Deleting the credit deletes its applications.
    created(apply(application(None, &[(later.id, "50"), (early.id, "10")])).await.unwrap());
    fx.engine.delete_credit(&fx.admin, credit.id, None).await.unwrap();
    let totals = fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap().totals;
    assert_eq!(
        (totals.total_credited_amount, totals.outstanding_balance, totals.available_credit),
        (dec("0"), dec("120"), dec("0"))
    );
    let restored = fx.engine.restore_credit(&fx.admin, credit.id).await.unwrap();
    assert!(restored.applications.is_empty(), "D44: a restore brings the credit back alone");
    assert_eq!(restored.available_amount(), dec("100"));
    let payables = fx.engine.payables(&fx.admin).await.unwrap();
    assert_eq!(payables.credits.available_credit.amount, dec("100"));
    assert_eq!(
        (payables.credits.pending_claims.amount, payables.credits.pending_claims.credit_count),
        (dec("5"), 1),
        "CN-2 is undecided"
    );
    assert_eq!(payables.credits.pending_claims.oldest_claim_date, Some(ts("2024-05-09T00:00:00Z")));
}

/// D51 amending D44: a credit applied with neither an amount nor allocations applies the
/// smaller of what it has available and what the vendor's open invoices owe, and is refused
/// only when that is 0; its applications are listed by date, then id.
pub async fn a_credit_applied_without_an_amount_takes_what_is_owed<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Cipla").await;
    let first = fx.invoice(vendor.id, "W-1", "40", "2024-05-01T00:00:00Z").await;
    let second = fx.invoice(vendor.id, "W-2", "25", "2024-06-01T00:00:00Z").await;
    let credit = fx.credit(claim(vendor.id, "CN-W", "100", "2024-05-08T00:00:00Z")).await;
    fx.engine.decide_credit(&fx.admin, credit.id, decision("100", "2024-05-08T00:00:00Z")).await.unwrap();
    let apply = |request: NewCreditApplication| fx.engine.apply_credit(&fx.admin, credit.id, request, None);

    let applied = created(apply(application(None, &[])).await.unwrap());
    let shares: Vec<(InvoiceId, Decimal)> =
        applied.applications.iter().map(|application| (application.invoice_id, application.amount.get())).collect();
    assert_eq!(shares, [(first.id, dec("40")), (second.id, dec("25"))], "all that is owed, oldest due first");
    assert_eq!((applied.applied_amount, applied.available_amount()), (dec("65"), dec("35")));
    field_error(apply(application(None, &[])).await, "amount", "nothing is owed any more");
    assert_eq!(fx.engine.get_credit(&fx.admin, credit.id).await.unwrap().applied_amount, dec("65"), "nothing written");

    // A later bill, credited with an application dated before the others: listed first.
    let third = fx.invoice(vendor.id, "W-3", "10", "2024-07-01T00:00:00Z").await;
    let backdated = NewCreditApplication { date: Some(ts("2024-05-09T12:00:00Z")), ..application(Some("4"), &[]) };
    let read = created(apply(backdated).await.unwrap());
    let order: Vec<(InvoiceId, Decimal)> =
        read.applications.iter().map(|application| (application.invoice_id, application.amount.get())).collect();
    assert_eq!(order, [(third.id, dec("4")), (first.id, dec("40")), (second.id, dec("25"))], "by date, then id");
    let again = fx.engine.get_credit(&fx.admin, credit.id).await.unwrap();
    assert_eq!(again.applications, read.applications, "the read lists them alike");
    let rest = created(apply(application(None, &[])).await.unwrap());
    assert_eq!((rest.applied_amount, rest.available_amount()), (dec("75"), dec("25")), "6 more, all W-3 still owed");
}

/// D44: applications racing for one credit never apply more than was accepted, and every
/// answered application is kept.
pub async fn concurrent_applications_never_apply_more_than_accepted<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let vendor = fx.vendor("Raced").await;
    for n in 0..4 {
        fx.invoice(vendor.id, &format!("R-{n}"), "100", "2024-05-20T00:00:00Z").await;
    }
    let credit = fx.credit(claim(vendor.id, "CN-R", "500", "2024-05-01T00:00:00Z")).await;
    fx.engine.decide_credit(&fx.admin, credit.id, decision("250", "2024-05-02T00:00:00Z")).await.unwrap();
    let tasks: Vec<_> = (0..12)
        .map(|_| {
            let fx = Arc::clone(&fx);
            tokio::spawn(async move {
                fx.engine.apply_credit(&fx.admin, credit.id, application(Some("30"), &[]), None).await.map(drop)
            })
        })
        .collect();
    let mut acknowledged = 0;
    for task in tasks {
        match task.await.expect("no task panics") {
            Ok(()) => acknowledged += 1,
            Err(Error::Validation(errors)) => assert!(errors.contains("amount"), "{errors}"),
            Err(other) => panic!("an application answered {other:?}"),
        }
    }
    assert_eq!(acknowledged, 8, "250 accepted: eight applications of 30 fit");
    let read = fx.engine.get_credit(&fx.admin, credit.id).await.unwrap();
    assert_eq!((read.applied_amount, read.available_amount()), (dec("240"), dec("10")));
    let sum: Decimal = read.applications.iter().map(|application| application.amount.get()).sum();
    assert_eq!(sum, dec("240"));
    let totals = fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap().totals;
    assert_eq!((totals.total_credited_amount, totals.outstanding_balance), (dec("240"), dec("160")));
}

/// D44: credits imported with their decisions and applications read and count as if they had
/// been written one by one; a batch with a taken number or an application above what an invoice
/// owes writes nothing.
pub async fn imported_credits_count_as_written_ones<S: Store + BulkLoadStore>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Cipla").await;
    let first = fx.invoice(vendor.id, "I-1", "100", "2024-05-05T00:00:00Z").await;
    let second = fx.invoice(vendor.id, "I-2", "50", "2024-06-01T00:00:00Z").await;
    let at = ts("2024-05-09T00:00:00Z");
    let imported = |number: &str, accepted: Option<&str>, applied: &[(InvoiceId, &str)], is_active: bool| BulkCredit {
        credit: claim(vendor.id, number, "80", "2024-05-01T00:00:00Z"),
        decision: accepted.map(|accepted| decision(accepted, "2024-05-02T00:00:00Z")),
        application: (!applied.is_empty())
            .then(|| NewCreditApplication { date: Some(at), ..application(None, applied) }),
        is_active,
        created_at: at,
    };
    let store = fx.engine.store();
    let refused = [
        vec![imported("C-1", Some("80"), &[], true), imported("c-1", None, &[], true)],
        vec![imported("C-1", Some("80"), &[(second.id, "50.0001")], true)],
        vec![imported("C-1", Some("60"), &[(first.id, "40"), (second.id, "20.0001")], true)],
        vec![imported("C-1", Some("80.0001"), &[], true)],
    ];
    for batch in refused {
        assert!(store.load_credits(batch).await.is_err(), "a refused batch");
    }
    let ids = store
        .load_credits(vec![
            imported("C-1", Some("70"), &[(first.id, "40"), (second.id, "25")], true),
            imported("C-2", Some("30"), &[(first.id, "30")], true),
            imported("C-3", None, &[], true),
            imported("C-1", Some("10"), &[], false),
        ])
        .await
        .expect("the batch imports");
    assert_eq!(ids.len(), 4);
    let read = fx.engine.get_credit(&fx.admin, ids[0]).await.unwrap();
    assert_eq!(
        (read.applied_amount, read.available_amount(), read.status()),
        (dec("65"), dec("5"), CreditStatus::PartlyAccepted)
    );
    assert_eq!(read.applications.len(), 2);
    assert_eq!(read.applications[0].date, at);
    let first = fx.engine.get_invoice(&fx.admin, first.id).await.unwrap().invoice;
    assert_eq!((first.credited_amount, first.pending_amount()), (dec("70"), dec("30")), "credited by two credits");
    let totals = fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap().totals;
    assert_eq!(
        (totals.total_credited_amount, totals.available_credit, totals.outstanding_balance),
        (dec("95"), dec("5"), dec("55"))
    );
    let cards = fx.engine.payables(&fx.admin).await.unwrap().credits;
    assert_eq!((cards.pending_claims.credit_count, cards.pending_claims.amount), (1, dec("80")));
    assert_eq!((cards.available_credit.credit_count, cards.available_credit.amount), (1, dec("5")));
    let deleted = fx.engine.get_credit(&fx.admin, ids[3]).await;
    assert!(matches!(deleted, Err(Error::NotFound { .. })), "imported soft-deleted");
    // Writes after an import go on from its ids.
    let later = fx.credit(claim(vendor.id, "C-4", "1", "2024-05-09T00:00:00Z")).await;
    assert!(later.id.get() > ids[3].get());
}
