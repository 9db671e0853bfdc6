//! Conformance cases: vendors, their life, the pharmacy's own record (D14) and their totals
//! (D11); GSTINs kept upper-cased and unique among active vendors (D37); drug licence status
//! and its alerts (D36); the vendor list's filters, sorts and pages.

use super::{GSTIN_A, GSTIN_B, conflict_on_gstin, gstin, licensed_until, vendor_with};
use super::{field_error, params, vendor_query};
use crate::conformance::{Fixture, created, dec, ts};
use crate::error::{Entity, Error, RuleBroken};
use crate::ids::VendorId;
use crate::paging::PageRequest;
use crate::store::Store;
use crate::vendors::gstin::Gstin;
use crate::vendors::licence::LicenseStatus;
use crate::vendors::{NewVendor, VendorQuery, VendorType};
use jiff::SignedDuration;

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

/// A GSTIN is kept upper-cased and belongs to one active vendor: create, update and restore
/// all answer 409 for a taken one, and a deleted vendor frees it (D37, D5).
pub async fn gstins_are_kept_upper_cased_and_unique_among_active_vendors<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    assert!(Gstin::parse("27AAPFU0939F1ZW").is_err(), "D37: a wrong check character is refused");
    let first =
        NewVendor { gstin: Some(gstin(" 27aapfu0939f1zv ")), ..NewVendor::new("Ajanta", VendorType::Wholesaler) };
    let first = vendor_with(&fx, first).await.unwrap();
    assert_eq!(first.gstin.as_deref(), Some(GSTIN_A), "upper-cased and trimmed");
    assert_eq!(fx.engine.get_vendor(&fx.admin, first.id).await.unwrap().gstin.as_deref(), Some(GSTIN_A));

    let twin = NewVendor { gstin: Some(gstin(GSTIN_A)), ..NewVendor::new("Ajanta Twin", VendorType::Agency) };
    conflict_on_gstin(vendor_with(&fx, twin.clone()).await, "create with a taken GSTIN");

    let second =
        vendor_with(&fx, NewVendor { gstin: Some(gstin(GSTIN_B)), ..NewVendor::new("Blue", VendorType::Dealer) })
            .await
            .unwrap();
    let taking = NewVendor { gstin: Some(gstin(GSTIN_A)), ..NewVendor::new("Blue", VendorType::Dealer) };
    conflict_on_gstin(fx.engine.update_vendor(&fx.admin, second.id, taking.clone()).await, "update to a taken GSTIN");
    let kept = NewVendor { gstin: Some(gstin(GSTIN_B)), ..NewVendor::new("Blue Pharma", VendorType::Dealer) };
    let renamed = fx.engine.update_vendor(&fx.admin, second.id, kept).await.expect("a vendor keeps its own GSTIN");
    assert_eq!(renamed.gstin.as_deref(), Some(GSTIN_B));

    fx.engine.delete_vendor(&fx.admin, first.id, None).await.unwrap();
    let moved = fx.engine.update_vendor(&fx.admin, second.id, taking).await.expect("a deleted vendor frees its GSTIN");
    assert_eq!(moved.gstin.as_deref(), Some(GSTIN_A));
    conflict_on_gstin(fx.engine.restore_vendor(&fx.admin, first.id).await, "restore onto a taken GSTIN");

    let cleared = NewVendor::new("Blue Pharma", VendorType::Dealer);
    let cleared = fx.engine.update_vendor(&fx.admin, second.id, cleared).await.unwrap();
    assert_eq!(cleared.gstin, None, "a full replacement without gstin clears it (D14)");
    let restored = fx.engine.restore_vendor(&fx.admin, first.id).await.expect("the GSTIN is free again");
    assert_eq!(restored.gstin.as_deref(), Some(GSTIN_A));
    let without = vendor_with(&fx, NewVendor::new("No GSTIN", VendorType::Dealer)).await.unwrap();
    let also_without = vendor_with(&fx, NewVendor::new("No GSTIN either", VendorType::Dealer)).await.unwrap();
    assert_eq!((without.gstin, also_without.gstin), (None, None), "any number of vendors may have none");
}

