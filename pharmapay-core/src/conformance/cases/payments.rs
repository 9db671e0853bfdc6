//! Conformance cases for paying vendors as pharmacies do: payment references that stop double
//! payments (D30), one payment over several invoices (D31), what falls due when (D32) and
//! overpayments kept visible (D33).

use std::sync::Arc;

use jiff::SignedDuration;

use super::{field_error, invoice_query, transaction_query};
use crate::conformance::{Fixture, amount, created, dec, ts};
use crate::error::{Entity, Error};
use crate::ids::{InvoiceId, TransactionId, VendorId, VendorPaymentId};
use crate::store::{Store, UniqueKey};
use crate::transactions::reference::PaymentReference;
use crate::transactions::{NewTransaction, TransactionType};
use crate::vendor_payments::rules::RequestedAllocation;
use crate::vendor_payments::{NewVendorPayment, VendorPayment};

fn reference(text: &str) -> Option<PaymentReference> {
    Some(PaymentReference::parse(text).expect("a valid reference"))
}

/// The id a 409 on a reference names, or a panic naming what came instead.
fn taken_by<T: std::fmt::Debug>(result: Result<T, Error>, label: &str) -> TransactionId {
    match result {
        Err(Error::Conflict(UniqueKey::PaymentReference { existing })) => existing,
        other => panic!("{label}: expected a taken reference (D30), got {other:?}"),
    }
}

fn vendor_payment(total: &str, kind: TransactionType, reference_text: Option<&str>) -> NewVendorPayment {
    NewVendorPayment {
        amount: amount(total),
        transaction_date: ts("2024-05-10T09:00:00Z"),
        transaction_type: kind,
        reference: reference_text.and_then(reference),
        description: Some("NEFT".into()),
        allocations: None,
    }
}

fn share(invoice: InvoiceId, paid: &str) -> RequestedAllocation {
    RequestedAllocation { invoice_id: invoice, amount: amount(paid) }
}

async fn pay_vendor<S: Store>(
    fx: &Fixture<S>,
    vendor: VendorId,
    payment: NewVendorPayment,
) -> Result<VendorPayment, Error> {
    fx.engine.create_vendor_payment(&fx.admin, vendor, payment, None).await.map(created)
}

/// One reference key per payment type belongs to one payment; a deleted payment frees it
/// (D30).
pub async fn payment_references_stop_double_payments<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Referenced").await;
    let invoice = fx.invoice(vendor.id, "R-1", "1000", "2024-06-01T00:00:00Z").await;
    let with = |text: &str, kind| NewTransaction {
        reference: reference(text),
        transaction_type: kind,
        ..fx.new_payment(invoice.id, "10")
    };
    let recorded = async |text: &str, kind: TransactionType, why: &str| {
        created(fx.engine.create_transaction(&fx.admin, with(text, kind), None).await.expect(why))
    };
    let first = recorded(" UTR 4123-889/01 ", TransactionType::NetBanking, "a new reference is free").await;
    assert_eq!(first.reference.as_deref(), Some("UTR 4123-889/01"), "stored trimmed, as typed");

    let again = fx.engine.create_transaction(&fx.admin, with("utr412388901", TransactionType::NetBanking), None).await;
    assert_eq!(taken_by(again, "the same key again"), first.id);
    // D48: dots, underscores, compatibility forms and invisible characters make no new key.
    for variant in ["UTR.4123.889.01", "utr_4123_889_01", "ＵＴＲ４１２３８８９０１", "UTR\u{200B}412388901"]
    {
        let variant_again =
            fx.engine.create_transaction(&fx.admin, with(variant, TransactionType::NetBanking), None).await;
        assert_eq!(taken_by(variant_again, variant), first.id);
    }
    recorded("UTR412388901", TransactionType::Upi, "another payment type may use the same key").await;

    let other = recorded("CHQ-77", TransactionType::NetBanking, "another reference is free").await;
    let replaced =
        fx.engine.update_transaction(&fx.admin, other.id, with("UTR-4123-88901", TransactionType::NetBanking)).await;
    assert_eq!(taken_by(replaced, "a replacement taking a held key"), first.id);
    let kept =
        fx.engine.update_transaction(&fx.admin, first.id, with("UTR412388901", TransactionType::NetBanking)).await;
    assert!(kept.is_ok(), "a payment keeps its own reference when replaced: {kept:?}");
    // A payment moved to another key frees the one it held, and holds the new one (D30).
    fx.engine.update_transaction(&fx.admin, other.id, with("CHQ-78", TransactionType::NetBanking)).await.unwrap();
    recorded("chq 77", TransactionType::NetBanking, "the key a payment moved off is free").await;
    let moved = fx.engine.create_transaction(&fx.admin, with("CHQ78", TransactionType::NetBanking), None).await;
    assert_eq!(taken_by(moved, "the key a payment moved to"), other.id);
    fx.engine.update_transaction(&fx.admin, other.id, with("CHQ-78", TransactionType::Upi)).await.unwrap();
    recorded("CHQ-78", TransactionType::NetBanking, "a payment that changed type frees its key for the old type").await;

    fx.engine.delete_transaction(&fx.admin, first.id, None).await.unwrap();
    let reuse = recorded("UTR412388901", TransactionType::NetBanking, "a deleted payment frees its reference").await;
    assert_eq!(
        taken_by(fx.engine.restore_transaction(&fx.admin, first.id).await, "restoring onto a taken key"),
        reuse.id
    );

    let by_key =
        fx.engine.list_transactions(&fx.admin, &transaction_query(&[("reference", "utr/4123 88901")])).await.unwrap();
    let ids: Vec<TransactionId> = by_key.items.iter().map(|payment| payment.id).collect();
    assert_eq!(by_key.total_count, 2, "the list filters by key, every type: {ids:?}");
    assert!(ids.contains(&reuse.id));
    let refused = crate::transactions::TransactionQuery::from_params(&super::params(&[("reference", " -/ ")]));
    assert!(refused.is_err_and(|errors| errors.contains("reference")), "a reference with nothing to match by");
}

