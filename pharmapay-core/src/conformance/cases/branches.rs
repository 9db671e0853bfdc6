//! Conformance cases: the chain's branches (D49). The head office from the first start, named
//! after the pharmacy at onboarding and never deleted; codes upper-cased and unique among
//! active branches, even when two writers race for one; the list's order; the permissions.

use std::sync::Arc;

use super::{field_error, idem, params};
use crate::branches::{HEAD_OFFICE_CODE, HEAD_OFFICE_ID, HEAD_OFFICE_NAME, NewBranch};
use crate::conformance::{Fixture, amount, created, dec, engine, onboarding, ts};
use crate::credits::{CreditDecision, CreditKind, NewCreditApplication, NewVendorCredit};
use crate::error::{Entity, Error, RuleBroken};
use crate::idempotency::{Created, Replay};
use crate::ids::BranchId;
use crate::imports::{ImportFile, ImportRequest};
use crate::invoices::{InvoiceQuery, NewInvoice};
use crate::reports::audit::AuditQuery;
use crate::store::{Store, UniqueKey};
use crate::vendor_payments::rules::RequestedAllocation;
use crate::vendors::gstin::Gstin;

/// The head office exists before onboarding, as `Head office`, and onboarding names it after
/// the pharmacy (D49).
pub async fn the_head_office_is_there_from_the_first_start<S: Store>(store: S) {
    let branch = store.get_branch(HEAD_OFFICE_ID).await.expect("read").expect("branch 1 exists before onboarding");
    assert_eq!((branch.code.as_str(), branch.name.as_str()), (HEAD_OFFICE_CODE, HEAD_OFFICE_NAME));
    assert!(branch.is_head_office() && branch.is_active);
    let (engine, _clock) = engine(store).await;
    let session = engine.complete_onboarding(onboarding()).await.expect("onboarded");
    let admin = engine.authenticate(&session.token.token).await.expect("the token works");
    let branches = engine.list_branches(&admin).await.expect("listed");
    assert_eq!(branches.len(), 1, "{branches:?}");
    assert_eq!(branches[0].id, HEAD_OFFICE_ID);
    assert_eq!(branches[0].name, onboarding().pharmacy.name, "the head office is named after the pharmacy");
}

/// Create, read, update, soft delete with reason and restore; the head office stays (D15,
/// D16, D49).
pub async fn branches_are_created_read_updated_deleted_and_restored<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let mut input = NewBranch::new(" andheri-w ", " Andheri West ");
    input.gstin = Some(Gstin::parse("27AAPFU0939F1ZV").expect("a valid GSTIN"));
    input.phone = Some(" 022 2634 0000 ".into());
    let branch = created(fx.engine.create_branch(&fx.admin, input, None).await.expect("created"));
    assert_eq!((branch.code.as_str(), branch.name.as_str()), ("ANDHERI-W", "Andheri West"));
    assert_eq!(branch.gstin.as_deref(), Some("27AAPFU0939F1ZV"));
    assert_eq!(branch.phone.as_deref(), Some("022 2634 0000"));
    assert!(!branch.is_head_office() && branch.is_active);
    assert_eq!(fx.engine.get_branch(&fx.admin, branch.id).await.expect("read"), branch);

    let mut change = NewBranch::new("AW", "Andheri (West)");
    change.drug_license_number = Some("MH-MZ1-123456".into());
    let changed = fx.engine.update_branch(&fx.admin, branch.id, change).await.expect("updated");
    assert_eq!((changed.code.as_str(), changed.name.as_str()), ("AW", "Andheri (West)"));
    assert_eq!(changed.gstin, None, "an update replaces every field");
    assert_eq!(changed.created_at, branch.created_at);

    fx.engine.delete_branch(&fx.admin, branch.id, Some("closed".into())).await.expect("deleted");
    let gone = fx.engine.get_branch(&fx.admin, branch.id).await;
    assert!(matches!(gone, Err(Error::NotFound { entity: Entity::Branch })), "{gone:?}");
    let listed = fx.engine.list_branches(&fx.admin).await.expect("listed");
    assert!(listed.iter().all(|b| b.id != branch.id), "a deleted branch is not listed: {listed:?}");
    let again = fx.engine.delete_branch(&fx.admin, branch.id, None).await;
    assert!(matches!(again, Err(Error::NotFound { entity: Entity::Branch })), "{again:?}");
    let restored = fx.engine.restore_branch(&fx.admin, branch.id).await.expect("restored");
    assert!(restored.is_active);
    let twice = fx.engine.restore_branch(&fx.admin, branch.id).await;
    assert!(
        matches!(twice, Err(Error::NotFound { entity: Entity::Branch })),
        "an active branch is not restored: {twice:?}"
    );

    let head = fx.engine.delete_branch(&fx.admin, HEAD_OFFICE_ID, None).await;
    assert!(matches!(head, Err(Error::Rule(RuleBroken::HeadOfficeDelete))), "{head:?}");
    let missing = fx.engine.update_branch(&fx.admin, BranchId(999), NewBranch::new("X", "X")).await;
    assert!(matches!(missing, Err(Error::NotFound { entity: Entity::Branch })), "{missing:?}");

    let audit = fx
        .engine
        .list_audit(&fx.admin, &AuditQuery::from_params(&params(&[("entity", "Branch")])).expect("a valid query"))
        .await
        .expect("audit");
    let actions: Vec<&str> = audit
        .items
        .iter()
        .filter(|entry| entry.entity == "Branch" && entry.entity_id == Some(branch.id.get()))
        .map(|entry| entry.action.as_str())
        .collect();
    assert_eq!(actions, ["restore", "delete", "update", "create"], "every write is audited, newest first");
}

