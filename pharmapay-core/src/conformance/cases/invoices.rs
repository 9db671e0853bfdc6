//! Conformance cases: invoices with active vendors and unique numbers (D4, D5), their status
//! (D10), what falls due when and overpaid invoices kept visible (D32, D33), invoices refused
//! from expired licences under Block (D36), and the invoice list's filters and sorts.

use super::{field_error, invoice_query, vendor_query};
use super::{licensed_until, vendor_with};
use crate::conformance::{Fixture, amount, created, dec, invoice_order, invoice_sort_keys, ts};
use crate::error::{Entity, Error, RuleBroken};
use crate::ids::{InvoiceId, VendorId};
use crate::invoices::{InvoiceQuery, InvoiceStatus, NewInvoice};
use crate::paging::{PageRequest, Sort, SortDir};
use crate::store::{Store, UniqueKey};
use crate::vendors::{NewVendor, VendorType};
use jiff::SignedDuration;
use std::sync::Arc;

/// Invoices need an active vendor and a number free among active invoices (D4, D5, D15).
pub async fn invoices_enforce_active_vendors_and_unique_numbers<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Numbers").await;
    let gone = fx.vendor("Gone").await;
    fx.engine.delete_vendor(&fx.admin, gone.id, None).await.unwrap();
    let due = "2024-06-01T00:00:00Z";
    field_error(
        fx.engine.create_invoice(&fx.admin, fx.new_invoice(gone.id, "N-1", "10", due), None).await,
        "vendorId",
        "inactive vendor",
    );
    field_error(
        fx.engine.create_invoice(&fx.admin, fx.new_invoice(VendorId(9999), "N-1", "10", due), None).await,
        "vendorId",
        "missing vendor",
    );
    let mut backwards = fx.new_invoice(vendor.id, "N-1", "10", due);
    backwards.invoice_date = ts("2024-06-02T00:00:00Z");
    field_error(fx.engine.create_invoice(&fx.admin, backwards, None).await, "dueDate", "D2: due before invoice date");

    let first = fx.invoice(vendor.id, "INV-001", "10", due).await;
    for taken in ["INV-001", " inv-001 "] {
        match fx.engine.create_invoice(&fx.admin, fx.new_invoice(vendor.id, taken, "10", due), None).await {
            Err(Error::Conflict(UniqueKey::InvoiceNumber)) => {}
            other => panic!("D4/D5: {taken:?} clashes case-insensitively, got {other:?}"),
        }
    }
    let second = fx.invoice(vendor.id, "INV-002", "20", due).await;
    match fx.engine.update_invoice(&fx.admin, second.id, fx.new_invoice(vendor.id, "inv-001", "20", due)).await {
        Err(Error::Conflict(UniqueKey::InvoiceNumber)) => {}
        other => panic!("an update to a taken number clashes, got {other:?}"),
    }
    let same =
        fx.engine.update_invoice(&fx.admin, first.id, fx.new_invoice(vendor.id, "INV-001", "12.5", due)).await.unwrap();
    assert_eq!(same.amount, amount("12.5"), "keeping one's own number is fine");

    fx.engine.delete_invoice(&fx.admin, first.id, Some("entered twice".into())).await.unwrap();
    assert!(matches!(
        fx.engine.get_invoice(&fx.admin, first.id).await,
        Err(Error::NotFound { entity: Entity::Invoice })
    ));
    let reuse = fx.invoice(vendor.id, "INV-001", "30", due).await;
    assert_ne!(reuse.id, first.id, "a canceled invoice frees its number");
    match fx.engine.restore_invoice(&fx.admin, first.id).await {
        Err(Error::Conflict(UniqueKey::InvoiceNumber)) => {}
        other => panic!("D15: restoring onto a taken number clashes, got {other:?}"),
    }
    fx.engine.delete_invoice(&fx.admin, second.id, None).await.unwrap();
    fx.engine.delete_vendor(&fx.admin, vendor.id, None).await.unwrap();
    assert!(
        matches!(
            fx.engine.restore_invoice(&fx.admin, second.id).await,
            Err(Error::Rule(RuleBroken::ParentInactive(Entity::Vendor)))
        ),
        "D15: an inactive parent blocks a restore"
    );
    fx.engine.restore_vendor(&fx.admin, vendor.id).await.unwrap();
    let restored = fx.engine.restore_invoice(&fx.admin, second.id).await.unwrap();
    assert_eq!(restored.status, InvoiceStatus::PartiallyPaid);
    assert!(
        matches!(fx.engine.restore_invoice(&fx.admin, second.id).await, Err(Error::NotFound { .. })),
        "already active"
    );
    let detail = fx.engine.get_invoice(&fx.admin, second.id).await.unwrap();
    assert_eq!(detail.vendor.id, vendor.id);
    assert_eq!(detail.vendor.name, "Numbers");
    assert_eq!(detail.invoice.vendor_name, "Numbers");
}

