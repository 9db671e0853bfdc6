//! Vendor credits in memory: [`CreditStore`] for [`MemoryStore`] (D44). A credit's number is
//! unique among its vendor's active credits; replacements, decisions and applications are
//! judged by `credits::rules` over the credit and the invoices as they stand under the store's
//! lock, and every write keeps the figures its rows contribute to (D41).

use pharmapay_core::branches::Scope;
use std::collections::{HashMap, HashSet};

use pharmapay_core::base::restore;
use pharmapay_core::branches::rules as branch_rules;
use pharmapay_core::credits::rules as credit_rules;
use pharmapay_core::credits::rules::CreditFacts;
use pharmapay_core::credits::{
    CreditApplication, CreditDecision, CreditQuery, NewCreditApplication, NewVendorCredit, VendorCredit,
};
use pharmapay_core::events::Announcement;
use pharmapay_core::ids::{BranchId, CreditApplicationId, InvoiceId, VendorCreditId, VendorId};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::reports::dashboard::CreditSummary;
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::{BulkCredit, CreditStore, StoreResult, UniqueKey, WriteContext};
use pharmapay_core::text::key;
use pharmapay_core::{Entity, Page, StoreError};

use crate::figures::Touch;
use crate::rows::{ApplicationRow, CreditRow};
use crate::{MemoryStore, SortKey, State, by_key_then_id};

impl CreditRow {
    /// A credit of `credit`'s claim with `decision`, `applied` of it applied and active or not,
    /// recorded at `at`.
    fn new(
        credit: NewVendorCredit,
        decision: Option<CreditDecision>,
        (applied, is_active): (Decimal, bool),
        at: Timestamp,
    ) -> Self {
        Self {
            vendor_id: credit.vendor_id.get(),
            branch_id: branch_rules::branch_of_create(credit.branch_id).get(),
            number_key: key(&credit.credit_number),
            credit_number: credit.credit_number,
            kind: credit.kind,
            claimed: credit.claimed_amount,
            claim_date: credit.claim_date,
            against_invoice_id: credit.against_invoice_id.map(InvoiceId::get),
            accepted: decision.as_ref().map(|decision| decision.accepted_amount),
            decision_date: decision.as_ref().map(|decision| decision.decision_date),
            distributor_reference: decision.and_then(|decision| decision.distributor_reference),
            applied,
            description: credit.description,
            is_active,
            created_at: at,
            updated_at: at,
        }
    }
}

impl State {
    /// The facts of credit `id` as it stands, its decision filed under the business calendar's
    /// day (D3).
    pub(crate) fn credit_facts(&self, id: i64) -> Option<CreditFacts> {
        let row = self.credits.get(&id)?;
        Some(CreditFacts {
            vendor_id: VendorId(row.vendor_id),
            branch_id: BranchId(row.branch_id),
            is_active: row.is_active,
            claimed: row.claimed.get(),
            claim_date: row.claim_date,
            accepted: row.accepted,
            decision_date: row.decision_date,
            decided_on: row.decision_date.map(|date| self.calendar.date_of(date)),
            applied: row.applied,
        })
    }

    /// The active applications of credit `id`, oldest first (by date, then id).
    fn applications_of(&self, id: i64) -> Vec<CreditApplication> {
        let mut applications: Vec<CreditApplication> = self
            .applications_by_credit
            .get(&id)
            .into_iter()
            .flatten()
            .filter_map(|application_id| {
                let row = self.credit_applications.get(application_id).filter(|row| row.is_active)?;
                Some(CreditApplication {
                    id: CreditApplicationId(*application_id),
                    invoice_id: InvoiceId(row.invoice_id),
                    invoice_number: self.invoices.get(&row.invoice_id)?.invoice_number.clone(),
                    amount: row.amount,
                    date: row.date,
                    created_at: row.created_at,
                })
            })
            .collect();
        applications.sort_by_key(|application| (application.date, application.id));
        applications
    }

