//! Conformance cases: settings (D3), dashboard figures (D12), the audit log (D22), exports
//! (D26), exact aggregates past 64 bits, bulk loads through
//! [`BulkLoadStore`](crate::store::BulkLoadStore), the payables aging (D34) and a vendor's
//! statement (D35), and their pages (D43).

use super::{GSTIN_A, dated_invoice, day, gstin, paid_on, vendor_with};
use super::{field_error, invoice_query, params, vendor_query};
use crate::conformance::{Fixture, amount, created, dec, ts};
use crate::error::{Entity, Error, RuleBroken};
use crate::ids::{InvoiceId, VendorId};
use crate::invoices::InvoiceStatus;
use crate::paging::PagePlace;
use crate::reports::aging::{AgingBucket, AgingQuery};
use crate::reports::audit::AuditQuery;
use crate::reports::statement::{StatementLineKind, StatementQuery};
use crate::store::{BulkLoadStore, Store, UniqueKey};
use crate::transactions::{NewTransaction, TransactionType};
use crate::vendors::{NewVendor, Vendor, VendorType};
use jiff::SignedDuration;
use jiff::civil::Date;
use rust_decimal::Decimal;
use serde_json::Value;

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

/// What each vendor owed on a day, by how late it was: payments after the day never shrink it,
/// invoices dated after it are not in it, and every figure adds up exactly (D34).
pub async fn aging_buckets_what_was_owed_on_the_day<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let acme = fx.vendor("Acme").await;
    let zen = fx.vendor("Zen").await;
    let quiet = fx.vendor("Quiet").await;
    // Today is 10 May 2024 (UTC). Due today: not due; 9 May: 1 day; 10 April: 30 days;
    // 9 April: 31 days; 1 November 2023: over 180 days.
    let not_due = dated_invoice(&fx, acme.id, "A-0", "100.10", "2024-05-01T00:00:00Z", "2024-05-10T23:00:00Z").await;
    let one_day = dated_invoice(&fx, acme.id, "A-1", "200", "2024-04-01T00:00:00Z", "2024-05-09T00:00:00Z").await;
    dated_invoice(&fx, acme.id, "A-30", "0.05", "2024-03-01T00:00:00Z", "2024-04-10T00:00:00Z").await;
    dated_invoice(&fx, acme.id, "A-31", "31", "2024-03-01T00:00:00Z", "2024-04-09T00:00:00Z").await;
    dated_invoice(&fx, acme.id, "A-old", "1000", "2023-10-01T00:00:00Z", "2023-11-01T00:00:00Z").await;
    let settled = dated_invoice(&fx, acme.id, "A-paid", "50", "2024-04-01T00:00:00Z", "2024-04-20T00:00:00Z").await;
    let canceled = dated_invoice(&fx, acme.id, "A-gone", "70", "2024-04-01T00:00:00Z", "2024-04-20T00:00:00Z").await;
    let overpaid = dated_invoice(&fx, zen.id, "Z-over", "10", "2024-04-01T00:00:00Z", "2024-04-20T00:00:00Z").await;
    dated_invoice(&fx, zen.id, "Z-1", "2000", "2024-05-02T00:00:00Z", "2024-05-05T00:00:00Z").await;
    let quiet_paid = dated_invoice(&fx, quiet.id, "Q-1", "5", "2024-04-01T00:00:00Z", "2024-04-20T00:00:00Z").await;
    paid_on(&fx, one_day, "50", "2024-04-15T00:00:00Z").await;
    paid_on(&fx, not_due, "0.10", "2024-05-10T08:00:00Z").await;
    paid_on(&fx, settled, "50", "2024-04-25T00:00:00Z").await;
    paid_on(&fx, overpaid, "15", "2024-04-25T00:00:00Z").await;
    paid_on(&fx, quiet_paid, "5", "2024-04-25T00:00:00Z").await;
    fx.engine.delete_invoice(&fx.admin, canceled, None).await.unwrap();

    let today = fx.engine.aging(&fx.admin, &AgingQuery::default()).await.unwrap();
    assert_eq!(today.as_of, day("2024-05-10"), "D34: asOf defaults to today");
    let order: Vec<VendorId> = today.vendors.iter().map(|row| row.vendor_id).collect();
    assert_eq!(order, [zen.id, acme.id], "by total descending; nothing owed, no row; overpaid counts nothing");
    let acme_row = &today.vendors[1];
    assert_eq!(acme_row.vendor_name, "Acme");
    let expected = [
        (AgingBucket::NotDue, "100"),
        (AgingBucket::Days1To30, "150.05"),
        (AgingBucket::Days31To60, "31"),
        (AgingBucket::Days61To90, "0"),
        (AgingBucket::Days91To180, "0"),
        (AgingBucket::Over180, "1000"),
    ];
    for (bucket, owed) in expected {
        assert_eq!(acme_row.figures.get(bucket), dec(owed), "Acme {}", bucket.field());
    }
    assert_eq!(acme_row.figures.total(), dec("1281.05"));
    assert_eq!(acme_row.figures.invoice_count, 5, "the paid and the canceled invoice are not counted");
    let zen_row = &today.vendors[0];
    assert_eq!((zen_row.figures.get(AgingBucket::Days1To30), zen_row.figures.invoice_count), (dec("2000"), 1));
    assert_eq!(today.totals.total(), dec("3281.05"));
    assert_eq!(today.totals.get(AgingBucket::Days1To30), dec("2150.05"));
    assert_eq!(today.totals.invoice_count, 6);
    let outstanding = |vendor: &Vendor| vendor.totals.outstanding_balance;
    let acme_now = fx.engine.get_vendor(&fx.admin, acme.id).await.unwrap();
    assert_eq!(acme_row.figures.total(), outstanding(&acme_now), "today's aging of a vendor is what it is owed");

    // On 14 April: A-0 and Z-1 were not yet invoiced, A-1's 50 was not yet paid, and A-paid was
    // owed in full and not yet due.
    let past =
        fx.engine.aging(&fx.admin, &AgingQuery { as_of: Some(day("2024-04-14")), vendor_id: None, page: None }).await;
    let past = past.unwrap();
    assert_eq!(past.vendors.iter().map(|row| row.vendor_id).collect::<Vec<_>>(), [acme.id, zen.id, quiet.id]);
    let acme_then = &past.vendors[0].figures;
    assert_eq!(acme_then.get(AgingBucket::NotDue), dec("250"), "A-1's 200 (due 9 May) and A-paid's 50, paid later");
    assert_eq!(acme_then.get(AgingBucket::Days1To30), dec("31.05"), "A-30 (4 days) and A-31 (5 days)");
    assert_eq!(acme_then.get(AgingBucket::Days91To180), dec("1000"), "A-old, 165 days past due");
    assert_eq!(acme_then.invoice_count, 5);
    assert_eq!(past.totals.total(), dec("1296.05"), "Acme 1281.05, Zen's Z-over 10, Quiet's Q-1 5");

    let just_zen = AgingQuery { as_of: None, vendor_id: Some(zen.id), page: None };
    let just_zen = fx.engine.aging(&fx.admin, &just_zen).await.unwrap();
    assert_eq!(just_zen.vendors.len(), 1);
    assert_eq!(just_zen.totals.total(), dec("2000"));
    let tomorrow = AgingQuery { as_of: Some(day("2024-05-11")), vendor_id: None, page: None };
    field_error(fx.engine.aging(&fx.admin, &tomorrow).await, "asOf", "D34: not after today");
    let unknown = AgingQuery { as_of: None, vendor_id: Some(VendorId(9_999)), page: None };
    assert!(matches!(fx.engine.aging(&fx.admin, &unknown).await, Err(Error::NotFound { entity: Entity::Vendor })));
    let sum: Decimal = AgingBucket::ALL.iter().map(|bucket| today.totals.get(*bucket)).sum();
    assert_eq!(sum, today.totals.total(), "total is the buckets' sum");
}

