//! Bank statements (D46): lines matched by reference, then by amount and date; duplicates of
//! overlapping downloads; every line action; uncleared payments; a payment held by one line
//! however uploads race; bad files refused whole.

use std::sync::Arc;

use super::params;
use crate::bank::StatementUpload;
use crate::bank::read::ReadOptions;
use crate::bank::{
    BankLine, BankStatement, LineQuery, LineRecording, LineStatus, MatchRequest, MatchedBy, StatementDetail,
    StatementQuery, UnclearedPayment,
};
use crate::conformance::{Fixture, amount, created, ts};
use crate::error::{Entity, Error, RuleBroken};
use crate::idempotency::{Created, IdempotencyKey, IdempotencyRequest, Replay};
use crate::ids::{BankStatementId, InvoiceId, TransactionId, VendorId, VendorPaymentId};
use crate::imports::ImportFile;
use crate::paging::PageRequest;
use crate::reports::audit::AuditQuery;
use crate::store::{Store, UniqueKey};
use crate::transactions::holders::Holder;
use crate::transactions::reference::PaymentReference;
use crate::transactions::{NewTransaction, TransactionType};
use crate::vendor_payments::NewVendorPayment;
use rust_decimal::Decimal;

/// An HDFC-shaped download: two preamble rows, the header, seven transactions (one a deposit)
/// and a footer.
const HDFC_MAY: &str = "Account No: XXXXXXXX1234,,,,,,\n\
    Statement From 01/05/2024 To 09/05/2024,,,,,,\n\
    Date,Narration,Chq./Ref.No.,Value Dt,Withdrawal Amt.,Deposit Amt.,Closing Balance\n\
    05/05/24,UPI-VENDOR-v@okhdfcbank-HDFC0000123-412345678901-INV,0000412345678901,05/05/24,\"2,500.00\",,97500.00\n\
    06/05/24,NEFT DR-ACME,,06/05/24,1200.00,,96300.00\n\
    07/05/24,UPI-X-UTR999888777666-PAY,,07/05/24,1000.00,,95300.00\n\
    08/05/24,NEFT-N123456789012345-WHOLESALE,,08/05/24,3000.00,,92300.00\n\
    08/05/24,SALARY APRIL,,08/05/24,15000.00,,77300.00\n\
    08/05/24,CASH DEP,,08/05/24,,5000.00,82300.00\n\
    06/05/24,ATM,,06/05/24,700,,81600.00\n\
    ** End of statement **,,,,,,\n";

impl<S: Store> Fixture<S> {
    async fn upload(&self, account: &str, text: &str) -> Result<BankStatement, Error> {
        let upload = StatementUpload {
            account: Some(account.to_owned()),
            branch_id: None,
            file: ImportFile::csv(text),
            options: ReadOptions::default(),
            idempotency: None,
        };
        self.engine.upload_statement(&self.admin, upload).await.map(created)
    }

    async fn lines_of(&self, statement: BankStatementId, status: Option<&str>) -> Vec<BankLine> {
        let pairs: Vec<(&str, &str)> = status.map(|status| vec![("status", status)]).unwrap_or_default();
        let query = LineQuery::from_params(&params(&pairs)).expect("a line query");
        self.engine.list_lines(&self.admin, statement, &query).await.expect("lines listed").items
    }

    async fn detail(&self, statement: BankStatementId) -> StatementDetail {
        self.engine.get_statement(&self.admin, statement).await.expect("the statement")
    }

    /// Every uncleared payment of the statement's range, read a page of 2 at a time (D51),
    /// checked against the count and sum the statement shows.
    async fn uncleared(&self, statement: BankStatementId) -> Vec<UnclearedPayment> {
        let mut found = Vec::new();
        for page in 1.. {
            let request = PageRequest::new(page, 2);
            let listed = self.engine.list_uncleared_payments(&self.admin, statement, request).await.expect("listed");
            let done = listed.items.len() < 2;
            found.extend(listed.items);
            if done {
                let totals = self.detail(statement).await.uncleared;
                assert_eq!(totals.count, found.len() as u64, "the count is the list's length");
                assert_eq!(totals.count, listed.total_count, "and the page's total");
                let sum: Decimal = found.iter().map(|payment| payment.amount.get()).sum();
                assert_eq!(totals.amount, sum, "the amount is the list's sum");
                break;
            }
        }
        found
    }

    /// A NetBanking vendor payment of 3,000 on 8 May 2024, the one HDFC_MAY's fourth line names.
    async fn bulk_payment(&self, vendor: VendorId) -> VendorPaymentId {
        let payment = NewVendorPayment {
            amount: amount("3000"),
            transaction_date: ts("2024-05-08T09:00:00Z"),
            transaction_type: TransactionType::NetBanking,
            reference: Some(PaymentReference::parse("N1234-5678-9012345").expect("a reference")),
            description: None,
            allocations: None,
            branch_id: None,
        };
        created(self.engine.create_vendor_payment(&self.admin, vendor, payment, None).await.expect("paid")).id
    }

