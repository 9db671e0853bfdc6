//! Vendor credits over SQL (D44): [`CreditStore`]. A credit's number is unique among its
//! vendor's active credits (checked under the vendor's lock; the partial unique index
//! `vendor_credits_number` settles a race); replacements, decisions and applications are judged
//! by `credits::rules` over the credit and the invoices as they stand under their row locks,
//! taken in one order (D48: vendors, then invoices by id, then credits by id); every write
//! applies the kept figures' change core computes from the rows' facts before and after (D41).

use std::collections::{BTreeMap, BTreeSet};

use pharmapay_core::BusinessCalendar;
use pharmapay_core::base::restore;
use pharmapay_core::branches::rules as branch_rules;
use pharmapay_core::credits::rules as credit_rules;
use pharmapay_core::credits::rules::CreditFacts;
use pharmapay_core::credits::{
    CreditDecision, CreditFilter, CreditQuery, CreditStatus, NewCreditApplication, NewVendorCredit, VendorCredit,
};
use pharmapay_core::events::Announcement;
use pharmapay_core::figures::{FigureChange, InvoiceFacts};
use pharmapay_core::ids::{BranchId, CreditApplicationId, InvoiceId, VendorCreditId, VendorId};
use pharmapay_core::reports::dashboard::CreditSummary;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::{CreditStore, StoreResult, UniqueKey, WriteContext};
use pharmapay_core::text::key;
use pharmapay_core::{Entity, Page, StoreError};
use sqlx::Row;

use super::binds::{Binds, conditions, instant_range, page_limits, rows_in};
use super::branches::lock_active_branch;
use super::bulk_loads::locked_invoices;
use super::figures::{credit_facts, ledger_totals_from, unscaled};
use super::guards::exists;
use super::guards::lock_vendors;
use super::records::{credit_columns, credit_from, credit_in};
use super::rows::{instant, micros, scaled};
use super::vendor_payments::payable;
use super::{
    Conn, IMPORT_CHUNK, Query, Result, SqlStore, WriteTx, answer, commit_announcing, commit_moving, refused, row_by_id,
};
use crate::error::Error;

/// The vendor of the credit `id`, read without a lock (the caller locks it next).
async fn vendor_of_credit(conn: &mut Conn, id: i64) -> Result<Option<i64>> {
    let row = row_by_id(conn, "SELECT vendor_id FROM vendor_credits WHERE id = $1", id).await?;
    Ok(row.map(|row| row.try_get::<i64, _>("vendor_id")).transpose()?)
}

/// The credit `id` locked for a change: its facts for `credits::rules` and the kept figures,
/// decided on a day of `calendar`, and its number's key.
async fn credit_for_change(
    conn: &mut Conn,
    id: i64,
    calendar: &BusinessCalendar,
) -> Result<Option<(CreditFacts, String)>> {
    let row = row_by_id(
        conn,
        concat!(
            "SELECT vendor_id, branch_id, is_active, claimed, claim_date, accepted, decision_date, applied, \
             number_key FROM vendor_credits WHERE id = $1",
            for_update!()
        ),
        id,
    )
    .await?;
    row.map(|row| Ok((credit_facts(&row, calendar)?, row.try_get("number_key")?))).transpose()
}

/// Locks the vendor of credit `id` (read first without a lock) and then the credit, in the order
/// writes take them (D48); answers the credit's facts and number key, `None` when it is missing.
async fn lock_credit(
    conn: &mut Conn,
    id: i64,
    calendar: &BusinessCalendar,
) -> Result<Option<(i64, bool, CreditFacts, String)>> {
    let Some(vendor_id) = vendor_of_credit(conn, id).await? else { return Ok(None) };
    let (vendor_active, _) = lock_vendors(conn, [vendor_id, vendor_id], vendor_id).await?;
    let Some((facts, number_key)) = credit_for_change(conn, id, calendar).await? else { return Ok(None) };
    if facts.vendor_id.get() != vendor_id {
        return Err(Error::Moved("a credit"));
    }
    Ok(Some((vendor_id, vendor_active, facts, number_key)))
}

/// Whose active applications to read: a credit's or an invoice's.
#[derive(Clone, Copy)]
enum Of {
    Credit(i64),
    Invoice(i64),
}

