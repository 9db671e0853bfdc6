//! `GET /api/reports/{vendors,invoices,transactions}` (spec, Reports; D26), `aging` (D34) and
//! `vendor-statement` (D35): Excel downloads.
//!
//! Each report accepts its list's filters (not paging) and holds active records only. How a
//! finished report reaches its client, and how downloads share the server (D48), is
//! [`crate::download`]'s.

use pharmapay_core::Action::Read;
use pharmapay_core::Collection::{Invoice, Transaction, Vendor};
use pharmapay_core::domain::aging::AgingQuery;
use pharmapay_core::domain::statement::StatementQuery;
use pharmapay_core::domain::{InvoiceFilter, TransactionFilter, VendorFilter};
use pharmapay_core::ids::VendorId;
use pharmapay_core::paging::read_id;
use pharmapay_core::{FieldErrors, Store};

use super::reconciliation::STATEMENT;
use super::{Call, Route};
use crate::app::{needs, needs_all};
use crate::download::generate;
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// The report routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/reports/vendors", needs(Vendor, Read), |call| Box::pin(vendors(call))),
        Route::get("/api/reports/invoices", needs(Invoice, Read), |call| Box::pin(invoices(call))),
        Route::get("/api/reports/transactions", needs(Transaction, Read), |call| Box::pin(transactions(call))),
        Route::get("/api/reports/aging", needs(Invoice, Read), |call| Box::pin(aging(call))),
        Route::get("/api/reports/vendor-statement", needs_all(STATEMENT), |call| Box::pin(vendor_statement(call))),
    ]
}

fn filter<T>(req: &Req, read: impl FnOnce(&Vec<(String, String)>, &mut FieldErrors) -> T) -> Result<T, ApiError> {
    let mut errors = FieldErrors::new();
    let filter = read(&req.query, &mut errors);
    if errors.is_empty() { Ok(filter) } else { Err(ApiError::Invalid(errors)) }
}

/// Active vendors matching the vendor list's filters.
async fn vendors<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let filter = filter(&call.req, VendorFilter::from_params)?;
    generate(call.app, call.app.engine.vendors_report(principal, filter)).await
}

/// Active invoices matching the invoice list's filters.
async fn invoices<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let filter = filter(&call.req, InvoiceFilter::from_params)?;
    generate(call.app, call.app.engine.invoices_report(principal, filter)).await
}

/// Active payments matching the transaction list's filters.
async fn transactions<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let filter = filter(&call.req, TransactionFilter::from_params)?;
    generate(call.app, call.app.engine.transactions_report(principal, filter)).await
}

/// The payables aging (D34): `asOf` and `vendorId` as the aging takes them.
async fn aging<S: Store>(call: Call<'_, S>) -> Result<Reply, ApiError> {
    let principal = call.caller()?;
    let query = AgingQuery::from_params(&call.req.query)?;
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
    let query = StatementQuery::from_params(&call.req.query);
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
