//! Bank statements (D46): uploading one matches its lines against the recorded payments in the
//! same store transaction; the lines are then confirmed, matched, unmatched, ignored or turned
//! into vendor payments one by one.

use std::time::Instant;

use jiff::Timestamp;

use tracing::{info, instrument};

use crate::access::{Access, Action, Collection, Principal};
use crate::background::read_in_background;
use crate::bank::StatementUpload;
use crate::bank::read::{StatementError, read_statement};
use crate::bank::rules::{self, SUGGEST_WITHIN_DAYS};
use crate::bank::{
    BankLine, BankStatement, LineAction, LineQuery, LineRecording, MatchRequest, NewBankStatement, PaymentChoice,
    StatementDetail, StatementQuery, UnclearedPayment, UnclearedTotals, read_account,
};
use crate::engine::{PharmaPay, store_error, visible};
use crate::error::{Entity, Error, Result};
use crate::idempotency::{Created, IdempotencyRequest};
use crate::ids::{BankLineId, BankStatementId};
use crate::imports::{MAX_FILE_BYTES, MAX_ROWS};
use crate::paging::{Page, PageRequest};
use crate::store::Store;

impl<S: Store> PharmaPay<S> {
    /// Uploads a bank statement and matches its lines (D46; `BankStatement:Create`): the file
    /// is read on a thread of lower priority (D48); the store keeps the lines no other active
    /// statement of the account has and matches them in the same transaction.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::Validation`] on `account`, or on `file` for an unreadable
    /// file or one without a date or debit column; [`Error::Rows`] for amounts that are no
    /// amounts; [`Error::TooLarge`]; idempotency clashes.
    #[instrument(skip_all)]
    pub async fn upload_statement(
        &self,
        principal: &Principal,
        upload: StatementUpload<'_>,
    ) -> Result<Created<BankStatement>> {
        principal.require(Access::new(Collection::BankStatement, Action::Create))?;
        let StatementUpload { account, branch_id, file, options, idempotency } = upload;
        let account = read_account(account.as_deref()).map_err(Error::Validation)?;
        if file.bytes.len() > MAX_FILE_BYTES {
            return Err(Error::TooLarge(format!("the file is larger than {} MiB", MAX_FILE_BYTES >> 20)));
        }
        let started = Instant::now();
        let read = read_in_background("pharmapay-statement", move || read_statement(&file, &options)).await?.map_err(
            |error| match error {
                StatementError::File(message) => Error::invalid("file", message),
                StatementError::TooManyRows => Error::TooLarge(format!("the file has more than {MAX_ROWS} rows")),
                StatementError::TooLarge(message) => Error::TooLarge(message),
                StatementError::Rows(errors) => Error::Rows(errors),
            },
        )?;
        // D49: a statement that names no branch goes to the caller's default; the head office's
        // statements are chain-wide.
        let branch = self.branch_for_create(principal, branch_id).await?;
        if !rules::in_reach(&principal.scope, branch) {
            principal.require_all_branches()?;
        }
        let branch_id = Some(branch);
        let statement = NewBankStatement {
            account,
            branch_id,
            lines: read.lines,
            deposit_lines: u32::try_from(read.deposit_lines).unwrap_or(u32::MAX),
            skipped_rows: u32::try_from(read.skipped_rows).unwrap_or(u32::MAX),
        };
        let lines = statement.lines.len();
        let ctx = self.announcing(self.ctx_with(principal, statement.audit_changes())).await?;
        let insert = |ctx| async move { self.store.insert_statement(statement, ctx).await.map_err(store_error) };
        let refetch = |id| self.store.get_statement(BankStatementId(id));
        let created = self.create_idempotently(principal, idempotency, ctx, insert, refetch).await?;
        if let Created::New(statement) = &created {
            info!(
                statement_id = statement.id.get(),
                lines,
                matched = statement.counts.matched,
                suggested = statement.counts.suggested,
                duplicates = statement.duplicate_lines,
                elapsed_ms = started.elapsed().as_millis() as u64,
                "bank statement uploaded"
            );
        }
        Ok(created)
    }

    /// Active statements, newest first (D46).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; store failures.
    pub async fn list_statements(&self, principal: &Principal, query: &StatementQuery) -> Result<Page<BankStatement>> {
        principal.require(Access::new(Collection::BankStatement, Action::Read))?;
        let mut query = query.clone();
        // D49: the caller's branches, or those of them the filter names; the head office's
        // statements only for a scope of every branch.
        let named = self.branch_filter(principal, query.filter.branches.as_deref()).await?;
        query.filter.branches = rules::listed_branches(&principal.scope, named.as_deref());
        self.store.list_statements(&query).await.map_err(store_error)
    }

