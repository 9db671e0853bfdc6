//! Vendor credits over SQL (D44): [`CreditStore`]. A credit's number is unique among its
//! vendor's active credits (checked under the vendor's lock; the partial unique index
//! `vendor_credits_number` settles a race); replacements and decisions are judged by
//! `rules::credits` over the credit as it stands under its row lock, taken after its vendors'
//! (D48: vendors, then invoices, then credits).

use pharmapay_core::domain::{
    CreditDecision, CreditFilter, CreditKind, CreditQuery, CreditStatus, NewVendorCredit, VendorCredit,
};
use pharmapay_core::ids::{InvoiceId, VendorCreditId, VendorId};
use pharmapay_core::rules::credits::{self, CreditFacts};
use pharmapay_core::rules::restore;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::{CreditStore, StoreResult, UniqueKey, WriteContext};
use pharmapay_core::text::key;
use pharmapay_core::{Entity, Page, StoreError};
use sqlx::Row;

use super::binds::{Binds, conditions, instant_range, page_limits};
use super::guards::exists;
use super::invoices::lock_vendors;
use super::rows::{amount, instant, micros};
use super::{Conn, DbRow, Result, SqlStore, answer, commit, refused, row_by_id};
use crate::error::Error;
use pharmapay_core::money::{from_scaled, to_scaled};

/// The columns a credit is read with, over `vendor_credits c JOIN vendors v`.
macro_rules! credit_columns {
    () => {
        "c.id, c.vendor_id, v.name AS vendor_name, c.credit_number, c.kind, c.against_invoice_id, c.claimed, \
         c.claim_date, c.accepted, c.decision_date, c.distributor_reference, c.applied, c.description, c.is_active, \
         c.created_at, c.updated_at"
    };
}

fn credit_from(row: &DbRow) -> Result<VendorCredit> {
    let kind: &str = row.try_get("kind")?;
    Ok(VendorCredit {
        id: VendorCreditId(row.try_get("id")?),
        vendor_id: VendorId(row.try_get("vendor_id")?),
        vendor_name: row.try_get("vendor_name")?,
        credit_number: row.try_get("credit_number")?,
        kind: CreditKind::parse(kind).ok_or_else(|| Error::corrupt(format!("credit kind {kind}")))?,
        against_invoice_id: row.try_get::<Option<i64>, _>("against_invoice_id")?.map(InvoiceId),
        claimed_amount: amount(row.try_get("claimed")?)?,
        claim_date: instant(row.try_get("claim_date")?)?,
        accepted_amount: row.try_get::<Option<i64>, _>("accepted")?.map(|scaled| from_scaled(scaled).normalize()),
        decision_date: row.try_get::<Option<i64>, _>("decision_date")?.map(instant).transpose()?,
        distributor_reference: row.try_get("distributor_reference")?,
        applied_amount: from_scaled(row.try_get("applied")?).normalize(),
        description: row.try_get("description")?,
        is_active: row.try_get("is_active")?,
        created_at: instant(row.try_get("created_at")?)?,
        updated_at: instant(row.try_get("updated_at")?)?,
        applications: Vec::new(),
    })
}

/// The credit `id` as stored, read on `conn`.
async fn credit_in(conn: &mut Conn, id: i64) -> Result<Option<VendorCredit>> {
    let sql = concat!(
        "SELECT ",
        credit_columns!(),
        " FROM vendor_credits c JOIN vendors v ON v.id = c.vendor_id WHERE c.id = $1"
    );
    row_by_id(conn, sql, id).await?.as_ref().map(credit_from).transpose()
}

/// The vendor of the credit `id`, read without a lock (the caller locks it next).
async fn vendor_of_credit(conn: &mut Conn, id: i64) -> Result<Option<i64>> {
    let row = row_by_id(conn, "SELECT vendor_id FROM vendor_credits WHERE id = $1", id).await?;
    Ok(row.map(|row| row.try_get::<i64, _>("vendor_id")).transpose()?)
}

