//! Bank statements in memory (D46): [`BankStatementStore`] for [`MemoryStore`].
//!
//! Under the one lock, an upload gathers the identities of the account's other active lines and
//! the payments no line holds, asks [`bank_rules::plan_statement`] and keeps the plan; a line action
//! asks the rule of its action. `holds` maps each payment held by a line of an active statement
//! to that line, so a payment is held once.

use std::collections::HashSet;

use pharmapay_core::bank::rules as bank_rules;
use pharmapay_core::bank::rules::{ChosenPayment, LineChange, LineFacts, LineIdentity, MatchingNeeds, OpenPayment};
use pharmapay_core::bank::{
    BankLine, BankStatement, LineAction, LineQuery, NewBankStatement, PaymentChoice, StatementQuery, UnclearedPayment,
    UnclearedTotals,
};
use pharmapay_core::branches::HEAD_OFFICE_ID;
use pharmapay_core::events::Announcement;
use pharmapay_core::ids::{BankLineId, BankStatementId, BranchId, VendorId, VendorPaymentId};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::paging::{Page, PageRequest};
use pharmapay_core::store::{BankStatementStore, StoreResult, WriteContext};
use pharmapay_core::transactions::TransactionType;
use pharmapay_core::transactions::holders::Holder;
use pharmapay_core::vendor_payments::NewVendorPayment;
use pharmapay_core::{Amount, Entity, StoreError};

use crate::rows::{LineRow, StatementRow};
use crate::{MemoryStore, State};

impl State {
    pub(crate) fn statement(&self, id: i64) -> Option<BankStatement> {
        let row = self.bank_statements.get(&id)?;
        Some(BankStatement {
            id: BankStatementId(id),
            account: row.account.clone(),
            branch_id: BranchId(row.branch_id),
            branch_code: self.branch_code(row.branch_id),
            from_date: row.from_date,
            to_date: row.to_date,
            counts: row.counts,
            duplicate_lines: row.duplicate_lines,
            deposit_lines: row.deposit_lines,
            skipped_rows: row.skipped_rows,
            is_active: row.is_active,
            created_at: row.created_at,
        })
    }

    fn bank_line(&self, id: i64) -> Option<BankLine> {
        let row = self.bank_lines.get(&id)?;
        Some(BankLine {
            id: BankLineId(id),
            statement_id: BankStatementId(row.statement_id),
            line_number: row.line_number,
            date: row.line.date,
            narration: row.line.narration.clone(),
            reference: row.line.reference.clone(),
            amount: row.line.amount,
            status: row.status,
            matched_by: row.matched_by,
            payment: row.payment,
        })
    }

    /// The branch of a payment on its own: its invoice's (D49).
    fn payment_branch(&self, transaction: i64) -> Option<BranchId> {
        let row = self.transactions.get(&transaction)?;
        self.invoices.get(&row.invoice_id).map(|invoice| BranchId(invoice.branch_id))
    }

    /// The branch of a vendor payment: the one branch of its active parts' invoices, `None`
    /// when they span branches (D49).
    fn vendor_payment_branch(&self, id: i64) -> Option<BranchId> {
        let mut branches = self
            .vendor_payment_parts
            .get(&id)
            .into_iter()
            .flatten()
            .filter(|part| self.transactions.get(part).is_some_and(|row| row.is_active))
            .filter_map(|part| self.payment_branch(*part));
        let first = branches.next()?;
        branches.all(|branch| branch == first).then_some(first)
    }

    /// Every active payment as one payment each (a vendor payment once, D31), with what
    /// matching reads of it, whether held or not.
    fn payments_as_holders(&self) -> Vec<OpenPayment> {
        let mut seen: HashSet<i64> = HashSet::new();
        let mut found = Vec::new();
        for (id, row) in self.transactions.iter().filter(|(_, row)| row.is_active) {
            match row.vendor_payment_id {
                None => found.push(OpenPayment {
                    payment: Holder::Payment((*id).into()),
                    amount: row.amount.get(),
                    date: row.transaction_date,
                    transaction_type: row.transaction_type,
                    reference_key: row.reference.as_ref().map(|reference| reference.key().to_owned()),
                    branch: self.payment_branch(*id),
                }),
                Some(parent) if seen.insert(parent) => {
                    let Some(payment) = self.vendor_payments.get(&parent) else { continue };
                    found.push(OpenPayment {
                        payment: Holder::VendorPayment(VendorPaymentId(parent)),
                        amount: payment.amount.get(),
                        date: payment.transaction_date,
                        transaction_type: payment.transaction_type,
                        reference_key: payment.reference.as_ref().map(|reference| reference.key().to_owned()),
                        branch: self.vendor_payment_branch(parent),
                    });
                }
                Some(_) => {}
            }
        }
        found
    }

