//! Application settings: seeded key-value pairs whose values alone may change.

/// The currency symbol setting (D27).
pub const CURRENCY: &str = "Currency";
/// The business time-zone setting (D3, D27).
pub const TIME_ZONE: &str = "TimeZone";

/// A setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// Key; immutable.
    pub key: String,
    /// Value; the only part that may change.
    pub value: String,
    /// What it is for; immutable.
    pub description: String,
}