/// Status follows the spec's table in priority order, with today from the clock (D10).
pub async fn invoice_status_follows_the_table_and_the_clock<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Status").await;
    let invoice = fx.invoice(vendor.id, "S-1", "100", "2024-05-11T00:00:00Z").await;
    assert_eq!(invoice.status, InvoiceStatus::PartiallyPaid, "nothing paid, not due");
    assert_eq!(invoice.paid_amount, dec("0"));
    assert_eq!(invoice.pending_amount(), dec("100"));
    let due_today = fx.invoice(vendor.id, "S-2", "5", "2024-05-10T00:00:00Z").await;
    assert_eq!(due_today.status, InvoiceStatus::PartiallyPaid, "due today is not overdue");

    fx.advance(SignedDuration::from_hours(20));
    let fx = &fx;
    let read = |id| async move { fx.engine.get_invoice(&fx.admin, id).await.unwrap().invoice };
    assert_eq!(read(invoice.id).await.status, InvoiceStatus::PartiallyPaid, "due day itself (2024-05-11)");
    fx.advance(SignedDuration::from_hours(20));
    assert_eq!(read(invoice.id).await.status, InvoiceStatus::Overdue, "the day after the due day");
    fx.pay(invoice.id, "40").await;
    let partly = read(invoice.id).await;
    assert_eq!(
        (partly.status, partly.paid_amount, partly.pending_amount()),
        (InvoiceStatus::Overdue, dec("40"), dec("60"))
    );
    fx.pay(invoice.id, "60").await;
    let paid = read(invoice.id).await;
    assert_eq!((paid.status, paid.pending_amount()), (InvoiceStatus::FullyPaid, dec("0")), "fully paid beats overdue");
    fx.pay(invoice.id, "0.0001").await;
    let over = read(invoice.id).await;
    assert_eq!((over.status, over.pending_amount()), (InvoiceStatus::FullyPaid, dec("-0.0001")), "D10: overpayment");
    fx.engine.delete_invoice(&fx.admin, invoice.id, None).await.unwrap();
    let canceled = fx.engine.list_invoices(&fx.admin, &invoice_query(&[("isActive", "false")])).await.unwrap().items;
    assert_eq!(canceled.len(), 1);
    assert_eq!(canceled[0].status, InvoiceStatus::Canceled);
    assert_eq!(canceled[0].paid_amount, dec("100.0001"), "D10: a canceled invoice keeps its figures");
}

