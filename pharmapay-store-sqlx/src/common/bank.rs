//! Bank statements over SQL (D46): [`BankStatementStore`].
//!
//! Every write holds the bank statements' lock (`Lock::BankStatements`: SQLite's one writer
//! already, an advisory lock on PostgreSQL), taken after the time zone setting and before any
//! payment's lock, so uploads and line actions are decided one at a time. An upload loads the
//! identities of the account's other active lines on its days and the active payments no line
//! holds that its lines could match (by reference key; by amount on the days around them), asks
//! `bank::rules::plan_statement`, and writes the statement and its lines in multi-row statements.
//! A line `holds` its payment while its statement is active; two partial unique indexes are the
//! last guard of one line per payment.

use std::collections::{BTreeSet, HashSet};

use pharmapay_core::BusinessCalendar;
use pharmapay_core::bank::read::StatementLine;
use pharmapay_core::bank::rules as bank_rules;
use pharmapay_core::bank::rules::{ChosenPayment, LineFacts, LineIdentity, MatchingNeeds, OpenPayment};
use pharmapay_core::bank::{
    BankLine, BankStatement, LineAction, LineQuery, NewBankStatement, PaymentChoice, StatementQuery, UnclearedPayment,
    UnclearedTotals,
};
use pharmapay_core::branches::HEAD_OFFICE_ID;
use pharmapay_core::events::Announcement;
use pharmapay_core::ids::{BankLineId, BankStatementId, BranchId, TransactionId, VendorId, VendorPaymentId};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::jiff::civil::Date;
use pharmapay_core::paging::{Page, PageRequest};
use pharmapay_core::store::{BankStatementStore, StoreResult, WriteContext};
use pharmapay_core::transactions::holders::Holder;
use pharmapay_core::transactions::reference::PaymentReference;
use pharmapay_core::vendor_payments::NewVendorPayment;
use pharmapay_core::{Entity, StoreError};
use sqlx::Row;

use super::binds::{Binds, branch_condition, page_limits, rows_in};
use super::branches::lock_active_branch;
use super::figures::pair_of;
use super::lines::{change_line, holder_ids};
use super::records::{LINE_COLUMNS, STATEMENT_COLUMNS, line_from, statement_from, statement_in};
use super::rows::{amount, count, day, instant, micros, transaction_type};
use super::vendor_payments::write_vendor_payment;
use super::{
    Conn, DbRow, IMPORT_CHUNK, JSON_INTS, JSON_TEXTS, Result, SqlStore, answer, commit, commit_announcing,
    insert_audit, lock, refused, row_by_id,
};
use crate::Lock;
use crate::error::Error;

/// A payment row (a payment on its own, or a vendor payment's row) as matching reads it, with
/// its branch (`branch_id`, read by [`PAYMENT_BRANCH`] or [`VENDOR_PAYMENT_BRANCH`]).
fn open_payment(row: &DbRow, payment: Holder) -> Result<OpenPayment> {
    let reference: Option<String> = row.try_get("reference")?;
    Ok(OpenPayment {
        payment,
        amount: amount(row.try_get("amount")?)?.get(),
        date: instant(row.try_get("transaction_date")?)?,
        transaction_type: transaction_type(row.try_get("transaction_type")?)?,
        reference_key: reference.as_deref().map(PaymentReference::key_of),
        branch: row.try_get::<Option<i64>, _>("branch_id")?.map(BranchId),
    })
}

/// The branch of the payment `t`: its invoice's (D49).
const PAYMENT_BRANCH: &str = "(SELECT i.branch_id FROM invoices i WHERE i.id = t.invoice_id) AS branch_id";

/// The branch of the vendor payment `p`: the one branch of its active parts' invoices, NULL
/// when they span branches (D49).
const VENDOR_PAYMENT_BRANCH: &str = "(SELECT CASE WHEN MIN(i.branch_id) = MAX(i.branch_id) THEN MIN(i.branch_id) END \
     FROM transactions t JOIN invoices i ON i.id = t.invoice_id WHERE t.vendor_payment_id = p.id AND t.is_active) \
     AS branch_id";

