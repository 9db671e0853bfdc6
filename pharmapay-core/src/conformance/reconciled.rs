//! The model's recounts of what a pharmacy reconciles with: the payables aging (D34), vendor
//! statements (D35), licence statuses and alerts (D36) and GSTIN uniqueness (D37), each worked
//! out from the invoices and payments themselves with plain date arithmetic, never with the
//! bounds the engine and the stores use.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use jiff::Span;
use jiff::civil::Date;
use rust_decimal::Decimal;

use super::Fixture;
use crate::clock::BusinessCalendar;
use crate::credits::VendorCredit;
use crate::ids::{InvoiceId, TransactionId, VendorCreditId, VendorId};
use crate::invoices::Invoice;
use crate::paging::PageRequest;
use crate::reports::aging::{AgingBucket, AgingQuery};
use crate::reports::statement::{StatementLineKind, StatementQuery};
use crate::store::Store;
use crate::transactions::Transaction;
use crate::vendors::licence::LicenseStatus;
use crate::vendors::{Vendor, VendorQuery};

/// Whole days from `from` to `to`.
fn days_between(from: Date, to: Date) -> i64 {
    i64::from(from.until(to).expect("days between two dates").get_days())
}

fn days(count: i64) -> Span {
    Span::new().days(count)
}

/// One aging row as compared: vendor, the six buckets and the invoice count.
type AgingLine = (VendorId, [Decimal; 6], u64);

/// The aging on `as_of`, recounted: what each active invoice dated by then still owed then,
/// bucketed by the days its due date lies before `as_of`, in the D34 order.
fn recount_aging(
    calendar: &BusinessCalendar,
    as_of: Date,
    vendors: &[Vendor],
    invoices: &[Invoice],
    payments: &[Transaction],
    credits: &[VendorCredit],
    only: Option<VendorId>,
) -> Vec<AgingLine> {
    let mut rows: BTreeMap<VendorId, ([Decimal; 6], u64)> = BTreeMap::new();
    for invoice in invoices.iter().filter(|invoice| invoice.is_active) {
        if calendar.date_of(invoice.invoice_date) > as_of || only.is_some_and(|vendor| vendor != invoice.vendor_id) {
            continue;
        }
        let paid_by_then: Decimal = payments
            .iter()
            .filter(|payment| payment.invoice_id == invoice.id && calendar.date_of(payment.transaction_date) <= as_of)
            .map(|payment| payment.amount.get())
            .sum();
        // D44: and the credits applied to it by then.
        let credited_by_then: Decimal = credits
            .iter()
            .flat_map(|credit| &credit.applications)
            .filter(|application| application.invoice_id == invoice.id && calendar.date_of(application.date) <= as_of)
            .map(|application| application.amount.get())
            .sum();
        let owed = invoice.amount.get() - paid_by_then - credited_by_then;
        if owed <= Decimal::ZERO {
            continue;
        }
        let late = days_between(calendar.date_of(invoice.due_date), as_of);
        let bucket = AgingBucket::ALL
            .iter()
            .position(|bucket| *bucket == AgingBucket::of_days_past_due(late))
            .expect("a bucket");
        let row = rows.entry(invoice.vendor_id).or_default();
        row.0[bucket] += owed;
        row.1 += 1;
    }
    let name = |id: VendorId| vendors.iter().find(|vendor| vendor.id == id).map_or("", |vendor| vendor.name.as_str());
    let mut lines: Vec<AgingLine> = rows.into_iter().map(|(id, (buckets, count))| (id, buckets, count)).collect();
    lines.sort_by(|a, b| {
        let total = |line: &AgingLine| line.1.iter().copied().sum::<Decimal>();
        total(b)
            .cmp(&total(a))
            .then_with(|| crate::text::key(name(a.0)).cmp(&crate::text::key(name(b.0))))
            .then_with(|| name(a.0).cmp(name(b.0)))
            .then(a.0.cmp(&b.0))
    });
    lines
}

/// A statement line as compared: date, kind, invoice, payment, invoiced, paid, balance.
/// A statement line as compared: day, kind, invoice, payment, credit, invoiced, paid, credited
/// and the balance after it.
type StatementLine = (
    Date,
    StatementLineKind,
    Option<InvoiceId>,
    Option<TransactionId>,
    Option<VendorCreditId>,
    Decimal,
    Decimal,
    Decimal,
    Decimal,
);