/// A vendor's statement opens with what was owed before the range, runs line by line in date
/// order (invoices before payments on a day) and closes at opening + invoiced - paid (D35).
pub async fn vendor_statements_open_run_and_close<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor =
        vendor_with(&fx, NewVendor { gstin: Some(gstin(GSTIN_A)), ..NewVendor::new("Stated", VendorType::Wholesaler) })
            .await
            .unwrap();
    let other = fx.vendor("Other").await;
    let april = dated_invoice(&fx, vendor.id, "S-APR", "500", "2024-04-10T00:00:00Z", "2024-05-10T00:00:00Z").await;
    let may = dated_invoice(&fx, vendor.id, "S-MAY", "300.50", "2024-05-03T00:00:00Z", "2024-06-03T00:00:00Z").await;
    let canceled = dated_invoice(&fx, vendor.id, "S-X", "99", "2024-05-03T00:00:00Z", "2024-06-03T00:00:00Z").await;
    let others = dated_invoice(&fx, other.id, "O-1", "42", "2024-05-03T00:00:00Z", "2024-06-03T00:00:00Z").await;
    paid_on(&fx, april, "100", "2024-04-20T00:00:00Z").await;
    paid_on(&fx, april, "150.25", "2024-05-03T00:00:00Z").await;
    let first_may = paid_on(&fx, may, "0.50", "2024-05-06T00:00:00Z").await;
    paid_on(&fx, others, "2", "2024-05-06T00:00:00Z").await;
    let mistaken = created(
        fx.engine
            .create_transaction(&fx.admin, NewTransaction { description: Some("typo".into()), ..first_may }, None)
            .await
            .unwrap(),
    );
    fx.engine.delete_transaction(&fx.admin, mistaken.id, None).await.unwrap();
    fx.engine.delete_invoice(&fx.admin, canceled, None).await.unwrap();

    let may_statement = fx.engine.vendor_statement(&fx.admin, vendor.id, &StatementQuery::default()).await.unwrap();
    assert_eq!(
        (may_statement.from_date, may_statement.to_date),
        (day("2024-05-01"), day("2024-05-10")),
        "D35 defaults"
    );
    assert_eq!(may_statement.vendor.gstin.as_deref(), Some(GSTIN_A));
    let figures = &may_statement.figures;
    assert_eq!(figures.opening_balance, dec("400"), "500 invoiced, 100 paid before May");
    let lines: Vec<(Date, StatementLineKind, &str, Decimal, Decimal, Decimal)> = figures
        .lines
        .iter()
        .map(|line| {
            (
                line.entry.date,
                line.entry.kind,
                line.entry.invoice_number.as_deref().unwrap_or(""),
                line.invoiced,
                line.paid,
                line.balance,
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            (day("2024-05-03"), StatementLineKind::Invoice, "S-MAY", dec("300.50"), dec("0"), dec("700.50")),
            (day("2024-05-03"), StatementLineKind::Payment, "S-APR", dec("0"), dec("150.25"), dec("550.25")),
            (day("2024-05-06"), StatementLineKind::Payment, "S-MAY", dec("0"), dec("0.50"), dec("549.75")),
        ],
        "invoices before payments on a day; canceled invoices, deleted payments and other vendors are left out"
    );
    assert!(figures.lines[0].entry.transaction_id.is_none(), "an invoice line has no transaction");
    assert!(figures.lines[1].entry.transaction_id.is_some());
    assert_eq!((figures.total_invoiced, figures.total_paid), (dec("300.50"), dec("150.75")));
    assert_eq!(figures.closing_balance, figures.opening_balance + figures.total_invoiced - figures.total_paid);
    assert_eq!(figures.closing_balance, dec("549.75"));

    let everything = StatementQuery { from_date: Some(day("2020-01-01")), to_date: None, page: None };
    let everything = fx.engine.vendor_statement(&fx.admin, vendor.id, &everything).await.unwrap();
    assert_eq!(everything.figures.opening_balance, Decimal::ZERO);
    let balance = fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap().totals.outstanding_balance;
    assert_eq!(
        everything.figures.closing_balance, balance,
        "a range from before the first invoice closes at the balance"
    );
    assert_eq!(everything.figures.lines.len(), 5);

    let april_only =
        StatementQuery { from_date: Some(day("2024-04-01")), to_date: Some(day("2024-04-30")), page: None };
    let april_only = fx.engine.vendor_statement(&fx.admin, vendor.id, &april_only).await.unwrap();
    assert_eq!((april_only.figures.lines.len(), april_only.figures.closing_balance), (2, dec("400")));

    let backwards = StatementQuery { from_date: Some(day("2024-05-10")), to_date: Some(day("2024-05-01")), page: None };
    field_error(fx.engine.vendor_statement(&fx.admin, vendor.id, &backwards).await, "fromDate", "D35: from after to");
    let only_from = StatementQuery { from_date: Some(day("2024-06-01")), to_date: None, page: None };
    assert!(
        matches!(fx.engine.vendor_statement(&fx.admin, vendor.id, &only_from).await, Err(Error::Validation(_))),
        "a fromDate after the default toDate (today) is a 400 too"
    );
    assert!(matches!(
        fx.engine.vendor_statement(&fx.admin, VendorId(9_999), &StatementQuery::default()).await,
        Err(Error::NotFound { entity: Entity::Vendor })
    ));
    fx.engine.delete_vendor(&fx.admin, vendor.id, None).await.unwrap();
    let after_delete = fx.engine.vendor_statement(&fx.admin, vendor.id, &StatementQuery::default()).await.unwrap();
    assert_eq!(after_delete.figures, may_statement.figures, "an inactive vendor's statement is still served");
}

