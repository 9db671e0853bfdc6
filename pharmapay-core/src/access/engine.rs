//! Access use cases: users (D18, D29), the caller's own profile and password (D24), roles,
//! permissions and policies (D19, D38).

use tracing::{instrument, warn};

use crate::access::policy::{NewPolicy, Policy};
use crate::access::role::{NewRole, Role};
use crate::access::rules;
use crate::access::user::{NewUser, PasswordChange, Profile, ProfileUpdate, User, UserUpdate};
use crate::access::{ADMIN_ROLE_ID, Access, Action, Collection, Permission, Principal};
use crate::engine::{PharmaPay, Session, store_error, visible};
use crate::error::{Entity, Error, Result, RuleBroken};
use crate::idempotency::{Created, IdempotencyRequest};
use crate::ids::{PermissionId, PolicyId, RoleId, UserId};
use crate::store::{NewUserRecord, PolicyHolder, Store, StoreError};
use crate::text;

impl<S: Store> PharmaPay<S> {
    /// Active users (spec: token only).
    ///
    /// # Errors
    /// Store failures.
    pub async fn list_users(&self, _principal: &Principal) -> Result<Vec<User>> {
        self.store.list_users().await.map_err(store_error)
    }

    /// One active user (spec: token only).
    ///
    /// # Errors
    /// [`Error::NotFound`] when missing or deleted.
    pub async fn get_user(&self, _principal: &Principal, id: UserId) -> Result<User> {
        self.active_user(id).await
    }

    /// The caller's resolved permissions (D19); an admin gets the single full-access entry.
    ///
    /// # Errors
    /// Store failures.
    pub async fn my_permissions(&self, principal: &Principal) -> Result<Vec<Permission>> {
        if principal.is_admin {
            return Ok(vec![Permission::full_access()]);
        }
        self.store.resolve_permissions(principal.user_id).await.map_err(store_error)
    }

