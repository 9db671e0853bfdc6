//! Random operation sequences for property tests.
//!
//! [`ops`] generates sequences of vendor, invoice and payment operations (creates, updates,
//! deletes, restores) interleaved with moves of the clock. A [`Model`] applies them to an
//! engine, keeping the ids it created so later operations can refer to them, and records each
//! outcome. Two uses:
//! - [`Model::check_invariants`] asserts, after any step, the rules that must always hold:
//!   paid is the exact sum of active payments, pending is amount minus paid, status follows the
//!   table, vendor and dashboard totals are their sums, pages partition sorted lists, and the
//!   aging, statements and licence alerts equal their recounts (`reconciled.rs`);
//! - [`Model::snapshot`] renders everything observable with ids replaced by creation order, so
//!   two backends fed the same sequence can be compared for identical answers.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use jiff::SignedDuration;
use rust_decimal::Decimal;

use super::{Fixture, invoice_order, invoice_sort_keys};
use crate::credits::VendorCredit;
use crate::error::Error;
use crate::idempotency::Created;
use crate::ids::{InvoiceId, TransactionId, VendorCreditId, VendorId};
use crate::invoices::{Invoice, InvoiceQuery, InvoiceSortKey, InvoiceStatus, NewInvoice};
use crate::money::Amount;
use crate::paging::{PageRequest, Sort, SortDir};
use crate::store::Store;
use crate::transactions::{NewTransaction, Transaction, TransactionQuery, TransactionSortKey, TransactionType};
use crate::vendors::gstin::Gstin;
use crate::vendors::{NewVendor, Vendor, VendorQuery, VendorSortKey, VendorType};

use super::ops::{GSTINS, KINDS, LICENCE_DAYS, NAMES, NUMBERS, ZONES, reference_of};
pub use super::ops::{Op, credit_op, credit_ops, op, ops};

pub(super) fn pick<T: Copy>(items: &[T], index: u8) -> Option<T> {
    if items.is_empty() { None } else { Some(items[index as usize % items.len()]) }
}

/// What `act` answers for the record `index` picks from `ids`, or `skip` when there is none.
pub(super) async fn on_picked<I: Copy, T>(
    ids: &[I],
    index: u8,
    act: impl AsyncFnOnce(I) -> Result<T, Error>,
) -> String {
    match pick(ids, index) {
        Some(id) => outcome(act(id).await),
        None => "skip".into(),
    }
}

pub(super) fn outcome<T>(result: Result<T, Error>) -> String {
    match result {
        Ok(_) => "ok".into(),
        Err(Error::Validation(errors)) => {
            let fields: Vec<&str> = errors.iter().map(|(field, _)| field).collect();
            format!("invalid:{}", fields.join(","))
        }
        // The id a taken reference names is a store's own; the kind of conflict is what compares.
        Err(Error::Conflict(crate::store::UniqueKey::PaymentReference { .. })) => "conflict:PaymentReference".into(),
        Err(Error::Conflict(key)) => format!("conflict:{key:?}"),
        Err(Error::NotFound { entity }) => format!("not_found:{entity}"),
        Err(Error::Rule(rule)) => format!("rule:{rule:?}"),
        Err(Error::Rows(errors)) => {
            let keys: Vec<&str> = errors.errors().iter().map(|(key, _)| key).collect();
            format!("rows:{}", keys.join(","))
        }
        Err(other) => panic!("no operation of the model may fail with {other:?}"),
    }
}

/// The outcome of a create, keeping the new record's id in `ids`.
pub(super) fn kept<T: std::fmt::Debug, I>(
    ids: &mut Vec<I>,
    result: Result<Created<T>, Error>,
    id_of: fn(&T) -> I,
) -> String {
    match result {
        Ok(created) => {
            ids.push(id_of(&super::created(created)));
            "ok".into()
        }
        Err(error) => outcome::<()>(Err(error)),
    }
}

/// An amount of `value` units of `10^-scale`.
pub(super) fn units(value: u32, scale: u32) -> Amount {
    Amount::try_from(Decimal::new(i64::from(value), scale)).expect("positive")
}

/// An engine plus the ids the history created, in creation order.
pub struct Model<S> {
    /// The onboarded engine.
    pub fx: Fixture<S>,
    pub(super) vendors: Vec<VendorId>,
    pub(super) invoices: Vec<InvoiceId>,
    payments: Vec<TransactionId>,
    vendor_payments: Vec<crate::ids::VendorPaymentId>,
    pub(super) credits: Vec<VendorCreditId>,
}