/// Payments on their own that no line holds.
const FREE_PAYMENT: &str = "t.is_active AND t.vendor_payment_id IS NULL \
     AND NOT EXISTS (SELECT 1 FROM bank_lines l WHERE l.transaction_id = t.id AND l.holds)";

/// Vendor payments with an active part that no line holds.
const FREE_VENDOR_PAYMENT: &str = "EXISTS (SELECT 1 FROM transactions t WHERE t.vendor_payment_id = p.id AND t.is_active) \
     AND NOT EXISTS (SELECT 1 FROM bank_lines l WHERE l.vendor_payment_id = p.id AND l.holds)";

/// The payments other than Cash dated in `[from, to)` that no line holds (D46) and a statement
/// of branch `statement` may match (D49, `bank::rules::matched_branch`: a store's statement
/// only payments of its own invoices, and vendor payments all of whose active parts are):
/// payments on their own (`kind` 0) and vendor payments as one (`kind` 1), each with its id,
/// amount, date, type and reference.
fn uncleared_union(binds: &mut Binds, (from, to): (Timestamp, Timestamp), statement: BranchId) -> String {
    let (from, to) = (binds.int(micros(from)), binds.int(micros(to)));
    let (own, own_parts) = match bank_rules::matched_branch(statement) {
        None => (String::new(), String::new()),
        Some(branch) => {
            let branch = binds.int(branch.get());
            (
                format!(" AND EXISTS (SELECT 1 FROM invoices i WHERE i.id = t.invoice_id AND i.branch_id = {branch})"),
                format!(
                    " AND NOT EXISTS (SELECT 1 FROM transactions o JOIN invoices i ON i.id = o.invoice_id \
                     WHERE o.vendor_payment_id = p.id AND o.is_active AND i.branch_id <> {branch})"
                ),
            )
        }
    };
    format!(
        "SELECT 0 AS kind, t.id, t.amount, t.transaction_date, t.transaction_type, t.reference FROM transactions t \
         WHERE t.transaction_date >= {from} AND t.transaction_date < {to} AND t.transaction_type <> 'Cash' \
         AND {FREE_PAYMENT}{own} \
         UNION ALL SELECT 1 AS kind, p.id, p.amount, p.transaction_date, p.transaction_type, p.reference \
         FROM vendor_payments p WHERE p.transaction_date >= {from} AND p.transaction_date < {to} \
         AND p.transaction_type <> 'Cash' AND {FREE_VENDOR_PAYMENT}{own_parts}"
    )
}

/// An uncleared payment of [`uncleared_union`]'s row.
fn uncleared_from(row: &DbRow) -> Result<UnclearedPayment> {
    let (kind, id): (i32, i64) = (row.try_get("kind")?, row.try_get("id")?);
    let payment =
        if kind == 1 { Holder::VendorPayment(VendorPaymentId(id)) } else { Holder::Payment(TransactionId(id)) };
    Ok(UnclearedPayment {
        payment,
        date: instant(row.try_get("transaction_date")?)?,
        amount: amount(row.try_get("amount")?)?,
        transaction_type: transaction_type(row.try_get("transaction_type")?)?,
        reference: row.try_get("reference")?,
    })
}

