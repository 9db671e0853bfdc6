//! Request bodies into core inputs, collecting every field error at once (D6, D7).
//!
//! Bodies are parsed into a `serde_json::Value` whose numbers keep their exact text, then read
//! field by field: a missing required field, a value of the wrong JSON type and a value that
//! core's parsers refuse (an amount with five decimals, an unknown enum value, a malformed date)
//! each add a message under the field's camelCase path, and decoding goes on so the client
//! learns about all of them in one answer. Unknown fields are ignored.

use pharmapay_core::Amount;
use pharmapay_core::FieldErrors;
use pharmapay_core::clock::parse_datetime;
use pharmapay_core::domain::{
    NewInvoice, NewPolicy, NewRole, NewTransaction, NewUser, NewVendor, PasswordChange, ProfileUpdate, TransactionType,
    UserUpdate, VendorType,
};
use pharmapay_core::engine::{AdminAccount, Onboarding, PharmacyDetails};
use pharmapay_core::ids::{InvoiceId, PermissionId, RoleId, VendorId};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::text::Password;
use serde_json::{Map, Value};

use crate::problem::ApiError;

/// Most items accepted in an array field.
const MAX_ARRAY_ITEMS: usize = 200;

/// The fields of one JSON object, read one by one; errors go to a shared list.
pub struct Fields<'a> {
    object: &'a Map<String, Value>,
    prefix: &'static str,
    errors: &'a mut FieldErrors,
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl<'a> Fields<'a> {
    /// The fields of `value`, which must be an object (else an error under `body`).
    pub fn of(value: &'a Value, errors: &'a mut FieldErrors) -> Option<Self> {
        match value {
            Value::Object(object) => Some(Self { object, prefix: "", errors }),
            other => {
                errors.add("body", format!("must be a JSON object, not {}", type_name(other)));
                None
            }
        }
    }

    fn path(&self, name: &str) -> String {
        if self.prefix.is_empty() { name.to_owned() } else { format!("{}.{name}", self.prefix) }
    }

    fn fail(&mut self, name: &str, message: impl Into<String>) {
        let path = self.path(name);
        self.errors.add(path, message);
    }

    /// The nested object `name`, required; its fields' paths are prefixed with `prefix`.
    pub fn object(&mut self, name: &'static str) -> Option<Fields<'_>> {
        match self.object.get(name) {
            Some(Value::Object(object)) => Some(Fields { object, prefix: name, errors: &mut *self.errors }),
            None | Some(Value::Null) => {
                self.fail(name, "is required");
                None
            }
            Some(other) => {
                let message = format!("must be an object, not {}", type_name(other));
                self.fail(name, message);
                None
            }
        }
    }

    /// A required string.
    pub fn string(&mut self, name: &str) -> Option<String> {
        match self.object.get(name) {
            Some(Value::String(text)) => Some(text.clone()),
            None | Some(Value::Null) => {
                self.fail(name, "is required");
                None
            }
            Some(other) => {
                let message = format!("must be a string, not {}", type_name(other));
                self.fail(name, message);
                None
            }
        }
    }

    /// An optional string; `null` and absent are `None`.
    pub fn optional_string(&mut self, name: &str) -> Option<String> {
        match self.object.get(name) {
            Some(Value::String(text)) => Some(text.clone()),
            None | Some(Value::Null) => None,
            Some(other) => {
                let message = format!("must be a string, not {}", type_name(other));
                self.fail(name, message);
                None
            }
        }
    }

    /// A required positive amount, written as a JSON number (D1: strings are refused).
    pub fn amount(&mut self, name: &str) -> Option<Amount> {
        match self.object.get(name) {
            Some(Value::Number(number)) => match Amount::parse(&number.to_string()) {
                Ok(amount) => Some(amount),
                Err(error) => {
                    self.fail(name, error.to_string());
                    None
                }
            },
            None | Some(Value::Null) => {
                self.fail(name, "is required");
                None
            }
            Some(other) => {
                let message = format!("must be a number, not {}", type_name(other));
                self.fail(name, message);
                None
            }
        }
    }

    /// A required positive integer id.
    pub fn id(&mut self, name: &str) -> Option<i64> {
        match self.object.get(name) {
            Some(Value::Number(number)) => match integer(number) {
                Some(id) if id >= 1 => Some(id),
                _ => {
                    self.fail(name, "must be a positive integer");
                    None
                }
            },
            None | Some(Value::Null) => {
                self.fail(name, "is required");
                None
            }
            Some(other) => {
                let message = format!("must be an integer, not {}", type_name(other));
                self.fail(name, message);
                None
            }
        }
    }

    /// A required timestamp (D2): RFC 3339 with an offset, or `YYYY-MM-DD`.
    pub fn datetime(&mut self, name: &str) -> Option<Timestamp> {
        let text = self.string(name)?;
        match parse_datetime(&text) {
            Ok(instant) => Some(instant),
            Err(error) => {
                self.fail(name, error.to_string());
                None
            }
        }
    }

    /// A required enum value, parsed by `parse` (any case, D7).
    pub fn choice<T>(&mut self, name: &str, parse: fn(&str) -> Option<T>, expected: &str) -> Option<T> {
        let text = self.string(name)?;
        let parsed = parse(&text);
        if parsed.is_none() {
            self.fail(name, expected);
        }
        parsed
    }

    /// A required password meeting D29.
    pub fn password(&mut self, name: &str) -> Option<Password> {
        let text = self.string(name)?;
        match Password::parse(&text) {
            Ok(password) => Some(password),
            Err(error) => {
                self.fail(name, error.to_string());
                None
            }
        }
    }

    /// An optional array of strings; absent or `null` is empty.
    pub fn strings(&mut self, name: &str) -> Vec<String> {
        match self.object.get(name) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) if items.len() > MAX_ARRAY_ITEMS => {
                self.fail(name, format!("must have at most {MAX_ARRAY_ITEMS} items"));
                Vec::new()
            }
            Some(Value::Array(items)) => {
                let mut strings = Vec::with_capacity(items.len());
                for (index, item) in items.iter().enumerate() {
                    match item {
                        Value::String(text) => strings.push(text.clone()),
                        other => {
                            let message = format!("must be a string, not {}", type_name(other));
                            self.fail(&format!("{name}[{index}]"), message);
                        }
                    }
                }
                strings
            }
            Some(other) => {
                let message = format!("must be an array of strings, not {}", type_name(other));
                self.fail(name, message);
                Vec::new()
            }
        }
    }

    /// An optional array of positive integer ids; absent or `null` is empty.
    pub fn ids(&mut self, name: &str) -> Vec<i64> {
        match self.object.get(name) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) if items.len() > MAX_ARRAY_ITEMS => {
                self.fail(name, format!("must have at most {MAX_ARRAY_ITEMS} items"));
                Vec::new()
            }
            Some(Value::Array(items)) => {
                let mut ids = Vec::with_capacity(items.len());
                for (index, item) in items.iter().enumerate() {
                    let id = match item {
                        Value::Number(number) => integer(number),
                        _ => None,
                    };
                    match id {
                        Some(id) if id >= 1 => ids.push(id),
                        _ => self.fail(&format!("{name}[{index}]"), "must be a positive integer"),
                    }
                }
                ids
            }
            Some(other) => {
                let message = format!("must be an array of integers, not {}", type_name(other));
                self.fail(name, message);
                Vec::new()
            }
        }
    }
}

