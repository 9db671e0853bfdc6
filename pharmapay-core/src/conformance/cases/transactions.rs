//! Conformance cases: payments with exact paid and pending amounts (D10), moves between
//! invoices and the paid total's bound (D1), payment references that stop double payments (D30),
//! writes whose callers go away, and the payment list's filters and sorts.

use super::{answered_within, reference, share, taken_by, vendor_payment};
use super::{field_error, transaction_query};
use crate::conformance::{Fixture, amount, created, dec, ts};
use crate::error::{Entity, Error, RuleBroken};
use crate::ids::{InvoiceId, TransactionId};
use crate::paging::{PageRequest, Sort, SortDir};
use crate::store::{Store, UniqueKey};
use crate::transactions::{NewTransaction, TransactionQuery, TransactionSortKey, TransactionType};
use jiff::SignedDuration;
use std::sync::Arc;

/// Paid is the exact sum of active payments, pending the exact rest (D1, D10).
pub async fn payments_keep_paid_and_pending_exact<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Exact").await;
    let invoice = fx.invoice(vendor.id, "E-1", "1", "2024-06-01T00:00:00Z").await;
    let first = fx.pay(invoice.id, "0.1").await;
    fx.pay(invoice.id, "0.2").await;
    let third = fx.pay(invoice.id, "0.3").await;
    assert_eq!(third.invoice.pending_amount, dec("0.4"), "the nested invoice shows pending after this payment");
    assert_eq!(third.invoice.invoice_number, "E-1");
    assert_eq!(third.invoice.vendor_id, vendor.id);
    // What a create answers is what a read gives afterwards, even from a clock finer than the
    // stores keep (microseconds).
    fx.advance(SignedDuration::from_nanos(1_234_567));
    let fourth = fx.pay(invoice.id, "0.0001").await;
    assert_eq!(fx.engine.get_transaction(&fx.admin, fourth.id).await.unwrap(), fourth);
    fx.engine.delete_transaction(&fx.admin, fourth.id, None).await.unwrap();
    let read = fx.engine.get_invoice(&fx.admin, invoice.id).await.unwrap().invoice;
    assert_eq!((read.paid_amount, read.pending_amount()), (dec("0.6"), dec("0.4")), "0.1 + 0.2 + 0.3 is exactly 0.6");
    fx.engine.delete_transaction(&fx.admin, first.id, Some("bounced".into())).await.unwrap();
    assert!(matches!(
        fx.engine.get_transaction(&fx.admin, first.id).await,
        Err(Error::NotFound { entity: Entity::Transaction })
    ));
    assert_eq!(fx.engine.get_invoice(&fx.admin, invoice.id).await.unwrap().invoice.paid_amount, dec("0.5"));
    assert!(matches!(fx.engine.delete_transaction(&fx.admin, first.id, None).await, Err(Error::NotFound { .. })));
    let restored = fx.engine.restore_transaction(&fx.admin, first.id).await.unwrap();
    assert!(restored.is_active);
    assert_eq!(restored.invoice.pending_amount, dec("0.4"));
    assert_eq!(
        fx.engine.get_transaction(&fx.admin, third.id).await.unwrap().invoice.pending_amount,
        dec("0.4"),
        "read shows pending now"
    );
}

/// A payment update moves its amount between invoices' paid totals (D14).
pub async fn payment_updates_move_amounts_between_invoices<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Mover").await;
    let a = fx.invoice(vendor.id, "M-A", "100", "2024-06-01T00:00:00Z").await;
    let b = fx.invoice(vendor.id, "M-B", "100", "2024-06-01T00:00:00Z").await;
    let payment = fx.pay(a.id, "10").await;
    let mut change = fx.new_payment(b.id, "15.5");
    change.transaction_type = TransactionType::Cash;
    change.description = Some("moved".into());
    let moved = fx.engine.update_transaction(&fx.admin, payment.id, change).await.unwrap();
    assert_eq!((moved.invoice_id, moved.amount, moved.transaction_type), (b.id, amount("15.5"), TransactionType::Cash));
    let fx = &fx;
    let paid = |id| async move { fx.engine.get_invoice(&fx.admin, id).await.unwrap().invoice.paid_amount };
    assert_eq!((paid(a.id).await, paid(b.id).await), (dec("0"), dec("15.5")));
    let same_invoice = fx.engine.update_transaction(&fx.admin, payment.id, fx.new_payment(b.id, "20")).await.unwrap();
    assert_eq!(same_invoice.invoice.pending_amount, dec("80"));
    assert_eq!(paid(b.id).await, dec("20"));
    fx.engine.delete_invoice(&fx.admin, a.id, None).await.unwrap();
    field_error(
        fx.engine.update_transaction(&fx.admin, payment.id, fx.new_payment(a.id, "1")).await,
        "invoiceId",
        "canceled target invoice",
    );
    assert_eq!(paid(b.id).await, dec("20"), "a refused update changes nothing");
    fx.engine.delete_transaction(&fx.admin, payment.id, None).await.unwrap();
    assert!(matches!(
        fx.engine.update_transaction(&fx.admin, payment.id, fx.new_payment(b.id, "1")).await,
        Err(Error::NotFound { .. })
    ));
    assert_eq!(paid(b.id).await, dec("0"));
}

