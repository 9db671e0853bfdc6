//! The harness's results and how they are printed: one Markdown table per backend and scale,
//! with the targets of the benchmark issue checked against ratios from the same run (the
//! sign-in throttling scenarios' own table below it, rendered by [`crate::logins`]), and a
//! closing list of every target met or missed.

use std::time::Duration;

use pharmapay_benches::stats::{ms, rate};

use crate::client::Measured;
use crate::logins::{self, Throttling};
use crate::setup::{Backend, Scale};
use crate::sql::Ceiling;

/// The endpoints the benchmark issues name, in the order they are measured (reads first, then
/// the writes, then the logins, which hash).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// `GET /api/vendors/:id`.
    GetVendor,
    /// `GET /api/vendors`.
    VendorsDefault,
    /// `GET /api/vendors?sortBy=outstandingBalance&sortDir=desc`.
    VendorsByBalance,
    /// `GET /api/vendors?search=Remedies`.
    VendorsSearch,
    /// `GET /api/invoices`.
    InvoicesDefault,
    /// `GET /api/invoices?sortBy=pendingAmount&sortDir=desc&status=Overdue`.
    InvoicesOverdue,
    /// `GET /api/invoices?status=PartiallyPaid`.
    InvoicesPartly,
    /// `GET /api/invoices?search=D1-000042`.
    InvoicesSearch,
    /// `GET /api/transactions`.
    Transactions,
    /// `GET /api/dashboard/summary`.
    Summary,
    /// `GET /api/dashboard/top-vendors`.
    TopVendors,
    /// `GET /api/dashboard/recent-invoices`.
    RecentInvoices,
    /// `GET /api/dashboard/monthly-transactions`.
    Monthly,
    /// `GET /api/dashboard/payables` (D32).
    Payables,
    /// `GET /api/dashboard/license-alerts` (D36).
    LicenceAlerts,
    /// `GET /api/payables/aging` as of today (D34).
    Aging,
    /// `GET /api/payables/aging?asOf=` a year back (D34).
    AgingYearBack,
    /// `GET /api/vendors/:id/statement` of the vendor with the most invoices, over a year (D35).
    Statement,
    /// The first page (25 vendors) of today's aging (D43).
    AgingPage,
    /// The first page (100 lines) of that year's statement (D43).
    StatementFirstPage,
    /// The last page of that year's statement (D43).
    StatementLastPage,
    /// `POST /api/transactions`.
    CreatePayment,
    /// `POST /api/vendors/:id/payments` over ten invoices (D31).
    VendorPayment,
    /// `POST /api/vendor-credits/:id/applications` over ten invoices (D44).
    ApplyCredit,
    /// `POST /api/auth/login`.
    Login,
    /// `GET /api/vendors/:id` while twenty logins run.
    VendorDuringLogins,
    /// `GET /api/vendors/:id` while year-back agings run on the heavy reads' connections.
    VendorDuringAging,
}

impl Endpoint {
    /// Every endpoint, in measuring order.
    pub const ALL: [Endpoint; 27] = [
        Endpoint::GetVendor,
        Endpoint::VendorsDefault,
        Endpoint::VendorsByBalance,
        Endpoint::VendorsSearch,
        Endpoint::InvoicesDefault,
        Endpoint::InvoicesOverdue,
        Endpoint::InvoicesPartly,
        Endpoint::InvoicesSearch,
        Endpoint::Transactions,
        Endpoint::Summary,
        Endpoint::TopVendors,
        Endpoint::RecentInvoices,
        Endpoint::Monthly,
        Endpoint::Payables,
        Endpoint::LicenceAlerts,
        Endpoint::Aging,
        Endpoint::AgingYearBack,
        Endpoint::Statement,
        Endpoint::AgingPage,
        Endpoint::StatementFirstPage,
        Endpoint::StatementLastPage,
        Endpoint::CreatePayment,
        Endpoint::VendorPayment,
        Endpoint::ApplyCredit,
        Endpoint::Login,
        Endpoint::VendorDuringLogins,
        Endpoint::VendorDuringAging,
    ];