/// The active payments no line holds that `needs` names: those whose reference key is a
/// candidate, and those other than Cash of the lines' amounts dated on the days around them.
async fn open_payments(
    conn: &mut Conn,
    needs: &MatchingNeeds,
    calendar: &BusinessCalendar,
) -> Result<Vec<OpenPayment>> {
    let mut singles: Vec<OpenPayment> = Vec::new();
    let mut seen: HashSet<i64> = HashSet::new();
    let mut vendor_payments: BTreeSet<i64> = BTreeSet::new();
    let keys = serde_json::to_string(&needs.keys).unwrap_or_else(|_| "[]".to_owned());
    // By key: payments on their own no line holds, and the vendor payments whose parts carry
    // the key (whether a line holds those is asked below, with the others).
    let sql = format!(
        "SELECT t.id, t.vendor_payment_id, t.amount, t.transaction_date, t.transaction_type, t.reference, \
         {PAYMENT_BRANCH} FROM transactions t WHERE t.is_active AND t.reference_key IN ({JSON_TEXTS}) \
         AND (t.vendor_payment_id IS NOT NULL OR {FREE_PAYMENT})"
    );
    for row in sqlx::query(sqlx::AssertSqlSafe(sql)).bind(keys).fetch_all(&mut *conn).await? {
        match row.try_get::<Option<i64>, _>("vendor_payment_id")? {
            Some(parent) => {
                vendor_payments.insert(parent);
            }
            None => {
                let id: i64 = row.try_get("id")?;
                if seen.insert(id) {
                    singles.push(open_payment(&row, Holder::Payment(TransactionId(id)))?);
                }
            }
        }
    }
    if let Some((first, last)) = needs.days {
        let from = micros(calendar.start_of(first));
        let to = micros(calendar.start_of(last.saturating_add(pharmapay_core::jiff::Span::new().days(1))));
        let amounts: Vec<i64> = needs
            .amounts
            .iter()
            .filter_map(|value| pharmapay_core::Amount::try_from(*value).ok())
            .map(|value| value.to_scaled())
            .collect();
        // One read of the days around the lines, the amounts one bound JSON list: a chain's
        // month holds some 80,000 payments, which an `IN` list of bound values, chunked, read
        // once per chunk.
        let amounts = serde_json::to_string(&amounts).unwrap_or_else(|_| "[]".to_owned());
        let sql = format!(
            "SELECT t.id, t.amount, t.transaction_date, t.transaction_type, t.reference, {PAYMENT_BRANCH} \
             FROM transactions t WHERE t.transaction_date >= {from} AND t.transaction_date < {to} \
             AND t.transaction_type <> 'Cash' AND t.amount IN ({JSON_INTS}) AND {FREE_PAYMENT}"
        );
        for row in sqlx::query(sqlx::AssertSqlSafe(sql)).bind(amounts.clone()).fetch_all(&mut *conn).await? {
            let id: i64 = row.try_get("id")?;
            if seen.insert(id) {
                singles.push(open_payment(&row, Holder::Payment(TransactionId(id)))?);
            }
        }
        let sql = format!(
            "SELECT p.id FROM vendor_payments p WHERE p.transaction_date >= {from} AND p.transaction_date < {to} \
             AND p.transaction_type <> 'Cash' AND p.amount IN ({JSON_INTS})"
        );
        for row in sqlx::query(sqlx::AssertSqlSafe(sql)).bind(amounts).fetch_all(&mut *conn).await? {
            vendor_payments.insert(row.try_get("id")?);
        }
    }
    let ids: Vec<i64> = vendor_payments.into_iter().collect();
    let sql = |list: &str| {
        format!(
            "SELECT p.id, p.amount, p.transaction_date, p.transaction_type, p.reference, {VENDOR_PAYMENT_BRANCH} \
             FROM vendor_payments p WHERE p.id IN ({list}) AND {FREE_VENDOR_PAYMENT}"
        )
    };
    for row in rows_in(conn, &ids, sql).await? {
        let id = VendorPaymentId(row.try_get("id")?);
        singles.push(open_payment(&row, Holder::VendorPayment(id))?);
    }
    Ok(singles)
}

/// The identities of the lines of `account`'s active statements dated `days`.
async fn existing_lines(conn: &mut Conn, account: &str, days: Option<(Date, Date)>) -> Result<HashSet<LineIdentity>> {
    let Some((first, last)) = days else { return Ok(HashSet::new()) };
    let rows = sqlx::query(
        "SELECT l.date, l.amount, l.narration, l.reference FROM bank_statements s \
         JOIN bank_lines l ON l.statement_id = s.id \
         WHERE s.is_active AND s.account = $1 AND l.date >= $2 AND l.date <= $3",
    )
    .bind(account.to_owned())
    .bind(first.to_string())
    .bind(last.to_string())
    .fetch_all(&mut *conn)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(LineIdentity::new(
                day(&row.try_get::<String, _>("date")?)?,
                amount(row.try_get("amount")?)?.get(),
                row.try_get::<Option<String>, _>("narration")?.as_deref(),
                row.try_get::<Option<String>, _>("reference")?.as_deref(),
            ))
        })
        .collect()
}