    /// Creates a user with an active role (D4, D29).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] (also for an inactive role);
    /// [`Error::Conflict`] for a taken email; idempotency clashes.
    #[instrument(skip_all)]
    pub async fn create_user(
        &self,
        principal: &Principal,
        user: NewUser,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<User>> {
        principal.require(Access::new(Collection::User, Action::Create))?;
        let mut user = user.validate().map_err(Error::Validation)?;
        // D49: a user created without `branchIds` gets the caller's own scope.
        let branch_ids = user.branch_ids.get_or_insert_with(|| principal.scope.clone()).clone();
        let ctx = self.ctx_with(principal, user.audit_changes());
        // The password is hashed once the key is claimed, so a replay costs no hashing.
        let insert = |ctx| async move {
            let password_hash = self.passwords.hash(user.password.expose()).await?;
            let record = NewUserRecord {
                first_name: user.first_name,
                last_name: user.last_name,
                email: user.email,
                role_id: user.role_id,
                branch_ids,
                password_hash,
            };
            self.store.insert_user(record, ctx).await.map_err(store_error)
        };
        self.create_idempotently(principal, idempotency, ctx, insert, |id| self.store.get_user(UserId(id))).await
    }

    /// Replaces a user's names, email, role and, when given, branches (D49); the last active
    /// admin keeps the Admin role (D18). Narrowing a user's branches revokes their tokens (D39).
    ///
    /// # Errors
    /// [`Error::Forbidden`] (also for a scope beyond the caller's, or a user reaching beyond
    /// it, D38 and D49); [`Error::Validation`]; [`Error::NotFound`]; [`Error::Conflict`];
    /// [`Error::Rule`].
    #[instrument(skip_all, fields(user_id = %id))]
    pub async fn update_user(&self, principal: &Principal, id: UserId, user: UserUpdate) -> Result<User> {
        principal.require(Access::new(Collection::User, Action::Update))?;
        let user = user.validate().map_err(Error::Validation)?;
        let ctx = self.ctx_with(principal, user.audit_changes());
        self.store.update_user(id, user, ctx).await.map_err(store_error)
    }

    /// Soft-deletes a user; their tokens stop working (D20). Nobody can delete themself, and
    /// the last active admin cannot be deleted (D18).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; [`Error::Rule`].
    #[instrument(skip_all, fields(user_id = %id))]
    pub async fn delete_user(&self, principal: &Principal, id: UserId, reason: Option<String>) -> Result<()> {
        principal.require(Access::new(Collection::User, Action::Delete))?;
        // D18: asked before the reason is read, as the store's delete asks it again.
        rules::check_not_self(Some(principal.user_id), id).map_err(store_error)?;
        let ctx = self.ctx_for_delete(principal, reason)?;
        self.store.delete_user(id, ctx).await.map_err(store_error)
    }

    /// Makes a deleted user active again (D15); tokens from before the delete stay invalid.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; [`Error::Conflict`]; [`Error::Rule`].
    #[instrument(skip_all, fields(user_id = %id))]
    pub async fn restore_user(&self, principal: &Principal, id: UserId) -> Result<User> {
        principal.require(Access::new(Collection::User, Action::Update))?;
        self.store.restore_user(id, self.ctx(principal)).await.map_err(store_error)
    }

    /// The active policies attached directly to an active user (D19; token only).
    ///
    /// # Errors
    /// [`Error::NotFound`] when the user is missing or deleted.
    pub async fn list_user_policies(&self, _principal: &Principal, id: UserId) -> Result<Vec<Policy>> {
        self.active_user(id).await?;
        self.store.list_user_policies(id).await.map_err(store_error)
    }

    /// Attaches a policy directly to a user (D19).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] for a missing user or policy.
    #[instrument(skip_all, fields(user_id = %user_id, policy_id = %policy_id))]
    pub async fn attach_user_policy(&self, principal: &Principal, user_id: UserId, policy_id: PolicyId) -> Result<()> {
        principal.require(Access::new(Collection::User, Action::Update))?;
        self.store.attach_policy(PolicyHolder::User(user_id), policy_id, self.ctx(principal)).await.map_err(store_error)
    }

    /// Detaches a policy from a user (D19).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] for a missing user.
    #[instrument(skip_all, fields(user_id = %user_id, policy_id = %policy_id))]
    pub async fn detach_user_policy(&self, principal: &Principal, user_id: UserId, policy_id: PolicyId) -> Result<()> {
        principal.require(Access::new(Collection::User, Action::Update))?;
        self.store.detach_policy(PolicyHolder::User(user_id), policy_id, self.ctx(principal)).await.map_err(store_error)
    }

    /// The caller's own profile.
    ///
    /// # Errors
    /// [`Error::Unauthenticated`] when the caller's account is gone; store failures.
    pub async fn profile(&self, principal: &Principal) -> Result<Profile> {
        let user = self.active_user(principal.user_id).await.map_err(|_| Error::Unauthenticated)?;
        let role_name =
            self.store.get_role(user.role_id).await.map_err(store_error)?.map(|role| role.name).unwrap_or_default();
        let is_admin = user.role_id == ADMIN_ROLE_ID;
        let permissions = if is_admin {
            vec!["*:*".to_owned()]
        } else {
            self.store.resolve_permissions(user.id).await.map_err(store_error)?.iter().map(Permission::code).collect()
        };
        Ok(Profile { user, role_name, is_admin, permissions })
    }

    /// Changes the caller's own names and email.
    ///
    /// # Errors
    /// [`Error::Validation`]; [`Error::Conflict`] for a taken email.
    #[instrument(skip_all)]
    pub async fn update_profile(&self, principal: &Principal, update: ProfileUpdate) -> Result<Profile> {
        let update = update.validate().map_err(Error::Validation)?;
        let ctx = self.ctx_with(principal, update.audit_changes());
        self.store.update_profile(principal.user_id, update, ctx).await.map_err(|error| match error {
            StoreError::NotFound(_) => Error::Unauthenticated,
            other => store_error(other),
        })?;
        self.profile(principal).await
    }

    /// Changes the caller's password and signs them in afresh; older tokens stop working (D20).
    ///
    /// A wrong current password counts as a failed login for the caller's email and account and
    /// is audited, so a stolen token cannot be used to guess the password, not even by changing
    /// the email between guesses: the sixth wrong guess within the window answers
    /// [`Error::Throttled`] (D40, D48).
    ///
    /// # Errors
    /// [`Error::Rule`] when the current password is wrong; [`Error::Throttled`].
    #[instrument(skip_all)]
    pub async fn change_password(&self, principal: &Principal, change: PasswordChange) -> Result<Session> {
        let now = self.now();
        let credentials = self
            .store
            .credentials(principal.user_id)
            .await
            .map_err(store_error)?
            .filter(|credentials| credentials.user.is_active)
            .ok_or(Error::Unauthenticated)?;
        let email_key = text::key(&credentials.user.email);
        let user_id = Some(principal.user_id);
        // D48: the account's count as well as its email's, so changing the email starts nothing
        // afresh.
        self.pass_login_gate(&email_key, &email_key, user_id, now).await?;
        let account_key = crate::sessions::login::account_key(principal.user_id);
        self.pass_login_gate(&account_key, &email_key, user_id, now).await?;
        let current_ok = change.current_password.len() <= text::PASSWORD_MAX_BYTES
            && self.passwords.verify(&change.current_password, &credentials.password_hash).await;
        if !current_ok {
            warn!("password change with a wrong current password");
            let answer = self.count_failure(&email_key, user_id, user_id, "password_change_failed", now).await;
            return Err(answer.into_error(Error::Rule(RuleBroken::WrongCurrentPassword)));
        }
        let password_hash = self.passwords.hash(change.new_password.expose()).await?;
        let sign_in =
            self.store.set_password(principal.user_id, password_hash, self.ctx(principal)).await.map_err(|error| {
                match error {
                    StoreError::NotFound(_) => Error::Unauthenticated,
                    other => store_error(other),
                }
            })?;
        self.sign(sign_in)
    }

    /// Every role, active and inactive (spec: token only).
    ///
    /// # Errors
    /// Store failures.
    pub async fn list_roles(&self, _principal: &Principal) -> Result<Vec<Role>> {
        self.store.list_roles().await.map_err(store_error)
    }

    /// One active role (D17; token only).
    ///
    /// # Errors
    /// [`Error::NotFound`] when missing or deleted.
    pub async fn get_role(&self, _principal: &Principal, id: RoleId) -> Result<Role> {
        visible(self.store.get_role(id).await, |role: &_| role.is_active, Entity::Role)
    }

    /// Creates a role; it is never a system role.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::Conflict`]; idempotency clashes.
    #[instrument(skip_all)]
    pub async fn create_role(
        &self,
        principal: &Principal,
        role: NewRole,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<Role>> {
        principal.require(Access::new(Collection::Role, Action::Create))?;
        let role = role.validate().map_err(Error::Validation)?;
        let ctx = self.ctx_with(principal, role.audit_changes());
        let insert = |ctx| async move { self.store.insert_role(role, ctx).await.map_err(store_error) };
        self.create_idempotently(principal, idempotency, ctx, insert, |id| self.store.get_role(RoleId(id))).await
    }

    /// Changes a role's name and description; system roles keep their names.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::NotFound`]; [`Error::Conflict`];
    /// [`Error::Rule`].
    #[instrument(skip_all, fields(role_id = %id))]
    pub async fn update_role(&self, principal: &Principal, id: RoleId, role: NewRole) -> Result<Role> {
        principal.require(Access::new(Collection::Role, Action::Update))?;
        let role = role.validate().map_err(Error::Validation)?;
        let ctx = self.ctx_with(principal, role.audit_changes());
        self.store.update_role(id, role, ctx).await.map_err(store_error)
    }

    /// Soft-deletes a role; system roles answer [`RuleBroken::SystemRoleDelete`].
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; [`Error::Rule`].
    #[instrument(skip_all, fields(role_id = %id))]
    pub async fn delete_role(&self, principal: &Principal, id: RoleId, reason: Option<String>) -> Result<()> {
        principal.require(Access::new(Collection::Role, Action::Delete))?;
        let ctx = self.ctx_for_delete(principal, reason)?;
        self.store.delete_role(id, ctx).await.map_err(store_error)
    }

    /// Makes a deleted role active again (D15).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`].
    #[instrument(skip_all, fields(role_id = %id))]
    pub async fn restore_role(&self, principal: &Principal, id: RoleId) -> Result<Role> {
        principal.require(Access::new(Collection::Role, Action::Update))?;
        self.store.restore_role(id, self.ctx(principal)).await.map_err(store_error)
    }

    /// Attaches a policy to a role.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] for a missing role or policy.
    #[instrument(skip_all, fields(role_id = %role_id, policy_id = %policy_id))]
    pub async fn attach_role_policy(&self, principal: &Principal, role_id: RoleId, policy_id: PolicyId) -> Result<()> {
        principal.require(Access::new(Collection::Role, Action::Update))?;
        self.store.attach_policy(PolicyHolder::Role(role_id), policy_id, self.ctx(principal)).await.map_err(store_error)
    }

    /// Detaches a policy from a role.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] for a missing role.
    #[instrument(skip_all, fields(role_id = %role_id, policy_id = %policy_id))]
    pub async fn detach_role_policy(&self, principal: &Principal, role_id: RoleId, policy_id: PolicyId) -> Result<()> {
        principal.require(Access::new(Collection::Role, Action::Update))?;
        self.store.detach_policy(PolicyHolder::Role(role_id), policy_id, self.ctx(principal)).await.map_err(store_error)
    }

    /// Every permission.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_permissions(&self, principal: &Principal) -> Result<Vec<Permission>> {
        principal.require(Access::new(Collection::Permission, Action::Read))?;
        self.store.list_permissions().await.map_err(store_error)
    }

    /// Active policies.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_policies(&self, principal: &Principal) -> Result<Vec<Policy>> {
        principal.require(Access::new(Collection::Policy, Action::Read))?;
        self.store.list_policies().await.map_err(store_error)
    }

