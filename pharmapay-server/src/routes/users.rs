//! `/api/users` (spec, Users; D17-D20): user accounts, the policies attached to them and the
//! caller's permissions, their bodies, their DTO and their operations.

use pharmapay_core::Collection::User;
use pharmapay_core::access::user::{NewUser, UserUpdate};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::onboarding::OnboardingUserDto;
use super::permissions::{PermissionDto, permission_count};
use super::policies::PolicyDto;
use super::{Route, each, kept_routes};
use crate::decode::{List, Slot, bodies};
use crate::dto::instant;
use crate::guard::Guard;
use crate::openapi::{Crud, Link, Operation, describe, flatten, schema, schema_ref};

/// The user routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    kept_routes! {
        "/api/users" as "users", User, reads: Guard::Token, dto: UserDto;
        list: |call| Box::pin(call.read(PharmaPay::list_users, each(UserDto::from)));
        engine: create_user, get_user, update_user, delete_user, restore_user;
        before: [Route::get("/api/users/me/permissions", Guard::Token, my_permissions, |call| {
            Box::pin(call.read(PharmaPay::my_permissions, each(PermissionDto::from)))
        })];
        after: [
            Route::get("/api/users/{id}/policies", Guard::Token, policies, |call| {
                Box::pin(call.by_id(PharmaPay::list_user_policies, each(PolicyDto::from)))
            }),
        ];
        links: "policies/{policyId}" as "policyId", attach_user_policy => attach_policy,
            detach_user_policy => detach_policy;
    }
}

const CRUD: Crud = Crud { base: "/api/users", tag: "Users", singular: "user", restore_parent: None };

fn list() -> Operation {
    CRUD.list::<UserDto>(". Active users only (D17).", "Active users.")
}

fn create() -> Operation {
    CRUD.create_after::<NewUserBody, UserDto>(". The role must exist and be active (400); a taken email is a 409 (D5).")
}

fn my_permissions() -> Operation {
    CRUD.operation(
        "getMyPermissions",
        "The caller's permissions",
        ". The caller's permissions resolved from the active policies of their active role and their directly attached \
         active policies, deduplicated and sorted (D19). For an admin: \
         `[{\"id\":0,\"collection\":\"*\",\"action\":\"*\",\"description\":\"Full access\"}]`.",
    )
    .ok("The caller's permissions.", schema::array(schema_ref::<PermissionDto>()).with("maxItems", permission_count()))
    .errors(&[401, 503])
}

fn get() -> Operation {
    CRUD.get::<UserDto>("")
}

fn update() -> Operation {
    CRUD.update_described::<UserUpdateBody, UserDto>(
        ". Replaces names, email and role; a taken email is a 409 (D5); the last active admin cannot be moved off the \
         Admin role (400, D18).",
    )
}

fn delete() -> Operation {
    CRUD.delete_described(
        ". Soft delete; the user's tokens stop working (D20). A user cannot delete themself and the last active admin \
         cannot be deleted (400, D18). The optional body `{reason}` is kept in the audit log (D16).",
    )
}

fn restore() -> Operation {
    CRUD.restore_described::<UserDto>(
        ". Turns a soft-deleted user active again (D15). 404 when missing or already active; 409 when the email is now \
         taken; 400 while the user's role is inactive.",
    )
    .errors(&[409])
}

fn policies() -> Operation {
    CRUD.operation(
        "listUserPolicies",
        "Policies attached to a user",
        ". The policies attached directly to the user (D19). 404 when the user is missing or soft-deleted.",
    )
    .path_parameter(CRUD.id())
    .ok("The user's policies.", schema::array(schema_ref::<PolicyDto>()))
    .errors(&[400, 401, 404, 503])
}

fn attach_policy() -> Operation {
    CRUD.link(
        Link::Attach,
        "policyId",
        " (D19). 404 for a missing user or policy. Takes effect in tokens issued afterwards.",
    )
}

fn detach_policy() -> Operation {
    CRUD.link(Link::Detach, "policyId", " (D19). 404 for a missing user.")
}

/// What the user bodies say of an email: unique among active users (D4, D5).
const UNIQUE_EMAIL: &str = "Email, unique among active users (D4); a taken email is a 409 (D5).";

bodies! {
    /// User create (spec: all fields required).
    NewUserBody => NewUser as "NewUser": "User create; every field required. Unknown fields are ignored." {
        first_name: Slot => string("firstName") as schema::name("First name."),
        last_name: Slot => string("lastName") as schema::name("Last name."),
        email: Slot => string("email") as schema::email(UNIQUE_EMAIL),
        password: Slot => password("password") as "Password.",
        role_id: Slot => id("roleId") as "An existing active role; otherwise 400.",
        #[serde(default, deserialize_with = "crate::decode::present", skip_serializing_if = "Option::is_none")]
        branch_ids: List => scope("branchIds") as BRANCH_IDS_CREATE,
    }

    /// User replace (spec: firstName, lastName, email, roleId).
    UserUpdateBody => UserUpdate as "UserUpdate":
        "User replacement: names, email and role (the password changes only through `PUT /api/profile/password`). \
         The last active admin cannot be moved off the Admin role (400, D18). Unknown fields are ignored." {
        first_name: Slot => string("firstName") as schema::name("First name."),
        last_name: Slot => string("lastName") as schema::name("Last name."),
        email: Slot => string("email") as schema::email(UNIQUE_EMAIL),
        role_id: Slot => id("roleId") as "An existing active role; otherwise 400.",
        #[serde(default, deserialize_with = "crate::decode::present", skip_serializing_if = "Option::is_none")]
        branch_ids: List => scope("branchIds") as BRANCH_IDS_UPDATE,
    }
}

/// What a user create's `branchIds` is (D49).
const BRANCH_IDS_CREATE: &str = "The branches the user sees and writes in (D49): `null` for every branch, or a list \
     of active branch ids, each once (else 400). A user with the Admin role always has `null` (a list is a 400). \
     Omitted: the caller's own branches. A caller who does not hold every branch cannot give more than they hold \
     (403 naming the branch codes missing, or all branches).";

/// What a user replacement's `branchIds` is (D49).
const BRANCH_IDS_UPDATE: &str = "The branches the user sees and writes in (D49): `null` for every branch, or a list \
     of active branch ids, each once (a branch the user already holds may stay though deleted; else 400). Omitted: \
     unchanged, or `null` when the role becomes Admin. Narrowing them makes the user's older tokens stop working \
     at once (D39); widening takes effect at their next sign-in. A caller who does not hold every branch cannot \
     give more than they hold, nor change a user who holds more (403).";

/// `UserDto`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserDto {
    #[serde(flatten)]
    user: OnboardingUserDto,
    is_active: bool,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
}

impl From<pharmapay_core::access::user::User> for UserDto {
    fn from(user: pharmapay_core::access::user::User) -> Self {
        let (is_active, created_at) = (user.is_active, user.created_at);
        Self { user: OnboardingUserDto::from(user), is_active, created_at }
    }
}

describe! {
    UserDto as "User": "UserDto; the password hash is never returned." {
        user: flatten::<OnboardingUserDto>(),
        is_active: schema::boolean("False once soft-deleted."),
        created_at: schema::instant("When created."),
    }
}