    async fn paid_on(
        &self,
        invoice: InvoiceId,
        paid: &str,
        at: &str,
        kind: TransactionType,
        reference: Option<&str>,
    ) -> TransactionId {
        let payment = NewTransaction {
            transaction_date: ts(at),
            transaction_type: kind,
            reference: reference.map(|text| PaymentReference::parse(text).expect("a reference")),
            ..self.new_payment(invoice, paid)
        };
        created(self.engine.create_transaction(&self.admin, payment, None).await.expect("paid")).id
    }
}

fn counts(statement: &BankStatement) -> [u32; 5] {
    let counts = statement.counts;
    [counts.matched, counts.amount_differs, counts.suggested, counts.unmatched, counts.ignored]
}

fn outcome(lines: &[BankLine]) -> Vec<(u32, LineStatus, Option<MatchedBy>, Option<Holder>)> {
    lines.iter().map(|line| (line.line_number, line.status, line.matched_by, line.payment)).collect()
}

fn single(id: TransactionId) -> Option<Holder> {
    Some(Holder::Payment(id))
}

/// D46: an upload keeps money out, skips rows without a date, matches by reference (the
/// reference cell and the narration's runs), suggests the one payment of the amount within three
/// days, and lists the payments of its range no line holds; every line action keeps the
/// statement's counts; duplicates of another active statement of the account are not kept; a
/// delete frees the matches.
pub async fn statements_match_lines_and_every_action_keeps_the_counts<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Shree Medicals").await;
    let first = fx.invoice(vendor.id, "SM-1", "20000", "2024-06-30T00:00:00Z").await;
    let second = fx.invoice(vendor.id, "SM-2", "9000", "2024-06-30T00:00:00Z").await;
    let upi = fx.paid_on(first.id, "2500", "2024-05-05T09:00:00Z", TransactionType::Upi, Some("412345678901")).await;
    let neft = fx.paid_on(second.id, "1200", "2024-05-06T09:00:00Z", TransactionType::NetBanking, None).await;
    let cash = fx.paid_on(second.id, "700", "2024-05-06T09:00:00Z", TransactionType::Cash, None).await;
    let short =
        fx.paid_on(first.id, "999", "2024-05-07T09:00:00Z", TransactionType::Upi, Some("UTR 999888777666")).await;
    let unseen = fx.paid_on(second.id, "450", "2024-05-04T09:00:00Z", TransactionType::Upi, Some("UNSEEN-1")).await;
    let _older = fx.paid_on(second.id, "45", "2024-05-01T09:00:00Z", TransactionType::Upi, None).await;
    let bulk = fx.bulk_payment(vendor.id).await;

    let may = fx.upload("HDFC 1234", HDFC_MAY).await.expect("uploaded");
    assert_eq!(may.account, "HDFC 1234");
    assert_eq!(
        (may.from_date.map(|d| d.to_string()), may.to_date.map(|d| d.to_string())),
        (Some("2024-05-05".to_owned()), Some("2024-05-08".to_owned()))
    );
    assert_eq!(counts(&may), [2, 1, 1, 2, 0], "matched, amountDiffers, suggested, unmatched, ignored");
    assert_eq!((may.counts.total(), may.duplicate_lines, may.deposit_lines, may.skipped_rows), (6, 0, 1, 1));
    let lines = fx.lines_of(may.id, None).await;
    assert_eq!(
        outcome(&lines),
        [
            (1, LineStatus::Matched, Some(MatchedBy::Reference), single(upi)),
            (2, LineStatus::Suggested, Some(MatchedBy::AmountAndDate), single(neft)),
            (3, LineStatus::AmountDiffers, Some(MatchedBy::Reference), single(short)),
            (4, LineStatus::Matched, Some(MatchedBy::Reference), Some(Holder::VendorPayment(bulk))),
            (5, LineStatus::Unmatched, None, None),
            (6, LineStatus::Unmatched, None, None),
        ]
    );
    assert_eq!(lines[0].reference.as_deref(), Some("0000412345678901"));
    assert_eq!(lines[5].amount, amount("700"));
    assert_eq!(lines[5].date.to_string(), "2024-05-06");
    let unmatched = fx.lines_of(may.id, Some("unmatched")).await;
    assert_eq!(unmatched.iter().map(|line| line.line_number).collect::<Vec<_>>(), [5, 6]);
    // Payments from three days before the first line to the last that no line holds: cash is
    // never expected at the bank, and the payment of 1 May is before the range.
    let uncleared = fx.uncleared(may.id).await;
    assert_eq!(uncleared.iter().map(|payment| payment.payment).collect::<Vec<_>>(), [Holder::Payment(unseen)]);
    assert_eq!(uncleared[0].reference.as_deref(), Some("UNSEEN-1"));
    let _ = cash;

    // The actions.
    let at = |n: usize| lines[n - 1].id;
    let confirmed = fx.engine.confirm_line(&fx.admin, may.id, at(2)).await.expect("confirmed");
    assert_eq!(
        (confirmed.status, confirmed.matched_by, confirmed.payment),
        (LineStatus::Matched, Some(MatchedBy::AmountAndDate), single(neft))
    );
    let refused = fx.engine.confirm_line(&fx.admin, may.id, at(1)).await;
    assert!(matches!(refused, Err(Error::Rule(RuleBroken::LineNotSuggested))), "{refused:?}");
    let ignored = fx.engine.ignore_line(&fx.admin, may.id, at(5), Some("salary".into())).await.expect("ignored");
    assert_eq!((ignored.status, ignored.payment), (LineStatus::Ignored, None));
    let freed = fx.engine.unmatch_line(&fx.admin, may.id, at(3)).await.expect("unmatched");
    assert_eq!((freed.status, freed.matched_by, freed.payment), (LineStatus::Unmatched, None, None));
    let uncleared: Vec<Holder> = fx.uncleared(may.id).await.iter().map(|payment| payment.payment).collect();
    assert_eq!(uncleared, [Holder::Payment(unseen), Holder::Payment(short)]);
    let by_hand = MatchRequest { transaction_id: Some(short), vendor_payment_id: None };
    let matched = fx.engine.match_line(&fx.admin, may.id, at(3), by_hand).await.expect("matched by hand");
    assert_eq!(
        (matched.status, matched.matched_by, matched.payment),
        (LineStatus::AmountDiffers, Some(MatchedBy::Hand), single(short))
    );
    // A payment another line holds, whether named itself or through a part of its vendor payment.
    let taken = fx
        .engine
        .match_line(&fx.admin, may.id, at(6), MatchRequest { transaction_id: Some(upi), vendor_payment_id: None })
        .await;
    assert!(
        matches!(taken, Err(Error::Conflict(UniqueKey::BankMatch { line, vendor_payment: false })) if line == at(1)),
        "{taken:?}"
    );
    let part = fx.engine.get_vendor_payment(&fx.admin, bulk).await.expect("the vendor payment").transactions[0].id;
    let taken = fx
        .engine
        .match_line(&fx.admin, may.id, at(6), MatchRequest { transaction_id: Some(part), vendor_payment_id: None })
        .await;
    assert!(matches!(taken, Err(Error::Conflict(UniqueKey::BankMatch { vendor_payment: true, .. }))), "{taken:?}");
    let neither = fx.engine.match_line(&fx.admin, may.id, at(6), MatchRequest::default()).await;
    assert!(matches!(neither, Err(Error::Validation(_))), "{neither:?}");
    let missing = fx
        .engine
        .match_line(
            &fx.admin,
            may.id,
            at(6),
            MatchRequest { transaction_id: Some(TransactionId(999_999)), vendor_payment_id: None },
        )
        .await;
    assert!(matches!(missing, Err(Error::NotFound { entity: Entity::Transaction })), "{missing:?}");

    // Recording the ATM line as a vendor payment: its day, amount and type, then it holds it.
    let recording = LineRecording { vendor_id: vendor.id, allocations: None, transaction_type: None };
    let recorded =
        created(fx.engine.record_line(&fx.admin, may.id, at(6), recording.clone(), None).await.expect("recorded"));
    assert_eq!((recorded.status, recorded.matched_by), (LineStatus::Matched, Some(MatchedBy::Hand)));
    let Some(Holder::VendorPayment(made)) = recorded.payment else { panic!("a vendor payment, got {recorded:?}") };
    let made = fx.engine.get_vendor_payment(&fx.admin, made).await.expect("recorded payment");
    assert_eq!(
        (made.amount, made.transaction_type, made.reference.clone()),
        (amount("700"), TransactionType::NetBanking, None)
    );
    assert_eq!(made.transaction_date, ts("2024-05-06T00:00:00Z"));
    let again = fx.engine.record_line(&fx.admin, may.id, at(6), recording.clone(), None).await;
    assert!(matches!(again, Err(Error::Rule(RuleBroken::LineHoldsPayment))), "{again:?}");
    let nobody = LineRecording { vendor_id: VendorId(999_999), ..recording.clone() };
    let nobody = fx.engine.record_line(&fx.admin, may.id, at(5), nobody, None).await;
    assert!(matches!(nobody, Err(Error::NotFound { entity: Entity::Vendor })), "{nobody:?}");
    assert_eq!(fx.lines_of(may.id, Some("Ignored")).await.len(), 1, "a refused record leaves the line as it was");

    let kept = fx.detail(may.id).await.statement;
    assert_eq!(counts(&kept), [4, 1, 0, 0, 1]);
    let recount: [u32; 5] = {
        let all = fx.lines_of(may.id, None).await;
        LineStatus::ALL.map(|status| all.iter().filter(|line| line.status == status).count() as u32)
    };
    assert_eq!(counts(&kept), recount, "the kept counts are a recount of the lines");
    let audit = AuditQuery::from_params(&params(&[("entity", "BankLine"), ("entityId", &at(5).get().to_string())]))
        .expect("a query");
    let entries = fx.engine.list_audit(&fx.admin, &audit).await.expect("audit").items;
    assert!(
        entries.iter().any(|entry| entry.action == "ignore" && entry.reason.as_deref() == Some("salary")),
        "{entries:?}"
    );

    // An overlapping download of the same account: nothing new. Another account's: no payment
    // left to match.
    let again = fx.upload("HDFC 1234", HDFC_MAY).await.expect("uploaded again");
    assert_eq!((again.counts.total(), again.duplicate_lines, again.from_date), (0, 6, None));
    assert!(fx.uncleared(again.id).await.is_empty());
    let other = fx.upload("SBI 9876", HDFC_MAY).await.expect("another account");
    assert_eq!(counts(&other), [0, 0, 0, 6, 0]);

    // A line action names a line of its own statement.
    let foreign = fx.lines_of(other.id, None).await[0].id;
    let wrong = fx.engine.confirm_line(&fx.admin, may.id, foreign).await;
    assert!(matches!(wrong, Err(Error::NotFound { entity: Entity::BankLine })), "{wrong:?}");

    // Deleting the first statement frees its payments: the same file matches them again.
    fx.engine.delete_statement(&fx.admin, may.id, Some("wrong month".into())).await.expect("deleted");
    let gone = fx.engine.get_statement(&fx.admin, may.id).await;
    assert!(matches!(gone, Err(Error::NotFound { entity: Entity::BankStatement })), "{gone:?}");
    let gone = fx.engine.confirm_line(&fx.admin, may.id, at(1)).await;
    assert!(matches!(gone, Err(Error::NotFound { entity: Entity::BankStatement })), "{gone:?}");
    let redone = fx.upload("HDFC 1234", HDFC_MAY).await.expect("uploaded after the delete");
    assert_eq!(counts(&redone), [2, 1, 2, 1, 0], "the recorded 700 is now suggested: {redone:?}");
    let listed = fx
        .engine
        .list_statements(&fx.admin, &StatementQuery::from_params(&params(&[])).expect("a query"))
        .await
        .expect("listed");
    assert_eq!(listed.items.iter().map(|statement| statement.id).collect::<Vec<_>>(), [redone.id, other.id, again.id]);
    assert_eq!(listed.total_count, 3);
}

