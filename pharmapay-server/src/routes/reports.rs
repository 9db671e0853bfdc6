//! `GET /api/reports/{vendors,invoices,transactions}` (spec, Reports; D26), `aging` (D34) and
//! `vendor-statement` (D35): Excel downloads, and their operations.
//!
//! Each report accepts its list's filters (not paging) and holds active records only. How a
//! finished report reaches its client, and how downloads share the server (D48), is
//! [`crate::download`]'s.

use pharmapay_core::Action::Read;
use pharmapay_core::Collection::{Invoice, Transaction, Vendor};
use pharmapay_core::ids::VendorId;
use pharmapay_core::invoices::InvoiceFilter;
use pharmapay_core::paging::{ListFilter, read_id};
use pharmapay_core::reports::aging::AgingQuery;
use pharmapay_core::reports::statement::StatementQuery;
use pharmapay_core::transactions::TransactionFilter;
use pharmapay_core::vendors::VendorFilter;
use pharmapay_core::{FieldErrors, Store};

use super::reconciliation::{STATEMENT, aging_parameters, statement_range};
use super::{Call, Route};
use crate::download::{XLSX, generate};
use crate::guard::{needs, needs_all};
use crate::http::{Reply, Req};
use crate::openapi::{CACHE_CONTROL, Component, Json, Operation, Section, Tag, object, positive_id, query};
use crate::problem::ApiError;

/// The report routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/reports/vendors", needs(Vendor, Read), vendors_operation, |call| Box::pin(vendors(call))),
        Route::get("/api/reports/invoices", needs(Invoice, Read), invoices_operation, |call| Box::pin(invoices(call))),
        Route::get("/api/reports/transactions", needs(Transaction, Read), transactions_operation, |call| {
            Box::pin(transactions(call))
        }),
        Route::get("/api/reports/aging", needs(Invoice, Read), aging_operation, |call| Box::pin(aging(call))),
        Route::get("/api/reports/vendor-statement", needs_all(STATEMENT), statement_operation, |call| {
            Box::pin(vendor_statement(call))
        }),
    ]
}

/// The tag these routes' operations are listed under.
const TAG: Tag = Tag("Reports");

/// The longest `Content-Disposition` a download has: a statement's, of the largest vendor id.
const CONTENT_DISPOSITION_MAX: usize = r#"attachment; filename="statement_9223372036854775807_YYYYMMDD.xlsx""#.len();

/// The name of a download's file (D3, D26).
const CONTENT_DISPOSITION: Component = Component {
    section: Section::Headers,
    name: "ContentDisposition",
    build: || {
        object! {
            "description": "`attachment; filename=\"<name>_YYYYMMDD.xlsx\"`, the date taken in the business time zone \
                 (D3, D26).",
            "required": true,
            "schema": object! { "type": "string", "maxLength": CONTENT_DISPOSITION_MAX },
        }
    },
};

/// A 200 whose body is a workbook.
fn workbook() -> Json {
    object! {
        "description": "The workbook.",
        "headers": object! { "Content-Disposition": CONTENT_DISPOSITION, "Cache-Control": CACHE_CONTROL },
        "content": Json::object().with(
            XLSX,
            object! { "schema": object! { "type": "string", "format": "binary", "contentMediaType": XLSX } },
        ),
    }
}

/// The download of a list's active records.
fn list_report(id: &'static str, summary: &'static str, name: &str, columns: &str, filters: Vec<Json>) -> Operation {
    TAG.operation(
        id,
        summary,
        format!(
            ". An Excel workbook, generated on demand, of the active records the matching list would show with these \
             filters (no paging, D26): file `{name}_YYYYMMDD.xlsx`, columns {columns}. Amount cells are numbers, date \
             cells real dates; the bold header row is frozen with an autofilter. Invalid filters answer problem details \
             before any byte of the file is sent."
        ),
    )
    .response("200", workbook())
    .parameters(filters)
    .errors(&[400, 401, 403, 503])
}

fn vendors_operation() -> Operation {
    list_report(
        "downloadVendorsReport",
        "Vendors as an Excel file",
        "vendors",
        "ID, Name, Type, Address, Phone, Email, Drug License 1, Drug License 2, License Valid Until, License Status, \
         GSTIN, Outstanding Balance, Total Invoice Value, Total Paid, Created At",
        super::vendors::filters(false),
    )
}