/// The credit `id` locked for a change: its facts for `rules::credits`, whether it is active,
/// and its number's key.
async fn credit_for_change(conn: &mut Conn, id: i64) -> Result<Option<(CreditFacts, bool, String)>> {
    let row = row_by_id(
        conn,
        concat!(
            "SELECT vendor_id, claimed, claim_date, accepted, applied, is_active, number_key FROM vendor_credits \
             WHERE id = $1",
            for_update!()
        ),
        id,
    )
    .await?;
    let Some(row) = row else { return Ok(None) };
    let facts = CreditFacts {
        vendor_id: VendorId(row.try_get("vendor_id")?),
        claimed: from_scaled(row.try_get("claimed")?),
        claim_date: instant(row.try_get("claim_date")?)?,
        accepted: row.try_get::<Option<i64>, _>("accepted")?.map(from_scaled),
        applied: from_scaled(row.try_get("applied")?),
    };
    Ok(Some((facts, row.try_get("is_active")?, row.try_get("number_key")?)))
}

/// Refuses a number the vendor's other active credits hold (D44, D5).
async fn check_number_free(conn: &mut Conn, vendor_id: i64, number_key: &str, except: Option<i64>) -> Result<()> {
    let query = sqlx::query(
        "SELECT EXISTS (SELECT 1 FROM vendor_credits WHERE vendor_id = $1 AND number_key = $2 AND is_active \
         AND id <> $3)",
    )
    .bind(vendor_id)
    .bind(number_key.to_owned())
    .bind(except.unwrap_or(0));
    if exists(conn, query).await? { refused(StoreError::Conflict(UniqueKey::CreditNumber)) } else { Ok(()) }
}

/// The checks of a claim's fields against what is stored, after its vendor's lock, in the
/// contract's order: the invoice it names (read under a shared lock, after the vendors and
/// before the credit, D48), then its number.
async fn check_claim(conn: &mut Conn, credit: &NewVendorCredit, number_key: &str, except: Option<i64>) -> Result<()> {
    if let Some(invoice_id) = credit.against_invoice_id {
        let row =
            row_by_id(conn, concat!("SELECT vendor_id FROM invoices WHERE id = $1", for_share!()), invoice_id.get())
                .await?;
        let owner = row.map(|row| row.try_get::<i64, _>("vendor_id")).transpose()?.map(VendorId);
        credits::check_against(credit.vendor_id, owner)?;
    }
    check_number_free(conn, credit.vendor_id.get(), number_key, except).await
}

/// The SQL condition over `vendor_credits c` selecting the credits of `status`, as
/// `CreditStatus::compute` decides it (D44).
fn status_condition(status: CreditStatus) -> &'static str {
    match status {
        CreditStatus::Canceled => "NOT c.is_active",
        CreditStatus::Claimed => "c.is_active AND c.accepted IS NULL",
        CreditStatus::Rejected => "c.is_active AND c.accepted = 0",
        CreditStatus::PartlyAccepted => "c.is_active AND c.accepted > 0 AND c.accepted < c.claimed",
        CreditStatus::Accepted => "c.is_active AND c.accepted >= c.claimed",
    }
}

/// The list's conditions over `vendor_credits c`, as `CreditFilter::admits` reads the filter.
fn credit_conditions(binds: &mut Binds, filter: &CreditFilter) -> String {
    let mut parts = Vec::new();
    match filter.is_active {
        Some(true) => parts.push("c.is_active".to_owned()),
        Some(false) => parts.push("NOT c.is_active".to_owned()),
        None => {}
    }
    if let Some(vendor_id) = filter.vendor_id {
        parts.push(format!("c.vendor_id = {}", binds.int(vendor_id.get())));
    }
    if let Some(kind) = filter.kind {
        parts.push(format!("c.kind = {}", binds.text(kind.name())));
    }
    if let Some(status) = filter.status {
        parts.push(format!("({})", status_condition(status)));
    }
    instant_range(&mut parts, binds, "c.claim_date", (filter.from_date, filter.to_date));
    if let Some(before) = filter.claimed_before_start {
        parts.push(format!("c.is_active AND c.accepted IS NULL AND c.claim_date < {}", binds.int(micros(before))));
    }
    conditions(parts)
}

