//! Users, roles and policies in memory: [`AccessStore`] for [`MemoryStore`].
//!
//! What a role or a policy gives (D38) and whose tokens a change revokes (D39) are read from
//! the maps here; the decisions are [`grants`]', [`sessions`]' and [`people`]'.

use std::collections::{BTreeMap, BTreeSet};

use pharmapay_core::access::grants::{self, Grant};
use pharmapay_core::access::policy::{NewPolicy, Policy};
use pharmapay_core::access::role::{NewRole, Role};
use pharmapay_core::access::rules as access_rules;
use pharmapay_core::access::rules::{RoleFacts, UserFacts};
use pharmapay_core::access::user::{ProfileUpdate, User, UserUpdate};
use pharmapay_core::access::{ADMIN_ROLE_ID, Authority, Permission, PermissionSet};
use pharmapay_core::base::restore;
use pharmapay_core::ids::{PermissionId, PolicyId, RoleId, UserId};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::sessions::rules as session_rules;
use pharmapay_core::sessions::rules::TokenState;
use pharmapay_core::store::{AccessStore, NewUserRecord, PolicyHolder, SignIn, UniqueKey};
use pharmapay_core::store::{StoreResult, WriteContext};
use pharmapay_core::text::key;
use pharmapay_core::{Entity, StoreError};

use crate::{MemoryStore, PolicyRow, RoleRow, State, UserRow};
use pharmapay_core::branches::Scope;
use pharmapay_core::branches::scope as branch_scope;

impl State {
    pub(crate) fn user(&self, id: i64) -> Option<User> {
        let row = self.users.get(&id)?;
        Some(User {
            id: UserId(id),
            first_name: row.first_name.clone(),
            last_name: row.last_name.clone(),
            email: row.email.clone(),
            role_id: RoleId(row.role_id),
            branch_ids: row.branch_ids.clone(),
            is_active: row.is_active,
            created_at: row.created_at,
        })
    }

    pub(crate) fn email_taken(&self, email_key: &str, except: Option<i64>) -> bool {
        self.users.iter().any(|(id, user)| user.is_active && user.email_key == email_key && Some(*id) != except)
    }

    pub(crate) fn active_role(&self, id: i64) -> bool {
        self.roles.get(&id).is_some_and(|role| role.is_active)
    }

    /// Whether the user or role `holder` is active.
    fn active_holder(&self, holder: PolicyHolder) -> bool {
        match holder {
            PolicyHolder::User(user_id) => self.users.get(&user_id.get()).is_some_and(|user| user.is_active),
            PolicyHolder::Role(role_id) => self.active_role(role_id.get()),
        }
    }

    /// The (holder, policy) pairs of the policies attached directly to users, or to roles.
    fn policies_of(&mut self, holder: PolicyHolder) -> &mut BTreeSet<(i64, i64)> {
        match holder {
            PolicyHolder::User(_) => &mut self.user_policies,
            PolicyHolder::Role(_) => &mut self.role_policies,
        }
    }

    pub(crate) fn active_admins(&self) -> u64 {
        self.users.values().filter(|user| user.is_active && user.role_id == ADMIN_ROLE_ID.get()).count() as u64
    }

    pub(crate) fn insert_user_row(
        &mut self,
        user: NewUserRecord,
        (authority, scope): (Authority, &Scope),
        at: Timestamp,
    ) -> StoreResult<i64> {
        let email_key = key(&user.email);
        if !self.active_role(user.role_id.get()) {
            return Err(StoreError::ParentInactive(Entity::Role));
        }
        grants::check(authority, self.role_grant(user.role_id.get()))?;
        let facts = self.branch_facts([&user.branch_ids]);
        let admin = user.role_id == ADMIN_ROLE_ID;
        let branch_ids = branch_scope::plan_scope(Some(&user.branch_ids), None, admin, scope, &facts)?;
        if self.email_taken(&email_key, None) {
            return Err(StoreError::Conflict(UniqueKey::UserEmail));
        }
        let id = self.next("user");
        self.users.insert(
            id,
            UserRow {
                first_name: user.first_name,
                last_name: user.last_name,
                email: user.email,
                email_key,
                role_id: user.role_id.get(),
                branch_ids,
                password_hash: user.password_hash,
                tokens: TokenState::default(),
                is_active: true,
                created_at: at,
            },
        );
        Ok(id)
    }