    /// The line of an active statement `statement`, as an action finds it, with the
    /// statement's branch.
    fn acted_line(&self, statement: BankStatementId, line: BankLineId) -> StoreResult<(LineFacts, BranchId)> {
        let Some(branch) =
            self.bank_statements.get(&statement.get()).filter(|row| row.is_active).map(|row| BranchId(row.branch_id))
        else {
            return Err(StoreError::NotFound(Entity::BankStatement));
        };
        let row = self
            .bank_lines
            .get(&line.get())
            .filter(|row| row.statement_id == statement.get())
            .ok_or(StoreError::NotFound(Entity::BankLine))?;
        Ok((LineFacts { id: line, status: row.status, matched_by: row.matched_by, payment: row.payment }, branch))
    }

    /// The payment a match by hand names, active, with the line holding it.
    fn chosen(&self, choice: PaymentChoice) -> StoreResult<ChosenPayment> {
        let payment = match choice {
            PaymentChoice::Transaction(id) => {
                let row = self
                    .transactions
                    .get(&id.get())
                    .filter(|row| row.is_active)
                    .ok_or(StoreError::NotFound(Entity::Transaction))?;
                match row.vendor_payment_id {
                    Some(parent) => Holder::VendorPayment(VendorPaymentId(parent)),
                    None => Holder::Payment(id),
                }
            }
            PaymentChoice::VendorPayment(id) => Holder::VendorPayment(id),
        };
        let amount = match payment {
            Holder::Payment(id) => self.transactions.get(&id.get()).map(|row| row.amount.get()),
            Holder::VendorPayment(id) => {
                let active = self
                    .vendor_payment_parts
                    .get(&id.get())
                    .into_iter()
                    .flatten()
                    .any(|part| self.transactions.get(part).is_some_and(|row| row.is_active));
                self.vendor_payments.get(&id.get()).filter(|_| active).map(|row| row.amount.get())
            }
        }
        .ok_or(StoreError::NotFound(Entity::VendorPayment))?;
        let branch = match payment {
            Holder::Payment(id) => self.payment_branch(id.get()),
            Holder::VendorPayment(id) => self.vendor_payment_branch(id.get()),
        };
        let held_by = self.bank_holds.get(&payment).map(|line| BankLineId(*line));
        Ok(ChosenPayment { payment, amount, held_by, branch })
    }

    /// Writes `change` to line `id` and its statement's counts and holds.
    /// Sets back the line holding `payment`, which this write deletes, as core says (D51), with
    /// its statement's counts; answers the statement's event.
    pub(crate) fn release(&mut self, payment: Holder) -> Option<Announcement> {
        let line = self.bank_holds.get(&payment).copied()?;
        self.change_line(line, bank_rules::released());
        Some(Announcement::statement_updated(line))
    }

    fn change_line(&mut self, id: i64, change: LineChange) {
        let Some(row) = self.bank_lines.get_mut(&id) else { return };
        let before = (row.status, row.payment);
        row.status = change.status;
        row.matched_by = change.matched_by;
        row.payment = change.payment;
        let statement = row.statement_id;
        if let Some(held) = before.1 {
            self.bank_holds.remove(&held);
        }
        if let Some(held) = change.payment {
            self.bank_holds.insert(held, id);
        }
        if let Some(statement) = self.bank_statements.get_mut(&statement) {
            statement.counts.moved(before.0, change.status);
        }
    }
}

