//! The chain's branches (D49): [`BranchStore`] over SQL. A code is checked free among active
//! branches in the write's transaction, and the partial unique index `branches_active_code`
//! settles two writers racing for one; the head office is never deleted, as
//! [`branch_rules::check_delete`] says.

use pharmapay_core::branches::rules as branch_rules;
use pharmapay_core::branches::{Branch, HEAD_OFFICE_ID, NewBranch};
use pharmapay_core::ids::BranchId;
use pharmapay_core::store::{BranchStore, StoreResult, UniqueKey, WriteContext};
use pharmapay_core::vendors::gstin::Gstin;
use pharmapay_core::{Entity, StoreError};
use sqlx::Row;

use super::conn::{DbRow, instant, micros};
use super::guards::check_free;
use super::{Conn, Result, SqlStore, WriteTx, answer, commit, refused, row_by_id, set_active};

/// The columns [`branch_from`] reads.
macro_rules! branch_columns {
    () => {
        "id, code, name, gstin, address, phone, drug_license_number, is_active, created_at, updated_at"
    };
}

fn branch_from(row: &DbRow) -> Result<Branch> {
    Ok(Branch {
        id: BranchId(row.try_get("id")?),
        code: row.try_get("code")?,
        name: row.try_get("name")?,
        gstin: row.try_get("gstin")?,
        address: row.try_get("address")?,
        phone: row.try_get("phone")?,
        drug_license_number: row.try_get("drug_license_number")?,
        is_active: row.try_get("is_active")?,
        created_at: instant(row.try_get("created_at")?)?,
        updated_at: instant(row.try_get("updated_at")?)?,
    })
}

async fn branch_in(conn: &mut Conn, id: i64) -> Result<Option<Branch>> {
    let sql = concat!("SELECT ", branch_columns!(), " FROM branches WHERE id = $1");
    row_by_id(conn, sql, id).await?.as_ref().map(branch_from).transpose()
}

/// The code and state of a branch, locked for a change.
async fn branch_for_change(conn: &mut Conn, id: i64) -> Result<Option<(String, bool)>> {
    let row = row_by_id(conn, concat!("SELECT code, is_active FROM branches WHERE id = $1", for_update!()), id).await?;
    row.map(|row| Ok((row.try_get("code")?, row.try_get("is_active")?))).transpose()
}

/// Commits `action` on the branch `id`, answering the branch as written.
async fn commit_branch(mut db_tx: WriteTx, ctx: &WriteContext, action: &'static str, id: i64) -> Result<Branch> {
    let branch = branch_in(&mut db_tx, id).await?;
    commit(db_tx, ctx, action, Entity::Branch, id, branch).await
}

/// Whether branch `id` exists and is active, locked so that it stays so until the write ends: a
/// write that names a branch takes this first, after the time zone setting (D48, D49).
pub(super) async fn lock_active_branch(conn: &mut Conn, id: BranchId) -> Result<bool> {
    let row = row_by_id(conn, concat!("SELECT is_active FROM branches WHERE id = $1", for_share!()), id.get()).await?;
    row.map_or(Ok(false), |row| Ok(row.try_get("is_active")?))
}

/// Every active branch's id and code, locked so that they stay active until the write ends: an
/// import names its rows' branches by code (D49).
pub(super) async fn active_branches(conn: &mut Conn) -> Result<Vec<(BranchId, String)>> {
    let rows = sqlx::query(concat!("SELECT id, code FROM branches WHERE is_active ORDER BY id", for_share!()))
        .fetch_all(&mut *conn)
        .await?;
    rows.iter().map(|row| Ok((BranchId(row.try_get("id")?), row.try_get("code")?))).collect()
}