/// D46: two uploads at once that could claim the same payments: each payment ends held by
/// exactly one line.
pub async fn concurrent_uploads_match_a_payment_once<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let vendor = fx.vendor("Racing Pharma").await;
    let invoice = fx.invoice(vendor.id, "RP-1", "100000", "2024-06-30T00:00:00Z").await;
    let mut text = String::from("Txn Date,Description,Ref No./Cheque No.,Debit,Credit,Balance\n");
    for n in 0..8 {
        let reference = format!("71234567890{n}");
        fx.paid_on(invoice.id, "100", "2024-05-06T09:00:00Z", TransactionType::Upi, Some(&reference)).await;
        text.push_str(&format!("6 May 2024,UPI/{reference}/RACING,-,100.00,,\n"));
    }
    for round in 0..3 {
        let (a, b) = (Arc::clone(&fx), Arc::clone(&fx));
        let (text_a, text_b) = (text.clone(), text.clone());
        let first = tokio::spawn(async move { a.upload(&format!("A{round}"), &text_a).await });
        let second = tokio::spawn(async move { b.upload(&format!("B{round}"), &text_b).await });
        let first = first.await.expect("joined").expect("uploaded");
        let second = second.await.expect("joined").expect("uploaded");
        if round == 0 {
            assert_eq!(
                first.counts.matched + second.counts.matched,
                8,
                "each payment matched once: {first:?} {second:?}"
            );
        } else {
            assert_eq!(first.counts.matched + second.counts.matched, 0, "held payments stay held");
        }
        assert_eq!(first.counts.total() + second.counts.total(), 16);
    }
}

