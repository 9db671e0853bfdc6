//! Storage for users, roles, policies and permissions (D19): [`AccessStore`], part of
//! [`Store`](crate::store::Store).

use std::future::Future;

use crate::access::Permission;
use crate::access::policy::{NewPolicy, Policy};
use crate::access::role::{NewRole, Role};
use crate::access::user::{NewUserRecord, ProfileUpdate, User, UserUpdate};
use crate::error::Entity;
use crate::ids::{PermissionId, PolicyId, RoleId, UserId};
use crate::store::{SignIn, StoreResult, WriteContext};

/// Storage for users, roles, policies and permissions.
pub trait AccessStore: Send + Sync + 'static {
    /// The user's permissions (D19): the union of the permissions of the active policies
    /// attached to their role (when the role is active) and of the active policies attached to
    /// them directly; deduplicated and ordered by id.
    fn resolve_permissions(&self, user_id: UserId) -> impl Future<Output = StoreResult<Vec<Permission>>> + Send;

    // Users

    /// Inserts a user with an active role and an email free among active users; the role is a
    /// grant checked against `ctx.authority` (D38).
    fn insert_user(&self, user: NewUserRecord, ctx: WriteContext) -> impl Future<Output = StoreResult<User>> + Send;

    /// The user.
    fn get_user(&self, id: UserId) -> impl Future<Output = StoreResult<Option<User>>> + Send;

    /// Active users, by id.
    fn list_users(&self) -> impl Future<Output = StoreResult<Vec<User>>> + Send;

    /// Replaces an active user's fields; refuses moving the last active admin off the Admin
    /// role with `Rule(LastAdmin)` (D18). A role change is a grant checked against
    /// `ctx.authority` before that (D38), and revokes the user's tokens (D39).
    fn update_user(
        &self,
        id: UserId,
        user: UserUpdate,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<User>> + Send;

    /// Soft-deletes an active user and revokes their tokens; refuses the context's own actor
    /// with `Rule(DeleteSelf)` and the last active admin with `Rule(LastAdmin)` (D18).
    fn delete_user(&self, id: UserId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Makes a deleted user active again, if their role is active (`Rule(ParentInactive(Role))`
    /// otherwise) and their email is free; the role is a grant checked against `ctx.authority`
    /// (D38).
    fn restore_user(&self, id: UserId, ctx: WriteContext) -> impl Future<Output = StoreResult<User>> + Send;

    /// Changes an active user's own names and email (D24).
    fn update_profile(
        &self,
        id: UserId,
        profile: ProfileUpdate,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<User>> + Send;

    /// Replaces an active user's password hash, revokes their older tokens (D20) and signs
    /// them in afresh, all at `ctx.at` in one transaction.
    fn set_password(
        &self,
        id: UserId,
        password_hash: String,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<SignIn>> + Send;

    /// The active policies attached directly to an active user, by id (D19).
    fn list_user_policies(&self, user_id: UserId) -> impl Future<Output = StoreResult<Vec<Policy>>> + Send;

    // Roles

    /// Inserts a non-system role with a name free among all roles.
    fn insert_role(&self, role: NewRole, ctx: WriteContext) -> impl Future<Output = StoreResult<Role>> + Send;

    /// The role.
    fn get_role(&self, id: RoleId) -> impl Future<Output = StoreResult<Option<Role>>> + Send;

    /// Every role, active and inactive, by id.
    fn list_roles(&self) -> impl Future<Output = StoreResult<Vec<Role>>> + Send;

    /// Changes an active role's name and description; a system role keeps its name
    /// (`Rule(SystemRoleRename)`).
    fn update_role(
        &self,
        id: RoleId,
        role: NewRole,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<Role>> + Send;

    /// Soft-deletes an active non-system role (`Rule(SystemRoleDelete)` for system roles),
    /// revoking the tokens of its users (D39).
    fn delete_role(&self, id: RoleId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Makes a deleted role active again; what its active policies hold is a grant checked
    /// against `ctx.authority` (D38).
    fn restore_role(&self, id: RoleId, ctx: WriteContext) -> impl Future<Output = StoreResult<Role>> + Send;

    // Policies attached to users and roles

    /// Attaches an active policy to an active user or role; attaching twice is harmless. The
    /// policy's permissions are a grant checked against `ctx.authority` (D38).
    fn attach_policy(
        &self,
        holder: PolicyHolder,
        policy_id: PolicyId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// Detaches a policy from an active user or role, revoking the tokens of the user or of the
    /// role's users (D39); detaching what is not attached is harmless and revokes nothing.
    fn detach_policy(
        &self,
        holder: PolicyHolder,
        policy_id: PolicyId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    // Permissions and policies

    /// Every permission, by id.
    fn list_permissions(&self) -> impl Future<Output = StoreResult<Vec<Permission>>> + Send;

    /// Inserts a policy with a name free among active policies; every permission id must exist
    /// (`ParentInactive(Permission)` otherwise), and the permissions are a grant checked
    /// against `ctx.authority` (D38).
    fn insert_policy(&self, policy: NewPolicy, ctx: WriteContext) -> impl Future<Output = StoreResult<Policy>> + Send;

    /// The policy with its permissions.
    fn get_policy(&self, id: PolicyId) -> impl Future<Output = StoreResult<Option<Policy>>> + Send;

    /// Active policies, by id.
    fn list_policies(&self) -> impl Future<Output = StoreResult<Vec<Policy>>> + Send;

    /// Replaces an active policy's name, description and permissions. The permissions as they
    /// stand after the write are a grant checked against `ctx.authority` (D38); removing any
    /// revokes the tokens of the policy's users, directly or through a role (D39).
    fn update_policy(
        &self,
        id: PolicyId,
        policy: NewPolicy,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<Policy>> + Send;

    /// Soft-deletes an active policy, revoking the tokens of its users, directly or through a
    /// role (D39).
    fn delete_policy(&self, id: PolicyId, ctx: WriteContext) -> impl Future<Output = StoreResult<()>> + Send;

    /// Makes a deleted policy active again, if its name is free; its permissions are a grant
    /// checked against `ctx.authority` (D38).
    fn restore_policy(&self, id: PolicyId, ctx: WriteContext) -> impl Future<Output = StoreResult<Policy>> + Send;

    /// Adds an existing permission to an active policy; adding twice is harmless. The policy's
    /// permissions after the write are a grant checked against `ctx.authority` (D38).
    fn add_policy_permission(
        &self,
        policy_id: PolicyId,
        permission_id: PermissionId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;

    /// Removes a permission from an active policy, revoking the tokens of its users, directly
    /// or through a role (D39); removing what is absent is harmless and revokes nothing.
    fn remove_policy_permission(
        &self,
        policy_id: PolicyId,
        permission_id: PermissionId,
        ctx: WriteContext,
    ) -> impl Future<Output = StoreResult<()>> + Send;
}

/// What a policy is attached to directly (D19): a user, or a role and through it its users.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyHolder {
    /// A user.
    User(UserId),
    /// A role.
    Role(RoleId),
}

impl PolicyHolder {
    /// The kind of record the holder is, as a missing record and the audit log name it.
    pub fn entity(self) -> Entity {
        match self {
            PolicyHolder::User(_) => Entity::User,
            PolicyHolder::Role(_) => Entity::Role,
        }
    }

    /// The holder's id.
    pub fn id(self) -> i64 {
        match self {
            PolicyHolder::User(id) => id.get(),
            PolicyHolder::Role(id) => id.get(),
        }
    }
}
