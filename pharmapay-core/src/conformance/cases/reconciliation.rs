//! Conformance cases for the vendor master and what a pharmacy reconciles with: GSTINs (D37),
//! drug licence validity and its policy (D36), the payables aging (D34) and a vendor's
//! statement (D35), and their pages (D43).

use jiff::SignedDuration;
use jiff::civil::Date;
use rust_decimal::Decimal;

use super::{field_error, params, vendor_query};
use crate::conformance::{Fixture, amount, created, dec, ts};
use crate::error::{Entity, Error};
use crate::ids::{InvoiceId, VendorId};
use crate::invoices::NewInvoice;
use crate::paging::PagePlace;
use crate::reports::aging::{AgingBucket, AgingQuery};
use crate::reports::statement::{StatementLineKind, StatementQuery};
use crate::store::{Store, UniqueKey};
use crate::transactions::NewTransaction;
use crate::vendors::gstin::Gstin;
use crate::vendors::licence::LicenseStatus;
use crate::vendors::{NewVendor, Vendor, VendorQuery, VendorType};

const GSTIN_A: &str = "27AAPFU0939F1ZV";
const GSTIN_B: &str = "29AAGCR4375J1ZU";

fn gstin(text: &str) -> Gstin {
    Gstin::parse(text).unwrap_or_else(|error| panic!("test GSTIN {text:?}: {error}"))
}

fn day(text: &str) -> Date {
    text.parse().unwrap_or_else(|_| panic!("test day {text:?} must parse"))
}

fn conflict_on_gstin<T: std::fmt::Debug>(result: Result<T, Error>, label: &str) {
    assert!(
        matches!(result, Err(Error::Conflict(UniqueKey::Gstin))),
        "{label}: expected a 409 on gstin (D37), got {result:?}"
    );
}

async fn vendor_with<S: Store>(fx: &Fixture<S>, input: NewVendor) -> Result<Vendor, Error> {
    fx.engine.create_vendor(&fx.admin, input, None).await.map(created)
}

fn licensed_until(name: &str, until: Option<&str>) -> NewVendor {
    NewVendor { drug_license_valid_until: until.map(ts), ..NewVendor::new(name, VendorType::Manufacturer) }
}

/// An invoice of `vendor` dated `dated`, due `due` (RFC 3339 instants).
async fn dated_invoice<S: Store>(
    fx: &Fixture<S>,
    vendor: VendorId,
    number: &str,
    total: &str,
    dated: &str,
    due: &str,
) -> InvoiceId {
    let input = NewInvoice {
        vendor_id: vendor,
        invoice_number: number.into(),
        amount: amount(total),
        invoice_date: ts(dated),
        due_date: ts(due),
        description: None,
    };
    created(fx.engine.create_invoice(&fx.admin, input, None).await.expect("invoice created")).id
}

async fn paid_on<S: Store>(fx: &Fixture<S>, invoice: InvoiceId, paid: &str, on: &str) -> NewTransaction {
    let payment = NewTransaction { transaction_date: ts(on), ..fx.new_payment(invoice, paid) };
    fx.engine.create_transaction(&fx.admin, payment.clone(), None).await.expect("payment recorded");
    payment
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