    /// Active applications found through `ids` (a lookup's entries), with their rows.
    fn active_applications<'a>(&'a self, ids: Option<&'a Vec<i64>>) -> impl Iterator<Item = (i64, &'a ApplicationRow)> {
        ids.into_iter()
            .flatten()
            .filter_map(|id| self.credit_applications.get(id).filter(|row| row.is_active).map(|row| (*id, row)))
    }

    /// The invoices credit `id`'s active applications credit, and the credits of those on
    /// invoice `invoice_id`: the rows whose figures deleting either moves.
    fn touched_by_applications(&self, credit: Option<i64>, invoice: Option<i64>) -> Vec<Touch> {
        let mut touched = Vec::new();
        for (_, row) in self.active_applications(credit.and_then(|id| self.applications_by_credit.get(&id))) {
            touched.push(Touch::Invoice(row.invoice_id));
        }
        for (_, row) in self.active_applications(invoice.and_then(|id| self.applications_by_invoice.get(&id))) {
            touched.push(Touch::Credit(row.credit_id));
        }
        touched
    }

    /// Soft-deletes the active applications `ids` name, taking each off its invoice's credited
    /// total and its credit's applied total.
    fn release_applications(&mut self, ids: Vec<i64>) {
        for id in ids {
            let Some(row) = self.credit_applications.get_mut(&id).filter(|row| row.is_active) else { continue };
            row.is_active = false;
            let (credit_id, invoice_id, amount) = (row.credit_id, row.invoice_id, row.amount.get());
            if let Some(invoice) = self.invoices.get_mut(&invoice_id) {
                invoice.credited -= amount;
            }
            if let Some(credit) = self.credits.get_mut(&credit_id) {
                credit.applied -= amount;
            }
        }
    }

    /// D44: deleting an invoice deletes the applications on it; the credits have them available
    /// again. Called by the invoice's delete, inside its snapshot of the touched rows.
    pub(crate) fn release_invoice_applications(&mut self, invoice_id: i64) {
        let ids = self.applications_by_invoice.get(&invoice_id).cloned().unwrap_or_default();
        self.release_applications(ids);
    }

    /// The credits an invoice's active applications come from, for the snapshot of a write that
    /// deletes it.
    pub(crate) fn credits_on_invoice(&self, invoice_id: i64) -> Vec<Touch> {
        self.touched_by_applications(None, Some(invoice_id))
    }

    /// What the active applications dated at or after `from` credited, by invoice: what an
    /// aging of an earlier day adds back (D34, D44).
    pub(crate) fn applications_after(&self, from: Timestamp) -> HashMap<i64, Decimal> {
        let mut later: HashMap<i64, Decimal> = HashMap::new();
        for row in self.credit_applications.values().filter(|row| row.is_active && row.date >= from) {
            *later.entry(row.invoice_id).or_default() += row.amount.get();
        }
        later
    }

    /// The credit lines of vendor `vendor_id`'s statement over `[from, before)` (D35, D44): its
    /// active credits with something accepted, by decision date; those decided earlier add to
    /// `credited_before`.
    pub(crate) fn credit_lines(
        &self,
        vendor_id: VendorId,
        (from, before): (Timestamp, Timestamp),
        calendar: &pharmapay_core::BusinessCalendar,
        rows: &mut pharmapay_core::reports::statement::StatementRows,
    ) {
        use pharmapay_core::reports::statement::{StatementEntry, StatementLineKind};
        for (id, credit) in
            self.credits.iter().filter(|(_, credit)| credit.is_active && credit.vendor_id == vendor_id.get())
        {
            let (Some(accepted), Some(decided)) = (credit.accepted, credit.decision_date) else { continue };
            if accepted <= Decimal::ZERO {
                continue;
            }
            if decided < from {
                rows.credited_before += accepted;
            } else if decided < before {
                let against = credit.against_invoice_id;
                rows.entries.push(StatementEntry {
                    date: calendar.date_of(decided),
                    kind: StatementLineKind::Credit,
                    invoice_id: against.map(InvoiceId),
                    invoice_number: against
                        .and_then(|id| self.invoices.get(&id))
                        .map(|invoice| invoice.invoice_number.clone()),
                    transaction_id: None,
                    reference: credit.distributor_reference.clone(),
                    credit_id: Some(VendorCreditId(*id)),
                    credit_number: Some(credit.credit_number.clone()),
                    description: credit.description.clone(),
                    amount: accepted,
                });
            }
        }
    }

    pub(crate) fn credit(&self, id: i64) -> Option<VendorCredit> {
        let row = self.credits.get(&id)?;
        Some(VendorCredit {
            id: VendorCreditId(id),
            vendor_id: VendorId(row.vendor_id),
            vendor_name: self.vendors.get(&row.vendor_id).map(|vendor| vendor.name.clone()).unwrap_or_default(),
            branch_id: BranchId(row.branch_id),
            branch_code: self.branch_code(row.branch_id),
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
            applications: self.applications_of(id),
        })
    }

    /// The checks a claim's fields need against what is stored, in the contract's order: an
    /// active vendor, an active branch when it names one (D49), the invoice it names (of the
    /// claim's branch: `branch`), then its number among the vendor's other active credits.
    fn check_claim(
        &self,
        credit: &NewVendorCredit,
        (branch, number_key): (i64, &str),
        except: Option<i64>,
    ) -> StoreResult<()> {
        let vendor_id = credit.vendor_id.get();
        if !self.active_vendor(vendor_id) {
            return Err(StoreError::ParentInactive(Entity::Vendor));
        }
        if credit.branch_id.is_some() && !self.active_branch(branch) {
            return Err(StoreError::ParentInactive(Entity::Branch));
        }
        if let Some(invoice_id) = credit.against_invoice_id {
            let owner = self
                .invoices
                .get(&invoice_id.get())
                .map(|invoice| (VendorId(invoice.vendor_id), BranchId(invoice.branch_id)));
            credit_rules::check_against((credit.vendor_id, BranchId(branch)), owner)?;
        }
        self.check_credit_number(vendor_id, number_key, except)
    }

    fn check_credit_number(&self, vendor_id: i64, number_key: &str, except: Option<i64>) -> StoreResult<()> {
        let taken = self.credits.iter().any(|(id, row)| {
            row.is_active && row.vendor_id == vendor_id && row.number_key == number_key && Some(*id) != except
        });
        if taken { Err(StoreError::Conflict(UniqueKey::CreditNumber)) } else { Ok(()) }
    }

    /// An active credit of a branch in `scope` (D49: another branch's is missing to the writer).
    fn active_credit(&self, id: VendorCreditId, scope: &Scope) -> StoreResult<CreditFacts> {
        self.credit_facts(id.get())
            .filter(|facts| facts.is_active && scope.contains(facts.branch_id))
            .ok_or(StoreError::NotFound(Entity::VendorCredit))
    }
}