impl<S: Store> Model<S> {
    /// A model over a fresh store, onboarded, with no vendors besides the pharmacy.
    pub async fn new(store: S) -> Self {
        let fx = Fixture::new(store).await;
        let own = fx.engine.list_vendors(&fx.admin, &VendorQuery::default()).await.expect("list").items[0].id;
        Self {
            fx,
            vendors: vec![own],
            invoices: Vec::new(),
            payments: Vec::new(),
            vendor_payments: Vec::new(),
            credits: Vec::new(),
        }
    }

    /// The invoice an operation writes: dated today (or on its due date when that is earlier),
    /// due in `due_days`, for `cents` hundredths.
    fn invoice(
        &self,
        vendor_id: VendorId,
        number: u8,
        cents: u32,
        due_days: i8,
        description: Option<&str>,
    ) -> NewInvoice {
        let now = self.fx.engine.now();
        let due_date = now + SignedDuration::from_hours(24 * i64::from(due_days));
        NewInvoice {
            vendor_id,
            branch_id: None,
            invoice_number: NUMBERS[number as usize % NUMBERS.len()].into(),
            amount: units(cents, 2),
            invoice_date: now.min(due_date),
            due_date,
            description: description.map(str::to_owned),
        }
    }

    /// `cents` hundredths in `shares` equal parts (the last takes the rest) over invoices picked in
    /// turn from `first`, of any vendor, so that some are refused as D31 says; `None` for no
    /// shares.
    pub(super) fn shares(
        &self,
        cents: u32,
        shares: u8,
        first: u8,
    ) -> Option<Vec<crate::vendor_payments::rules::RequestedAllocation>> {
        (shares > 0 && !self.invoices.is_empty()).then(|| {
            let n = u32::from(shares);
            let part = cents / n;
            (0..n)
                .filter_map(|index| {
                    let invoice_id = pick(&self.invoices, first.wrapping_add(index as u8))?;
                    let amount = if index + 1 == n { cents - part * (n - 1) } else { part };
                    (amount > 0).then(|| crate::vendor_payments::rules::RequestedAllocation {
                        invoice_id,
                        amount: units(amount, 2),
                    })
                })
                .collect::<Vec<_>>()
        })
    }

