//! What a pharmacy reconciles with: the payables aging (D34), a vendor's statement (D35) and the
//! drug licence alerts (D36), with their DTOs and operations. Their Excel downloads are the
//! reports'.

use pharmapay_core::Action::Read;
use pharmapay_core::Collection::{Dashboard, Invoice, Transaction, Vendor};
use pharmapay_core::credits::CREDIT_NUMBER_MAX;
use pharmapay_core::ids::VendorId;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::jiff::civil::Date;
use pharmapay_core::paging::{MAX_DAYS, MAX_PAGE_SIZE, read_days};
use pharmapay_core::reports::aging::AGING_PAGE_SIZE;
use pharmapay_core::reports::aging::{Aging, AgingBucket, AgingFigures, AgingQuery};
use pharmapay_core::reports::statement::STATEMENT_PAGE_SIZE;
use pharmapay_core::reports::statement::StatementLineKind;
use pharmapay_core::reports::statement::{Statement, StatementQuery};
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::text::{CODE_MAX, NAME_MAX, TEXT_MAX};
use pharmapay_core::transactions::reference::REFERENCE_MAX;
use pharmapay_core::vendors::VendorType;
use pharmapay_core::vendors::gstin::GSTIN_LEN;
use pharmapay_core::vendors::licence::LicenceAlert;
use pharmapay_core::vendors::licence::LicenseStatus;
use pharmapay_core::{Access, FieldErrors, PharmaPay, Store};
use serde::Serialize;

use super::{Call, Route};
use crate::dto::{PagePlaceDto, day, instant, money};
use crate::guard::{needs, needs_all};
use crate::http::Reply;
use crate::openapi::schema::{self, names};
use crate::openapi::{
    Json, Operation, describe, flatten, flatten_sometimes, object, path_id, query, query_id, schema_ref,
};
use crate::problem::ApiError;

/// D35, D48: a statement shows the vendor, its invoices and its payments with their references,
/// so it needs the three permissions to read them.
pub const STATEMENT: &[Access] =
    &[Access::new(Vendor, Read), Access::new(Invoice, Read), Access::new(Transaction, Read)];

/// The reconciliation routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/dashboard/license-alerts", needs(Dashboard, Read), licence_alerts_operation, |call| {
            Box::pin(licence_alerts(call))
        }),
        Route::get("/api/payables/aging", needs(Invoice, Read), aging_operation, |call| {
            Box::pin(call.page_like(AgingQuery::from_params, PharmaPay::aging, AgingDto::from))
        }),
        Route::get("/api/vendors/{id}/statement", needs_all(STATEMENT), statement_operation, |call| {
            Box::pin(statement(call))
        }),
    ]
}

fn licence_alerts_operation() -> Operation {
    Operation::new(
        "getLicenseAlerts",
        "Dashboard",
        "Drug licences expired or about to",
        ". Active vendors whose drug licence has expired or expires within `withinDays` days, soonest first (D36).",
    )
    .ok("The alerts.", schema::array(schema_ref::<LicenceAlertDto>()))
    .parameter(query(
        "withinDays",
        format!("The window in days from today: 0 to {MAX_DAYS}, default 30; anything else is a 400."),
        schema::days(),
    ))
    .errors(&[400, 401, 403, 503])
}

fn aging_operation() -> Operation {
    Operation::new(
        "getAging",
        "Reports",
        "Payables aging",
        ". What each vendor was owed on a day, by how late it was (D34): over active invoices dated on or before `asOf`, \
         each invoice's amount less its active payments dated on or before `asOf`, positive remainders only, in the \
         buckets not due, 1-30, 31-60, 61-90, 91-180 and over 180 days past due. Payments made later never change a \
         past aging. With `page` or `pageSize`, one page of the vendor rows and the totals of them all (D43).",
    )
    .ok("The aging.", schema_ref::<AgingDto>())
    .parameters(aging_parameters())
    .parameters(paging("vendor rows", AGING_PAGE_SIZE))
    .errors(&[400, 401, 403, 404, 503])
}