/// A vendor payment is one payment over several invoices: split as asked or oldest due first,
/// never above what an invoice owes, its parts carrying its id (D31).
pub async fn vendor_payments_split_over_invoices_and_never_overpay<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Distributor").await;
    let other = fx.vendor("Elsewhere").await;
    let late = fx.invoice(vendor.id, "D-1", "100", "2024-05-01T00:00:00Z").await;
    let soon = fx.invoice(vendor.id, "D-2", "200", "2024-05-20T00:00:00Z").await;
    let later = fx.invoice(vendor.id, "D-3", "300", "2024-06-30T00:00:00Z").await;
    let foreign = fx.invoice(other.id, "F-1", "50", "2024-05-20T00:00:00Z").await;
    fx.pay(late.id, "40").await;

    // Oldest due first: 60 settles D-1, the rest goes to D-2.
    let spread =
        pay_vendor(&fx, vendor.id, vendor_payment("110", TransactionType::NetBanking, Some("N-1"))).await.unwrap();
    let split: Vec<(InvoiceId, String)> =
        spread.transactions.iter().map(|part| (part.invoice_id, part.amount.to_string())).collect();
    assert_eq!(split, [(late.id, "60".to_owned()), (soon.id, "50".to_owned())]);
    assert!(spread.transactions.iter().all(|part| part.vendor_payment_id == Some(spread.id)));
    assert!(spread.transactions.iter().all(|part| part.reference.as_deref() == Some("N-1")));
    assert_eq!((spread.amount.to_string(), spread.vendor_name.as_str()), ("110".to_owned(), "Distributor"));
    let read = fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap();
    assert_eq!(read.totals.outstanding_balance, dec("450"), "600 invoiced, 150 paid");

    // As asked.
    let mut asked = vendor_payment("160", TransactionType::Cash, None);
    asked.allocations = Some(vec![share(later.id, "100"), share(soon.id, "60")]);
    let explicit = pay_vendor(&fx, vendor.id, asked).await.unwrap();
    let split: Vec<(InvoiceId, String)> =
        explicit.transactions.iter().map(|part| (part.invoice_id, part.amount.to_string())).collect();
    assert_eq!(split.len(), 2);
    assert!(split.contains(&(later.id, "100".to_owned())) && split.contains(&(soon.id, "60".to_owned())));

    // Every breach is a 400 naming the field, and writes nothing.
    let before = fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap().totals;
    let mut too_much = vendor_payment("91", TransactionType::Cash, None);
    too_much.allocations = Some(vec![share(soon.id, "91")]);
    field_error(pay_vendor(&fx, vendor.id, too_much).await, "allocations[0].amount", "more than D-2 owes (90)");
    let mut foreign_invoice = vendor_payment("10", TransactionType::Cash, None);
    foreign_invoice.allocations = Some(vec![share(foreign.id, "10")]);
    field_error(
        pay_vendor(&fx, vendor.id, foreign_invoice).await,
        "allocations[0].invoiceId",
        "another vendor's invoice",
    );
    let mut missing = vendor_payment("10", TransactionType::Cash, None);
    missing.allocations = Some(vec![share(InvoiceId(999_999), "10")]);
    field_error(pay_vendor(&fx, vendor.id, missing).await, "allocations[0].invoiceId", "a missing invoice");
    let mut unequal = vendor_payment("11", TransactionType::Cash, None);
    unequal.allocations = Some(vec![share(soon.id, "10")]);
    field_error(pay_vendor(&fx, vendor.id, unequal).await, "amount", "allocations that do not add up");
    field_error(
        pay_vendor(&fx, vendor.id, vendor_payment("290.0001", TransactionType::Cash, None)).await,
        "amount",
        "more than the vendor's invoices owe (290)",
    );
    let mut tomorrow = vendor_payment("1", TransactionType::Cash, None);
    tomorrow.transaction_date = ts("2024-05-12T00:00:00Z");
    field_error(pay_vendor(&fx, vendor.id, tomorrow).await, "transactionDate", "dated after today (D2)");
    assert_eq!(fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap().totals, before, "refusals write nothing");

    assert!(matches!(
        pay_vendor(&fx, VendorId(999_999), vendor_payment("1", TransactionType::Cash, None)).await,
        Err(Error::NotFound { entity: Entity::Vendor })
    ));
    fx.engine.delete_vendor(&fx.admin, other.id, None).await.unwrap();
    assert!(
        matches!(
            pay_vendor(&fx, other.id, vendor_payment("1", TransactionType::Cash, None)).await,
            Err(Error::NotFound { entity: Entity::Vendor })
        ),
        "a deleted vendor is a 404"
    );

    // The reference belongs to the whole vendor payment (D30).
    let taken = fx
        .engine
        .create_transaction(
            &fx.admin,
            NewTransaction {
                reference: reference("n 1"),
                transaction_type: TransactionType::NetBanking,
                ..fx.new_payment(later.id, "1")
            },
            None,
        )
        .await;
    assert_eq!(taken_by(taken, "a payment taking a vendor payment's reference"), spread.transactions[0].id);
    let again = pay_vendor(&fx, vendor.id, vendor_payment("1", TransactionType::NetBanking, Some("N1"))).await;
    assert_eq!(taken_by(again, "a second vendor payment with the reference"), spread.transactions[0].id);

    // One part deleted on its own: the payment keeps its amount and its other part.
    fx.engine.delete_transaction(&fx.admin, spread.transactions[0].id, None).await.unwrap();
    let read = fx.engine.get_vendor_payment(&fx.admin, spread.id).await.unwrap();
    assert_eq!((read.amount.to_string(), read.transactions.len()), ("110".to_owned(), 1));
    let restored = fx.engine.restore_transaction(&fx.admin, spread.transactions[0].id).await;
    assert!(restored.is_ok(), "a part restores onto its own vendor payment's reference: {restored:?}");

    // Deleting the vendor payment deletes every active part at once.
    fx.engine.delete_vendor_payment(&fx.admin, spread.id, Some("entered twice".into())).await.unwrap();
    assert!(matches!(
        fx.engine.get_vendor_payment(&fx.admin, spread.id).await,
        Err(Error::NotFound { entity: Entity::VendorPayment })
    ));
    assert!(matches!(
        fx.engine.delete_vendor_payment(&fx.admin, spread.id, None).await,
        Err(Error::NotFound { entity: Entity::VendorPayment })
    ));
    assert!(matches!(
        fx.engine.get_vendor_payment(&fx.admin, VendorPaymentId(999_999)).await,
        Err(Error::NotFound { entity: Entity::VendorPayment })
    ));
    let read = fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap();
    assert_eq!(read.totals.total_paid_amount, dec("200"), "40 on its own and the explicit 160 remain");
    let soon_read = fx.engine.get_invoice(&fx.admin, soon.id).await.unwrap().invoice;
    assert_eq!(soon_read.paid_amount, dec("60"));
}