    /// Applies one operation and returns its outcome (`ok`, or the error's kind).
    pub async fn apply(&mut self, op: &Op) -> String {
        let engine = &self.fx.engine;
        let admin = &self.fx.admin;
        match *op {
            Op::CreateVendor { name } => {
                let input = NewVendor::new(NAMES[name as usize % NAMES.len()], VendorType::Dealer);
                kept(&mut self.vendors, engine.create_vendor(admin, input, None).await, |vendor| vendor.id)
            }
            Op::UpdateVendor { vendor, name, licence, gstin } => {
                let Some(id) = pick(&self.vendors[1..], vendor) else { return "skip".into() };
                let kind = [VendorType::Agency, VendorType::Manufacturer, VendorType::Wholesaler][name as usize % 3];
                let valid_until = LICENCE_DAYS
                    .get(usize::from(licence))
                    .map(|offset| engine.now() + SignedDuration::from_hours(24 * offset));
                let input = NewVendor {
                    drug_license_valid_until: valid_until,
                    gstin: GSTINS.get(usize::from(gstin % 4)).map(|text| Gstin::parse(text).expect("a valid GSTIN")),
                    ..NewVendor::new(NAMES[name as usize % NAMES.len()], kind)
                };
                outcome(engine.update_vendor(admin, id, input).await)
            }
            Op::DeleteVendor { vendor } => {
                on_picked(&self.vendors, vendor, async |id| engine.delete_vendor(admin, id, Some("model".into())).await)
                    .await
            }
            Op::RestoreVendor { vendor } => {
                on_picked(&self.vendors, vendor, async |id| engine.restore_vendor(admin, id).await).await
            }
            Op::CreateInvoice { vendor, number, cents, due_days } => {
                let Some(vendor_id) = pick(&self.vendors, vendor) else { return "skip".into() };
                let input = self.invoice(vendor_id, number, cents, due_days, None);
                kept(&mut self.invoices, engine.create_invoice(admin, input, None).await, |invoice| invoice.id)
            }
            Op::ImportInvoices { vendor, number, rows, cents, due_days } => {
                let Some(vendor_id) = pick(&self.vendors, vendor) else { return "skip".into() };
                let name = match engine.get_vendor(admin, vendor_id).await {
                    Ok(vendor) => vendor.name,
                    Err(_) => "a vendor no longer active".into(),
                };
                let mut file = String::from("Invoice Number,Vendor,Amount,Invoice Date,Due Date\n");
                for row in 0..rows {
                    let input = self.invoice(vendor_id, number.wrapping_add(row), cents, due_days, None);
                    let (amount, issued, due) = (input.amount.get(), input.invoice_date, input.due_date);
                    file.push_str(&format!("{},{name},{amount},{issued},{due}\n", input.invoice_number));
                }
                let file = crate::imports::ImportFile::csv(file);
                let imported = engine.import_invoices(admin, crate::imports::ImportRequest::new(file)).await;
                if imported.is_ok() {
                    // The created invoices join the ones later operations pick from.
                    let query =
                        crate::invoices::InvoiceQuery::from_params(&[("pageSize", "100")][..]).expect("a query");
                    let listed = engine.list_invoices(admin, &query).await.expect("invoices listed");
                    for invoice in listed.items {
                        if !self.invoices.contains(&invoice.id) {
                            self.invoices.push(invoice.id);
                        }
                    }
                }
                outcome(imported.map(|_| ()))
            }
            Op::UpdateInvoice { invoice, vendor, number, cents, due_days } => {
                let (Some(id), Some(vendor_id)) = (pick(&self.invoices, invoice), pick(&self.vendors, vendor)) else {
                    return "skip".into();
                };
                let input = self.invoice(vendor_id, number, cents, due_days, Some("updated"));
                outcome(engine.update_invoice(admin, id, input).await)
            }
            Op::DeleteInvoice { invoice } => {
                on_picked(&self.invoices, invoice, async |id| engine.delete_invoice(admin, id, None).await).await
            }
            Op::RestoreInvoice { invoice } => {
                on_picked(&self.invoices, invoice, async |id| engine.restore_invoice(admin, id).await).await
            }
            Op::Pay { invoice, units: paid, days_ago, kind, reference } => {
                let Some(invoice_id) = pick(&self.invoices, invoice) else { return "skip".into() };
                let input = NewTransaction {
                    invoice_id,
                    amount: units(paid, 4),
                    transaction_date: engine.now() - SignedDuration::from_hours(24 * i64::from(days_ago)),
                    transaction_type: KINDS[kind as usize % KINDS.len()],
                    reference: reference_of(reference),
                    description: None,
                };
                kept(&mut self.payments, engine.create_transaction(admin, input, None).await, |payment| payment.id)
            }
            Op::UpdatePayment { payment, invoice, units: paid } => {
                let (Some(id), Some(invoice_id)) = (pick(&self.payments, payment), pick(&self.invoices, invoice))
                else {
                    return "skip".into();
                };
                let input = NewTransaction {
                    invoice_id,
                    amount: units(paid, 4),
                    transaction_date: engine.now(),
                    transaction_type: TransactionType::NetBanking,
                    reference: None,
                    description: Some("moved".into()),
                };
                outcome(engine.update_transaction(admin, id, input).await)
            }
            Op::PayVendor { vendor, cents, shares, first, reference } => {
                let Some(vendor_id) = pick(&self.vendors, vendor) else { return "skip".into() };
                let total = units(cents, 2);
                // Explicit shares: equal parts of the amount (the last takes the rest) to invoices
                // picked in turn, of any vendor, so some are refused as D31 says.
                let allocations = self.shares(cents, shares, first);
                let input = crate::vendor_payments::NewVendorPayment {
                    amount: total,
                    transaction_date: engine.now(),
                    transaction_type: KINDS[first as usize % KINDS.len()],
                    reference: reference_of(reference),
                    description: Some("vendor payment".into()),
                    allocations,
                    branch_id: None,
                };
                match engine.create_vendor_payment(admin, vendor_id, input, None).await {
                    Ok(created) => {
                        let payment = super::created(created);
                        self.payments.extend(payment.transactions.iter().map(|part| part.id));
                        self.vendor_payments.push(payment.id);
                        "ok".into()
                    }
                    Err(error) => outcome::<()>(Err(error)),
                }
            }
            Op::DeleteVendorPayment { payment } => {
                on_picked(&self.vendor_payments, payment, async |id| {
                    engine.delete_vendor_payment(admin, id, None).await
                })
                .await
            }
            Op::DeletePayment { payment } => {
                on_picked(&self.payments, payment, async |id| engine.delete_transaction(admin, id, None).await).await
            }
            Op::RestorePayment { payment } => {
                on_picked(&self.payments, payment, async |id| engine.restore_transaction(admin, id).await).await
            }
            Op::AdvanceHours(hours) => {
                self.fx.advance(SignedDuration::from_hours(i64::from(hours)));
                "ok".into()
            }
            Op::SetTimeZone { zone } => {
                outcome(engine.update_setting(admin, "TimeZone", ZONES[zone as usize % ZONES.len()]).await)
            }
            Op::SetLicencePolicy { block } => {
                let policy = if block { "Block" } else { "Warn" };
                outcome(engine.update_setting(admin, "ExpiredLicensePolicy", policy).await)
            }
            Op::ClaimCredit { .. }
            | Op::UpdateCredit { .. }
            | Op::DecideCredit { .. }
            | Op::ApplyCredit { .. }
            | Op::UndoApplication { .. }
            | Op::DeleteCredit { .. }
            | Op::RestoreCredit { .. } => self.apply_credit_op(op).await,
        }
    }

