//! Vendor credits in memory: [`CreditStore`] for [`MemoryStore`] (D44). A credit's number is
//! unique among its vendor's active credits; replacements and decisions are judged by
//! `rules::credits` over the credit as it stands under the store's lock.

use pharmapay_core::domain::{CreditDecision, CreditKind, CreditQuery, NewVendorCredit, VendorCredit};
use pharmapay_core::ids::{InvoiceId, VendorCreditId, VendorId};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::rules::credits::{self, CreditFacts};
use pharmapay_core::rules::restore;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::{CreditStore, StoreResult, UniqueKey, WriteContext};
use pharmapay_core::text::key;
use pharmapay_core::{Amount, Entity, Page, StoreError};

use crate::{MemoryStore, SortKey, State, by_key_then_id};

/// A vendor credit as recorded (D44).
#[derive(Clone)]
pub(crate) struct CreditRow {
    vendor_id: i64,
    credit_number: String,
    number_key: String,
    kind: CreditKind,
    claimed: Amount,
    claim_date: Timestamp,
    against_invoice_id: Option<i64>,
    accepted: Option<Decimal>,
    decision_date: Option<Timestamp>,
    distributor_reference: Option<String>,
    /// The exact sum of its active applications.
    applied: Decimal,
    description: Option<String>,
    is_active: bool,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl CreditRow {
    fn facts(&self) -> CreditFacts {
        CreditFacts {
            vendor_id: VendorId(self.vendor_id),
            claimed: self.claimed.get(),
            claim_date: self.claim_date,
            accepted: self.accepted,
            applied: self.applied,
        }
    }
}

impl State {
    fn credit(&self, id: i64) -> Option<VendorCredit> {
        let row = self.credits.get(&id)?;
        Some(VendorCredit {
            id: VendorCreditId(id),
            vendor_id: VendorId(row.vendor_id),
            vendor_name: self.vendors.get(&row.vendor_id).map(|vendor| vendor.name.clone()).unwrap_or_default(),
            credit_number: row.credit_number.clone(),
            kind: row.kind,
            against_invoice_id: row.against_invoice_id.map(InvoiceId),
            claimed_amount: row.claimed,
            claim_date: row.claim_date,
            accepted_amount: row.accepted.map(|accepted| accepted.normalize()),
            decision_date: row.decision_date,
            distributor_reference: row.distributor_reference.clone(),
            applied_amount: row.applied.normalize(),
            description: row.description.clone(),
            is_active: row.is_active,
            created_at: row.created_at,
            updated_at: row.updated_at,
            applications: Vec::new(),
        })
    }

    /// The checks a claim's fields need against what is stored, in the contract's order: an
    /// active vendor, the invoice it names, then its number among the vendor's other active
    /// credits.
    fn check_claim(&self, credit: &NewVendorCredit, number_key: &str, except: Option<i64>) -> StoreResult<()> {
        let vendor_id = credit.vendor_id.get();
        if !self.active_vendor(vendor_id) {
            return Err(StoreError::ParentInactive(Entity::Vendor));
        }
        if let Some(invoice_id) = credit.against_invoice_id {
            let owner = self.invoices.get(&invoice_id.get()).map(|invoice| VendorId(invoice.vendor_id));
            credits::check_against(credit.vendor_id, owner)?;
        }
        self.check_credit_number(vendor_id, number_key, except)
    }

    fn check_credit_number(&self, vendor_id: i64, number_key: &str, except: Option<i64>) -> StoreResult<()> {
        let taken = self.credits.iter().any(|(id, row)| {
            row.is_active && row.vendor_id == vendor_id && row.number_key == number_key && Some(*id) != except
        });
        if taken { Err(StoreError::Conflict(UniqueKey::CreditNumber)) } else { Ok(()) }
    }

    fn active_credit(&self, id: VendorCreditId) -> StoreResult<&CreditRow> {
        self.credits.get(&id.get()).filter(|row| row.is_active).ok_or(StoreError::NotFound(Entity::VendorCredit))
    }
}

impl CreditStore for MemoryStore {
    async fn insert_credit(&self, credit: NewVendorCredit, ctx: WriteContext) -> StoreResult<VendorCredit> {
        let mut state = self.write();
        let number_key = key(&credit.credit_number);
        state.check_claim(&credit, &number_key, None)?;
        let id = state.next("credit");
        state.credits.insert(
            id,
            CreditRow {
                vendor_id: credit.vendor_id.get(),
                credit_number: credit.credit_number,
                number_key,
                kind: credit.kind,
                claimed: credit.claimed_amount,
                claim_date: credit.claim_date,
                against_invoice_id: credit.against_invoice_id.map(InvoiceId::get),
                accepted: None,
                decision_date: None,
                distributor_reference: None,
                applied: Decimal::ZERO,
                description: credit.description,
                is_active: true,
                created_at: ctx.at,
                updated_at: ctx.at,
            },
        );
        state.finish_write(&ctx, "create", Entity::VendorCredit, id);
        Ok(state.credit(id).expect("just written"))
    }

