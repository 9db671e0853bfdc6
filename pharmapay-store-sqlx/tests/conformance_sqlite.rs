//! The core's store conformance suite over SQLite, each case on a fresh temporary file.

mod common;

pharmapay_core::store_conformance_tests!(common::fresh_sqlite);