/// Codes are unique among active branches, compared upper-cased: a taken code is a conflict,
/// a deleted branch's code may be taken, and its restore is then refused (D5, D49).
pub async fn branch_codes_are_unique_among_active_branches<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let first = created(fx.engine.create_branch(&fx.admin, NewBranch::new("BLR", "Bengaluru"), None).await.unwrap());
    let taken = fx.engine.create_branch(&fx.admin, NewBranch::new(" blr ", "Bangalore"), None).await;
    assert!(matches!(taken, Err(Error::Conflict(UniqueKey::BranchCode))), "{taken:?}");
    let head = fx.engine.create_branch(&fx.admin, NewBranch::new("ho", "Another head office"), None).await;
    assert!(matches!(head, Err(Error::Conflict(UniqueKey::BranchCode))), "the head office holds HO: {head:?}");
    let other = created(fx.engine.create_branch(&fx.admin, NewBranch::new("PUN", "Pune"), None).await.unwrap());
    let onto = fx.engine.update_branch(&fx.admin, other.id, NewBranch::new("blr", "Pune")).await;
    assert!(matches!(onto, Err(Error::Conflict(UniqueKey::BranchCode))), "{onto:?}");
    let kept = fx.engine.update_branch(&fx.admin, first.id, NewBranch::new("blr", "Bengaluru City")).await;
    assert_eq!(kept.expect("a branch keeps its own code").code, "BLR");

    fx.engine.delete_branch(&fx.admin, first.id, None).await.expect("deleted");
    let reused = fx.engine.create_branch(&fx.admin, NewBranch::new("BLR", "Bengaluru 2"), None).await;
    created(reused.expect("a deleted branch's code is free"));
    let restore = fx.engine.restore_branch(&fx.admin, first.id).await;
    assert!(matches!(restore, Err(Error::Conflict(UniqueKey::BranchCode))), "{restore:?}");
}

/// Two creates racing for one code: one wins, the other is a conflict (D5, D49).
pub async fn concurrent_branch_codes_have_one_winner<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let mut tasks = Vec::new();
    for index in 0..6 {
        let fx = Arc::clone(&fx);
        tasks.push(tokio::spawn(async move {
            fx.engine.create_branch(&fx.admin, NewBranch::new("DEL", &format!("Delhi {index}")), None).await
        }));
    }
    let mut won = 0;
    for task in tasks {
        match task.await.expect("the task ends") {
            Ok(_) => won += 1,
            Err(Error::Conflict(UniqueKey::BranchCode)) => {}
            other => panic!("expected a win or a conflict, got {other:?}"),
        }
    }
    assert_eq!(won, 1, "exactly one create takes the code");
}

/// Bad fields are 400s naming them; the list is the head office first, then by code; creates
/// replay by idempotency key (D6, D23, D49).
pub async fn branch_fields_are_checked_and_the_list_is_ordered<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    for (code, name, field) in [
        ("", "Name", "code"),
        ("TOO-LONG-A-CODE-17", "Name", "code"),
        ("HAS SPACE", "Name", "code"),
        ("OK", "  ", "name"),
        ("OK", &"n".repeat(201), "name"),
    ] {
        let result = fx.engine.create_branch(&fx.admin, NewBranch::new(code, name), None).await;
        field_error(result, field, &format!("code {code:?}, name {name:?}"));
    }
    for code in ["ZED", "ABC", "M-1"] {
        created(fx.engine.create_branch(&fx.admin, NewBranch::new(code, code), None).await.unwrap());
    }
    let codes: Vec<String> = fx.engine.list_branches(&fx.admin).await.unwrap().into_iter().map(|b| b.code).collect();
    assert_eq!(codes, ["HO", "ABC", "M-1", "ZED"]);

    let key = idem("branch-create-1", "fingerprint");
    let first = created(fx.engine.create_branch(&fx.admin, NewBranch::new("IDM", "Idem"), Some(&key)).await.unwrap());
    match fx.engine.create_branch(&fx.admin, NewBranch::new("IDM", "Idem"), Some(&key)).await.unwrap() {
        Created::Replayed(Replay::Current(current)) => assert_eq!(current.id, first.id),
        other => panic!("the create replays the branch it made, got {other:?}"),
    }
}

/// Branch permissions: the pharmacist reads, only holders of the write permissions write
/// (D19, D49).
pub async fn branch_permissions_follow_the_seeded_policy<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let (_, pharmacist) = fx.pharmacist("pharmacist@example.com").await;
    let listed = fx.engine.list_branches(&pharmacist).await.expect("Pharmacist Default holds Branch:Read");
    assert_eq!(listed.len(), 1);
    fx.engine.get_branch(&pharmacist, HEAD_OFFICE_ID).await.expect("read by id");
    let create = fx.engine.create_branch(&pharmacist, NewBranch::new("X1", "X"), None).await;
    assert!(matches!(create, Err(Error::Forbidden { .. })), "{create:?}");
    let update = fx.engine.update_branch(&pharmacist, HEAD_OFFICE_ID, NewBranch::new("HO", "X")).await;
    assert!(matches!(update, Err(Error::Forbidden { .. })), "{update:?}");
    let delete = fx.engine.delete_branch(&pharmacist, BranchId(2), None).await;
    assert!(matches!(delete, Err(Error::Forbidden { .. })), "403 before 404: {delete:?}");
    let (_, nobody) = fx.user_with("nobody@example.com", &[]).await;
    let read = fx.engine.list_branches(&nobody).await;
    assert!(matches!(read, Err(Error::Forbidden { .. })), "{read:?}");
    let (_, manager) = fx.user_with("manager@example.com", &["Branch:Read", "Branch:Create"]).await;
    created(fx.engine.create_branch(&manager, NewBranch::new("MGR", "Managed"), None).await.expect("created"));
}