    /// One active policy with its permissions.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`].
    pub async fn get_policy(&self, principal: &Principal, id: PolicyId) -> Result<Policy> {
        principal.require(Access::new(Collection::Policy, Action::Read))?;
        visible(self.store.get_policy(id).await, |policy: &_| policy.is_active, Entity::Policy)
    }

    /// Creates a policy from existing permissions.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] (also for unknown permission ids);
    /// [`Error::Conflict`]; idempotency clashes.
    #[instrument(skip_all)]
    pub async fn create_policy(
        &self,
        principal: &Principal,
        policy: NewPolicy,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<Policy>> {
        principal.require(Access::new(Collection::Policy, Action::Create))?;
        let policy = policy.validate().map_err(Error::Validation)?;
        let ctx = self.ctx_with(principal, policy.audit_changes());
        let insert = |ctx| async move { self.store.insert_policy(policy, ctx).await.map_err(store_error) };
        self.create_idempotently(principal, idempotency, ctx, insert, |id| self.store.get_policy(PolicyId(id))).await
    }

    /// Replaces a policy's name, description and permissions.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`]; [`Error::NotFound`]; [`Error::Conflict`].
    #[instrument(skip_all, fields(policy_id = %id))]
    pub async fn update_policy(&self, principal: &Principal, id: PolicyId, policy: NewPolicy) -> Result<Policy> {
        principal.require(Access::new(Collection::Policy, Action::Update))?;
        let policy = policy.validate().map_err(Error::Validation)?;
        let ctx = self.ctx_with(principal, policy.audit_changes());
        self.store.update_policy(id, policy, ctx).await.map_err(store_error)
    }

    /// Soft-deletes a policy; it stops granting permissions to new tokens (D19).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`].
    #[instrument(skip_all, fields(policy_id = %id))]
    pub async fn delete_policy(&self, principal: &Principal, id: PolicyId, reason: Option<String>) -> Result<()> {
        principal.require(Access::new(Collection::Policy, Action::Delete))?;
        let ctx = self.ctx_for_delete(principal, reason)?;
        self.store.delete_policy(id, ctx).await.map_err(store_error)
    }

    /// Makes a deleted policy active again (D15).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`]; [`Error::Conflict`].
    #[instrument(skip_all, fields(policy_id = %id))]
    pub async fn restore_policy(&self, principal: &Principal, id: PolicyId) -> Result<Policy> {
        principal.require(Access::new(Collection::Policy, Action::Update))?;
        self.store.restore_policy(id, self.ctx(principal)).await.map_err(store_error)
    }

    /// Adds a permission to a policy.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] for a missing policy or permission.
    #[instrument(skip_all, fields(policy_id = %policy_id, permission_id = %permission_id))]
    pub async fn add_policy_permission(
        &self,
        principal: &Principal,
        policy_id: PolicyId,
        permission_id: PermissionId,
    ) -> Result<()> {
        principal.require(Access::new(Collection::Policy, Action::Update))?;
        self.store.add_policy_permission(policy_id, permission_id, self.ctx(principal)).await.map_err(store_error)
    }

    /// Removes a permission from a policy.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] for a missing policy.
    #[instrument(skip_all, fields(policy_id = %policy_id, permission_id = %permission_id))]
    pub async fn remove_policy_permission(
        &self,
        principal: &Principal,
        policy_id: PolicyId,
        permission_id: PermissionId,
    ) -> Result<()> {
        principal.require(Access::new(Collection::Policy, Action::Update))?;
        self.store.remove_policy_permission(policy_id, permission_id, self.ctx(principal)).await.map_err(store_error)
    }
}
