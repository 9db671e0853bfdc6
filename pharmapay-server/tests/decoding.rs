//! Fuzzing the request decoders: arbitrary bytes and arbitrary JSON into every body type must
//! end in a value or a 4xx error, never a panic; valid JSON never counts as malformed.

use pharmapay_server::decode::{self, Body, ReasonBody};
use pharmapay_server::problem::ApiError;
use pharmapay_server::routes::auth::LoginBody;
use pharmapay_server::routes::invoices::InvoiceBody;
use pharmapay_server::routes::onboarding::OnboardingBody;
use pharmapay_server::routes::policies::PolicyBody;
use pharmapay_server::routes::profile::{PasswordChangeBody, ProfileBody};
use pharmapay_server::routes::roles::RoleBody;
use pharmapay_server::routes::settings::SettingBody;
use pharmapay_server::routes::transactions::TransactionBody;
use pharmapay_server::routes::users::{NewUserBody, UserUpdateBody};
use pharmapay_server::routes::vendors::VendorBody;
use proptest::prelude::*;
use serde_json::Value;

/// Decodes `bytes` as every body the API reads, returning each error.
fn decode_everything(bytes: &[u8]) -> Vec<ApiError> {
    fn attempt<B: Body>(bytes: &[u8]) -> Option<ApiError> {
        decode::decode::<B>(bytes).err()
    }
    let results = vec![
        attempt::<LoginBody>(bytes),
        attempt::<OnboardingBody>(bytes),
        attempt::<VendorBody>(bytes),
        attempt::<InvoiceBody>(bytes),
        attempt::<TransactionBody>(bytes),
        attempt::<NewUserBody>(bytes),
        attempt::<UserUpdateBody>(bytes),
        attempt::<RoleBody>(bytes),
        attempt::<PolicyBody>(bytes),
        attempt::<SettingBody>(bytes),
        decode::parse::<ReasonBody>(bytes).and_then(|body| decode::reason(Some(body))).err(),
        attempt::<ProfileBody>(bytes),
        attempt::<PasswordChangeBody>(bytes),
    ];
    let errors: Vec<ApiError> = results.into_iter().flatten().collect();
    for error in &errors {
        let status = error.status().as_u16();
        assert!((400..500).contains(&status), "decoding answers 4xx, got {status}: {error:?}");
    }
    errors
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "-?[0-9]{1,30}(\\.[0-9]{1,30})?([eE][+-]?[0-9]{1,4})?"
            .prop_map(|text| serde_json::from_str(&text).unwrap_or(Value::Null)),
        ".{0,40}".prop_map(Value::String),
        "(20[0-9]{2}-[0-1][0-9]-[0-3][0-9])(T[0-2][0-9]:[0-5][0-9]:[0-5][0-9](Z|[+-][0-1][0-9]:[0-5][0-9]))?"
            .prop_map(Value::String),
    ];
    let fields = prop::sample::select(vec![
        "name",
        "vendorType",
        "vendorId",
        "invoiceNumber",
        "amount",
        "invoiceDate",
        "dueDate",
        "invoiceId",
        "transactionDate",
        "transactionType",
        "description",
        "email",
        "password",
        "firstName",
        "lastName",
        "roleId",
        "permissionIds",
        "value",
        "reason",
        "pharmacy",
        "adminUser",
        "currentPassword",
        "newPassword",
        "additionalDrugLicenseNumbers",
        "unknown",
    ]);
    leaf.prop_recursive(4, 64, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(fields.clone().prop_map(str::to_owned), inner, 0..10)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        for error in decode_everything(&bytes) {
            prop_assert_eq!(error.status().as_u16(), 400);
        }
    }

    #[test]
    fn arbitrary_json_never_panics(value in json_value()) {
        let text = serde_json::to_vec(&value).unwrap();
        let errors = decode_everything(&text);
        for error in errors {
            // Valid JSON is never a malformed body: an object gets field errors, anything else
            // one error under `body`.
            match (&value, &error) {
                (Value::Object(_), ApiError::Invalid(fields)) => prop_assert!(!fields.contains("body"), "{error:?}"),
                (_, ApiError::Invalid(fields)) => prop_assert!(fields.contains("body"), "{error:?}"),
                _ => prop_assert!(false, "{value} gave {error:?}"),
            }
        }
    }

    #[test]
    fn spacing_never_changes_a_decoded_body(value in json_value()) {
        // D23: idempotent creates fingerprint the decoded body, so spacing must not count.
        let compact = serde_json::to_string(&value).unwrap();
        let spaced = serde_json::to_string_pretty(&value).unwrap();
        let first = decode::parse::<VendorBody>(compact.as_bytes()).map(|body| serde_json::to_vec(&body).unwrap());
        let second = decode::parse::<VendorBody>(spaced.as_bytes()).map(|body| serde_json::to_vec(&body).unwrap());
        prop_assert_eq!(first.ok(), second.ok());
    }
}