/// Every invoice belongs to a branch: the head office when it names none, the active branch it
/// names otherwise; a replacement that names none keeps it, one that names another moves it and
/// its payments, unless a credit is applied to it (D44, D49).
pub async fn invoices_belong_to_a_branch_and_move_with_their_payments<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Cipla").await;
    let store_b = created(fx.engine.create_branch(&fx.admin, NewBranch::new("AND", "Andheri"), None).await.unwrap());
    let closed = created(fx.engine.create_branch(&fx.admin, NewBranch::new("OLD", "Closed"), None).await.unwrap());
    fx.engine.delete_branch(&fx.admin, closed.id, None).await.unwrap();

    let head = fx.invoice(vendor.id, "H-1", "100", "2024-06-01T00:00:00Z").await;
    assert_eq!((head.branch_id, head.branch_code.as_str()), (HEAD_OFFICE_ID, HEAD_OFFICE_CODE), "the default");
    let named =
        NewInvoice { branch_id: Some(store_b.id), ..fx.new_invoice(vendor.id, "B-1", "50", "2024-06-01T00:00:00Z") };
    let own = created(fx.engine.create_invoice(&fx.admin, named.clone(), None).await.unwrap());
    assert_eq!((own.branch_id, own.branch_code.as_str()), (store_b.id, "AND"));
    for (branch, label) in [(closed.id, "a deleted branch"), (BranchId(999), "no branch")] {
        let input =
            NewInvoice { branch_id: Some(branch), ..fx.new_invoice(vendor.id, "X-1", "5", "2024-06-01T00:00:00Z") };
        field_error(fx.engine.create_invoice(&fx.admin, input, None).await, "branchId", label);
    }

    let payment = fx.pay(own.id, "20").await;
    assert_eq!((payment.invoice.branch_id, payment.invoice.branch_code.as_str()), (store_b.id, "AND"));
    let kept = fx.engine.update_invoice(&fx.admin, own.id, NewInvoice { branch_id: None, ..named.clone() }).await;
    assert_eq!(kept.expect("a replacement naming no branch").branch_id, store_b.id, "the branch is kept");
    let moved = NewInvoice { branch_id: Some(HEAD_OFFICE_ID), ..named.clone() };
    assert_eq!(fx.engine.update_invoice(&fx.admin, own.id, moved).await.unwrap().branch_id, HEAD_OFFICE_ID);
    let paid = fx.engine.get_transaction(&fx.admin, payment.id).await.unwrap();
    assert_eq!(paid.invoice.branch_id, HEAD_OFFICE_ID, "its payments move with it");
    let onto_closed = NewInvoice { branch_id: Some(closed.id), ..named.clone() };
    field_error(fx.engine.update_invoice(&fx.admin, own.id, onto_closed).await, "branchId", "a deleted branch");

    let credit = NewVendorCredit {
        vendor_id: vendor.id,
        branch_id: None,
        credit_number: "CN-1".into(),
        kind: CreditKind::ExpiryReturn,
        claimed_amount: amount("10"),
        claim_date: ts("2024-05-09T00:00:00Z"),
        against_invoice_id: None,
        description: None,
    };
    let credit = created(fx.engine.create_credit(&fx.admin, credit, None).await.unwrap());
    let decision = CreditDecision {
        accepted_amount: dec("10"),
        decision_date: ts("2024-05-09T00:00:00Z"),
        distributor_reference: None,
    };
    fx.engine.decide_credit(&fx.admin, credit.id, decision).await.unwrap();
    let apply = NewCreditApplication {
        amount: Some(amount("10")),
        date: None,
        allocations: Some(vec![RequestedAllocation { invoice_id: head.id, amount: amount("10") }]),
    };
    fx.engine.apply_credit(&fx.admin, credit.id, apply, None).await.unwrap();
    let head_input = fx.new_invoice(vendor.id, "H-1", "100", "2024-06-01T00:00:00Z");
    let refused = NewInvoice { branch_id: Some(store_b.id), ..head_input.clone() };
    field_error(fx.engine.update_invoice(&fx.admin, head.id, refused).await, "branchId", "a credited invoice stays");
    fx.engine.update_invoice(&fx.admin, head.id, head_input).await.expect("a credited invoice keeps its branch");

    // A deleted branch's bills stay visible and payable, and a replacement naming no branch
    // keeps them where they are; only naming the branch again is refused.
    let kept_input = fx.new_invoice(vendor.id, "B-2", "30", "2024-06-01T00:00:00Z");
    let in_store = NewInvoice { branch_id: Some(store_b.id), ..kept_input.clone() };
    let bill = created(fx.engine.create_invoice(&fx.admin, in_store.clone(), None).await.unwrap());
    fx.engine.delete_branch(&fx.admin, store_b.id, None).await.unwrap();
    let read = fx.engine.get_invoice(&fx.admin, bill.id).await.expect("still visible");
    assert_eq!(read.invoice.branch_id, store_b.id);
    fx.pay(bill.id, "5").await;
    let replaced = fx.engine.update_invoice(&fx.admin, bill.id, kept_input).await.expect("kept where it is");
    assert_eq!(replaced.branch_id, store_b.id);
    field_error(fx.engine.update_invoice(&fx.admin, bill.id, in_store).await, "branchId", "naming a deleted branch");
}