/// Payments cannot be dated after today or target canceled invoices (D2, spec).
pub async fn payment_rules_refuse_future_dates_and_inactive_invoices<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Rules").await;
    let invoice = fx.invoice(vendor.id, "R-1", "100", "2024-06-01T00:00:00Z").await;
    let mut tomorrow = fx.new_payment(invoice.id, "1");
    tomorrow.transaction_date = ts("2024-05-11T00:00:00Z");
    field_error(fx.engine.create_transaction(&fx.admin, tomorrow, None).await, "transactionDate", "D2: tomorrow");
    let mut tonight = fx.new_payment(invoice.id, "1");
    tonight.transaction_date = ts("2024-05-10T23:59:59Z");
    fx.engine.create_transaction(&fx.admin, tonight, None).await.expect("later today is fine");
    let payment = fx.pay(invoice.id, "2").await;
    field_error(
        fx.engine.create_transaction(&fx.admin, fx.new_payment(InvoiceId(4040), "1"), None).await,
        "invoiceId",
        "missing invoice",
    );
    fx.engine.delete_transaction(&fx.admin, payment.id, None).await.unwrap();
    fx.engine.delete_invoice(&fx.admin, invoice.id, None).await.unwrap();
    field_error(
        fx.engine.create_transaction(&fx.admin, fx.new_payment(invoice.id, "1"), None).await,
        "invoiceId",
        "canceled invoice",
    );
    assert!(matches!(
        fx.engine.restore_transaction(&fx.admin, payment.id).await,
        Err(Error::Rule(RuleBroken::ParentInactive(Entity::Invoice)))
    ));
}

/// Transaction list filters and sorts (spec, Transaction list query).
pub async fn transaction_list_filters_and_sorts<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Lister").await;
    let a = fx.invoice(vendor.id, "L-1", "1000", "2024-06-01T00:00:00Z").await;
    let b = fx.invoice(vendor.id, "L-2", "1000", "2024-06-01T00:00:00Z").await;
    let mut ids = Vec::new();
    for (invoice, paid, kind, date) in [
        (a.id, "10", TransactionType::Cash, "2024-05-01T00:00:00Z"),
        (a.id, "30", TransactionType::NetBanking, "2024-05-03T00:00:00Z"),
        (b.id, "20", TransactionType::Upi, "2024-05-02T00:00:00Z"),
        (b.id, "20", TransactionType::Cash, "2024-05-04T00:00:00Z"),
    ] {
        let input = NewTransaction {
            invoice_id: invoice,
            amount: amount(paid),
            transaction_date: ts(date),
            transaction_type: kind,
            reference: None,
            description: None,
        };
        ids.push(created(fx.engine.create_transaction(&fx.admin, input, None).await.unwrap()).id);
        fx.advance(SignedDuration::from_secs(1));
    }
    let deleted = fx.pay(b.id, "5").await;
    fx.engine.delete_transaction(&fx.admin, deleted.id, None).await.unwrap();
    let fx = &fx;
    let list = |pairs: &[(&str, &str)]| {
        let query = transaction_query(pairs);
        async move {
            fx.engine
                .list_transactions(&fx.admin, &query)
                .await
                .unwrap()
                .items
                .iter()
                .map(|t| t.id)
                .collect::<Vec<TransactionId>>()
        }
    };
    assert_eq!(list(&[]).await, [ids[3], ids[1], ids[2], ids[0]], "default: newest payment date first");
    assert_eq!(list(&[("isActive", "false")]).await, [deleted.id]);
    assert_eq!(list(&[("invoiceId", &a.id.to_string()), ("sortDir", "asc")]).await, [ids[0], ids[1]]);
    assert_eq!(list(&[("transactionType", "cash"), ("sortDir", "asc")]).await, [ids[0], ids[3]]);
    assert_eq!(
        list(&[("fromDate", "2024-05-02"), ("toDate", "2024-05-03"), ("sortDir", "asc")]).await,
        [ids[2], ids[1]]
    );
    assert_eq!(
        list(&[("sortBy", "amount")]).await,
        [ids[1], ids[3], ids[2], ids[0]],
        "ties by id in the same direction"
    );
    assert_eq!(
        list(&[("sortBy", "transactionType"), ("sortDir", "asc")]).await,
        [ids[0], ids[3], ids[1], ids[2]],
        "Cash, NetBanking, UPI"
    );
    assert_eq!(list(&[("sortBy", "createdAt"), ("sortDir", "asc")]).await, ids);
    let sorted_keys = [
        TransactionSortKey::TransactionDate,
        TransactionSortKey::Amount,
        TransactionSortKey::TransactionType,
        TransactionSortKey::CreatedAt,
    ];
    for key in sorted_keys {
        let query = TransactionQuery {
            sort: Sort { key, dir: SortDir::Asc },
            page: PageRequest::new(2, 3),
            ..TransactionQuery::default()
        };
        let page = fx.engine.list_transactions(&fx.admin, &query).await.unwrap();
        assert_eq!((page.total_count, page.items.len()), (4, 1), "second page of {key:?}");
    }
}

