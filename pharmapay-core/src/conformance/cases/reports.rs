//! Conformance cases: settings (D3), dashboard figures (D12), the audit log (D22), exports
//! (D26), exact aggregates past 64 bits, idempotent creates (D23), and bulk loads through
//! [`BulkLoadStore`](crate::store::BulkLoadStore).

use std::sync::Arc;

use jiff::SignedDuration;
use serde_json::Value;

use super::{field_error, idem, invoice_query, params, vendor_query};
use crate::conformance::{Fixture, amount, created, dec, ts};
use crate::error::{Entity, Error, IdempotencyClash, RuleBroken};
use crate::idempotency::{ClaimOutcome, Created, IdempotencyClaim, IdempotencyKey, Replay};
use crate::ids::{InvoiceId, VendorId};
use crate::invoices::InvoiceStatus;
use crate::reports::audit::AuditQuery;
use crate::store::{BulkLoadStore, Store, UniqueKey};
use crate::transactions::{NewTransaction, TransactionType};
use crate::vendors::{NewVendor, VendorType};

/// Settings: only values change; TimeZone must be a known zone (spec; D3).
pub async fn settings_update_only_values_and_time_zones_must_exist<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let settings = fx.engine.list_settings(&fx.admin).await.unwrap();
    let pairs: Vec<(&str, &str)> = settings.iter().map(|s| (s.key.as_str(), s.value.as_str())).collect();
    assert_eq!(pairs, [("Currency", "₹"), ("ExpiredLicensePolicy", "Warn"), ("TimeZone", "UTC")], "D27, D36");
    assert_eq!(
        fx.engine.get_setting(&fx.admin, "Currency").await.unwrap().description,
        "Currency symbol shown in amounts"
    );
    assert!(matches!(
        fx.engine.get_setting(&fx.admin, "Colour").await,
        Err(Error::NotFound { entity: Entity::Setting })
    ));
    let updated = fx.engine.update_setting(&fx.admin, "Currency", "$").await.unwrap();
    assert_eq!((updated.key.as_str(), updated.value.as_str()), ("Currency", "$"));
    assert_eq!(fx.engine.get_setting(&fx.admin, "Currency").await.unwrap().value, "$");
    field_error(fx.engine.update_setting(&fx.admin, "TimeZone", "Mars/Olympus").await, "value", "D3: unknown zone");
    field_error(fx.engine.update_setting(&fx.admin, "Currency", "  ").await, "value", "blank value");
    assert!(matches!(fx.engine.update_setting(&fx.admin, "Colour", "red").await, Err(Error::NotFound { .. })));
    assert_eq!(
        fx.engine.get_setting(&fx.admin, "TimeZone").await.unwrap().value,
        "UTC",
        "a refused update changes nothing"
    );
}

/// "Today" follows the TimeZone setting, for Overdue and for payment dates (D2, D3).
pub async fn business_time_zone_moves_today<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    fx.advance(SignedDuration::from_hours(10));
    let vendor = fx.vendor("Zones").await;
    let invoice = fx.invoice(vendor.id, "Z-1", "10", "2024-05-10T00:00:00Z").await;
    assert_eq!(invoice.status, InvoiceStatus::PartiallyPaid, "UTC: still 10 May");
    let mut bare_tomorrow = fx.new_payment(invoice.id, "1");
    bare_tomorrow.transaction_date = ts("2024-05-11T00:00:00Z");
    field_error(
        fx.engine.create_transaction(&fx.admin, bare_tomorrow.clone(), None).await,
        "transactionDate",
        "UTC: 11 May is tomorrow",
    );

    fx.engine.update_setting(&fx.admin, "TimeZone", "Asia/Kolkata").await.unwrap();
    let read = fx.engine.get_invoice(&fx.admin, invoice.id).await.unwrap().invoice;
    assert_eq!(read.status, InvoiceStatus::Overdue, "Kolkata: it is already 11 May");
    fx.engine.create_transaction(&fx.admin, bare_tomorrow, None).await.expect("Kolkata: 11 May is today");
    let overdue = fx.engine.list_invoices(&fx.admin, &invoice_query(&[("status", "Overdue")])).await.unwrap();
    assert_eq!(overdue.items.iter().map(|i| i.id).collect::<Vec<_>>(), [invoice.id], "list filters use the same today");
}

