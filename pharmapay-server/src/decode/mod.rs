//! Request bodies into core inputs, collecting every field error at once (D6, D7).
//!
//! Decoding takes two steps. [`parse`] reads the body's bytes straight into a typed body struct
//! (such as `routes::vendors::VendorBody`) whose fields are [`Slot`]s: each keeps the text of a string or a
//! number, or only the kind of anything else, so a value of the wrong JSON type never stops
//! decoding and nothing but the fields a body names is ever stored. Unknown fields are skipped
//! without allocating (D7), arrays keep at most [`MAX_ARRAY_ITEMS`] items, and numbers keep
//! their exact text, so amounts never pass through a float (D1). [`Body::decode`] then reads the
//! fields one by one into a core input: a missing required field, a value of the wrong JSON type
//! and a value that core's parsers refuse (an amount with five decimals, an unknown enum value,
//! a malformed date) each add a message under the field's camelCase path, and reading goes on,
//! so the client learns about all of them in one answer. Each body is declared once, a line
//! per field naming its reader, with the `bodies!` macro, in the file of its resource under
//! `routes/`.
//!
//! Bodies are strict JSON: UTF-8, nested at most [`MAX_JSON_DEPTH`] deep, each field named once.
//!
//! `values.rs` holds the values fields are first decoded into, `fields.rs` the field readers
//! with the [`Body`] and [`Input`] traits, `shapes.rs` their schema side; this file the parse
//! and the `bodies!` macro.

use pharmapay_core::FieldErrors;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::openapi::schema;
use crate::problem::ApiError;

mod fields;
mod shapes;
mod values;

pub use fields::{Body, Fields, Input};
pub use shapes::Shapes;
pub use values::{Kind, List, MAX_ARRAY_ITEMS, MAX_JSON_DEPTH, Nested, Objects, Slot};