/// The parameters of the aging, which its download reads too.
pub fn aging_parameters() -> Vec<Json> {
    vec![
        query(
            "asOf",
            "The aging day, `YYYY-MM-DD` in the business time zone; default today; after today or malformed is a 400 \
             (D34).",
            day_parameter(),
        ),
        query_id("vendorId", "Only this vendor; an unknown vendor is a 404."),
    ]
}

fn statement_operation() -> Operation {
    Operation::new(
        "getVendorStatement",
        "Vendors",
        "A vendor's statement",
        " (D48: it shows payments and their references). The vendor's ledger over a range of days (D35): the opening \
         balance, its invoices and payments with the running balance, the totals and the closing balance. A deleted \
         vendor's statement is still served; an unknown vendor is a 404. With `page` or `pageSize`, one page of the \
         lines, each with the running balance from the range's opening, and the totals of the whole range (D43).",
    )
    .path_parameter(path_id("id", "Vendor id."))
    .ok("The statement.", schema_ref::<StatementDto>())
    .parameters(statement_range())
    .parameters(paging("lines", STATEMENT_PAGE_SIZE))
    .errors(&[400, 401, 403, 404, 503])
}

/// `page` and `pageSize` of an answer that is whole unless a page of its `rows` is asked for
/// (D43); `page` alone takes `default_size`.
fn paging(rows: &str, default_size: u32) -> Vec<Json> {
    let integer = || object! { "type": "integer", "minimum": 1 };
    vec![
        query(
            "page",
            format!(
                "The 1-based page of {rows} (D43); without `page` and `pageSize` the answer is whole. Below 1 or not an \
                 integer is a 400."
            ),
            integer(),
        ),
        query(
            "pageSize",
            format!(
                "How many {rows} a page holds (D43); {default_size} when `page` comes alone. Below 1 or not an integer \
                 is a 400; above {MAX_PAGE_SIZE} is clamped to {MAX_PAGE_SIZE} (D8)."
            ),
            integer(),
        ),
    ]
}

/// A day in a query, `YYYY-MM-DD` (D34).
fn day_parameter() -> Json {
    object! { "type": "string", "format": "date" }
}

/// How many days lie between the first and the last day a date may fall on (D2: years 1900 to
/// 9999), which bounds how long ago a licence may have expired.
fn days_between_years() -> i64 {
    let first = Date::constant(1900, 1, 1);
    let last = Date::constant(9999, 12, 31);
    first.until(last).map(|span| i64::from(span.get_days())).unwrap_or(i64::MAX)
}

/// The days of a statement, which its download reads too.
pub fn statement_range() -> Vec<Json> {
    vec![
        query(
            "fromDate",
            "The first day, `YYYY-MM-DD` in the business time zone; default the first day of this month. After `toDate` \
             is a 400.",
            day_parameter(),
        ),
        query("toDate", "The last day, `YYYY-MM-DD`; default today.", day_parameter()),
    ]
}

/// Vendors whose drug licence has expired or expires within `withinDays` (default 30, 0..366),
/// soonest first (D36).
async fn licence_alerts<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let mut errors = FieldErrors::new();
    let within_days = read_days(&call.req.query, "withinDays", &mut errors).unwrap_or(30);
    if !errors.is_empty() {
        return Err(ApiError::Invalid(errors));
    }
    let alerts = call.app.engine.licence_alerts(principal, within_days).await?;
    Ok(super::ok(&alerts.into_iter().map(LicenceAlertDto::from).collect::<Vec<_>>()))
}

/// A vendor's statement over `fromDate` to `toDate` (D35).
async fn statement<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let vendor_id = VendorId(call.req.id("id")?);
    let query = StatementQuery::from_params(&call.req.query)?;
    let statement = call.app.engine.vendor_statement(principal, vendor_id, &query).await?;
    Ok(super::ok(&StatementDto::from(statement)))
}