    /// One active statement with how many payments of its range no line holds, and their sum
    /// (D46, D51): active UPI and NetBanking payments dated from three days before its first
    /// line to its last line's day (business calendar, D3). Shown with `BankStatement:Read`
    /// alone; the payments themselves are [`PharmaPay::list_uncleared_payments`]'.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when missing or deleted.
    pub async fn get_statement(&self, principal: &Principal, id: BankStatementId) -> Result<StatementDetail> {
        principal.require(Access::new(Collection::BankStatement, Action::Read))?;
        let statement = self.active_statement(principal, id).await?;
        let uncleared = match self.uncleared_range(&statement).await? {
            Some(range) => self.store.uncleared_totals(range, statement.branch_id).await.map_err(store_error)?,
            None => UnclearedTotals::default(),
        };
        Ok(StatementDetail { statement, uncleared })
    }

    /// A page of the payments of an active statement's range that no line holds (D51; also
    /// `Transaction:Read`, as they show payments and their references): by date, then
    /// payments on their own by id, then vendor payments by id.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when the statement is missing or deleted.
    pub async fn list_uncleared_payments(
        &self,
        principal: &Principal,
        id: BankStatementId,
        page: PageRequest,
    ) -> Result<Page<UnclearedPayment>> {
        principal.require(Access::new(Collection::BankStatement, Action::Read))?;
        principal.require(Access::new(Collection::Transaction, Action::Read))?;
        let statement = self.active_statement(principal, id).await?;
        match self.uncleared_range(&statement).await? {
            Some(range) => self.store.uncleared_payments(range, statement.branch_id, page).await.map_err(store_error),
            None => Ok(page.slice(Vec::new())),
        }
    }

    /// An active statement the caller may see (D49: another branch's is missing to them).
    async fn active_statement(&self, principal: &Principal, id: BankStatementId) -> Result<BankStatement> {
        let shown = |found: &BankStatement| found.is_active && rules::in_reach(&principal.scope, found.branch_id);
        visible(self.store.get_statement(id).await, shown, Entity::BankStatement)
    }

    /// The instants a statement's uncleared payments are dated within, `[from, to)`: from three
    /// days before its first line to the end of its last line's day; `None` for a statement
    /// without lines.
    async fn uncleared_range(&self, statement: &BankStatement) -> Result<Option<(Timestamp, Timestamp)>> {
        let Some((from, to)) = statement.from_date.zip(statement.to_date) else { return Ok(None) };
        let calendar = self.calendar().await?;
        let first = from.saturating_sub(jiff::Span::new().days(SUGGEST_WITHIN_DAYS));
        let after = to.saturating_add(jiff::Span::new().days(1));
        Ok(Some((calendar.start_of(first), calendar.start_of(after))))
    }

    /// A line as `principal` may see it: without `Transaction:Read` it names no payment (D51,
    /// as D48 made the vendor statement need it).
    fn shown(principal: &Principal, mut line: BankLine) -> BankLine {
        if !principal.may(Access::new(Collection::Transaction, Action::Read)) {
            line.payment = None;
        }
        line
    }

    /// A page of an active statement's lines, by line number (D46).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] when the statement is missing or deleted.
    pub async fn list_lines(
        &self,
        principal: &Principal,
        statement: BankStatementId,
        query: &LineQuery,
    ) -> Result<Page<BankLine>> {
        principal.require(Access::new(Collection::BankStatement, Action::Read))?;
        self.active_statement(principal, statement).await?;
        let page = self.store.list_lines(statement, query).await.map_err(store_error)?;
        Ok(page.map(|line| Self::shown(principal, line)))
    }

    /// Confirms, matches by hand, unmatches or ignores a line (D46; `BankStatement:Update`).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] for a statement, line or payment that is
    /// missing or inactive, or a line of another statement; [`Error::Conflict`] when another
    /// line holds the payment; [`Error::Rule`] when only a suggestion may be confirmed.
    #[instrument(skip_all, fields(statement_id = %statement, line_id = %line, action = action.name()))]
    pub async fn act_on_line(
        &self,
        principal: &Principal,
        statement: BankStatementId,
        line: BankLineId,
        action: LineAction,
    ) -> Result<BankLine> {
        principal.require(Access::new(Collection::BankStatement, Action::Update))?;
        let action = action.validate().map_err(Error::Validation)?;
        let mut ctx = self.announcing(self.ctx(principal)).await?;
        match &action {
            LineAction::Ignore { reason } => ctx.reason.clone_from(reason),
            LineAction::Match(choice) => {
                let changes = match choice {
                    PaymentChoice::Transaction(id) => serde_json::json!({ "transactionId": id.get() }),
                    PaymentChoice::VendorPayment(id) => serde_json::json!({ "vendorPaymentId": id.get() }),
                };
                ctx.changes = Some(changes.to_string());
            }
            LineAction::Confirm | LineAction::Unmatch => {}
        }
        let line = self.store.act_on_line(statement, line, action, ctx).await.map_err(store_error)?;
        Ok(Self::shown(principal, line))
    }