    async fn all_invoices(&self) -> Vec<Invoice> {
        every_page(async |page| {
            let query = InvoiceQuery { page, ..InvoiceQuery::default() };
            self.fx.engine.list_invoices(&self.fx.admin, &query).await.expect("list invoices").items
        })
        .await
    }

    async fn all_payments(&self, is_active: bool) -> Vec<Transaction> {
        every_page(async |page| {
            let mut query = TransactionQuery { page, ..TransactionQuery::default() };
            query.filter.is_active = is_active;
            self.fx.engine.list_transactions(&self.fx.admin, &query).await.expect("list payments").items
        })
        .await
    }

    async fn all_vendors(&self, is_active: bool) -> Vec<Vendor> {
        let mut query = VendorQuery { page: PageRequest::new(1, 100), ..VendorQuery::default() };
        query.filter.is_active = is_active;
        self.fx.engine.list_vendors(&self.fx.admin, &query).await.expect("list vendors").items
    }

    /// Asserts every invariant of the ledger; `seed` varies which sorts and page sizes are used.
    pub async fn check_invariants(&self, seed: u64) {
        let calendar = self.fx.engine.calendar().await.expect("calendar");
        let today_start = calendar.start_of(calendar.date_of(self.fx.engine.now()));
        let invoices = self.all_invoices().await;
        let payments = self.all_payments(true).await;
        let credits = self.all_credits().await;

        let mut paid_by_invoice: BTreeMap<InvoiceId, Decimal> = BTreeMap::new();
        for payment in &payments {
            *paid_by_invoice.entry(payment.invoice_id).or_default() += payment.amount.get();
        }
        let credited_by_invoice = credited_by_invoice(&credits);
        for invoice in &invoices {
            let expected_paid = paid_by_invoice.get(&invoice.id).copied().unwrap_or_default();
            let expected_credited = credited_by_invoice.get(&invoice.id).copied().unwrap_or_default();
            assert_eq!(
                invoice.paid_amount,
                expected_paid.normalize(),
                "paid is the exact sum of active payments: {invoice:?}"
            );
            assert_eq!(invoice.credited_amount, expected_credited.normalize(), "credited (D44): {invoice:?}");
            if !invoice.is_active {
                assert!(invoice.credited_amount.is_zero(), "a canceled invoice keeps no application (D44)");
            }
            assert_eq!(
                invoice.pending_amount(),
                (invoice.amount.get() - expected_paid - expected_credited).normalize(),
                "pending = amount - paid - credited"
            );
            let status =
                InvoiceStatus::compute(invoice.is_active, invoice.pending_amount(), invoice.due_date, today_start);
            assert_eq!(invoice.status, status, "status follows the table: {invoice:?}");
        }
        // A list filtered by status alone counts what the statuses above say; the SQL stores
        // count Overdue and PartiallyPaid from kept per-due-date counts, which this checks.
        for status in InvoiceStatus::ALL {
            let mut query = InvoiceQuery { page: PageRequest::new(1, 1), ..InvoiceQuery::default() };
            query.filter.status = Some(status);
            let page = self.fx.engine.list_invoices(&self.fx.admin, &query).await.expect("invoices by status");
            let expected = invoices.iter().filter(|invoice| invoice.status == status).count() as u64;
            assert_eq!(page.total_count, expected, "the count of status {}", status.name());
        }

        let mut vendors = self.all_vendors(true).await;
        vendors.extend(self.all_vendors(false).await);
        for vendor in &vendors {
            let mine = invoices.iter().filter(|i| i.vendor_id == vendor.id && i.is_active);
            let value: Decimal = mine.clone().map(|i| i.amount.get()).sum();
            let paid: Decimal = mine.clone().map(|i| i.paid_amount).sum();
            let credited: Decimal = mine.map(|i| i.credited_amount).sum();
            let available: Decimal = credits
                .iter()
                .filter(|credit| credit.is_active && credit.vendor_id == vendor.id)
                .map(VendorCredit::available_amount)
                .sum();
            assert_eq!(vendor.totals.total_invoice_value, value.normalize(), "vendor value (D11): {vendor:?}");
            assert_eq!(vendor.totals.total_paid_amount, paid.normalize(), "vendor paid (D11)");
            assert_eq!(vendor.totals.total_credited_amount, credited.normalize(), "vendor credited (D44)");
            assert_eq!(vendor.totals.available_credit, available.normalize(), "vendor available credit (D44)");
            assert_eq!(
                vendor.totals.outstanding_balance,
                (value - paid - credited).normalize(),
                "vendor balance (D11, D44)"
            );
        }
        self.check_credit_cards(&credits).await;

        let summary = self.fx.engine.dashboard_summary(&self.fx.admin).await.expect("summary");
        let due: Decimal = invoices.iter().filter(|i| i.is_active).map(Invoice::pending_amount).sum();
        let paid: Decimal = payments.iter().map(|p| p.amount.get()).sum();
        assert_eq!(summary.total_due, due.normalize(), "totalDue (D12)");
        assert_eq!(summary.total_paid, paid.normalize(), "totalPaid (D12)");
        assert_eq!(summary.total_invoices, invoices.len() as u64, "totalInvoices");
        assert_eq!(summary.total_vendors, vendors.len() as u64, "totalVendors");

        // The figures kept per business day (D41) against the payments themselves, in the
        // zone the TimeZone setting names now.
        let today = calendar.date_of(self.fx.engine.now());
        let first_recent = today.checked_sub(jiff::Span::new().days(29)).expect("a date");
        let recent = payments.iter().filter(|p| calendar.date_of(p.transaction_date) >= first_recent).count();
        assert_eq!(summary.recent_transactions, recent as u64, "recent payments (D12) in the business zone");
        let months = self.fx.engine.monthly_transactions(&self.fx.admin).await.expect("monthly");
        for month in &months {
            let theirs = payments.iter().filter(|p| {
                let day = calendar.date_of(p.transaction_date);
                format!("{:04}-{:02}", day.year(), day.month()) == month.month
            });
            let sum: Decimal = theirs.clone().map(|p| p.amount.get()).sum();
            assert_eq!(month.total_amount, sum.normalize(), "the payments of {} (D12)", month.month);
            assert_eq!(month.transaction_count, theirs.count() as u64, "the payments of {}", month.month);
        }

        // Top vendors: active vendors by balance, then name key, then id (D12).
        let mut ranked: Vec<&Vendor> = vendors.iter().filter(|vendor| vendor.is_active).collect();
        ranked.sort_by(|a, b| {
            b.totals
                .outstanding_balance
                .cmp(&a.totals.outstanding_balance)
                .then_with(|| crate::text::key(&a.name).cmp(&crate::text::key(&b.name)))
                .then(a.id.cmp(&b.id))
        });
        let top = self.fx.engine.top_vendors(&self.fx.admin, 100).await.expect("top vendors");
        let top: Vec<(VendorId, Decimal, u64)> =
            top.iter().map(|top| (top.vendor_id, top.outstanding_balance, top.total_invoices)).collect();
        let expected: Vec<(VendorId, Decimal, u64)> = ranked
            .iter()
            .map(|vendor| {
                let active = invoices.iter().filter(|i| i.vendor_id == vendor.id && i.is_active).count();
                (vendor.id, vendor.totals.outstanding_balance, active as u64)
            })
            .collect();
        assert_eq!(top, expected, "top vendors from the kept balances");

        // Unfiltered and state-only lists take their totals from kept counts.
        let total = |page_total: u64, expected: usize, what: &str| assert_eq!(page_total, expected as u64, "{what}");
        let page = InvoiceQuery { page: PageRequest::new(1, 1), ..InvoiceQuery::default() };
        let listed = self.fx.engine.list_invoices(&self.fx.admin, &page).await.expect("invoices");
        total(listed.total_count, invoices.len(), "every invoice");
        for is_active in [true, false] {
            let mut query = TransactionQuery { page: PageRequest::new(1, 1), ..TransactionQuery::default() };
            query.filter.is_active = is_active;
            let listed = self.fx.engine.list_transactions(&self.fx.admin, &query).await.expect("payments");
            total(listed.total_count, self.all_payments(is_active).await.len(), "payments by state");
            let mut query = VendorQuery { page: PageRequest::new(1, 1), ..VendorQuery::default() };
            query.filter.is_active = is_active;
            let listed = self.fx.engine.list_vendors(&self.fx.admin, &query).await.expect("vendors");
            let expected = vendors.iter().filter(|vendor| vendor.is_active == is_active).count();
            total(listed.total_count, expected, "vendors by state");
        }

        // A vendor payment lists exactly its active parts, and is gone when none is left (D31);
        // a part replaced on its own may change its amount, so they need not add up to it.
        for id in &self.vendor_payments {
            match self.fx.engine.get_vendor_payment(&self.fx.admin, *id).await {
                Ok(payment) => {
                    let mut listed: Vec<TransactionId> = payment.transactions.iter().map(|part| part.id).collect();
                    let mut parts: Vec<TransactionId> = payments
                        .iter()
                        .filter(|part| part.vendor_payment_id == Some(*id))
                        .map(|part| part.id)
                        .collect();
                    listed.sort();
                    parts.sort();
                    assert_eq!(listed, parts, "the vendor payment lists its active parts: {payment:?}");
                }
                Err(Error::NotFound { .. }) => {
                    assert!(!payments.iter().any(|part| part.vendor_payment_id == Some(*id)), "no active part is left");
                }
                Err(other) => panic!("reading a vendor payment failed: {other:?}"),
            }
        }

        super::reconciled::check(&self.fx, &vendors, &invoices, &payments, &credits, seed).await;
        self.check_paging(seed).await;
    }