/// An invoice file's optional `Branch` column names an active branch by code, ignoring case and
/// surrounding spaces; an empty cell is the default of a create, an unknown or deleted branch a
/// row error on `branch`; a row of another branch than the stored invoice is no match (D45,
/// D49).
pub async fn imported_invoices_name_their_branch<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    fx.vendor("Cipla").await;
    let andheri = created(fx.engine.create_branch(&fx.admin, NewBranch::new("AND", "Andheri"), None).await.unwrap());
    let closed = created(fx.engine.create_branch(&fx.admin, NewBranch::new("OLD", "Closed"), None).await.unwrap());
    fx.engine.delete_branch(&fx.admin, closed.id, None).await.unwrap();
    let file =
        |rows: &str| ImportFile::csv(format!("Invoice Number,Vendor,Amount,Invoice Date,Due Date,Branch\n{rows}"));
    let refused = fx
        .engine
        .import_invoices(
            &fx.admin,
            ImportRequest::new(file("I-1,Cipla,10,2024-05-01,2024-06-01, and \nI-2,Cipla,10,2024-05-01,2024-06-01,OLD\nI-3,Cipla,10,2024-05-01,2024-06-01,NOPE\n")),
        )
        .await;
    match refused {
        Err(Error::Rows(errors)) => {
            let keys: Vec<&str> = errors.errors().iter().map(|(key, _)| key).collect();
            assert_eq!(keys, ["row3.branch", "row4.branch"], "a deleted and an unknown branch");
        }
        other => panic!("expected row errors, got {other:?}"),
    }
    let rows = "I-1,Cipla,10,2024-05-01,2024-06-01, and \nI-2,Cipla,10,2024-05-01,2024-06-01,\n";
    match fx.engine.import_invoices(&fx.admin, ImportRequest::new(file(rows))).await {
        Ok(Created::New(summary)) => assert_eq!((summary.created, summary.unchanged), (2, 0)),
        other => panic!("expected an import, got {other:?}"),
    }
    let listed = fx.engine.list_invoices(&fx.admin, &InvoiceQuery::from_params(&params(&[])).unwrap()).await.unwrap();
    let mut branches: Vec<(String, BranchId)> =
        listed.items.iter().map(|invoice| (invoice.invoice_number.clone(), invoice.branch_id)).collect();
    branches.sort();
    assert_eq!(branches, [("I-1".to_owned(), andheri.id), ("I-2".to_owned(), HEAD_OFFICE_ID)]);
    let again = "I-1,Cipla,10,2024-05-01,2024-06-01,AND\nI-2,Cipla,10,2024-05-01,2024-06-01,HO\n";
    match fx.engine.import_invoices(&fx.admin, ImportRequest::new(file(again))).await {
        Ok(Created::New(summary)) => assert_eq!((summary.created, summary.unchanged), (0, 2), "the same rows"),
        other => panic!("expected an import, got {other:?}"),
    }
    let elsewhere = "I-2,Cipla,10,2024-05-01,2024-06-01,AND\n";
    match fx.engine.import_invoices(&fx.admin, ImportRequest::new(file(elsewhere))).await {
        Err(Error::Rows(errors)) => {
            let keys: Vec<&str> = errors.errors().iter().map(|(key, _)| key).collect();
            assert_eq!(keys, ["row2.invoiceNumber"], "another branch's invoice");
        }
        other => panic!("expected row errors, got {other:?}"),
    }
}

