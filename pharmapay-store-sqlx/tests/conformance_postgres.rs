//! The core's store conformance suite over PostgreSQL, each case in a fresh database that is
//! dropped afterwards. Without `PHARMAPAY_TEST_POSTGRES_URL` each case says it skips.

mod common;

pharmapay_core::store_conformance_tests!(optional common::fresh_postgres);