    async fn check_paging(&self, seed: u64) {
        let keys: Vec<InvoiceSortKey> = invoice_sort_keys().collect();
        let key = keys[(seed % keys.len() as u64) as usize];
        let dir = if (seed / 7).is_multiple_of(2) { SortDir::Asc } else { SortDir::Desc };
        let page_size = (seed % 5 + 1) as u32;
        let mut query =
            InvoiceQuery { sort: Sort { key, dir }, page: PageRequest::new(1, 100), ..InvoiceQuery::default() };
        if seed.is_multiple_of(3) {
            query.filter.is_active = Some(true);
        }
        let whole = self.fx.engine.list_invoices(&self.fx.admin, &query).await.expect("list").items;
        for pair in whole.windows(2) {
            assert_eq!(
                invoice_order(query.sort, &pair[0], &pair[1]),
                std::cmp::Ordering::Less,
                "sorted by {key:?} {dir:?} then id"
            );
        }
        let mut paged = Vec::new();
        let mut page_number = 1;
        loop {
            query.page = PageRequest::new(page_number, page_size);
            let page = self.fx.engine.list_invoices(&self.fx.admin, &query).await.expect("page");
            assert_eq!(page.total_count, whole.len() as u64, "every page reports the whole count");
            if page.items.is_empty() {
                break;
            }
            assert!(page.items.len() <= page_size as usize);
            paged.extend(page.items.into_iter().map(|i| i.id));
            page_number += 1;
        }
        let expected: Vec<InvoiceId> = whole.iter().map(|i| i.id).collect();
        assert_eq!(paged, expected, "pages are disjoint and their union is the sorted list");
    }