/// Every filter of the invoice list, alone and combined (spec, Invoice list query).
pub async fn invoice_list_filters_by_every_parameter<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let acme = fx.vendor("Acme Distributors").await;
    let zenith = fx.vendor("Zenith").await;
    let overdue = fx.invoice(acme.id, "AC-100", "100", "2024-05-01T00:00:00Z").await;
    let paid = fx.invoice(acme.id, "AC-200", "200", "2024-06-01T00:00:00Z").await;
    let open = fx.invoice(zenith.id, "ZN-300", "300.5", "2024-06-01T00:00:00Z").await;
    let canceled = fx.invoice(zenith.id, "ZN-400", "400", "2024-06-01T00:00:00Z").await;
    fx.pay(paid.id, "200").await;
    fx.engine.delete_invoice(&fx.admin, canceled.id, None).await.unwrap();
    let fx = &fx;
    let ids = |pairs: &[(&str, &str)]| {
        let query = invoice_query(pairs);
        async move {
            let mut ids: Vec<InvoiceId> =
                fx.engine.list_invoices(&fx.admin, &query).await.unwrap().items.iter().map(|i| i.id).collect();
            ids.sort();
            ids
        }
    };
    assert_eq!(ids(&[]).await, [overdue.id, paid.id, open.id, canceled.id], "isActive omitted lists all");
    assert_eq!(ids(&[("isActive", "true")]).await, [overdue.id, paid.id, open.id]);
    assert_eq!(ids(&[("isActive", "false")]).await, [canceled.id]);
    assert_eq!(ids(&[("status", "Overdue")]).await, [overdue.id]);
    assert_eq!(ids(&[("status", "fullypaid")]).await, [paid.id]);
    assert_eq!(ids(&[("status", "PartiallyPaid")]).await, [open.id]);
    assert_eq!(ids(&[("status", "Canceled")]).await, [canceled.id]);
    assert_eq!(ids(&[("search", "acme")]).await, [overdue.id, paid.id], "search matches the vendor name");
    assert_eq!(ids(&[("search", "zn-3")]).await, [open.id], "search matches the number");
    assert_eq!(ids(&[("invoiceNumber", "AC")]).await, [overdue.id, paid.id]);
    assert_eq!(
        ids(&[("invoiceNumber", "zenith")]).await,
        Vec::<InvoiceId>::new(),
        "invoiceNumber ignores vendor names"
    );
    assert_eq!(ids(&[("vendorId", &zenith.id.to_string())]).await, [open.id, canceled.id]);
    assert_eq!(ids(&[("minAmount", "200"), ("maxAmount", "300.5")]).await, [paid.id, open.id], "bounds are inclusive");
    assert_eq!(
        ids(&[("fromDate", "2024-05-01"), ("toDate", "2024-05-01T00:00:00Z")]).await,
        [overdue.id],
        "date bounds are inclusive"
    );
    assert_eq!(ids(&[("search", "%")]).await, Vec::<InvoiceId>::new(), "LIKE wildcards are matched literally");
    assert_eq!(ids(&[("search", "_")]).await, Vec::<InvoiceId>::new(), "LIKE wildcards are matched literally");
    assert_eq!(ids(&[("status", "Overdue"), ("vendorId", &zenith.id.to_string())]).await, Vec::<InvoiceId>::new());
    // Numbers that end alike and begin apart: a long term matches as a whole, however a store's
    // index narrows the candidates first.
    let series = fx.invoice(acme.id, "QX1-000042", "1", "2024-06-01T00:00:00Z").await;
    let twin = fx.invoice(zenith.id, "QY1-000042", "1", "2024-06-01T00:00:00Z").await;
    assert_eq!(ids(&[("search", "qx1-000042")]).await, [series.id]);
    assert_eq!(ids(&[("search", "X1-00004")]).await, [series.id]);
    // LIKE's wildcards in a term long enough for a trigram index are matched literally too.
    let odd = fx.invoice(acme.id, "PCT%_1", "1", "2024-06-01T00:00:00Z").await;
    fx.invoice(acme.id, "PCTX1", "1", "2024-06-01T00:00:00Z").await;
    assert_eq!(ids(&[("search", "t%_")]).await, [odd.id], "wildcards in a long term are literal");
    // A number or a name holding a long term's pieces apart does not hold the term: the SQL
    // stores ask their trigram index for pieces of the term (`000` and `042`; `alp` and `pha`).
    fx.invoice(acme.id, "042-000", "1", "2024-06-01T00:00:00Z").await;
    assert_eq!(ids(&[("search", "1-000042")]).await, [series.id, twin.id]);
    let apart = fx.vendor("Alp Pharma").await;
    fx.invoice(apart.id, "AP-1", "1", "2024-06-01T00:00:00Z").await;
    assert_eq!(ids(&[("search", "alpha")]).await, Vec::<InvoiceId>::new());
    let vendors = fx.engine.list_vendors(&fx.admin, &vendor_query(&[("search", "alpha")])).await.unwrap();
    assert_eq!(vendors.total_count, 0, "{:?}", vendors.items);
}

