//! `/api/roles` (spec, Roles; D17-D19): roles and the policies attached to them, their body and
//! their DTO.

use pharmapay_core::Action::{Create, Delete, Update};
use pharmapay_core::Collection::Role;
use pharmapay_core::domain::NewRole;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::{Route, each};
use crate::app::{Guard, needs};
use crate::decode::{Slot, bodies};
use crate::dto::instant;

/// The role routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/roles", Guard::Token, |call| Box::pin(call.read(PharmaPay::list_roles, each(RoleDto::from)))),
        Route::post("/api/roles", needs(Role, Create), |call| {
            Box::pin(call.create("roles", PharmaPay::create_role, |role| role.id.get(), RoleDto::from))
        }),
        Route::get("/api/roles/{id}", Guard::Token, |call| Box::pin(call.by_id(PharmaPay::get_role, RoleDto::from))),
        Route::put("/api/roles/{id}", needs(Role, Update), |call| {
            Box::pin(call.replace(PharmaPay::update_role, RoleDto::from))
        }),
        Route::delete("/api/roles/{id}", needs(Role, Delete), |call| Box::pin(call.delete(PharmaPay::delete_role))),
        Route::post("/api/roles/{id}/restore", needs(Role, Update), |call| {
            Box::pin(call.by_id(PharmaPay::restore_role, RoleDto::from))
        }),
        Route::post("/api/roles/{id}/policies/{policyId}", needs(Role, Update), |call| {
            Box::pin(call.link("policyId", PharmaPay::attach_role_policy))
        }),
        Route::delete("/api/roles/{id}/policies/{policyId}", needs(Role, Update), |call| {
            Box::pin(call.link("policyId", PharmaPay::detach_role_policy))
        }),
    ]
}

bodies! {
    /// Role create and update: `{name, description}`.
    RoleBody => NewRole {
        name: Slot => string("name"),
        description: Slot => string_or_empty("description"),
    }
}

/// `RoleDto`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoleDto {
    id: i64,
    name: String,
    description: String,
    is_system: bool,
    is_active: bool,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
}

impl From<pharmapay_core::domain::Role> for RoleDto {
    fn from(role: pharmapay_core::domain::Role) -> Self {
        Self {
            id: role.id.get(),
            name: role.name,
            description: role.description,
            is_system: role.is_system,
            is_active: role.is_active,
            created_at: role.created_at,
        }
    }
}