    pub(crate) fn role(&self, id: i64) -> Option<Role> {
        let row = self.roles.get(&id)?;
        Some(Role {
            id: RoleId(id),
            name: row.name.clone(),
            description: row.description.clone(),
            is_system: row.is_system,
            is_active: row.is_active,
            created_at: row.created_at,
        })
    }

    pub(crate) fn role_name_taken(&self, name_key: &str, except: Option<i64>) -> bool {
        self.roles.iter().any(|(id, role)| role.name_key == name_key && Some(*id) != except)
    }

    pub(crate) fn policy(&self, id: i64) -> Option<Policy> {
        let row = self.policies.get(&id)?;
        Some(Policy {
            id: PolicyId(id),
            name: row.name.clone(),
            description: row.description.clone(),
            is_active: row.is_active,
            permissions: row.permission_ids.iter().filter_map(|id| self.permissions.get(id).cloned()).collect(),
            created_at: row.created_at,
        })
    }

    pub(crate) fn policy_name_taken(&self, name_key: &str, except: Option<i64>) -> bool {
        self.policies.iter().any(|(id, policy)| policy.is_active && policy.name_key == name_key && Some(*id) != except)
    }

    pub(crate) fn active_policy(&self, id: i64) -> bool {
        self.policies.get(&id).is_some_and(|policy| policy.is_active)
    }

