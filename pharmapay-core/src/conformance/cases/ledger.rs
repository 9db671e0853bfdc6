//! Conformance cases: the ledger. Vendors, their life, the pharmacy's own record (D14) and
//! their totals (D11); invoices with active vendors and unique numbers (D4, D5) and their
//! status (D10); payments with exact paid and pending amounts (D10), moves between invoices
//! and the paid total's bound (D1); every list's filters, sorts and pages.

use std::sync::Arc;

use jiff::SignedDuration;

use super::{field_error, invoice_query, transaction_query, vendor_query};
use crate::conformance::{Fixture, amount, created, dec, invoice_order, invoice_sort_keys, ts};
use crate::error::{Entity, Error, RuleBroken};
use crate::ids::{InvoiceId, TransactionId, VendorId};
use crate::invoices::{InvoiceQuery, InvoiceStatus};
use crate::paging::{PageRequest, Sort, SortDir};
use crate::store::{Store, UniqueKey};
use crate::transactions::{NewTransaction, TransactionQuery, TransactionSortKey, TransactionType};
use crate::vendors::{NewVendor, VendorQuery, VendorType};

/// Vendor create, read, update, soft delete with reason, restore (spec; D14, D15, D17).
pub async fn vendors_are_created_read_updated_deleted_and_restored<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let mut input = NewVendor::new(" Sun Pharma ", VendorType::Manufacturer);
    input.address = Some("Plot 4\nAndheri".into());
    input.phone = Some("+91 22 1234".into());
    input.email = Some("orders@sun.example".into());
    input.drug_license_number1 = Some("DL-1".into());
    input.drug_license_number2 = Some("DL-2".into());
    input.additional_drug_license_numbers = vec!["DL-3".into(), "DL-4".into()];
    let vendor = created(fx.engine.create_vendor(&fx.admin, input.clone(), None).await.unwrap());
    assert_eq!(vendor.name, "Sun Pharma", "names are trimmed");
    assert_eq!(vendor.additional_drug_license_numbers, ["DL-3", "DL-4"]);
    assert_eq!(vendor.totals.outstanding_balance, dec("0"));
    assert!(vendor.is_active);
    assert_eq!(fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap(), vendor, "read returns what create returned");

    fx.advance(SignedDuration::from_mins(5));
    let mut update = NewVendor::new("Sun Pharmaceuticals", VendorType::Wholesaler);
    update.phone = Some("999".into());
    let updated = fx.engine.update_vendor(&fx.admin, vendor.id, update).await.unwrap();
    assert_eq!(updated.name, "Sun Pharmaceuticals");
    assert_eq!(updated.vendor_type, VendorType::Wholesaler);
    assert_eq!(updated.address, None, "D14: a PUT replaces every field");
    assert!(updated.additional_drug_license_numbers.is_empty());
    assert_eq!(updated.created_at, vendor.created_at);
    assert!(updated.updated_at > vendor.updated_at);

    fx.engine.delete_vendor(&fx.admin, vendor.id, Some("duplicate entry".into())).await.unwrap();
    assert!(matches!(
        fx.engine.get_vendor(&fx.admin, vendor.id).await,
        Err(Error::NotFound { entity: Entity::Vendor })
    ));
    assert!(
        matches!(fx.engine.delete_vendor(&fx.admin, vendor.id, None).await, Err(Error::NotFound { .. })),
        "delete twice"
    );
    assert!(matches!(
        fx.engine.update_vendor(&fx.admin, vendor.id, NewVendor::new("x", VendorType::Dealer)).await,
        Err(Error::NotFound { .. })
    ));
    let deleted = fx.engine.list_vendors(&fx.admin, &vendor_query(&[("isActive", "false")])).await.unwrap();
    assert_eq!(deleted.items.iter().map(|v| v.id).collect::<Vec<_>>(), [vendor.id]);
    assert!(!deleted.items[0].is_active);

    let restored = fx.engine.restore_vendor(&fx.admin, vendor.id).await.unwrap();
    assert!(restored.is_active);
    assert!(
        matches!(fx.engine.restore_vendor(&fx.admin, vendor.id).await, Err(Error::NotFound { .. })),
        "D15: already active"
    );
    assert!(matches!(fx.engine.restore_vendor(&fx.admin, VendorId(424242)).await, Err(Error::NotFound { .. })));
    assert!(matches!(fx.engine.get_vendor(&fx.admin, VendorId(424242)).await, Err(Error::NotFound { .. })));

    field_error(
        fx.engine.create_vendor(&fx.admin, NewVendor::new("Mine", VendorType::OwnPharmacy), None).await,
        "vendorType",
        "OwnPharmacy via create",
    );
    field_error(
        fx.engine.create_vendor(&fx.admin, NewVendor::new("   ", VendorType::Dealer), None).await,
        "name",
        "blank name",
    );
    let mut long = NewVendor::new("x".repeat(201), VendorType::Dealer);
    long.email = Some("bad".into());
    field_error(fx.engine.create_vendor(&fx.admin, long.clone(), None).await, "name", "long name");
    field_error(fx.engine.create_vendor(&fx.admin, long, None).await, "email", "bad email");
}