/// Vendor payments racing for one vendor's invoices never pay more than the invoices owe
/// (D31).
pub async fn concurrent_vendor_payments_never_overpay<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let vendor = fx.vendor("Raced").await;
    for n in 0..3 {
        fx.invoice(vendor.id, &format!("RC-{n}"), "100", "2024-05-20T00:00:00Z").await;
    }
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let fx = Arc::clone(&fx);
            tokio::spawn(async move {
                pay_vendor(&fx, vendor.id, vendor_payment("70", TransactionType::Cash, None)).await.map(drop)
            })
        })
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.expect("no task panics"));
    }
    assert_eq!(results.iter().filter(|result| result.is_ok()).count(), 4, "300 owed: four payments of 70 fit");
    for result in results.iter().filter(|result| result.is_err()) {
        assert!(matches!(result, Err(Error::Validation(errors)) if errors.contains("amount")), "{result:?}");
    }
    let read = fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap();
    assert_eq!((read.totals.total_paid_amount, read.totals.outstanding_balance), (dec("280"), dec("20")));
}

/// The same reference sent by several clients at once ends in exactly one payment (D30).
pub async fn concurrent_payments_with_one_reference_have_one_winner<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let vendor = fx.vendor("Twice").await;
    let invoice = fx.invoice(vendor.id, "TW-1", "1000", "2024-05-20T00:00:00Z").await;
    let tasks: Vec<_> = (0..6)
        .map(|n| {
            let fx = Arc::clone(&fx);
            tokio::spawn(async move {
                if n % 2 == 0 {
                    let payment = NewTransaction {
                        reference: reference("UTR-777"),
                        transaction_type: TransactionType::Upi,
                        ..fx.new_payment(invoice.id, "10")
                    };
                    fx.engine.create_transaction(&fx.admin, payment, None).await.map(drop)
                } else {
                    let mut whole = vendor_payment("10", TransactionType::Upi, Some("utr 777"));
                    whole.allocations = Some(vec![share(invoice.id, "10")]);
                    fx.engine.create_vendor_payment(&fx.admin, vendor.id, whole, None).await.map(drop)
                }
            })
        })
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.expect("no task panics"));
    }
    assert_eq!(results.iter().filter(|result| result.is_ok()).count(), 1, "{results:?}");
    assert!(
        results
            .iter()
            .filter(|result| result.is_err())
            .all(|result| matches!(result, Err(Error::Conflict(UniqueKey::PaymentReference { .. })))),
        "{results:?}"
    );
    let read = fx.engine.get_invoice(&fx.admin, invoice.id).await.unwrap().invoice;
    assert_eq!(read.paid_amount, dec("10"), "one payment recorded");
}

