//! What a pharmacy reconciles with: the payables aging (D34), a vendor's statement (D35) and the
//! drug licence alerts (D36), with their DTOs. Their Excel downloads are the reports'.

use pharmapay_core::Action::Read;
use pharmapay_core::Collection::{Dashboard, Invoice, Transaction, Vendor};
use pharmapay_core::domain::aging::{Aging, AgingBucket, AgingFigures, AgingQuery};
use pharmapay_core::domain::statement::{Statement, StatementQuery};
use pharmapay_core::engine::LicenceAlert;
use pharmapay_core::ids::VendorId;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::jiff::civil::Date;
use pharmapay_core::paging::read_days;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::{Access, FieldErrors, PharmaPay, Store};
use serde::Serialize;

use super::{Call, Route};
use crate::app::{needs, needs_all};
use crate::dto::{day, instant, money};
use crate::http::Reply;
use crate::problem::ApiError;

/// D35, D48: a statement shows the vendor, its invoices and its payments with their references,
/// so it needs the three permissions to read them.
pub const STATEMENT: &[Access] =
    &[Access::new(Vendor, Read), Access::new(Invoice, Read), Access::new(Transaction, Read)];

/// The reconciliation routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/dashboard/license-alerts", needs(Dashboard, Read), |call| Box::pin(licence_alerts(call))),
        Route::get("/api/payables/aging", needs(Invoice, Read), |call| {
            Box::pin(call.page_like(AgingQuery::from_params, PharmaPay::aging, AgingDto::from))
        }),
        Route::get("/api/vendors/{id}/statement", needs_all(STATEMENT), |call| Box::pin(statement(call))),
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
}

impl From<Aging> for AgingDto {
    fn from(aging: Aging) -> Self {
        Self {
            as_of: aging.as_of,
            totals: AgingFiguresDto::from(&aging.totals),
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
    invoice_id: i64,
    invoice_number: String,
    transaction_id: Option<i64>,
    reference: Option<String>,
    description: Option<String>,
    #[serde(serialize_with = "money")]
    invoiced: Decimal,
    #[serde(serialize_with = "money")]
    paid: Decimal,
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
    closing_balance: Decimal,
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
                    invoice_id: line.entry.invoice_id.get(),
                    invoice_number: line.entry.invoice_number,
                    transaction_id: line.entry.transaction_id.map(|id| id.get()),
                    reference: line.entry.reference,
                    description: line.entry.description,
                    invoiced: line.invoiced,
                    paid: line.paid,
                    balance: line.balance,
                })
                .collect(),
            total_invoiced: figures.total_invoiced,
            total_paid: figures.total_paid,
            closing_balance: figures.closing_balance,
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