/// D46: a file without a date or debit column, an amount that is no amount, a missing account
/// and an unreadable file are refused and write nothing; bank statements are the admins' by
/// default, and recording from a line also needs `Transaction:Create`.
pub async fn bad_statements_are_refused_and_statements_are_for_admins<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let refused = fx.upload("A", "Date,Narration,Balance\n05/05/2024,X,100\n").await;
    assert!(matches!(&refused, Err(Error::Validation(errors)) if errors.contains("file")), "{refused:?}");
    let rows = fx.upload("A", "Date,Narration,Debit\n05/05/2024,X,abc\n06/05/2024,Y,10\n07/05/2024,Z,1.23456\n").await;
    match rows {
        Err(Error::Rows(errors)) => {
            let keys: Vec<&str> = errors.errors().iter().map(|(key, _)| key).collect();
            assert_eq!(keys, ["row2.amount", "row4.amount"]);
        }
        other => panic!("expected row errors, got {other:?}"),
    }
    let blank = fx.upload("  ", "Date,Debit\n05/05/2024,10\n").await;
    assert!(matches!(&blank, Err(Error::Validation(errors)) if errors.contains("account")), "{blank:?}");
    let upload = StatementUpload {
        account: Some("A".into()),
        branch_id: None,
        file: ImportFile::xlsx(b"PK\x03\x04 not a workbook".to_vec()),
        options: ReadOptions::default(),
        idempotency: None,
    };
    let broken = fx.engine.upload_statement(&fx.admin, upload).await;
    assert!(matches!(&broken, Err(Error::Validation(errors)) if errors.contains("file")), "{broken:?}");
    let none = fx.engine.list_statements(&fx.admin, &StatementQuery::from_params(&params(&[])).expect("a query")).await;
    assert_eq!(none.expect("listed").total_count, 0, "nothing was written");

    // Named columns and another date order.
    let named = "When,What,Paid Out\n04/30/2024,RENT,15000\n";
    let upload = StatementUpload {
        account: Some("A".into()),
        branch_id: None,
        file: ImportFile::csv(named),
        options: ReadOptions {
            date_column: Some("when".into()),
            debit_column: Some("paid out".into()),
            narration_column: Some("What".into()),
            date_order: crate::bank::read::DateOrder::Mdy,
            ..ReadOptions::default()
        },
        idempotency: None,
    };
    let statement = created(fx.engine.upload_statement(&fx.admin, upload).await.expect("read with named columns"));
    assert_eq!(statement.from_date.map(|day| day.to_string()).as_deref(), Some("2024-04-30"));
    let line = &fx.lines_of(statement.id, None).await[0];
    assert_eq!((line.narration.as_deref(), line.amount), (Some("RENT"), amount("15000")));

    // A pharmacist (the seeded policy) holds no bank statement permission.
    let (_, pharmacist) = fx.pharmacist("pharmacist@example.com").await;
    let query = StatementQuery::from_params(&params(&[])).expect("a query");
    let forbidden = fx.engine.list_statements(&pharmacist, &query).await;
    assert!(matches!(forbidden, Err(Error::Forbidden { .. })), "{forbidden:?}");
    let upload = StatementUpload {
        account: Some("A".into()),
        branch_id: None,
        file: ImportFile::csv(named),
        options: ReadOptions::default(),
        idempotency: None,
    };
    assert!(matches!(fx.engine.upload_statement(&pharmacist, upload).await, Err(Error::Forbidden { .. })));
    let recording = LineRecording { vendor_id: VendorId(1), allocations: None, transaction_type: None };
    let forbidden = fx.engine.record_line(&pharmacist, statement.id, line.id, recording, None).await;
    assert!(matches!(forbidden, Err(Error::Forbidden { .. })), "{forbidden:?}");
}