/// Asked for a page, the aging and a statement answer that page of their whole answer's rows,
/// in its order, with the whole answer's totals, opening and closing; a statement line's
/// balance runs on from the range's opening across pages; `page` alone takes the screen's page
/// size, a larger `pageSize` is clamped and a page past the end is empty (D43, D8).
pub async fn aging_and_statements_page_over_their_whole_answer<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let mut vendors = Vec::new();
    for owed in 1..=5 {
        let vendor = fx.vendor(&format!("Paged {owed}")).await;
        let number = format!("P-{owed}");
        let invoice =
            dated_invoice(&fx, vendor.id, &number, &format!("{owed}0"), "2024-05-01T00:00:00Z", "2024-05-05T00:00:00Z")
                .await;
        vendors.push((vendor, invoice));
    }
    let whole = fx.engine.aging(&fx.admin, &AgingQuery::default()).await.unwrap();
    assert_eq!((whole.vendors.len(), whole.page), (5, None), "without page or pageSize the answer is whole");
    let paged = |text: &'static [(&'static str, &'static str)]| AgingQuery::from_params(text).expect("parameters");
    let second = fx.engine.aging(&fx.admin, &paged(&[("page", "2"), ("pageSize", "2")])).await.unwrap();
    assert_eq!(second.vendors, whole.vendors[2..4], "the second page of two, in the whole answer's order");
    assert_eq!(second.totals, whole.totals, "totals cover the whole answer");
    assert_eq!(second.page, Some(PagePlace { page: 2, page_size: 2, total_count: 5 }));
    let last = fx.engine.aging(&fx.admin, &paged(&[("page", "3"), ("pageSize", "2")])).await.unwrap();
    assert_eq!(last.vendors, whole.vendors[4..]);
    let beyond = fx.engine.aging(&fx.admin, &paged(&[("page", "9"), ("pageSize", "2")])).await.unwrap();
    assert!(beyond.vendors.is_empty(), "a page past the end is empty");
    assert_eq!((beyond.totals, beyond.page.map(|p| p.total_count)), (whole.totals, Some(5)));
    let page_alone = fx.engine.aging(&fx.admin, &paged(&[("page", "1")])).await.unwrap();
    assert_eq!((page_alone.vendors, page_alone.page.map(|p| p.page_size)), (whole.vendors.clone(), Some(25)));
    let clamped = fx.engine.aging(&fx.admin, &paged(&[("pageSize", "1000")])).await.unwrap();
    assert_eq!(clamped.page, Some(PagePlace { page: 1, page_size: 100, total_count: 5 }), "D8 clamps pageSize");
    let errors = AgingQuery::from_params(&[("page", "0")]).expect_err("page 0");
    assert!(errors.contains("page"), "{errors}");

    let (vendor, invoice) = &vendors[4];
    let again = dated_invoice(&fx, vendor.id, "P-again", "7.5", "2024-05-02T00:00:00Z", "2024-05-30T00:00:00Z").await;
    paid_on(&fx, *invoice, "0.25", "2024-04-30T00:00:00Z").await;
    for (paid, on) in
        [("0.5", "2024-05-02"), ("1", "2024-05-03"), ("2.5", "2024-05-04"), ("3", "2024-05-04"), ("0.75", "2024-05-09")]
    {
        paid_on(&fx, again, paid, &format!("{on}T10:00:00Z")).await;
    }
    paid_on(&fx, *invoice, "4", "2024-05-06T00:00:00Z").await;
    let range = |extra: &'static [(&'static str, &'static str)]| {
        let mut text = vec![("fromDate", "2024-05-02")];
        text.extend_from_slice(extra);
        StatementQuery::from_params(text.as_slice()).expect("parameters")
    };
    let whole = fx.engine.vendor_statement(&fx.admin, vendor.id, &range(&[])).await.unwrap();
    assert_eq!((whole.figures.lines.len(), whole.page), (7, None));
    let mut joined = Vec::new();
    for page in ["1", "2", "3"] {
        let params: &'static [(&str, &str)] = match page {
            "1" => &[("page", "1"), ("pageSize", "3")],
            "2" => &[("page", "2"), ("pageSize", "3")],
            _ => &[("page", "3"), ("pageSize", "3")],
        };
        let part = fx.engine.vendor_statement(&fx.admin, vendor.id, &range(params)).await.unwrap();
        assert_eq!(part.page.map(|p| (p.page_size, p.total_count)), Some((3, 7)), "page {page}");
        assert_eq!(
            (part.figures.opening_balance, part.figures.total_invoiced, part.figures.total_paid),
            (whole.figures.opening_balance, whole.figures.total_invoiced, whole.figures.total_paid),
            "page {page}: opening and totals of the whole range"
        );
        assert_eq!(part.figures.closing_balance, whole.figures.closing_balance, "page {page}");
        joined.extend(part.figures.lines);
    }
    assert_eq!(joined, whole.figures.lines, "the pages put together are the whole statement, balances and all");
    assert_eq!(whole.figures.opening_balance, dec("49.75"), "50 invoiced, 0.25 paid before May");
    assert_eq!(
        joined[3].balance,
        dec("49.75") + dec("7.5") - dec("0.5") - dec("1") - dec("2.5"),
        "a page's first line"
    );
    let page_alone = fx.engine.vendor_statement(&fx.admin, vendor.id, &range(&[("page", "1")])).await.unwrap();
    assert_eq!(page_alone.page.map(|p| p.page_size), Some(100), "D43: page alone takes pageSize 100");
}

