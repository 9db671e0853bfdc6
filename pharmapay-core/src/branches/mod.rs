//! Branches (D49): the stores of a chain under one installation, sharing one vendor master and
//! one head office that pays most bills.
//!
//! Branch 1 is the head office from the first start (code `HO`, named `Head office` until
//! onboarding names it after the pharmacy); no other branch is, whatever a body says (D7). A
//! branch's code is unique among active branches, compared upper-cased; its GSTIN is checked as
//! a vendor's (D37) but not unique, as stores in one state share one.

mod engine;
pub mod rules;
pub mod scope;
pub mod store;

pub use scope::Scope;

use jiff::Timestamp;

use crate::base::tidy::{tidy_optional, tidy_required};
use crate::error::FieldErrors;
use crate::ids::BranchId;
use crate::text::{CODE_MAX, Lines, NAME_MAX, TEXT_MAX};
use crate::vendors::gstin::Gstin;

/// The head office: branch 1, from the first start.
pub const HEAD_OFFICE_ID: BranchId = BranchId(1);

/// The head office's code.
pub const HEAD_OFFICE_CODE: &str = "HO";

/// The head office's name until onboarding names it after the pharmacy.
pub const HEAD_OFFICE_NAME: &str = "Head office";

/// The longest branch code, in characters after trimming.
pub const BRANCH_CODE_MAX: usize = 16;

/// A branch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Branch {
    /// Id; 1 is the head office.
    pub id: BranchId,
    /// Code: letters, digits and `-`, upper-cased, unique among active branches.
    pub code: String,
    /// Name.
    pub name: String,
    /// GSTIN (D37), not unique.
    pub gstin: Option<String>,
    /// Address.
    pub address: Option<String>,
    /// Phone.
    pub phone: Option<String>,
    /// Drug licence number.
    pub drug_license_number: Option<String>,
    /// False once soft-deleted.
    pub is_active: bool,
    /// When created.
    pub created_at: Timestamp,
    /// When last changed.
    pub updated_at: Timestamp,
}

impl Branch {
    /// Whether this is the head office (branch 1).
    pub fn is_head_office(&self) -> bool {
        self.id == HEAD_OFFICE_ID
    }
}

/// The fields of a branch create or update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewBranch {
    /// Code.
    pub code: String,
    /// Name.
    pub name: String,
    /// GSTIN, parsed by the caller (D37).
    pub gstin: Option<Gstin>,
    /// Address.
    pub address: Option<String>,
    /// Phone.
    pub phone: Option<String>,
    /// Drug licence number.
    pub drug_license_number: Option<String>,
}

impl NewBranch {
    /// A branch with `code` and `name` and nothing else.
    pub fn new(code: &str, name: &str) -> Self {
        Self {
            code: code.to_owned(),
            name: name.to_owned(),
            gstin: None,
            address: None,
            phone: None,
            drug_license_number: None,
        }
    }

    /// Trims every field, upper-cases the code and checks the text rules (D49).
    ///
    /// # Errors
    /// The messages by field path.
    pub fn validate(mut self) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        match code_of(&self.code) {
            Ok(code) => self.code = code,
            Err(message) => errors.add("code", message),
        }
        tidy_required(&mut self.name, "name", NAME_MAX, &mut errors);
        tidy_optional(&mut self.address, "address", TEXT_MAX, Lines::Multi, &mut errors);
        tidy_optional(&mut self.phone, "phone", CODE_MAX, Lines::Single, &mut errors);
        tidy_optional(&mut self.drug_license_number, "drugLicenseNumber", CODE_MAX, Lines::Single, &mut errors);
        if errors.is_empty() { Ok(self) } else { Err(errors) }
    }

    /// The values written, as the audit log keeps them (D22).
    pub(crate) fn audit_changes(&self) -> String {
        serde_json::json!({
            "code": self.code,
            "name": self.name,
            "gstin": self.gstin.as_ref().map(Gstin::as_str),
            "address": self.address,
            "phone": self.phone,
            "drugLicenseNumber": self.drug_license_number,
        })
        .to_string()
    }
}

/// A branch code as kept: trimmed and upper-cased, 1 to [`BRANCH_CODE_MAX`] letters, digits or
/// `-` (D49).
///
/// # Errors
/// The message for the `code` field.
pub fn code_of(text: &str) -> Result<String, String> {
    let code = text.trim();
    if code.is_empty() {
        return Err("is required".into());
    }
    if code.chars().count() > BRANCH_CODE_MAX {
        return Err(format!("must be at most {BRANCH_CODE_MAX} characters"));
    }
    if !code.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err("may hold only letters, digits and '-'".into());
    }
    Ok(code.to_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_trimmed_upper_cased_and_bounded() {
        assert_eq!(code_of("  ho-2 "), Ok("HO-2".to_owned()));
        assert_eq!(code_of("ABCDEFGHIJKLMNOP"), Ok("ABCDEFGHIJKLMNOP".to_owned()));
        assert!(code_of("ABCDEFGHIJKLMNOPQ").is_err(), "17 characters");
        assert!(code_of("   ").is_err());
        assert!(code_of("HO 2").is_err(), "a space inside");
        assert!(code_of("HÖ").is_err(), "letters are ASCII");
        assert!(code_of("HO_2").is_err());
    }

    #[test]
    fn a_branch_needs_a_valid_code_and_a_name() {
        let errors = NewBranch::new("", " ").validate().expect_err("both are missing");
        assert!(errors.contains("code") && errors.contains("name"), "{errors:?}");
        let branch = NewBranch::new(" andheri ", " Andheri West ").validate().expect("valid");
        assert_eq!((branch.code.as_str(), branch.name.as_str()), ("ANDHERI", "Andheri West"));
    }
}
