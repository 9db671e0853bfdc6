//! `/api/roles` (spec, Roles; D17-D19): roles and the policies attached to them, their body,
//! their DTO and their operations.

use pharmapay_core::Collection::Role;
use pharmapay_core::access::role::NewRole;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::text::{NAME_MAX, TEXT_MAX};
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::{Route, each, kept_routes};
use crate::decode::{Slot, bodies};
use crate::dto::instant;
use crate::guard::Guard;
use crate::openapi::{Crud, Link, Operation, describe, schema};

/// The role routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    kept_routes! {
        "/api/roles" as "roles", Role, reads: Guard::Token, dto: RoleDto;
        list: |call| Box::pin(call.read(PharmaPay::list_roles, each(RoleDto::from)));
        engine: create_role, get_role, update_role, delete_role, restore_role;
        links: "policies/{policyId}" as "policyId", attach_role_policy => attach_policy,
            detach_role_policy => detach_policy;
    }
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
    CRUD.link(
        Link::Attach,
        "policyId",
        ". 404 for a missing role or policy. Takes effect in tokens issued afterwards (D19).",
    )
}

fn detach_policy() -> Operation {
    CRUD.link(Link::Detach, "policyId", ". 404 for a missing role.")
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

impl From<pharmapay_core::access::role::Role> for RoleDto {
    fn from(role: pharmapay_core::access::role::Role) -> Self {
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