/// One aging row's buckets (D34).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgingFiguresDto {
    #[serde(serialize_with = "money")]
    not_due: Decimal,
    #[serde(rename = "days1To30", serialize_with = "money")]
    days_1_to_30: Decimal,
    #[serde(rename = "days31To60", serialize_with = "money")]
    days_31_to_60: Decimal,
    #[serde(rename = "days61To90", serialize_with = "money")]
    days_61_to_90: Decimal,
    #[serde(rename = "days91To180", serialize_with = "money")]
    days_91_to_180: Decimal,
    #[serde(rename = "over180", serialize_with = "money")]
    over_180: Decimal,
    #[serde(serialize_with = "money")]
    total: Decimal,
    invoice_count: u64,
}

impl From<&AgingFigures> for AgingFiguresDto {
    fn from(figures: &AgingFigures) -> Self {
        Self {
            not_due: figures.get(AgingBucket::NotDue),
            days_1_to_30: figures.get(AgingBucket::Days1To30),
            days_31_to_60: figures.get(AgingBucket::Days31To60),
            days_61_to_90: figures.get(AgingBucket::Days61To90),
            days_91_to_180: figures.get(AgingBucket::Days91To180),
            over_180: figures.get(AgingBucket::Over180),
            total: figures.total().normalize(),
            invoice_count: figures.invoice_count,
        }
    }
}

/// One vendor's aging row (D34).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgingRowDto {
    vendor_id: i64,
    vendor_name: String,
    #[serde(flatten)]
    figures: AgingFiguresDto,
}

/// The payables aging (D34).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgingDto {
    #[serde(serialize_with = "day")]
    as_of: Date,
    vendors: Vec<AgingRowDto>,
    totals: AgingFiguresDto,
    #[serde(flatten)]
    page: Option<PagePlaceDto>,
}

impl From<Aging> for AgingDto {
    fn from(aging: Aging) -> Self {
        Self {
            as_of: aging.as_of,
            totals: AgingFiguresDto::from(&aging.totals),
            page: aging.page.map(PagePlaceDto::from),
            vendors: aging
                .vendors
                .into_iter()
                .map(|row| AgingRowDto {
                    vendor_id: row.vendor_id.get(),
                    figures: AgingFiguresDto::from(&row.figures),
                    vendor_name: row.vendor_name,
                })
                .collect(),
        }
    }
}

/// The vendor at the head of a statement (D35).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatementVendorDto {
    id: i64,
    name: String,
    vendor_type: &'static str,
    gstin: Option<String>,
    drug_license_number1: Option<String>,
}

/// One line of a statement (D35).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatementLineDto {
    #[serde(serialize_with = "day")]
    date: Date,
    kind: &'static str,
    invoice_id: Option<i64>,
    invoice_number: Option<String>,
    transaction_id: Option<i64>,
    reference: Option<String>,
    credit_id: Option<i64>,
    credit_number: Option<String>,
    description: Option<String>,
    #[serde(serialize_with = "money")]
    invoiced: Decimal,
    #[serde(serialize_with = "money")]
    paid: Decimal,
    #[serde(serialize_with = "money")]
    credited: Decimal,
    #[serde(serialize_with = "money")]
    balance: Decimal,
}

/// A vendor's statement (D35).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatementDto {
    vendor: StatementVendorDto,
    #[serde(serialize_with = "day")]
    from_date: Date,
    #[serde(serialize_with = "day")]
    to_date: Date,
    #[serde(serialize_with = "money")]
    opening_balance: Decimal,
    lines: Vec<StatementLineDto>,
    #[serde(serialize_with = "money")]
    total_invoiced: Decimal,
    #[serde(serialize_with = "money")]
    total_paid: Decimal,
    #[serde(serialize_with = "money")]
    total_credited: Decimal,
    #[serde(serialize_with = "money")]
    closing_balance: Decimal,
    #[serde(flatten)]
    page: Option<PagePlaceDto>,
}

