//! The base layer: the values and error types every other module shares, importing nothing
//! above this folder (a test of the workspace's import graph holds it so).
//!
//! # Layout
//! - `clock.rs`: the clock and the business calendar.
//! - `faults.rs`: how a store method fails, its unique keys and an import's row errors.
//! - `fields.rs`: field errors, entity names and the rules a request can break.
//! - `ids.rs`: the typed ids.
//! - `money.rs`: exact amounts.
//! - `paging.rs`: list parameters, sorts and pages.
//! - `permissions.rs`: collections, actions, permission sets and requirements.
//! - `restore.rs`: records come back only under an active parent (D15).
//! - `text.rs`: trimming and bounds of free text.
//! - `tidy.rs`: the field rules every record's input shares, applied in place.

pub mod clock;
pub mod faults;
pub mod fields;
pub mod ids;
pub mod money;
pub mod paging;
pub mod permissions;
pub mod restore;
pub mod text;
pub mod tidy;