    /// Everything observable, with ids written as creation ordinals, for comparing backends.
    pub async fn snapshot(&self) -> String {
        let vendor_ordinal: BTreeMap<VendorId, usize> =
            self.vendors.iter().enumerate().map(|(n, id)| (*id, n)).collect();
        let invoice_ordinal: BTreeMap<InvoiceId, usize> =
            self.invoices.iter().enumerate().map(|(n, id)| (*id, n)).collect();
        let payment_ordinal: BTreeMap<TransactionId, usize> =
            self.payments.iter().enumerate().map(|(n, id)| (*id, n)).collect();
        let v = |id: VendorId| vendor_ordinal.get(&id).copied().unwrap_or(usize::MAX);
        let i = |id: InvoiceId| invoice_ordinal.get(&id).copied().unwrap_or(usize::MAX);
        let p = |id: TransactionId| payment_ordinal.get(&id).copied().unwrap_or(usize::MAX);
        let engine = &self.fx.engine;
        let admin = &self.fx.admin;
        let mut out = String::new();

        for is_active in [true, false] {
            for key in [VendorSortKey::Name, VendorSortKey::VendorType, VendorSortKey::OutstandingBalance] {
                let mut query = VendorQuery {
                    sort: Sort { key, dir: SortDir::Desc },
                    page: PageRequest::new(1, 100),
                    ..VendorQuery::default()
                };
                query.filter.is_active = is_active;
                let page = engine.list_vendors(admin, &query).await.expect("vendors");
                let _ = writeln!(out, "vendors active={is_active} {key:?} total={}", page.total_count);
                for vendor in page.items {
                    let _ = writeln!(
                        out,
                        "  v{} {} {} {} {} {} {}",
                        v(vendor.id),
                        vendor.name,
                        vendor.vendor_type.name(),
                        vendor.is_active,
                        vendor.totals.total_invoice_value,
                        vendor.totals.total_paid_amount,
                        vendor.totals.outstanding_balance
                    );
                }
            }
        }
        let invoice_keys = [
            InvoiceSortKey::InvoiceDate,
            InvoiceSortKey::DueDate,
            InvoiceSortKey::Amount,
            InvoiceSortKey::PendingAmount,
            InvoiceSortKey::PaidAmount,
            InvoiceSortKey::InvoiceNumber,
            InvoiceSortKey::VendorName,
        ];
        for key in invoice_keys {
            for dir in [SortDir::Asc, SortDir::Desc] {
                let query =
                    InvoiceQuery { sort: Sort { key, dir }, page: PageRequest::new(1, 100), ..InvoiceQuery::default() };
                let items = engine.list_invoices(admin, &query).await.expect("invoices").items;
                let ids: Vec<usize> = items.iter().map(|invoice| i(invoice.id)).collect();
                let _ = writeln!(out, "invoices {key:?} {dir:?} {ids:?}");
            }
        }
        for status in InvoiceStatus::ALL {
            let mut query = InvoiceQuery { page: PageRequest::new(1, 100), ..InvoiceQuery::default() };
            query.filter.status = Some(status);
            let page = engine.list_invoices(admin, &query).await.expect("invoices");
            let ids: Vec<usize> = page.items.iter().map(|invoice| i(invoice.id)).collect();
            let _ = writeln!(out, "invoices status={} {} {ids:?}", status.name(), page.total_count);
        }
        for search in ["acme", "n-1", "1", "ta"] {
            let mut query = InvoiceQuery { page: PageRequest::new(1, 100), ..InvoiceQuery::default() };
            query.filter.search = Some(search.into());
            let items = engine.list_invoices(admin, &query).await.expect("invoices").items;
            let ids: Vec<usize> = items.iter().map(|invoice| i(invoice.id)).collect();
            let _ = writeln!(out, "invoices search={search} {ids:?}");
        }
        for invoice in self.all_invoices().await {
            let _ = writeln!(
                out,
                "invoice i{} v{} {} {} {} {} {} {} {} {} {:?}",
                i(invoice.id),
                v(invoice.vendor_id),
                invoice.vendor_name,
                invoice.invoice_number,
                invoice.amount,
                invoice.paid_amount,
                invoice.pending_amount(),
                invoice.status.name(),
                invoice.invoice_date,
                invoice.due_date,
                invoice.description
            );
        }
        for is_active in [true, false] {
            for key in [
                TransactionSortKey::TransactionDate,
                TransactionSortKey::Amount,
                TransactionSortKey::TransactionType,
                TransactionSortKey::CreatedAt,
            ] {
                let mut query = TransactionQuery {
                    sort: Sort { key, dir: SortDir::Asc },
                    page: PageRequest::new(1, 100),
                    ..TransactionQuery::default()
                };
                query.filter.is_active = is_active;
                let items = engine.list_transactions(admin, &query).await.expect("payments").items;
                let _ = writeln!(out, "payments active={is_active} {key:?}");
                for payment in items {
                    let _ = writeln!(
                        out,
                        "  p{} i{} {} {} {} {} {:?}",
                        p(payment.id),
                        i(payment.invoice_id),
                        payment.amount,
                        payment.transaction_type.name(),
                        payment.transaction_date,
                        payment.invoice.pending_amount,
                        payment.reference
                    );
                }
            }
        }
        for (n, id) in self.vendor_payments.iter().enumerate() {
            match engine.get_vendor_payment(admin, *id).await {
                Ok(payment) => {
                    let parts: Vec<(usize, usize, String)> = payment
                        .transactions
                        .iter()
                        .map(|part| (p(part.id), i(part.invoice_id), part.amount.to_string()))
                        .collect();
                    let _ = writeln!(
                        out,
                        "vendor payment {n} v{} {} {:?} {parts:?}",
                        v(payment.vendor_id),
                        payment.amount,
                        payment.reference
                    );
                }
                Err(error) => {
                    let _ = writeln!(out, "vendor payment {n} {}", outcome::<()>(Err(error)));
                }
            }
        }
        let credit_ordinal: BTreeMap<VendorCreditId, usize> =
            self.credits.iter().enumerate().map(|(n, id)| (*id, n)).collect();
        for credit in self.all_credits().await {
            let applications: Vec<(usize, String, String)> = credit
                .applications
                .iter()
                .map(|application| {
                    (i(application.invoice_id), application.amount.to_string(), application.date.to_string())
                })
                .collect();
            let _ = writeln!(
                out,
                "credit c{} v{} {} {} {} {:?} {} {} {} {applications:?}",
                credit_ordinal.get(&credit.id).copied().unwrap_or(usize::MAX),
                v(credit.vendor_id),
                credit.credit_number,
                credit.kind.name(),
                credit.claimed_amount,
                credit.accepted_amount,
                credit.applied_amount,
                credit.status().name(),
                credit.is_active,
            );
        }
        let payables = engine.payables(admin).await.expect("payables");
        let _ = writeln!(out, "payables {payables:?}");
        let summary = engine.dashboard_summary(admin).await.expect("summary");
        let _ = writeln!(out, "summary {summary:?}");
        for top in engine.top_vendors(admin, 100).await.expect("top vendors") {
            let _ = writeln!(
                out,
                "top v{} {} {} {}",
                v(top.vendor_id),
                top.vendor_name,
                top.outstanding_balance,
                top.total_invoices
            );
        }
        let recent: Vec<usize> =
            engine.recent_invoices(admin, 100).await.expect("recent").iter().map(|invoice| i(invoice.id)).collect();
        let _ = writeln!(out, "recent {recent:?}");
        for month in engine.monthly_transactions(admin).await.expect("monthly") {
            let _ = writeln!(out, "month {} {} {}", month.month, month.total_amount, month.transaction_count);
        }
        let invoice_ordinal = |id: InvoiceId| i(id);
        super::reconciled::snapshot(&self.fx, &self.vendors, &v, &invoice_ordinal, &mut out).await;
        out
    }
}

