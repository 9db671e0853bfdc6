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
//! - `text.rs`: trimming and bounds of free text.

pub mod clock;
pub mod faults;
pub mod fields;
pub mod ids;
pub mod money;
pub mod paging;
pub mod permissions;
pub mod text;