/// The OwnPharmacy vendor can be edited but not deleted or retyped (D14).
pub async fn own_pharmacy_vendor_is_protected<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let own = fx.engine.list_vendors(&fx.admin, &VendorQuery::default()).await.unwrap().items[0].clone();
    assert_eq!(own.vendor_type, VendorType::OwnPharmacy);
    assert!(matches!(
        fx.engine.delete_vendor(&fx.admin, own.id, None).await,
        Err(Error::Rule(RuleBroken::OwnPharmacyDelete))
    ));
    let to_dealer = NewVendor::new("Apollo", VendorType::Dealer);
    assert!(matches!(
        fx.engine.update_vendor(&fx.admin, own.id, to_dealer).await,
        Err(Error::Rule(RuleBroken::OwnPharmacyType))
    ));
    let renamed = fx
        .engine
        .update_vendor(&fx.admin, own.id, NewVendor::new("Apollo Care", VendorType::OwnPharmacy))
        .await
        .unwrap();
    assert_eq!(renamed.name, "Apollo Care");
    let dealer = fx.vendor("Dealer One").await;
    let to_own = NewVendor::new("Dealer One", VendorType::OwnPharmacy);
    assert!(matches!(
        fx.engine.update_vendor(&fx.admin, dealer.id, to_own).await,
        Err(Error::Rule(RuleBroken::OwnPharmacyType))
    ));
}

/// Vendor totals sum active invoices and their active payments; deleted vendors keep them (D11).
pub async fn vendor_totals_follow_active_invoices_and_payments<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let vendor = fx.vendor("Totals").await;
    let first = fx.invoice(vendor.id, "T-1", "100.25", "2024-06-01T00:00:00Z").await;
    let second = fx.invoice(vendor.id, "T-2", "50", "2024-06-01T00:00:00Z").await;
    fx.pay(first.id, "30.05").await;
    let payment = fx.pay(second.id, "10").await;
    let totals = fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap().totals;
    assert_eq!(
        (totals.total_invoice_value, totals.total_paid_amount, totals.outstanding_balance),
        (dec("150.25"), dec("40.05"), dec("110.2"))
    );
    fx.engine.delete_transaction(&fx.admin, payment.id, None).await.unwrap();
    fx.engine.delete_invoice(&fx.admin, second.id, None).await.unwrap();
    let totals = fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap().totals;
    assert_eq!(
        (totals.total_invoice_value, totals.total_paid_amount, totals.outstanding_balance),
        (dec("100.25"), dec("30.05"), dec("70.2")),
        "canceled invoices do not count"
    );
    fx.pay(first.id, "80").await;
    let totals = fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap().totals;
    assert_eq!(totals.outstanding_balance, dec("-9.8"), "overpayment makes the balance negative");
    fx.engine.delete_vendor(&fx.admin, vendor.id, None).await.unwrap();
    let deleted = fx.engine.list_vendors(&fx.admin, &vendor_query(&[("isActive", "false")])).await.unwrap();
    assert_eq!(deleted.items[0].totals, totals, "a soft-deleted vendor keeps its totals");
}

