//! `/api/users` (spec, Users; D17-D20): user accounts, the policies attached to them and the
//! caller's permissions, their bodies and their DTO.

use pharmapay_core::Action::{Create, Delete, Update};
use pharmapay_core::Collection::User;
use pharmapay_core::domain::{NewUser, UserUpdate};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::permissions::PermissionDto;
use super::policies::PolicyDto;
use super::{Route, each};
use crate::app::{Guard, needs};
use crate::decode::{Slot, bodies};
use crate::dto::instant;

/// The user routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/users", Guard::Token, |call| Box::pin(call.read(PharmaPay::list_users, each(UserDto::from)))),
        Route::post("/api/users", needs(User, Create), |call| {
            Box::pin(call.create("users", PharmaPay::create_user, |user| user.id.get(), UserDto::from))
        }),
        Route::get("/api/users/me/permissions", Guard::Token, |call| {
            Box::pin(call.read(PharmaPay::my_permissions, each(PermissionDto::from)))
        }),
        Route::get("/api/users/{id}", Guard::Token, |call| Box::pin(call.by_id(PharmaPay::get_user, UserDto::from))),
        Route::put("/api/users/{id}", needs(User, Update), |call| {
            Box::pin(call.replace(PharmaPay::update_user, UserDto::from))
        }),
        Route::delete("/api/users/{id}", needs(User, Delete), |call| Box::pin(call.delete(PharmaPay::delete_user))),
        Route::post("/api/users/{id}/restore", needs(User, Update), |call| {
            Box::pin(call.by_id(PharmaPay::restore_user, UserDto::from))
        }),
        Route::get("/api/users/{id}/policies", Guard::Token, |call| {
            Box::pin(call.by_id(PharmaPay::list_user_policies, each(PolicyDto::from)))
        }),
        Route::post("/api/users/{id}/policies/{policyId}", needs(User, Update), |call| {
            Box::pin(call.link("policyId", PharmaPay::attach_user_policy))
        }),
        Route::delete("/api/users/{id}/policies/{policyId}", needs(User, Update), |call| {
            Box::pin(call.link("policyId", PharmaPay::detach_user_policy))
        }),
    ]
}

bodies! {
    /// User create (spec: all fields required).
    NewUserBody => NewUser {
        first_name: Slot => string("firstName"),
        last_name: Slot => string("lastName"),
        email: Slot => string("email"),
        password: Slot => password("password"),
        role_id: Slot => id("roleId"),
    }

    /// User replace (spec: firstName, lastName, email, roleId).
    UserUpdateBody => UserUpdate {
        first_name: Slot => string("firstName"),
        last_name: Slot => string("lastName"),
        email: Slot => string("email"),
        role_id: Slot => id("roleId"),
    }
}

/// `UserDto`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserDto {
    id: i64,
    first_name: String,
    last_name: String,
    email: String,
    role_id: i64,
    is_active: bool,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
}

impl From<pharmapay_core::domain::User> for UserDto {
    fn from(user: pharmapay_core::domain::User) -> Self {
        Self {
            id: user.id.get(),
            first_name: user.first_name,
            last_name: user.last_name,
            email: user.email,
            role_id: user.role_id.get(),
            is_active: user.is_active,
            created_at: user.created_at,
        }
    }
}