/// `dueWithinDays` lists what falls due soon, the payables sum it up, and `overpaid` finds
/// the invoices paid more than they asked (D32, D33).
pub async fn due_soon_payables_and_overpaid_invoices<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    fx.advance(SignedDuration::from_hours(1)); // 10 May 2024, 11:00 UTC.
    let vendor = fx.vendor("Dues").await;
    let overdue = fx.invoice(vendor.id, "DU-1", "100", "2024-05-01T00:00:00Z").await;
    let today = fx.invoice(vendor.id, "DU-2", "200", "2024-05-10T00:00:00Z").await;
    let week = fx.invoice(vendor.id, "DU-3", "300", "2024-05-17T00:00:00Z").await;
    let month = fx.invoice(vendor.id, "DU-4", "400", "2024-06-09T00:00:00Z").await;
    let far = fx.invoice(vendor.id, "DU-5", "500", "2024-06-10T00:00:00Z").await;
    let paid = fx.invoice(vendor.id, "DU-6", "50", "2024-05-12T00:00:00Z").await;
    fx.pay(paid.id, "60").await;
    fx.pay(week.id, "100").await;
    let canceled = fx.invoice(vendor.id, "DU-7", "70", "2024-05-11T00:00:00Z").await;
    fx.engine.delete_invoice(&fx.admin, canceled.id, None).await.unwrap();

    let ids = |pairs: &[(&str, &str)]| {
        let query = invoice_query(pairs);
        let engine = &fx.engine;
        let admin = &fx.admin;
        async move {
            let mut ids: Vec<InvoiceId> =
                engine.list_invoices(admin, &query).await.unwrap().items.iter().map(|i| i.id).collect();
            ids.sort();
            ids
        }
    };
    assert_eq!(ids(&[("dueWithinDays", "0")]).await, [today.id], "today only");
    assert_eq!(ids(&[("dueWithinDays", "7")]).await, [today.id, week.id], "owing, due today to 17 May");
    assert_eq!(ids(&[("dueWithinDays", "30")]).await, [today.id, week.id, month.id]);
    assert_eq!(ids(&[("overpaid", "true")]).await, [paid.id]);
    assert_eq!(ids(&[("overpaid", "false")]).await, [overdue.id, today.id, week.id, month.id, far.id, canceled.id]);
    assert_eq!(ids(&[("status", "FullyPaid")]).await, [paid.id], "D33: an overpaid invoice is FullyPaid as ever");
    for bad in ["-1", "367", "soon"] {
        let refused = crate::invoices::InvoiceQuery::from_params(&super::params(&[("dueWithinDays", bad)]));
        assert!(refused.is_err_and(|errors| errors.contains("dueWithinDays")), "dueWithinDays={bad}");
    }

    let payables = fx.engine.payables(&fx.admin).await.unwrap();
    let figures = |due: crate::reports::dashboard::DueFigures| (due.amount.to_string(), due.invoice_count);
    assert_eq!(figures(payables.overdue), ("100".to_owned(), 1));
    assert_eq!(figures(payables.due_today), ("200".to_owned(), 1));
    assert_eq!(
        figures(payables.due_in_7_days),
        ("200".to_owned(), 1),
        "300 less the 100 paid; the overpaid one owes nothing"
    );
    assert_eq!(figures(payables.due_in_30_days), ("600".to_owned(), 2), "the 7 days and 9 June");

    fx.engine.update_setting(&fx.admin, "TimeZone", "Pacific/Kiritimati").await.unwrap();
    let shifted = fx.engine.payables(&fx.admin).await.unwrap();
    assert_eq!(figures(shifted.due_today), ("0".to_owned(), 0), "in Kiritimati it is already 11 May");
    assert_eq!(figures(shifted.overdue), ("300".to_owned(), 2));
}