/// A vendor's statement over `from..=to`, recounted: (opening, lines, closing).
fn recount_statement(
    calendar: &BusinessCalendar,
    vendor: VendorId,
    (from, to): (Date, Date),
    invoices: &[Invoice],
    payments: &[Transaction],
    credits: &[VendorCredit],
) -> (Decimal, Vec<StatementLine>, Decimal) {
    let theirs: Vec<&Invoice> =
        invoices.iter().filter(|invoice| invoice.is_active && invoice.vendor_id == vendor).collect();
    let mut opening = Decimal::ZERO;
    // (date, kind, ordering id, invoice, payment, credit, amount)
    let mut entries = Vec::new();
    for invoice in &theirs {
        let day = calendar.date_of(invoice.invoice_date);
        if day < from {
            opening += invoice.amount.get();
        } else if day <= to {
            let amount = invoice.amount.get();
            entries.push((day, StatementLineKind::Invoice, invoice.id.get(), Some(invoice.id), None, None, amount));
        }
    }
    for payment in payments.iter().filter(|payment| theirs.iter().any(|invoice| invoice.id == payment.invoice_id)) {
        let day = calendar.date_of(payment.transaction_date);
        if day < from {
            opening -= payment.amount.get();
        } else if day <= to {
            let (id, invoice, amount) = (payment.id, Some(payment.invoice_id), payment.amount.get());
            entries.push((day, StatementLineKind::Payment, id.get(), invoice, Some(id), None, amount));
        }
    }
    // D44: each active credit with something accepted, on its decision day.
    for credit in credits.iter().filter(|credit| credit.is_active && credit.vendor_id == vendor) {
        let (Some(accepted), Some(decided)) = (credit.accepted_amount, credit.decision_date) else { continue };
        if accepted <= Decimal::ZERO {
            continue;
        }
        let day = calendar.date_of(decided);
        if day < from {
            opening -= accepted;
        } else if day <= to {
            let against = credit.against_invoice_id;
            entries.push((day, StatementLineKind::Credit, credit.id.get(), against, None, Some(credit.id), accepted));
        }
    }
    entries.sort_by_key(|entry| (entry.0, entry.1, entry.2));
    let mut balance = opening;
    let lines = entries
        .into_iter()
        .map(|(day, kind, _, invoice, payment, credit, amount)| {
            let (mut invoiced, mut paid, mut credited) = (Decimal::ZERO, Decimal::ZERO, Decimal::ZERO);
            match kind {
                StatementLineKind::Invoice => invoiced = amount,
                StatementLineKind::Payment => paid = amount,
                StatementLineKind::Credit => credited = amount,
            }
            balance += invoiced - paid - credited;
            (day, kind, invoice, payment, credit, invoiced, paid, credited, balance)
        })
        .collect();
    (opening, lines, balance)
}

/// The pages of a whole answer of `rows` rows, of a size `seed` picks from 1 to 4, and one page
/// past the end.
fn pages_of(rows: usize, seed: u64) -> Vec<PageRequest> {
    let size = u32::try_from(seed % 4).expect("small") + 1;
    let pages = u32::try_from(rows).expect("a model-sized answer").div_ceil(size);
    (1..=pages + 1).map(|page| PageRequest::new(page, size)).collect()
}

/// A licence's status on `today`, recounted from its date (D36).
fn status_on(calendar: &BusinessCalendar, vendor: &Vendor, today: Date) -> LicenseStatus {
    match vendor.drug_license_valid_until.map(|until| calendar.date_of(until)) {
        None => LicenseStatus::Unknown,
        Some(last) if last < today => LicenseStatus::Expired,
        Some(last) if days_between(today, last) <= 30 => LicenseStatus::ExpiringSoon,
        Some(_) => LicenseStatus::Valid,
    }
}