impl BankStatementStore for MemoryStore {
    async fn insert_statement(&self, statement: NewBankStatement, ctx: WriteContext) -> StoreResult<BankStatement> {
        let mut state = self.write();
        // D49: the engine filled in the default of creates.
        let branch = statement.branch_id.unwrap_or(HEAD_OFFICE_ID);
        if !state.active_branch(branch.get()) {
            return Err(StoreError::ParentInactive(Entity::Branch));
        }
        let needs = MatchingNeeds::of(&statement.lines);
        let existing: HashSet<LineIdentity> = state
            .bank_statements
            .values()
            .filter(|row| row.is_active && row.account == statement.account)
            .flat_map(|row| row.lines.iter())
            .filter_map(|line| state.bank_lines.get(line))
            .map(|row| {
                LineIdentity::new(
                    row.line.date,
                    row.line.amount.get(),
                    row.line.narration.as_deref(),
                    row.line.reference.as_deref(),
                )
            })
            .collect();
        let keys: HashSet<&str> = needs.keys.iter().map(String::as_str).collect();
        let calendar = state.calendar.clone();
        let open: Vec<OpenPayment> = state
            .payments_as_holders()
            .into_iter()
            .filter(|payment| !state.bank_holds.contains_key(&payment.payment))
            .filter(|payment| {
                let by_key = payment.reference_key.as_deref().is_some_and(|key| keys.contains(key));
                let near = payment.transaction_type != TransactionType::Cash
                    && needs.amounts.contains(&payment.amount.normalize())
                    && needs.days.is_some_and(|(first, last)| (first..=last).contains(&calendar.date_of(payment.date)));
                by_key || near
            })
            .collect();
        let plan = bank_rules::plan_statement(branch, statement.lines, &existing, open, &calendar);
        let range = plan.range();
        let id = state.next("bank_statement");
        let mut lines = Vec::with_capacity(plan.lines.len());
        for planned in plan.lines {
            let line_id = state.next("bank_line");
            if let Some(held) = planned.payment {
                state.bank_holds.insert(held, line_id);
            }
            state.bank_lines.insert(
                line_id,
                LineRow {
                    statement_id: id,
                    line_number: planned.line_number,
                    line: planned.line,
                    status: planned.status,
                    matched_by: planned.matched_by,
                    payment: planned.payment,
                },
            );
            lines.push(line_id);
        }
        state.bank_statements.insert(
            id,
            StatementRow {
                account: statement.account,
                branch_id: branch.get(),
                from_date: range.map(|(first, _)| first),
                to_date: range.map(|(_, last)| last),
                counts: plan.counts,
                duplicate_lines: plan.duplicate_lines,
                deposit_lines: statement.deposit_lines,
                skipped_rows: statement.skipped_rows,
                is_active: true,
                created_at: ctx.at,
                lines,
            },
        );
        state.finish_write(&ctx, "create", Entity::BankStatement, id);
        Ok(state.statement(id).expect("just written"))
    }

    async fn get_statement(&self, id: BankStatementId) -> StoreResult<Option<BankStatement>> {
        Ok(self.read().statement(id.get()))
    }

    async fn list_statements(&self, query: &StatementQuery) -> StoreResult<Page<BankStatement>> {
        let state = self.read();
        let kept = |row: &StatementRow| {
            query.filter.branches.as_deref().is_none_or(|branches| branches.contains(&BranchId(row.branch_id)))
        };
        let ids: Vec<i64> = state
            .bank_statements
            .iter()
            .rev()
            .filter(|(_, row)| row.is_active && kept(row))
            .map(|(id, _)| *id)
            .collect();
        Ok(query.page.slice(ids).map(|id| state.statement(id).expect("listed above")))
    }

    async fn uncleared_totals(&self, range: (Timestamp, Timestamp), branch: BranchId) -> StoreResult<UnclearedTotals> {
        let found = self.read().uncleared(range, branch);
        let amount = found.iter().map(|payment| payment.amount.get()).sum();
        Ok(UnclearedTotals { count: found.len() as u64, amount })
    }

    async fn uncleared_payments(
        &self,
        range: (Timestamp, Timestamp),
        branch: BranchId,
        page: PageRequest,
    ) -> StoreResult<Page<UnclearedPayment>> {
        Ok(page.slice(self.read().uncleared(range, branch)))
    }

    async fn list_lines(&self, statement: BankStatementId, query: &LineQuery) -> StoreResult<Page<BankLine>> {
        let state = self.read();
        let row = state
            .bank_statements
            .get(&statement.get())
            .filter(|row| row.is_active)
            .ok_or(StoreError::NotFound(Entity::BankStatement))?;
        let ids: Vec<i64> = row
            .lines
            .iter()
            .copied()
            .filter(|id| {
                query
                    .filter
                    .status
                    .is_none_or(|status| state.bank_lines.get(id).is_some_and(|line| line.status == status))
            })
            .collect();
        Ok(query.page.slice(ids).map(|id| state.bank_line(id).expect("listed above")))
    }

    async fn get_line(&self, statement: BankStatementId, line: BankLineId) -> StoreResult<Option<BankLine>> {
        let state = self.read();
        Ok(state.acted_line(statement, line).ok().and_then(|_| state.bank_line(line.get())))
    }