/// Vendor payments, single payments, payment deletes and invoice edits on one vendor's
/// invoices, all at once, never fail for each other's locks: a database that finds two writes
/// waiting on each other retries one inside the store (D48), so every write is answered as it
/// would be alone, and the totals add up to exactly what was paid.
pub async fn mixed_payments_on_one_vendor_all_succeed_and_sum_exactly<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let vendor = fx.vendor("Contended").await;
    let mut invoices = Vec::new();
    for n in 0..6 {
        invoices.push(fx.invoice(vendor.id, &format!("MX-{n}"), "1000000", "2024-05-20T00:00:00Z").await);
    }
    let invoices = Arc::new(invoices);
    const ROUNDS: usize = 8;
    let tasks: Vec<_> = (0..12)
        .map(|task| {
            let (fx, invoices) = (Arc::clone(&fx), Arc::clone(&invoices));
            tokio::spawn(async move {
                // What this task paid and then kept, in units of one rupee.
                let mut kept = 0_i64;
                for round in 0..ROUNDS {
                    if task % 2 == 0 {
                        // A vendor payment: the vendor first, then the invoices it pays.
                        let mut payment = vendor_payment("2", TransactionType::Cash, None);
                        payment.allocations = Some(vec![
                            share(invoices[round % invoices.len()].id, "1"),
                            share(invoices[(round + task) % invoices.len()].id, "1"),
                        ]);
                        if payment
                            .allocations
                            .as_ref()
                            .is_some_and(|shares| shares[0].invoice_id == shares[1].invoice_id)
                        {
                            payment.allocations = None;
                        }
                        let paid = pay_vendor(&fx, vendor.id, payment)
                            .await
                            .map_err(|error| format!("vendor payment: {error:?}"))?;
                        kept += 2;
                        if round % 4 == 3 {
                            fx.engine
                                .delete_vendor_payment(&fx.admin, paid.id, None)
                                .await
                                .map_err(|error| format!("vendor payment delete: {error:?}"))?;
                            kept -= 2;
                        }
                    } else {
                        // A single payment: its invoice, then the vendor's kept figures.
                        let invoice = &invoices[(round * 5 + task) % invoices.len()];
                        let payment = fx
                            .engine
                            .create_transaction(&fx.admin, fx.new_payment(invoice.id, "1"), None)
                            .await
                            .map(created)
                            .map_err(|error| format!("payment: {error:?}"))?;
                        kept += 1;
                        match round % 4 {
                            1 => {
                                let moved = NewTransaction {
                                    invoice_id: invoices[(round + 1) % invoices.len()].id,
                                    ..fx.new_payment(invoice.id, "3")
                                };
                                fx.engine
                                    .update_transaction(&fx.admin, payment.id, moved)
                                    .await
                                    .map_err(|error| format!("payment update: {error:?}"))?;
                                kept += 2;
                            }
                            2 => {
                                fx.engine
                                    .delete_transaction(&fx.admin, payment.id, None)
                                    .await
                                    .map_err(|error| format!("payment delete: {error:?}"))?;
                                kept -= 1;
                            }
                            3 => {
                                let mut edit = fx.new_invoice(
                                    vendor.id,
                                    &invoice.invoice_number,
                                    "1000000",
                                    "2024-05-20T00:00:00Z",
                                );
                                edit.description = Some(format!("edited by {task} in round {round}"));
                                fx.engine
                                    .update_invoice(&fx.admin, invoice.id, edit)
                                    .await
                                    .map_err(|error| format!("invoice update: {error:?}"))?;
                            }
                            _ => {}
                        }
                    }
                }
                Ok::<i64, String>(kept)
            })
        })
        .collect();
    let mut paid = 0;
    let mut failures = Vec::new();
    for task in tasks {
        match task.await.expect("no task panics") {
            Ok(kept) => paid += kept,
            Err(failure) => failures.push(failure),
        }
    }
    assert!(failures.is_empty(), "writes failed for each other's locks: {failures:?}");
    let read = fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap();
    assert_eq!(read.totals.total_paid_amount, rust_decimal::Decimal::from(paid), "the vendor's kept paid total");
    let mut invoices_paid = rust_decimal::Decimal::ZERO;
    for invoice in invoices.iter() {
        invoices_paid += fx.engine.get_invoice(&fx.admin, invoice.id).await.unwrap().invoice.paid_amount;
    }
    assert_eq!(invoices_paid, rust_decimal::Decimal::from(paid), "the invoices' paid totals");
}