/// A change of the TimeZone setting files every payment under its business day in the new
/// zone at once, for the recent payments and the months alike, and later writes follow it
/// (D3, D12, D41).
pub async fn time_zone_changes_refile_payments_by_business_day<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    fx.advance(SignedDuration::from_hours(1)); // 10 May, 11:00 UTC and 16:30 in Kolkata.
    let vendor = fx.vendor("Zones").await;
    let invoice = fx.invoice(vendor.id, "TZ-1", "1000", "2024-06-01T00:00:00Z").await;
    let pay = |paid: &str, date: &str| {
        let input = NewTransaction { transaction_date: ts(date), ..fx.new_payment(invoice.id, paid) };
        let engine = &fx.engine;
        let admin = &fx.admin;
        async move { created(engine.create_transaction(admin, input, None).await.unwrap()) }
    };
    let month_end = pay("1", "2024-04-30T20:00:00Z").await; // UTC: 30 April. Kolkata: 1 May.
    pay("2", "2024-04-10T20:00:00Z").await; // UTC: 10 April, not recent. Kolkata: 11 April, recent.
    let months = |totals: Vec<crate::reports::dashboard::MonthlyTotal>| -> Vec<(String, u64, String)> {
        totals[..2].iter().map(|m| (m.month.clone(), m.transaction_count, m.total_amount.to_string())).collect()
    };
    let figures = || async {
        let summary = fx.engine.dashboard_summary(&fx.admin).await.unwrap();
        let monthly = fx.engine.monthly_transactions(&fx.admin).await.unwrap();
        (summary.recent_transactions, months(monthly))
    };
    let utc = figures().await;
    assert_eq!(utc, (1, vec![("2024-05".into(), 0, "0".into()), ("2024-04".into(), 2, "3".into())]), "UTC days");

    fx.engine.update_setting(&fx.admin, "TimeZone", "Asia/Kolkata").await.unwrap();
    let kolkata = figures().await;
    assert_eq!(
        kolkata,
        (2, vec![("2024-05".into(), 1, "1".into()), ("2024-04".into(), 1, "2".into())]),
        "the change refiles the payments already kept"
    );
    fx.engine.delete_transaction(&fx.admin, month_end.id, None).await.unwrap();
    pay("4", "2024-04-30T19:00:00Z").await; // Kolkata: 1 May, 00:30.
    let after = figures().await;
    assert_eq!(
        after,
        (2, vec![("2024-05".into(), 1, "4".into()), ("2024-04".into(), 1, "2".into())]),
        "writes after the change file their payments under the new zone's days"
    );

    fx.engine.update_setting(&fx.admin, "TimeZone", "UTC").await.unwrap();
    assert_eq!(
        figures().await,
        (1, vec![("2024-05".into(), 0, "0".into()), ("2024-04".into(), 2, "6".into())]),
        "and back"
    );
}