/// D51 amending D46: a statement shows how many payments no line holds to `BankStatement:Read`
/// alone, while the payments, a line's payment and `match` and `record` also need
/// `Transaction:Read`; `record` takes an idempotency key; deleting a payment a line holds sets
/// the line back to `Unmatched` with the statement's counts and announces the statement, and
/// restoring the payment does not match it again.
pub async fn statements_show_payments_to_their_readers_and_deletes_free_lines<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Shree Medicals").await;
    let invoice = fx.invoice(vendor.id, "SM-1", "20000", "2024-06-30T00:00:00Z").await;
    let upi = fx.paid_on(invoice.id, "2500", "2024-05-05T09:00:00Z", TransactionType::Upi, Some("412345678901")).await;
    fx.paid_on(invoice.id, "450", "2024-05-04T09:00:00Z", TransactionType::Upi, Some("UNSEEN-1")).await;
    let bulk = fx.bulk_payment(vendor.id).await;
    let may = fx.upload("HDFC 1234", HDFC_MAY).await.expect("uploaded");
    let lines = fx.lines_of(may.id, None).await;
    let at = |n: usize| lines[n - 1].id;
    assert_eq!((lines[0].payment, lines[3].payment), (single(upi), Some(Holder::VendorPayment(bulk))));

    // Without Transaction:Read: the count and the sum, but no payment.
    let (_, clerk) =
        fx.user_with("clerk@example.com", &["BankStatement:Read", "BankStatement:Update", "Transaction:Create"]).await;
    let detail = fx.engine.get_statement(&clerk, may.id).await.expect("the statement");
    assert_eq!((detail.uncleared.count, detail.uncleared.amount), (1, Decimal::from(450)));
    let needs_payments = |result: Result<(), Error>, label: &str| match result {
        Err(Error::Forbidden { required }) => assert_eq!(required.to_string(), "Transaction:Read", "{label}"),
        other => panic!("{label}: expected 403, got {other:?}"),
    };
    let page = PageRequest::new(1, 50);
    needs_payments(fx.engine.list_uncleared_payments(&clerk, may.id, page).await.map(drop), "uncleared payments");
    let query = LineQuery::from_params(&params(&[])).expect("a line query");
    let seen = fx.engine.list_lines(&clerk, may.id, &query).await.expect("lines listed").items;
    assert!(seen.iter().all(|line| line.payment.is_none()), "{seen:?}");
    assert_eq!(seen[0].status, LineStatus::Matched, "the status is still shown");
    let by_hand = MatchRequest { transaction_id: Some(upi), vendor_payment_id: None };
    needs_payments(fx.engine.match_line(&clerk, may.id, at(6), by_hand).await.map(drop), "match");
    let recording = LineRecording { vendor_id: vendor.id, allocations: None, transaction_type: None };
    needs_payments(fx.engine.record_line(&clerk, may.id, at(6), recording.clone(), None).await.map(drop), "record");
    let ignored = fx.engine.ignore_line(&clerk, may.id, at(5), None).await.expect("an action without payments");
    assert_eq!((ignored.status, ignored.payment), (LineStatus::Ignored, None));
    let confirmed = fx.engine.confirm_line(&clerk, may.id, at(2)).await;
    assert!(matches!(confirmed, Err(Error::Rule(RuleBroken::LineNotSuggested))), "{confirmed:?}");

    // `record` with a key: a retry answers the line as it stands, recording nothing again.
    let key = IdempotencyRequest { key: IdempotencyKey::parse("record-6").expect("a key"), fingerprint: "6".into() };
    let paid = async || fx.engine.get_vendor(&fx.admin, vendor.id).await.expect("the vendor").totals.total_paid_amount;
    let paid_before = paid().await;
    let recorded = fx.engine.record_line(&fx.admin, may.id, at(6), recording.clone(), Some(&key)).await;
    let recorded = created(recorded.expect("recorded"));
    let replayed = fx.engine.record_line(&fx.admin, may.id, at(6), recording.clone(), Some(&key)).await;
    match replayed {
        Ok(Created::Replayed(Replay::Current(line))) => assert_eq!(line, recorded),
        other => panic!("expected the line replayed, got {other:?}"),
    }
    assert_eq!(paid().await - paid_before, Decimal::from(700), "the line's 700 recorded once");

    // Deleting a held payment frees its line, with the counts and the statement's event.
    let before = fx.last_event().await;
    let matched_before = fx.detail(may.id).await.statement.counts.matched;
    fx.engine.delete_transaction(&fx.admin, upi, None).await.expect("deleted");
    let line = fx.lines_of(may.id, None).await.remove(0);
    assert_eq!((line.status, line.matched_by, line.payment), (LineStatus::Unmatched, None, None));
    let kept = fx.detail(may.id).await.statement;
    assert_eq!(kept.counts.matched, matched_before - 1);
    let announced: Vec<String> = fx.events_after(before).await.into_iter().map(|event| event.kind).collect();
    assert_eq!(announced, ["transaction.deleted", "bankStatement.updated"]);
    fx.engine.restore_transaction(&fx.admin, upi).await.expect("restored");
    assert_eq!(fx.lines_of(may.id, None).await[0].status, LineStatus::Unmatched, "a restore matches nothing again");
    assert!(fx.uncleared(may.id).await.iter().any(|payment| payment.payment == Holder::Payment(upi)));

    fx.engine.delete_vendor_payment(&fx.admin, bulk, None).await.expect("deleted");
    let line = &fx.lines_of(may.id, None).await[3];
    assert_eq!((line.status, line.payment), (LineStatus::Unmatched, None));
    let kept = fx.detail(may.id).await.statement;
    let recount: [u32; 5] = {
        let all = fx.lines_of(may.id, None).await;
        LineStatus::ALL.map(|status| all.iter().filter(|line| line.status == status).count() as u32)
    };
    assert_eq!(counts(&kept), recount, "the kept counts are a recount of the lines");
}