    /// A short key for `--only`.
    pub fn key(self) -> &'static str {
        match self {
            Endpoint::GetVendor => "get-vendor",
            Endpoint::VendorsDefault => "vendors-default",
            Endpoint::VendorsByBalance => "vendors-by-balance",
            Endpoint::VendorsSearch => "vendors-search",
            Endpoint::InvoicesDefault => "invoices-default",
            Endpoint::InvoicesOverdue => "invoices-overdue",
            Endpoint::InvoicesPartly => "invoices-partly-paid",
            Endpoint::InvoicesSearch => "invoices-search",
            Endpoint::Transactions => "transactions-default",
            Endpoint::Summary => "dashboard-summary",
            Endpoint::TopVendors => "dashboard-top-vendors",
            Endpoint::RecentInvoices => "dashboard-recent-invoices",
            Endpoint::Monthly => "dashboard-monthly",
            Endpoint::Payables => "dashboard-payables",
            Endpoint::LicenceAlerts => "dashboard-license-alerts",
            Endpoint::Aging => "aging-today",
            Endpoint::AgingYearBack => "aging-year-back",
            Endpoint::Statement => "statement-year",
            Endpoint::AgingPage => "aging-today-page",
            Endpoint::StatementFirstPage => "statement-year-first-page",
            Endpoint::StatementLastPage => "statement-year-last-page",
            Endpoint::CreatePayment => "create-payment",
            Endpoint::VendorPayment => "vendor-payment",
            Endpoint::ApplyCredit => "apply-credit",
            Endpoint::Login => "login",
            Endpoint::VendorDuringLogins => "get-vendor-during-logins",
            Endpoint::VendorDuringAging => "get-vendor-during-aging",
        }
    }

    /// The request, as the table shows it.
    pub fn label(self) -> &'static str {
        match self {
            Endpoint::GetVendor => "GET /api/vendors/:id",
            Endpoint::VendorsDefault => "GET /api/vendors",
            Endpoint::VendorsByBalance => "GET /api/vendors?sortBy=outstandingBalance&sortDir=desc",
            Endpoint::VendorsSearch => "GET /api/vendors?search=Remedies",
            Endpoint::InvoicesDefault => "GET /api/invoices",
            Endpoint::InvoicesOverdue => "GET /api/invoices?sortBy=pendingAmount&sortDir=desc&status=Overdue",
            Endpoint::InvoicesPartly => "GET /api/invoices?status=PartiallyPaid",
            Endpoint::InvoicesSearch => "GET /api/invoices?search=D1-000042",
            Endpoint::Transactions => "GET /api/transactions",
            Endpoint::Summary => "GET /api/dashboard/summary",
            Endpoint::TopVendors => "GET /api/dashboard/top-vendors",
            Endpoint::RecentInvoices => "GET /api/dashboard/recent-invoices",
            Endpoint::Monthly => "GET /api/dashboard/monthly-transactions",
            Endpoint::Payables => "GET /api/dashboard/payables",
            Endpoint::LicenceAlerts => "GET /api/dashboard/license-alerts",
            Endpoint::Aging => "GET /api/payables/aging",
            Endpoint::AgingYearBack => "GET /api/payables/aging?asOf= (a year back)",
            Endpoint::Statement => "GET /api/vendors/:id/statement (most invoices, a year)",
            Endpoint::AgingPage => "GET /api/payables/aging?page=1",
            Endpoint::StatementFirstPage => "GET /api/vendors/:id/statement?page=1&pageSize=100 (a year)",
            Endpoint::StatementLastPage => "GET /api/vendors/:id/statement?page=<last>&pageSize=100 (a year)",
            Endpoint::CreatePayment => "POST /api/transactions",
            Endpoint::VendorPayment => "POST /api/vendors/:id/payments (10 invoices)",
            Endpoint::ApplyCredit => "POST /api/vendor-credits/:id/applications (10 invoices)",
            Endpoint::Login => "POST /api/auth/login",
            Endpoint::VendorDuringLogins => "GET /api/vendors/:id, 20 logins in parallel",
            Endpoint::VendorDuringAging => "GET /api/vendors/:id, year-back agings in parallel",
        }
    }

    /// Whether the issue holds this read to 10 x `GET /api/vendors/:id` at L: every dashboard
    /// route, the first page of every list, today's aging and a year's statement.
    fn within_ten_vendor_fetches(self) -> bool {
        !matches!(
            self,
            Endpoint::GetVendor
                | Endpoint::AgingYearBack
                | Endpoint::CreatePayment
                | Endpoint::VendorPayment
                | Endpoint::ApplyCredit
                | Endpoint::Login
                | Endpoint::VendorDuringLogins
                | Endpoint::VendorDuringAging
        )
    }
}