/// A vendor credit belongs to a branch (D49): a create names an active one or goes to the head
/// office; it names an invoice of its own branch only; it is set against its own branch's bills
/// only (spreading takes only those, an allocation to another branch's invoice is refused as a
/// missing one); once applied it keeps its branch; a replacement naming none keeps it.
pub async fn credits_are_set_against_their_own_branch<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Cipla").await;
    let andheri = created(fx.engine.create_branch(&fx.admin, NewBranch::new("AND", "Andheri"), None).await.unwrap());
    let closed = created(fx.engine.create_branch(&fx.admin, NewBranch::new("OLD", "Closed"), None).await.unwrap());
    fx.engine.delete_branch(&fx.admin, closed.id, None).await.unwrap();
    let head_bill = fx.invoice(vendor.id, "H-1", "100", "2024-06-01T00:00:00Z").await;
    let store_input = fx.new_invoice(vendor.id, "A-1", "60", "2024-05-20T00:00:00Z");
    let store_bill = NewInvoice { branch_id: Some(andheri.id), ..store_input };
    let store_bill = created(fx.engine.create_invoice(&fx.admin, store_bill, None).await.unwrap());
    let claim = |number: &str, branch: Option<BranchId>| NewVendorCredit {
        vendor_id: vendor.id,
        branch_id: branch,
        credit_number: number.into(),
        kind: CreditKind::Breakage,
        claimed_amount: amount("50"),
        claim_date: ts("2024-05-09T00:00:00Z"),
        against_invoice_id: None,
        description: None,
    };

    let default = created(fx.engine.create_credit(&fx.admin, claim("CN-H", None), None).await.unwrap());
    assert_eq!((default.branch_id, default.branch_code.as_str()), (HEAD_OFFICE_ID, HEAD_OFFICE_CODE));
    let refused = fx.engine.create_credit(&fx.admin, claim("CN-X", Some(closed.id)), None).await;
    field_error(refused, "branchId", "a deleted branch");
    field_error(fx.engine.create_credit(&fx.admin, claim("CN-X", Some(BranchId(999))), None).await, "branchId", "none");
    let about_other = NewVendorCredit { against_invoice_id: Some(head_bill.id), ..claim("CN-X", Some(andheri.id)) };
    field_error(fx.engine.create_credit(&fx.admin, about_other, None).await, "againstInvoiceId", "another branch's");
    let about_own = NewVendorCredit { against_invoice_id: Some(store_bill.id), ..claim("CN-A", Some(andheri.id)) };
    let credit = created(fx.engine.create_credit(&fx.admin, about_own.clone(), None).await.unwrap());
    assert_eq!((credit.branch_id, credit.branch_code.as_str()), (andheri.id, "AND"));

    let decision = CreditDecision {
        accepted_amount: dec("50"),
        decision_date: ts("2024-05-09T00:00:00Z"),
        distributor_reference: None,
    };
    fx.engine.decide_credit(&fx.admin, credit.id, decision).await.unwrap();
    let to_head = NewCreditApplication {
        amount: Some(amount("10")),
        date: None,
        allocations: Some(vec![RequestedAllocation { invoice_id: head_bill.id, amount: amount("10") }]),
    };
    let named = fx.engine.apply_credit(&fx.admin, credit.id, to_head, None).await;
    field_error(named, "allocations[0].invoiceId", "another branch's invoice is as a missing one");
    let spread = NewCreditApplication { amount: None, date: None, allocations: None };
    let applied = created(fx.engine.apply_credit(&fx.admin, credit.id, spread, None).await.expect("spread"));
    let credited: Vec<_> = applied.applications.iter().map(|a| (a.invoice_id, a.amount.get())).collect();
    assert_eq!(credited, [(store_bill.id, dec("50"))], "only the branch's bill, oldest due first");
    let head_read = fx.engine.get_invoice(&fx.admin, head_bill.id).await.unwrap();
    assert_eq!(head_read.invoice.pending_amount(), dec("100"), "the head office's bill is untouched");

    let moved = NewVendorCredit { branch_id: Some(HEAD_OFFICE_ID), against_invoice_id: None, ..about_own.clone() };
    field_error(fx.engine.update_credit(&fx.admin, credit.id, moved).await, "branchId", "an applied credit stays");
    let kept = NewVendorCredit { branch_id: None, ..about_own };
    let kept = fx.engine.update_credit(&fx.admin, credit.id, kept).await.expect("a replacement naming no branch");
    assert_eq!(kept.branch_id, andheri.id, "the branch is kept");
    let unapplied = NewVendorCredit { branch_id: Some(andheri.id), ..claim("CN-H", None) };
    let moved = fx.engine.update_credit(&fx.admin, default.id, unapplied).await.expect("an unapplied credit moves");
    assert_eq!(moved.branch_id, andheri.id);
}

/// The 403 of a branch outside the caller's scope (D49): what it names.
fn out_of_scope<T: std::fmt::Debug>(result: Result<T, Error>, label: &str) -> String {
    match result {
        Err(Error::Forbidden { required: crate::access::Requirement::Scope(missing) }) => missing.to_string(),
        other => panic!("{label}: expected a 403 naming the branches missing, got {other:?}"),
    }
}

impl<S: Store> Fixture<S> {
    /// A user of `role` holding `branches` (D49), signed in.
    pub(super) async fn user_of_branches(
        &self,
        email: &str,
        role: crate::ids::RoleId,
        branches: &[BranchId],
    ) -> crate::Principal {
        let user = crate::access::user::NewUser {
            branch_ids: Some(crate::branches::Scope::of(branches.iter().copied())),
            ..super::new_user(email, role)
        };
        created(self.engine.create_user(&self.admin, user, None).await.expect("user created"));
        self.sign_in(email, "user-password").await.1
    }
}

