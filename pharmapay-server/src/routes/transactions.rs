//! `/api/transactions` (spec, Transactions; D2, D13, D14, D15).

use pharmapay_core::domain::TransactionQuery;
use pharmapay_core::ids::TransactionId;
use pharmapay_core::{Action, Collection, Store};

use crate::app::App;
use crate::decode;
use crate::dto::{PageDto, TransactionDto};
use crate::http::{Reply, Req};
use crate::problem::ApiError;

/// A page of payments with their invoices.
pub async fn list<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let query = TransactionQuery::from_params(&req.query)?;
    let page = app.engine.list_transactions(&principal, &query).await?;
    Ok(super::ok(&PageDto::from_page(page, TransactionDto::from)))
}

/// One payment with its invoice.
pub async fn get<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let transaction = app.engine.get_transaction(&principal, TransactionId(req.id("id")?)).await?;
    Ok(super::ok(&TransactionDto::from(transaction)))
}

/// Records a payment: 201 with `Location`.
pub async fn create<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::Transaction, Action::Create)?;
    let body = req.json()?;
    let idempotency = super::idempotency(req, &body)?;
    let transaction = decode::transaction(&body)?;
    let created = app.engine.create_transaction(&principal, transaction, idempotency.as_ref()).await?;
    Ok(super::created(
        app,
        &principal,
        idempotency.as_ref(),
        created,
        "transactions",
        |t| t.id.get(),
        TransactionDto::from,
    )
    .await)
}

/// Replaces a payment's fields (D14).
pub async fn update<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::Transaction, Action::Update)?;
    let id = TransactionId(req.id("id")?);
    let transaction = decode::transaction(&req.json()?)?;
    let transaction = app.engine.update_transaction(&principal, id, transaction).await?;
    Ok(super::ok(&TransactionDto::from(transaction)))
}

/// Deletes a payment, with an optional `{reason}`: 204.
pub async fn delete<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    super::need(&principal, Collection::Transaction, Action::Delete)?;
    let id = TransactionId(req.id("id")?);
    let reason = decode::reason(req.optional_json()?.as_ref())?;
    app.engine.delete_transaction(&principal, id, reason).await?;
    Ok(Reply::no_content())
}

/// Restores a deleted payment (D15).
pub async fn restore<S: Store>(app: &App<S>, req: &Req) -> Result<Reply, ApiError> {
    let principal = app.principal(req).await?;
    let transaction = app.engine.restore_transaction(&principal, TransactionId(req.id("id")?)).await?;
    Ok(super::ok(&TransactionDto::from(transaction)))
}