/// A bare SQL figure with what it times.
#[derive(Clone, Debug)]
pub struct SqlFigure {
    /// `store` (the statements the store runs), or a variant shown for comparison.
    pub label: &'static str,
    /// The figures.
    pub ceiling: Ceiling,
}

/// One endpoint's measurements.
#[derive(Clone, Debug)]
pub struct Row {
    /// The endpoint.
    pub endpoint: Endpoint,
    /// Connections of the loaded run.
    pub connections: usize,
    /// The loaded run.
    pub loaded: Measured,
    /// The single-connection run.
    pub single: Option<Measured>,
    /// Bare SQL figures.
    pub sql: Option<Vec<SqlFigure>>,
    /// Anything else worth a note.
    pub note: Option<String>,
}

impl Row {
    /// The bare SQL figure the endpoint is compared with: the store's statements, the best
    /// of the monthly variants, or the insert-plus-update transaction for payments.
    fn ceiling(&self) -> Option<&SqlFigure> {
        let figures = self.sql.as_ref()?;
        match self.endpoint {
            Endpoint::Monthly => figures.iter().min_by_key(|figure| figure.ceiling.latencies.p50_us),
            Endpoint::CreatePayment => figures.iter().find(|figure| figure.label == "insert + update"),
            _ => figures.iter().find(|figure| figure.label == "store"),
        }
    }
}

/// One backend at one scale.
pub struct Block {
    /// The backend.
    pub backend: Backend,
    /// The scale.
    pub scale: Scale,
    /// How busy the machine was before.
    pub conditions: String,
    /// How long `seed-demo` took, when this run loaded the data.
    pub seeded_in: Option<Duration>,
    /// The hyper ceiling, loaded.
    pub hyper: Measured,
    /// The hyper ceiling on one connection.
    pub hyper_single: Measured,
    /// Connections of the hyper ceiling's loaded run.
    pub hyper_connections: usize,
    /// Argon2id verifications per second on two threads.
    pub argon2: Option<Ceiling>,
    /// The endpoints.
    pub rows: Vec<Row>,
    /// Bare statements the server was not seen sending (`None`: not checked).
    pub unmatched: Option<Vec<String>>,
    /// The sign-in throttling scenarios (`None`: none was run).
    pub throttling: Option<Throttling>,
    /// The attacks on shared resources (`None`: none was run).
    pub attacks: Option<Vec<crate::attacks::Outcome>>,
}