/// D49: a store's user sees and writes only their branches' invoices: another branch's answers
/// 404 by id and is left out of the list and its count; a create goes to their only branch and
/// may not name another (403 naming it); a move may not leave their branches; the `branchId`
/// filter narrows within the scope.
pub async fn a_store_user_sees_and_writes_only_their_branches_invoices<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Cipla").await;
    let branch = |code: &'static str| {
        let (engine, admin) = (&fx.engine, &fx.admin);
        async move { created(engine.create_branch(admin, NewBranch::new(code, code), None).await.unwrap()) }
    };
    let (andheri, bandra) = (branch("AND").await, branch("BAN").await);
    let bill = |number: &str, branch: BranchId| NewInvoice {
        branch_id: Some(branch),
        ..fx.new_invoice(vendor.id, number, "100", "2024-06-01T00:00:00Z")
    };
    let create = |input: NewInvoice| {
        let (engine, admin) = (&fx.engine, &fx.admin);
        async move { created(engine.create_invoice(admin, input, None).await.unwrap()) }
    };
    let head = create(bill("H-1", HEAD_OFFICE_ID)).await;
    let own = create(bill("A-1", andheri.id)).await;
    let other = create(bill("B-1", bandra.id)).await;
    let clerks = [
        "Vendor:Read",
        "Invoice:Read",
        "Invoice:Create",
        "Invoice:Update",
        "Invoice:Delete",
        "Branch:Read",
        "Branch:Create",
        "AuditLog:Read",
        "Dashboard:Read",
    ];
    let clerks = fx.role_of("Store clerks", &clerks).await;
    let clerk = fx.user_of_branches("clerk@example.com", clerks, &[andheri.id]).await;

    let listed = |principal: &crate::Principal, pairs: &[(&str, &str)]| {
        let query = InvoiceQuery::from_params(&params(pairs)).expect("a query");
        let (engine, principal) = (&fx.engine, principal.clone());
        async move { engine.list_invoices(&principal, &query).await }
    };
    let page = listed(&clerk, &[]).await.unwrap();
    assert_eq!(page.items.iter().map(|i| i.id).collect::<Vec<_>>(), [own.id], "only the store's invoices");
    assert_eq!(page.total_count, 1, "and only they are counted");
    let named = listed(&clerk, &[("branchId", &bandra.id.get().to_string())]).await;
    assert_eq!(out_of_scope(named, "another branch named"), "the branches BAN");
    field_error(listed(&clerk, &[("branchId", "999")]).await, "branchId", "no branch");
    let no_id = InvoiceQuery::from_params(&params(&[("branchId", "x")]));
    assert!(no_id.is_err_and(|errors| errors.contains("branchId")), "no id");
    let both = [("branchId", andheri.id.get().to_string()), ("branchId", bandra.id.get().to_string())];
    let both: Vec<(&str, &str)> = both.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let chain = listed(&fx.admin, &both).await.unwrap();
    let mut ids: Vec<_> = chain.items.iter().map(|i| i.id).collect();
    ids.sort();
    assert_eq!(ids, [own.id, other.id], "the filter repeats and narrows to the branches named");

    for (id, label) in [(head.id, "the head office's"), (other.id, "another store's")] {
        let read = fx.engine.get_invoice(&clerk, id).await;
        assert!(matches!(read, Err(Error::NotFound { entity: Entity::Invoice })), "{label}: {read:?}");
        let replaced = fx.engine.update_invoice(&clerk, id, bill("X-1", andheri.id)).await;
        assert!(matches!(replaced, Err(Error::NotFound { entity: Entity::Invoice })), "{label}: {replaced:?}");
        let deleted = fx.engine.delete_invoice(&clerk, id, None).await;
        assert!(matches!(deleted, Err(Error::NotFound { entity: Entity::Invoice })), "{label}: {deleted:?}");
    }
    fx.engine.delete_invoice(&fx.admin, head.id, None).await.unwrap();
    let restored = fx.engine.restore_invoice(&clerk, head.id).await;
    assert!(matches!(restored, Err(Error::NotFound { entity: Entity::Invoice })), "{restored:?}");
    assert_eq!(fx.engine.get_invoice(&clerk, own.id).await.unwrap().invoice.id, own.id);

    let input = fx.new_invoice(vendor.id, "A-2", "50", "2024-06-01T00:00:00Z");
    let made = created(fx.engine.create_invoice(&clerk, input, None).await.expect("a create naming no branch"));
    assert_eq!(made.branch_id, andheri.id, "the store's only branch");
    let elsewhere = fx.engine.create_invoice(&clerk, bill("B-2", bandra.id), None).await;
    assert_eq!(out_of_scope(elsewhere, "a create naming another branch"), "the branches BAN");
    let moved = fx.engine.update_invoice(&clerk, own.id, bill("A-1", HEAD_OFFICE_ID)).await;
    assert_eq!(out_of_scope(moved, "a move out"), format!("the branches {HEAD_OFFICE_CODE}"));
    let kept =
        fx.engine.update_invoice(&clerk, own.id, NewInvoice { branch_id: None, ..bill("A-1", andheri.id) }).await;
    assert_eq!(kept.expect("a replacement within the store").branch_id, andheri.id);

    // Branches: the list is the caller's, another branch is missing, writing one needs all.
    let branches = fx.engine.list_branches(&clerk).await.unwrap();
    assert_eq!(branches.iter().map(|b| b.id).collect::<Vec<_>>(), [andheri.id]);
    let hidden = fx.engine.get_branch(&clerk, bandra.id).await;
    assert!(matches!(hidden, Err(Error::NotFound { entity: Entity::Branch })), "{hidden:?}");
    let opened = fx.engine.create_branch(&clerk, NewBranch::new("NEW", "New"), None).await;
    assert_eq!(out_of_scope(opened, "a branch created by a store's user"), "all branches");
    let audit = fx.engine.list_audit(&clerk, &AuditQuery::from_params(&params(&[])).unwrap()).await;
    assert_eq!(out_of_scope(audit, "the audit log is chain-wide"), "all branches");
    // Until figures are kept per branch, the chain's figures are refused to a store's user.
    let summary = fx.engine.dashboard_summary(&clerk).await;
    assert_eq!(out_of_scope(summary, "the dashboard's chain-wide figures"), "all branches");
    let aging = fx.engine.aging(&clerk, &crate::reports::aging::AgingQuery::default()).await;
    assert_eq!(out_of_scope(aging, "the chain's aging"), "all branches");

    // An import by the store's user: rows naming no branch are the store's, another branch's
    // code is a row error, another branch's invoice number is named, never matched.
    let file =
        |rows: &str| ImportFile::csv(format!("Invoice Number,Vendor,Amount,Invoice Date,Due Date,Branch\n{rows}"));
    let refused = fx
        .engine
        .import_invoices(
            &clerk,
            ImportRequest::new(file("I-1,Cipla,10,2024-05-01,2024-06-01,BAN\nB-1,Cipla,100,2024-05-01,2024-06-01,\n")),
        )
        .await;
    match refused {
        Err(Error::Rows(errors)) => {
            let keys: Vec<&str> = errors.errors().iter().map(|(key, _)| key).collect();
            assert_eq!(keys, ["row2.branch", "row3.invoiceNumber"], "another branch named, another branch's number");
        }
        other => panic!("expected row errors, got {other:?}"),
    }
    match fx.engine.import_invoices(&clerk, ImportRequest::new(file("I-2,Cipla,10,2024-05-01,2024-06-01,\n"))).await {
        Ok(Created::New(summary)) => assert_eq!(summary.created, 1),
        other => panic!("expected an import, got {other:?}"),
    }
    let imported = listed(&fx.admin, &[("invoiceNumber", "I-2")]).await.unwrap();
    assert_eq!(imported.items[0].branch_id, andheri.id, "the store's only branch");

    let roaming = fx.user_of_branches("roaming@example.com", clerks, &[andheri.id, bandra.id]).await;
    let unnamed =
        fx.engine.create_invoice(&roaming, fx.new_invoice(vendor.id, "R-1", "5", "2024-06-01T00:00:00Z"), None).await;
    field_error(unnamed, "branchId", "a caller of several branches names one");
}