/// Polls `write` until it is answered or has waited `waits` times, then drops it (a caller that
/// went away) and answers `None`.
async fn answered_within<T>(waits: u64, write: impl Future<Output = T>) -> Option<T> {
    let mut write = std::pin::pin!(write);
    let mut left = waits;
    std::future::poll_fn(|cx| match write.as_mut().poll(cx) {
        std::task::Poll::Ready(answer) => std::task::Poll::Ready(Some(answer)),
        std::task::Poll::Pending if left == 0 => std::task::Poll::Ready(None),
        std::task::Poll::Pending => {
            left -= 1;
            std::task::Poll::Pending
        }
    })
    .await
}

/// Payments whose callers go away half way (a client that disconnects drops its request at
/// whatever await it had reached) change nothing about what the others are told: every write
/// answered as kept is kept, every write answered with an error is absent, and the writes that
/// waited for their answers all succeed (D48).
pub async fn writes_whose_callers_go_away_leave_every_answer_true<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let vendor = fx.vendor("Interrupted").await;
    let invoice = fx.invoice(vendor.id, "INT-1", "1000000", "2024-05-20T00:00:00Z").await;
    const WRITERS: u64 = 12;
    const LEAVERS: u64 = 4;
    const PAYMENTS: u64 = 20;
    // How many times one payment, alone, waits for the store before it is answered.
    let calibration = {
        let mut waits = 0_u64;
        let mut write = std::pin::pin!(fx.engine.create_transaction(
            &fx.admin,
            NewTransaction { reference: reference("CALIBRATE"), ..fx.new_payment(invoice.id, "1") },
            None,
        ));
        std::future::poll_fn(|cx| match write.as_mut().poll(cx) {
            std::task::Poll::Pending => {
                waits += 1;
                std::task::Poll::Pending
            }
            std::task::Poll::Ready(answer) => std::task::Poll::Ready(answer),
        })
        .await
        .expect("a payment alone is recorded");
        waits
    };
    let tasks: Vec<_> = (0..WRITERS + LEAVERS)
        .map(|task| {
            let fx = Arc::clone(&fx);
            tokio::spawn(async move {
                // A small generator of its own per task: the delays differ between tasks and runs
                // of one task alike, with no shared state.
                let mut state = 0x9e37_79b9_7f4a_7c15_u64 ^ (task + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                let mut answers = Vec::new();
                for n in 0..PAYMENTS {
                    let key = format!("GONE{task:02}N{n:02}");
                    let payment = NewTransaction { reference: reference(&key), ..fx.new_payment(invoice.id, "1") };
                    let write = fx.engine.create_transaction(&fx.admin, payment, None);
                    if task < WRITERS {
                        answers.push((key, Some(write.await.map(drop))));
                    } else {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        // Gone after its k-th wait for the store, with k from 1 to twice the waits a
                        // write alone makes: before the write began, half way, or during its commit.
                        let waits = 1 + state % (2 * calibration.max(1));
                        match answered_within(waits, write).await {
                            Some(answered) => answers.push((key, Some(answered.map(drop)))),
                            None => answers.push((key, None)),
                        }
                    }
                }
                (task < WRITERS, answers)
            })
        })
        .collect();
    let mut answered = Vec::new();
    for task in tasks {
        answered.push(task.await.expect("no task panics"));
    }
    // Let the writes whose callers went away settle: each ends on a task of the store's own.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let page = fx
        .engine
        .list_transactions(
            &fx.admin,
            &transaction_query(&[("invoiceId", &invoice.id.to_string()), ("pageSize", "100")]),
        )
        .await
        .unwrap();
    let total = page.total_count;
    let mut kept = std::collections::BTreeSet::new();
    for page_number in 1..=total.div_ceil(100).max(1) {
        let page = fx
            .engine
            .list_transactions(
                &fx.admin,
                &transaction_query(&[
                    ("invoiceId", &invoice.id.to_string()),
                    ("pageSize", "100"),
                    ("page", &page_number.to_string()),
                ]),
            )
            .await
            .unwrap();
        kept.extend(page.items.into_iter().filter_map(|payment| payment.reference));
    }
    assert_eq!(kept.len() as u64, total, "every payment carries its own reference");
    let mut failures = Vec::new();
    for (waited, answers) in &answered {
        for (key, answer) in answers {
            match answer {
                Some(Ok(())) if !kept.contains(key) => {
                    failures.push(format!("{key} was answered as kept but is absent"))
                }
                Some(Err(error)) if kept.contains(key) => {
                    failures.push(format!("{key} was answered {error:?} but is kept"))
                }
                Some(Err(error)) if *waited => {
                    failures.push(format!("{key} failed for a caller that waited: {error:?}"))
                }
                _ => {}
            }
        }
    }
    let cut = answered.iter().flat_map(|(_, answers)| answers).filter(|(_, answer)| answer.is_none()).count();
    if calibration > 0 {
        // A store whose writes wait for anything (all but the memory store) had some cut off.
        assert!(cut > 0, "some callers went away before their answer");
    }
    assert!(failures.is_empty(), "{} answers were untrue or failed: {failures:?}", failures.len());
    let read = fx.engine.get_invoice(&fx.admin, invoice.id).await.unwrap().invoice;
    assert_eq!(read.paid_amount, rust_decimal::Decimal::from(total), "the kept paid total counts the kept payments");
}