/// A target of the benchmark issue, checked.
struct Verdict {
    target: &'static str,
    measured: String,
    met: bool,
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

fn single_p50_ms(row: &Row) -> Option<f64> {
    row.single.as_ref().map(|single| single.latencies.p50_ms())
}

/// The single-connection median of `GET /api/vendors/:id` in the block.
fn vendor_fetch_ms(block: &Block) -> Option<f64> {
    block.rows.iter().find(|row| row.endpoint == Endpoint::GetVendor).and_then(single_p50_ms)
}

fn verdict(block: &Block, row: &Row) -> Option<Verdict> {
    let verdict = judge(block, row)?;
    // A target judged on a measurement without a single answer is missed, whatever the ratio:
    // `1-conn` targets on the single-connection run, the others on the loaded one.
    let unanswered = if verdict.target.starts_with("1-conn") {
        row.single.as_ref().is_none_or(|single| single.ok == 0)
    } else {
        row.loaded.ok == 0
    };
    Some(if unanswered {
        Verdict { measured: "no answer in the window".into(), met: false, ..verdict }
    } else {
        verdict
    })
}

fn judge(block: &Block, row: &Row) -> Option<Verdict> {
    let large_sql = block.scale == Scale::Large && block.backend != Backend::Memory;
    let sql_p50 = row.ceiling().map(|figure| figure.ceiling.latencies.p50_ms());
    let latency_ratio = single_p50_ms(row).zip(sql_p50).and_then(|(p50, sql)| ratio(p50, sql));
    match row.endpoint {
        Endpoint::GetVendor if block.backend == Backend::Memory => {
            let share = ratio(row.loaded.rps, block.hyper.rps)?;
            Some(Verdict { target: "req/s >= 0.7 x hyper", measured: format!("{share:.2} x hyper"), met: share >= 0.7 })
        }
        Endpoint::GetVendor => {
            let share = ratio(row.loaded.rps, row.ceiling()?.ceiling.rps)?;
            Some(Verdict {
                target: "req/s >= 0.8 x bare SQL req/s",
                measured: format!("{share:.2} x SQL"),
                met: share >= 0.8,
            })
        }
        endpoint if large_sql && endpoint.within_ten_vendor_fetches() => {
            let times = ratio(single_p50_ms(row)?, vendor_fetch_ms(block)?)?;
            Some(Verdict {
                target: "1-conn p50 <= 10 x vendor fetch",
                measured: format!("{times:.1} x"),
                met: times <= 10.0,
            })
        }
        Endpoint::AgingYearBack if large_sql => {
            let against = latency_ratio?;
            Some(Verdict {
                target: "1-conn p50 <= 2 x bare SQL",
                measured: format!("{against:.2} x SQL"),
                met: against <= 2.0,
            })
        }
        // D44: setting a credit against ten invoices is no slower than paying them.
        Endpoint::ApplyCredit if block.scale == Scale::Small => {
            let payment = block.rows.iter().find(|row| row.endpoint == Endpoint::VendorPayment)?;
            let share = ratio(row.loaded.rps, payment.loaded.rps)?;
            Some(Verdict {
                target: "req/s >= 1 x vendor payment",
                measured: format!("{share:.2} x vendor payment"),
                met: share >= 1.0,
            })
        }
        Endpoint::CreatePayment if block.backend == Backend::Sqlite => {
            let share = ratio(row.loaded.rps, row.ceiling()?.ceiling.rps)?;
            Some(Verdict {
                target: "req/s >= 0.8 x bare insert + update",
                measured: format!("{share:.2} x SQL"),
                met: share >= 0.8,
            })
        }
        _ => None,
    }
}

fn or_dash(value: Option<String>) -> String {
    value.unwrap_or_else(|| "-".into())
}

/// The Markdown of one block.
pub fn render(block: &Block) -> String {
    let mut out = String::new();
    out.push_str(&format!("\n### {}, scale {}\n\n", block.backend.name(), block.scale.name()));
    out.push_str(&format!("Conditions: {}.\n", block.conditions));
    if let Some(seeded) = block.seeded_in {
        out.push_str(&format!("This run loaded the demo data with `seed-demo` in {:.1} s.\n", seeded.as_secs_f64()));
    }
    out.push_str(&format!(
        "Hyper JSON ceiling: {} req/s with {} connections (p50 {} ms, p99 {} ms); one connection: p50 {} ms.\n",
        rate(block.hyper.rps),
        block.hyper_connections,
        ms(block.hyper.latencies.p50_ms()),
        ms(block.hyper.latencies.p99_ms()),
        ms(block.hyper_single.latencies.p50_ms()),
    ));
    if let Some(argon2) = &block.argon2 {
        out.push_str(&format!(
            "Argon2id verify ceiling (the engine's parameters): {}/s on two threads, {} ms each.\n",
            rate(argon2.rps),
            ms(argon2.latencies.p50_ms())
        ));
    }
    match &block.unmatched {
        Some(unmatched) if unmatched.is_empty() => {
            out.push_str("Bare SQL check: every ceiling statement was seen in the server's own SQL log this run.\n")
        }
        Some(unmatched) => out.push_str(&format!(
            "Bare SQL check: NOT seen in the server's SQL log: {}.\n",
            unmatched.iter().map(|sql| format!("`{}...`", &sql[..sql.len().min(60)])).collect::<Vec<_>>().join(", ")
        )),
        None => {}
    }
    out.push_str(
        "\n| Endpoint | Conns | req/s | p50 ms | p99 ms | 1-conn p50 ms | req/s / hyper | SQL p50 ms | SQL req/s \
         | 1-conn p50 / SQL p50 | req/s / SQL req/s | CPU µs/req | SQL CPU µs | CPU / SQL CPU | Target | Met | Notes |\n",
    );
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n");
    out.push_str(&format!(
        "| hyper JSON ceiling (304 B) | {} | {} | {} | {} | {} | 1.00 | - | - | - | - | {} | - | - | - | - | separate process |\n",
        block.hyper_connections,
        rate(block.hyper.rps),
        ms(block.hyper.latencies.p50_ms()),
        ms(block.hyper.latencies.p99_ms()),
        ms(block.hyper_single.latencies.p50_ms()),
        or_dash(block.hyper.cpu_us_per_request.map(rate)),
    ));
    let alone = block.rows.iter().find(|row| row.endpoint == Endpoint::GetVendor).map(|row| row.loaded.rps);
    for row in &block.rows {
        let (sql_p50, sql_rps, sql_cpu, sql_database_cpu) = match (row.endpoint, row.ceiling(), &block.argon2) {
            (Endpoint::Login, _, Some(argon2)) => (Some(argon2.latencies.p50_ms()), Some(argon2.rps), None, None),
            (_, Some(figure), _) => (
                Some(figure.ceiling.latencies.p50_ms()),
                Some(figure.ceiling.rps),
                figure.ceiling.cpu_us,
                figure.ceiling.database_cpu_us,
            ),
            _ => (None, None, None, None),
        };
        let cpu = row.loaded.cpu_us_per_request;
        let mut notes: Vec<String> = Vec::new();
        if row.endpoint == Endpoint::Login {
            notes.push("ceiling: Argon2id verify, one per login".into());
        }
        if let Some(figures) = &row.sql {
            for figure in figures {
                if row.ceiling().is_some_and(|chosen| chosen.label == figure.label) && figures.len() > 1 {
                    notes.push(format!("ceiling = {}", figure.label));
                } else if figure.label != "store" || figures.len() > 1 {
                    notes.push(format!(
                        "{}: p50 {} ms, {}/s",
                        figure.label,
                        ms(figure.ceiling.latencies.p50_ms()),
                        rate(figure.ceiling.rps)
                    ));
                }
            }
        }
        if matches!(row.endpoint, Endpoint::VendorDuringLogins | Endpoint::VendorDuringAging)
            && let Some(share) = alone.and_then(|alone| ratio(row.loaded.rps, alone))
        {
            notes.push(format!("{share:.2} x the rate alone"));
        }
        if row.endpoint.within_ten_vendor_fetches()
            && let Some(times) =
                single_p50_ms(row).zip(vendor_fetch_ms(block)).and_then(|(p50, fetch)| ratio(p50, fetch))
        {
            notes.push(format!("{times:.1} x vendor fetch"));
        }
        if row.endpoint == Endpoint::VendorPayment
            && let Some(single) = block.rows.iter().find(|row| row.endpoint == Endpoint::CreatePayment)
        {
            notes.push(format!(
                "{} allocations/s against {} single payments/s ({:.2} x); one vendor payment p50 {} ms against 10 x {} ms",
                rate(row.loaded.rps * 10.0),
                rate(single.loaded.rps),
                ratio(row.loaded.rps * 10.0, single.loaded.rps).unwrap_or(0.0),
                or_dash(single_p50_ms(row).map(ms)),
                or_dash(single_p50_ms(single).map(ms)),
            ));
        }
        if sql_cpu.is_some() {
            // Where the two cores went besides the server: the load generator's share, and the
            // database's own under the server's load and under the bare statements'.
            let shares: Vec<String> = [
                row.loaded.generator_cpu_us_per_request.map(|us| format!("load generator {} µs/req", rate(us))),
                row.loaded.database_cpu_us_per_request.map(|us| format!("PostgreSQL {} µs/req", rate(us))),
                sql_database_cpu.map(|us| format!("PostgreSQL {} µs per bare list", rate(us))),
            ]
            .into_iter()
            .flatten()
            .collect();
            if !shares.is_empty() {
                notes.push(format!("processor time: {}", shares.join(", ")));
            }
        }
        if let Some(note) = &row.note {
            notes.push(note.clone());
        }
        let errors = row.loaded.errors + row.single.as_ref().map_or(0, |single| single.errors);
        if errors > 0 {
            notes.push(format!("{errors} errors: {}", row.loaded.first_error.as_deref().unwrap_or("?")));
        }
        let verdict = verdict(block, row);
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            row.endpoint.label(),
            row.connections,
            rate(row.loaded.rps),
            ms(row.loaded.latencies.p50_ms()),
            ms(row.loaded.latencies.p99_ms()),
            or_dash(single_p50_ms(row).map(ms)),
            or_dash(ratio(row.loaded.rps, block.hyper.rps).map(|value| format!("{value:.3}"))),
            or_dash(sql_p50.map(ms)),
            or_dash(sql_rps.map(rate)),
            or_dash(single_p50_ms(row).zip(sql_p50).and_then(|(p50, sql)| ratio(p50, sql)).map(|v| format!("{v:.2}"))),
            or_dash(sql_rps.and_then(|sql| ratio(row.loaded.rps, sql)).map(|v| format!("{v:.2}"))),
            or_dash(cpu.map(rate)),
            or_dash(sql_cpu.map(rate)),
            or_dash(cpu.zip(sql_cpu).and_then(|(cpu, sql)| ratio(cpu, sql)).map(|v| format!("{v:.2}"))),
            verdict.as_ref().map_or("-", |verdict| verdict.target),
            verdict.as_ref().map_or("-".to_owned(), |verdict| format!(
                "{} ({})",
                if verdict.met { "met" } else { "MISSED" },
                verdict.measured
            )),
            notes.join("; ").replace('|', "/"),
        ));
    }
    if let Some(throttling) = &block.throttling {
        out.push_str(&logins::render(throttling, block.argon2.as_ref()));
    }
    if let Some(attacks) = &block.attacks {
        out.push_str(&crate::attacks::render(attacks));
    }
    out
}