    /// The permissions among `ids`, as a set.
    pub(crate) fn permission_set<'a>(&self, ids: impl IntoIterator<Item = &'a i64>) -> PermissionSet {
        PermissionSet::from_permissions(ids.into_iter().filter_map(|id| self.permissions.get(id)))
    }

    /// What holding `role_id` gives (D38): the Admin role, or its active policies' permissions.
    pub(crate) fn role_grant(&self, role_id: i64) -> Grant {
        self.role_grant_as(role_id, self.active_role(role_id))
    }

    /// What holding `role_id` would give if the role were active (`active`) or not.
    pub(crate) fn role_grant_as(&self, role_id: i64, active: bool) -> Grant {
        let mut permissions = PermissionSet::empty();
        if active {
            for (_, policy_id) in self.role_policies.iter().filter(|(role, _)| *role == role_id) {
                if let Some(policy) = self.policies.get(policy_id).filter(|policy| policy.is_active) {
                    permissions = permissions.union(self.permission_set(&policy.permission_ids));
                }
            }
        }
        Grant::role(RoleId(role_id), permissions)
    }

    /// What the active policies attached directly to `user_id` give (D19, D38).
    pub(crate) fn own_policies_grant(&self, user_id: i64) -> Grant {
        let mut permissions = PermissionSet::empty();
        for (_, policy_id) in self.user_policies.iter().filter(|(user, _)| *user == user_id) {
            if let Some(policy) = self.policies.get(policy_id).filter(|policy| policy.is_active) {
                permissions = permissions.union(self.permission_set(&policy.permission_ids));
            }
        }
        Grant::permissions(permissions)
    }

    /// What a policy with these permission ids gives (D38).
    pub(crate) fn policy_grant(&self, permission_ids: &BTreeSet<i64>) -> Grant {
        Grant::permissions(self.permission_set(permission_ids))
    }

    /// The user's permissions (D19): the active policies of their role (when active) and their own.
    pub(crate) fn resolve(&self, user_id: i64) -> Vec<Permission> {
        let Some(user) = self.users.get(&user_id) else { return Vec::new() };
        let mut policy_ids: BTreeSet<i64> = BTreeSet::new();
        if self.active_role(user.role_id) {
            policy_ids.extend(self.role_policies.iter().filter(|(role, _)| *role == user.role_id).map(|(_, p)| *p));
        }
        policy_ids.extend(self.user_policies.iter().filter(|(user, _)| *user == user_id).map(|(_, p)| *p));
        let permission_ids: BTreeSet<i64> = policy_ids
            .iter()
            .filter_map(|id| self.policies.get(id))
            .filter(|policy| policy.is_active)
            .flat_map(|policy| policy.permission_ids.iter().copied())
            .collect();
        permission_ids.iter().filter_map(|id| self.permissions.get(id).cloned()).collect()
    }

    /// Revokes, at `at`, every token issued so far to each of `user_ids` (D39).
    pub(crate) fn revoke(&mut self, user_ids: impl IntoIterator<Item = i64>, at: Timestamp) {
        for user_id in user_ids {
            if let Some(user) = self.users.get_mut(&user_id) {
                user.tokens = session_rules::revoke(user.tokens, at);
            }
        }
    }

    /// The users holding `role_id`.
    pub(crate) fn users_of_role(&self, role_id: i64) -> Vec<i64> {
        self.users.iter().filter(|(_, user)| user.role_id == role_id).map(|(id, _)| *id).collect()
    }

    /// The users holding `policy_id`, directly or through their role.
    pub(crate) fn users_of_policy(&self, policy_id: i64) -> Vec<i64> {
        let roles: BTreeSet<i64> =
            self.role_policies.iter().filter(|(_, policy)| *policy == policy_id).map(|(role, _)| *role).collect();
        self.users
            .iter()
            .filter(|(id, user)| roles.contains(&user.role_id) || self.user_policies.contains(&(**id, policy_id)))
            .map(|(id, _)| *id)
            .collect()
    }

    pub(crate) fn check_permissions(&self, ids: &[PermissionId]) -> StoreResult<BTreeSet<i64>> {
        if ids.iter().all(|id| self.permissions.contains_key(&id.get())) {
            Ok(ids.iter().map(|id| id.get()).collect())
        } else {
            Err(StoreError::ParentInactive(Entity::Permission))
        }
    }
}

impl AccessStore for MemoryStore {
    async fn resolve_permissions(&self, user_id: UserId) -> StoreResult<Vec<Permission>> {
        Ok(self.read().resolve(user_id.get()))
    }

    async fn insert_user(&self, user: NewUserRecord, ctx: WriteContext) -> StoreResult<User> {
        let mut state = self.write();
        let id = state.insert_user_row(user, (ctx.authority, &ctx.scope), ctx.at)?;
        state.finish_write(&ctx, "create", Entity::User, id);
        Ok(state.user(id).expect("just written"))
    }

    async fn get_user(&self, id: UserId) -> StoreResult<Option<User>> {
        Ok(self.read().user(id.get()))
    }

    async fn list_users(&self) -> StoreResult<Vec<User>> {
        let state = self.read();
        Ok(state.users.iter().filter(|(_, user)| user.is_active).filter_map(|(id, _)| state.user(*id)).collect())
    }

