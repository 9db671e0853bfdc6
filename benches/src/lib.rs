//! Shared set-up for pharmapay's benchmarks: an engine over a store filled with demo data at a
//! chosen scale, a signed-in admin, and sample records to read and write.
//!
//! [`stats`] holds the small pure helpers the load harness and the reports benchmark share:
//! percentiles, rates, and a process's memory and processor time.

pub mod stats;

use pharmapay_core::ids::{InvoiceId, VendorId};
use pharmapay_core::invoices::InvoiceQuery;
use pharmapay_core::store::{BulkLoadStore, Store};
use pharmapay_core::text::Password;
use pharmapay_core::transactions::{NewTransaction, TransactionType};
use pharmapay_core::vendors::VendorQuery;
use pharmapay_core::{
    AdminAccount, Amount, EngineOptions, Onboarding, PharmaPay, PharmacyDetails, Principal, SystemClock,
};
use pharmapay_server::demo::{self, DemoSize};

/// A benchmark fixture: an engine over demo data and a signed-in admin.
pub struct Bench<S> {
    /// The engine.
    pub engine: PharmaPay<S>,
    /// The admin's token.
    pub token: String,
    /// The admin, verified.
    pub admin: Principal,
    /// A vendor with invoices.
    pub vendor: VendorId,
    /// An active invoice.
    pub invoice: InvoiceId,
}

/// The demo scale named by `PHARMAPAY_BENCH_SCALE` (`S`, the default, or `L`).
pub fn scale_from_env() -> (&'static str, DemoSize) {
    match std::env::var("PHARMAPAY_BENCH_SCALE").as_deref() {
        Ok("L") | Ok("l") => ("L", DemoSize::LARGE),
        _ => ("S", DemoSize::SMALL),
    }
}

/// The benchmarks' pharmacy and its admin (`bench@example.com`, password `bench-password`).
pub fn bench_onboarding() -> Onboarding {
    Onboarding {
        pharmacy: PharmacyDetails {
            name: "Bench Pharmacy".into(),
            address: None,
            phone: None,
            email: None,
            drug_license_number1: None,
        },
        admin: AdminAccount {
            first_name: "Bench".into(),
            last_name: "Admin".into(),
            email: "bench@example.com".into(),
            password: Password::parse("bench-password").expect("long enough"),
        },
    }
}

/// Onboards `store`, fills it with demo data of `size`, and signs the admin in.
///
/// # Panics
/// When any step fails; benchmarks cannot go on without their data.
pub async fn prepare<S: Store + BulkLoadStore>(store: S, size: DemoSize) -> Bench<S> {
    let engine = PharmaPay::open(store, SystemClock, EngineOptions::default()).await.expect("engine opens");
    if !engine.onboarding_status().await.expect("status") {
        let setup = bench_onboarding();
        engine.complete_onboarding(setup).await.expect("onboarding");
        demo::seed(engine.store(), size, engine.now()).await.expect("demo data");
    }
    let session = engine.login("bench@example.com", "bench-password").await.expect("login");
    let admin = engine.authenticate(&session.token.token).await.expect("token works");
    let invoices = engine.list_invoices(&admin, &InvoiceQuery::default()).await.expect("invoices");
    let invoice = invoices.items.iter().find(|invoice| invoice.is_active).expect("an active invoice");
    let vendors = engine.list_vendors(&admin, &VendorQuery::default()).await.expect("vendors");
    let vendor = vendors.items.last().expect("a vendor").id;
    Bench { token: session.token.token, admin, vendor, invoice: invoice.id, engine }
}

/// A payment of 0.01 on `invoice`, dated now.
pub fn small_payment<S: Store>(bench: &Bench<S>) -> NewTransaction {
    NewTransaction {
        invoice_id: bench.invoice,
        amount: Amount::parse("0.01").expect("a valid amount"),
        transaction_date: bench.engine.now(),
        transaction_type: TransactionType::Upi,
        reference: None,
        description: None,
    }
}
