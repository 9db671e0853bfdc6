//! `/api/policies` (spec, Policies; D17, D19, D38): named sets of permissions, their body, their
//! DTOs and their operations.

use pharmapay_core::Action::{Create, Delete, Read, Update};
use pharmapay_core::Collection::Policy;
use pharmapay_core::domain::NewPolicy;
use pharmapay_core::domain::policy::MAX_POLICY_PERMISSIONS;
use pharmapay_core::text::{NAME_MAX, TEXT_MAX};
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::permissions::{action_names, collection_names, permission_count};
use super::{Route, each};
use crate::app::needs;
use crate::decode::{List, ReasonBody, Slot, bodies};
use crate::openapi::{
    IDEMPOTENCY_KEY, Json, Operation, created, describe, get_link, id_links, json_response, no_content, object,
    path_id, restore_link, schema, schema_ref,
};

/// The policy routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/policies", needs(Policy, Read), list, |call| {
            Box::pin(call.read(PharmaPay::list_policies, each(PolicyDto::from)))
        }),
        Route::post("/api/policies", needs(Policy, Create), create, |call| {
            Box::pin(call.create("policies", PharmaPay::create_policy, |policy| policy.id.get(), PolicyDto::from))
        }),
        Route::get("/api/policies/{id}", needs(Policy, Read), get, |call| {
            Box::pin(call.by_id(PharmaPay::get_policy, PolicyDto::from))
        }),
        Route::put("/api/policies/{id}", needs(Policy, Update), update, |call| {
            Box::pin(call.replace(PharmaPay::update_policy, PolicyDto::from))
        }),
        Route::delete("/api/policies/{id}", needs(Policy, Delete), delete, |call| {
            Box::pin(call.delete(PharmaPay::delete_policy))
        }),
        Route::post("/api/policies/{id}/restore", needs(Policy, Update), restore, |call| {
            Box::pin(call.by_id(PharmaPay::restore_policy, PolicyDto::from))
        }),
        Route::post("/api/policies/{id}/permissions/{permissionId}", needs(Policy, Update), add_permission, |call| {
            Box::pin(call.link("permissionId", PharmaPay::add_policy_permission))
        }),
        Route::delete(
            "/api/policies/{id}/permissions/{permissionId}",
            needs(Policy, Update),
            remove_permission,
            |call| Box::pin(call.link("permissionId", PharmaPay::remove_policy_permission)),
        ),
    ]
}

fn id() -> Json {
    path_id("id", "Policy id.")
}

fn list() -> Operation {
    Operation::new("listPolicies", "Policies", "List policies", ". Active policies only (D17).")
        .ok("Active policies.", schema::array(schema_ref::<PolicyDto>()))
        .errors(&[401, 403, 503])
}

fn create() -> Operation {
    Operation::new(
        "createPolicy",
        "Policies",
        "Create a policy",
        ". Unknown permission ids are a 400; a taken name is a 409 (D5). Answers 201 with `Location: \
         /api/policies/<id>` (D9). Accepts an `Idempotency-Key` (D23).",
    )
    .parameter(IDEMPOTENCY_KEY)
    .body::<PolicyBody>()
    .response("201", created("The policy was created.", schema_ref::<PolicyDto>(), id_links("Policy")))
    .errors(&[400, 401, 403, 409, 413, 415, 422, 503])
}

fn get() -> Operation {
    Operation::new(
        "getPolicy",
        "Policies",
        "Get a policy",
        ". With its full permission list; 404 when missing or soft-deleted.",
    )
    .path_parameter(id())
    .ok("The policy.", schema_ref::<PolicyDto>())
    .errors(&[400, 401, 403, 404, 503])
}

fn update() -> Operation {
    Operation::new(
        "updatePolicy",
        "Policies",
        "Replace a policy",
        ". Replaces name, description and permission list. Unknown permission ids are a 400; a taken name is a 409 \
         (D5).",
    )
    .path_parameter(id())
    .body::<PolicyBody>()
    .ok("The updated policy.", schema_ref::<PolicyDto>())
    .errors(&[400, 401, 403, 404, 409, 413, 415, 503])
}

fn delete() -> Operation {
    Operation::new(
        "deletePolicy",
        "Policies",
        "Delete a policy",
        ". Soft delete; it stops granting permissions to new tokens (D19). The optional body `{reason}` is kept in the \
         audit log (D16).",
    )
    .path_parameter(id())
    .optional_body::<ReasonBody>()
    .response("204", no_content("Deleted; no body.").with("links", restore_link("Policy")))
    .errors(&[400, 401, 403, 404, 413, 415, 503])
}

fn restore() -> Operation {
    Operation::new(
        "restorePolicy",
        "Policies",
        "Restore a deleted policy",
        ". Turns a soft-deleted policy active again (D15). 404 when missing or already active; 409 when its name is \
         now taken.",
    )
    .path_parameter(id())
    .response("200", json_response("The restored policy.", schema_ref::<PolicyDto>()).with("links", get_link("Policy")))
    .errors(&[400, 401, 403, 404, 409, 503])
}

fn add_permission() -> Operation {
    Operation::new(
        "addPolicyPermission",
        "Policies",
        "Add a permission to a policy",
        ". 404 for a missing policy or permission.",
    )
    .path_parameter(id())
    .path_parameter(path_id("permissionId", "Permission id."))
    .response("204", no_content("Added; no body."))
    .errors(&[400, 401, 403, 404, 503])
}

fn remove_permission() -> Operation {
    Operation::new(
        "removePolicyPermission",
        "Policies",
        "Remove a permission from a policy",
        ". 404 for a missing policy.",
    )
    .path_parameter(id())
    .path_parameter(path_id("permissionId", "Permission id."))
    .response("204", no_content("Removed; no body."))
    .errors(&[400, 401, 403, 404, 503])
}

bodies! {
    /// Policy create and replace: `{name, description, permissionIds}`.
    PolicyBody => NewPolicy as "PolicyInput": "Policy create and full replacement. Unknown fields are ignored." {
        name: Slot => string("name")
            as schema::name(
                "Name, unique among active policies, compared case-insensitively (D4); a taken name is a 409 (D5).",
            ),
        description: Slot => string_or_empty("description")
            as schema::free_text("Description; absent, null or blank means empty."),
        permission_ids: List => ids("permissionIds") as ("Permission id.", permission_ids()),
    }
}

/// `permissionIds`: at most [`MAX_POLICY_PERMISSIONS`] ids.
fn permission_ids() -> Json {
    object! {
        "maxItems": MAX_POLICY_PERMISSIONS,
        "description": "The policy's permissions; each must exist (else 400). Duplicates are dropped; absent or null \
             means none.",
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

describe! {
    PolicyDto as "Policy": "PolicyDto." {
        id: schema::id("Policy id."),
        name: schema::text(NAME_MAX, "Name."),
        description: schema::text(TEXT_MAX, "Description (may be empty)."),
        is_active: schema::boolean("False once soft-deleted."),
        permissions: schema::array(schema_ref::<PolicyPermissionDto>())
            .with("maxItems", permission_count())
            .with("description", "Its permissions."),
    }
}

describe! {
    PolicyPermissionDto as "PolicyPermission": "A permission inside a policy." {
        id: schema::id("Permission id."),
        collection: schema::one_of(&collection_names(), "Collection."),
        action: schema::one_of(&action_names(), "Action."),
    }
}