/// Names the head office after the pharmacy at onboarding (D49).
pub(super) async fn name_head_office(conn: &mut Conn, name: &str, at: pharmapay_core::jiff::Timestamp) -> Result<()> {
    sqlx::query("UPDATE branches SET name = $2, updated_at = $3 WHERE id = $1")
        .bind(HEAD_OFFICE_ID.get())
        .bind(name.to_owned())
        .bind(micros(at))
        .execute(&mut *conn)
        .await?;
    Ok(())
}

impl BranchStore for SqlStore {
    async fn list_branches(&self) -> StoreResult<Vec<Branch>> {
        self.answer_read(|| async move {
            let sql = concat!(
                "SELECT ",
                branch_columns!(),
                " FROM branches WHERE is_active ORDER BY CASE WHEN id = 1 THEN 0 ELSE 1 END, code, id"
            );
            self.all(sql, branch_from).await
        })
        .await
    }

    async fn get_branch(&self, id: BranchId) -> StoreResult<Option<Branch>> {
        self.answer_read(|| async move { branch_in(&mut *self.read().await?, id.get()).await }).await
    }

    async fn insert_branch(&self, branch: NewBranch, ctx: WriteContext) -> StoreResult<Branch> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            check_free(&mut db_tx, UniqueKey::BranchCode, &branch.code, None).await?;
            let row = sqlx::query(
                "INSERT INTO branches (code, name, gstin, address, phone, drug_license_number, is_active, \
                 created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, TRUE, $7, $7) RETURNING id",
            )
            .bind(branch.code.clone())
            .bind(branch.name.clone())
            .bind(branch.gstin.as_ref().map(|gstin| Gstin::as_str(gstin).to_owned()))
            .bind(branch.address.clone())
            .bind(branch.phone.clone())
            .bind(branch.drug_license_number.clone())
            .bind(micros(ctx.at))
            .fetch_one(&mut *db_tx)
            .await?;
            let id: i64 = row.try_get(0)?;
            commit_branch(db_tx, &ctx, "create", id).await
        })
        .await
    }

    async fn update_branch(&self, id: BranchId, branch: NewBranch, ctx: WriteContext) -> StoreResult<Branch> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let Some((_, true)) = branch_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Branch));
            };
            check_free(&mut db_tx, UniqueKey::BranchCode, &branch.code, Some(id.get())).await?;
            sqlx::query(
                "UPDATE branches SET code = $2, name = $3, gstin = $4, address = $5, phone = $6, \
                 drug_license_number = $7, updated_at = $8 WHERE id = $1",
            )
            .bind(id.get())
            .bind(branch.code.clone())
            .bind(branch.name.clone())
            .bind(branch.gstin.as_ref().map(|gstin| Gstin::as_str(gstin).to_owned()))
            .bind(branch.address.clone())
            .bind(branch.phone.clone())
            .bind(branch.drug_license_number.clone())
            .bind(micros(ctx.at))
            .execute(&mut *db_tx)
            .await?;
            commit_branch(db_tx, &ctx, "update", id.get()).await
        })
        .await
    }

    async fn delete_branch(&self, id: BranchId, ctx: WriteContext) -> StoreResult<()> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let Some((_, true)) = branch_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Branch));
            };
            branch_rules::check_delete(id)?;
            let sql = "UPDATE branches SET is_active = FALSE, updated_at = $2 WHERE id = $1";
            set_active(&mut db_tx, sql, id.get(), Some(ctx.at)).await?;
            commit(db_tx, &ctx, "delete", Entity::Branch, id.get(), Some(())).await
        })
        .await
    }

    async fn restore_branch(&self, id: BranchId, ctx: WriteContext) -> StoreResult<Branch> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let Some((code, false)) = branch_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Branch));
            };
            check_free(&mut db_tx, UniqueKey::BranchCode, &code, Some(id.get())).await?;
            let sql = "UPDATE branches SET is_active = TRUE, updated_at = $2 WHERE id = $1";
            set_active(&mut db_tx, sql, id.get(), Some(ctx.at)).await?;
            commit_branch(db_tx, &ctx, "restore", id.get()).await
        })
        .await
    }
}