/// Asserts the aging, one vendor's statements, licence statuses and alerts, and GSTIN
/// uniqueness against recounts from `vendors` (active and not), every invoice and the active
/// `payments`. `seed` picks the past aging day, the vendor and the statement's range.
pub(super) async fn check<S: Store>(
    fx: &Fixture<S>,
    vendors: &[Vendor],
    invoices: &[Invoice],
    payments: &[Transaction],
    credits: &[VendorCredit],
    seed: u64,
) {
    let engine = &fx.engine;
    let admin = &fx.admin;
    let calendar = engine.calendar().await.expect("calendar");
    let today = calendar.date_of(engine.now());

    // D34: today's aging and one in the past, and one vendor's alone.
    let past = today.saturating_sub(days(i64::try_from(seed % 45).expect("small")));
    let vendor = (!vendors.is_empty()).then(|| vendors[usize::try_from(seed).unwrap_or(0) % vendors.len()].id);
    for (as_of, only) in [(today, None), (past, None), (today, vendor)] {
        let query = AgingQuery { as_of: Some(as_of), vendor_id: only, page: None };
        let aging = engine.aging(admin, &query).await.expect("aging");
        let got: Vec<AgingLine> = aging
            .vendors
            .iter()
            .map(|row| {
                (row.vendor_id, AgingBucket::ALL.map(|bucket| row.figures.get(bucket)), row.figures.invoice_count)
            })
            .collect();
        let expected = recount_aging(&calendar, as_of, vendors, invoices, payments, credits, only);
        assert_eq!(got, expected, "the aging on {as_of} for {only:?} (D34)");
        for bucket in AgingBucket::ALL {
            let sum: Decimal = aging.vendors.iter().map(|row| row.figures.get(bucket)).sum();
            assert_eq!(aging.totals.get(bucket), sum, "the {} total", bucket.field());
        }
        let count: u64 = aging.vendors.iter().map(|row| row.figures.invoice_count).sum();
        assert_eq!(aging.totals.invoice_count, count, "the invoice count total");
        // D43: its pages, put together, are the whole answer, and never change its totals.
        let mut joined = Vec::new();
        for page in pages_of(aging.vendors.len(), seed) {
            let part = engine.aging(admin, &AgingQuery { page: Some(page), ..query }).await.expect("a page of aging");
            assert_eq!(part.totals, aging.totals, "the totals of page {} of the aging on {as_of}", page.page());
            assert_eq!(part.page.map(|place| place.total_count), Some(aging.vendors.len() as u64));
            joined.extend(part.vendors);
        }
        assert_eq!(joined, aging.vendors, "the aging's pages on {as_of} put together (D43)");
        if as_of == today {
            for row in &aging.vendors {
                let balance = vendors.iter().find(|v| v.id == row.vendor_id).expect("a known vendor");
                let overpaid: Decimal = invoices
                    .iter()
                    .filter(|i| i.is_active && i.vendor_id == row.vendor_id && i.pending_amount() < Decimal::ZERO)
                    .map(Invoice::pending_amount)
                    .sum();
                assert_eq!(
                    row.figures.total(),
                    balance.totals.outstanding_balance - overpaid,
                    "today's aging is the balance without overpayments (D33, D34)"
                );
            }
        }
    }

    // D35: a range picked by the seed, and one from before everything to today.
    if let Some(vendor) = vendor {
        let to = today.saturating_sub(days(i64::try_from(seed % 7).expect("small")));
        let from = to.saturating_sub(days(i64::try_from(seed % 40).expect("small")));
        let earliest: Date = "2000-01-01".parse().expect("a date");
        for range in [(from, to), (earliest, today)] {
            let query = StatementQuery { from_date: Some(range.0), to_date: Some(range.1), page: None };
            let statement = engine.vendor_statement(admin, vendor, &query).await.expect("statement");
            let figures = &statement.figures;
            let got: Vec<StatementLine> = figures
                .lines
                .iter()
                .map(|line| {
                    let entry = &line.entry;
                    (
                        entry.date,
                        entry.kind,
                        entry.invoice_id,
                        entry.transaction_id,
                        entry.credit_id,
                        line.invoiced,
                        line.paid,
                        line.credited,
                        line.balance,
                    )
                })
                .collect();
            let (opening, lines, closing) = recount_statement(&calendar, vendor, range, invoices, payments, credits);
            assert_eq!(
                (figures.opening_balance, &got, figures.closing_balance),
                (opening, &lines, closing),
                "{range:?}"
            );
            assert_eq!(
                figures.closing_balance,
                figures.opening_balance + figures.total_invoiced - figures.total_paid - figures.total_credited
            );
            let mut joined = Vec::new();
            for page in pages_of(figures.lines.len(), seed) {
                let part = engine.vendor_statement(admin, vendor, &StatementQuery { page: Some(page), ..query }).await;
                let part = part.expect("a page of a statement").figures;
                let whole = (
                    figures.opening_balance,
                    figures.total_invoiced,
                    figures.total_paid,
                    figures.total_credited,
                    figures.closing_balance,
                );
                let got = (
                    part.opening_balance,
                    part.total_invoiced,
                    part.total_paid,
                    part.total_credited,
                    part.closing_balance,
                );
                assert_eq!(got, whole);
                joined.extend(part.lines);
            }
            assert_eq!(joined, figures.lines, "the statement's pages over {range:?} put together (D43)");
            if range.0 == earliest {
                let totals = &vendors.iter().find(|v| v.id == vendor).expect("known").totals;
                assert_eq!(
                    figures.closing_balance,
                    totals.outstanding_balance - totals.available_credit,
                    "a statement of everything closes at the balance less the credit available (D35, D44)"
                );
            }
        }
    }

    // D36: statuses, the list filter and the alerts; D37: one GSTIN per active vendor.
    for vendor in vendors {
        assert_eq!(vendor.license_status, status_on(&calendar, vendor, today), "{vendor:?}");
    }
    for status in LicenseStatus::ALL {
        let mut query = VendorQuery { page: PageRequest::new(1, 1), ..VendorQuery::default() };
        query.filter.license_status = Some(status);
        let listed = engine.list_vendors(admin, &query).await.expect("vendors by licence").total_count;
        let expected = vendors.iter().filter(|v| v.is_active && v.license_status == status).count();
        assert_eq!(listed, expected as u64, "vendors whose licence is {}", status.name());
    }
    let within = seed % 60;
    let alerts = engine.licence_alerts(admin, u16::try_from(within).expect("small")).await.expect("alerts");
    let got: Vec<(VendorId, i64)> = alerts.iter().map(|alert| (alert.vendor.id, alert.days_left)).collect();
    let mut expected: Vec<(jiff::Timestamp, VendorId, i64)> = vendors
        .iter()
        .filter(|vendor| vendor.is_active)
        .filter_map(|vendor| {
            let until = vendor.drug_license_valid_until?;
            let left = days_between(today, calendar.date_of(until));
            (left <= i64::try_from(within).expect("small")).then_some((until, vendor.id, left))
        })
        .collect();
    expected.sort();
    let expected: Vec<(VendorId, i64)> = expected.into_iter().map(|(_, id, left)| (id, left)).collect();
    assert_eq!(got, expected, "licence alerts within {within} days, soonest first (D36)");
    let mut gstins: Vec<&str> = vendors.iter().filter(|v| v.is_active).filter_map(|v| v.gstin.as_deref()).collect();
    let all = gstins.len();
    gstins.sort_unstable();
    gstins.dedup();
    assert_eq!(gstins.len(), all, "one active vendor per GSTIN (D37)");
}