/// The active applications of `of`, as (id, credit, invoice, scaled amount).
async fn active_applications(conn: &mut Conn, of: Of) -> Result<Vec<(i64, i64, i64, i64)>> {
    let (sql, value) = match of {
        Of::Credit(id) => {
            ("SELECT id, credit_id, invoice_id, amount FROM credit_applications WHERE credit_id = $1 AND is_active", id)
        }
        Of::Invoice(id) => (
            "SELECT id, credit_id, invoice_id, amount FROM credit_applications WHERE invoice_id = $1 AND is_active",
            id,
        ),
    };
    let rows = sqlx::query(sql).bind(value).fetch_all(&mut *conn).await?;
    rows.iter()
        .map(|row| {
            Ok((row.try_get("id")?, row.try_get("credit_id")?, row.try_get("invoice_id")?, row.try_get("amount")?))
        })
        .collect()
}

/// Soft-deletes the applications `released` ((id, credit, invoice, scaled amount)), taking each
/// off its invoice's credited total and its credit's applied total, and adds to `change` what
/// that moves: `invoices` and `credits` are their facts before, locked by the caller.
pub(super) async fn release(
    conn: &mut Conn,
    released: &[(i64, i64, i64, i64)],
    (invoices, credits): (&BTreeMap<i64, InvoiceFacts>, &BTreeMap<i64, CreditFacts>),
    change: &mut FigureChange,
) -> Result<()> {
    let mut by_invoice: BTreeMap<i64, i64> = BTreeMap::new();
    let mut by_credit: BTreeMap<i64, i64> = BTreeMap::new();
    for (_, credit_id, invoice_id, scaled) in released {
        *by_invoice.entry(*invoice_id).or_default() += scaled;
        *by_credit.entry(*credit_id).or_default() += scaled;
    }
    let ids: Vec<i64> = released.iter().map(|(id, ..)| *id).collect();
    rows_in(conn, &ids, |list| format!("UPDATE credit_applications SET is_active = FALSE WHERE id IN ({list})"))
        .await?;
    subtract(conn, "invoices", "credited", &by_invoice).await?;
    subtract(conn, "vendor_credits", "applied", &by_credit).await?;
    for (invoice_id, scaled) in by_invoice {
        if let Some(before) = invoices.get(&invoice_id) {
            let after = InvoiceFacts { credited: before.credited - unscaled(i128::from(scaled)), ..*before };
            change.invoice(invoice_id, Some(before), Some(&after));
        }
    }
    for (credit_id, scaled) in by_credit {
        if let Some(before) = credits.get(&credit_id) {
            let after = CreditFacts { applied: before.applied - unscaled(i128::from(scaled)), ..*before };
            change.row(Some(before), Some(&after));
        }
    }
    Ok(())
}

/// Takes each of `amounts` (scaled, by row id) off `column` of its row of `table` (both this
/// file's names), in one statement per chunk of rows.
async fn subtract(conn: &mut Conn, table: &str, column: &str, amounts: &BTreeMap<i64, i64>) -> Result<()> {
    let rows: Vec<(i64, i64)> = amounts.iter().map(|(id, amount)| (*id, *amount)).collect();
    for chunk in rows.chunks(IMPORT_CHUNK) {
        let mut binds = Binds::in_order();
        let values: Vec<String> =
            chunk.iter().map(|(id, amount)| format!("({}, {})", binds.int(*id), binds.int(*amount))).collect();
        let sql = format!(
            "UPDATE {table} SET {column} = {column} - taken.column2 FROM (VALUES {}) AS taken \
             WHERE {table}.id = taken.column1",
            values.join(", ")
        );
        binds.query(sql).execute(&mut *conn).await?;
    }
    Ok(())
}