/// Dashboard figures as D12 defines them.
pub async fn dashboard_figures_follow_d12<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let big = fx.vendor("Big Supplier").await;
    let small = fx.vendor("Small Supplier").await;
    let gone = fx.vendor("Gone Supplier").await;
    let i1 = fx.invoice(big.id, "D-1", "1000", "2024-06-01T00:00:00Z").await;
    fx.advance(SignedDuration::from_secs(1));
    let i2 = fx.invoice(small.id, "D-2", "300", "2024-06-01T00:00:00Z").await;
    fx.advance(SignedDuration::from_secs(1));
    let i3 = fx.invoice(small.id, "D-3", "200", "2024-06-01T00:00:00Z").await;
    fx.advance(SignedDuration::from_secs(1));
    let i4 = fx.invoice(gone.id, "D-4", "5000", "2024-06-01T00:00:00Z").await;
    fx.engine.delete_vendor(&fx.admin, gone.id, None).await.unwrap();
    let pay_on = |invoice: InvoiceId, paid: &str, date: &str| {
        let input = NewTransaction {
            invoice_id: invoice,
            amount: amount(paid),
            transaction_date: ts(date),
            transaction_type: TransactionType::Cash,
            reference: None,
            description: None,
        };
        let engine = &fx.engine;
        let admin = &fx.admin;
        async move { created(engine.create_transaction(admin, input, None).await.unwrap()) }
    };
    pay_on(i1.id, "100", "2024-05-10T00:00:00Z").await;
    pay_on(i1.id, "50", "2024-04-11T00:00:00Z").await; // 29 days before today: recent.
    pay_on(i2.id, "25", "2024-04-10T23:59:59Z").await; // 30 days before today: not recent.
    pay_on(i2.id, "75", "2023-06-15T00:00:00Z").await; // May 2023: outside the 12 months.
    let deleted = pay_on(i3.id, "10", "2024-05-09T00:00:00Z").await;
    fx.engine.delete_transaction(&fx.admin, deleted.id, None).await.unwrap();
    fx.engine.delete_invoice(&fx.admin, i3.id, None).await.unwrap();

    let summary = fx.engine.dashboard_summary(&fx.admin).await.unwrap();
    assert_eq!(summary.total_vendors, 4, "all vendor records, the pharmacy and the deleted one included");
    assert_eq!(summary.total_invoices, 4, "canceled invoices count");
    assert_eq!(summary.total_due, dec("6050"), "pending of active invoices: 850 + 200 + 5000");
    assert_eq!(summary.total_paid, dec("250"), "active payments whatever their invoice");
    assert_eq!(summary.recent_transactions, 2, "payments dated in the last 30 days");

    let top = fx.engine.top_vendors(&fx.admin, 5).await.unwrap();
    let ranked: Vec<(&str, String, u64)> =
        top.iter().map(|t| (t.vendor_name.as_str(), t.outstanding_balance.to_string(), t.total_invoices)).collect();
    assert_eq!(
        ranked,
        [
            ("Big Supplier", "850".to_string(), 1),
            ("Small Supplier", "200".to_string(), 1),
            ("Apollo Pharmacy", "0".to_string(), 0)
        ],
        "active vendors only"
    );
    assert_eq!(fx.engine.top_vendors(&fx.admin, 1).await.unwrap().len(), 1);

    let recent = fx.engine.recent_invoices(&fx.admin, 3).await.unwrap();
    assert_eq!(
        recent.iter().map(|i| i.id).collect::<Vec<_>>(),
        [i4.id, i3.id, i2.id],
        "newest created first, canceled included"
    );
    assert_eq!(recent[1].status, InvoiceStatus::Canceled);

    let months = fx.engine.monthly_transactions(&fx.admin).await.unwrap();
    assert_eq!(months.len(), 12, "D12: exactly twelve rows");
    assert_eq!(months[0].month, "2024-05");
    assert_eq!(months[11].month, "2023-06");
    assert_eq!((months[0].total_amount, months[0].transaction_count), (dec("100"), 1));
    assert_eq!((months[1].total_amount, months[1].transaction_count), (dec("75"), 2));
    assert_eq!((months[11].total_amount, months[11].transaction_count), (dec("75"), 1));
    assert_eq!((months[5].total_amount, months[5].transaction_count), (dec("0"), 0), "empty months are zero rows");
}

/// Every write is audited with who, what and why (D16, D22).
pub async fn audit_log_records_writes_with_reasons<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Audited").await;
    fx.advance(SignedDuration::from_secs(1));
    fx.engine.update_vendor(&fx.admin, vendor.id, NewVendor::new("Audited 2", VendorType::Agency)).await.unwrap();
    fx.advance(SignedDuration::from_secs(1));
    fx.engine.delete_vendor(&fx.admin, vendor.id, Some("closed down".into())).await.unwrap();
    fx.advance(SignedDuration::from_secs(1));
    fx.engine.restore_vendor(&fx.admin, vendor.id).await.unwrap();
    let id = vendor.id.to_string();
    let query = AuditQuery::from_params(&params(&[("entity", "vendor"), ("entityId", &id)])).unwrap();
    let entries = fx.engine.list_audit(&fx.admin, &query).await.unwrap();
    let actions: Vec<&str> = entries.items.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(actions, ["restore", "delete", "update", "create"], "newest first");
    assert!(entries.items.iter().all(|e| e.user_id == Some(fx.admin.user_id) && e.entity == "Vendor"));
    assert_eq!(entries.items[1].reason.as_deref(), Some("closed down"), "D16");
    let changes: Value = serde_json::from_str(entries.items[2].changes.as_deref().unwrap()).unwrap();
    assert_eq!(changes["name"], "Audited 2");

    let _ = fx.engine.login("admin@example.com", "wrong").await;
    fx.engine.login("admin@example.com", "admin-password").await.unwrap();
    fx.engine.update_setting(&fx.admin, "Currency", "€").await.unwrap();
    let all = fx
        .engine
        .list_audit(&fx.admin, &AuditQuery::from_params(&params(&[("pageSize", "100")])).unwrap())
        .await
        .unwrap();
    let actions: Vec<(&str, &str)> = all.items.iter().take(3).map(|e| (e.action.as_str(), e.entity.as_str())).collect();
    assert_eq!(actions, [("update", "Setting"), ("login", "User"), ("login_failed", "User")]);
    assert!(
        all.items.iter().all(|e| !e.changes.as_deref().unwrap_or("").contains("password")),
        "no secrets in the log"
    );
    let by_user = fx
        .engine
        .list_audit(&fx.admin, &AuditQuery::from_params(&params(&[("userId", &fx.admin.user_id.to_string())])).unwrap())
        .await
        .unwrap();
    assert!(by_user.total_count >= 5);
    let later = AuditQuery::from_params(&params(&[("fromDate", "2030-01-01")])).unwrap();
    assert_eq!(fx.engine.list_audit(&fx.admin, &later).await.unwrap().total_count, 0);
}