    async fn update_user(&self, id: UserId, user: UserUpdate, ctx: WriteContext) -> StoreResult<User> {
        let mut state = self.write();
        let current = active(&state.users, id.get(), Entity::User)?;
        let email_key = key(&user.email);
        let facts = UserFacts { id, role_id: RoleId(current.role_id) };
        let role_changes = user.role_id.get() != current.role_id;
        if role_changes && !state.active_role(user.role_id.get()) {
            return Err(StoreError::ParentInactive(Entity::Role));
        }
        if role_changes {
            grants::check(ctx.authority, state.role_grant(user.role_id.get()))?;
        }
        // D49: the scope the write leaves, within the writer's, of active branches.
        let held = current.branch_ids.clone();
        let branch_facts = state.branch_facts([&held].into_iter().chain(user.branch_ids.as_ref()));
        let admin = user.role_id == ADMIN_ROLE_ID;
        let branch_ids =
            branch_scope::plan_scope(user.branch_ids.as_ref(), Some(&held), admin, &ctx.scope, &branch_facts)?;
        if state.email_taken(&email_key, Some(id.get())) {
            return Err(StoreError::Conflict(UniqueKey::UserEmail));
        }
        access_rules::check_user_change(facts, user.role_id, state.active_admins())?;
        let narrowed = branch_scope::narrows(&held, &branch_ids);
        let row = state.users.get_mut(&id.get()).expect("checked above");
        row.first_name = user.first_name;
        row.last_name = user.last_name;
        row.email = user.email;
        row.email_key = email_key;
        row.role_id = user.role_id.get();
        row.branch_ids = branch_ids;
        if role_changes || narrowed {
            // D39: a new role may hold less, and a narrowed scope does (D49), so tokens issued
            // before stop working.
            state.revoke([id.get()], ctx.at);
        }
        state.finish_write(&ctx, "update", Entity::User, id.get());
        Ok(state.user(id.get()).expect("just written"))
    }

    async fn delete_user(&self, id: UserId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        let row = active(&state.users, id.get(), Entity::User)?;
        let facts = UserFacts { id, role_id: RoleId(row.role_id) };
        let held = row.branch_ids.clone();
        branch_scope::check_reach(&ctx.scope, &held, &state.branch_facts([&held]))?;
        access_rules::check_user_delete(facts, ctx.actor, state.active_admins())?;
        state.users.get_mut(&id.get()).expect("checked above").is_active = false;
        state.revoke([id.get()], ctx.at);
        state.finish_write(&ctx, "delete", Entity::User, id.get());
        Ok(())
    }

    async fn restore_user(&self, id: UserId, ctx: WriteContext) -> StoreResult<User> {
        let mut state = self.write();
        let row = deleted(&state.users, id.get(), Entity::User)?;
        let (role_id, email_key, held) = (row.role_id, row.email_key.clone(), row.branch_ids.clone());
        restore::check_parent(Entity::Role, state.active_role(role_id))?;
        branch_scope::check_reach(&ctx.scope, &held, &state.branch_facts([&held]))?;
        // D48: the user gets back their role and the policies attached to them directly.
        grants::check(ctx.authority, state.role_grant(role_id).and(state.own_policies_grant(id.get())))?;
        if state.email_taken(&email_key, Some(id.get())) {
            return Err(StoreError::Conflict(UniqueKey::UserEmail));
        }
        state.users.get_mut(&id.get()).expect("checked above").is_active = true;
        state.finish_write(&ctx, "restore", Entity::User, id.get());
        Ok(state.user(id.get()).expect("just written"))
    }

    async fn update_profile(&self, id: UserId, profile: ProfileUpdate, ctx: WriteContext) -> StoreResult<User> {
        let mut state = self.write();
        if !state.users.get(&id.get()).is_some_and(|row| row.is_active) {
            return Err(StoreError::NotFound(Entity::User));
        }
        let email_key = key(&profile.email);
        if state.email_taken(&email_key, Some(id.get())) {
            return Err(StoreError::Conflict(UniqueKey::UserEmail));
        }
        let row = state.users.get_mut(&id.get()).expect("checked above");
        row.first_name = profile.first_name;
        row.last_name = profile.last_name;
        row.email = profile.email;
        row.email_key = email_key;
        state.finish_write(&ctx, "update", Entity::User, id.get());
        Ok(state.user(id.get()).expect("just written"))
    }