/// Today's aging, a page at a time, is the whole aging cut to that page even where the kept
/// figures count rows the day does not (D43, D41): an invoice dated after today, a payment
/// dated after today once the `TimeZone` setting moves a day back, and an overpaid invoice
/// beside an open one, whose vendor's balance is below what it is owed.
pub async fn todays_aging_pages_are_the_whole_aging_cut<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let due = "2024-04-01T00:00:00Z";
    for (name, owed) in [("Even A", "30"), ("even b", "30"), ("Plain", "45"), ("Small", "5")] {
        let vendor = fx.vendor(name).await;
        dated_invoice(&fx, vendor.id, &format!("T-{name}"), owed, "2024-03-01T00:00:00Z", due).await;
    }
    // Kept: 1,000 owed; today: 20, as the invoice dated next week does not count yet.
    let future = fx.vendor("Future").await;
    dated_invoice(&fx, future.id, "F-now", "20", "2024-03-01T00:00:00Z", due).await;
    dated_invoice(&fx, future.id, "F-later", "980", "2024-05-17T00:00:00Z", "2024-06-17T00:00:00Z").await;
    // Kept: owed 10 (its balance, 10 - 40 overpaid, is below zero); today: the same.
    let overpaid = fx.vendor("Overpaid").await;
    let over = dated_invoice(&fx, overpaid.id, "O-1", "10", "2024-03-01T00:00:00Z", due).await;
    paid_on(&fx, over, "50", "2024-05-01T00:00:00Z").await;
    dated_invoice(&fx, overpaid.id, "O-2", "10", "2024-03-01T00:00:00Z", "2024-05-20T00:00:00Z").await;
    // Paid in full on 11 May in Kiritimati's day, so owed nothing by the kept figures; back on
    // UTC that payment is dated tomorrow, and today it still owes 60.
    let early = fx.vendor("Early Payer").await;
    let early_invoice = dated_invoice(&fx, early.id, "E-1", "60", "2024-03-01T00:00:00Z", due).await;
    fx.engine.update_setting(&fx.admin, "TimeZone", "Pacific/Kiritimati").await.unwrap();
    paid_on(&fx, early_invoice, "60", "2024-05-11T05:00:00Z").await;
    fx.engine.update_setting(&fx.admin, "TimeZone", "UTC").await.unwrap();

    let whole = fx.engine.aging(&fx.admin, &AgingQuery::default()).await.unwrap();
    let order: Vec<&str> = whole.vendors.iter().map(|row| row.vendor_name.as_str()).collect();
    assert_eq!(
        order,
        ["Early Payer", "Plain", "Even A", "even b", "Future", "Overpaid", "Small"],
        "the whole aging of today"
    );
    assert_eq!(whole.totals.total(), dec("200"));
    for size in 1..=8 {
        let pages = whole.vendors.len().div_ceil(size) + 1;
        let mut joined = Vec::new();
        for page in 1..=pages {
            let query = AgingQuery {
                page: Some(crate::paging::PageRequest::new(page as u32, size as u32)),
                ..AgingQuery::default()
            };
            let part = fx.engine.aging(&fx.admin, &query).await.unwrap();
            assert_eq!(part.totals, whole.totals, "size {size}, page {page}: the totals of the whole");
            assert_eq!(
                part.page,
                Some(PagePlace { page: page as u32, page_size: size as u32, total_count: 7 }),
                "size {size}, page {page}"
            );
            joined.extend(part.vendors);
        }
        assert_eq!(joined, whole.vendors, "pages of {size}, put together");
    }
}