/// Every target checked in the run, one line each.
pub fn summary(blocks: &[Block]) -> String {
    let mut out = String::from(
        "\n### Targets\n\n| Backend | Scale | Endpoint | Target | Measured | Met |\n|---|---|---|---|---|---|\n",
    );
    for block in blocks {
        for row in &block.rows {
            if let Some(verdict) = verdict(block, row) {
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} |\n",
                    block.backend.name(),
                    block.scale.name(),
                    row.endpoint.label(),
                    verdict.target,
                    verdict.measured,
                    if verdict.met { "met" } else { "MISSED" }
                ));
            }
        }
        for outcome in block.attacks.iter().flatten() {
            for (who, alone, under, met) in crate::attacks::verdicts(outcome) {
                out.push_str(&format!(
                    "| {} | {} | {who} beside the attack {:?} | p99 at most {} x alone | {} ms alone, {} ms beside it | {} |\n",
                    block.backend.name(),
                    block.scale.name(),
                    outcome.attack.key(),
                    crate::attacks::TARGET_RATIO,
                    ms(alone),
                    ms(under),
                    if met { "met" } else { "MISSED" }
                ));
            }
        }
        for target in block.throttling.iter().flat_map(logins::targets) {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                block.backend.name(),
                block.scale.name(),
                target.scenario,
                target.target,
                target.measured,
                if target.met { "met" } else { "MISSED" }
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_keep_three_significant_digits_or_so() {
        assert_eq!(rate(12345.6), "12346");
        assert_eq!(rate(45.67), "45.7");
        assert_eq!(rate(4.567), "4.57");
        assert_eq!(ms(0.1234), "0.123");
        assert_eq!(ms(2.345), "2.35");
        assert_eq!(ms(812.4), "812");
    }

    #[test]
    fn endpoint_keys_are_unique() {
        let mut keys: Vec<&str> = Endpoint::ALL.iter().map(|endpoint| endpoint.key()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), Endpoint::ALL.len());
    }
}
