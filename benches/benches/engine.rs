//! Engine benchmarks over the memory store and SQLite, at the scale `PHARMAPAY_BENCH_SCALE`
//! names (`S` by default: 300 vendors, 30,000 invoices, 90,000 payments).
//!
//! SQLite runs on a fresh file in the system's temporary directory, removed afterwards; set
//! `PHARMAPAY_BENCH_SQLITE_FILE` to keep a file between runs instead (the data is loaded only
//! into an empty one, which saves the load at L). The payments created by the write benchmark
//! stay in a kept file.
//!
//! Run with `cargo bench -p pharmapay-benches --bench engine` (`-- memory/` or `-- sqlite/`
//! picks one backend).

use criterion::{Criterion, criterion_group, criterion_main};
use pharmapay_benches::{Bench, prepare, scale_from_env, small_payment};
use pharmapay_core::invoices::InvoiceQuery;
use pharmapay_core::store::Store;
use pharmapay_core::vendors::VendorQuery;
use pharmapay_core::{Access, Action, Collection};
use pharmapay_store_memory::MemoryStore;
use pharmapay_store_sqlx::SqliteStore;
use tokio::runtime::Runtime;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a runtime")
}

fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

fn bench_engine<S: Store>(c: &mut Criterion, runtime: &Runtime, backend: &str, bench: &Bench<S>) {
    let (scale, _) = scale_from_env();
    let mut group = c.benchmark_group(format!("{backend}/{scale}"));
    let engine = &bench.engine;
    let admin = &bench.admin;
    let overdue_by_pending =
        InvoiceQuery::from_params(&params(&[("sortBy", "pendingAmount"), ("sortDir", "desc"), ("status", "Overdue")]))
            .expect("query");
    let vendors_by_balance =
        VendorQuery::from_params(&params(&[("sortBy", "outstandingBalance"), ("sortDir", "desc")])).expect("query");
    group.bench_function("get invoice", |b| {
        b.to_async(runtime).iter(|| async { engine.get_invoice(admin, bench.invoice).await.expect("invoice") })
    });
    group.bench_function("get vendor", |b| {
        b.to_async(runtime).iter(|| async { engine.get_vendor(admin, bench.vendor).await.expect("vendor") })
    });
    group.bench_function("list invoices (default)", |b| {
        b.to_async(runtime)
            .iter(|| async { engine.list_invoices(admin, &InvoiceQuery::default()).await.expect("page") })
    });
    group.bench_function("list invoices (Overdue by pendingAmount desc)", |b| {
        b.to_async(runtime).iter(|| async { engine.list_invoices(admin, &overdue_by_pending).await.expect("page") })
    });
    group.bench_function("list vendors (by outstandingBalance desc)", |b| {
        b.to_async(runtime).iter(|| async { engine.list_vendors(admin, &vendors_by_balance).await.expect("page") })
    });
    group.bench_function("dashboard summary", |b| {
        b.to_async(runtime).iter(|| async { engine.dashboard_summary(admin).await.expect("summary") })
    });
    group.bench_function("top vendors", |b| {
        b.to_async(runtime).iter(|| async { engine.top_vendors(admin, 5).await.expect("top") })
    });
    group.bench_function("monthly payments", |b| {
        b.to_async(runtime).iter(|| async { engine.monthly_transactions(admin).await.expect("months") })
    });
    group.bench_function("permission check", |b| {
        b.iter(|| admin.require(Access::new(Collection::Invoice, Action::Read)).expect("allowed"))
    });
    group.bench_function("token verification", |b| {
        b.to_async(runtime).iter(|| async { engine.authenticate(&bench.token).await.expect("valid") })
    });
    // Writes last: every iteration adds a payment, which would slow the reads measured after it.
    group.bench_function("create payment", |b| {
        b.to_async(runtime)
            .iter(|| async { engine.create_transaction(admin, small_payment(bench), None).await.expect("payment") })
    });
    group.finish();
}

fn memory(c: &mut Criterion) {
    let runtime = runtime();
    let (_, size) = scale_from_env();
    let bench = runtime.block_on(prepare(MemoryStore::new(), size));
    bench_engine(c, &runtime, "memory", &bench);
}

fn sqlite(c: &mut Criterion) {
    let runtime = runtime();
    let (_, size) = scale_from_env();
    let (path, temporary) = match std::env::var_os("PHARMAPAY_BENCH_SQLITE_FILE") {
        Some(path) => (std::path::PathBuf::from(path), false),
        None => (std::env::temp_dir().join(format!("pharmapay-bench-{}.db", std::process::id())), true),
    };
    let url = path.to_str().expect("a UTF-8 path");
    let bench = runtime.block_on(async {
        let store = SqliteStore::connect(url).await.expect("the SQLite file opens");
        prepare(store, size).await
    });
    bench_engine(c, &runtime, "sqlite", &bench);
    runtime.block_on(bench.engine.store().close());
    drop(bench);
    if temporary {
        for suffix in ["", "-wal", "-shm"] {
            let mut file = path.clone().into_os_string();
            file.push(suffix);
            let _ = std::fs::remove_file(file);
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = memory, sqlite
}
criterion_main!(benches);
