//! `/api/vendors` (spec, Vendors; D14, D15, D16).

use pharmapay_core::domain::VendorQuery;
use pharmapay_core::ids::VendorId;
use pharmapay_core::{Action, Collection, Store};

use crate::app::App;
use crate::decode;
use crate::dto::{PageDto, VendorDto};
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// A page of vendors; `isActive=false` needs an admin token.
pub async fn list<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let query = VendorQuery::from_params(&req.query)?;
    let page = app.engine.list_vendors(&principal, &query).await?;
    Ok(super::ok(&PageDto::from_page(page, VendorDto::from)))
}

/// One vendor with its totals.
pub async fn get<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let vendor = app.engine.get_vendor(&principal, VendorId(req.id("id")?)).await?;
    Ok(super::ok(&VendorDto::from(vendor)))
}

/// Creates a vendor: 201 with `Location`.
pub async fn create<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::Vendor, Action::Create)?;
    let body = req.json()?;
    let idempotency = super::idempotency(req, &body)?;
    let vendor = decode::vendor(&body)?;
    let created = app.engine.create_vendor(&principal, vendor, idempotency.as_ref()).await?;
    Ok(super::created(app, &principal, idempotency.as_ref(), created, "vendors", |v| v.id.get(), VendorDto::from).await)
}

/// Replaces a vendor's fields (D14).
pub async fn update<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::Vendor, Action::Update)?;
    let id = VendorId(req.id("id")?);
    let vendor = decode::vendor(&req.json()?)?;
    let vendor = app.engine.update_vendor(&principal, id, vendor).await?;
    Ok(super::ok(&VendorDto::from(vendor)))
}

/// Soft-deletes a vendor, with an optional `{reason}` (D16): 204.
pub async fn delete<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::Vendor, Action::Delete)?;
    let id = VendorId(req.id("id")?);
    let reason = decode::reason(req.optional_json()?.as_ref())?;
    app.engine.delete_vendor(&principal, id, reason).await?;
    Ok(Reply::no_content())
}

/// Restores a soft-deleted vendor (D15).
pub async fn restore<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let vendor = app.engine.restore_vendor(&principal, VendorId(req.id("id")?)).await?;
    Ok(super::ok(&VendorDto::from(vendor)))
}
