//! Fuzzing the request decoders: arbitrary bytes and arbitrary JSON into every body type must
//! end in a value or a 4xx error, never a panic.

use pharmapay_server::decode;
use pharmapay_server::http::parse_json;
use pharmapay_server::problem::ApiError;
use proptest::prelude::*;
use serde_json::Value;

fn decode_everything(value: &Value) {
    let results: Vec<Option<ApiError>> = vec![
        decode::login(value).err(),
        decode::onboarding(value).err(),
        decode::vendor(value).err(),
        decode::invoice(value).err(),
        decode::transaction(value).err(),
        decode::new_user(value).err(),
        decode::user_update(value).err(),
        decode::role(value).err(),
        decode::policy(value).err(),
        decode::setting_value(value).err(),
        decode::reason(Some(value)).err(),
        decode::profile(value).err(),
        decode::password_change(value).err(),
    ];
    for error in results.into_iter().flatten() {
        let status = error.status().as_u16();
        assert!((400..500).contains(&status), "decoding answers 4xx, got {status}: {error:?}");
    }
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
        match parse_json(&bytes) {
            Ok(value) => decode_everything(&value),
            Err(error) => prop_assert_eq!(error.status().as_u16(), 400),
        }
    }

    #[test]
    fn arbitrary_json_never_panics(value in json_value()) {
        decode_everything(&value);
        let text = serde_json::to_vec(&value).unwrap();
        let parsed = parse_json(&text);
        prop_assert!(parsed.is_ok() || parsed.as_ref().err().is_some_and(|e| e.status().as_u16() == 400));
    }
}
