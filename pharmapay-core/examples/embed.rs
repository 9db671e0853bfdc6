//! Embedding the engine in a program: no server, no database.
//!
//! Onboards a pharmacy, records a vendor, an invoice and two payments, then prints the
//! invoice's status and the dashboard. Run with `cargo run -p pharmapay-core --example embed`.

use pharmapay_core::idempotency::Created;
use pharmapay_core::invoices::NewInvoice;
use pharmapay_core::text::Password;
use pharmapay_core::transactions::{NewTransaction, TransactionType};
use pharmapay_core::vendors::{NewVendor, VendorType};
use pharmapay_core::{AdminAccount, Amount, EngineOptions, Onboarding, PharmaPay, PharmacyDetails, SystemClock};
use pharmapay_store_memory::MemoryStore;

fn new<T>(created: Created<T>) -> T {
    match created {
        Created::New(value) => value,
        Created::Replayed(_) => unreachable!("no idempotency key was sent"),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let engine = PharmaPay::open(MemoryStore::new(), SystemClock, EngineOptions::default()).await?;

    let session = engine
        .complete_onboarding(Onboarding {
            pharmacy: PharmacyDetails {
                name: "Apollo Pharmacy".into(),
                address: Some("12 MG Road, Bengaluru".into()),
                phone: None,
                email: None,
                drug_license_number1: Some("KA-B-20-123".into()),
            },
            admin: AdminAccount {
                first_name: "Asha".into(),
                last_name: "Rao".into(),
                email: "asha@apollo.example".into(),
                password: Password::parse("a long passphrase")?,
            },
        })
        .await?;
    let admin = engine.authenticate(&session.token.token).await?;

    let vendor =
        new(engine.create_vendor(&admin, NewVendor::new("Cipla Distributors", VendorType::Wholesaler), None).await?);
    let today = engine.now();
    let invoice = new(engine
        .create_invoice(
            &admin,
            NewInvoice {
                vendor_id: vendor.id,
                branch_id: None,
                invoice_number: "CIP-2024-001".into(),
                amount: Amount::parse("12500.00")?,
                invoice_date: today,
                due_date: today + pharmapay_core::jiff::SignedDuration::from_hours(24 * 30),
                description: Some("Monthly stock".into()),
            },
            None,
        )
        .await?);
    for (paid, kind) in [("5000", TransactionType::Upi), ("7500", TransactionType::NetBanking)] {
        let payment = NewTransaction {
            invoice_id: invoice.id,
            amount: Amount::parse(paid)?,
            transaction_date: today,
            transaction_type: kind,
            reference: None,
            description: None,
        };
        engine.create_transaction(&admin, payment, None).await?;
    }

    let invoice = engine.get_invoice(&admin, invoice.id).await?.invoice;
    println!(
        "invoice {} from {}: amount {}, paid {}, pending {}, status {}",
        invoice.invoice_number,
        invoice.vendor_name,
        invoice.amount,
        invoice.paid_amount,
        invoice.pending_amount(),
        invoice.status.name()
    );
    let summary = engine.dashboard_summary(&admin).await?;
    println!(
        "dashboard: {} vendors, {} invoices, due {}, paid {}, {} payments in the last 30 days",
        summary.total_vendors,
        summary.total_invoices,
        summary.total_due,
        summary.total_paid,
        summary.recent_transactions
    );
    Ok(())
}
