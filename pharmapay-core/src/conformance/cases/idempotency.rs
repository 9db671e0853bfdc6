//! Conformance cases: idempotent creates replayed and refused on clashes, and parallel retries
//! that create one record (D23).

use super::{idem, invoice_query, vendor_query};
use crate::conformance::Fixture;
use crate::error::{Error, IdempotencyClash};
use crate::idempotency::{ClaimOutcome, Created, IdempotencyClaim, IdempotencyKey, Replay};
use crate::store::Store;
use crate::vendors::{NewVendor, VendorType};
use jiff::SignedDuration;
use std::sync::Arc;

/// Idempotent creates replay, refuse different bodies and running duplicates (D23).
pub async fn idempotent_creates_replay_and_refuse_clashes<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let request = idem("key-1", "fingerprint-a");
    let first =
        fx.engine.create_vendor(&fx.admin, NewVendor::new("Once", VendorType::Dealer), Some(&request)).await.unwrap();
    let Created::New(vendor) = first else { panic!("the first request creates") };
    match fx.engine.create_vendor(&fx.admin, NewVendor::new("Once", VendorType::Dealer), Some(&request)).await.unwrap()
    {
        Created::Replayed(Replay::Current(current)) => assert_eq!(current.id, vendor.id),
        other => panic!("without a recorded response the record itself is replayed, got {other:?}"),
    }
    let key = IdempotencyKey::parse("key-1").unwrap();
    fx.engine.record_idempotent_response(&fx.admin, &key, b"{\"id\":1}".to_vec()).await.unwrap();
    match fx.engine.create_vendor(&fx.admin, NewVendor::new("Once", VendorType::Dealer), Some(&request)).await.unwrap()
    {
        Created::Replayed(Replay::Recorded(bytes)) => assert_eq!(bytes, b"{\"id\":1}"),
        other => panic!("the recorded response is replayed byte for byte, got {other:?}"),
    }
    assert!(matches!(
        fx.engine
            .create_vendor(
                &fx.admin,
                NewVendor::new("Other", VendorType::Dealer),
                Some(&idem("key-1", "fingerprint-b"))
            )
            .await,
        Err(Error::Idempotency(IdempotencyClash::DifferentRequest))
    ));
    let once = fx.engine.list_vendors(&fx.admin, &vendor_query(&[("search", "once")])).await.unwrap();
    assert_eq!(once.total_count, 1, "replays create nothing");

    let (_, pharmacist) = fx.pharmacist("p@example.com").await;
    let theirs =
        fx.engine.create_vendor(&pharmacist, NewVendor::new("Once", VendorType::Dealer), Some(&request)).await.unwrap();
    assert!(matches!(theirs, Created::New(_)), "keys are per user");

    let conflicting = idem("key-2", "fingerprint-c");
    let taken = fx.new_invoice(vendor.id, "DUP", "1", "2024-06-01T00:00:00Z");
    fx.invoice(vendor.id, "DUP", "1", "2024-06-01T00:00:00Z").await;
    for attempt in 1..=2 {
        let result = fx.engine.create_invoice(&fx.admin, taken.clone(), Some(&conflicting)).await;
        assert!(matches!(result, Err(Error::Conflict(_))), "attempt {attempt}: a failed create releases its key");
    }

    let claim = IdempotencyClaim {
        user_id: fx.admin.user_id,
        key: IdempotencyKey::parse("key-3").unwrap(),
        fingerprint: "fp".into(),
        now: fx.engine.now(),
    };
    assert_eq!(fx.engine.store().claim_idempotency_key(claim).await.unwrap(), ClaimOutcome::Claimed);
    assert!(
        matches!(
            fx.engine
                .create_vendor(&fx.admin, NewVendor::new("Running", VendorType::Dealer), Some(&idem("key-3", "fp")))
                .await,
            Err(Error::Idempotency(IdempotencyClash::InProgress))
        ),
        "a running first request answers 409"
    );
    fx.advance(SignedDuration::from_secs(61));
    let taken_over = fx
        .engine
        .create_vendor(&fx.admin, NewVendor::new("Running", VendorType::Dealer), Some(&idem("key-3", "fp")))
        .await
        .unwrap();
    assert!(matches!(taken_over, Created::New(_)), "an abandoned claim is taken over");
    fx.advance(SignedDuration::from_hours(25));
    let reused = fx
        .engine
        .create_vendor(&fx.admin, NewVendor::new("New body", VendorType::Dealer), Some(&idem("key-1", "fingerprint-z")))
        .await
        .unwrap();
    assert!(matches!(reused, Created::New(_)), "keys expire after 24 hours");
}

/// Parallel retries with one key make one record (D23).
pub async fn parallel_idempotent_retries_create_one_record<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let vendor = fx.vendor("Retry").await;
    let input = fx.new_invoice(vendor.id, "RETRY-1", "10", "2024-06-01T00:00:00Z");
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let fx = Arc::clone(&fx);
        let input = input.clone();
        tasks.push(tokio::spawn(async move {
            fx.engine.create_invoice(&fx.admin, input, Some(&idem("retry", "same"))).await
        }));
    }
    let mut new = 0;
    for task in tasks {
        match task.await.expect("no task panics") {
            Ok(Created::New(_)) => new += 1,
            Ok(Created::Replayed(_)) | Err(Error::Idempotency(IdempotencyClash::InProgress)) => {}
            other => panic!("a retry is replayed or told to wait, got {other:?}"),
        }
    }
    assert_eq!(new, 1, "exactly one request creates");
    let listed = fx.engine.list_invoices(&fx.admin, &invoice_query(&[("invoiceNumber", "retry-1")])).await.unwrap();
    assert_eq!(listed.total_count, 1);
}
