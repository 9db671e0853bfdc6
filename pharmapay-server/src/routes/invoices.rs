//! `/api/invoices` (spec, Invoices; D4, D5, D13, D14, D15).

use pharmapay_core::domain::InvoiceQuery;
use pharmapay_core::ids::InvoiceId;
use pharmapay_core::{Action, Collection, Store};

use crate::app::App;
use crate::decode;
use crate::dto::{InvoiceDto, PageDto};
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// A page of invoices, without the nested vendor.
pub async fn list<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let query = InvoiceQuery::from_params(&req.query)?;
    let page = app.engine.list_invoices(&principal, &query).await?;
    Ok(super::ok(&PageDto::from_page(page, InvoiceDto::from)))
}

/// One invoice with its vendor (D13).
pub async fn get<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let detail = app.engine.get_invoice(&principal, InvoiceId(req.id("id")?)).await?;
    Ok(super::ok(&InvoiceDto::from(detail)))
}

/// Creates an invoice: 201 with `Location`; 409 for a taken number (D5).
pub async fn create<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::Invoice, Action::Create)?;
    let body = req.json()?;
    let idempotency = super::idempotency(req, &body)?;
    let invoice = decode::invoice(&body)?;
    let created = app.engine.create_invoice(&principal, invoice, idempotency.as_ref()).await?;
    Ok(super::created(app, &principal, idempotency.as_ref(), created, "invoices", |i| i.id.get(), InvoiceDto::from)
        .await)
}

/// Replaces an invoice's fields (D14).
pub async fn update<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::Invoice, Action::Update)?;
    let id = InvoiceId(req.id("id")?);
    let invoice = decode::invoice(&req.json()?)?;
    let invoice = app.engine.update_invoice(&principal, id, invoice).await?;
    Ok(super::ok(&InvoiceDto::from(invoice)))
}

/// Cancels an invoice, with an optional `{reason}`: 204.
pub async fn delete<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::Invoice, Action::Delete)?;
    let id = InvoiceId(req.id("id")?);
    let reason = decode::reason(req.optional_json()?.as_ref())?;
    app.engine.delete_invoice(&principal, id, reason).await?;
    Ok(Reply::no_content())
}

/// Restores a canceled invoice (D15).
pub async fn restore<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let invoice = app.engine.restore_invoice(&principal, InvoiceId(req.id("id")?)).await?;
    Ok(super::ok(&InvoiceDto::from(invoice)))
}