async fn line_in(conn: &mut Conn, statement: i64, line: i64) -> Result<Option<BankLine>> {
    let sql = format!("SELECT {LINE_COLUMNS} FROM bank_lines WHERE id = $1 AND statement_id = $2");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(line).bind(statement).fetch_optional(&mut *conn).await?;
    row.as_ref().map(line_from).transpose()
}

/// The line `line` of the active statement `statement`, as an action finds it, with the
/// statement's branch (D49).
async fn acted_line(conn: &mut Conn, statement: BankStatementId, line: BankLineId) -> Result<(BankLine, BranchId)> {
    let sql = "SELECT is_active, branch_id FROM bank_statements WHERE id = $1";
    let branch = match row_by_id(conn, sql, statement.get()).await? {
        Some(row) if row.try_get::<bool, _>("is_active")? => BranchId(row.try_get("branch_id")?),
        _ => return refused(StoreError::NotFound(Entity::BankStatement)),
    };
    match line_in(conn, statement.get(), line.get()).await? {
        Some(found) => Ok((found, branch)),
        None => refused(StoreError::NotFound(Entity::BankLine)),
    }
}

/// The payment a match by hand names, active, with its amount and the line holding it.
async fn chosen(conn: &mut Conn, choice: PaymentChoice) -> Result<ChosenPayment> {
    let payment = match choice {
        PaymentChoice::Transaction(id) => {
            let row = row_by_id(conn, "SELECT vendor_payment_id, is_active FROM transactions WHERE id = $1", id.get())
                .await?;
            match row {
                Some(row) if row.try_get::<bool, _>("is_active")? => {
                    match row.try_get::<Option<i64>, _>("vendor_payment_id")? {
                        Some(parent) => Holder::VendorPayment(VendorPaymentId(parent)),
                        None => Holder::Payment(id),
                    }
                }
                _ => return refused(StoreError::NotFound(Entity::Transaction)),
            }
        }
        PaymentChoice::VendorPayment(id) => Holder::VendorPayment(id),
    };
    let (amount_sql, holder_sql, id) = match payment {
        Holder::Payment(id) => (
            concat!(
                "SELECT t.amount, ",
                "(SELECT i.branch_id FROM invoices i WHERE i.id = t.invoice_id) AS branch_id ",
                "FROM transactions t WHERE t.id = $1"
            ),
            "SELECT id FROM bank_lines WHERE holds AND transaction_id = $1",
            id.get(),
        ),
        Holder::VendorPayment(id) => (
            concat!(
                "SELECT p.amount, (SELECT CASE WHEN MIN(i.branch_id) = MAX(i.branch_id) THEN MIN(i.branch_id) END ",
                "FROM transactions t JOIN invoices i ON i.id = t.invoice_id WHERE t.vendor_payment_id = p.id ",
                "AND t.is_active) AS branch_id FROM vendor_payments p WHERE p.id = $1 ",
                "AND EXISTS (SELECT 1 FROM transactions t WHERE t.vendor_payment_id = p.id AND t.is_active)"
            ),
            "SELECT id FROM bank_lines WHERE holds AND vendor_payment_id = $1",
            id.get(),
        ),
    };
    let Some(row) = row_by_id(conn, amount_sql, id).await? else {
        return refused(StoreError::NotFound(Entity::VendorPayment));
    };
    let held_by = row_by_id(conn, holder_sql, id).await?.map(|row| row.try_get::<i64, _>(0)).transpose()?;
    Ok(ChosenPayment {
        payment,
        amount: amount(row.try_get("amount")?)?.get(),
        held_by: held_by.map(BankLineId),
        branch: row.try_get::<Option<i64>, _>("branch_id")?.map(BranchId),
    })
}