/// Fifty concurrent payments of 1.00 sum to exactly 50.00.
pub async fn concurrent_payments_sum_exactly<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let vendor = fx.vendor("Busy").await;
    let invoice = fx.invoice(vendor.id, "BUSY-1", "100", "2024-06-01T00:00:00Z").await;
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let fx = Arc::clone(&fx);
        tasks.push(tokio::spawn(async move {
            fx.engine.create_transaction(&fx.admin, fx.new_payment(invoice.id, "1.00"), None).await
        }));
    }
    for task in tasks {
        task.await.expect("no task panics").expect("every payment is recorded");
    }
    let read = fx.engine.get_invoice(&fx.admin, invoice.id).await.unwrap().invoice;
    assert_eq!((read.paid_amount, read.pending_amount()), (dec("50"), dec("50")));
    let listed = fx
        .engine
        .list_transactions(
            &fx.admin,
            &transaction_query(&[("invoiceId", &invoice.id.to_string()), ("pageSize", "100")]),
        )
        .await
        .unwrap();
    assert_eq!(listed.total_count, 50);
}

/// An invoice's paid total never passes the largest amount, so sums stay exact (D1).
pub async fn paid_totals_stay_within_the_largest_amount<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Huge").await;
    let invoice = fx.invoice(vendor.id, "H-1", "999999999999.9999", "2024-06-01T00:00:00Z").await;
    let other = fx.invoice(vendor.id, "H-2", "1", "2024-06-01T00:00:00Z").await;
    let first = fx.pay(invoice.id, "999999999999").await;
    field_error(
        fx.engine.create_transaction(&fx.admin, fx.new_payment(invoice.id, "1"), None).await,
        "amount",
        "past the largest amount",
    );
    fx.pay(invoice.id, "0.9999").await;
    let read = fx.engine.get_invoice(&fx.admin, invoice.id).await.unwrap().invoice;
    assert_eq!((read.paid_amount, read.pending_amount()), (dec("999999999999.9999"), dec("0")));
    let moved = fx.pay(other.id, "5").await;
    field_error(
        fx.engine.update_transaction(&fx.admin, moved.id, fx.new_payment(invoice.id, "5")).await,
        "amount",
        "moving onto a full invoice",
    );
    fx.engine
        .update_transaction(&fx.admin, first.id, fx.new_payment(invoice.id, "999999999998"))
        .await
        .expect("an update may shrink a payment");
    fx.engine.delete_transaction(&fx.admin, moved.id, None).await.unwrap();
    fx.engine
        .update_transaction(&fx.admin, first.id, fx.new_payment(invoice.id, "999999999999"))
        .await
        .expect("and grow it back to the limit");
    let summary = fx.engine.dashboard_summary(&fx.admin).await.unwrap();
    assert_eq!(summary.total_paid, dec("999999999999.9999"));
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