fn invoices_operation() -> Operation {
    list_report(
        "downloadInvoicesReport",
        "Invoices as an Excel file",
        "invoices",
        "ID, Invoice Number, Vendor, Amount, Paid Amount, Pending Amount, Status, Invoice Date, Due Date, Description",
        super::invoices::filters(false),
    )
}

fn transactions_operation() -> Operation {
    list_report(
        "downloadTransactionsReport",
        "Transactions as an Excel file",
        "transactions",
        "ID, Invoice Number, Vendor, Amount, Type (Cash / UPI / Net Banking), Transaction Date, Reference, Description",
        super::transactions::filters(false),
    )
}

fn aging_operation() -> Operation {
    TAG.operation(
        "downloadAgingReport",
        "The aging as an Excel file",
        ". The aging of `GET /api/payables/aging` with the same parameters (D34) as a workbook `aging_YYYYMMDD.xlsx` \
         named after `asOf`: columns Vendor ID, Vendor, Not Due, 1-30 Days, 31-60 Days, 61-90 Days, 91-180 Days, Over \
         180 Days, Total, Invoices, one row per vendor and a totals row last.",
    )
    .response("200", workbook())
    .parameters(aging_parameters())
    .errors(&[400, 401, 403, 404, 503])
}

fn statement_operation() -> Operation {
    TAG.operation(
        "downloadVendorStatementReport",
        "A vendor's statement as an Excel file",
        " (D48). The statement of `GET /api/vendors/{id}/statement` (D35) as a workbook \
         `statement_<vendorId>_YYYYMMDD.xlsx` dated today: an opening balance row, the lines (Date, Kind, Invoice \
         Number, Transaction ID, Reference, Description, Invoiced, Paid, Balance) and a closing balance row.",
    )
    .response("200", workbook())
    .parameter(query(
        "vendorId",
        "The vendor; required, a positive integer, else 400; an unknown vendor is a 404.",
        positive_id(),
    ))
    .parameters(statement_range())
    .errors(&[400, 401, 403, 404, 503])
}

/// The query without `page` and `pageSize`: a download is always the whole answer, whatever
/// page its JSON twin was asked for (D51 amending D43), so they are not even read.
fn without_paging(query: &[(String, String)]) -> Vec<(String, String)> {
    query.iter().filter(|(name, _)| name != "page" && name != "pageSize").cloned().collect()
}

/// The list filter `F` a report shares with its list, read from the request's query.
fn filter<F: ListFilter>(req: &Req) -> Result<F, ApiError> {
    let mut errors = FieldErrors::new();
    let filter = F::read(&req.query, &mut errors);
    if errors.is_empty() { Ok(filter) } else { Err(ApiError::Invalid(errors)) }
}

/// Active vendors matching the vendor list's filters.
async fn vendors<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let filter = filter::<VendorFilter>(&call.req)?;
    generate(call.app, call.app.engine.vendors_report(principal, filter)).await
}

/// Active invoices matching the invoice list's filters.
async fn invoices<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let filter = filter::<InvoiceFilter>(&call.req)?;
    generate(call.app, call.app.engine.invoices_report(principal, filter)).await
}

/// Active payments matching the transaction list's filters.
async fn transactions<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let filter = filter::<TransactionFilter>(&call.req)?;
    generate(call.app, call.app.engine.transactions_report(principal, filter)).await
}

/// The payables aging (D34): `asOf` and `vendorId` as the aging takes them.
async fn aging<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let query = AgingQuery::from_params(&without_paging(&call.req.query))?;
    generate(call.app, call.app.engine.aging_report(principal, &query)).await
}

/// A vendor's statement (D35): `vendorId` (required), `fromDate` and `toDate`.
async fn vendor_statement<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let mut errors = FieldErrors::new();
    let vendor_id = read_id(&call.req.query, "vendorId", &mut errors);
    if vendor_id.is_none() && errors.is_empty() {
        errors.add("vendorId", "is required");
    }
    let query = StatementQuery::from_params(&without_paging(&call.req.query));
    match (vendor_id, query) {
        (Some(vendor_id), Ok(query)) if errors.is_empty() => {
            generate(call.app, call.app.engine.statement_report(principal, VendorId(vendor_id), &query)).await
        }
        (_, query) => {
            if let Err(more) = query {
                errors.merge(more);
            }
            Err(ApiError::Invalid(errors))
        }
    }
}