/// Inserts the planned lines of statement `id` in multi-row statements.
async fn insert_lines(conn: &mut Conn, id: i64, lines: &[bank_rules::PlannedLine]) -> Result<()> {
    for chunk in lines.chunks(IMPORT_CHUNK) {
        let mut binds = Binds::in_order();
        let rows: Vec<String> = chunk
            .iter()
            .map(|planned| {
                let (transaction, vendor_payment) = holder_ids(planned.payment);
                let line: &StatementLine = &planned.line;
                let values = [
                    binds.int(id),
                    binds.int(i64::from(planned.line_number)),
                    binds.text(line.date.to_string()),
                    binds.opt_text(line.narration.clone()),
                    binds.opt_text(line.reference.clone()),
                    binds.int(line.amount.to_scaled()),
                    binds.text(planned.status.name()),
                    binds.opt_text(planned.matched_by.map(|by| by.name().to_owned())),
                    binds.int(transaction),
                    binds.int(vendor_payment),
                    binds.flag(planned.payment.is_some()),
                ];
                format!("({})", values.join(", "))
            })
            .collect();
        let sql = format!(
            "INSERT INTO bank_lines (statement_id, line_number, date, narration, reference, amount, status, matched_by, \
             transaction_id, vendor_payment_id, holds) VALUES {}",
            rows.join(", ")
        );
        binds.query(sql).execute(&mut *conn).await?;
    }
    Ok(())
}

impl BankStatementStore for SqlStore {
    async fn insert_statement(&self, statement: NewBankStatement, ctx: WriteContext) -> StoreResult<BankStatement> {
        answer(|| async {
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            // D48, D49: the branch it names (the engine filled in the default), then the
            // statements' lock.
            let branch = statement.branch_id.unwrap_or(HEAD_OFFICE_ID);
            if !lock_active_branch(&mut db_tx, branch).await? {
                return refused(StoreError::ParentInactive(Entity::Branch));
            }
            lock(&mut db_tx, Lock::BankStatements).await?;
            let needs = MatchingNeeds::of(&statement.lines);
            let days = MatchingNeeds::range(&statement.lines);
            let existing = existing_lines(&mut db_tx, &statement.account, days).await?;
            let open = open_payments(&mut db_tx, &needs, &calendar).await?;
            let plan = bank_rules::plan_statement(branch, statement.lines.clone(), &existing, open, &calendar);
            let (counts, range) = (plan.counts, plan.range());
            let row = sqlx::query(
                "INSERT INTO bank_statements (account, from_date, to_date, matched, amount_differs, suggested, \
                 unmatched, ignored, duplicate_lines, deposit_lines, skipped_rows, is_active, created_at, branch_id) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, TRUE, $12, $13) RETURNING id",
            )
            .bind(statement.account.clone())
            .bind(range.map(|(first, _)| first.to_string()))
            .bind(range.map(|(_, last)| last.to_string()))
            .bind(i64::from(counts.matched))
            .bind(i64::from(counts.amount_differs))
            .bind(i64::from(counts.suggested))
            .bind(i64::from(counts.unmatched))
            .bind(i64::from(counts.ignored))
            .bind(i64::from(plan.duplicate_lines))
            .bind(i64::from(statement.deposit_lines))
            .bind(i64::from(statement.skipped_rows))
            .bind(micros(ctx.at))
            .bind(branch.get())
            .fetch_one(&mut *db_tx)
            .await?;
            let id: i64 = row.try_get(0)?;
            insert_lines(&mut db_tx, id, &plan.lines).await?;
            let kept = statement_in(&mut db_tx, id).await?;
            commit(db_tx, &ctx, "create", Entity::BankStatement, id, kept).await
        })
        .await
    }

    async fn get_statement(&self, id: BankStatementId) -> StoreResult<Option<BankStatement>> {
        self.answer_read(|| async move { statement_in(&mut *self.read().await?, id.get()).await }).await
    }