/// D49: a payment is of its invoice's branch; a store's user lists, reads and changes only
/// their branches' payments, records none on another branch's invoice (as on a missing one),
/// and a vendor payment of theirs spreads over their bills only.
pub async fn a_store_user_sees_and_records_only_their_branches_payments<S: Store>(store: S) {
    use crate::transactions::{NewTransaction, TransactionQuery};
    use crate::vendor_payments::NewVendorPayment;

    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Cipla").await;
    let andheri = created(fx.engine.create_branch(&fx.admin, NewBranch::new("AND", "Andheri"), None).await.unwrap());
    // The head office's bill falls due first, so a split over every branch would start there.
    let head = fx.invoice(vendor.id, "H-1", "100", "2024-05-01T00:00:00Z").await;
    let input =
        NewInvoice { branch_id: Some(andheri.id), ..fx.new_invoice(vendor.id, "A-1", "100", "2024-06-01T00:00:00Z") };
    let own = created(fx.engine.create_invoice(&fx.admin, input, None).await.unwrap());
    let pay = |invoice, amount: &str| NewTransaction { ..fx.new_payment(invoice, amount) };
    let head_paid = created(fx.engine.create_transaction(&fx.admin, pay(head.id, "10"), None).await.unwrap());
    let own_paid = created(fx.engine.create_transaction(&fx.admin, pay(own.id, "10"), None).await.unwrap());
    let codes = [
        "Vendor:Read",
        "Invoice:Read",
        "Transaction:Read",
        "Transaction:Create",
        "Transaction:Update",
        "Transaction:Delete",
    ];
    let cashiers = fx.role_of("Store cashiers", &codes).await;
    let cashier = fx.user_of_branches("cashier@example.com", cashiers, &[andheri.id]).await;

    let query = TransactionQuery::from_params(&params(&[])).unwrap();
    let page = fx.engine.list_transactions(&cashier, &query).await.unwrap();
    assert_eq!(page.items.iter().map(|t| t.id).collect::<Vec<_>>(), [own_paid.id]);
    assert_eq!(page.total_count, 1);
    let read = fx.engine.get_transaction(&cashier, head_paid.id).await;
    assert!(matches!(read, Err(Error::NotFound { entity: Entity::Transaction })), "{read:?}");
    let on_head = fx.engine.create_transaction(&cashier, pay(head.id, "1"), None).await;
    field_error(on_head, "invoiceId", "another branch's invoice is as a missing one");
    let replaced = fx.engine.update_transaction(&cashier, head_paid.id, pay(own.id, "1")).await;
    assert!(matches!(replaced, Err(Error::NotFound { entity: Entity::Transaction })), "{replaced:?}");
    let moved = fx.engine.update_transaction(&cashier, own_paid.id, pay(head.id, "10")).await;
    field_error(moved, "invoiceId", "a move to another branch's invoice");
    let deleted = fx.engine.delete_transaction(&cashier, head_paid.id, None).await;
    assert!(matches!(deleted, Err(Error::NotFound { entity: Entity::Transaction })), "{deleted:?}");
    fx.engine.delete_transaction(&fx.admin, head_paid.id, None).await.unwrap();
    let restored = fx.engine.restore_transaction(&cashier, head_paid.id).await;
    assert!(matches!(restored, Err(Error::NotFound { entity: Entity::Transaction })), "{restored:?}");
    fx.engine.restore_transaction(&fx.admin, head_paid.id).await.unwrap();
    let read_head = fx.engine.get_invoice(&fx.admin, head.id).await.unwrap();
    assert_eq!(read_head.invoice.pending_amount(), dec("90"), "nothing of the head office's bill changed");

    let lump = NewVendorPayment {
        amount: amount("20"),
        transaction_date: fx.clock_now(),
        transaction_type: crate::transactions::TransactionType::NetBanking,
        reference: None,
        description: None,
        allocations: None,
        branch_id: None,
    };
    let paid = created(fx.engine.create_vendor_payment(&cashier, vendor.id, lump.clone(), None).await.unwrap());
    let split: Vec<_> = paid.transactions.iter().map(|t| (t.invoice_id, t.amount)).collect();
    assert_eq!(split, [(own.id, amount("20"))], "the store's bill only, though the head office's is older");
    let named = NewVendorPayment {
        allocations: Some(vec![RequestedAllocation { invoice_id: head.id, amount: amount("20") }]),
        ..lump.clone()
    };
    field_error(
        fx.engine.create_vendor_payment(&cashier, vendor.id, named, None).await,
        "allocations[0].invoiceId",
        "another branch's",
    );
    // A vendor payment reaching another branch's bill is missing to the store's user.
    let spanning = NewVendorPayment {
        allocations: Some(vec![
            RequestedAllocation { invoice_id: head.id, amount: amount("5") },
            RequestedAllocation { invoice_id: own.id, amount: amount("5") },
        ]),
        amount: amount("10"),
        ..lump.clone()
    };
    let spanning = created(fx.engine.create_vendor_payment(&fx.admin, vendor.id, spanning, None).await.unwrap());
    let read = fx.engine.get_vendor_payment(&cashier, spanning.id).await;
    assert!(matches!(read, Err(Error::NotFound { entity: Entity::VendorPayment })), "{read:?}");
    let deleted = fx.engine.delete_vendor_payment(&cashier, spanning.id, None).await;
    assert!(matches!(deleted, Err(Error::NotFound { entity: Entity::VendorPayment })), "{deleted:?}");
    assert!(fx.engine.get_vendor_payment(&cashier, paid.id).await.is_ok(), "their own");
    let elsewhere = NewVendorPayment { branch_id: Some(HEAD_OFFICE_ID), ..lump };
    let refused = fx.engine.create_vendor_payment(&cashier, vendor.id, elsewhere, None).await;
    assert_eq!(
        out_of_scope(refused, "a vendor payment naming another branch"),
        format!("the branches {HEAD_OFFICE_CODE}")
    );
}