    /// `confirm` (D46): a suggested line becomes matched. As [`PharmaPay::act_on_line`].
    ///
    /// # Errors
    /// As [`PharmaPay::act_on_line`].
    pub async fn confirm_line(
        &self,
        principal: &Principal,
        statement: BankStatementId,
        line: BankLineId,
    ) -> Result<BankLine> {
        self.act_on_line(principal, statement, line, LineAction::Confirm).await
    }

    /// `match` (D46): the line holds the payment `request` names, by hand. As
    /// [`PharmaPay::act_on_line`].
    ///
    /// # Errors
    /// As [`PharmaPay::act_on_line`]; [`Error::Validation`] unless exactly one payment is named;
    /// [`Error::Forbidden`] without `Transaction:Read`, since whether a payment id exists is
    /// what a match tells (D51).
    pub async fn match_line(
        &self,
        principal: &Principal,
        statement: BankStatementId,
        line: BankLineId,
        request: MatchRequest,
    ) -> Result<BankLine> {
        principal.require(Access::new(Collection::BankStatement, Action::Update))?;
        principal.require(Access::new(Collection::Transaction, Action::Read))?;
        let choice = request.choice().map_err(Error::Validation)?;
        self.act_on_line(principal, statement, line, LineAction::Match(choice)).await
    }

    /// `unmatch` (D46): the line holds nothing. As [`PharmaPay::act_on_line`].
    ///
    /// # Errors
    /// As [`PharmaPay::act_on_line`].
    pub async fn unmatch_line(
        &self,
        principal: &Principal,
        statement: BankStatementId,
        line: BankLineId,
    ) -> Result<BankLine> {
        self.act_on_line(principal, statement, line, LineAction::Unmatch).await
    }

    /// `ignore` (D46): the line is set aside, `reason` kept in the audit log. As
    /// [`PharmaPay::act_on_line`].
    ///
    /// # Errors
    /// As [`PharmaPay::act_on_line`].
    pub async fn ignore_line(
        &self,
        principal: &Principal,
        statement: BankStatementId,
        line: BankLineId,
        reason: Option<String>,
    ) -> Result<BankLine> {
        self.act_on_line(principal, statement, line, LineAction::Ignore { reason }).await
    }

    /// Records a vendor payment (D31) from a line and matches the line to it (D46): the line's
    /// amount and day, its first candidate key as the reference, UPI when the narration says so
    /// else NetBanking unless `transactionType` says otherwise. Needs `BankStatement:Update`,
    /// `Transaction:Create` and `Transaction:Read` (D51). With `idempotency` (D23, D51), a
    /// retry answers the line as it stands instead of recording again.
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`] (the statement, the line, the vendor);
    /// [`Error::Validation`] for allocations that do not fit (D31); [`Error::Conflict`] for a
    /// reference already recorded (D30); [`Error::Rule`] for a line that holds a payment;
    /// idempotency clashes.
    #[instrument(skip_all, fields(statement_id = %statement, line_id = %line))]
    pub async fn record_line(
        &self,
        principal: &Principal,
        statement: BankStatementId,
        line: BankLineId,
        recording: LineRecording,
        idempotency: Option<&IdempotencyRequest>,
    ) -> Result<Created<BankLine>> {
        principal.require(Access::new(Collection::BankStatement, Action::Update))?;
        principal.require(Access::new(Collection::Transaction, Action::Create))?;
        principal.require(Access::new(Collection::Transaction, Action::Read))?;
        // A statement's branch never changes, so the one read here is the one the store's
        // transaction finds (which checks again that the statement is active).
        let branch = self.active_statement(principal, statement).await?.branch_id;
        let found = self
            .store
            .get_line(statement, line)
            .await
            .map_err(store_error)?
            .ok_or(Error::not_found(Entity::BankLine))?;
        let vendor = recording.vendor_id;
        let payment = rules::recording(
            branch,
            found.amount,
            found.date,
            found.narration.as_deref(),
            found.reference.as_deref(),
            recording,
        );
        let payment = payment.validate(self.tomorrow_start().await?).map_err(Error::Validation)?;
        let ctx = self.announcing(self.ctx_with(principal, payment.audit_changes(vendor))).await?;
        let record = |ctx| async move {
            self.store.record_line(statement, line, vendor, payment, ctx).await.map_err(store_error)
        };
        // The claim keeps the line's id: a retry answers the line as it stands.
        let refetch = |id| self.store.get_line(statement, BankLineId(id));
        self.create_idempotently(principal, idempotency, ctx, record, refetch).await
    }

    /// Soft-deletes a statement and frees the payments its lines held (D46).
    ///
    /// # Errors
    /// [`Error::Forbidden`]; [`Error::NotFound`].
    #[instrument(skip_all, fields(statement_id = %id))]
    pub async fn delete_statement(
        &self,
        principal: &Principal,
        id: BankStatementId,
        reason: Option<String>,
    ) -> Result<()> {
        principal.require(Access::new(Collection::BankStatement, Action::Delete))?;
        let ctx = self.announcing(self.ctx_for_delete(principal, reason)?).await?;
        self.store.delete_statement(id, ctx).await.map_err(store_error)
    }
}