impl State {
    /// Imports `credits` (D44): the whole batch is checked first (vendors, numbers, decisions,
    /// and applications over their invoices as the batch leaves them), then written with the
    /// figures each moves.
    pub(crate) fn load_credits(&mut self, credits: Vec<BulkCredit>) -> StoreResult<Vec<VendorCreditId>> {
        let mut keys: HashSet<(i64, String)> = HashSet::new();
        let mut credited: HashMap<i64, Decimal> = HashMap::new();
        let mut plans = Vec::with_capacity(credits.len());
        for imported in &credits {
            let vendor_id = imported.credit.vendor_id.get();
            if !self.vendors.contains_key(&vendor_id) {
                return Err(StoreError::ParentInactive(Entity::Vendor));
            }
            if !self.branches.contains_key(&branch_rules::branch_of_create(imported.credit.branch_id).get()) {
                return Err(StoreError::ParentInactive(Entity::Branch));
            }
            if imported.is_active {
                let number_key = key(&imported.credit.credit_number);
                self.check_credit_number(vendor_id, &number_key, None)?;
                if !keys.insert((vendor_id, number_key)) {
                    return Err(StoreError::Conflict(UniqueKey::CreditNumber));
                }
            }
            let facts = credit_rules::check_import(imported, &self.calendar)?;
            let allocations = match (&imported.application, imported.is_active) {
                (Some(application), true) => {
                    let mut payable = self.payable(vendor_id, application.allocations.as_deref());
                    for invoice in &mut payable {
                        invoice.pending -= credited.get(&invoice.id.get()).copied().unwrap_or_default();
                    }
                    let at = application.date.unwrap_or(imported.created_at);
                    let allocations = credit_rules::plan_application(&facts, application, at, &payable)?;
                    for share in &allocations {
                        *credited.entry(share.invoice_id.get()).or_default() += share.amount.get();
                    }
                    allocations.into_iter().map(|share| (share, at)).collect()
                }
                _ => Vec::new(),
            };
            plans.push(allocations);
        }
        let mut ids = Vec::with_capacity(credits.len());
        for (imported, allocations) in credits.into_iter().zip(plans) {
            let id = self.next("credit");
            let mut touched = vec![Touch::Credit(id)];
            touched.extend(allocations.iter().map(|(share, _)| Touch::Invoice(share.invoice_id.get())));
            let before = self.snapshot(&touched);
            let applied: Decimal = allocations.iter().map(|(share, _)| share.amount.get()).sum();
            let row =
                CreditRow::new(imported.credit, imported.decision, (applied, imported.is_active), imported.created_at);
            self.credits.insert(id, row);
            for (share, date) in allocations {
                let application_id = self.next("credit_application");
                let invoice_id = share.invoice_id.get();
                let row = ApplicationRow {
                    credit_id: id,
                    invoice_id,
                    amount: share.amount,
                    date,
                    is_active: true,
                    created_at: imported.created_at,
                };
                self.credit_applications.insert(application_id, row);
                self.applications_by_credit.entry(id).or_default().push(application_id);
                self.applications_by_invoice.entry(invoice_id).or_default().push(application_id);
                if let Some(invoice) = self.invoices.get_mut(&invoice_id) {
                    invoice.credited += share.amount.get();
                }
            }
            self.keep_figures(before);
            ids.push(VendorCreditId(id));
        }
        Ok(ids)
    }
}

