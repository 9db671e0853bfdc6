//! Demo data: a deterministic generator that fills any store with a pharmacy's history.
//!
//! `pharmapay seed-demo --vendors N --invoices N --payments N [--branches N] [--seed S]` writes
//! vendors, invoices and payments through the store's bulk loads, in batches, with progress on
//! the terminal; with several branches (D49) the invoices, and the claims on them, are spread
//! evenly over them. The same seed always gives the same data, so benchmarks and bug reports can be
//! reproduced. The spread is meant to look like a real ledger: invoices over the last three
//! years with due dates in the past and the future, invoices unpaid, partly paid, fully paid
//! and overpaid, all three payment types, bank references on transfers, drug licences valid,
//! lapsed and unknown, GSTINs, vendor credits claimed, decided and applied (D44), and a few
//! soft-deleted records of every kind.

use std::io::{IsTerminal, Write};
use std::time::Instant;

use pharmapay_core::access::Authority;
use pharmapay_core::branches::NewBranch;
use pharmapay_core::credits::{CreditDecision, CreditKind, NewCreditApplication, NewVendorCredit};
use pharmapay_core::ids::{BranchId, InvoiceId, VendorId};
use pharmapay_core::invoices::NewInvoice;
use pharmapay_core::jiff::{SignedDuration, Timestamp};
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::{BranchStore, BulkCredit, BulkInvoice, BulkTransaction, BulkVendor, WriteContext};
use pharmapay_core::transactions::reference::PaymentReference;
use pharmapay_core::transactions::{NewTransaction, TransactionType};
use pharmapay_core::vendor_payments::rules::RequestedAllocation;
use pharmapay_core::vendors::gstin::{self, Gstin};
use pharmapay_core::vendors::{NewVendor, VendorType};
use pharmapay_core::{Amount, BulkLoadStore, StoreError};
use tracing::info;

/// How much data to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DemoSize {
    /// Vendors (besides the pharmacy itself).
    pub vendors: u64,
    /// Invoices.
    pub invoices: u64,
    /// Payments.
    pub payments: u64,
    /// Branches the invoices are spread over (D49), the head office among them; at least 1.
    pub branches: u64,
    /// The random seed.
    pub seed: u64,
}

impl DemoSize {
    /// One pharmacy over years: 300 vendors, 30,000 invoices, 90,000 payments.
    pub const SMALL: DemoSize = DemoSize { vendors: 300, invoices: 30_000, payments: 90_000, branches: 1, seed: 1 };
    /// A chain: 10,000 vendors, 1,000,000 invoices, 3,000,000 payments.
    pub const LARGE: DemoSize =
        DemoSize { vendors: 10_000, invoices: 1_000_000, payments: 3_000_000, branches: 1, seed: 1 };
}

/// What was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DemoReport {
    /// Vendors written.
    pub vendors: u64,
    /// Invoices written.
    pub invoices: u64,
    /// Payments written.
    pub payments: u64,
    /// Vendor credits written (D44).
    pub credits: u64,
}

/// Records written per import call (one database transaction each): large batches amortise
/// each commit's index work.
const BATCH: usize = 50_000;