/// A store's current account, downloaded: the head office's payment, the store's own, a vendor
/// payment spanning both, and one line nothing recorded.
const STORE_MAY: &str = "Date,Narration,Chq./Ref.No.,Withdrawal Amt.,Deposit Amt.\n\
    05/05/24,UPI-CIPLA-412345678901-HO BILL,,100.00,\n\
    05/05/24,UPI-CIPLA-412345678902-STORE BILL,,60.00,\n\
    08/05/24,NEFT-N123456789012345-BOTH,,50.00,\n\
    08/05/24,NEFT-N999888777666555-UNRECORDED,,15.00,\n";

/// The head office's account over the same days: its own payment and a salary.
const HEAD_MAY: &str = "Date,Narration,Chq./Ref.No.,Withdrawal Amt.,Deposit Amt.\n\
    05/05/24,UPI-CIPLA-412345678901-HO BILL,,100.00,\n\
    08/05/24,SALARY MAY,,15000.00,\n";

/// D49: a statement belongs to a branch; the head office's match every branch's payments,
/// another branch's only payments of its own invoices, by hand too; `record` from a store's
/// line pays its own bills only; the uncleared payments of a store's statement are its own.
pub async fn statements_match_the_payments_of_their_branch<S: Store>(store: S) {
    use crate::branches::{HEAD_OFFICE_CODE, HEAD_OFFICE_ID, NewBranch};
    use crate::ids::BranchId;
    use crate::invoices::NewInvoice;
    use crate::vendor_payments::rules::RequestedAllocation;

    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Cipla").await;
    let andheri = created(fx.engine.create_branch(&fx.admin, NewBranch::new("AND", "Andheri"), None).await.unwrap());
    let closed = created(fx.engine.create_branch(&fx.admin, NewBranch::new("OLD", "Closed"), None).await.unwrap());
    fx.engine.delete_branch(&fx.admin, closed.id, None).await.unwrap();
    // The head office's bill falls due first, so a split over every branch would start there.
    let head_bill = fx.invoice(vendor.id, "H-1", "200", "2024-04-01T00:00:00Z").await;
    let store_bill = |number: &str, total: &str| NewInvoice {
        branch_id: Some(andheri.id),
        ..fx.new_invoice(vendor.id, number, total, "2024-04-20T00:00:00Z")
    };
    let first = created(fx.engine.create_invoice(&fx.admin, store_bill("A-1", "60"), None).await.unwrap());
    let second = created(fx.engine.create_invoice(&fx.admin, store_bill("A-2", "40"), None).await.unwrap());
    let head_paid =
        fx.paid_on(head_bill.id, "100", "2024-05-05T09:00:00Z", TransactionType::Upi, Some("412345678901")).await;
    let store_paid =
        fx.paid_on(first.id, "60", "2024-05-05T09:00:00Z", TransactionType::Upi, Some("412345678902")).await;
    let store_unseen = fx.paid_on(second.id, "5", "2024-05-06T09:00:00Z", TransactionType::NetBanking, None).await;
    let both = NewVendorPayment {
        amount: amount("50"),
        transaction_date: ts("2024-05-08T09:00:00Z"),
        transaction_type: TransactionType::NetBanking,
        reference: Some(PaymentReference::parse("N123456789012345").expect("a reference")),
        description: None,
        allocations: Some(vec![
            RequestedAllocation { invoice_id: head_bill.id, amount: amount("30") },
            RequestedAllocation { invoice_id: second.id, amount: amount("20") },
        ]),
        branch_id: None,
    };
    let both = created(fx.engine.create_vendor_payment(&fx.admin, vendor.id, both, None).await.unwrap());

    let upload = |account: &str, text: &str, branch: Option<BranchId>| StatementUpload {
        account: Some(account.to_owned()),
        branch_id: branch,
        file: ImportFile::csv(text),
        options: ReadOptions::default(),
        idempotency: None,
    };
    for (branch, label) in [(closed.id, "a deleted branch"), (BranchId(999), "no branch")] {
        let refused = fx.engine.upload_statement(&fx.admin, upload("AND-CUR", STORE_MAY, Some(branch))).await;
        super::support::field_error(refused.map(created), "branchId", label);
    }
    let own = fx.engine.upload_statement(&fx.admin, upload("AND-CUR", STORE_MAY, Some(andheri.id))).await;
    let own = created(own.expect("a store's statement"));
    assert_eq!((own.branch_id, own.branch_code.as_str()), (andheri.id, "AND"));
    let lines = fx.lines_of(own.id, None).await;
    assert_eq!(
        outcome(&lines),
        [
            (1, LineStatus::Unmatched, None, None),
            (2, LineStatus::Matched, Some(MatchedBy::Reference), single(store_paid)),
            (3, LineStatus::Unmatched, None, None),
            (4, LineStatus::Unmatched, None, None),
        ],
        "the head office's payment and the one spanning branches are not the store's to match"
    );
    let uncleared = fx.uncleared(own.id).await;
    assert_eq!(
        uncleared.iter().map(|payment| payment.payment).collect::<Vec<_>>(),
        [Holder::Payment(store_unseen)],
        "only the store's own payments are awaited on its statement"
    );

    // By hand: another branch's payment, or one spanning branches, is as a missing one.
    let at = |n: usize| lines[n - 1].id;
    let by_transaction = |id| MatchRequest { transaction_id: Some(id), vendor_payment_id: None };
    let head = fx.engine.match_line(&fx.admin, own.id, at(1), by_transaction(head_paid)).await;
    assert!(matches!(head, Err(Error::NotFound { entity: Entity::Transaction })), "{head:?}");
    let whole = MatchRequest { transaction_id: None, vendor_payment_id: Some(both.id) };
    let spanning = fx.engine.match_line(&fx.admin, own.id, at(3), whole).await;
    assert!(matches!(spanning, Err(Error::NotFound { entity: Entity::VendorPayment })), "{spanning:?}");
    let part = both.transactions.iter().find(|part| part.invoice_id == second.id).expect("the store's part").id;
    let by_part = fx.engine.match_line(&fx.admin, own.id, at(3), by_transaction(part)).await;
    assert!(matches!(by_part, Err(Error::NotFound { entity: Entity::Transaction })), "{by_part:?}");
    let mine = fx.engine.match_line(&fx.admin, own.id, at(4), by_transaction(store_unseen)).await;
    assert_eq!(mine.expect("the store's own payment").status, LineStatus::AmountDiffers);
    fx.engine.unmatch_line(&fx.admin, own.id, at(4)).await.expect("unmatched");

    // Recording from the store's line pays the store's bills only.
    let elsewhere = LineRecording {
        vendor_id: vendor.id,
        allocations: Some(vec![RequestedAllocation { invoice_id: head_bill.id, amount: amount("15") }]),
        transaction_type: None,
    };
    let refused = fx.engine.record_line(&fx.admin, own.id, at(4), elsewhere, None).await;
    super::support::field_error(refused, "allocations[0].invoiceId", "the head office's bill");
    let oldest = LineRecording { vendor_id: vendor.id, allocations: None, transaction_type: None };
    let recorded = created(fx.engine.record_line(&fx.admin, own.id, at(4), oldest, None).await.expect("recorded"));
    let Some(Holder::VendorPayment(made)) = recorded.payment else { panic!("a vendor payment, got {recorded:?}") };
    let made = fx.engine.get_vendor_payment(&fx.admin, made).await.expect("recorded payment");
    let paid: Vec<_> = made.transactions.iter().map(|part| (part.invoice_id, part.amount)).collect();
    assert_eq!(paid, [(second.id, amount("15"))], "the store's open bill, not the head office's older one");

    // The head office's statement matches every branch's payments.
    let head = created(fx.engine.upload_statement(&fx.admin, upload("HO-CUR", HEAD_MAY, None)).await.unwrap());
    assert_eq!((head.branch_id, head.branch_code.as_str()), (HEAD_OFFICE_ID, HEAD_OFFICE_CODE), "the default");
    let head_lines = fx.lines_of(head.id, None).await;
    assert_eq!(head_lines[0].payment, single(head_paid));
    let mut awaited: Vec<Holder> = fx.uncleared(head.id).await.into_iter().map(|payment| payment.payment).collect();
    awaited.sort();
    let mut expected = vec![Holder::Payment(store_unseen), Holder::VendorPayment(both.id)];
    expected.sort();
    assert_eq!(awaited, expected, "every branch's payments no line holds");
    let store_line = head_lines[1].id;
    let matched = fx.engine.match_line(&fx.admin, head.id, store_line, whole).await;
    assert_eq!(matched.expect("the head office matches a payment spanning branches").status, LineStatus::AmountDiffers);
    // A store's user sees and acts on their own statements only; the head office's are
    // chain-wide (D49).
    let codes = ["BankStatement:Read", "BankStatement:Create", "BankStatement:Update", "BankStatement:Delete"];
    let role = fx.role_of("Store accounts", &codes).await;
    let clerk = fx.user_of_branches("accounts@example.com", role, &[andheri.id]).await;
    let listed = fx.engine.list_statements(&clerk, &StatementQuery::from_params(&params(&[])).unwrap()).await.unwrap();
    assert_eq!(listed.items.iter().map(|s| s.id).collect::<Vec<_>>(), [own.id], "not the head office's");
    let hidden = fx.engine.get_statement(&clerk, head.id).await;
    assert!(matches!(hidden, Err(Error::NotFound { entity: Entity::BankStatement })), "{hidden:?}");
    let lines = fx.engine.list_lines(&clerk, head.id, &LineQuery::from_params(&params(&[])).unwrap()).await;
    assert!(matches!(lines, Err(Error::NotFound { entity: Entity::BankStatement })), "{lines:?}");
    let acted = fx.engine.ignore_line(&clerk, head.id, head_lines[1].id, None).await;
    assert!(matches!(acted, Err(Error::NotFound { entity: Entity::BankStatement })), "{acted:?}");
    let deleted = fx.engine.delete_statement(&clerk, head.id, None).await;
    assert!(matches!(deleted, Err(Error::NotFound { entity: Entity::BankStatement })), "{deleted:?}");
    assert_eq!(fx.engine.get_statement(&clerk, own.id).await.unwrap().statement.id, own.id);
    let to_head = fx.engine.upload_statement(&clerk, upload("AND-2", HEAD_MAY, Some(HEAD_OFFICE_ID))).await;
    assert!(
        matches!(&to_head, Err(Error::Forbidden { required: crate::access::Requirement::Scope(_) })),
        "an upload for the head office: {to_head:?}"
    );
    let mine = created(fx.engine.upload_statement(&clerk, upload("AND-2", HEAD_MAY, None)).await.unwrap());
    assert_eq!(mine.branch_id, andheri.id, "the store's only branch");
}
