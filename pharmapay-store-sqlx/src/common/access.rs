//! Users, roles and policies: [`AccessStore`] over SQL. Writes that change access run one at
//! a time under `Lock::Access`; what they give is judged by `access::grants` (D38), whose tokens
//! they revoke by `sessions::rules` (D39), and the guard rails by `access::rules` (D18).

use std::collections::BTreeSet;

use pharmapay_core::access::Permission;
use pharmapay_core::access::grants::{self, Grant};
use pharmapay_core::access::policy::{NewPolicy, Policy};
use pharmapay_core::access::role::{NewRole, Role};
use pharmapay_core::access::rules as access_rules;
use pharmapay_core::access::rules::{RoleFacts, UserFacts};
use pharmapay_core::access::user::{ProfileUpdate, User, UserUpdate};
use pharmapay_core::base::restore;
use pharmapay_core::ids::{PermissionId, PolicyId, RoleId, UserId};
use pharmapay_core::sessions::rules as session_rules;
use pharmapay_core::store::{AccessStore, NewUserRecord, PolicyHolder, SignIn, StoreResult, UniqueKey, WriteContext};
use pharmapay_core::text::key;
use pharmapay_core::{Entity, StoreError};
use sqlx::Row;

use super::guards::branch_facts;
use super::guards::{
    Holders, active_admins, active_policy, active_role, active_user, check_free, checked_permissions, existing_ids,
    insert_policy_permissions, insert_user_row, own_policies_grant, permission_set, permissions_of, policy_grant,
    policy_permission_ids, revoke_tokens, role_grant, user_tokens_for_change, write_token_state,
};
use super::rows::{PolicySet, micros, permission_from, policies_in, policy_in, role_from, role_in, user_from, user_in};
use super::rows::{scope_from, scope_text};
use super::{Conn, Result, SqlStore, WriteTx, answer, commit, refused, row_by_id, set_active, written};
use crate::Lock;
use pharmapay_core::access::ADMIN_ROLE_ID;
use pharmapay_core::branches::Scope;
use pharmapay_core::branches::scope as branch_scope;

/// The role, email key, state and branches of a user, locked for a change.
pub(super) async fn user_for_change(conn: &mut Conn, id: i64) -> Result<Option<(i64, String, bool, Scope)>> {
    let sql = concat!("SELECT role_id, email_key, is_active, branch_ids FROM users WHERE id = $1", for_update!());
    let row = row_by_id(conn, sql, id).await?;
    row.map(|row| {
        let scope = scope_from(row.try_get("branch_ids")?)?;
        Ok((row.try_get("role_id")?, row.try_get("email_key")?, row.try_get("is_active")?, scope))
    })
    .transpose()
}

/// The name, system flag and state of a role, locked for a change.
pub(super) async fn role_for_change(conn: &mut Conn, id: i64) -> Result<Option<(String, bool, bool)>> {
    let row = row_by_id(conn, concat!("SELECT name, is_system, is_active FROM roles WHERE id = $1", for_update!()), id)
        .await?;
    row.map(|row| Ok((row.try_get("name")?, row.try_get("is_system")?, row.try_get("is_active")?))).transpose()
}

/// The name key and state of a policy, locked for a change.
pub(super) async fn policy_for_change(conn: &mut Conn, id: i64) -> Result<Option<(String, bool)>> {
    let row =
        row_by_id(conn, concat!("SELECT name_key, is_active FROM policies WHERE id = $1", for_update!()), id).await?;
    row.map(|row| Ok((row.try_get("name_key")?, row.try_get("is_active")?))).transpose()
}

/// Whether the user or role `holder` is active.
async fn active_holder(conn: &mut Conn, holder: PolicyHolder) -> Result<bool> {
    match holder {
        PolicyHolder::User(user_id) => active_user(conn, user_id.get()).await,
        PolicyHolder::Role(role_id) => active_role(conn, role_id.get()).await,
    }
}