/// Vendor list: search, type filter, every sort with id tie-breaks, paging (spec; D8).
pub async fn vendor_list_filters_sorts_and_pages<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let names = [
        ("beta", VendorType::Dealer),
        ("Alpha", VendorType::Agency),
        ("gamma", VendorType::Dealer),
        ("alpha", VendorType::Wholesaler),
    ];
    let mut ids = Vec::new();
    for (name, vendor_type) in names {
        ids.push(
            created(fx.engine.create_vendor(&fx.admin, NewVendor::new(name, vendor_type), None).await.unwrap()).id,
        );
    }
    let big = fx.invoice(ids[2], "G-1", "500", "2024-06-01T00:00:00Z").await;
    fx.invoice(ids[0], "B-1", "70", "2024-06-01T00:00:00Z").await;
    fx.pay(big.id, "100").await;
    let names_of = |page: &crate::paging::Page<crate::vendors::Vendor>| {
        page.items.iter().map(|v| v.name.clone()).collect::<Vec<_>>()
    };

    let all = fx.engine.list_vendors(&fx.admin, &VendorQuery::default()).await.unwrap();
    assert_eq!(
        names_of(&all),
        ["Alpha", "alpha", "Apollo Pharmacy", "beta", "gamma"],
        "name, case-insensitive, then id"
    );
    let desc = fx.engine.list_vendors(&fx.admin, &vendor_query(&[("sortDir", "desc")])).await.unwrap();
    assert_eq!(
        names_of(&desc),
        ["gamma", "beta", "Apollo Pharmacy", "alpha", "Alpha"],
        "ties reverse with the direction"
    );
    let search = fx.engine.list_vendors(&fx.admin, &vendor_query(&[("search", "ALP")])).await.unwrap();
    assert_eq!(names_of(&search), ["Alpha", "alpha"]);
    let dealers = fx.engine.list_vendors(&fx.admin, &vendor_query(&[("vendorType", "dealer")])).await.unwrap();
    assert_eq!(names_of(&dealers), ["beta", "gamma"]);
    let by_type = fx.engine.list_vendors(&fx.admin, &vendor_query(&[("sortBy", "vendorType")])).await.unwrap();
    let types: Vec<&str> = by_type.items.iter().map(|v| v.vendor_type.name()).collect();
    assert_eq!(types, ["Agency", "Dealer", "Dealer", "OwnPharmacy", "Wholesaler"]);
    let by_balance = fx
        .engine
        .list_vendors(&fx.admin, &vendor_query(&[("sortBy", "outstandingBalance"), ("sortDir", "desc")]))
        .await
        .unwrap();
    assert_eq!(names_of(&by_balance)[..2], ["gamma", "beta"]);
    assert_eq!(by_balance.items[0].totals.outstanding_balance, dec("400"));

    let mut seen = Vec::new();
    for page in 1..=3 {
        let query = VendorQuery { page: PageRequest::new(page, 2), ..VendorQuery::default() };
        let result = fx.engine.list_vendors(&fx.admin, &query).await.unwrap();
        assert_eq!(result.total_count, 5);
        assert_eq!((result.page, result.page_size), (page, 2));
        seen.extend(result.items.iter().map(|v| v.id));
    }
    assert_eq!(seen, all.items.iter().map(|v| v.id).collect::<Vec<_>>(), "pages are disjoint and cover the list");
    let beyond = fx
        .engine
        .list_vendors(&fx.admin, &VendorQuery { page: PageRequest::new(9, 2), ..VendorQuery::default() })
        .await
        .unwrap();
    assert!(beyond.items.is_empty());
    assert_eq!(beyond.total_count, 5);
}

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