    async fn list_statements(&self, query: &StatementQuery) -> StoreResult<Page<BankStatement>> {
        self.answer_read(|| async move {
            let (limit, offset) = page_limits(query.page);
            // D49: only the branches the filter keeps.
            let kept = |binds: &mut Binds| match &query.filter.branches {
                Some(branches) => format!("is_active AND {}", branch_condition(binds, "branch_id", branches)),
                None => "is_active".to_owned(),
            };
            let mut binds = Binds::default();
            let filter = kept(&mut binds);
            let sql = format!(
                "SELECT (SELECT COUNT(*) FROM bank_statements WHERE {filter}) AS total_count, {STATEMENT_COLUMNS} \
                 FROM bank_statements WHERE {filter} ORDER BY id DESC LIMIT {limit} OFFSET {offset}"
            );
            let recount = || {
                let mut binds = Binds::default();
                let filter = kept(&mut binds);
                binds.query(format!("SELECT COUNT(*) FROM bank_statements WHERE {filter}"))
            };
            self.page(binds, sql, query.page, statement_from, recount).await
        })
        .await
    }

    async fn uncleared_totals(&self, range: (Timestamp, Timestamp), branch: BranchId) -> StoreResult<UnclearedTotals> {
        self.answer_read(|| async move {
            let mut conn = self.read().await?;
            let mut binds = Binds::default();
            let sql = format!(
                "SELECT COUNT(*) AS count, CAST(COALESCE(SUM(amount / 4294967296), 0) AS BIGINT) AS amount_high, \
                 CAST(COALESCE(SUM(amount % 4294967296), 0) AS BIGINT) AS amount_low FROM ({}) u",
                uncleared_union(&mut binds, range, branch)
            );
            let row = binds.query(sql).fetch_one(&mut *conn).await?;
            Ok(UnclearedTotals { count: count(row.try_get("count")?), amount: pair_of(&row, pair_columns!("amount"))? })
        })
        .await
    }

    async fn uncleared_payments(
        &self,
        range: (Timestamp, Timestamp),
        branch: BranchId,
        page: PageRequest,
    ) -> StoreResult<Page<UnclearedPayment>> {
        self.answer_read(|| async move {
            let mut binds = Binds::default();
            let union = uncleared_union(&mut binds, range, branch);
            let (limit, offset) = page_limits(page);
            let sql = format!(
                "SELECT COUNT(*) OVER () AS total_count, u.* FROM ({union}) u \
                 ORDER BY u.transaction_date, u.kind, u.id LIMIT {limit} OFFSET {offset}"
            );
            let recount = move || {
                let mut binds = Binds::default();
                let union = uncleared_union(&mut binds, range, branch);
                binds.query(format!("SELECT COUNT(*) FROM ({union}) u"))
            };
            self.page(binds, sql, page, uncleared_from, recount).await
        })
        .await
    }

    async fn list_lines(&self, statement: BankStatementId, query: &LineQuery) -> StoreResult<Page<BankLine>> {
        self.answer_read(|| async move {
            let active = {
                let mut conn = self.read().await?;
                row_by_id(&mut conn, "SELECT is_active FROM bank_statements WHERE id = $1", statement.get())
                    .await?
                    .map(|row| row.try_get::<bool, _>("is_active"))
                    .transpose()?
            };
            if active != Some(true) {
                return refused(StoreError::NotFound(Entity::BankStatement));
            }
            let conditions = |binds: &mut Binds| {
                let mut parts = vec![format!("statement_id = {}", binds.int(statement.get()))];
                if let Some(status) = query.filter.status {
                    parts.push(format!("status = {}", binds.text(status.name())));
                }
                parts.join(" AND ")
            };
            let mut binds = Binds::default();
            let filter = conditions(&mut binds);
            let (limit, offset) = page_limits(query.page);
            let sql = format!(
                "SELECT (SELECT COUNT(*) FROM bank_lines WHERE {filter}) AS total_count, {LINE_COLUMNS} \
                 FROM bank_lines WHERE {filter} ORDER BY line_number LIMIT {limit} OFFSET {offset}"
            );
            let recount = || {
                let mut binds = Binds::default();
                let filter = conditions(&mut binds);
                binds.query(format!("SELECT COUNT(*) FROM bank_lines WHERE {filter}"))
            };
            self.page(binds, sql, query.page, line_from, recount).await
        })
        .await
    }

    async fn get_line(&self, statement: BankStatementId, line: BankLineId) -> StoreResult<Option<BankLine>> {
        self.answer_read(|| async move {
            let mut conn = self.read().await?;
            match acted_line(&mut conn, statement, line).await {
                Ok((found, _)) => Ok(Some(found)),
                Err(Error::Refused(StoreError::NotFound(_))) => Ok(None),
                Err(other) => Err(other),
            }
        })
        .await
    }

