//! `GET /api/permissions` (spec, Permissions; D27): the seeded permissions, read-only.

use pharmapay_core::Action::Read;
use pharmapay_core::Collection::Permission;
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::{Route, each};
use crate::app::needs;

/// The permission routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    vec![Route::get("/api/permissions", needs(Permission, Read), |call| {
        Box::pin(call.read(PharmaPay::list_permissions, each(PermissionDto::from)))
    })]
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