    async fn get_credit(&self, id: VendorCreditId) -> StoreResult<Option<VendorCredit>> {
        Ok(self.read().credit(id.get()))
    }

    async fn update_credit(
        &self,
        id: VendorCreditId,
        credit: NewVendorCredit,
        ctx: WriteContext,
    ) -> StoreResult<VendorCredit> {
        let mut state = self.write();
        let facts = state.active_credit(id)?.facts();
        let number_key = key(&credit.credit_number);
        state.check_claim(&credit, &number_key, Some(id.get()))?;
        credits::check_update(&facts, &credit)?;
        let row = state.credits.get_mut(&id.get()).expect("checked above");
        row.vendor_id = credit.vendor_id.get();
        row.credit_number = credit.credit_number;
        row.number_key = number_key;
        row.kind = credit.kind;
        row.claimed = credit.claimed_amount;
        row.claim_date = credit.claim_date;
        row.against_invoice_id = credit.against_invoice_id.map(InvoiceId::get);
        row.description = credit.description;
        row.updated_at = ctx.at;
        state.finish_write(&ctx, "update", Entity::VendorCredit, id.get());
        Ok(state.credit(id.get()).expect("just written"))
    }

    async fn decide_credit(
        &self,
        id: VendorCreditId,
        decision: CreditDecision,
        ctx: WriteContext,
    ) -> StoreResult<VendorCredit> {
        let mut state = self.write();
        credits::check_decision(&state.active_credit(id)?.facts(), &decision)?;
        let row = state.credits.get_mut(&id.get()).expect("checked above");
        row.accepted = Some(decision.accepted_amount);
        row.decision_date = Some(decision.decision_date);
        row.distributor_reference = decision.distributor_reference;
        row.updated_at = ctx.at;
        state.finish_write(&ctx, "decide", Entity::VendorCredit, id.get());
        Ok(state.credit(id.get()).expect("just written"))
    }

    async fn delete_credit(&self, id: VendorCreditId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        state.active_credit(id)?;
        let row = state.credits.get_mut(&id.get()).expect("checked above");
        row.is_active = false;
        row.updated_at = ctx.at;
        state.finish_write(&ctx, "delete", Entity::VendorCredit, id.get());
        Ok(())
    }

    async fn restore_credit(&self, id: VendorCreditId, ctx: WriteContext) -> StoreResult<VendorCredit> {
        let mut state = self.write();
        let row = state
            .credits
            .get(&id.get())
            .filter(|row| !row.is_active)
            .ok_or(StoreError::NotFound(Entity::VendorCredit))?;
        let (vendor_id, number_key) = (row.vendor_id, row.number_key.clone());
        restore::check_parent(Entity::Vendor, state.active_vendor(vendor_id))?;
        state.check_credit_number(vendor_id, &number_key, Some(id.get()))?;
        let row = state.credits.get_mut(&id.get()).expect("checked above");
        row.is_active = true;
        row.updated_at = ctx.at;
        state.finish_write(&ctx, "restore", Entity::VendorCredit, id.get());
        Ok(state.credit(id.get()).expect("just written"))
    }

    async fn list_credits(&self, query: &CreditQuery) -> StoreResult<Page<VendorCredit>> {
        let state = self.read();
        let rows: Vec<(SortKey, i64)> = state
            .credits
            .iter()
            .filter(|(_, row)| {
                query.filter.admits(
                    VendorId(row.vendor_id),
                    row.kind,
                    row.is_active,
                    (row.claimed.get(), row.accepted),
                    row.claim_date,
                )
            })
            .map(|(id, row)| (SortKey::Instant(row.claim_date), *id))
            .collect();
        let page = query.page.sorted_slice(rows, by_key_then_id(pharmapay_core::SortDir::Desc));
        Ok(page.map(|(_, id)| state.credit(id).expect("listed")))
    }
}
