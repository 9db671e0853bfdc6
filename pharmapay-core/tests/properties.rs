//! Property tests: random histories of vendors, invoices, payments and vendor credits, with the
//! clock moving and the business time zone changing, keep every invariant of the ledger, and
//! every kept figure equal to its recount, after every step.

use pharmapay_core::conformance::model::{Model, Op, credit_ops, ops};
use pharmapay_store_memory::MemoryStore;
use proptest::prelude::*;

/// Applies `history` to a fresh memory store, checking every invariant and, D41, every kept
/// figure against its recount from the rows after every step.
fn keeps_the_ledger_exact(history: &[Op]) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        let mut model = Model::new(MemoryStore::new()).await;
        for (step, op) in history.iter().enumerate() {
            model.apply(op).await;
            model.check_invariants(step as u64).await;
            model.fx.engine.store().check_figures().unwrap_or_else(|error| panic!("step {step} {op:?}: {error}"));
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_step_keeps_the_ledger_exact(history in ops(40)) {
        keeps_the_ledger_exact(&history);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    /// D44: credits claimed, decided, applied, undone, deleted and restored among invoices that
    /// are paid, moved, deleted and restored keep every balance and kept figure exact.
    #[test]
    fn credits_keep_every_balance_exact(history in credit_ops(40)) {
        keeps_the_ledger_exact(&history);
    }
}