/// D44: deleting invoice `invoice_id` deletes the applications on it. Called by the invoice's
/// delete after it locked the vendor and the invoice (whose facts before are `invoice`): locks
/// the credits of those applications in id order, releases the applications and adds to
/// `change` what the credits' figures move; answers what the invoice's credited total loses.
pub(super) async fn release_on_invoice(
    conn: &mut Conn,
    invoice_id: i64,
    calendar: &BusinessCalendar,
    change: &mut FigureChange,
) -> Result<Decimal> {
    let released = active_applications(conn, Of::Invoice(invoice_id)).await?;
    if released.is_empty() {
        return Ok(Decimal::ZERO);
    }
    let mut credit_ids: Vec<i64> = released.iter().map(|(_, credit, _, _)| *credit).collect();
    credit_ids.sort_unstable();
    credit_ids.dedup();
    let mut credits = BTreeMap::new();
    for id in credit_ids {
        if let Some((facts, _)) = credit_for_change(conn, id, calendar).await? {
            credits.insert(id, facts);
        }
    }
    // The invoice's own change is its caller's: only the credits' is added here.
    release(conn, &released, (&BTreeMap::new(), &credits), change).await?;
    Ok(unscaled(released.iter().map(|(_, _, _, scaled)| i128::from(*scaled)).sum()))
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
/// contract's order: the invoice it names, of the claim's `branch` (read under a shared lock,
/// after the vendors and before the credit, D48, D49), then its number.
async fn check_claim(
    conn: &mut Conn,
    (credit, branch): (&NewVendorCredit, BranchId),
    number_key: &str,
    except: Option<i64>,
) -> Result<()> {
    if let Some(invoice_id) = credit.against_invoice_id {
        let sql = concat!("SELECT vendor_id, branch_id FROM invoices WHERE id = $1", for_share!());
        let row = row_by_id(conn, sql, invoice_id.get()).await?;
        let owner = row
            .map(|row| -> Result<(VendorId, BranchId)> {
                Ok((VendorId(row.try_get("vendor_id")?), BranchId(row.try_get("branch_id")?)))
            })
            .transpose()?;
        credit_rules::check_against((credit.vendor_id, branch), owner)?;
    }
    check_number_free(conn, credit.vendor_id.get(), number_key, except).await
}

/// Ends a write of credit `id`: adds its change from `before` to `after` to `change` (what the
/// write moved besides), reads it back with its applications, and commits as `action` with the
/// kept figures (D41).
async fn commit_credit(
    mut db_tx: WriteTx,
    ctx: &WriteContext,
    (action, id): (&'static str, i64),
    (before, after): (Option<&CreditFacts>, Option<&CreditFacts>),
    mut change: FigureChange,
) -> Result<VendorCredit> {
    change.row(before, after);
    let written = credit_in(&mut db_tx, id).await?;
    commit_moving(db_tx, ctx, (action, Entity::VendorCredit, id), written, Some(&change)).await
}

/// `query` with a claim's fields bound as `$1` to `$8`, in the order the credit writes name them:
/// vendor, number, its key, kind, claimed amount, claim date, invoice and description.
fn with_claim(query: Query, credit: &NewVendorCredit, number_key: &str) -> Query {
    query
        .bind(credit.vendor_id.get())
        .bind(credit.credit_number.clone())
        .bind(number_key.to_owned())
        .bind(credit.kind.name())
        .bind(credit.claimed_amount.to_scaled())
        .bind(micros(credit.claim_date))
        .bind(credit.against_invoice_id.map(InvoiceId::get))
        .bind(credit.description.clone())
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
    if let Some(branches) = &filter.branches {
        parts.push(super::binds::branch_condition(binds, "c.branch_id", branches));
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

impl CreditStore for SqlStore {
    async fn insert_credit(&self, credit: NewVendorCredit, ctx: WriteContext) -> StoreResult<VendorCredit> {
        let (number_key, vendor_id) = (key(&credit.credit_number), credit.vendor_id.get());
        answer(|| async {
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            // D48, D49: the branch first, then the vendor.
            let branch = branch_rules::branch_of_create(credit.branch_id);
            let branch_active = lock_active_branch(&mut db_tx, branch).await?;
            let (true, _) = lock_vendors(&mut db_tx, [vendor_id, vendor_id], vendor_id).await? else {
                return refused(StoreError::ParentInactive(Entity::Vendor));
            };
            if !branch_active {
                return refused(StoreError::ParentInactive(Entity::Branch));
            }
            check_claim(&mut db_tx, (&credit, branch), &number_key, None).await?;
            let insert = sqlx::query(
                "INSERT INTO vendor_credits (vendor_id, credit_number, number_key, kind, claimed, claim_date, \
                 against_invoice_id, description, applied, is_active, created_at, updated_at, branch_id) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, TRUE, $9, $9, $10) RETURNING id",
            );
            let row = with_claim(insert, &credit, &number_key)
                .bind(micros(ctx.at))
                .bind(branch.get())
                .fetch_one(&mut *db_tx)
                .await?;
            let id: i64 = row.try_get(0)?;
            let after = credit_for_change(&mut db_tx, id, &calendar).await?.map(|(facts, _)| facts);
            commit_credit(db_tx, &ctx, ("create", id), (None, after.as_ref()), FigureChange::new()).await
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
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            // D48, D49: the branch it names, both vendors (the credit's now, and the one it
            // names), then the credit.
            let named_branch = match credit.branch_id {
                Some(branch) => Some((branch, lock_active_branch(&mut db_tx, branch).await?)),
                None => None,
            };
            let Some(current_vendor) = vendor_of_credit(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::VendorCredit));
            };
            let (vendor_active, _) = lock_vendors(&mut db_tx, [current_vendor, vendor_id], vendor_id).await?;
            let Some((before, _)) = credit_for_change(&mut db_tx, id.get(), &calendar)
                .await?
                .filter(|(facts, _)| facts.is_active && ctx.scope.contains(facts.branch_id))
            else {
                return refused(StoreError::NotFound(Entity::VendorCredit));
            };
            if before.vendor_id.get() != current_vendor {
                return Err(Error::Moved("a credit"));
            }
            if !vendor_active {
                return refused(StoreError::ParentInactive(Entity::Vendor));
            }
            if named_branch.is_some_and(|(_, active)| !active) {
                return refused(StoreError::ParentInactive(Entity::Branch));
            }
            let branch = named_branch.map_or(before.branch_id, |(branch, _)| branch);
            check_claim(&mut db_tx, (&credit, branch), &number_key, Some(id.get())).await?;
            credit_rules::check_update(&before, &credit)?;
            let update = sqlx::query(
                "UPDATE vendor_credits SET vendor_id = $1, credit_number = $2, number_key = $3, kind = $4, \
                 claimed = $5, claim_date = $6, against_invoice_id = $7, description = $8, updated_at = $9, \
                 branch_id = $11 WHERE id = $10",
            );
            with_claim(update, &credit, &number_key)
                .bind(micros(ctx.at))
                .bind(id.get())
                .bind(branch.get())
                .execute(&mut *db_tx)
                .await?;
            let after = CreditFacts {
                vendor_id: credit.vendor_id,
                branch_id: branch,
                claimed: credit.claimed_amount.get(),
                claim_date: credit.claim_date,
                ..before
            };
            commit_credit(db_tx, &ctx, ("update", id.get()), (Some(&before), Some(&after)), FigureChange::new()).await
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
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            let Some((_, _, before, _)) = lock_credit(&mut db_tx, id.get(), &calendar)
                .await?
                .filter(|(.., f, _)| f.is_active && ctx.scope.contains(f.branch_id))
            else {
                return refused(StoreError::NotFound(Entity::VendorCredit));
            };
            credit_rules::check_decision(&before, &decision)?;
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
            let after = CreditFacts {
                accepted: Some(decision.accepted_amount),
                decision_date: Some(decision.decision_date),
                decided_on: Some(calendar.date_of(decision.decision_date)),
                ..before
            };
            commit_credit(db_tx, &ctx, ("decide", id.get()), (Some(&before), Some(&after)), FigureChange::new()).await
        })
        .await
    }

    async fn delete_credit(&self, id: VendorCreditId, ctx: WriteContext) -> StoreResult<()> {
        answer(|| async {
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            // D48: the vendor, then the invoices its applications credit (by id), then the credit.
            let Some(vendor_id) = vendor_of_credit(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::VendorCredit));
            };
            lock_vendors(&mut db_tx, [vendor_id, vendor_id], vendor_id).await?;
            let released = active_applications(&mut db_tx, Of::Credit(id.get())).await?;
            let invoice_ids: BTreeSet<i64> = released.iter().map(|(_, _, invoice, _)| *invoice).collect();
            let invoices: BTreeMap<i64, InvoiceFacts> =
                locked_invoices(&mut db_tx, &invoice_ids, &calendar).await?.into_iter().collect();
            let Some((before, _)) = credit_for_change(&mut db_tx, id.get(), &calendar)
                .await?
                .filter(|(facts, _)| facts.is_active && ctx.scope.contains(facts.branch_id))
            else {
                return refused(StoreError::NotFound(Entity::VendorCredit));
            };
            if before.vendor_id.get() != vendor_id {
                return Err(Error::Moved("a credit"));
            }
            // D44: its applications go with it.
            let mut change = FigureChange::new();
            let credits = BTreeMap::from([(id.get(), before)]);
            release(&mut db_tx, &released, (&invoices, &credits), &mut change).await?;
            sqlx::query("UPDATE vendor_credits SET is_active = FALSE, updated_at = $2 WHERE id = $1")
                .bind(id.get())
                .bind(micros(ctx.at))
                .execute(&mut *db_tx)
                .await?;
            let applied: Decimal = unscaled(released.iter().map(|(_, _, _, scaled)| i128::from(*scaled)).sum());
            let released_facts = CreditFacts { applied: before.applied - applied, ..before };
            change.row(Some(&released_facts), Some(&CreditFacts { is_active: false, ..released_facts }));
            commit_moving(db_tx, &ctx, ("delete", Entity::VendorCredit, id.get()), Some(()), Some(&change)).await
        })
        .await
    }

    async fn restore_credit(&self, id: VendorCreditId, ctx: WriteContext) -> StoreResult<VendorCredit> {
        answer(|| async {
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            let Some((vendor_id, vendor_active, before, number_key)) = lock_credit(&mut db_tx, id.get(), &calendar)
                .await?
                .filter(|(.., f, _)| !f.is_active && ctx.scope.contains(f.branch_id))
            else {
                return refused(StoreError::NotFound(Entity::VendorCredit));
            };
            restore::check_parent(Entity::Vendor, vendor_active)?;
            check_number_free(&mut db_tx, vendor_id, &number_key, Some(id.get())).await?;
            sqlx::query("UPDATE vendor_credits SET is_active = TRUE, updated_at = $2 WHERE id = $1")
                .bind(id.get())
                .bind(micros(ctx.at))
                .execute(&mut *db_tx)
                .await?;
            let after = CreditFacts { is_active: true, ..before };
            commit_credit(db_tx, &ctx, ("restore", id.get()), (Some(&before), Some(&after)), FigureChange::new()).await
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

    async fn apply_credit(
        &self,
        id: VendorCreditId,
        application: NewCreditApplication,
        ctx: WriteContext,
    ) -> StoreResult<VendorCredit> {
        answer(|| async {
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            // D48: the vendor, then the invoices it may credit (in id order, as a vendor payment
            // locks them), then the credit.
            let Some(vendor_id) = vendor_of_credit(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::VendorCredit));
            };
            lock_vendors(&mut db_tx, [vendor_id, vendor_id], vendor_id).await?;
            let (payable, invoices) =
                payable(&mut db_tx, vendor_id, application.allocations.as_deref(), &calendar).await?;
            let Some((before, _)) =
                credit_for_change(&mut db_tx, id.get(), &calendar).await?.filter(|(facts, _)| facts.is_active && ctx.scope.contains(facts.branch_id))
            else {
                return refused(StoreError::NotFound(Entity::VendorCredit));
            };
            if before.vendor_id.get() != vendor_id {
                return Err(Error::Moved("a credit"));
            }
            let allocations = credit_rules::plan_application(&before, &application, ctx.at, &payable)?;
            // One statement writes every application, one adds them to their invoices' credited
            // totals, and one to the credit's applied total.
            let (date, at) = (micros(application.date.unwrap_or(ctx.at)), micros(ctx.at));
            let mut change = FigureChange::new();
            let mut applied = Decimal::ZERO;
            let (mut inserts, mut updates) = (Binds::in_order(), Binds::in_order());
            let (mut inserted, mut updated) = (Vec::new(), Vec::new());
            for share in &allocations {
                let (invoice_id, scaled) = (share.invoice_id.get(), share.amount.to_scaled());
                inserted.push(format!(
                    "({}, {}, {}, {}, {}, {})",
                    inserts.int(id.get()),
                    inserts.int(invoice_id),
                    inserts.int(scaled),
                    inserts.int(date),
                    inserts.flag(true),
                    inserts.int(at)
                ));
                updated.push(format!("({}, {})", updates.int(invoice_id), updates.int(scaled)));
                if let Some(invoice) = invoices.get(&invoice_id) {
                    let after = InvoiceFacts { credited: invoice.credited + share.amount.get(), ..*invoice };
                    change.invoice(invoice_id, Some(invoice), Some(&after));
                }
                applied += share.amount.get();
            }
            inserts
                .query(format!(
                    "INSERT INTO credit_applications (credit_id, invoice_id, amount, date, is_active, created_at) VALUES {}",
                    inserted.join(", ")
                ))
                .execute(&mut *db_tx)
                .await?;
            updates
                .query(format!(
                    "UPDATE invoices SET credited = credited + added.column2 FROM (VALUES {}) AS added \
                     WHERE invoices.id = added.column1",
                    updated.join(", ")
                ))
                .execute(&mut *db_tx)
                .await?;
            sqlx::query("UPDATE vendor_credits SET applied = applied + $2 WHERE id = $1")
                .bind(id.get())
                .bind(scaled(applied)?)
                .execute(&mut *db_tx)
                .await?;
            let after = CreditFacts { applied: before.applied + applied, ..before };
            commit_credit(db_tx, &ctx, ("apply", id.get()), (Some(&before), Some(&after)), change).await
        })
        .await
    }

    async fn undo_application(
        &self,
        credit: VendorCreditId,
        application: CreditApplicationId,
        ctx: WriteContext,
    ) -> StoreResult<()> {
        answer(|| async {
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            let found = row_by_id(
                &mut db_tx,
                "SELECT credit_id, invoice_id FROM credit_applications WHERE id = $1 AND is_active",
                application.get(),
            )
            .await?;
            let Some((credit_id, invoice_id)) = found
                .map(|row| -> Result<(i64, i64)> { Ok((row.try_get("credit_id")?, row.try_get("invoice_id")?)) })
                .transpose()?
                .filter(|(credit_id, _)| *credit_id == credit.get())
            else {
                return refused(StoreError::NotFound(Entity::CreditApplication));
            };
            // D48: the vendor, the invoice, then the credit; the application is read again under
            // their locks.
            let Some(vendor_id) = vendor_of_credit(&mut db_tx, credit_id).await? else {
                return refused(StoreError::NotFound(Entity::CreditApplication));
            };
            lock_vendors(&mut db_tx, [vendor_id, vendor_id], vendor_id).await?;
            let invoices: BTreeMap<i64, InvoiceFacts> =
                locked_invoices(&mut db_tx, &BTreeSet::from([invoice_id]), &calendar).await?.into_iter().collect();
            let Some((before, _)) = credit_for_change(&mut db_tx, credit_id, &calendar).await?.filter(|(facts, _)| {
                facts.is_active && facts.vendor_id.get() == vendor_id && ctx.scope.contains(facts.branch_id)
            }) else {
                return refused(StoreError::NotFound(Entity::CreditApplication));
            };
            let released: Vec<(i64, i64, i64, i64)> = active_applications(&mut db_tx, Of::Credit(credit_id))
                .await?
                .into_iter()
                .filter(|(id, ..)| *id == application.get())
                .collect();
            if released.is_empty() {
                return refused(StoreError::NotFound(Entity::CreditApplication));
            }
            let mut change = FigureChange::new();
            release(&mut db_tx, &released, (&invoices, &BTreeMap::from([(credit_id, before)])), &mut change).await?;
            // D47: undoing an application changes its credit.
            let also = [Announcement::credit_released(credit_id)];
            let head = ("delete", Entity::CreditApplication, application.get());
            commit_announcing(db_tx, &ctx, head, (Some(()), Some(&change)), &also).await
        })
        .await
    }

    async fn credit_summary(&self) -> StoreResult<CreditSummary> {
        self.answer_read(|| async move {
            let mut conn = self.read().await?;
            let row = sqlx::query(
                "SELECT t.*, (SELECT MIN(claim_date) FROM vendor_credits WHERE is_active AND accepted IS NULL) AS oldest \
                 FROM ledger_totals t WHERE t.id = 1",
            )
            .fetch_one(&mut *conn)
            .await?;
            let oldest = row.try_get::<Option<i64>, _>("oldest")?.map(instant).transpose()?;
            Ok(CreditSummary::of(&ledger_totals_from(&row)?, oldest))
        })
        .await
    }
}