/// Declares request bodies. Each is a struct with one optional slot per field, which serde
/// names in camelCase as the spec does, and a [`Body`] that reads every field with its
/// [`Fields`] reader under that same name and builds the core input from them; the input names
/// the body as its [`Input`]. Each resource declares its bodies in its file under `routes/`.
///
/// The body also describes itself in the API document, under the schema name and description
/// after `as`: each field's reader has a [`Shapes`] method of the same name, which states what
/// the reader accepts, given what follows the reader's `as` (see each method for what it takes).
///
/// Fields are read, and serialised for idempotency fingerprints (D23), in the order they are
/// declared, so a field keeps its place.
macro_rules! bodies {
    ($(
        $(#[$doc:meta])*
        $body:ident => $input:ident as $schema_name:literal : $description:literal {
            $(
                $(#[$attr:meta])*
                $field:ident: $slot:ty => $read:ident($name:literal $(, $arg:expr)*) $(as $shape:expr)?,
            )*
        }
    )*) => {$(
        $(#[$doc])*
        #[derive(Debug, ::serde::Deserialize, ::serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        pub struct $body {
            $($(#[$attr])* pub(crate) $field: Option<$slot>,)*
        }

        impl $crate::decode::Body for $body {
            type Input = $input;

            fn read(self, fields: &mut $crate::decode::Fields<'_>) -> Option<Self::Input> {
                $(let $field = fields.$read($name, self.$field $(, $arg)*);)*
                Some($input { $($field: $field?,)* })
            }
        }

        impl $crate::decode::Input for $input {
            type Body = $body;
        }

        impl $crate::openapi::Schema for $body {
            const NAME: &'static str = $schema_name;

            fn schema() -> $crate::openapi::Json {
                let mut shapes = $crate::decode::Shapes::default();
                $(shapes.$read($name, None::<$slot> $(, $shape)?);)*
                shapes.into_schema($description)
            }
        }
    )*};
}

pub(crate) use bodies;

/// Reads a body field whose `null` means something of its own (a user's `branchIds`, D49):
/// with `#[serde(default, deserialize_with = "crate::decode::present")]` an absent field is
/// `None` and `null` is `Some(List::Other(Kind::Null))`.
///
/// # Errors
/// As the list's own reading.
pub fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<List>, D::Error> {
    <List as serde::Deserialize>::deserialize(deserializer).map(Some)
}

/// Reads `bytes` as a JSON object into the body `B`.
///
/// # Errors
/// A 400: under `body` when the JSON is valid but not an object; as a malformed body when the
/// bytes are not UTF-8, not JSON, nested deeper than [`MAX_JSON_DEPTH`] or name a field twice.
pub fn parse<B: DeserializeOwned>(bytes: &[u8]) -> Result<B, ApiError> {
    if json_depth(bytes) > MAX_JSON_DEPTH {
        return Err(ApiError::malformed(format!("JSON nests deeper than {MAX_JSON_DEPTH} levels")));
    }
    // Checked whole, so that text inside skipped fields is valid too.
    let text = std::str::from_utf8(bytes).map_err(|error| {
        let (line, column) = position(&bytes[..error.valid_up_to()]);
        ApiError::malformed(format!("the body is not valid JSON (line {line}, column {column})"))
    })?;
    match text.trim_start_matches([' ', '\t', '\n', '\r']).as_bytes().first() {
        Some(b'{') => serde_json::from_str(text).map_err(malformed),
        _ => match serde_json::from_str::<&RawValue>(text) {
            Ok(value) => Err(ApiError::Invalid(FieldErrors::single(
                "body",
                format!("must be a JSON object, not {}", Kind::of(value).described()),
            ))),
            Err(error) => Err(malformed(error)),
        },
    }
}

/// Reads `bytes` into the body `B` and then into its core input.
///
/// # Errors
/// As [`parse`] and [`Body::decode`].
pub fn decode<B: Body>(bytes: &[u8]) -> Result<B::Input, ApiError> {
    parse::<B>(bytes)?.decode()
}

fn malformed(error: serde_json::Error) -> ApiError {
    let what = match error.classify() {
        serde_json::error::Category::Eof => "the JSON body ends too early",
        serde_json::error::Category::Syntax => "the body is not valid JSON",
        _ => "the JSON body could not be read",
    };
    ApiError::malformed(format!("{what} (line {}, column {})", error.line(), error.column()))
}

/// The 1-based line and column just after `before`.
fn position(before: &[u8]) -> (usize, usize) {
    let line = 1 + before.iter().filter(|byte| **byte == b'\n').count();
    let column = 1 + before.iter().rev().take_while(|byte| **byte != b'\n').count();
    (line, column)
}

/// The deepest nesting of arrays and objects, ignoring brackets inside strings.
fn json_depth(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &byte in bytes {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

bodies! {
    /// The optional body of every delete: `{reason}` (D16).
    ReasonBody => DeleteReason as "DeleteReason":
        "Optional body of a delete; the reason is kept in the audit log (D16, D22). Unknown fields are ignored." {
        reason: Slot => optional_string("reason") as schema::free_text("Why the record is deleted."),
    }
}

/// The reason a delete gives (D16).
pub struct DeleteReason {
    /// Why the record is deleted; none when blank or absent.
    pub reason: Option<String>,
}

/// The reason of a delete whose body is optional: none without a body (D16).
///
/// # Errors
/// A 400 when `reason` is not a string.
pub fn reason(body: Option<ReasonBody>) -> Result<Option<String>, ApiError> {
    Ok(body.map(Body::decode).transpose()?.and_then(|body| body.reason))
}

#[cfg(test)]
mod tests {
    use pharmapay_core::transactions::TransactionType;
    use pharmapay_core::vendors::VendorType;

    use super::*;
    use crate::routes::invoices::InvoiceBody;
    use crate::routes::onboarding::OnboardingBody;
    use crate::routes::policies::PolicyBody;
    use crate::routes::transactions::TransactionBody;
    use crate::routes::vendors::VendorBody;

    fn errors(result: Result<impl std::fmt::Debug, ApiError>) -> FieldErrors {
        match result {
            Err(ApiError::Invalid(errors)) => errors,
            other => panic!("expected field errors, got {other:?}"),
        }
    }

    fn messages(errors: &FieldErrors) -> Vec<(String, Vec<String>)> {
        errors.iter().map(|(field, messages)| (field.to_owned(), messages.to_vec())).collect()
    }

    #[test]
    fn amounts_keep_their_exact_text() {
        let body = br#"{"invoiceId":1,"amount":0.1,"transactionDate":"2024-01-01","transactionType":"upi"}"#;
        let payment = decode::<TransactionBody>(body).unwrap();
        assert_eq!(payment.amount.to_string(), "0.1");
        assert_eq!(payment.transaction_type, TransactionType::Upi);
        let body =
            br#"{"invoiceId":1,"amount":123456789012.1234,"transactionDate":"2024-01-01","transactionType":"Cash"}"#;
        assert_eq!(decode::<TransactionBody>(body).unwrap().amount.to_string(), "123456789012.1234");
        let body = br#"{"invoiceId":1,"amount":1.5E2,"transactionDate":"2024-01-01","transactionType":"Cash"}"#;
        assert_eq!(decode::<TransactionBody>(body).unwrap().amount.to_string(), "150");
    }

    #[test]
    fn every_bad_field_is_reported_at_once() {
        let body = br#"{"invoiceId":"7","amount":"10","transactionDate":"soon","transactionType":"cheque"}"#;
        let found = errors(decode::<TransactionBody>(body));
        for field in ["invoiceId", "amount", "transactionDate", "transactionType"] {
            assert!(found.contains(field), "{field}: {found}");
        }
        let found = errors(decode::<InvoiceBody>(b"{}"));
        for field in ["vendorId", "invoiceNumber", "amount", "invoiceDate", "dueDate"] {
            assert!(found.contains(field), "{field}: {found}");
        }
    }

    #[test]
    fn a_wrong_json_type_is_named_per_field() {
        let body = br#"{"name":5,"vendorType":[1,{"a":2}],"address":{"street":"x"},"phone":true,
            "additionalDrugLicenseNumbers":["DL-1",7,null,["x"]]}"#;
        let found = errors(decode::<VendorBody>(body));
        let expected = [
            ("additionalDrugLicenseNumbers[1]", "must be a string, not a number"),
            ("additionalDrugLicenseNumbers[2]", "must be a string, not null"),
            ("additionalDrugLicenseNumbers[3]", "must be a string, not an array"),
            ("address", "must be a string, not an object"),
            ("name", "must be a string, not a number"),
            ("phone", "must be a string, not a boolean"),
            ("vendorType", "must be a string, not an array"),
        ];
        let expected: Vec<(String, Vec<String>)> =
            expected.iter().map(|(field, message)| ((*field).to_owned(), vec![(*message).to_owned()])).collect();
        assert_eq!(messages(&found), expected);
        let found = errors(decode::<PolicyBody>(br#"{"name":"P","permissionIds":[1,"2",0,2.5,3.0]}"#));
        assert_eq!(
            messages(&found),
            [
                ("permissionIds[1]".to_owned(), vec!["must be a positive integer".to_owned()]),
                ("permissionIds[2]".to_owned(), vec!["must be a positive integer".to_owned()]),
                ("permissionIds[3]".to_owned(), vec!["must be a positive integer".to_owned()]),
            ]
        );
        let found = errors(decode::<PolicyBody>(br#"{"name":"P","permissionIds":"1"}"#));
        assert_eq!(
            messages(&found),
            [("permissionIds".to_owned(), vec!["must be an array of integers, not a string".to_owned()])]
        );
    }

    #[test]
    fn d1_amount_rules_apply_to_json_numbers() {
        for (amount, label) in [("1.23456", "five decimals"), ("0", "zero"), ("-5", "negative"), ("1e13", "too large")]
        {
            let body = format!(
                r#"{{"invoiceId":1,"amount":{amount},"transactionDate":"2024-01-01","transactionType":"Cash"}}"#
            );
            assert!(errors(decode::<TransactionBody>(body.as_bytes())).contains("amount"), "{label}");
        }
        let body = br#"{"invoiceId":1,"amount":"10","transactionDate":"2024-01-01","transactionType":"Cash"}"#;
        assert_eq!(
            messages(&errors(decode::<TransactionBody>(body))),
            [("amount".to_owned(), vec!["must be a number, not a string".to_owned()])]
        );
    }

    #[test]
    fn nested_paths_are_dotted() {
        let body = br#"{"pharmacy":{"name":5},"adminUser":{"firstName":"A","lastName":"B","email":"a@b.c","password":"short"}}"#;
        let found = errors(decode::<OnboardingBody>(body));
        assert!(found.contains("pharmacy.name"), "{found}");
        assert!(found.contains("adminUser.password"), "{found}");
        let found = errors(decode::<OnboardingBody>(br#"{"pharmacy":null,"adminUser":7}"#));
        assert_eq!(
            messages(&found),
            [
                ("adminUser".to_owned(), vec!["must be an object, not a number".to_owned()]),
                ("pharmacy".to_owned(), vec!["is required".to_owned()]),
            ]
        );
    }

    #[test]
    fn only_an_object_is_a_body() {
        for (body, kind) in [
            (&b"[]"[..], "an array"),
            (b" 1.5 ", "a number"),
            (b"\"text\"", "a string"),
            (b"null", "null"),
            (b"true", "a boolean"),
        ] {
            let found = errors(decode::<OnboardingBody>(body));
            assert_eq!(messages(&found), [("body".to_owned(), vec![format!("must be a JSON object, not {kind}")])]);
        }
    }

    #[test]
    fn malformed_json_is_a_malformed_body() {
        let deep: Vec<u8> = [b'['; 40].into_iter().chain([b']'; 40]).collect();
        for (label, body) in [
            ("truncated", &br#"{"name":"Acme""#[..]),
            ("not JSON", b"name=Acme"),
            ("trailing text", br#"{"name":"Acme"} x"#),
            ("invalid UTF-8 in a skipped field", b"{\"other\":\"\xff\",\"name\":\"Acme\"}"),
            ("a field named twice", br#"{"name":"a","name":"b","vendorType":"Dealer"}"#),
            ("too deep", &deep),
        ] {
            let result = parse::<VendorBody>(body);
            assert!(matches!(result, Err(ApiError::Malformed(_))), "{label}: {result:?}");
        }
    }

    #[test]
    fn json_depth_ignores_brackets_in_strings() {
        assert_eq!(json_depth(br#"{"a":[1,{"b":"[[[["}]}"#), 3);
        assert_eq!(json_depth(br#""\"{""#), 0);
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let body =
            br#"{"name":"Acme","vendorType":"DEALER","isActive":false,"id":99,"outstandingBalance":5,"x":{"y":[1]}}"#;
        let vendor = decode::<VendorBody>(body).unwrap();
        assert_eq!(vendor.vendor_type, VendorType::Dealer);
    }

    #[test]
    fn arrays_keep_at_most_their_limit() {
        let ids: Vec<String> = (1..=MAX_ARRAY_ITEMS).map(|id| id.to_string()).collect();
        let body = format!(r#"{{"name":"P","permissionIds":[{}]}}"#, ids.join(","));
        assert_eq!(decode::<PolicyBody>(body.as_bytes()).unwrap().permission_ids.len(), MAX_ARRAY_ITEMS);
        let body = format!(r#"{{"name":"P","permissionIds":[{},"x",[]]}}"#, ids.join(","));
        assert_eq!(parse::<PolicyBody>(body.as_bytes()).unwrap().permission_ids, Some(List::TooLong));
        assert_eq!(
            messages(&errors(decode::<PolicyBody>(body.as_bytes()))),
            [("permissionIds".to_owned(), vec![format!("must have at most {MAX_ARRAY_ITEMS} items")])]
        );
    }

    #[test]
    fn a_body_serialises_the_same_whatever_its_spacing_order_and_extra_fields() {
        let first = parse::<InvoiceBody>(br#"{"vendorId":1,"amount":10.50,"invoiceNumber":"A"}"#).unwrap();
        let second = parse::<InvoiceBody>(
            b"{ \"invoiceNumber\" : \"A\",\n \"amount\": 10.50, \"vendorId\": 1, \"extra\": [1] }",
        )
        .unwrap();
        let other = parse::<InvoiceBody>(br#"{"vendorId":1,"amount":10.5,"invoiceNumber":"A"}"#).unwrap();
        let bytes = |body: &InvoiceBody| serde_json::to_vec(body).unwrap();
        assert_eq!(bytes(&first), bytes(&second));
        assert_ne!(bytes(&first), bytes(&other), "numbers count as written");
    }
}