/// D49: a store's user sees and changes only their branches' vendor credits: another branch's
/// answers 404 by id (read, replace, decide, apply, delete, restore) and is left out of the list.
pub async fn a_store_user_sees_and_changes_only_their_branches_credits<S: Store>(store: S) {
    use crate::credits::CreditQuery;

    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Cipla").await;
    let andheri = created(fx.engine.create_branch(&fx.admin, NewBranch::new("AND", "Andheri"), None).await.unwrap());
    let claim = |number: &str, branch: Option<BranchId>| NewVendorCredit {
        vendor_id: vendor.id,
        branch_id: branch,
        credit_number: number.into(),
        kind: CreditKind::Breakage,
        claimed_amount: amount("50"),
        claim_date: ts("2024-05-09T00:00:00Z"),
        against_invoice_id: None,
        description: None,
    };
    let head = created(fx.engine.create_credit(&fx.admin, claim("CN-H", None), None).await.unwrap());
    let own = created(fx.engine.create_credit(&fx.admin, claim("CN-A", Some(andheri.id)), None).await.unwrap());
    let codes =
        ["Vendor:Read", "VendorCredit:Read", "VendorCredit:Create", "VendorCredit:Update", "VendorCredit:Delete"];
    let role = fx.role_of("Store returns", &codes).await;
    let clerk = fx.user_of_branches("returns@example.com", role, &[andheri.id]).await;

    let page = fx.engine.list_credits(&clerk, &CreditQuery::from_params(&params(&[])).unwrap()).await.unwrap();
    assert_eq!((page.items.iter().map(|c| c.id).collect::<Vec<_>>(), page.total_count), (vec![own.id], 1));
    let missing = |result: Result<_, Error>, label: &str| {
        assert!(matches!(result, Err(Error::NotFound { entity: Entity::VendorCredit })), "{label}: {result:?}");
    };
    missing(fx.engine.get_credit(&clerk, head.id).await.map(drop), "read");
    missing(fx.engine.update_credit(&clerk, head.id, claim("CN-H", None)).await.map(drop), "replace");
    let decision = CreditDecision {
        accepted_amount: dec("50"),
        decision_date: ts("2024-05-09T00:00:00Z"),
        distributor_reference: None,
    };
    missing(fx.engine.decide_credit(&clerk, head.id, decision.clone()).await.map(drop), "decide");
    fx.engine.decide_credit(&fx.admin, head.id, decision).await.unwrap();
    let spread = NewCreditApplication { amount: None, date: None, allocations: None };
    missing(fx.engine.apply_credit(&clerk, head.id, spread, None).await.map(drop), "apply");
    missing(fx.engine.delete_credit(&clerk, head.id, None).await, "delete");
    fx.engine.delete_credit(&fx.admin, head.id, None).await.unwrap();
    missing(fx.engine.restore_credit(&clerk, head.id).await.map(drop), "restore");
    let own_claim = created(fx.engine.create_credit(&clerk, claim("CN-A2", None), None).await.unwrap());
    assert_eq!(own_claim.branch_id, andheri.id, "the store's only branch");
}