/// A licence's status is computed for today in the business time zone; the list filters by it
/// and the alerts list active vendors expired or expiring within the window, soonest first
/// (D36).
pub async fn licence_status_filters_and_alerts_follow_today<S: Store>(store: S) {
    let fx = Fixture::new(store).await;
    let unknown = vendor_with(&fx, licensed_until("Unknown Co", None)).await.unwrap();
    let expired = vendor_with(&fx, licensed_until("Expired Co", Some("2024-05-09T00:00:00Z"))).await.unwrap();
    let last_day = vendor_with(&fx, licensed_until("Last Day Co", Some("2024-05-10T00:00:00Z"))).await.unwrap();
    let thirty = vendor_with(&fx, licensed_until("Thirty Co", Some("2024-06-09T00:00:00Z"))).await.unwrap();
    let valid = vendor_with(&fx, licensed_until("Valid Co", Some("2024-06-10T00:00:00Z"))).await.unwrap();
    let gone = vendor_with(&fx, licensed_until("Gone Co", Some("2024-01-01T00:00:00Z"))).await.unwrap();
    fx.engine.delete_vendor(&fx.admin, gone.id, None).await.unwrap();

    let statuses = [
        (&unknown, LicenseStatus::Unknown),
        (&expired, LicenseStatus::Expired),
        (&last_day, LicenseStatus::ExpiringSoon),
        (&thirty, LicenseStatus::ExpiringSoon),
        (&valid, LicenseStatus::Valid),
    ];
    for (vendor, status) in statuses {
        assert_eq!(vendor.license_status, status, "{} as created", vendor.name);
        let read = fx.engine.get_vendor(&fx.admin, vendor.id).await.unwrap();
        assert_eq!(read.license_status, status, "{} as read", vendor.name);
    }
    let listed = |status: &'static str| {
        let engine = &fx.engine;
        let admin = &fx.admin;
        async move {
            let page =
                engine.list_vendors(admin, &vendor_query(&[("licenseStatus", status), ("pageSize", "100")])).await;
            let page = page.unwrap();
            assert!(page.items.iter().all(|vendor| vendor.license_status.name() == status), "{status}: {page:?}");
            page.items.iter().map(|vendor| vendor.id).collect::<Vec<_>>()
        }
    };
    assert_eq!(listed("Expired").await, [expired.id], "the deleted vendor is not listed");
    assert_eq!(listed("ExpiringSoon").await, [last_day.id, thirty.id]);
    assert_eq!(listed("Valid").await, [valid.id]);
    assert!(listed("Unknown").await.contains(&unknown.id));
    let lapsed = VendorQuery::from_params(&params(&[("licenseStatus", "Lapsed")]));
    assert!(lapsed.is_err_and(|errors| errors.contains("licenseStatus")), "an unknown status is a 400");

    // Created after the others, so their ids say nothing of the alerts' order: one expired
    // earlier than all, one on the same day as `expired` (the id breaks the tie).
    let earliest = vendor_with(&fx, licensed_until("Earliest Co", Some("2024-05-01T00:00:00Z"))).await.unwrap();
    // Quotes, a backslash and non-ASCII letters travel through a store's packed answer intact.
    let tied = NewVendor {
        drug_license_number1: Some(r#"DL-"20B"\7"#.into()),
        ..licensed_until(r#"Tied "Ayurvedic" \ Aushadhi Bhandar ü"#, Some("2024-05-09T00:00:00Z"))
    };
    let tied = vendor_with(&fx, tied).await.unwrap();
    let alerts = fx.engine.licence_alerts(&fx.admin, 30).await.unwrap();
    let seen: Vec<(VendorId, i64)> = alerts.iter().map(|alert| (alert.vendor.id, alert.days_left)).collect();
    assert_eq!(
        seen,
        [(earliest.id, -9), (expired.id, -1), (tied.id, -1), (last_day.id, 0), (thirty.id, 30)],
        "soonest first, then by id; active vendors only"
    );
    assert_eq!(alerts[0].license_status, LicenseStatus::Expired);
    assert_eq!(alerts[4].vendor.valid_until, ts("2024-06-09T00:00:00Z"));
    assert_eq!(alerts[2].vendor.name, tied.name);
    assert_eq!(alerts[2].vendor.drug_license_number1.as_deref(), Some(r#"DL-"20B"\7"#));
    assert_eq!(alerts[1].vendor.drug_license_number1, None);
    let narrow = fx.engine.licence_alerts(&fx.admin, 0).await.unwrap();
    assert_eq!(
        narrow.iter().map(|alert| alert.vendor.id).collect::<Vec<_>>(),
        [earliest.id, expired.id, tied.id, last_day.id]
    );
    let wide = fx.engine.licence_alerts(&fx.admin, 31).await.unwrap();
    assert_eq!(wide.last().map(|alert| alert.vendor.id), Some(valid.id));

    // D3: at 10:00 UTC on 10 May it is already 11 May on Kiritimati (UTC+14), so a licence
    // valid until 10 May there has expired; back in UTC it has not.
    fx.engine.update_setting(&fx.admin, "TimeZone", "Pacific/Kiritimati").await.unwrap();
    let far_east = fx.engine.get_vendor(&fx.admin, last_day.id).await.unwrap();
    assert_eq!(far_east.license_status, LicenseStatus::Expired, "today follows the TimeZone setting");
    fx.engine.update_setting(&fx.admin, "TimeZone", "UTC").await.unwrap();
    fx.advance(SignedDuration::from_hours(24));
    let next_day = fx.engine.get_vendor(&fx.admin, last_day.id).await.unwrap();
    assert_eq!(next_day.license_status, LicenseStatus::Expired, "the status follows the clock, never stored");
    assert_eq!(listed("Expired").await, [earliest.id, expired.id, last_day.id, tied.id]);
}