/// Every item of a list, read `list` a page of 100 at a time until a page comes back short.
async fn every_page<T>(mut list: impl AsyncFnMut(PageRequest) -> Vec<T>) -> Vec<T> {
    let mut all = Vec::new();
    for page in 1.. {
        let items = list(PageRequest::new(page, 100)).await;
        let done = items.len() < 100;
        all.extend(items);
        if done {
            break;
        }
    }
    all
}

/// Each invoice's credited total as the active applications of `credits` add up, after checking
/// that a credit's applied total is the sum of its own and never above what was accepted.
pub(super) fn credited_by_invoice(credits: &[VendorCredit]) -> BTreeMap<InvoiceId, Decimal> {
    // D44: an invoice's credited total is the sum of the active applications to it; a
    // credit's applied total is the sum of its own, never above what was accepted.
    let mut credited_by_invoice: BTreeMap<InvoiceId, Decimal> = BTreeMap::new();
    for credit in credits {
        let applied: Decimal = credit.applications.iter().map(|application| application.amount.get()).sum();
        assert_eq!(credit.applied_amount, applied.normalize(), "applied is its applications' sum: {credit:?}");
        if !credit.is_active {
            assert!(credit.applications.is_empty(), "a deleted credit has no active application");
            continue;
        }
        assert!(credit.available_amount() >= Decimal::ZERO, "never more applied than accepted: {credit:?}");
        for application in &credit.applications {
            *credited_by_invoice.entry(application.invoice_id).or_default() += application.amount.get();
        }
    }
    credited_by_invoice
}