/// The integer a JSON number denotes, also when written with a fraction or exponent (`7.0`,
/// `7e0`), as JSON Schema counts those as integers; `None` when it has a fractional part or
/// does not fit an `i64`.
fn integer(number: &serde_json::Number) -> Option<i64> {
    if let Some(value) = number.as_i64() {
        return Some(value);
    }
    let text = number.to_string();
    let value = if text.contains(['e', 'E']) {
        pharmapay_core::rust_decimal::Decimal::from_scientific(&text).ok()?
    } else {
        text.parse::<pharmapay_core::rust_decimal::Decimal>().ok()?
    };
    if value.fract().is_zero() { pharmapay_core::rust_decimal::prelude::ToPrimitive::to_i64(&value) } else { None }
}

/// Runs `read` over the fields of `body`; any error, from the body's shape or from a field,
/// makes the whole decode fail with every message collected.
fn decode<T>(body: &Value, read: impl FnOnce(&mut Fields<'_>) -> Option<T>) -> Result<T, ApiError> {
    let mut errors = FieldErrors::new();
    let value = Fields::of(body, &mut errors).and_then(|mut fields| read(&mut fields));
    match value {
        Some(value) if errors.is_empty() => Ok(value),
        _ => Err(ApiError::Invalid(errors)),
    }
}

/// Login: `{email, password}`.
pub fn login(body: &Value) -> Result<(String, String), ApiError> {
    decode(body, |f| {
        let email = f.string("email");
        let password = f.string("password");
        Some((email?, password?))
    })
}

/// Onboarding setup (spec, Setup body).
pub fn onboarding(body: &Value) -> Result<Onboarding, ApiError> {
    decode(body, |f| {
        let pharmacy = f.object("pharmacy").and_then(|mut p| {
            let name = p.string("name");
            let address = p.optional_string("address");
            let phone = p.optional_string("phone");
            let email = p.optional_string("email");
            let drug_license_number1 = p.optional_string("drugLicenseNumber1");
            Some(PharmacyDetails { name: name?, address, phone, email, drug_license_number1 })
        });
        let admin = f.object("adminUser").and_then(|mut a| {
            let first_name = a.string("firstName");
            let last_name = a.string("lastName");
            let email = a.string("email");
            let password = a.password("password");
            Some(AdminAccount { first_name: first_name?, last_name: last_name?, email: email?, password: password? })
        });
        Some(Onboarding { pharmacy: pharmacy?, admin: admin? })
    })
}

/// Vendor create and replace (spec; D14).
pub fn vendor(body: &Value) -> Result<NewVendor, ApiError> {
    decode(body, |f| {
        let name = f.string("name");
        let vendor_type = f.choice("vendorType", VendorType::parse, VendorType::expected());
        let address = f.optional_string("address");
        let phone = f.optional_string("phone");
        let email = f.optional_string("email");
        let drug_license_number1 = f.optional_string("drugLicenseNumber1");
        let drug_license_number2 = f.optional_string("drugLicenseNumber2");
        let additional_drug_license_numbers = f.strings("additionalDrugLicenseNumbers");
        Some(NewVendor {
            name: name?,
            vendor_type: vendor_type?,
            address,
            phone,
            email,
            drug_license_number1,
            drug_license_number2,
            additional_drug_license_numbers,
        })
    })
}

/// Invoice create and replace (spec; D14).
pub fn invoice(body: &Value) -> Result<NewInvoice, ApiError> {
    decode(body, |f| {
        let vendor_id = f.id("vendorId");
        let invoice_number = f.string("invoiceNumber");
        let amount = f.amount("amount");
        let invoice_date = f.datetime("invoiceDate");
        let due_date = f.datetime("dueDate");
        let description = f.optional_string("description");
        Some(NewInvoice {
            vendor_id: VendorId(vendor_id?),
            invoice_number: invoice_number?,
            amount: amount?,
            invoice_date: invoice_date?,
            due_date: due_date?,
            description,
        })
    })
}

/// Payment create and replace (spec; D14).
pub fn transaction(body: &Value) -> Result<NewTransaction, ApiError> {
    decode(body, |f| {
        let invoice_id = f.id("invoiceId");
        let amount = f.amount("amount");
        let transaction_date = f.datetime("transactionDate");
        let transaction_type = f.choice("transactionType", TransactionType::parse, TransactionType::expected());
        let description = f.optional_string("description");
        Some(NewTransaction {
            invoice_id: InvoiceId(invoice_id?),
            amount: amount?,
            transaction_date: transaction_date?,
            transaction_type: transaction_type?,
            description,
        })
    })
}

/// User create (spec: all fields required).
pub fn new_user(body: &Value) -> Result<NewUser, ApiError> {
    decode(body, |f| {
        let first_name = f.string("firstName");
        let last_name = f.string("lastName");
        let email = f.string("email");
        let password = f.password("password");
        let role_id = f.id("roleId");
        Some(NewUser {
            first_name: first_name?,
            last_name: last_name?,
            email: email?,
            password: password?,
            role_id: RoleId(role_id?),
        })
    })
}

/// User replace (spec: firstName, lastName, email, roleId).
pub fn user_update(body: &Value) -> Result<UserUpdate, ApiError> {
    decode(body, |f| {
        let first_name = f.string("firstName");
        let last_name = f.string("lastName");
        let email = f.string("email");
        let role_id = f.id("roleId");
        Some(UserUpdate { first_name: first_name?, last_name: last_name?, email: email?, role_id: RoleId(role_id?) })
    })
}

/// Role create and update: `{name, description}`.
pub fn role(body: &Value) -> Result<NewRole, ApiError> {
    decode(body, |f| {
        let name = f.string("name");
        let description = f.optional_string("description").unwrap_or_default();
        Some(NewRole { name: name?, description })
    })
}

/// Policy create and replace: `{name, description, permissionIds}`.
pub fn policy(body: &Value) -> Result<NewPolicy, ApiError> {
    decode(body, |f| {
        let name = f.string("name");
        let description = f.optional_string("description").unwrap_or_default();
        let permission_ids = f.ids("permissionIds").into_iter().map(PermissionId).collect();
        Some(NewPolicy { name: name?, description, permission_ids })
    })
}

/// Setting update: `{value}`.
pub fn setting_value(body: &Value) -> Result<String, ApiError> {
    decode(body, |f| f.string("value"))
}

/// The optional body of a delete: `{reason}` (D16).
pub fn reason(body: Option<&Value>) -> Result<Option<String>, ApiError> {
    match body {
        None => Ok(None),
        Some(body) => decode(body, |f| Some(f.optional_string("reason"))),
    }
}

/// Profile update (D24): `{firstName, lastName, email}`.
pub fn profile(body: &Value) -> Result<ProfileUpdate, ApiError> {
    decode(body, |f| {
        let first_name = f.string("firstName");
        let last_name = f.string("lastName");
        let email = f.string("email");
        Some(ProfileUpdate { first_name: first_name?, last_name: last_name?, email: email? })
    })
}

/// Password change (D24): `{currentPassword, newPassword}`.
pub fn password_change(body: &Value) -> Result<PasswordChange, ApiError> {
    decode(body, |f| {
        let current_password = f.string("currentPassword");
        let new_password = f.password("newPassword");
        Some(PasswordChange { current_password: current_password?, new_password: new_password? })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    fn errors(result: Result<impl std::fmt::Debug, ApiError>) -> FieldErrors {
        match result {
            Err(ApiError::Invalid(errors)) => errors,
            other => panic!("expected field errors, got {other:?}"),
        }
    }

    #[test]
    fn amounts_keep_their_exact_text() {
        let body = json(r#"{"invoiceId":1,"amount":0.1,"transactionDate":"2024-01-01","transactionType":"upi"}"#);
        let payment = transaction(&body).unwrap();
        assert_eq!(payment.amount.to_string(), "0.1");
        assert_eq!(payment.transaction_type, TransactionType::Upi);
        let body = json(
            r#"{"invoiceId":1,"amount":123456789012.1234,"transactionDate":"2024-01-01","transactionType":"Cash"}"#,
        );
        assert_eq!(transaction(&body).unwrap().amount.to_string(), "123456789012.1234");
    }

    #[test]
    fn every_bad_field_is_reported_at_once() {
        let body = json(r#"{"invoiceId":"7","amount":"10","transactionDate":"soon","transactionType":"cheque"}"#);
        let found = errors(transaction(&body));
        for field in ["invoiceId", "amount", "transactionDate", "transactionType"] {
            assert!(found.contains(field), "{field}: {found}");
        }
        let found = errors(invoice(&json("{}")));
        for field in ["vendorId", "invoiceNumber", "amount", "invoiceDate", "dueDate"] {
            assert!(found.contains(field), "{field}: {found}");
        }
    }

    #[test]
    fn d1_amount_rules_apply_to_json_numbers() {
        for (amount, label) in [("1.23456", "five decimals"), ("0", "zero"), ("-5", "negative"), ("1e13", "too large")]
        {
            let body = json(&format!(
                r#"{{"invoiceId":1,"amount":{amount},"transactionDate":"2024-01-01","transactionType":"Cash"}}"#
            ));
            assert!(errors(transaction(&body)).contains("amount"), "{label}");
        }
    }

    #[test]
    fn nested_paths_are_dotted() {
        let body = json(
            r#"{"pharmacy":{"name":5},"adminUser":{"firstName":"A","lastName":"B","email":"a@b.c","password":"short"}}"#,
        );
        let found = errors(onboarding(&body));
        assert!(found.contains("pharmacy.name"), "{found}");
        assert!(found.contains("adminUser.password"), "{found}");
        assert!(errors(onboarding(&json("[]"))).contains("body"));
    }

    #[test]
    fn integral_numbers_are_ids_whatever_their_spelling() {
        for (text, expected) in [("7", Some(7)), ("7.0", Some(7)), ("7e0", Some(7)), ("7.5", None), ("1e30", None)] {
            let number: serde_json::Number = text.parse().unwrap();
            assert_eq!(integer(&number), expected, "{text}");
        }
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let body = json(r#"{"name":"Acme","vendorType":"DEALER","isActive":false,"id":99,"outstandingBalance":5}"#);
        let vendor = vendor(&body).unwrap();
        assert_eq!(vendor.vendor_type, VendorType::Dealer);
    }
}
