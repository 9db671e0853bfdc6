//! `/api/branches` (D49): the chain's branches, the head office first, their body, their DTO
//! and their operations.

use pharmapay_core::Action::Read;
use pharmapay_core::Collection::Branch;
use pharmapay_core::branches::{BRANCH_CODE_MAX, NewBranch};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::text::{CODE_MAX, NAME_MAX, TEXT_MAX};
use pharmapay_core::vendors::gstin::GSTIN_LEN;
use pharmapay_core::{PharmaPay, Store};
use serde::Serialize;

use super::{Route, each, kept_routes};
use crate::decode::{Slot, bodies};
use crate::dto::instant;
use crate::guard::needs;
use crate::openapi::{Crud, Json, Operation, describe, object, schema};

/// The branch routes.
pub fn routes<S: Store>() -> Vec<Route<S>> {
    kept_routes! {
        "/api/branches" as "branches", Branch, reads: needs(Branch, Read), dto: BranchDto;
        list: |call| Box::pin(call.read(PharmaPay::list_branches, each(BranchDto::from)));
        engine: create_branch, get_branch, update_branch, delete_branch, restore_branch;
    }
}

const CRUD: Crud = Crud { base: "/api/branches", tag: "Branches", singular: "branch", restore_parent: None };

fn list() -> Operation {
    CRUD.list::<BranchDto>(
        ". The active branches, the head office first, then by code (D49); not paginated.",
        "Every active branch.",
    )
}

fn create() -> Operation {
    CRUD.create_after::<BranchBody, BranchDto>(
        ". The new branch is never the head office (D49). A code another active branch holds is a 409 (D5).",
    )
}

fn get() -> Operation {
    CRUD.get_described::<BranchDto>(". 404 when missing or soft-deleted (D49).")
}

fn update() -> Operation {
    CRUD.update_described::<BranchBody, BranchDto>(
        ". Replaces every field (D14); a code another active branch holds is a 409 (D5).",
    )
    .with_summary("Update a branch")
}

fn delete() -> Operation {
    CRUD.delete_described(
        ". Soft delete; its records stay. The head office (branch 1) answers 400. The optional body `{reason}` is \
         kept in the audit log (D16).",
    )
}

fn restore() -> Operation {
    CRUD.restore_described::<BranchDto>(
        ". Turns a soft-deleted branch active again (D15). 404 when missing or already active; 409 when another \
         active branch took its code meanwhile.",
    )
}

bodies! {
    /// Branch create and replace (D49).
    BranchBody => NewBranch as "BranchInput":
        "Branch create and full replacement (D14: omitted optional fields become empty). `isHeadOffice` and \
         `isActive` cannot be set here (D7). Unknown fields are ignored." {
        code: Slot => string("code") as branch_code(),
        name: Slot => string("name") as schema::name("Name."),
        gstin: Slot => optional_gstin("gstin"),
        address: Slot => optional_string("address") as schema::free_text("Postal address."),
        phone: Slot => optional_string("phone") as schema::code("Phone number."),
        drug_license_number: Slot => optional_string("drugLicenseNumber") as schema::code("Drug licence number."),
    }
}

/// `code` in a body: letters, digits and `-`, upper-cased, unique among active branches.
fn branch_code() -> Json {
    object! {
        "type": "string",
        "pattern": format!("^\\s*[A-Za-z0-9-]{{1,{BRANCH_CODE_MAX}}}\\s*$"),
        "description": format!(
            "1 to {BRANCH_CODE_MAX} letters, digits or `-` after trimming, kept upper-cased and unique among active \
             branches, compared upper-cased (D49); a taken code is a 409 (D5)."
        ),
    }
}

/// `BranchDto`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchDto {
    id: i64,
    code: String,
    name: String,
    gstin: Option<String>,
    address: Option<String>,
    phone: Option<String>,
    drug_license_number: Option<String>,
    is_head_office: bool,
    is_active: bool,
    #[serde(serialize_with = "instant")]
    created_at: Timestamp,
    #[serde(serialize_with = "instant")]
    updated_at: Timestamp,
}

impl From<pharmapay_core::branches::Branch> for BranchDto {
    fn from(branch: pharmapay_core::branches::Branch) -> Self {
        Self {
            id: branch.id.get(),
            is_head_office: branch.is_head_office(),
            code: branch.code,
            name: branch.name,
            gstin: branch.gstin,
            address: branch.address,
            phone: branch.phone,
            drug_license_number: branch.drug_license_number,
            is_active: branch.is_active,
            created_at: branch.created_at,
            updated_at: branch.updated_at,
        }
    }
}

describe! {
    BranchDto as "Branch": "BranchDto (D49)." {
        id: schema::id("Branch id; 1 is the head office."),
        code: schema::text(BRANCH_CODE_MAX, "Code, upper-cased, unique among active branches."),
        name: schema::text(NAME_MAX, "Name."),
        gstin: schema::nullable_text(GSTIN_LEN, "GSTIN, upper-cased, or null (D37); not unique."),
        address: schema::nullable_text(TEXT_MAX, "Postal address."),
        phone: schema::nullable_text(CODE_MAX, "Phone number."),
        drug_license_number: schema::nullable_text(CODE_MAX, "Drug licence number."),
        is_head_office: schema::boolean("True for branch 1 alone."),
        is_active: schema::boolean("False once soft-deleted."),
        created_at: schema::instant("When created."),
        updated_at: schema::instant("When last changed."),
    }
}