impl CreditStore for MemoryStore {
    async fn insert_credit(&self, credit: NewVendorCredit, ctx: WriteContext) -> StoreResult<VendorCredit> {
        let mut state = self.write();
        let number_key = key(&credit.credit_number);
        let branch = branch_rules::branch_of_create(credit.branch_id).get();
        state.check_claim(&credit, (branch, &number_key), None)?;
        let id = state.next("credit");
        let before = state.snapshot(&[Touch::Credit(id)]);
        state.credits.insert(id, CreditRow::new(credit, None, (Decimal::ZERO, true), ctx.at));
        state.keep_figures(before);
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
        let facts = state.active_credit(id, &ctx.scope)?;
        let number_key = key(&credit.credit_number);
        let branch = credit.branch_id.unwrap_or(facts.branch_id).get();
        state.check_claim(&credit, (branch, &number_key), Some(id.get()))?;
        credit_rules::check_update(&facts, &credit)?;
        let before = state.snapshot(&[Touch::Credit(id.get())]);
        let row = state.credits.get_mut(&id.get()).expect("checked above");
        row.vendor_id = credit.vendor_id.get();
        row.branch_id = branch;
        row.credit_number = credit.credit_number;
        row.number_key = number_key;
        row.kind = credit.kind;
        row.claimed = credit.claimed_amount;
        row.claim_date = credit.claim_date;
        row.against_invoice_id = credit.against_invoice_id.map(InvoiceId::get);
        row.description = credit.description;
        row.updated_at = ctx.at;
        state.keep_figures(before);
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
        credit_rules::check_decision(&state.active_credit(id, &ctx.scope)?, &decision)?;
        let before = state.snapshot(&[Touch::Credit(id.get())]);
        let row = state.credits.get_mut(&id.get()).expect("checked above");
        row.accepted = Some(decision.accepted_amount);
        row.decision_date = Some(decision.decision_date);
        row.distributor_reference = decision.distributor_reference;
        row.updated_at = ctx.at;
        state.keep_figures(before);
        state.finish_write(&ctx, "decide", Entity::VendorCredit, id.get());
        Ok(state.credit(id.get()).expect("just written"))
    }

    async fn delete_credit(&self, id: VendorCreditId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        state.active_credit(id, &ctx.scope)?;
        let mut touched = state.touched_by_applications(Some(id.get()), None);
        touched.push(Touch::Credit(id.get()));
        let before = state.snapshot(&touched);
        // D44: its applications go with it, in the same write.
        let applications = state.applications_by_credit.get(&id.get()).cloned().unwrap_or_default();
        state.release_applications(applications);
        let row = state.credits.get_mut(&id.get()).expect("checked above");
        row.is_active = false;
        row.updated_at = ctx.at;
        state.keep_figures(before);
        state.finish_write(&ctx, "delete", Entity::VendorCredit, id.get());
        Ok(())
    }