    async fn set_password(&self, id: UserId, password_hash: String, ctx: WriteContext) -> StoreResult<SignIn> {
        let mut state = self.write();
        let row = active_mut(&mut state.users, id.get(), Entity::User)?;
        row.password_hash = password_hash;
        // D20: older tokens stop working; the fresh one is issued after that revocation.
        let (issued_at, tokens) = session_rules::issue(session_rules::revoke(row.tokens, ctx.at), ctx.at);
        row.tokens = tokens;
        state.finish_write(&ctx, "password_change", Entity::User, id.get());
        let user = state.user(id.get()).expect("checked above");
        Ok(SignIn { permissions: state.resolve(id.get()), user, issued_at })
    }

    async fn list_user_policies(&self, user_id: UserId) -> StoreResult<Vec<Policy>> {
        let state = self.read();
        Ok(state
            .user_policies
            .iter()
            .filter(|(user, policy)| *user == user_id.get() && state.active_policy(*policy))
            .filter_map(|(_, policy)| state.policy(*policy))
            .collect())
    }

    // Roles

    async fn insert_role(&self, role: NewRole, ctx: WriteContext) -> StoreResult<Role> {
        let mut state = self.write();
        let name_key = key(&role.name);
        if state.role_name_taken(&name_key, None) {
            return Err(StoreError::Conflict(UniqueKey::RoleName));
        }
        let id = state.next("role");
        state.roles.insert(
            id,
            RoleRow {
                name: role.name,
                name_key,
                description: role.description,
                is_system: false,
                is_active: true,
                created_at: ctx.at,
            },
        );
        state.finish_write(&ctx, "create", Entity::Role, id);
        Ok(state.role(id).expect("just written"))
    }

    async fn get_role(&self, id: RoleId) -> StoreResult<Option<Role>> {
        Ok(self.read().role(id.get()))
    }

    async fn list_roles(&self) -> StoreResult<Vec<Role>> {
        let state = self.read();
        Ok(state.roles.keys().filter_map(|id| state.role(*id)).collect())
    }

    async fn update_role(&self, id: RoleId, role: NewRole, ctx: WriteContext) -> StoreResult<Role> {
        let mut state = self.write();
        let current = active(&state.roles, id.get(), Entity::Role)?;
        let name_key = key(&role.name);
        access_rules::check_role_update(RoleFacts { name: &current.name, is_system: current.is_system }, &role.name)?;
        if state.role_name_taken(&name_key, Some(id.get())) {
            return Err(StoreError::Conflict(UniqueKey::RoleName));
        }
        let row = state.roles.get_mut(&id.get()).expect("checked above");
        row.name = role.name;
        row.name_key = name_key;
        row.description = role.description;
        state.finish_write(&ctx, "update", Entity::Role, id.get());
        Ok(state.role(id.get()).expect("just written"))
    }

    async fn delete_role(&self, id: RoleId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        let row = active_mut(&mut state.roles, id.get(), Entity::Role)?;
        access_rules::check_role_delete(RoleFacts { name: &row.name, is_system: row.is_system })?;
        row.is_active = false;
        let holders = state.users_of_role(id.get());
        state.revoke(holders, ctx.at);
        state.finish_write(&ctx, "delete", Entity::Role, id.get());
        Ok(())
    }

    async fn restore_role(&self, id: RoleId, ctx: WriteContext) -> StoreResult<Role> {
        let mut state = self.write();
        if state.roles.get(&id.get()).is_none_or(|row| row.is_active) {
            return Err(StoreError::NotFound(Entity::Role));
        }
        // Judged as the role gives once active again.
        grants::check(ctx.authority, state.role_grant_as(id.get(), true))?;
        let row = state.roles.get_mut(&id.get()).expect("checked above");
        row.is_active = true;
        state.finish_write(&ctx, "restore", Entity::Role, id.get());
        Ok(state.role(id.get()).expect("just written"))
    }

    // Policies attached to users and roles

