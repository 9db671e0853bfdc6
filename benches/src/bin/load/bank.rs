//! Bank statements (D46), measured on a copy of the prepared database: a 5,000-line statement
//! built from the payments the server holds, uploaded to `POST /api/bank-statements` and timed
//! from the first byte sent to the 201, then one line's action (`unmatch` and `match` back to
//! the same payment, in turn) and a vendor fetch, each sent [`SEQUENTIAL`] times one after the
//! other on one keep-alive connection, so the action's median can be set against the fetch's.
//!
//! The statement reads like a month of a pharmacy's account: about 40 % of its lines carry a
//! recorded payment's reference in the narration (they match by reference), about 30 % a UPI
//! payment's amount and day without a reference (suggested), and the rest other amounts (left
//! unmatched). The copy keeps the statement out of the database the other rows are measured on.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::{Method, StatusCode};
use pharmapay_benches::stats::Latencies;
use pharmapay_core::BusinessCalendar;
use pharmapay_core::jiff::civil::Date;
use pharmapay_core::jiff::{Span, Timestamp};
use pharmapay_server::demo::Random;
use pharmapay_server::{DEMO_ADMIN_EMAIL, DEMO_ADMIN_PASSWORD};
use serde_json::Value;

use crate::client::{self, MakeRequest, request};
use crate::imports::{self, Copy};
use crate::setup::{self, Backend, Logging, Places, Scale};

/// Lines of the statement: D46's benchmark.
pub const LINES: usize = 5_000;
/// Lines carrying a recorded payment's reference (40 %).
const REFERENCED: usize = 2_000;
/// Lines carrying a UPI payment's amount and day but no reference (30 %).
const SUGGESTIBLE: usize = 1_500;
/// The most seconds the upload may take (D46), on SQLite and PostgreSQL alike.
pub const TARGET_SECS: f64 = 2.0;
/// The most a line action's median may be, in vendor fetches' medians (D46).
pub const TARGET_RATIO: f64 = 10.0;
/// Requests of each timed series.
pub const SEQUENTIAL: u64 = 500;
/// Requests sent before each series and not counted (even, so a line's actions end where they
/// began).
const WARMUP: u64 = 20;
/// Pages of 100 payments read per payment type, spread over the statement's month.
const PAGES: u64 = 25;
/// Days the statement spans.
const MONTH_DAYS: i64 = 30;
/// Days between the newest payment and the statement's last day. The demo dates every payment it
/// would place after its seeding day on that day, which therefore holds far more payments than
/// any other; the month ends before it so that the three days around each line stay ordinary.
const BEFORE_NEWEST_DAYS: i64 = 4;

/// What one run measured.
pub struct Measured {
    /// The backend.
    pub backend: Backend,
    /// The scale.
    pub scale: Scale,
    /// What the statement held and how big its file was.
    pub statement: Built,
    /// From the first byte of the upload to its 201.
    pub upload: Duration,
    /// The counts the 201 answered.
    pub counts: Counts,
    /// `unmatch` and `match` together, then each alone.
    pub actions: [Latencies; 3],
    /// `GET /api/vendors/{id}`.
    pub vendor: Latencies,
    /// How busy the machine was before the upload.
    pub conditions: String,
}

/// The line counts an upload answers.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    /// Lines kept.
    pub line_count: u64,
    /// Matched to a payment of the same amount.
    pub matched: u64,
    /// Matched by reference to a payment of another amount.
    pub amount_differs: u64,
    /// Suggested by amount and day.
    pub suggested: u64,
    /// Without a payment.
    pub unmatched: u64,
}

impl Counts {
    /// The counts of an upload's answer (0 for any missing).
    fn of(answer: &Value) -> Self {
        let count = |field: &str| answer[field].as_u64().unwrap_or(0);
        Self {
            line_count: count("lineCount"),
            matched: count("matched"),
            amount_differs: count("amountDiffers"),
            suggested: count("suggested"),
            unmatched: count("unmatched"),
        }
    }
}

/// Measures every SQL backend and scale in `targets` (the prepared databases' URLs) and renders
/// the table. Each upload waits for the machine to be at most `max_busy` busy, as the endpoint
/// blocks do.
///
/// # Errors
/// When a copy, a server or a request fails.
pub async fn measure_all(
    places: &Places,
    targets: &[(Backend, Scale, String)],
    max_busy: f64,
) -> Result<String, String> {
    let mut measured = Vec::new();
    for (backend, scale, url) in targets {
        eprintln!("== bank statement {} {} ==", backend.name(), scale.name());
        measured.push(measure(places, (*backend, *scale), url, max_busy).await?);
    }
    Ok(render(&measured))
}