/// A decided amount in ten-thousandths; the decoder bounded it to the amounts' range (D1).
fn scaled(value: Decimal) -> Result<i64> {
    to_scaled(value).ok_or_else(|| Error::corrupt(format!("amount {value} out of the stored range")))
}

impl CreditStore for SqlStore {
    async fn insert_credit(&self, credit: NewVendorCredit, ctx: WriteContext) -> StoreResult<VendorCredit> {
        let (number_key, vendor_id) = (key(&credit.credit_number), credit.vendor_id.get());
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let (true, _) = lock_vendors(&mut db_tx, [vendor_id, vendor_id], vendor_id).await? else {
                return refused(StoreError::ParentInactive(Entity::Vendor));
            };
            check_claim(&mut db_tx, &credit, &number_key, None).await?;
            let row = sqlx::query(
                "INSERT INTO vendor_credits (vendor_id, credit_number, number_key, kind, claimed, claim_date, \
                 against_invoice_id, applied, description, is_active, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, TRUE, $9, $9) RETURNING id",
            )
            .bind(vendor_id)
            .bind(credit.credit_number.clone())
            .bind(number_key.clone())
            .bind(credit.kind.name())
            .bind(credit.claimed_amount.to_scaled())
            .bind(micros(credit.claim_date))
            .bind(credit.against_invoice_id.map(InvoiceId::get))
            .bind(credit.description.clone())
            .bind(micros(ctx.at))
            .fetch_one(&mut *db_tx)
            .await?;
            let id: i64 = row.try_get(0)?;
            let written = credit_in(&mut db_tx, id).await?;
            commit(db_tx, &ctx, "create", Entity::VendorCredit, id, written).await
        })
        .await
    }

    async fn get_credit(&self, id: VendorCreditId) -> StoreResult<Option<VendorCredit>> {
        self.answer_read(|| async move { credit_in(&mut *self.read().await?, id.get()).await }).await
    }

    async fn update_credit(
        &self,
        id: VendorCreditId,
        credit: NewVendorCredit,
        ctx: WriteContext,
    ) -> StoreResult<VendorCredit> {
        let (number_key, vendor_id) = (key(&credit.credit_number), credit.vendor_id.get());
        answer(|| async {
            let mut db_tx = self.begin().await?;
            // D48: both vendors (the credit's now, and the one it names) first, then the credit.
            let Some(current_vendor) = vendor_of_credit(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::VendorCredit));
            };
            let (vendor_active, _) = lock_vendors(&mut db_tx, [current_vendor, vendor_id], vendor_id).await?;
            let Some((facts, true, _)) = credit_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::VendorCredit));
            };
            if facts.vendor_id.get() != current_vendor {
                return Err(Error::Moved("a credit"));
            }
            if !vendor_active {
                return refused(StoreError::ParentInactive(Entity::Vendor));
            }
            check_claim(&mut db_tx, &credit, &number_key, Some(id.get())).await?;
            credits::check_update(&facts, &credit)?;
            sqlx::query(
                "UPDATE vendor_credits SET vendor_id = $2, credit_number = $3, number_key = $4, kind = $5, \
                 claimed = $6, claim_date = $7, against_invoice_id = $8, description = $9, updated_at = $10 \
                 WHERE id = $1",
            )
            .bind(id.get())
            .bind(vendor_id)
            .bind(credit.credit_number.clone())
            .bind(number_key.clone())
            .bind(credit.kind.name())
            .bind(credit.claimed_amount.to_scaled())
            .bind(micros(credit.claim_date))
            .bind(credit.against_invoice_id.map(InvoiceId::get))
            .bind(credit.description.clone())
            .bind(micros(ctx.at))
            .execute(&mut *db_tx)
            .await?;
            let written = credit_in(&mut db_tx, id.get()).await?;
            commit(db_tx, &ctx, "update", Entity::VendorCredit, id.get(), written).await
        })
        .await
    }

    async fn decide_credit(
        &self,
        id: VendorCreditId,
        decision: CreditDecision,
        ctx: WriteContext,
    ) -> StoreResult<VendorCredit> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let Some(vendor_id) = vendor_of_credit(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::VendorCredit));
            };
            lock_vendors(&mut db_tx, [vendor_id, vendor_id], vendor_id).await?;
            let Some((facts, true, _)) = credit_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::VendorCredit));
            };
            if facts.vendor_id.get() != vendor_id {
                return Err(Error::Moved("a credit"));
            }
            credits::check_decision(&facts, &decision)?;
            sqlx::query(
                "UPDATE vendor_credits SET accepted = $2, decision_date = $3, distributor_reference = $4, \
                 updated_at = $5 WHERE id = $1",
            )
            .bind(id.get())
            .bind(scaled(decision.accepted_amount)?)
            .bind(micros(decision.decision_date))
            .bind(decision.distributor_reference.clone())
            .bind(micros(ctx.at))
            .execute(&mut *db_tx)
            .await?;
            let written = credit_in(&mut db_tx, id.get()).await?;
            commit(db_tx, &ctx, "decide", Entity::VendorCredit, id.get(), written).await
        })
        .await
    }

    async fn delete_credit(&self, id: VendorCreditId, ctx: WriteContext) -> StoreResult<()> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let Some(vendor_id) = vendor_of_credit(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::VendorCredit));
            };
            lock_vendors(&mut db_tx, [vendor_id, vendor_id], vendor_id).await?;
            let Some((facts, true, _)) = credit_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::VendorCredit));
            };
            if facts.vendor_id.get() != vendor_id {
                return Err(Error::Moved("a credit"));
            }
            sqlx::query("UPDATE vendor_credits SET is_active = FALSE, updated_at = $2 WHERE id = $1")
                .bind(id.get())
                .bind(micros(ctx.at))
                .execute(&mut *db_tx)
                .await?;
            commit(db_tx, &ctx, "delete", Entity::VendorCredit, id.get(), Some(())).await
        })
        .await
    }

    async fn restore_credit(&self, id: VendorCreditId, ctx: WriteContext) -> StoreResult<VendorCredit> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let Some(vendor_id) = vendor_of_credit(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::VendorCredit));
            };
            let (vendor_active, _) = lock_vendors(&mut db_tx, [vendor_id, vendor_id], vendor_id).await?;
            let Some((facts, false, number_key)) = credit_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::VendorCredit));
            };
            if facts.vendor_id.get() != vendor_id {
                return Err(Error::Moved("a credit"));
            }
            restore::check_parent(Entity::Vendor, vendor_active)?;
            check_number_free(&mut db_tx, vendor_id, &number_key, Some(id.get())).await?;
            sqlx::query("UPDATE vendor_credits SET is_active = TRUE, updated_at = $2 WHERE id = $1")
                .bind(id.get())
                .bind(micros(ctx.at))
                .execute(&mut *db_tx)
                .await?;
            let written = credit_in(&mut db_tx, id.get()).await?;
            commit(db_tx, &ctx, "restore", Entity::VendorCredit, id.get(), written).await
        })
        .await
    }

    async fn list_credits(&self, query: &CreditQuery) -> StoreResult<Page<VendorCredit>> {
        self.answer_read(|| async move {
            let mut binds = Binds::default();
            let filter = credit_conditions(&mut binds, &query.filter);
            let (limit, offset) = page_limits(query.page);
            let sql = format!(
                "SELECT (SELECT COUNT(*) FROM vendor_credits c WHERE {filter}) AS total_count, {columns} \
                 FROM vendor_credits c JOIN vendors v ON v.id = c.vendor_id WHERE {filter} \
                 ORDER BY c.claim_date DESC, c.id DESC LIMIT {limit} OFFSET {offset}",
                columns = credit_columns!(),
            );
            let recount = || {
                let mut binds = Binds::default();
                let filter = credit_conditions(&mut binds, &query.filter);
                binds.query(format!("SELECT COUNT(*) FROM vendor_credits c WHERE {filter}"))
            };
            self.page(binds, sql, query.page, credit_from, recount).await
        })
        .await
    }
}