    async fn restore_credit(&self, id: VendorCreditId, ctx: WriteContext) -> StoreResult<VendorCredit> {
        let mut state = self.write();
        let row = state
            .credits
            .get(&id.get())
            .filter(|row| !row.is_active && ctx.scope.contains(BranchId(row.branch_id)))
            .ok_or(StoreError::NotFound(Entity::VendorCredit))?;
        let (vendor_id, number_key) = (row.vendor_id, row.number_key.clone());
        restore::check_parent(Entity::Vendor, state.active_vendor(vendor_id))?;
        state.check_credit_number(vendor_id, &number_key, Some(id.get()))?;
        let before = state.snapshot(&[Touch::Credit(id.get())]);
        let row = state.credits.get_mut(&id.get()).expect("checked above");
        row.is_active = true;
        row.updated_at = ctx.at;
        state.keep_figures(before);
        state.finish_write(&ctx, "restore", Entity::VendorCredit, id.get());
        Ok(state.credit(id.get()).expect("just written"))
    }

    async fn list_credits(&self, query: &CreditQuery) -> StoreResult<Page<VendorCredit>> {
        let state = self.read();
        let rows: Vec<(SortKey, i64)> = state
            .credits
            .iter()
            .filter(|(_, row)| {
                query.filter.branches.as_deref().is_none_or(|branches| branches.contains(&BranchId(row.branch_id)))
                    && query.filter.admits(
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
        Ok(page.map(|(_, id)| VendorCredit { applications: Vec::new(), ..state.credit(id).expect("listed") }))
    }

    async fn apply_credit(
        &self,
        id: VendorCreditId,
        application: NewCreditApplication,
        ctx: WriteContext,
    ) -> StoreResult<VendorCredit> {
        let mut state = self.write();
        let facts = state.active_credit(id, &ctx.scope)?;
        let payable = state.payable(facts.vendor_id.get(), application.allocations.as_deref());
        let allocations = credit_rules::plan_application(&facts, &application, ctx.at, &payable)?;
        let mut touched: Vec<Touch> = allocations.iter().map(|share| Touch::Invoice(share.invoice_id.get())).collect();
        touched.push(Touch::Credit(id.get()));
        let before = state.snapshot(&touched);
        let date = application.date.unwrap_or(ctx.at);
        for share in allocations {
            let application_id = state.next("credit_application");
            let invoice_id = share.invoice_id.get();
            state.credit_applications.insert(
                application_id,
                ApplicationRow {
                    credit_id: id.get(),
                    invoice_id,
                    amount: share.amount,
                    date,
                    is_active: true,
                    created_at: ctx.at,
                },
            );
            state.applications_by_credit.entry(id.get()).or_default().push(application_id);
            state.applications_by_invoice.entry(invoice_id).or_default().push(application_id);
            if let Some(invoice) = state.invoices.get_mut(&invoice_id) {
                invoice.credited += share.amount.get();
            }
            if let Some(credit) = state.credits.get_mut(&id.get()) {
                credit.applied += share.amount.get();
            }
        }
        state.keep_figures(before);
        state.finish_write(&ctx, "apply", Entity::VendorCredit, id.get());
        Ok(state.credit(id.get()).expect("just written"))
    }

    async fn undo_application(
        &self,
        credit: VendorCreditId,
        application: CreditApplicationId,
        ctx: WriteContext,
    ) -> StoreResult<()> {
        let mut state = self.write();
        let found = state
            .credit_applications
            .get(&application.get())
            .filter(|row| row.is_active && row.credit_id == credit.get())
            .map(|row| row.invoice_id);
        let (Some(invoice_id), Ok(_)) = (found, state.active_credit(credit, &ctx.scope)) else {
            return Err(StoreError::NotFound(Entity::CreditApplication));
        };
        let before = state.snapshot(&[Touch::Invoice(invoice_id), Touch::Credit(credit.get())]);
        state.release_applications(vec![application.get()]);
        state.keep_figures(before);
        // D47: undoing an application changes its credit.
        let also = [Announcement::credit_released(credit.get())];
        state.finish_announcing(&ctx, ("delete", Entity::CreditApplication, application.get()), &also);
        Ok(())
    }

    async fn credit_summary(&self) -> StoreResult<CreditSummary> {
        let state = self.read();
        let oldest = state
            .credits
            .values()
            .filter(|credit| credit.is_active && credit.accepted.is_none())
            .map(|credit| credit.claim_date)
            .min();
        Ok(CreditSummary::of(&state.figures.totals, oldest))
    }
}