impl From<Statement> for StatementDto {
    fn from(statement: Statement) -> Self {
        let figures = statement.figures;
        Self {
            vendor: StatementVendorDto {
                id: statement.vendor.id.get(),
                name: statement.vendor.name,
                vendor_type: statement.vendor.vendor_type.name(),
                gstin: statement.vendor.gstin,
                drug_license_number1: statement.vendor.drug_license_number1,
            },
            from_date: statement.from_date,
            to_date: statement.to_date,
            opening_balance: figures.opening_balance,
            lines: figures
                .lines
                .into_iter()
                .map(|line| StatementLineDto {
                    date: line.entry.date,
                    kind: line.entry.kind.name(),
                    invoice_id: line.entry.invoice_id.map(|id| id.get()),
                    invoice_number: line.entry.invoice_number,
                    transaction_id: line.entry.transaction_id.map(|id| id.get()),
                    reference: line.entry.reference,
                    credit_id: line.entry.credit_id.map(|id| id.get()),
                    credit_number: line.entry.credit_number,
                    description: line.entry.description,
                    invoiced: line.invoiced,
                    paid: line.paid,
                    credited: line.credited,
                    balance: line.balance,
                })
                .collect(),
            total_invoiced: figures.total_invoiced,
            total_paid: figures.total_paid,
            total_credited: figures.total_credited,
            closing_balance: figures.closing_balance,
            page: statement.page.map(PagePlaceDto::from),
        }
    }
}

/// A vendor whose drug licence has expired or expires soon (D36).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LicenceAlertDto {
    vendor_id: i64,
    vendor_name: String,
    drug_license_number1: Option<String>,
    #[serde(serialize_with = "instant")]
    drug_license_valid_until: Timestamp,
    license_status: &'static str,
    days_left: i64,
}

impl From<LicenceAlert> for LicenceAlertDto {
    fn from(alert: LicenceAlert) -> Self {
        Self {
            vendor_id: alert.vendor.id.get(),
            vendor_name: alert.vendor.name,
            drug_license_number1: alert.vendor.drug_license_number1,
            drug_license_valid_until: alert.vendor.valid_until,
            license_status: alert.license_status.name(),
            days_left: alert.days_left,
        }
    }
}

describe! {
    AgingFiguresDto as "AgingTotals": "The aging's sums over every vendor (D34)." {
        not_due: schema::money("Owed on invoices not yet due on the day."),
        days_1_to_30: schema::money("Owed 1 to 30 days past due."),
        days_31_to_60: schema::money("Owed 31 to 60 days past due."),
        days_61_to_90: schema::money("Owed 61 to 90 days past due."),
        days_91_to_180: schema::money("Owed 91 to 180 days past due."),
        over_180: schema::money("Owed more than 180 days past due."),
        total: schema::money("The sum of the six buckets."),
        invoice_count: schema::count("Invoices with something owed on the day."),
    }
}

describe! {
    AgingRowDto as "AgingRow": "One vendor owed something on the day (D34)." {
        vendor_id: schema::id("Vendor id."),
        vendor_name: schema::text(NAME_MAX, "Vendor name."),
        figures: flatten::<AgingFiguresDto>(),
    }
}

describe! {
    AgingDto as "Aging":
        "The payables aging as of a day (D34): over active invoices dated on or before it, what each still owed then \
         (its amount less its active payments dated on or before the day), positive remainders only, by days past \
         due." {
        as_of: schema::day(),
        vendors: schema::array(schema_ref::<AgingRowDto>()).with(
            "description",
            "Vendors owed something, by total descending, then name, then id: all of them, or the page asked for (D43).",
        ),
        totals: schema_ref::<AgingFiguresDto>(),
        page: flatten_sometimes::<PagePlaceDto>(),
    }
}