    async fn act_on_line(
        &self,
        statement: BankStatementId,
        line: BankLineId,
        action: LineAction,
        ctx: WriteContext,
    ) -> StoreResult<BankLine> {
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::BankStatements).await?;
            let (found, branch) = acted_line(&mut db_tx, statement, line).await?;
            // D49: another branch's statement is missing to the writer.
            if !bank_rules::in_reach(&ctx.scope, branch) {
                return refused(StoreError::NotFound(Entity::BankStatement));
            }
            let facts = LineFacts::of(&found);
            let change = match &action {
                LineAction::Confirm => bank_rules::confirm(&facts)?,
                LineAction::Match(choice) => {
                    let chosen = chosen(&mut db_tx, *choice).await?;
                    bank_rules::match_by_hand(&facts, branch, found.amount.get(), *choice, &chosen)?
                }
                LineAction::Unmatch => bank_rules::unmatch(),
                LineAction::Ignore { .. } => bank_rules::ignore(),
            };
            change_line(&mut db_tx, &found, change).await?;
            let changed = line_in(&mut db_tx, statement.get(), line.get()).await?;
            commit(db_tx, &ctx, action.name(), Entity::BankLine, line.get(), changed).await
        })
        .await
    }

    async fn record_line(
        &self,
        statement: BankStatementId,
        line: BankLineId,
        vendor: VendorId,
        payment: NewVendorPayment,
        ctx: WriteContext,
    ) -> StoreResult<BankLine> {
        answer(|| async {
            let (mut db_tx, calendar) = self.begin_with_calendar().await?;
            lock(&mut db_tx, Lock::BankStatements).await?;
            let (found, branch) = acted_line(&mut db_tx, statement, line).await?;
            if !bank_rules::in_reach(&ctx.scope, branch) {
                return refused(StoreError::NotFound(Entity::BankStatement));
            }
            bank_rules::check_record(&LineFacts::of(&found))?;
            let (id, change) =
                write_vendor_payment(&mut db_tx, &calendar, vendor, &payment, (&ctx.scope, ctx.at)).await?;
            insert_audit(&mut db_tx, ctx.audit("create", Entity::VendorPayment, Some(id))).await?;
            change_line(&mut db_tx, &found, bank_rules::recorded(Holder::VendorPayment(VendorPaymentId(id)))).await?;
            let changed = line_in(&mut db_tx, statement.get(), line.get()).await?;
            let also = [Announcement::vendor_payment_recorded(id)];
            commit_announcing(db_tx, &ctx, ("record", Entity::BankLine, line.get()), (changed, Some(&change)), &also)
                .await
        })
        .await
    }

    async fn delete_statement(&self, id: BankStatementId, ctx: WriteContext) -> StoreResult<()> {
        answer(|| async {
            let mut db_tx = self.begin_locked(Lock::BankStatements).await?;
            let branch = row_by_id(&mut db_tx, "SELECT branch_id FROM bank_statements WHERE id = $1", id.get()).await?;
            let branch = branch.map(|row| row.try_get::<i64, _>("branch_id")).transpose()?;
            // D49: another branch's statement is missing to the writer.
            if branch.is_none_or(|branch| !bank_rules::in_reach(&ctx.scope, BranchId(branch))) {
                return refused(StoreError::NotFound(Entity::BankStatement));
            }
            let deleted = sqlx::query("UPDATE bank_statements SET is_active = FALSE WHERE id = $1 AND is_active")
                .bind(id.get())
                .execute(&mut *db_tx)
                .await?
                .rows_affected();
            if deleted == 0 {
                return refused(StoreError::NotFound(Entity::BankStatement));
            }
            sqlx::query("UPDATE bank_lines SET holds = FALSE WHERE statement_id = $1 AND holds")
                .bind(id.get())
                .execute(&mut *db_tx)
                .await?;
            commit(db_tx, &ctx, "delete", Entity::BankStatement, id.get(), Some(())).await
        })
        .await
    }
}
