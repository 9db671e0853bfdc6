//! `/api/roles` (spec, Roles; D17-D19): roles and the policies attached to them, their body,
//! their DTO and their operations.

use pharmapay_core::Action::{Create, Delete, Update};
use pharmapay_core::Collection::Role;
use pharmapay_core::domain::NewRole;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::text::{NAME_MAX, TEXT_MAX};
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::{Route, each};
use crate::app::{Guard, needs};
use crate::decode::{Slot, bodies};
use crate::dto::instant;
use crate::openapi::{Crud, Operation, describe, no_content, path_id, schema};

/// The role routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![
        Route::get("/api/roles", Guard::Token, list, |call| {
            Box::pin(call.read(PharmaPay::list_roles, each(RoleDto::from)))
        }),
        Route::post("/api/roles", needs(Role, Create), create, |call| {
            Box::pin(call.create("roles", PharmaPay::create_role, |role| role.id.get(), RoleDto::from))
        }),
        Route::get("/api/roles/{id}", Guard::Token, get, |call| {
            Box::pin(call.by_id(PharmaPay::get_role, RoleDto::from))
        }),
        Route::put("/api/roles/{id}", needs(Role, Update), update, |call| {
            Box::pin(call.replace(PharmaPay::update_role, RoleDto::from))
        }),
        Route::delete("/api/roles/{id}", needs(Role, Delete), delete, |call| {
            Box::pin(call.delete(PharmaPay::delete_role))
        }),
        Route::post("/api/roles/{id}/restore", needs(Role, Update), restore, |call| {
            Box::pin(call.by_id(PharmaPay::restore_role, RoleDto::from))
        }),
        Route::post("/api/roles/{id}/policies/{policyId}", needs(Role, Update), attach_policy, |call| {
            Box::pin(call.link("policyId", PharmaPay::attach_role_policy))
        }),
        Route::delete("/api/roles/{id}/policies/{policyId}", needs(Role, Update), detach_policy, |call| {
            Box::pin(call.link("policyId", PharmaPay::detach_role_policy))
        }),
    ]
}

const CRUD: Crud = Crud { base: "/api/roles", tag: "Roles", singular: "role", restore_parent: None };

fn list() -> Operation {
    CRUD.list::<RoleDto>(". Active and inactive roles (D17).", "Every role.")
}

fn create() -> Operation {
    CRUD.create_after::<RoleBody, RoleDto>(". The new role has `isSystem = false`. A taken name is a 409 (D5).")
}

fn get() -> Operation {
    CRUD.get_described::<RoleDto>(". 404 when missing or soft-deleted (D17).")
}

fn update() -> Operation {
    CRUD.update_described::<RoleBody, RoleDto>(
        ". Changes name and description; `isSystem` and `isActive` cannot change here. System roles cannot be renamed \
         (400); a taken name is a 409 (D5).",
    )
    .with_summary("Update a role")
}

fn delete() -> Operation {
    CRUD.delete_described(
        ". Soft delete; a system role answers 400. The optional body `{reason}` is kept in the audit log (D16).",
    )
}

fn restore() -> Operation {
    CRUD.restore_described::<RoleDto>(
        ". Turns a soft-deleted role active again (D15). 404 when missing or already active.",
    )
}

fn attach_policy() -> Operation {
    Operation::new(
        "attachRolePolicy",
        "Roles",
        "Attach a policy to a role",
        ". 404 for a missing role or policy. Takes effect in tokens issued afterwards (D19).",
    )
    .path_parameter(CRUD.id())
    .path_parameter(path_id("policyId", "Policy id."))
    .response("204", no_content("Attached; no body."))
    .errors(&[400, 401, 403, 404, 503])
}

fn detach_policy() -> Operation {
    Operation::new("detachRolePolicy", "Roles", "Detach a policy from a role", ". 404 for a missing role.")
        .path_parameter(CRUD.id())
        .path_parameter(path_id("policyId", "Policy id."))
        .response("204", no_content("Detached; no body."))
        .errors(&[400, 401, 403, 404, 503])
}

bodies! {
    /// Role create and update: `{name, description}`.
    RoleBody => NewRole as "RoleInput":
        "Role create and update. `isSystem` and `isActive` cannot be set here. Unknown fields are ignored." {
        name: Slot => string("name")
            as schema::name(
                "Name, unique among all roles, compared case-insensitively (D4); a taken name is a 409 (D5). System \
                 roles cannot be renamed (400).",
            ),
        description: Slot => string_or_empty("description")
            as schema::free_text("Description; absent, null or blank means empty."),
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

describe! {
    RoleDto as "Role": "RoleDto." {
        id: schema::id("Role id."),
        name: schema::text(NAME_MAX, "Name."),
        description: schema::text(TEXT_MAX, "Description (may be empty)."),
        is_system: schema::boolean("True only for the seeded `Admin` and `Pharmacist` roles."),
        is_active: schema::boolean("False once soft-deleted."),
        created_at: schema::instant("When created."),
    }
}