/// Renders today's aging, each vendor's statement of everything and the licence alerts, with
/// ids as creation ordinals (`vendor_ordinal`, `invoice_ordinal`), for comparing backends.
pub(super) async fn snapshot<S: Store>(
    fx: &Fixture<S>,
    vendors: &[VendorId],
    vendor_ordinal: &dyn Fn(VendorId) -> usize,
    invoice_ordinal: &dyn Fn(InvoiceId) -> usize,
    out: &mut String,
) {
    let engine = &fx.engine;
    let admin = &fx.admin;
    let aging = engine.aging(admin, &AgingQuery::default()).await.expect("aging");
    for row in &aging.vendors {
        let _ = writeln!(out, "aging v{} {} {:?}", vendor_ordinal(row.vendor_id), row.vendor_name, row.figures);
    }
    let _ = writeln!(out, "aging totals {:?}", aging.totals);
    let everything =
        StatementQuery { from_date: Some("2000-01-01".parse().expect("a date")), to_date: None, page: None };
    for vendor in vendors {
        let statement = engine.vendor_statement(admin, *vendor, &everything).await.expect("statement");
        let figures = &statement.figures;
        let _ = writeln!(
            out,
            "statement v{} {} {} {} {}",
            vendor_ordinal(*vendor),
            figures.opening_balance,
            figures.total_invoiced,
            figures.total_paid,
            figures.closing_balance
        );
        for line in &figures.lines {
            let _ = writeln!(
                out,
                "  {} {} i{:?} {} {} {} {} {:?}",
                line.entry.date,
                line.entry.kind.name(),
                line.entry.invoice_id.map(invoice_ordinal),
                line.invoiced,
                line.paid,
                line.credited,
                line.balance,
                line.entry.credit_number
            );
        }
    }
    for alert in engine.licence_alerts(admin, 366).await.expect("alerts") {
        let _ = writeln!(
            out,
            "licence v{} {} {} {}",
            vendor_ordinal(alert.vendor.id),
            alert.license_status.name(),
            alert.vendor.valid_until,
            alert.days_left
        );
    }
}