    async fn attach_policy(&self, holder: PolicyHolder, policy_id: PolicyId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        if !state.active_holder(holder) {
            return Err(StoreError::NotFound(holder.entity()));
        }
        if !state.active_policy(policy_id.get()) {
            return Err(StoreError::NotFound(Entity::Policy));
        }
        grants::check(ctx.authority, state.policy_grant(&state.policies[&policy_id.get()].permission_ids))?;
        state.policies_of(holder).insert((holder.id(), policy_id.get()));
        state.finish_write(&ctx, "attach_policy", holder.entity(), holder.id());
        Ok(())
    }

    async fn detach_policy(&self, holder: PolicyHolder, policy_id: PolicyId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        if !state.active_holder(holder) {
            return Err(StoreError::NotFound(holder.entity()));
        }
        if state.policies_of(holder).remove(&(holder.id(), policy_id.get())) {
            let users = match holder {
                PolicyHolder::User(user_id) => vec![user_id.get()],
                PolicyHolder::Role(role_id) => state.users_of_role(role_id.get()),
            };
            state.revoke(users, ctx.at);
        }
        state.finish_write(&ctx, "detach_policy", holder.entity(), holder.id());
        Ok(())
    }

    // Permissions and policies

    async fn list_permissions(&self) -> StoreResult<Vec<Permission>> {
        Ok(self.read().permissions.values().cloned().collect())
    }

    async fn insert_policy(&self, policy: NewPolicy, ctx: WriteContext) -> StoreResult<Policy> {
        let mut state = self.write();
        let name_key = key(&policy.name);
        let permission_ids = state.check_permissions(&policy.permission_ids)?;
        grants::check(ctx.authority, state.policy_grant(&permission_ids))?;
        if state.policy_name_taken(&name_key, None) {
            return Err(StoreError::Conflict(UniqueKey::PolicyName));
        }
        let id = state.next("policy");
        state.policies.insert(
            id,
            PolicyRow {
                name: policy.name,
                name_key,
                description: policy.description,
                is_active: true,
                permission_ids,
                created_at: ctx.at,
            },
        );
        state.finish_write(&ctx, "create", Entity::Policy, id);
        Ok(state.policy(id).expect("just written"))
    }

    async fn get_policy(&self, id: PolicyId) -> StoreResult<Option<Policy>> {
        Ok(self.read().policy(id.get()))
    }

    async fn list_policies(&self) -> StoreResult<Vec<Policy>> {
        let state = self.read();
        Ok(state.policies.iter().filter(|(_, row)| row.is_active).filter_map(|(id, _)| state.policy(*id)).collect())
    }

    async fn update_policy(&self, id: PolicyId, policy: NewPolicy, ctx: WriteContext) -> StoreResult<Policy> {
        let mut state = self.write();
        if !state.active_policy(id.get()) {
            return Err(StoreError::NotFound(Entity::Policy));
        }
        let name_key = key(&policy.name);
        let permission_ids = state.check_permissions(&policy.permission_ids)?;
        grants::check(ctx.authority, state.policy_grant(&permission_ids))?;
        if state.policy_name_taken(&name_key, Some(id.get())) {
            return Err(StoreError::Conflict(UniqueKey::PolicyName));
        }
        let removes_any = !state.policies[&id.get()].permission_ids.is_subset(&permission_ids);
        if removes_any {
            let holders = state.users_of_policy(id.get());
            state.revoke(holders, ctx.at);
        }
        let row = state.policies.get_mut(&id.get()).expect("checked above");
        row.name = policy.name;
        row.name_key = name_key;
        row.description = policy.description;
        row.permission_ids = permission_ids;
        state.finish_write(&ctx, "update", Entity::Policy, id.get());
        Ok(state.policy(id.get()).expect("just written"))
    }

    async fn delete_policy(&self, id: PolicyId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        let row = active_mut(&mut state.policies, id.get(), Entity::Policy)?;
        row.is_active = false;
        let holders = state.users_of_policy(id.get());
        state.revoke(holders, ctx.at);
        state.finish_write(&ctx, "delete", Entity::Policy, id.get());
        Ok(())
    }