/// Every invoice sort key, both directions, ties broken by id (D8).
pub async fn invoice_list_sorts_by_every_key_with_id_tie_breaks<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let b = fx.vendor("Bravo").await;
    let a = fx.vendor("alpha").await;
    let mut made = Vec::new();
    for (vendor, number, total, due, pay) in [
        (b.id, "XN-3", "50", "2024-06-03T00:00:00Z", Some("10")),
        (a.id, "xn-1", "50", "2024-06-01T00:00:00Z", None),
        (b.id, "XN-2", "75", "2024-06-01T00:00:00Z", Some("75")),
        (a.id, "XN-4", "20", "2024-06-02T00:00:00Z", Some("10")),
    ] {
        let invoice = fx.invoice(vendor, number, total, due).await;
        if let Some(paid) = pay {
            fx.pay(invoice.id, paid).await;
        }
        made.push(invoice.id);
        fx.advance(SignedDuration::from_secs(1));
    }
    for key in invoice_sort_keys() {
        for dir in [SortDir::Asc, SortDir::Desc] {
            let query = InvoiceQuery { sort: Sort { key, dir }, ..InvoiceQuery::default() };
            let items = fx.engine.list_invoices(&fx.admin, &query).await.unwrap().items;
            let mut expected = items.clone();
            expected.sort_by(|x, y| invoice_order(query.sort, x, y));
            let got: Vec<InvoiceId> = items.iter().map(|i| i.id).collect();
            let want: Vec<InvoiceId> = expected.iter().map(|i| i.id).collect();
            assert_eq!(got, want, "sort {key:?} {dir:?}");
            assert_eq!(got.len(), 4);
        }
    }
    // A search every number holds, long enough for the stores' trigram indexes to look it up,
    // lists the same order page by page and counts every match.
    for key in invoice_sort_keys() {
        for dir in [SortDir::Asc, SortDir::Desc] {
            let sort = Sort { key, dir };
            let whole = InvoiceQuery { sort, ..InvoiceQuery::default() };
            let whole: Vec<InvoiceId> =
                fx.engine.list_invoices(&fx.admin, &whole).await.unwrap().items.iter().map(|i| i.id).collect();
            let mut paged = Vec::new();
            for page in [1, 2] {
                let mut query = InvoiceQuery { sort, page: PageRequest::new(page, 3), ..InvoiceQuery::default() };
                query.filter.search = Some("xn-".into());
                let found = fx.engine.list_invoices(&fx.admin, &query).await.unwrap();
                assert_eq!(found.total_count, 4, "searched count, sort {key:?} {dir:?}, page {page}");
                paged.extend(found.items.iter().map(|i| i.id));
            }
            assert_eq!(paged, whole, "searched pages, sort {key:?} {dir:?}");
        }
    }
    let default = fx.engine.list_invoices(&fx.admin, &InvoiceQuery::default()).await.unwrap().items;
    assert_eq!(default.first().map(|i| i.id), Some(made[3]), "default: newest invoice date first (ties by id desc)");
}

/// Twenty creates of one invoice number: one success, nineteen conflicts (D5).
pub async fn concurrent_invoice_numbers_have_one_winner<S: Store>(store: S) {
    let fx = Arc::new(Fixture::new(store).await);
    let vendor = fx.vendor("Racer").await;
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let fx = Arc::clone(&fx);
        let input = fx.new_invoice(vendor.id, "RACE-1", "10", "2024-06-01T00:00:00Z");
        tasks.push(tokio::spawn(async move { fx.engine.create_invoice(&fx.admin, input, None).await }));
    }
    let (mut won, mut lost) = (0, 0);
    for task in tasks {
        match task.await.expect("no task panics") {
            Ok(_) => won += 1,
            Err(Error::Conflict(UniqueKey::InvoiceNumber)) => lost += 1,
            Err(other) => panic!("a losing create answers Conflict, got {other:?}"),
        }
    }
    assert_eq!((won, lost), (1, 19));
}

