//! `GET /api/permissions` (spec, Permissions; D27): the seeded permissions, read-only, and
//! their DTO.

use pharmapay_core::Action::Read;
use pharmapay_core::Collection::Permission;
use pharmapay_core::{Action, Collection, PharmaPay, Store, seed};
use serde::Serialize;

use super::{Route, each};
use crate::guard::needs;
use crate::openapi::schema::{self, names};
use crate::openapi::{Operation, Tag, describe, schema_ref};

/// The permission routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![Route::get("/api/permissions", needs(Permission, Read), list, |call| {
        Box::pin(call.read(PharmaPay::list_permissions, each(PermissionDto::from)))
    })]
}

/// The tag these routes' operations are listed under.
const TAG: Tag = Tag("Permissions");

fn list() -> Operation {
    TAG.operation("listPermissions", "List permissions", ". Every seeded permission (D27); read-only.")
        .ok("Every permission.", schema::array(schema_ref::<PermissionDto>()).with("maxItems", permission_count()))
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
        id: schema::id("Permission id; 0 only for the admin's full-access entry.").with("minimum", 0),
        collection: schema::one_of(
            &with_wildcard(collection_names()),
            "Collection, e.g. `Vendor`; `*` in the admin's full-access entry.",
        ),
        action: schema::one_of(&with_wildcard(action_names()), "Action, e.g. `Read`; `*` in the admin's full-access entry."),
        description: schema::text(longest_description(), "Description."),
    }
}

/// How many permissions there are: the seeded ones, which are never added to (D27). No list of
/// permissions is longer.
pub fn permission_count() -> usize {
    seed::permissions().len()
}

/// The name of every collection permissions are written with.
pub fn collection_names() -> Vec<&'static str> {
    names(Collection::ALL, Collection::name)
}

/// The name of every action permissions are written with.
pub fn action_names() -> Vec<&'static str> {
    names(&Action::ALL, Action::name)
}

/// `names` and the admin's wildcard, `*` (D19).
fn with_wildcard(mut names: Vec<&'static str>) -> Vec<&'static str> {
    names.push("*");
    names
}

/// The longest description a permission has: a seeded one's or the admin's entry's.
fn longest_description() -> usize {
    seed::permissions()
        .into_iter()
        .map(|permission| permission.description)
        .chain([pharmapay_core::access::Permission::full_access().description])
        .map(|description| description.chars().count())
        .max()
        .unwrap_or(0)
}

/// The longest `Collection:Action` a caller's resolved permissions hold (D19): a seeded
/// permission's or the admin's `*:*`.
pub fn longest_code() -> usize {
    seed::permissions()
        .into_iter()
        .map(|permission| permission.access.to_string())
        .chain(["*:*".to_owned()])
        .map(|code| code.chars().count())
        .max()
        .unwrap_or(0)
}