/// SplitMix64: small, fast and good enough for demo data; no cryptographic use. The load
/// harness draws its own test files from it too, so the same seed gives the same file.
pub struct Random(pub u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound`.
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 { 0 } else { self.next() % bound }
    }

    /// True with probability `percent`/100.
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const FIRST: [&str; 16] = [
    "Sun", "Apex", "Medi", "Care", "Life", "Zen", "Nova", "Prime", "Vital", "Cure", "Heal", "Pulse", "Astra", "Bio",
    "Omni", "Trust",
];
const SECOND: [&str; 8] =
    ["Pharma", "Healthcare", "Drugs", "Remedies", "Labs", "Medicals", "Lifesciences", "Therapeutics"];
const THIRD: [&str; 6] = ["Distributors", "Agencies", "Traders", "Wholesale", "Enterprises", "Suppliers"];
const KINDS: [VendorType; 5] =
    [VendorType::Manufacturer, VendorType::Wholesaler, VendorType::Agency, VendorType::Dealer, VendorType::Pharmacy];
const PAYMENT_TYPES: [TransactionType; 3] = [TransactionType::Upi, TransactionType::NetBanking, TransactionType::Cash];

/// Shows progress on a terminal, or logs it every so often otherwise.
struct Progress {
    label: &'static str,
    total: u64,
    done: u64,
    started: Instant,
    terminal: bool,
    next_log: u64,
}

impl Progress {
    fn new(label: &'static str, total: u64) -> Self {
        Self { label, total, done: 0, started: Instant::now(), terminal: std::io::stderr().is_terminal(), next_log: 0 }
    }

    fn advance(&mut self, by: u64) {
        self.done += by;
        let rate = self.done as f64 / self.started.elapsed().as_secs_f64().max(1e-3);
        if self.terminal {
            let width = 30;
            let filled = (self.done * width / self.total.max(1)) as usize;
            let bar: String = "#".repeat(filled) + &"-".repeat(width as usize - filled);
            eprint!("\r{:<9} [{bar}] {:>9}/{:<9} {:>8.0}/s", self.label, self.done, self.total, rate);
            let _ = std::io::stderr().flush();
        } else if self.done >= self.next_log || self.done == self.total {
            info!(what = self.label, done = self.done, total = self.total, per_second = rate as u64, "seeding");
            self.next_log = self.done + (self.total / 10).max(1);
        }
    }

    fn finish(&self) {
        if self.terminal {
            eprintln!(" in {:.1} s", self.started.elapsed().as_secs_f64());
        }
    }
}

/// Writes `records` through `import` once they fill a batch or, being the `last`, there will be
/// no more, counting them in `progress`; `None` while the batch is still filling.
async fn write_batch<T, R, F>(
    records: &mut Vec<T>,
    last: bool,
    progress: &mut Progress,
    import: impl FnOnce(Vec<T>) -> F,
) -> Result<Option<R>, StoreError>
where
    F: Future<Output = Result<R, StoreError>>,
{
    if records.len() < BATCH && !last {
        return Ok(None);
    }
    let written = records.len() as u64;
    let imported = import(std::mem::take(records)).await?;
    progress.advance(written);
    Ok(Some(imported))
}

/// Writes demo data of `size` into `store`, as of `now`.
///
/// Invoice numbers carry the seed (`D1-000001`), so data from different seeds can share a
/// store; the same seed twice clashes on invoice numbers and stops with `Conflict`.
///
/// # Errors
/// The store's errors, such as `Conflict` when this seed was loaded before.
pub async fn seed<S: BulkLoadStore + BranchStore>(
    store: &S,
    size: DemoSize,
    now: Timestamp,
) -> Result<DemoReport, StoreError> {
    let branch_ids = demo_branches(store, size.branches, now).await?;
    let mut random = Random(size.seed ^ 0x005E_ED0F_DA7A);
    let day = SignedDuration::from_hours(24);
    let history_days = 3 * 365;
    let mut report = DemoReport::default();

    let mut progress = Progress::new("vendors", size.vendors);
    let mut vendor_ids: Vec<VendorId> = Vec::with_capacity(size.vendors as usize);
    let mut batch = Vec::with_capacity(BATCH);
    for n in 0..size.vendors {
        let name = format!(
            "{}{} {} {} {:05}",
            FIRST[random.below(16) as usize],
            ["", "x", "ra", "vita"][random.below(4) as usize],
            SECOND[random.below(8) as usize],
            THIRD[random.below(6) as usize],
            n + 1
        );
        let mut vendor = NewVendor::new(name, KINDS[random.below(5) as usize]);
        vendor.phone = Some(format!("+91 {:05} {:05}", random.below(100_000), random.below(100_000)));
        vendor.drug_license_number1 = Some(format!("DL-{:02}-{:06}", random.below(36), random.below(1_000_000)));
        // D36: most licences run for up to two more years, some lapsed lately, a few unknown.
        vendor.drug_license_valid_until = (!random.chance(10)).then(|| now + day * (random.below(800) as i32 - 60));
        // D37: most vendors are registered for GST, each under its own number.
        vendor.gstin = random.chance(70).then(|| demo_gstin(n, random.below(26)));
        let created_at = now - day * (history_days + 30 + random.below(60) as i32);
        batch.push(BulkVendor { vendor, is_active: !random.chance(3), created_at });
        let last = n + 1 == size.vendors;
        if let Some(ids) = write_batch(&mut batch, last, &mut progress, |records| store.load_vendors(records)).await? {
            vendor_ids.extend(ids);
        }
    }
    progress.finish();
    report.vendors = vendor_ids.len() as u64;
    if vendor_ids.is_empty() {
        return Ok(report);
    }

    // Invoices: a few vendors get many (a long tail, as in real purchasing).
    let mut progress = Progress::new("invoices", size.invoices);
    struct InvoiceFacts {
        id: InvoiceId,
        vendor_id: VendorId,
        branch_id: Option<BranchId>,
        cents: i64,
        invoice_day: i64,
        active: bool,
        /// What its active payments add up to, in hundredths.
        paid: i64,
    }
    let mut invoices: Vec<InvoiceFacts> = Vec::with_capacity(size.invoices as usize);
    let mut pending: Vec<(VendorId, Option<BranchId>, i64, i64, bool)> = Vec::with_capacity(BATCH);
    let mut invoice_batch: Vec<BulkInvoice> = Vec::with_capacity(BATCH);
    for n in 0..size.invoices {
        let skewed = random.below(vendor_ids.len() as u64) * random.below(100) / 100;
        let vendor_id = vendor_ids[skewed as usize];
        let invoice_day = random.below(history_days as u64) as i64;
        let invoice_date = now - day * (invoice_day as i32);
        let due_date = invoice_date + day * (15 + random.below(76) as i32);
        let cents = 5_000 + random.below(5_000_000) as i64;
        let active = !random.chance(3);
        // D49: spread evenly over the branches; one branch draws nothing, so its history is the
        // one every earlier build wrote.
        let branch_id = (branch_ids.len() > 1).then(|| branch_ids[random.below(branch_ids.len() as u64) as usize]);
        let invoice = NewInvoice {
            vendor_id,
            branch_id,
            invoice_number: format!("D{}-{:07}", size.seed, n + 1),
            amount: Amount::try_from(Decimal::new(cents, 2)).expect("demo amounts are positive and small"),
            invoice_date,
            due_date,
            description: (random.chance(20)).then(|| "Monthly stock".to_owned()),
        };
        pending.push((vendor_id, branch_id, cents, invoice_day, active));
        let created_at = (invoice_date + SignedDuration::from_hours(random.below(48) as i64)).min(now);
        invoice_batch.push(BulkInvoice { invoice, is_active: active, created_at });
        let last = n + 1 == size.invoices;
        if let Some(ids) =
            write_batch(&mut invoice_batch, last, &mut progress, |records| store.load_invoices(records)).await?
        {
            for (id, (vendor_id, branch_id, cents, invoice_day, active)) in ids.into_iter().zip(pending.drain(..)) {
                invoices.push(InvoiceFacts { id, vendor_id, branch_id, cents, invoice_day, active, paid: 0 });
            }
        }
    }
    progress.finish();
    report.invoices = invoices.len() as u64;
    if invoices.is_empty() {
        return Ok(report);
    }

    // Payments walk the invoices in id order, zero to six on each (three on average at the
    // standard scales), each a tenth to a half of its invoice and dated between the invoice and
    // today, so invoices end unpaid, partly paid, paid or overpaid in realistic proportions.
    // Going in id order keeps each batch's paid-total updates on neighbouring index pages,
    // which makes loading a chain's history several times faster than random order.
    let mut progress = Progress::new("payments", size.payments);
    let mut payments = Vec::with_capacity(BATCH);
    let per_invoice = size.payments.div_ceil(invoices.len() as u64).max(1);
    let mut remaining = size.payments;
    let mut cursor = 0usize;
    let mut references = 0u64;
    while remaining > 0 {
        let count_of_invoices = invoices.len();
        let facts = &mut invoices[cursor % count_of_invoices];
        cursor += 1;
        let count = random.below(2 * per_invoice + 1).min(remaining);
        for _ in 0..count {
            let share = 10 + random.below(41) as i64;
            let cents = (facts.cents * share / 100).max(1);
            let days_after = random.below(121) as i64;
            let paid_day = (facts.invoice_day - days_after).max(0);
            let transaction_date = now - day * (paid_day as i32) - SignedDuration::from_mins(random.below(600) as i64);
            let transaction_type = PAYMENT_TYPES[random.below(3) as usize];
            // D30: bank transfers and some UPI payments carry a reference, each its own.
            references += 1;
            let reference = (transaction_type == TransactionType::NetBanking || random.chance(20))
                .then(|| PaymentReference::parse(&format!("UTR{}{references:010}", size.seed)))
                .and_then(Result::ok);
            let payment = NewTransaction {
                invoice_id: facts.id,
                amount: Amount::try_from(Decimal::new(cents, 2)).expect("demo amounts are positive and small"),
                transaction_date,
                transaction_type,
                reference,
                description: None,
            };
            let active = facts.active && !random.chance(2);
            if active {
                facts.paid += cents;
            }
            payments.push(BulkTransaction { transaction: payment, is_active: active, created_at: transaction_date });
        }
        remaining -= count;
        let last = remaining == 0;
        if let Some(ids) =
            write_batch(&mut payments, last, &mut progress, |records| store.load_transactions(records)).await?
        {
            report.payments += ids.len() as u64;
        }
    }
    progress.finish();

    // Credits (D44): about one active invoice in thirty gets a claim against it (stock expired
    // or broken, a rate billed too high), most of them decided, in full, in part or not at all,
    // and most of what was accepted set against that invoice, as far as it still owes.
    let expected = invoices.iter().filter(|facts| facts.active).count() as u64 / 30;
    let mut progress = Progress::new("credits", expected);
    let mut credits = Vec::with_capacity(BATCH);
    let kinds = [CreditKind::ExpiryReturn, CreditKind::Breakage, CreditKind::RateDifference, CreditKind::Other];
    let at_day = |days_ago: i64| now - day * (days_ago as i32);
    let mut written = 0u64;
    for facts in invoices.iter().filter(|facts| facts.active) {
        if random.below(30) != 0 {
            continue;
        }
        written += 1;
        let claimed_cents = (facts.cents * (2 + random.below(14) as i64) / 100).max(1);
        let claim_day = (facts.invoice_day - 5 - random.below(26) as i64).max(0);
        let decision_day = (claim_day - 3 - random.below(28) as i64).max(0);
        let accepted_cents = match random.below(100) {
            0..=14 => None,
            15..=24 => Some(0),
            25..=44 => Some(claimed_cents * (50 + random.below(50) as i64) / 100),
            _ => Some(claimed_cents),
        };
        let is_active = !random.chance(2);
        let decision = accepted_cents.map(|cents| CreditDecision {
            accepted_amount: Decimal::new(cents, 2),
            decision_date: at_day(decision_day),
            distributor_reference: random.chance(60).then(|| format!("DCN-{}", random.below(1_000_000))),
        });
        let owed = facts.cents - facts.paid;
        let applied = accepted_cents.unwrap_or(0).min(owed);
        let application = (is_active && applied > 0 && random.chance(80)).then(|| NewCreditApplication {
            amount: None,
            date: Some(at_day((decision_day - random.below(10) as i64).max(0))),
            allocations: Some(vec![RequestedAllocation {
                invoice_id: facts.id,
                amount: Amount::try_from(Decimal::new(applied, 2)).expect("positive"),
            }]),
        });
        let credit = NewVendorCredit {
            vendor_id: facts.vendor_id,
            // D49: a claim is its invoice's branch's, and is set against that branch's bills.
            branch_id: facts.branch_id,
            credit_number: format!("CN{}-{written:07}", size.seed),
            kind: kinds[random.below(4) as usize],
            claimed_amount: Amount::try_from(Decimal::new(claimed_cents, 2)).expect("positive"),
            claim_date: at_day(claim_day),
            against_invoice_id: Some(facts.id),
            description: None,
        };
        credits.push(BulkCredit { credit, decision, application, is_active, created_at: at_day(claim_day) });
        if let Some(ids) =
            write_batch(&mut credits, false, &mut progress, |records| store.load_credits(records)).await?
        {
            report.credits += ids.len() as u64;
        }
    }
    if !credits.is_empty()
        && let Some(ids) = write_batch(&mut credits, true, &mut progress, |records| store.load_credits(records)).await?
    {
        report.credits += ids.len() as u64;
    }
    progress.finish();
    Ok(report)
}

/// The ids of `count` active branches (at least the head office), creating `ST002`, `ST003`...
/// as needed beside those there are (D49); answers them head office first.
async fn demo_branches<S: BranchStore>(store: &S, count: u64, now: Timestamp) -> Result<Vec<BranchId>, StoreError> {
    let mut branches: Vec<BranchId> = store.list_branches().await?.iter().map(|branch| branch.id).collect();
    let mut number = branches.len() as u64;
    while (branches.len() as u64) < count.max(1) {
        number += 1;
        let branch = NewBranch::new(&format!("ST{number:03}"), &format!("Store {number}"));
        let ctx = WriteContext::new(None, Authority::Full, now);
        match store.insert_branch(branch, ctx).await {
            Ok(branch) => branches.push(branch.id),
            // A code a deleted branch's restore would need, or an earlier run's: take the next.
            Err(StoreError::Conflict(_)) => continue,
            Err(other) => return Err(other),
        }
    }
    branches.truncate(count.max(1) as usize);
    Ok(branches)
}

/// The demo GSTIN of the `n`th vendor (D37): a state code, a PAN made unique by `n`, entity 1,
/// `Z`, and the check character.
fn demo_gstin(n: u64, letter: u64) -> Gstin {
    let mut text = format!("{:02}", 1 + n % 37).into_bytes();
    let mut high = n / 10_000;
    let mut pan_letters = [b'A'; 5];
    for slot in pan_letters.iter_mut().rev() {
        *slot = b'A' + (high % 26) as u8;
        high /= 26;
    }
    text.extend_from_slice(&pan_letters);
    text.extend_from_slice(format!("{:04}", n % 10_000).as_bytes());
    text.push(b'A' + letter as u8);
    text.extend_from_slice(b"1Z");
    text.push(gstin::check_character(&text).expect("digits and capitals"));
    Gstin::parse(std::str::from_utf8(&text).expect("ASCII")).expect("a well-formed GSTIN")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_gstins_are_valid_and_distinct() {
        let gstins: std::collections::BTreeSet<String> =
            (0..20_000).map(|n| demo_gstin(n, n % 26).to_string()).collect();
        assert_eq!(gstins.len(), 20_000);
    }

    /// The demo history, vendor credits among it (D44), keeps every figure equal to its recount
    /// (D41), in memory and in SQLite.
    #[tokio::test]
    async fn demo_data_keeps_every_figure_exact() {
        let size = DemoSize { vendors: 12, invoices: 1_500, payments: 4_500, branches: 3, seed: 3 };
        let now: Timestamp = "2024-05-10T10:00:00Z".parse().unwrap();
        let memory = pharmapay_store_memory::MemoryStore::new();
        let report = seed(&memory, size, now).await.unwrap();
        assert!(report.credits >= 20, "about one active invoice in thirty has a claim: {report:?}");
        memory.check_figures().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("demo.db");
        let sqlite = pharmapay_store_sqlx::SqliteStore::connect(path.to_str().unwrap()).await.unwrap();
        assert_eq!(seed(&sqlite, size, now).await.unwrap(), report, "the same history on every store");
        sqlite.check_figures().await.unwrap();
        assert_eq!(sqlite.list_branches().await.unwrap().len(), 3, "the head office and two stores");
        sqlite.close().await;
        // D49: every branch has bills, and every claim is its invoice's branch's.
        use sqlx::{Connection, Row};
        let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite:{}", path.display())).await.unwrap();
        let spread = "SELECT COUNT(DISTINCT branch_id) FROM invoices";
        assert_eq!(sqlx::query(spread).fetch_one(&mut conn).await.unwrap().get::<i64, _>(0), 3);
        let astray = "SELECT COUNT(*) FROM vendor_credits c JOIN invoices i ON i.id = c.against_invoice_id \
                      WHERE c.branch_id <> i.branch_id";
        assert_eq!(sqlx::query(astray).fetch_one(&mut conn).await.unwrap().get::<i64, _>(0), 0);
        let credited = "SELECT COUNT(DISTINCT branch_id) FROM vendor_credits";
        assert_eq!(sqlx::query(credited).fetch_one(&mut conn).await.unwrap().get::<i64, _>(0), 3);
    }

    #[test]
    fn the_generator_is_deterministic() {
        let (mut a, mut b) = (Random(7), Random(7));
        let first: Vec<u64> = (0..5).map(|_| a.next()).collect();
        let second: Vec<u64> = (0..5).map(|_| b.next()).collect();
        assert_eq!(first, second);
        assert!(Random(1).below(10) < 10);
    }
}