    async fn restore_policy(&self, id: PolicyId, ctx: WriteContext) -> StoreResult<Policy> {
        let mut state = self.write();
        let row = deleted(&state.policies, id.get(), Entity::Policy)?;
        let name_key = row.name_key.clone();
        grants::check(ctx.authority, state.policy_grant(&row.permission_ids))?;
        if state.policy_name_taken(&name_key, Some(id.get())) {
            return Err(StoreError::Conflict(UniqueKey::PolicyName));
        }
        state.policies.get_mut(&id.get()).expect("checked above").is_active = true;
        state.finish_write(&ctx, "restore", Entity::Policy, id.get());
        Ok(state.policy(id.get()).expect("just written"))
    }

    async fn add_policy_permission(
        &self,
        policy_id: PolicyId,
        permission_id: PermissionId,
        ctx: WriteContext,
    ) -> StoreResult<()> {
        let mut state = self.write();
        if !state.active_policy(policy_id.get()) {
            return Err(StoreError::NotFound(Entity::Policy));
        }
        if !state.permissions.contains_key(&permission_id.get()) {
            return Err(StoreError::NotFound(Entity::Permission));
        }
        // D38: judged as the policy stands after the write.
        let mut after = state.policies[&policy_id.get()].permission_ids.clone();
        after.insert(permission_id.get());
        grants::check(ctx.authority, state.policy_grant(&after))?;
        state.policies.get_mut(&policy_id.get()).expect("checked above").permission_ids = after;
        state.finish_write(&ctx, "add_permission", Entity::Policy, policy_id.get());
        Ok(())
    }

    async fn remove_policy_permission(
        &self,
        policy_id: PolicyId,
        permission_id: PermissionId,
        ctx: WriteContext,
    ) -> StoreResult<()> {
        let mut state = self.write();
        if !state.active_policy(policy_id.get()) {
            return Err(StoreError::NotFound(Entity::Policy));
        }
        let policy = state.policies.get_mut(&policy_id.get()).expect("checked above");
        if policy.permission_ids.remove(&permission_id.get()) {
            let holders = state.users_of_policy(policy_id.get());
            state.revoke(holders, ctx.at);
        }
        state.finish_write(&ctx, "remove_permission", Entity::Policy, policy_id.get());
        Ok(())
    }
}

/// A row of the access tables, which a soft delete makes inactive (D15).
trait SoftDeleted {
    /// Whether the row is active.
    fn is_active(&self) -> bool;
}

/// [`SoftDeleted`] for rows with an `is_active` field.
macro_rules! soft_deleted {
    ($($row:ty),*) => {$(
        impl SoftDeleted for $row {
            fn is_active(&self) -> bool {
                self.is_active
            }
        }
    )*};
}

soft_deleted!(UserRow, RoleRow, PolicyRow);

/// The active row `id` of `rows`; a missing or soft-deleted one is an `entity` not found.
fn active<R: SoftDeleted>(rows: &BTreeMap<i64, R>, id: i64, entity: Entity) -> StoreResult<&R> {
    rows.get(&id).filter(|row| row.is_active()).ok_or(StoreError::NotFound(entity))
}

/// The active row `id` of `rows`, to change.
fn active_mut<R: SoftDeleted>(rows: &mut BTreeMap<i64, R>, id: i64, entity: Entity) -> StoreResult<&mut R> {
    rows.get_mut(&id).filter(|row| row.is_active()).ok_or(StoreError::NotFound(entity))
}

/// The soft-deleted row `id` of `rows`, to restore; a missing or active one is an `entity` not
/// found.
fn deleted<R: SoftDeleted>(rows: &BTreeMap<i64, R>, id: i64, entity: Entity) -> StoreResult<&R> {
    rows.get(&id).filter(|row| !row.is_active()).ok_or(StoreError::NotFound(entity))
}