    async fn act_on_line(
        &self,
        statement: BankStatementId,
        line: BankLineId,
        action: LineAction,
        ctx: WriteContext,
    ) -> StoreResult<BankLine> {
        let mut state = self.write();
        let (facts, branch) = state.acted_line(statement, line)?;
        // D49: another branch's statement is missing to the writer.
        if !bank_rules::in_reach(&ctx.scope, branch) {
            return Err(StoreError::NotFound(Entity::BankStatement));
        }
        let name = action.name();
        let change = match action {
            LineAction::Confirm => bank_rules::confirm(&facts)?,
            LineAction::Match(choice) => {
                let chosen = state.chosen(choice)?;
                let amount = state.bank_lines.get(&line.get()).map(|row| row.line.amount.get()).unwrap_or_default();
                bank_rules::match_by_hand(&facts, branch, amount, choice, &chosen)?
            }
            LineAction::Unmatch => bank_rules::unmatch(),
            LineAction::Ignore { .. } => bank_rules::ignore(),
        };
        state.change_line(line.get(), change);
        state.finish_write(&ctx, name, Entity::BankLine, line.get());
        Ok(state.bank_line(line.get()).expect("acted on above"))
    }

    async fn record_line(
        &self,
        statement: BankStatementId,
        line: BankLineId,
        vendor: VendorId,
        payment: NewVendorPayment,
        ctx: WriteContext,
    ) -> StoreResult<BankLine> {
        let mut state = self.write();
        let (facts, branch) = state.acted_line(statement, line)?;
        if !bank_rules::in_reach(&ctx.scope, branch) {
            return Err(StoreError::NotFound(Entity::BankStatement));
        }
        bank_rules::check_record(&facts)?;
        let id = state.record_vendor_payment(vendor, &payment, (&ctx.scope, ctx.at))?;
        state.audit(ctx.audit("create", Entity::VendorPayment, Some(id)));
        state.change_line(line.get(), bank_rules::recorded(Holder::VendorPayment(VendorPaymentId(id))));
        let also = [Announcement::vendor_payment_recorded(id)];
        state.finish_announcing(&ctx, ("record", Entity::BankLine, line.get()), &also);
        Ok(state.bank_line(line.get()).expect("recorded above"))
    }

    async fn delete_statement(&self, id: BankStatementId, ctx: WriteContext) -> StoreResult<()> {
        let mut state = self.write();
        let row = state
            .bank_statements
            .get_mut(&id.get())
            .filter(|row| row.is_active && bank_rules::in_reach(&ctx.scope, BranchId(row.branch_id)))
            .ok_or(StoreError::NotFound(Entity::BankStatement))?;
        row.is_active = false;
        let lines = row.lines.clone();
        for line in lines {
            if let Some(held) = state.bank_lines.get(&line).and_then(|row| row.payment) {
                state.bank_holds.remove(&held);
            }
        }
        state.finish_write(&ctx, "delete", Entity::BankStatement, id.get());
        Ok(())
    }
}

impl State {
    /// Active UPI and NetBanking payments dated in `[from, to)` that no line holds and a
    /// statement of branch `branch` may match (D49), a vendor payment as one, oldest first, then
    /// payments on their own before vendor payments, by id.
    fn uncleared(&self, (from, to): (Timestamp, Timestamp), branch: BranchId) -> Vec<UnclearedPayment> {
        let state = self;
        let mut found: Vec<UnclearedPayment> = self
            .payments_as_holders()
            .into_iter()
            .filter(|payment| payment.transaction_type != TransactionType::Cash)
            .filter(|payment| bank_rules::may_match(branch, payment.branch))
            .filter(|payment| (from..to).contains(&payment.date) && !state.bank_holds.contains_key(&payment.payment))
            .map(|payment| {
                let reference = match payment.payment {
                    Holder::Payment(id) => state.transactions.get(&id.get()).and_then(|row| row.reference.clone()),
                    Holder::VendorPayment(id) => {
                        state.vendor_payments.get(&id.get()).and_then(|row| row.reference.clone())
                    }
                };
                UnclearedPayment {
                    payment: payment.payment,
                    date: payment.date,
                    amount: Amount::try_from(payment.amount).expect("a kept amount is an amount"),
                    transaction_type: payment.transaction_type,
                    reference: reference.map(|reference| reference.as_str().to_owned()),
                }
            })
            .collect();
        found.sort_by_key(|payment| (payment.date, payment.payment));
        found
    }
}
