//! `/api/policies` (spec, Policies; D17, D19, D38): named sets of permissions, their body, their
//! DTOs and their operations.

use pharmapay_core::Action::Read;
use pharmapay_core::Collection::Policy;
use pharmapay_core::access::policy::MAX_POLICY_PERMISSIONS;
use pharmapay_core::access::policy::NewPolicy;
use pharmapay_core::text::{NAME_MAX, TEXT_MAX};
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::permissions::{action_names, collection_names, permission_count};
use super::{Route, each, kept_routes};
use crate::decode::{List, Slot, bodies};
use crate::guard::needs;
use crate::openapi::{Crud, Json, Link, Operation, describe, object, schema, schema_ref};

/// The policy routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    kept_routes! {
        "/api/policies" as "policies", Policy, reads: needs(Policy, Read), dto: PolicyDto;
        list: |call| Box::pin(call.read(PharmaPay::list_policies, each(PolicyDto::from)));
        engine: create_policy, get_policy, update_policy, delete_policy, restore_policy;
        links: "permissions/{permissionId}" as "permissionId", add_policy_permission => add_permission,
            remove_policy_permission => remove_permission;
    }
}

const CRUD: Crud = Crud { base: "/api/policies", tag: "Policies", singular: "policy", restore_parent: None };

fn list() -> Operation {
    CRUD.list::<PolicyDto>(". Active policies only (D17).", "Active policies.")
}

fn create() -> Operation {
    CRUD.create_after::<PolicyBody, PolicyDto>(". Unknown permission ids are a 400; a taken name is a 409 (D5).")
}

fn get() -> Operation {
    CRUD.get_described::<PolicyDto>(". With its full permission list; 404 when missing or soft-deleted.")
}

fn update() -> Operation {
    CRUD.update_described::<PolicyBody, PolicyDto>(
        ". Replaces name, description and permission list. Unknown permission ids are a 400; a taken name is a 409 \
         (D5).",
    )
}

fn delete() -> Operation {
    CRUD.delete_described(
        ". Soft delete; it stops granting permissions to new tokens (D19). The optional body `{reason}` is kept in the \
         audit log (D16).",
    )
}

fn restore() -> Operation {
    CRUD.restore_described::<PolicyDto>(
        ". Turns a soft-deleted policy active again (D15). 404 when missing or already active; 409 when its name is \
         now taken.",
    )
    .errors(&[409])
}

fn add_permission() -> Operation {
    CRUD.link(Link::Add, "permissionId", ". 404 for a missing policy or permission.")
}

fn remove_permission() -> Operation {
    CRUD.link(Link::Remove, "permissionId", ". 404 for a missing policy.")
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

impl From<pharmapay_core::access::policy::Policy> for PolicyDto {
    fn from(policy: pharmapay_core::access::policy::Policy) -> Self {
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