/// Exports read the list filters in id order, in batches after a cursor (D26).
pub async fn exports_read_in_id_batches_with_the_list_filters<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let store = fx.engine.store();
    let today_start = ts("2024-05-10T00:00:00Z");
    let vendor = fx.vendor("Exporter").await;
    let other = fx.vendor("Other").await;
    let mut invoices = Vec::new();
    for n in 0..7 {
        let owner = if n % 2 == 0 { vendor.id } else { other.id };
        invoices.push(fx.invoice(owner, &format!("EX-{n}"), "10", "2024-06-01T00:00:00Z").await.id);
    }
    fx.engine.delete_invoice(&fx.admin, invoices[2], None).await.unwrap();
    let filter =
        crate::invoices::InvoiceFilter { is_active: Some(true), vendor_id: Some(vendor.id), ..Default::default() };
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let batch = store.export_invoices(&filter, today_start, after, 2).await.unwrap();
        assert!(batch.len() <= 2, "a batch holds at most the limit");
        let Some(last) = batch.last() else { break };
        after = Some(last.id);
        seen.extend(batch.iter().map(|invoice| invoice.id));
    }
    assert_eq!(seen, [invoices[0], invoices[4], invoices[6]], "active invoices of the vendor, in id order");

    let payment = fx.pay(invoices[0], "4").await;
    let deleted = fx.pay(invoices[1], "5").await;
    fx.engine.delete_transaction(&fx.admin, deleted.id, None).await.unwrap();
    let active = crate::transactions::TransactionFilter::default();
    let exported = store.export_transactions(&active, None, 100).await.unwrap();
    assert_eq!(exported.iter().map(|t| t.id).collect::<Vec<_>>(), [payment.id]);
    assert_eq!(exported[0].invoice.pending_amount, dec("6"));
    assert!(store.export_transactions(&active, Some(payment.id), 100).await.unwrap().is_empty());

    let vendors = store.export_vendors(&crate::vendors::VendorFilter::default(), None, 100).await.unwrap();
    assert_eq!(vendors.len(), 3, "the pharmacy and the two vendors");
    assert!(vendors.windows(2).all(|pair| pair[0].id < pair[1].id));
    assert_eq!(vendors[1].totals.total_invoice_value, dec("30"), "totals as the list shows them");
}

/// Aggregates stay exact far beyond what one 64-bit sum of scaled amounts can hold.
pub async fn aggregates_stay_exact_beyond_sixty_four_bits<S: Store + BulkLoadStore>(store: S) {
    use crate::store::BulkInvoice;
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Giant").await;
    let at = ts("2024-01-01T00:00:00Z");
    // 1,000 invoices of the largest amount: about 1e19 ten-thousandths, past i64::MAX.
    let invoices: Vec<BulkInvoice> = (0..1000)
        .map(|n| BulkInvoice {
            invoice: fx.new_invoice(vendor.id, &format!("G-{n}"), "999999999999.9999", "2024-06-01T00:00:00Z"),
            is_active: true,
            created_at: at,
        })
        .collect();
    fx.engine.store().load_invoices(invoices).await.expect("imported");
    let summary = fx.engine.dashboard_summary(&fx.admin).await.expect("the summary does not overflow");
    assert_eq!(summary.total_due, dec("999999999999999.9"));
    let read = fx.engine.get_vendor(&fx.admin, vendor.id).await.expect("vendor totals do not overflow");
    assert_eq!(read.totals.total_invoice_value, dec("999999999999999.9"));
    let top = fx.engine.top_vendors(&fx.admin, 1).await.unwrap();
    assert_eq!(top[0].outstanding_balance, dec("999999999999999.9"));
    let sorted = fx
        .engine
        .list_vendors(&fx.admin, &vendor_query(&[("sortBy", "outstandingBalance"), ("sortDir", "desc")]))
        .await
        .unwrap();
    assert_eq!(sorted.items[0].id, vendor.id);
}

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