/// Copies the database at `url`, starts a server on the copy, measures, and drops the copy.
async fn measure(places: &Places, on: (Backend, Scale), url: &str, max_busy: f64) -> Result<Measured, String> {
    let copy = Copy::make(places, on.0, url, "bank").await?;
    let outcome = measure_on(places, on, &copy.url, max_busy).await;
    copy.drop_it(places).await;
    outcome
}

/// Starts a server on the database at `url`, builds the statement from its payments, uploads
/// it, and times the line action and the vendor fetch.
async fn measure_on(
    places: &Places,
    (backend, scale): (Backend, Scale),
    url: &str,
    max_busy: f64,
) -> Result<Measured, String> {
    let (mut server, addr) = setup::start_server(places, backend, scale, url, Logging::Quiet)?;
    let (token, _) = setup::login(addr, DEMO_ADMIN_EMAIL, DEMO_ADMIN_PASSWORD).await?;
    let calendar = calendar(addr, &token).await?;
    let pools = Pools::read(addr, &token, &calendar).await?;
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs();
    let statement = Built::from(&pools);
    eprintln!(
        "statement: {} lines ({} by reference, {} by amount and day, {} other), {} to {}, {:.0} kB",
        statement.lines,
        statement.referenced,
        statement.suggestible,
        statement.other,
        pools.from,
        pools.to,
        statement.file.len() as f64 / 1e3
    );

    let conditions = crate::machine::quiet_machine(max_busy).await;
    eprintln!("{conditions}");
    // A fresh account, so that no line is a duplicate of an earlier statement's.
    let path = format!("/api/bank-statements?account=bench-{stamp}");
    let started = Instant::now();
    let (status, answer) = imports::send(addr, &token, &path, "text/csv", statement.file.clone()).await?;
    let upload = started.elapsed();
    if status != 201 {
        return Err(format!("the upload answered {status}: {answer}"));
    }
    let counts = Counts::of(&answer);
    eprintln!("upload: {:.2} s, {counts:?}", upload.as_secs_f64());
    let statement_id = answer["id"].as_i64().ok_or("the upload answered no id")?;

    let vendor_path = format!("/api/vendors/{}", a_vendor(addr, &token).await?);
    let vendor_token = token.clone();
    let vendor = Latencies::of(
        sequential(addr, Arc::new(move |_, _| request(addr, Method::GET, &vendor_path, Some(&vendor_token), None)))
            .await?,
    );
    eprintln!("vendor fetch: p50 {:.2} ms, p99 {:.2} ms", vendor.p50_ms(), vendor.p99_ms());

    let (line_id, transaction_id) = matched_line(addr, &token, statement_id).await?;
    let base = format!("/api/bank-statements/{statement_id}/lines/{line_id}");
    let match_body = Bytes::from(format!(r#"{{"transactionId":{transaction_id}}}"#));
    let action_token = token.clone();
    // Even requests unmatch the line, odd ones match it back to its payment.
    let samples = sequential(
        addr,
        Arc::new(move |_, n| match n % 2 {
            0 => request(addr, Method::POST, &format!("{base}/unmatch"), Some(&action_token), None),
            _ => request(addr, Method::POST, &format!("{base}/match"), Some(&action_token), Some(match_body.clone())),
        }),
    )
    .await?;
    let alone = |parity: usize| samples.iter().skip(parity).step_by(2).copied().collect::<Vec<_>>();
    let actions = [Latencies::of(samples.clone()), Latencies::of(alone(0)), Latencies::of(alone(1))];
    eprintln!(
        "line action: p50 {:.2} ms, p99 {:.2} ms (unmatch p50 {:.2} ms, match p50 {:.2} ms)",
        actions[0].p50_ms(),
        actions[0].p99_ms(),
        actions[1].p50_ms(),
        actions[2].p50_ms()
    );
    server.stop();
    Ok(Measured { backend, scale, statement, upload, counts, actions, vendor, conditions })
}

/// Sends [`WARMUP`] requests, then [`SEQUENTIAL`] more one after the other on one keep-alive
/// connection, and answers the latter's latencies (microseconds) in order.
///
/// # Errors
/// When a request fails or answers anything but 200.
async fn sequential(addr: SocketAddr, make: MakeRequest) -> Result<Vec<u64>, String> {
    let limit = Duration::from_secs(600);
    let mut latencies = Vec::new();
    for total in [WARMUP, SEQUENTIAL] {
        let answers = client::send_all(addr, 1, total, Arc::clone(&make), limit).await?;
        if let Some(failed) = answers.iter().find(|answer| answer.status != Ok(StatusCode::OK)) {
            return Err(format!("a timed request answered {:?}", failed.status));
        }
        latencies = answers.into_iter().map(|answer| answer.latency_us).collect();
    }
    Ok(latencies)
}

/// Sends a GET and answers its body, or an error naming `what`.
async fn get(addr: SocketAddr, token: &str, path: &str, what: &str) -> Result<Value, String> {
    match client::call(addr, Method::GET, path, Some(token), None).await? {
        (StatusCode::OK, body) => Ok(body),
        (status, body) => Err(format!("{what}: {status} {body}")),
    }
}

/// The business calendar the server dates payments in, so that a line's day is its payment's.
async fn calendar(addr: SocketAddr, token: &str) -> Result<BusinessCalendar, String> {
    let zone = get(addr, token, "/api/settings/TimeZone", "the time zone").await?;
    let zone = zone["value"].as_str().unwrap_or("UTC");
    BusinessCalendar::parse(zone).map_err(|error| format!("the time zone {zone}: {error}"))
}

/// A vendor that exists: the middle one of the first page, as the endpoint rows pick it.
async fn a_vendor(addr: SocketAddr, token: &str) -> Result<i64, String> {
    let vendors = get(addr, token, "/api/vendors?pageSize=100", "vendors").await?;
    let items = vendors["items"].as_array().cloned().unwrap_or_default();
    items.get(items.len() / 2).and_then(|vendor| vendor["id"].as_i64()).ok_or_else(|| "no vendors".to_owned())
}

/// The first line of the statement matched by its reference, and the payment it holds.
async fn matched_line(addr: SocketAddr, token: &str, statement: i64) -> Result<(i64, i64), String> {
    let path = format!("/api/bank-statements/{statement}/lines?status=Matched&page=1&pageSize=100");
    let lines = get(addr, token, &path, "the matched lines").await?;
    lines["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|line| Some((line["id"].as_i64()?, line["transactionId"].as_i64()?)))
        .ok_or_else(|| "no line of the statement is matched to a payment on its own".to_owned())
}

/// A payment as `GET /api/transactions` lists it.
#[derive(Clone, Debug)]
struct Payment {
    /// Its amount in hundredths.
    cents: i64,
    /// Its day on the business calendar.
    date: Date,
    /// Whether it went by UPI (else by net banking).
    upi: bool,
    /// Its reference (D30).
    reference: Option<String>,
}

/// The payments of the statement's month the lines are made from.
struct Pools {
    /// The statement's first day.
    from: Date,
    /// Its last day.
    to: Date,
    /// Payments carrying a reference.
    referenced: Vec<Payment>,
    /// UPI payments without one.
    unreferenced: Vec<Payment>,
}

impl Pools {
    /// Reads up to [`PAGES`] pages of net banking payments (which all carry a reference in the
    /// demo) and as many of UPI payments (a fifth of which do), spread evenly over the month
    /// ending [`BEFORE_NEWEST_DAYS`] before the newest payment.
    async fn read(addr: SocketAddr, token: &str, calendar: &BusinessCalendar) -> Result<Self, String> {
        let newest = get(addr, token, "/api/transactions?pageSize=1", "the newest payment").await?;
        let newest: Timestamp = newest["items"]
            .get(0)
            .and_then(|item| item["transactionDate"].as_str()?.parse().ok())
            .ok_or("no payments")?;
        let to = calendar.date_of(newest).saturating_sub(Span::new().days(BEFORE_NEWEST_DAYS));
        let from = to.saturating_sub(Span::new().days(MONTH_DAYS - 1));
        let mut read = Vec::new();
        for kind in ["NetBanking", "UPI"] {
            let query = format!("/api/transactions?transactionType={kind}&fromDate={from}&toDate={to}&pageSize=100");
            let first = get(addr, token, &format!("{query}&page=1"), "payments").await?;
            let pages = first["totalCount"].as_u64().unwrap_or(0).div_ceil(100);
            let wanted = PAGES.min(pages);
            for page in (0..wanted).map(|k| 1 + k * pages / wanted.max(1)) {
                let body = if page == 1 {
                    first.clone()
                } else {
                    get(addr, token, &format!("{query}&page={page}"), "payments").await?
                };
                let listed = body["items"].as_array().into_iter().flatten().filter_map(|item| payment(item, calendar));
                // The endpoint rows' payments (0.01 each) are left out: no bank line is that small.
                read.extend(listed.filter(|payment| payment.cents >= 100));
            }
        }
        let (referenced, unreferenced): (Vec<Payment>, Vec<Payment>) =
            read.into_iter().partition(|payment| payment.reference.is_some());
        let unreferenced = unreferenced.into_iter().filter(|payment| payment.upi).collect();
        Ok(Self { from, to, referenced, unreferenced })
    }
}

/// A listed payment by UPI or net banking, if it reads as one.
fn payment(item: &Value, calendar: &BusinessCalendar) -> Option<Payment> {
    let cents = (item["amount"].as_f64()? * 100.0).round() as i64;
    let paid: Timestamp = item["transactionDate"].as_str()?.parse().ok()?;
    let upi = match item["transactionType"].as_str()? {
        "UPI" => true,
        "NetBanking" => false,
        _ => return None,
    };
    let reference = item["reference"].as_str().map(str::to_owned);
    Some(Payment { cents, date: calendar.date_of(paid), upi, reference })
}

/// Shuffles `items` in place (Fisher-Yates) with the demo data's generator, so the same
/// payments give the same statement.
fn shuffle<T>(random: &mut Random, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        items.swap(i, random.below(i as u64 + 1) as usize);
    }
}

/// A statement's file and what went into it.
pub struct Built {
    /// The CSV file.
    pub file: Bytes,
    /// Its lines.
    pub lines: usize,
    /// Lines carrying a payment's reference.
    pub referenced: usize,
    /// Lines carrying a UPI payment's amount and day.
    pub suggestible: usize,
    /// Lines of other amounts.
    pub other: usize,
    /// The first and last day.
    pub days: (Date, Date),
}

/// What a bank writes for money out that is no vendor payment. None holds a run of 12 letters
/// and digits with 6 digits, so none offers a reference to match.
const OTHER: [&str; 8] = [
    "ATM WDL-ATM CASH CHANDNI CHOWK",
    "POS RELIANCE FRESH DELHI",
    "NEFT DR-SALARY STAFF",
    "ACH D- BAJAJ FINANCE LTD",
    "CHQ PAID-MICR CTS-SHREE PROPERTIES RENT",
    "BILLPAY-BSES RAJDHANI ELECTRICITY",
    "IMPS-GST PAYMENT CHALLAN",
    "UPI-COURIER SERVICES-PAYMENT",
];

/// Payees of the lines that carry no reference.
const PAYEES: [&str; 6] = [
    "MEDPLUS DISTRIBUTORS",
    "APOLLO PHARMA AGENCIES",
    "SHREE MEDICAL STORES",
    "GUPTA DRUG HOUSE",
    "CIPLA WHOLESALE",
    "SUN HEALTH TRADERS",
];

impl Built {
    /// Builds the statement from `pools`: [`REFERENCED`] lines carrying a payment's reference
    /// (in the narration when it reads as a bank reference, 12 to 22 letters and digits with at
    /// least 6 digits; else in the reference column), [`SUGGESTIBLE`] a UPI payment's amount and
    /// day, and the rest of [`LINES`] other amounts on days of the month, all ordered by day as
    /// a bank exports them. Pools too small for their share leave it to other amounts. The
    /// generator's seed is fixed, so both backends, seeded alike, get the same statement.
    fn from(pools: &Pools) -> Self {
        let mut random = Random(46);
        let (mut referenced, mut unreferenced) = (pools.referenced.clone(), pools.unreferenced.clone());
        shuffle(&mut random, &mut referenced);
        shuffle(&mut random, &mut unreferenced);
        referenced.truncate(REFERENCED);
        unreferenced.truncate(SUGGESTIBLE);
        // (day, narration, reference cell, amount in hundredths)
        let mut rows: Vec<(Date, String, String, i64)> = Vec::with_capacity(LINES);
        for payment in &referenced {
            let reference = payment.reference.as_deref().unwrap_or_default();
            let key: String = reference.chars().filter(char::is_ascii_alphanumeric).collect();
            let digits = key.chars().filter(char::is_ascii_digit).count();
            let (shown, cell) =
                if (12..=22).contains(&key.len()) && digits >= 6 { (key, String::new()) } else { (String::new(), key) };
            let narration = if payment.upi {
                format!("UPI/{shown}/PAYMENT")
            } else {
                format!("NEFT DR-{shown}-{}", PAYEES[random.below(PAYEES.len() as u64) as usize])
            };
            rows.push((payment.date, narration, cell, payment.cents));
        }
        for payment in &unreferenced {
            let payee = PAYEES[random.below(PAYEES.len() as u64) as usize];
            rows.push((payment.date, format!("UPI-{payee}-PAYMENT"), String::new(), payment.cents));
        }
        let span = (pools.to - pools.from).get_days().max(0) as u64 + 1;
        let other = LINES - rows.len();
        for _ in 0..other {
            let date = pools.from.saturating_add(Span::new().days(random.below(span) as i64));
            let narration = OTHER[random.below(OTHER.len() as u64) as usize].to_owned();
            rows.push((date, narration, String::new(), 10_000 + random.below(6_000_000) as i64));
        }
        rows.sort_by_key(|row| row.0);
        let mut file = String::with_capacity(LINES * 64);
        file.push_str("Date,Narration,Chq./Ref.No.,Withdrawal Amt.,Deposit Amt.\n");
        for (date, narration, cell, cents) in &rows {
            let day = date.strftime("%d/%m/%Y");
            let _ = writeln!(file, "{day},{narration},{cell},{}.{:02},", cents / 100, cents % 100);
        }
        Self {
            file: Bytes::from(file),
            lines: rows.len(),
            referenced: referenced.len(),
            suggestible: unreferenced.len(),
            other,
            days: (pools.from, pools.to),
        }
    }
}

/// The table, in Markdown.
pub fn render(measured: &[Measured]) -> String {
    let mut text = format!(
        "\n#### Uploading a {}-line bank statement, and one line's action (D46)\n\n\
         | Backend | Scale | Upload | Matched | Amount differs | Suggested | Unmatched \
         | Line action p50 (unmatch, match) | Vendor fetch p50 | Ratio | Target | Met |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
        thousands(LINES)
    );
    for m in measured {
        let ratio = m.actions[0].p50_us as f64 / m.vendor.p50_us.max(1) as f64;
        let met = m.upload.as_secs_f64() <= TARGET_SECS && ratio <= TARGET_RATIO && m.counts.line_count == LINES as u64;
        let _ = writeln!(
            text,
            "| {} | {} | {:.2} s | {} | {} | {} | {} | {:.2} ms ({:.2}, {:.2}) | {:.2} ms | {ratio:.1} x \
             | ≤ {TARGET_SECS:.0} s, ≤ {TARGET_RATIO:.0} x | {} |",
            m.backend.name(),
            m.scale.name(),
            m.upload.as_secs_f64(),
            thousands(m.counts.matched as usize),
            thousands(m.counts.amount_differs as usize),
            thousands(m.counts.suggested as usize),
            thousands(m.counts.unmatched as usize),
            m.actions[0].p50_ms(),
            m.actions[1].p50_ms(),
            m.actions[2].p50_ms(),
            m.vendor.p50_ms(),
            if met { "yes" } else { "no" }
        );
    }
    for m in measured {
        let _ = writeln!(
            text,
            "\n{} {}: {} lines ({:.0} kB) dated {} to {}: {} with a payment's reference, {} with a UPI payment's \
             amount and day, {} other amounts; {} kept. {}.",
            m.backend.name(),
            m.scale.name(),
            thousands(m.statement.lines),
            m.statement.file.len() as f64 / 1e3,
            m.statement.days.0,
            m.statement.days.1,
            thousands(m.statement.referenced),
            thousands(m.statement.suggestible),
            thousands(m.statement.other),
            thousands(m.counts.line_count as usize),
            m.conditions
        );
    }
    let _ = writeln!(
        text,
        "\nThe upload is timed once, on a fresh account, from its first byte to the 201. Each line action and \
         vendor fetch: {SEQUENTIAL} requests one after the other on one keep-alive connection, after {WARMUP} not \
         counted; the action alternates `unmatch` and `match` (back to its payment) on one matched line."
    );
    text
}

/// `5000` as `5,000`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}
