//! `GET /api/permissions` (spec, Permissions; D27): the seeded permissions, read-only, and
//! their DTO.

use pharmapay_core::Action::Read;
use pharmapay_core::Collection::Permission;
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::{Route, each};
use crate::app::needs;
use crate::openapi::{Operation, describe, object, schema, schema_ref};

/// The permission routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![Route::get("/api/permissions", needs(Permission, Read), list, |call| {
        Box::pin(call.read(PharmaPay::list_permissions, each(PermissionDto::from)))
    })]
}

fn list() -> Operation {
    Operation::new("listPermissions", "Permissions", "List permissions", ". Every seeded permission (D27); read-only.")
        .ok("Every permission.", schema::array(schema_ref::<PermissionDto>()))
        .errors(&[401, 403, 503])
}

/// A permission.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionDto {
    id: i64,
    collection: String,
    action: String,
    description: String,
}

impl From<pharmapay_core::access::Permission> for PermissionDto {
    fn from(permission: pharmapay_core::access::Permission) -> Self {
        Self {
            id: permission.id.get(),
            collection: permission.collection,
            action: permission.action,
            description: permission.description,
        }
    }
}

describe! {
    PermissionDto as "Permission": "A permission, written `Collection:Action`. Read-only; seeded (D27)." {
        id: object! {
            "type": "integer",
            "minimum": 0,
            "description": "Permission id; 0 only for the admin's full-access entry.",
        },
        collection: schema::text("Collection, e.g. `Vendor`; `*` in the admin's full-access entry."),
        action: schema::text("Action, e.g. `Read`; `*` in the admin's full-access entry."),
        description: schema::text("Description."),
    }
}