/// Imports write many records at once and keep every invariant.
pub async fn imports_keep_paid_totals_and_unique_numbers<S: Store + BulkLoadStore>(store: S) {
    use crate::store::{BulkInvoice, BulkTransaction, BulkVendor};
    let fx = Fixture::new(store).await;
    let store = fx.engine.store();
    let at = ts("2023-01-01T00:00:00Z");
    let vendor_ids = store
        .load_vendors(vec![
            BulkVendor { vendor: NewVendor::new("Imported A", VendorType::Dealer), is_active: true, created_at: at },
            BulkVendor { vendor: NewVendor::new("Imported B", VendorType::Agency), is_active: false, created_at: at },
        ])
        .await
        .unwrap();
    assert_eq!(vendor_ids.len(), 2);
    let own = BulkVendor { vendor: NewVendor::new("Mine", VendorType::OwnPharmacy), is_active: true, created_at: at };
    assert!(matches!(
        store.load_vendors(vec![own]).await,
        Err(crate::store::StoreError::Rule(RuleBroken::OwnPharmacyType))
    ));

    let invoice = |vendor: VendorId, number: &str, active: bool| BulkInvoice {
        invoice: fx.new_invoice(vendor, number, "100", "2023-02-01T00:00:00Z"),
        is_active: active,
        created_at: at,
    };
    let invoice_ids = store
        .load_invoices(vec![
            invoice(vendor_ids[0], "IMP-1", true),
            invoice(vendor_ids[1], "IMP-2", true),
            invoice(vendor_ids[0], "IMP-1", false),
        ])
        .await
        .unwrap();
    assert_eq!(invoice_ids.len(), 3, "a canceled duplicate number is allowed");
    let clash =
        store.load_invoices(vec![invoice(vendor_ids[0], "imp-3", true), invoice(vendor_ids[0], "IMP-3", true)]).await;
    assert!(
        matches!(clash, Err(crate::store::StoreError::Conflict(UniqueKey::InvoiceNumber))),
        "numbers clash within a batch"
    );
    let taken = store.load_invoices(vec![invoice(vendor_ids[0], "imp-1", true)]).await;
    assert!(matches!(taken, Err(crate::store::StoreError::Conflict(_))), "and against stored invoices");
    let missing = store.load_invoices(vec![invoice(VendorId(9999), "IMP-9", true)]).await;
    assert!(matches!(missing, Err(crate::store::StoreError::ParentInactive(Entity::Vendor))));
    let listed = fx.engine.list_invoices(&fx.admin, &invoice_query(&[("search", "imp-3")])).await.unwrap();
    assert_eq!(listed.total_count, 0, "a refused batch writes nothing");

    let payment = |invoice: InvoiceId, paid: &str, active: bool| BulkTransaction {
        transaction: NewTransaction {
            invoice_id: invoice,
            amount: amount(paid),
            transaction_date: ts("2023-01-15T00:00:00Z"),
            transaction_type: TransactionType::Cash,
            reference: None,
            description: None,
        },
        is_active: active,
        created_at: at,
    };
    let payment_ids = store
        .load_transactions(vec![
            payment(invoice_ids[0], "30", true),
            payment(invoice_ids[0], "0.5", true),
            payment(invoice_ids[0], "99", false),
        ])
        .await
        .unwrap();
    assert_eq!(payment_ids.len(), 3);
    let read = fx.engine.get_invoice(&fx.admin, invoice_ids[0]).await.unwrap().invoice;
    assert_eq!((read.paid_amount, read.pending_amount()), (dec("30.5"), dec("69.5")), "active imported payments count");
    assert_eq!(read.created_at, at);
    store.load_transactions(vec![payment(invoice_ids[1], "100", true)]).await.unwrap();
    // Imports keep the status counts too: IMP-1 is overdue, IMP-2 fully paid, the duplicate
    // canceled. A second, redundant filter makes the store count rows instead of reading any
    // kept count, and both must agree.
    for (status, expected) in [("Overdue", vec![invoice_ids[0]]), ("FullyPaid", vec![invoice_ids[1]])] {
        let alone = fx.engine.list_invoices(&fx.admin, &invoice_query(&[("status", status)])).await.unwrap();
        let counted = fx
            .engine
            .list_invoices(&fx.admin, &invoice_query(&[("status", status), ("minAmount", "0.0001")]))
            .await
            .unwrap();
        assert_eq!(alone.items.iter().map(|i| i.id).collect::<Vec<_>>(), expected, "{status}");
        assert_eq!((alone.total_count, counted.total_count), (1, 1), "{status}");
    }
    let missing = store.load_transactions(vec![payment(InvoiceId(9999), "1", true)]).await;
    assert!(matches!(missing, Err(crate::store::StoreError::ParentInactive(Entity::Invoice))));
    let inactive_vendor = store
        .export_vendors(&crate::vendors::VendorFilter { is_active: false, ..Default::default() }, None, 10)
        .await
        .unwrap();
    assert_eq!(inactive_vendor.iter().map(|v| v.id).collect::<Vec<_>>(), [vendor_ids[1]]);
}
