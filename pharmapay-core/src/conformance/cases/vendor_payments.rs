//! Conformance cases: one payment over several invoices (D31), split as asked or oldest due
//! first, never overpaying, even when payments race for one vendor's invoices.

use std::sync::Arc;

use super::field_error;
use super::{pay_vendor, reference, share, taken_by, vendor_payment};
use crate::conformance::{Fixture, created, dec, ts};
use crate::error::{Entity, Error};
use crate::ids::{InvoiceId, VendorId, VendorPaymentId};
use crate::store::Store;
use crate::transactions::{NewTransaction, TransactionType};

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