/// With more vendors disturbed by rows dated after today than are worth adding up one by one,
/// today's aging page is cut from the whole aging instead, and is the same page (D43).
pub async fn todays_aging_page_with_many_future_invoices_is_the_whole_cut<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    for n in 0..505 {
        let vendor = fx.vendor(&format!("Ahead {n:03}")).await;
        dated_invoice(&fx, vendor.id, &format!("A-{n}"), "10", "2024-05-20T00:00:00Z", "2024-06-20T00:00:00Z").await;
        if n % 100 == 0 {
            let owed = format!("{}", n + 1);
            dated_invoice(&fx, vendor.id, &format!("N-{n}"), &owed, "2024-03-01T00:00:00Z", "2024-04-01T00:00:00Z")
                .await;
        }
    }
    let whole = fx.engine.aging(&fx.admin, &AgingQuery::default()).await.unwrap();
    assert_eq!(whole.vendors.len(), 6, "only the invoices dated by today count");
    for (page, size) in [(1, 2), (2, 2), (3, 2), (1, 25)] {
        let query = AgingQuery { page: Some(crate::paging::PageRequest::new(page, size)), ..AgingQuery::default() };
        let part = fx.engine.aging(&fx.admin, &query).await.unwrap();
        let start = ((page - 1) * size) as usize;
        let end = (start + size as usize).min(whole.vendors.len());
        assert_eq!(part.vendors, whole.vendors[start..end], "page {page} of {size}");
        assert_eq!((part.totals, part.page.map(|p| p.total_count)), (whole.totals, Some(6)));
    }
}