/// The statements that attach a policy to a user or a role (`$1` the holder, `$2` the policy)
/// and detach it, and whose tokens a detach revokes.
struct PolicyLinks {
    attach: &'static str,
    detach: &'static str,
    holders: Holders,
}

impl PolicyLinks {
    fn of(holder: PolicyHolder) -> Self {
        match holder {
            PolicyHolder::User(user_id) => PolicyLinks {
                attach: "INSERT INTO user_policies (user_id, policy_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                detach: "DELETE FROM user_policies WHERE user_id = $1 AND policy_id = $2",
                holders: Holders::User(user_id.get()),
            },
            PolicyHolder::Role(role_id) => PolicyLinks {
                attach: "INSERT INTO role_policies (role_id, policy_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                detach: "DELETE FROM role_policies WHERE role_id = $1 AND policy_id = $2",
                holders: Holders::OfRole(role_id.get()),
            },
        }
    }
}

impl AccessStore for SqlStore {
    async fn resolve_permissions(&self, user_id: UserId) -> StoreResult<Vec<Permission>> {
        self.answer_read(|| async move { permissions_of(&mut *self.read().await?, user_id.get()).await }).await
    }

    async fn insert_user(&self, user: NewUserRecord, ctx: WriteContext) -> StoreResult<User> {
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::Access).await?;
            let id = insert_user_row(&mut db_tx, &user, (ctx.authority, &ctx.scope), ctx.at).await?;
            commit_user(db_tx, &ctx, "create", id).await
        })
        .await
    }

    async fn get_user(&self, id: UserId) -> StoreResult<Option<User>> {
        self.answer_read(|| async move { user_in(&mut *self.read().await?, id.get()).await }).await
    }

    async fn list_users(&self) -> StoreResult<Vec<User>> {
        self.answer_read(|| async move {
            self.all(concat!("SELECT ", user_columns!(), " FROM users u WHERE u.is_active ORDER BY u.id"), user_from)
                .await
        })
        .await
    }

    async fn update_user(&self, id: UserId, user: UserUpdate, ctx: WriteContext) -> StoreResult<User> {
        answer(|| async {
            // D18: changes that may remove an admin run one at a time, so two cannot both see
            // "another admin remains"; grants and revocations are decided one at a time too.
            let mut db_tx = self.begin_locked(Lock::Access).await?;
            let Some((current_role, _, true, held)) = user_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::User));
            };
            let email_key = key(&user.email);
            let facts = UserFacts { id, role_id: RoleId(current_role) };
            let role_changes = user.role_id.get() != current_role;
            if role_changes && !active_role(&mut db_tx, user.role_id.get()).await? {
                return refused(StoreError::ParentInactive(Entity::Role));
            }
            if role_changes {
                grants::check(ctx.authority, role_grant(&mut db_tx, user.role_id.get()).await?)?;
            }
            // D49: the branches the write leaves, active and within the writer's.
            let scopes: Vec<&Scope> = std::iter::once(&held).chain(user.branch_ids.as_ref()).collect();
            let branch_facts = branch_facts(&mut db_tx, &scopes).await?;
            let admin = user.role_id == ADMIN_ROLE_ID;
            let branch_ids =
                branch_scope::plan_scope(user.branch_ids.as_ref(), Some(&held), admin, &ctx.scope, &branch_facts)?;
            check_free(&mut db_tx, UniqueKey::UserEmail, &email_key, Some(id.get())).await?;
            access_rules::check_user_change(facts, user.role_id, active_admins(&mut db_tx).await?)?;
            sqlx::query(
                "UPDATE users SET first_name = $2, last_name = $3, email = $4, email_key = $5, role_id = $6, \
                 branch_ids = $7 WHERE id = $1",
            )
            .bind(id.get())
            .bind(user.first_name.clone())
            .bind(user.last_name.clone())
            .bind(user.email.clone())
            .bind(email_key)
            .bind(user.role_id.get())
            .bind(scope_text(&branch_ids))
            .execute(&mut *db_tx)
            .await?;
            if role_changes || branch_scope::narrows(&held, &branch_ids) {
                // D39: a new role may hold less, and a narrowed scope does (D49), so tokens
                // issued before stop working.
                revoke_tokens(&mut db_tx, Holders::User(id.get()), ctx.at).await?;
            }
            commit_user(db_tx, &ctx, "update", id.get()).await
        })
        .await
    }

    async fn delete_user(&self, id: UserId, ctx: WriteContext) -> StoreResult<()> {
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::Access).await?;
            let Some((role_id, _, true, held)) = user_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::User));
            };
            branch_scope::check_reach(&ctx.scope, &held, &branch_facts(&mut db_tx, &[&held]).await?)?;
            let facts = UserFacts { id, role_id: RoleId(role_id) };
            access_rules::check_user_delete(facts, ctx.actor, active_admins(&mut db_tx).await?)?;
            set_active(&mut db_tx, "UPDATE users SET is_active = FALSE WHERE id = $1", id.get(), None).await?;
            // D20: deleting a user also revokes their tokens.
            revoke_tokens(&mut db_tx, Holders::User(id.get()), ctx.at).await?;
            commit(db_tx, &ctx, "delete", Entity::User, id.get(), Some(())).await
        })
        .await
    }

    async fn restore_user(&self, id: UserId, ctx: WriteContext) -> StoreResult<User> {
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::Access).await?;
            let Some((role_id, email_key, false, held)) = user_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::User));
            };
            branch_scope::check_reach(&ctx.scope, &held, &branch_facts(&mut db_tx, &[&held]).await?)?;
            restore::check_parent(Entity::Role, active_role(&mut db_tx, role_id).await?)?;
            // D48: the user gets back their role and the policies attached to them directly.
            let grant = role_grant(&mut db_tx, role_id).await?.and(own_policies_grant(&mut db_tx, id.get()).await?);
            grants::check(ctx.authority, grant)?;
            check_free(&mut db_tx, UniqueKey::UserEmail, &email_key, Some(id.get())).await?;
            set_active(&mut db_tx, "UPDATE users SET is_active = TRUE WHERE id = $1", id.get(), None).await?;
            commit_user(db_tx, &ctx, "restore", id.get()).await
        })
        .await
    }

    async fn update_profile(&self, id: UserId, profile: ProfileUpdate, ctx: WriteContext) -> StoreResult<User> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let Some((_, _, true, _)) = user_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::User));
            };
            let email_key = key(&profile.email);
            check_free(&mut db_tx, UniqueKey::UserEmail, &email_key, Some(id.get())).await?;
            sqlx::query("UPDATE users SET first_name = $2, last_name = $3, email = $4, email_key = $5 WHERE id = $1")
                .bind(id.get())
                .bind(profile.first_name.clone())
                .bind(profile.last_name.clone())
                .bind(profile.email.clone())
                .bind(email_key)
                .execute(&mut *db_tx)
                .await?;
            commit_user(db_tx, &ctx, "update", id.get()).await
        })
        .await
    }

    async fn set_password(&self, id: UserId, password_hash: String, ctx: WriteContext) -> StoreResult<SignIn> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let Some((true, tokens)) = user_tokens_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::User));
            };
            sqlx::query("UPDATE users SET password_hash = $2 WHERE id = $1")
                .bind(id.get())
                .bind(password_hash.clone())
                .execute(&mut *db_tx)
                .await?;
            // D20: older tokens stop working; the fresh one is issued after that revocation.
            let (issued_at, tokens) = session_rules::issue(session_rules::revoke(tokens, ctx.at), ctx.at);
            write_token_state(&mut db_tx, id.get(), tokens).await?;
            let user = written(user_in(&mut db_tx, id.get()).await?)?;
            let permissions = permissions_of(&mut db_tx, id.get()).await?;
            let sign_in = SignIn { user, permissions, issued_at };
            commit(db_tx, &ctx, "password_change", Entity::User, id.get(), Some(sign_in)).await
        })
        .await
    }

    async fn list_user_policies(&self, user_id: UserId) -> StoreResult<Vec<Policy>> {
        self.answer_read(
            || async move { policies_in(&mut *self.read().await?, PolicySet::OfUser(user_id.get())).await },
        )
        .await
    }

    async fn insert_role(&self, role: NewRole, ctx: WriteContext) -> StoreResult<Role> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let name_key = key(&role.name);
            check_free(&mut db_tx, UniqueKey::RoleName, &name_key, None).await?;
            let row = sqlx::query(
                "INSERT INTO roles (name, name_key, description, is_system, is_active, created_at) \
                 VALUES ($1, $2, $3, FALSE, TRUE, $4) RETURNING id",
            )
            .bind(role.name.clone())
            .bind(name_key)
            .bind(role.description.clone())
            .bind(micros(ctx.at))
            .fetch_one(&mut *db_tx)
            .await?;
            let id: i64 = row.try_get(0)?;
            commit_role(db_tx, &ctx, "create", id).await
        })
        .await
    }

    async fn get_role(&self, id: RoleId) -> StoreResult<Option<Role>> {
        self.answer_read(|| async move { role_in(&mut *self.read().await?, id.get()).await }).await
    }

    async fn list_roles(&self) -> StoreResult<Vec<Role>> {
        self.answer_read(|| async move {
            self.all(concat!("SELECT ", role_columns!(), " FROM roles r ORDER BY r.id"), role_from).await
        })
        .await
    }

    async fn update_role(&self, id: RoleId, role: NewRole, ctx: WriteContext) -> StoreResult<Role> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let Some((current_name, is_system, true)) = role_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Role));
            };
            let name_key = key(&role.name);
            access_rules::check_role_update(RoleFacts { name: &current_name, is_system }, &role.name)?;
            check_free(&mut db_tx, UniqueKey::RoleName, &name_key, Some(id.get())).await?;
            sqlx::query("UPDATE roles SET name = $2, name_key = $3, description = $4 WHERE id = $1")
                .bind(id.get())
                .bind(role.name.clone())
                .bind(name_key)
                .bind(role.description.clone())
                .execute(&mut *db_tx)
                .await?;
            commit_role(db_tx, &ctx, "update", id.get()).await
        })
        .await
    }

    async fn delete_role(&self, id: RoleId, ctx: WriteContext) -> StoreResult<()> {
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::Access).await?;
            let Some((name, is_system, true)) = role_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Role));
            };
            access_rules::check_role_delete(RoleFacts { name: &name, is_system })?;
            set_active(&mut db_tx, "UPDATE roles SET is_active = FALSE WHERE id = $1", id.get(), None).await?;
            revoke_tokens(&mut db_tx, Holders::OfRole(id.get()), ctx.at).await?;
            commit(db_tx, &ctx, "delete", Entity::Role, id.get(), Some(())).await
        })
        .await
    }

    async fn restore_role(&self, id: RoleId, ctx: WriteContext) -> StoreResult<Role> {
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::Access).await?;
            let Some((_, _, false)) = role_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Role));
            };
            // Judged as the role gives once active again (D38).
            grants::check(ctx.authority, role_grant(&mut db_tx, id.get()).await?)?;
            set_active(&mut db_tx, "UPDATE roles SET is_active = TRUE WHERE id = $1", id.get(), None).await?;
            commit_role(db_tx, &ctx, "restore", id.get()).await
        })
        .await
    }

    async fn attach_policy(&self, holder: PolicyHolder, policy_id: PolicyId, ctx: WriteContext) -> StoreResult<()> {
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::Access).await?;
            if !active_holder(&mut db_tx, holder).await? {
                return refused(StoreError::NotFound(holder.entity()));
            }
            if !active_policy(&mut db_tx, policy_id.get()).await? {
                return refused(StoreError::NotFound(Entity::Policy));
            }
            grants::check(ctx.authority, policy_grant(&mut db_tx, policy_id.get()).await?)?;
            sqlx::query(PolicyLinks::of(holder).attach)
                .bind(holder.id())
                .bind(policy_id.get())
                .execute(&mut *db_tx)
                .await?;
            commit(db_tx, &ctx, "attach_policy", holder.entity(), holder.id(), Some(())).await
        })
        .await
    }

    async fn detach_policy(&self, holder: PolicyHolder, policy_id: PolicyId, ctx: WriteContext) -> StoreResult<()> {
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::Access).await?;
            if !active_holder(&mut db_tx, holder).await? {
                return refused(StoreError::NotFound(holder.entity()));
            }
            let links = PolicyLinks::of(holder);
            let detached =
                sqlx::query(links.detach).bind(holder.id()).bind(policy_id.get()).execute(&mut *db_tx).await?;
            if detached.rows_affected() > 0 {
                revoke_tokens(&mut db_tx, links.holders, ctx.at).await?;
            }
            commit(db_tx, &ctx, "detach_policy", holder.entity(), holder.id(), Some(())).await
        })
        .await
    }

    async fn list_permissions(&self) -> StoreResult<Vec<Permission>> {
        self.answer_read(|| async move {
            self.all("SELECT id, collection, action, description FROM permissions ORDER BY id", permission_from).await
        })
        .await
    }

    async fn insert_policy(&self, policy: NewPolicy, ctx: WriteContext) -> StoreResult<Policy> {
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::Access).await?;
            let name_key = key(&policy.name);
            let permission_ids = checked_permissions(&mut db_tx, &policy.permission_ids).await?;
            grants::check(ctx.authority, Grant::permissions(permission_set(&mut db_tx, &permission_ids).await?))?;
            check_free(&mut db_tx, UniqueKey::PolicyName, &name_key, None).await?;
            let row = sqlx::query(
                "INSERT INTO policies (name, name_key, description, is_active, created_at) \
                 VALUES ($1, $2, $3, TRUE, $4) RETURNING id",
            )
            .bind(policy.name.clone())
            .bind(name_key)
            .bind(policy.description.clone())
            .bind(micros(ctx.at))
            .fetch_one(&mut *db_tx)
            .await?;
            let id: i64 = row.try_get(0)?;
            insert_policy_permissions(&mut db_tx, id, &permission_ids).await?;
            commit_policy(db_tx, &ctx, "create", id).await
        })
        .await
    }

    async fn get_policy(&self, id: PolicyId) -> StoreResult<Option<Policy>> {
        self.answer_read(|| async move { policy_in(&mut *self.read().await?, id.get()).await }).await
    }

    async fn list_policies(&self) -> StoreResult<Vec<Policy>> {
        self.answer_read(|| async move { policies_in(&mut *self.read().await?, PolicySet::Active).await }).await
    }

    async fn update_policy(&self, id: PolicyId, policy: NewPolicy, ctx: WriteContext) -> StoreResult<Policy> {
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::Access).await?;
            let Some((_, true)) = policy_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Policy));
            };
            let name_key = key(&policy.name);
            let permission_ids = checked_permissions(&mut db_tx, &policy.permission_ids).await?;
            grants::check(ctx.authority, Grant::permissions(permission_set(&mut db_tx, &permission_ids).await?))?;
            check_free(&mut db_tx, UniqueKey::PolicyName, &name_key, Some(id.get())).await?;
            if !policy_permission_ids(&mut db_tx, id.get()).await?.is_subset(&permission_ids) {
                revoke_tokens(&mut db_tx, Holders::OfPolicy(id.get()), ctx.at).await?;
            }
            sqlx::query("UPDATE policies SET name = $2, name_key = $3, description = $4 WHERE id = $1")
                .bind(id.get())
                .bind(policy.name.clone())
                .bind(name_key)
                .bind(policy.description.clone())
                .execute(&mut *db_tx)
                .await?;
            sqlx::query("DELETE FROM policy_permissions WHERE policy_id = $1")
                .bind(id.get())
                .execute(&mut *db_tx)
                .await?;
            insert_policy_permissions(&mut db_tx, id.get(), &permission_ids).await?;
            commit_policy(db_tx, &ctx, "update", id.get()).await
        })
        .await
    }

    async fn delete_policy(&self, id: PolicyId, ctx: WriteContext) -> StoreResult<()> {
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::Access).await?;
            let Some((_, true)) = policy_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Policy));
            };
            sqlx::query("UPDATE policies SET is_active = FALSE WHERE id = $1")
                .bind(id.get())
                .execute(&mut *db_tx)
                .await?;
            revoke_tokens(&mut db_tx, Holders::OfPolicy(id.get()), ctx.at).await?;
            commit(db_tx, &ctx, "delete", Entity::Policy, id.get(), Some(())).await
        })
        .await
    }

    async fn restore_policy(&self, id: PolicyId, ctx: WriteContext) -> StoreResult<Policy> {
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::Access).await?;
            let Some((name_key, false)) = policy_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Policy));
            };
            grants::check(ctx.authority, policy_grant(&mut db_tx, id.get()).await?)?;
            check_free(&mut db_tx, UniqueKey::PolicyName, &name_key, Some(id.get())).await?;
            sqlx::query("UPDATE policies SET is_active = TRUE WHERE id = $1")
                .bind(id.get())
                .execute(&mut *db_tx)
                .await?;
            commit_policy(db_tx, &ctx, "restore", id.get()).await
        })
        .await
    }

    async fn add_policy_permission(
        &self,
        policy_id: PolicyId,
        permission_id: PermissionId,
        ctx: WriteContext,
    ) -> StoreResult<()> {
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::Access).await?;
            let Some((_, true)) = policy_for_change(&mut db_tx, policy_id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Policy));
            };
            let known = BTreeSet::from([permission_id.get()]);
            if existing_ids(&mut db_tx, "permissions", &known).await?.is_empty() {
                return refused(StoreError::NotFound(Entity::Permission));
            }
            // D38: judged as the policy stands after the write.
            let mut after = policy_permission_ids(&mut db_tx, policy_id.get()).await?;
            after.insert(permission_id.get());
            grants::check(ctx.authority, Grant::permissions(permission_set(&mut db_tx, &after).await?))?;
            insert_policy_permissions(&mut db_tx, policy_id.get(), &known).await?;
            commit(db_tx, &ctx, "add_permission", Entity::Policy, policy_id.get(), Some(())).await
        })
        .await
    }

    async fn remove_policy_permission(
        &self,
        policy_id: PolicyId,
        permission_id: PermissionId,
        ctx: WriteContext,
    ) -> StoreResult<()> {
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::Access).await?;
            let Some((_, true)) = policy_for_change(&mut db_tx, policy_id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Policy));
            };
            let removed = sqlx::query("DELETE FROM policy_permissions WHERE policy_id = $1 AND permission_id = $2")
                .bind(policy_id.get())
                .bind(permission_id.get())
                .execute(&mut *db_tx)
                .await?
                .rows_affected();
            if removed > 0 {
                revoke_tokens(&mut db_tx, Holders::OfPolicy(policy_id.get()), ctx.at).await?;
            }
            commit(db_tx, &ctx, "remove_permission", Entity::Policy, policy_id.get(), Some(())).await
        })
        .await
    }
}

/// Commits `action` on the user `id`, answering the user as written.
async fn commit_user(mut db_tx: WriteTx, ctx: &WriteContext, action: &'static str, id: i64) -> Result<User> {
    let user = user_in(&mut db_tx, id).await?;
    commit(db_tx, ctx, action, Entity::User, id, user).await
}

/// Commits `action` on the role `id`, answering the role as written.
async fn commit_role(mut db_tx: WriteTx, ctx: &WriteContext, action: &'static str, id: i64) -> Result<Role> {
    let role = role_in(&mut db_tx, id).await?;
    commit(db_tx, ctx, action, Entity::Role, id, role).await
}

/// Commits `action` on the policy `id`, answering the policy as written.
async fn commit_policy(mut db_tx: WriteTx, ctx: &WriteContext, action: &'static str, id: i64) -> Result<Policy> {
    let policy = policy_in(&mut db_tx, id).await?;
    commit(db_tx, ctx, action, Entity::Policy, id, policy).await
}
