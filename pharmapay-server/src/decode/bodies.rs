//! The request bodies of the API. Each is declared once, by the `bodies!` macro below: its
//! fields, the reader of each and the core input it becomes.

use pharmapay_core::domain::{
    NewInvoice, NewPolicy, NewRole, NewTransaction, NewUser, NewVendor, NewVendorPayment, PasswordChange,
    ProfileUpdate, TransactionType, UserUpdate, VendorType,
};
use pharmapay_core::engine::{AdminAccount, Onboarding, PharmacyDetails};
use pharmapay_core::rules::allocation::RequestedAllocation;
use serde::{Deserialize, Serialize};

use super::{Body, Fields, Input, List, Nested, Objects, Slot};
use crate::problem::ApiError;

/// Declares request bodies. Each is a struct with one optional slot per field, which serde
/// names in camelCase as the spec does, and a [`Body`] that reads every field with its
/// [`Fields`] reader under that same name and builds the core input from them; the input names
/// the body as its [`Input`].
///
/// Fields are read, and serialised for idempotency fingerprints (D23), in the order they are
/// declared, so a field keeps its place.
macro_rules! bodies {
    ($(
        $(#[$doc:meta])*
        $body:ident => $input:ident {
            $($(#[$attr:meta])* $field:ident: $slot:ty => $read:ident($name:literal $(, $arg:expr)*),)*
        }
    )*) => {$(
        $(#[$doc])*
        #[derive(Debug, Deserialize, Serialize)]
        #[serde(rename_all = "camelCase")]
        pub struct $body {
            $($(#[$attr])* pub(super) $field: Option<$slot>,)*
        }

        impl Body for $body {
            type Input = $input;

            fn read(self, fields: &mut Fields<'_>) -> Option<Self::Input> {
                $(let $field = fields.$read($name, self.$field $(, $arg)*);)*
                Some($input { $($field: $field?,)* })
            }
        }

        impl Input for $input {
            type Body = $body;
        }
    )*};
}

bodies! {
    /// Onboarding setup (spec, Setup body): `{pharmacy, adminUser}`.
    OnboardingBody => Onboarding {
        pharmacy: Nested<PharmacyBody> => object("pharmacy"),
        #[serde(rename = "adminUser")]
        admin: Nested<AdminUserBody> => object("adminUser"),
    }

    /// The onboarding body's `pharmacy`.
    PharmacyBody => PharmacyDetails {
        name: Slot => string("name"),
        address: Slot => optional_string("address"),
        phone: Slot => optional_string("phone"),
        email: Slot => optional_string("email"),
        drug_license_number1: Slot => optional_string("drugLicenseNumber1"),
    }

    /// The onboarding body's `adminUser`.
    AdminUserBody => AdminAccount {
        first_name: Slot => string("firstName"),
        last_name: Slot => string("lastName"),
        email: Slot => string("email"),
        password: Slot => password("password"),
    }

    /// Vendor create and replace (spec; D14).
    VendorBody => NewVendor {
        name: Slot => string("name"),
        vendor_type: Slot => choice("vendorType", VendorType::parse, VendorType::expected()),
        address: Slot => optional_string("address"),
        phone: Slot => optional_string("phone"),
        email: Slot => optional_string("email"),
        drug_license_number1: Slot => optional_string("drugLicenseNumber1"),
        drug_license_number2: Slot => optional_string("drugLicenseNumber2"),
        additional_drug_license_numbers: List => strings("additionalDrugLicenseNumbers"),
        drug_license_valid_until: Slot => optional_datetime("drugLicenseValidUntil"),
        gstin: Slot => optional_gstin("gstin"),
    }

    /// Invoice create and replace (spec; D14).
    InvoiceBody => NewInvoice {
        vendor_id: Slot => id("vendorId"),
        invoice_number: Slot => string("invoiceNumber"),
        amount: Slot => amount("amount"),
        invoice_date: Slot => datetime("invoiceDate"),
        due_date: Slot => datetime("dueDate"),
        description: Slot => optional_string("description"),
    }

    /// Payment create and replace (spec; D14).
    TransactionBody => NewTransaction {
        invoice_id: Slot => id("invoiceId"),
        amount: Slot => amount("amount"),
        transaction_date: Slot => datetime("transactionDate"),
        transaction_type: Slot => choice("transactionType", TransactionType::parse, TransactionType::expected()),
        reference: Slot => optional_reference("reference"),
        description: Slot => optional_string("description"),
    }

    /// A vendor payment over several invoices (D31): `POST /api/vendors/:id/payments`.
    VendorPaymentBody => NewVendorPayment {
        amount: Slot => amount("amount"),
        transaction_date: Slot => datetime("transactionDate"),
        transaction_type: Slot => choice("transactionType", TransactionType::parse, TransactionType::expected()),
        reference: Slot => optional_reference("reference"),
        description: Slot => optional_string("description"),
        allocations: Objects<AllocationBody> => optional_objects("allocations"),
    }

    /// One share of a vendor payment: `{invoiceId, amount}`.
    AllocationBody => RequestedAllocation {
        invoice_id: Slot => id("invoiceId"),
        amount: Slot => amount("amount"),
    }

    /// User create (spec: all fields required).
    NewUserBody => NewUser {
        first_name: Slot => string("firstName"),
        last_name: Slot => string("lastName"),
        email: Slot => string("email"),
        password: Slot => password("password"),
        role_id: Slot => id("roleId"),
    }

    /// User replace (spec: firstName, lastName, email, roleId).
    UserUpdateBody => UserUpdate {
        first_name: Slot => string("firstName"),
        last_name: Slot => string("lastName"),
        email: Slot => string("email"),
        role_id: Slot => id("roleId"),
    }

    /// Role create and update: `{name, description}`.
    RoleBody => NewRole {
        name: Slot => string("name"),
        description: Slot => string_or_empty("description"),
    }

    /// Policy create and replace: `{name, description, permissionIds}`.
    PolicyBody => NewPolicy {
        name: Slot => string("name"),
        description: Slot => string_or_empty("description"),
        permission_ids: List => ids("permissionIds"),
    }

    /// Profile update (D24): `{firstName, lastName, email}`.
    ProfileBody => ProfileUpdate {
        first_name: Slot => string("firstName"),
        last_name: Slot => string("lastName"),
        email: Slot => string("email"),
    }

    /// Password change (D24): `{currentPassword, newPassword}`.
    PasswordChangeBody => PasswordChange {
        current_password: Slot => string("currentPassword"),
        new_password: Slot => password("newPassword"),
    }
}

/// Login: `{email, password}`.
#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoginBody {
    email: Option<Slot>,
    password: Option<Slot>,
}

impl Body for LoginBody {
    type Input = (String, String);

    fn read(self, fields: &mut Fields<'_>) -> Option<Self::Input> {
        let email = fields.string("email", self.email);
        let password = fields.string("password", self.password);
        Some((email?, password?))
    }
}

/// Setting update: `{value}`.
#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingBody {
    value: Option<Slot>,
}

impl Body for SettingBody {
    type Input = String;

    fn read(self, fields: &mut Fields<'_>) -> Option<Self::Input> {
        fields.string("value", self.value)
    }
}

/// The optional body of a delete: `{reason}` (D16).
#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasonBody {
    reason: Option<Slot>,
}

impl Body for ReasonBody {
    type Input = Option<String>;

    fn read(self, fields: &mut Fields<'_>) -> Option<Self::Input> {
        fields.optional_string("reason", self.reason)
    }
}

/// The reason of a delete whose body is optional: none without a body (D16).
///
/// # Errors
/// A 400 when `reason` is not a string.
pub fn reason(body: Option<ReasonBody>) -> Result<Option<String>, ApiError> {
    Ok(body.map(Body::decode).transpose()?.flatten())
}