/// `ExpiredLicensePolicy` is `Warn` or `Block` in any case; under `Block` an invoice dated after
/// the vendor's licence expired is a 400 on `vendorId`, on create and on update (D36).
pub async fn expired_licences_block_invoices_only_under_block<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let lapsed = vendor_with(&fx, licensed_until("Lapsed Co", Some("2024-05-01T00:00:00Z"))).await.unwrap();
    let unlicensed = vendor_with(&fx, licensed_until("Undated Co", None)).await.unwrap();
    let warned = fx.invoice(lapsed.id, "W-1", "10", "2024-06-01T00:00:00Z").await;
    assert_eq!(warned.vendor_id, lapsed.id, "Warn (the default) accepts the invoice");

    field_error(fx.engine.update_setting(&fx.admin, "ExpiredLicensePolicy", "Sometimes").await, "value", "D36");
    let block = fx.engine.update_setting(&fx.admin, "ExpiredLicensePolicy", " block ").await.unwrap();
    assert_eq!(block.value, "Block", "kept in its canonical case");

    let after = fx.new_invoice(lapsed.id, "B-1", "10", "2024-06-01T00:00:00Z");
    field_error(fx.engine.create_invoice(&fx.admin, after, None).await, "vendorId", "dated after expiry");
    let on_last_day = NewInvoice {
        invoice_date: ts("2024-05-01T15:00:00Z"),
        ..fx.new_invoice(lapsed.id, "B-2", "10", "2024-06-01T00:00:00Z")
    };
    let kept =
        created(fx.engine.create_invoice(&fx.admin, on_last_day.clone(), None).await.expect("dated on its last day"));
    let moved = NewInvoice { invoice_date: ts("2024-05-02T00:00:00Z"), ..on_last_day };
    field_error(fx.engine.update_invoice(&fx.admin, kept.id, moved.clone()).await, "vendorId", "an update past expiry");
    fx.invoice(unlicensed.id, "U-1", "10", "2024-06-01T00:00:00Z").await;
    let renewed = NewVendor {
        drug_license_valid_until: Some(ts("2025-05-01T00:00:00Z")),
        ..NewVendor::new("Lapsed Co", VendorType::Manufacturer)
    };
    fx.engine.update_vendor(&fx.admin, lapsed.id, renewed).await.unwrap();
    fx.invoice(lapsed.id, "B-3", "10", "2024-06-01T00:00:00Z").await;

    let lapsed_again = licensed_until("Lapsed Co", Some("2024-05-01T00:00:00Z"));
    fx.engine.update_vendor(&fx.admin, lapsed.id, lapsed_again).await.unwrap();
    field_error(fx.engine.update_invoice(&fx.admin, kept.id, moved.clone()).await, "vendorId", "lapsed again");
    // D48: under Block, restoring an invoice dated after the expiry is refused as creating it
    // would be; one dated on the licence's last day comes back.
    fx.engine.delete_invoice(&fx.admin, warned.id, None).await.unwrap();
    fx.engine.delete_invoice(&fx.admin, kept.id, None).await.unwrap();
    field_error(fx.engine.restore_invoice(&fx.admin, warned.id).await, "vendorId", "a restore past expiry");
    assert!(fx.engine.get_invoice(&fx.admin, warned.id).await.is_err(), "still deleted");
    fx.engine.restore_invoice(&fx.admin, kept.id).await.expect("dated on the licence's last day");
    fx.engine.update_setting(&fx.admin, "ExpiredLicensePolicy", "Warn").await.unwrap();
    let updated = fx.engine.update_invoice(&fx.admin, kept.id, moved).await.expect("Warn accepts it again");
    assert_eq!(updated.invoice_date, ts("2024-05-02T00:00:00Z"));
    fx.engine.restore_invoice(&fx.admin, warned.id).await.expect("Warn restores it");
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
