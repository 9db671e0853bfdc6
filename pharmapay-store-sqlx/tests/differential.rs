//! Random operation histories give the same answers on the memory store and on the SQL stores.
//!
//! Each case applies one random history (`pharmapay_core::conformance::model::ops`) to an
//! engine over `MemoryStore` and to an engine over a fresh SQL database. Every step must have
//! the same outcome, and at the end everything observable (`Model::snapshot`: lists in every
//! sort, filters, figures, dashboards, with ids replaced by creation order) must be identical,
//! and the SQL side must keep every ledger invariant (`Model::check_invariants`) and every kept
//! figure equal to its recount from the rows (D41).

mod common;

use std::future::Future;

use pharmapay_core::Store;
use pharmapay_core::conformance::model::{Model, Op, credit_ops, ops};
use pharmapay_store_memory::MemoryStore;
use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Runs `cases` random histories drawn from `histories`, each against a fresh SQL store made
/// by `fresh`.
fn differential<S, G, F, Fut>(label: &str, cases: u32, histories: impl Strategy<Value = Vec<Op>>, fresh: F)
where
    S: Store + KeptFigures,
    F: Fn() -> Fut,
    Fut: Future<Output = (S, G)>,
{
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a test runtime");
    // `PROPTEST_CASES` runs a deeper search than the default kept for every test run.
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|value| value.parse().ok()).unwrap_or(cases);
    // Shrinking reruns failing histories on fresh databases; a few dozen tries give a short
    // history without making a failure slow.
    let config = Config { cases, max_shrink_iters: 24, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&histories, |history| {
        runtime.block_on(async {
            let (store, _guard) = fresh().await;
            compare(&history, store).await
        })
    });
    if let Err(failure) = result {
        panic!("{label}: the SQL store answered differently from the memory store\n{failure}");
    }
}

/// A SQL store that can check its kept figures against a recount (D41).
trait KeptFigures {
    fn check(&self) -> impl Future<Output = Result<(), String>>;
}

impl KeptFigures for pharmapay_store_sqlx::SqliteStore {
    fn check(&self) -> impl Future<Output = Result<(), String>> {
        self.check_figures()
    }
}

impl KeptFigures for pharmapay_store_sqlx::PostgresStore {
    fn check(&self) -> impl Future<Output = Result<(), String>> {
        self.check_figures()
    }
}

async fn compare<S: Store + KeptFigures>(history: &[Op], store: S) -> Result<(), TestCaseError> {
    let mut expected = Model::new(MemoryStore::new()).await;
    let mut actual = Model::new(store).await;
    for (step, op) in history.iter().enumerate() {
        let want = expected.apply(op).await;
        let got = actual.apply(op).await;
        if want != got {
            return Err(TestCaseError::fail(format!(
                "step {step} {op:?}: the memory store answered {want:?}, the SQL store {got:?}"
            )));
        }
    }
    actual.check_invariants(history.len() as u64).await;
    actual.fx.engine.store().check().await.map_err(TestCaseError::fail)?;
    let want = expected.snapshot().await;
    let got = actual.snapshot().await;
    if want != got {
        return Err(TestCaseError::fail(format!(
            "the snapshots differ after {} steps:\n{}",
            history.len(),
            diff(&want, &got)
        )));
    }
    Ok(())
}

/// The lines that differ, with a little context, memory store first.
fn diff(want: &str, got: &str) -> String {
    let want: Vec<&str> = want.lines().collect();
    let got: Vec<&str> = got.lines().collect();
    let mut out = String::new();
    let mut shown = 0;
    for index in 0..want.len().max(got.len()) {
        let (left, right) = (want.get(index).copied(), got.get(index).copied());
        if left != right {
            if index > 0 && shown == 0 {
                out.push_str(&format!("    {}\n", want[index - 1]));
            }
            out.push_str(&format!("  - {}\n  + {}\n", left.unwrap_or("<none>"), right.unwrap_or("<none>")));
            shown += 1;
            if shown == 12 {
                out.push_str("  ...\n");
                break;
            }
        }
    }
    out.push_str(&format!("(memory store: {} lines, SQL store: {} lines)", want.len(), got.len()));
    out
}

#[test]
fn sqlite_answers_every_history_like_the_memory_store() {
    differential("SQLite", 48, ops(40), common::fresh_sqlite);
}

#[test]
fn postgres_answers_every_history_like_the_memory_store() {
    let Some(admin_url) = common::postgres_admin_url() else { return };
    differential("PostgreSQL", 16, ops(40), || common::fresh_postgres_at(&admin_url));
}

/// D44: histories around vendor credits (claims, decisions, applications, undos, deletes and
/// restores among invoices paid, moved, deleted and restored).
#[test]
fn sqlite_answers_every_credit_history_like_the_memory_store() {
    differential("SQLite", 32, credit_ops(40), common::fresh_sqlite);
}

#[test]
fn postgres_answers_every_credit_history_like_the_memory_store() {
    let Some(admin_url) = common::postgres_admin_url() else { return };
    differential("PostgreSQL", 12, credit_ops(40), || common::fresh_postgres_at(&admin_url));
}

#[test]
fn the_diff_shows_the_first_differing_lines() {
    let shown = diff("a\nb\nc", "a\nx\nc");
    assert!(shown.contains("  - b\n  + x\n"), "{shown}");
    assert!(shown.starts_with("    a\n"), "context before the first difference: {shown}");
}
