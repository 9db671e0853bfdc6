//! `/api/policies` (spec, Policies; D17, D19, D38): named sets of permissions, their body and
//! their DTO.

use pharmapay_core::Action::{Create, Delete, Read, Update};
use pharmapay_core::Collection::Policy;
use pharmapay_core::domain::NewPolicy;
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::{Route, each};
use crate::app::needs;
use crate::decode::{List, Slot, bodies};

/// The policy routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/policies", needs(Policy, Read), |call| {
            Box::pin(call.read(PharmaPay::list_policies, each(PolicyDto::from)))
        }),
        Route::post("/api/policies", needs(Policy, Create), |call| {
            Box::pin(call.create("policies", PharmaPay::create_policy, |policy| policy.id.get(), PolicyDto::from))
        }),
        Route::get("/api/policies/{id}", needs(Policy, Read), |call| {
            Box::pin(call.by_id(PharmaPay::get_policy, PolicyDto::from))
        }),
        Route::put("/api/policies/{id}", needs(Policy, Update), |call| {
            Box::pin(call.replace(PharmaPay::update_policy, PolicyDto::from))
        }),
        Route::delete("/api/policies/{id}", needs(Policy, Delete), |call| {
            Box::pin(call.delete(PharmaPay::delete_policy))
        }),
        Route::post("/api/policies/{id}/restore", needs(Policy, Update), |call| {
            Box::pin(call.by_id(PharmaPay::restore_policy, PolicyDto::from))
        }),
        Route::post("/api/policies/{id}/permissions/{permissionId}", needs(Policy, Update), |call| {
            Box::pin(call.link("permissionId", PharmaPay::add_policy_permission))
        }),
        Route::delete("/api/policies/{id}/permissions/{permissionId}", needs(Policy, Update), |call| {
            Box::pin(call.link("permissionId", PharmaPay::remove_policy_permission))
        }),
    ]
}

bodies! {
    /// Policy create and replace: `{name, description, permissionIds}`.
    PolicyBody => NewPolicy {
        name: Slot => string("name"),
        description: Slot => string_or_empty("description"),
        permission_ids: List => ids("permissionIds"),
    }
}

/// `PolicyDto`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyDto {
    id: i64,
    name: String,
    description: String,
    is_active: bool,
    permissions: Vec<PolicyPermissionDto>,
}

impl From<pharmapay_core::domain::Policy> for PolicyDto {
    fn from(policy: pharmapay_core::domain::Policy) -> Self {
        Self {
            id: policy.id.get(),
            name: policy.name,
            description: policy.description,
            is_active: policy.is_active,
            permissions: policy
                .permissions
                .into_iter()
                .map(|p| PolicyPermissionDto { id: p.id.get(), collection: p.collection, action: p.action })
                .collect(),
        }
    }
}

/// A permission inside a policy: id, collection, action (spec).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyPermissionDto {
    id: i64,
    collection: String,
    action: String,
}