describe! {
    StatementVendorDto as "StatementVendor": "The vendor at the head of a statement (D35)." {
        id: schema::id("Vendor id."),
        name: schema::text(NAME_MAX, "Name."),
        vendor_type: schema::one_of(&names(&VendorType::ALL, VendorType::name), "Kind of business."),
        gstin: schema::nullable_text(GSTIN_LEN, "GSTIN, or null (D37)."),
        drug_license_number1: schema::nullable_text(CODE_MAX, "Primary drug licence, or null."),
    }
}

describe! {
    StatementLineDto as "StatementLine": "One line of a statement (D35)." {
        date: schema::day(),
        kind: schema::one_of(
            &names(
                &[StatementLineKind::Invoice, StatementLineKind::Payment, StatementLineKind::Credit],
                StatementLineKind::name,
            ),
            "What the line records: an invoice, a payment, or a credit the vendor accepted (D44).",
        ),
        invoice_id: schema::nullable_id(
            "The invoice (the one paid, for a payment; the one claimed against, or null, for a credit).",
        ),
        invoice_number: schema::nullable_text(CODE_MAX, "Its number, or null."),
        transaction_id: schema::nullable_id("The payment, or null for an invoice or a credit."),
        reference: schema::nullable_text(
            REFERENCE_MAX.max(CODE_MAX),
            "The payment's reference (D30), or the distributor's reference of a credit (D44), or null.",
        ),
        credit_id: schema::nullable_id("The credit, for a credit line (D44); else null."),
        credit_number: schema::nullable_text(CREDIT_NUMBER_MAX, "The credit's number, or null."),
        description: schema::nullable_text(TEXT_MAX, "Free text, or null."),
        invoiced: schema::money("Invoiced on this line (0 for payments and credits)."),
        paid: schema::money("Paid on this line (0 for invoices and credits)."),
        credited: schema::money("The credit's accepted amount on a credit line (D44); 0 on the others."),
        balance: schema::money("The running balance after this line."),
    }
}

describe! {
    StatementDto as "Statement": "A vendor's statement over a range of days (D35)." {
        vendor: schema_ref::<StatementVendorDto>(),
        from_date: schema::day(),
        to_date: schema::day(),
        opening_balance: schema::money("Invoiced minus paid and credited before `fromDate` (D44)."),
        lines: schema::array(schema_ref::<StatementLineDto>()).with(
            "description",
            "The vendor's active invoices, the active payments of those invoices and its active credits with something \
             accepted (by decision date, D44) dated in the range, by date, invoices before payments before credits on \
             the same day, then id: all of them, or the page asked for (D43).",
        ),
        total_invoiced: schema::money("Invoiced in the range."),
        total_paid: schema::money("Paid in the range."),
        total_credited: schema::money("Credited in the range: the accepted amounts of its credit lines (D44)."),
        closing_balance: schema::money(
            "`openingBalance + totalInvoiced - totalPaid - totalCredited`; over everything, the vendor's \
             `outstandingBalance - availableCredit` (D44).",
        ),
        page: flatten_sometimes::<PagePlaceDto>(),
    }
}

describe! {
    LicenceAlertDto as "LicenceAlert":
        "An active vendor whose drug licence has expired or expires within the window (D36)." {
        vendor_id: schema::id("Vendor id."),
        vendor_name: schema::text(NAME_MAX, "Vendor name."),
        drug_license_number1: schema::nullable_text(CODE_MAX, "Primary drug licence, or null."),
        drug_license_valid_until: schema::instant("The day the licence is valid until."),
        license_status: schema::one_of(&alert_statuses(), "The licence as of today (D36)."),
        days_left: object! {
            "type": "integer",
            "format": "int32",
            "minimum": -days_between_years(),
            "maximum": MAX_DAYS,
            "description": "Whole days from today to that day: 0 on its last day, negative once expired.",
        },
    }
}

/// The statuses an alert can have: every one but Unknown, since an alert has a date.
fn alert_statuses() -> Vec<&'static str> {
    names(&LicenseStatus::ALL, LicenseStatus::name)
        .into_iter()
        .filter(|name| *name != LicenseStatus::Unknown.name())
        .collect()
}
