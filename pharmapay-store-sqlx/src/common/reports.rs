//! Settings, dashboard figures, the audit log and exports: [`ReportStore`] over SQL. Dashboard
//! figures read the kept figures (D12, D41): the totals row, a month's day rows, the vendors
//! index by balance; a new `TimeZone` recounts the day figures in its own transaction. Exports
//! are keyset pages in id order (D26).

use pharmapay_core::BusinessCalendar;
use pharmapay_core::figures::{DayFigures, OpenFigures, day_key};
use pharmapay_core::ids::{InvoiceId, TransactionId, VendorCreditId, VendorId};
use pharmapay_core::invoices::{Invoice, InvoiceFilter};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::jiff::civil::Date;
use pharmapay_core::paging::PagePlace;
use pharmapay_core::reports::aging::{Aging, AgingBounds};
use pharmapay_core::reports::audit::{AuditEntry, AuditQuery};
use pharmapay_core::reports::dashboard::SummaryFigures;
use pharmapay_core::reports::dashboard::TopVendor;
use pharmapay_core::reports::setting::Setting;
use pharmapay_core::reports::statement::{
    StatementEntry, StatementFigures, StatementLineKind, StatementPage, StatementRows,
};
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::{ReportStore, StoreResult, WriteContext};
use pharmapay_core::transactions::{Transaction, TransactionFilter};
use pharmapay_core::vendors::licence::LicenceHolder;
use pharmapay_core::vendors::{Vendor, VendorFilter};
use pharmapay_core::{Entity, Page, PageRequest, StoreError};
use sqlx::Row;

use super::aging::AgingOf;
use super::binds::{Binds, conditions, instant_range, page_limits};
use super::figures::{self, pair_of};
use super::invoices::invoice_conditions;
use super::rows::{
    amount, audit_from, count, instant, invoice_from, micros, setting_from, transaction_from, vendor_from,
};
use super::transactions::transaction_conditions;
use super::vendors::vendor_conditions;
use super::{
    Conn, DbRow, LICENCE_HOLDERS, LICENCE_HOLDERS_PACKED, READ_SNAPSHOT, Result, SqlStore, answer, insert_audit,
    refused,
};
use crate::error::Error;
use crate::statements;

/// What an export reads (D26): its columns and sources, and the id column its cursor follows.
struct Export {
    select: &'static str,
    id: &'static str,
}

const VENDORS: Export = Export { select: concat!("SELECT ", vendor_columns!(), " FROM vendors v"), id: "v.id" };
const INVOICES: Export =
    Export { select: concat!("SELECT ", invoice_columns!(), " FROM ", invoices_with_vendor!()), id: "i.id" };
const TRANSACTIONS: Export =
    Export { select: concat!("SELECT ", transaction_columns!(), " FROM ", transactions_with_invoice!()), id: "t.id" };

impl SqlStore {
    /// One batch of an export: the rows of `export` that match `conditions` and have ids above
    /// `after`, at most `limit`, in id order (keyset pages, so a report of any size streams).
    async fn export<T>(
        &self,
        export: &Export,
        conditions: impl FnOnce(&mut Binds) -> String,
        (after, limit): (Option<i64>, u32),
        decode: impl Fn(&DbRow) -> Result<T>,
    ) -> Result<Vec<T>> {
        let Export { select, id } = export;
        let mut binds = Binds::default();
        let conditions = conditions(&mut binds);
        let after = binds.int(after.unwrap_or(i64::MIN));
        let limit = binds.int(i64::from(limit));
        let sql = format!("{select} WHERE {conditions} AND {id} > {after} ORDER BY {id} LIMIT {limit}");
        let rows = binds.query(sql).fetch_all(&mut *self.read().await?).await?;
        rows.iter().map(decode).collect()
    }
}

impl SqlStore {
    /// Vendor `vendor_id`'s statement lines (D35) dated in `[from, before)`, in any order: its
    /// active invoices, along `invoices_by_vendor_date`, the active payments of its active
    /// invoices, along `transactions_by_vendor_date`, and its active credits with something
    /// accepted, by decision date, along `vendor_credits_by_vendor` (D44).
    async fn statement_lines(
        conn: &mut Conn,
        vendor_id: VendorId,
        (from, before): (Timestamp, Timestamp),
        calendar: &BusinessCalendar,
    ) -> Result<Vec<StatementEntry>> {
        let mut entries = Vec::new();
        let invoices = sqlx::query(
            "SELECT id, invoice_number, invoice_date, description, amount FROM invoices \
                 WHERE vendor_id = $1 AND is_active AND invoice_date >= $2 AND invoice_date < $3",
        )
        .bind(vendor_id.get())
        .bind(micros(from))
        .bind(micros(before))
        .fetch_all(&mut *conn)
        .await?;
        for row in &invoices {
            entries.push(StatementEntry {
                date: calendar.date_of(instant(row.try_get("invoice_date")?)?),
                kind: StatementLineKind::Invoice,
                invoice_id: Some(InvoiceId(row.try_get("id")?)),
                invoice_number: Some(row.try_get("invoice_number")?),
                transaction_id: None,
                reference: None,
                credit_id: None,
                credit_number: None,
                description: row.try_get("description")?,
                amount: amount(row.try_get("amount")?)?.get(),
            });
        }
        let payments = sqlx::query(
            "SELECT t.id, t.invoice_id, i.invoice_number, t.transaction_date, t.reference, t.description, t.amount \
                 FROM transactions t JOIN invoices i ON i.id = t.invoice_id \
                 WHERE t.vendor_id = $1 AND t.transaction_date >= $2 AND t.transaction_date < $3 AND t.is_active \
                 AND i.is_active",
        )
        .bind(vendor_id.get())
        .bind(micros(from))
        .bind(micros(before))
        .fetch_all(&mut *conn)
        .await?;
        for row in &payments {
            entries.push(StatementEntry {
                date: calendar.date_of(instant(row.try_get("transaction_date")?)?),
                kind: StatementLineKind::Payment,
                invoice_id: Some(InvoiceId(row.try_get("invoice_id")?)),
                invoice_number: Some(row.try_get("invoice_number")?),
                transaction_id: Some(TransactionId(row.try_get("id")?)),
                reference: row.try_get("reference")?,
                credit_id: None,
                credit_number: None,
                description: row.try_get("description")?,
                amount: amount(row.try_get("amount")?)?.get(),
            });
        }
        let credits = sqlx::query(
            "SELECT c.id, c.credit_number, c.decision_date, c.accepted, c.distributor_reference, c.description, \
             c.against_invoice_id, i.invoice_number FROM vendor_credits c \
             LEFT JOIN invoices i ON i.id = c.against_invoice_id \
             WHERE c.vendor_id = $1 AND c.is_active AND c.decision_date >= $2 AND c.decision_date < $3 \
             AND c.accepted > 0",
        )
        .bind(vendor_id.get())
        .bind(micros(from))
        .bind(micros(before))
        .fetch_all(&mut *conn)
        .await?;
        for row in &credits {
            entries.push(StatementEntry {
                date: calendar.date_of(instant(row.try_get("decision_date")?)?),
                kind: StatementLineKind::Credit,
                invoice_id: row.try_get::<Option<i64>, _>("against_invoice_id")?.map(InvoiceId),
                invoice_number: row.try_get("invoice_number")?,
                transaction_id: None,
                reference: row.try_get("distributor_reference")?,
                credit_id: Some(VendorCreditId(row.try_get("id")?)),
                credit_number: Some(row.try_get("credit_number")?),
                description: row.try_get("description")?,
                amount: amount(row.try_get("accepted")?)?.get(),
            });
        }
        Ok(entries)
    }
}

impl ReportStore for SqlStore {
    async fn list_settings(&self) -> StoreResult<Vec<Setting>> {
        self.answer_read(|| async move {
            self.all("SELECT key, value, description FROM settings ORDER BY key", setting_from).await
        })
        .await
    }

    async fn get_setting(&self, key: &str) -> StoreResult<Option<Setting>> {
        self.answer_read(|| async move {
            let query = sqlx::query("SELECT key, value, description FROM settings WHERE key = $1");
            self.optional(query.bind(key.to_owned()), setting_from).await
        })
        .await
    }

    async fn update_setting(
        &self,
        key: &str,
        value: String,
        ctx: WriteContext,
        days: Option<&BusinessCalendar>,
    ) -> StoreResult<Setting> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let row = sqlx::query("UPDATE settings SET value = $2 WHERE key = $1 RETURNING key, value, description")
                .bind(key.to_owned())
                .bind(value.clone())
                .fetch_optional(&mut *db_tx)
                .await?;
            let Some(row) = row else { return refused(StoreError::NotFound(Entity::Setting)) };
            let setting = setting_from(&row)?;
            if let Some(calendar) = days {
                figures::recount_days(&mut db_tx, calendar).await?;
            }
            // A setting has no numeric id: its audit entry names the entity alone.
            insert_audit(&mut db_tx, ctx.audit("update", Entity::Setting, None)).await?;
            db_tx.commit().await?;
            Ok(setting)
        })
        .await
    }

    async fn dashboard_figures(&self, first_recent_day: Date) -> StoreResult<SummaryFigures> {
        self.answer_read(|| async move {
            let row = sqlx::query(statements::DASHBOARD_FIGURES)
                .bind(day_key(first_recent_day))
                .fetch_one(&mut *self.read().await?)
                .await?;
            Ok(SummaryFigures {
                totals: figures::ledger_totals_from(&row)?,
                recent: DayFigures {
                    payments: row.try_get("recent_payments")?,
                    amount: pair_of(&row, pair_columns!("recent_amount"))?,
                },
            })
        })
        .await
    }

    async fn top_vendors(&self, limit: u32) -> StoreResult<Vec<TopVendor>> {
        self.answer_read(|| async move {
            let rows =
                sqlx::query(statements::TOP_VENDORS).bind(i64::from(limit)).fetch_all(&mut *self.read().await?).await?;
            rows.iter()
                .map(|row| {
                    Ok(TopVendor {
                        vendor_id: VendorId(row.try_get("id")?),
                        vendor_name: row.try_get("name")?,
                        outstanding_balance: pair_of(row, pair_columns!("outstanding"))?,
                        total_invoices: count(row.try_get("active_invoices")?),
                    })
                })
                .collect()
        })
        .await
    }

    async fn recent_invoices(&self, limit: u32, today_start: Timestamp) -> StoreResult<Vec<Invoice>> {
        self.answer_read(|| async move {
            let rows = sqlx::query(statements::RECENT_INVOICES)
                .bind(i64::from(limit))
                .fetch_all(&mut *self.read().await?)
                .await?;
            rows.iter().map(|row| invoice_from(row, today_start)).collect()
        })
        .await
    }

    async fn open_invoices_due(&self, windows: &[(Timestamp, Timestamp)]) -> StoreResult<Vec<OpenFigures>> {
        self.answer_read(|| async move {
            if windows.is_empty() {
                return Ok(Vec::new());
            }
            let mut binds = Binds::default();
            let parts: Vec<String> = windows
                .iter()
                .enumerate()
                .map(|(index, (from, before))| {
                    format!(
                        "SELECT CAST({index} AS BIGINT) AS window_index, \
                         CAST(COALESCE(SUM(open_count), 0) AS BIGINT) AS invoices, \
                         CAST(COALESCE(SUM(pending_high), 0) AS BIGINT) AS pending_high, \
                         CAST(COALESCE(SUM(pending_low), 0) AS BIGINT) AS pending_low \
                         FROM invoice_open_counts WHERE due_date >= {} AND due_date < {}",
                        binds.int(micros(*from)),
                        binds.int(micros(*before))
                    )
                })
                .collect();
            let rows = binds.query(parts.join(" UNION ALL ")).fetch_all(&mut *self.read().await?).await?;
            let mut open = vec![OpenFigures::default(); windows.len()];
            for row in &rows {
                let index = usize::try_from(row.try_get::<i64, _>("window_index")?).unwrap_or(usize::MAX);
                if let Some(window) = open.get_mut(index) {
                    *window = OpenFigures {
                        invoices: row.try_get("invoices")?,
                        pending: pair_of(row, pair_columns!("pending"))?,
                    };
                }
            }
            Ok(open)
        })
        .await
    }

    async fn day_figures(&self, first: Date, last: Date) -> StoreResult<Vec<(Date, DayFigures)>> {
        self.answer_read(|| async move {
            let rows = sqlx::query(statements::DAY_FIGURES)
                .bind(day_key(first))
                .bind(day_key(last))
                .fetch_all(&mut *self.read().await?)
                .await?;
            rows.iter().map(figures::day_from).collect()
        })
        .await
    }

    async fn aging(&self, bounds: &AgingBounds, vendor_id: Option<VendorId>) -> StoreResult<Aging> {
        self.answer_read(|| async move {
            let aging = match vendor_id {
                Some(vendor_id) => {
                    Self::aging_rows(&mut *self.read().await?, bounds, AgingOf::These(&[vendor_id])).await?
                }
                None => {
                    // Across every vendor of a chain this reads every open invoice: a long read.
                    let mut reader = self.read_long().await?;
                    let mut snapshot = Self::long_snapshot(&mut reader).await?;
                    let aging = Self::aging_rows(&mut snapshot, bounds, AgingOf::Every).await?;
                    // A snapshot that only read ends by being dropped (see `statement_rows`).
                    drop(snapshot);
                    aging
                }
            };
            Ok(aging.finish(bounds.as_of))
        })
        .await
    }

    async fn todays_aging_page(&self, bounds: &AgingBounds, page: PageRequest) -> StoreResult<Aging> {
        self.answer_read(|| async move {
            let mut reader = self.read().await?;
            let mut snapshot = reader.begin_snapshot(READ_SNAPSHOT).await?;
            let aging = Self::todays_aging_page_in(&mut snapshot, bounds, page).await?;
            // A snapshot that only read ends by being dropped (see `statement_rows`).
            drop(snapshot);
            Ok(aging)
        })
        .await
    }

    async fn statement_rows(
        &self,
        vendor_id: VendorId,
        from: Timestamp,
        before: Timestamp,
        calendar: &BusinessCalendar,
    ) -> StoreResult<StatementRows> {
        self.answer_read(|| async move {
            // The opening figures and the lines come from one snapshot (a read-only transaction
            // on one reader connection), so they agree.
            let mut reader = self.read_long().await?;
            let mut conn = Self::long_snapshot(&mut reader).await?;
            let invoiced = sqlx::query(concat!(
                "SELECT ",
                exact_sum!("amount", "invoiced"),
                " FROM invoices WHERE vendor_id = $1 AND is_active AND invoice_date < $2"
            ))
            .bind(vendor_id.get())
            .bind(micros(from))
            .fetch_one(&mut *conn)
            .await?;
            let paid = sqlx::query(concat!(
                "SELECT ",
                exact_sum!("t.amount", "paid"),
                " FROM transactions t JOIN invoices i ON i.id = t.invoice_id \
                 WHERE i.vendor_id = $1 AND i.is_active AND t.is_active AND t.transaction_date < $2"
            ))
            .bind(vendor_id.get())
            .bind(micros(from))
            .fetch_one(&mut *conn)
            .await?;
            let credited = sqlx::query(concat!(
                "SELECT ",
                exact_sum!("accepted", "credited"),
                " FROM vendor_credits WHERE vendor_id = $1 AND is_active AND accepted > 0 AND decision_date < $2"
            ))
            .bind(vendor_id.get())
            .bind(micros(from))
            .fetch_one(&mut *conn)
            .await?;
            let mut rows = StatementRows {
                invoiced_before: pair_of(&invoiced, pair_columns!("invoiced"))?,
                paid_before: pair_of(&paid, pair_columns!("paid"))?,
                credited_before: pair_of(&credited, pair_columns!("credited"))?,
                entries: Vec::new(),
            };
            rows.entries = Self::statement_lines(&mut conn, vendor_id, (from, before), calendar).await?;
            // The snapshot only read. Dropped, its rollback is queued and sent before the
            // connection's next statement: no round trip now, and no second end after a COMMIT
            // whose caller went away (sqlx would queue a ROLLBACK behind it, which PostgreSQL
            // answers with "there is no transaction in progress").
            drop(conn);
            Ok(rows)
        })
        .await
    }

    async fn statement_page(
        &self,
        vendor_id: VendorId,
        (from_date, to_date): (Date, Date),
        calendar: &BusinessCalendar,
        page: PageRequest,
    ) -> StoreResult<(StatementFigures, PagePlace)> {
        self.answer_read(|| async move {
            let mut reader = self.read().await?;
            let mut snapshot = reader.begin_snapshot(READ_SNAPSHOT).await?;
            let balance = sqlx::query(
                "SELECT outstanding_high, outstanding_low, available_credit_high, available_credit_low FROM vendors \
                 WHERE id = $1",
            )
            .bind(vendor_id.get())
            .fetch_optional(&mut *snapshot)
            .await?;
            // D44: a statement of everything closes at the balance less the credit available.
            let balance = balance
                .map(|row| -> Result<Decimal> {
                    Ok(pair_of(&row, pair_columns!("outstanding"))? - pair_of(&row, pair_columns!("available_credit"))?)
                })
                .transpose()?
                .unwrap_or_default();
            let days = sqlx::query(
                "SELECT day, invoices, invoiced_high, invoiced_low, payments, paid_high, paid_low, credits, credited_high, \
                 credited_low FROM vendor_days WHERE vendor_id = $1 AND day >= $2 ORDER BY day",
            )
            .bind(vendor_id.get())
            .bind(day_key(from_date))
            .fetch_all(&mut *snapshot)
            .await?;
            let days = days.iter().map(figures::vendor_day_from).collect::<Result<Vec<_>>>()?;
            let plan = StatementPage::new(page, (from_date, to_date), balance, &days);
            let entries = match plan.instants(calendar) {
                Some(range) => Self::statement_lines(&mut snapshot, vendor_id, range, calendar).await?,
                None => Vec::new(),
            };
            // A snapshot that only read ends by being dropped (see `statement_rows`).
            drop(snapshot);
            Ok(plan.finish(entries))
        })
        .await
    }

    async fn licence_alerts(&self, before: Timestamp) -> StoreResult<Vec<LicenceHolder>> {
        self.answer_read(|| async move {
            // The four columns an alert shows, for a list answered whole (D36): a thousand
            // vendors at a chain's scale, packed into one value where the backend's driver
            // makes rows dear.
            let mut conn = self.read().await?;
            let holders: Vec<(i64, String, Option<String>, i64)> = if LICENCE_HOLDERS_PACKED {
                let packed: String =
                    sqlx::query_scalar(LICENCE_HOLDERS).bind(micros(before)).fetch_one(&mut *conn).await?;
                serde_json::from_str(&packed)
                    .map_err(|error| Error::corrupt(format!("licence alerts' vendors: {error}")))?
            } else {
                sqlx::query_as(LICENCE_HOLDERS).bind(micros(before)).fetch_all(&mut *conn).await?
            };
            holders
                .into_iter()
                .map(|(id, name, drug_license_number1, valid_until)| {
                    Ok(LicenceHolder {
                        id: VendorId(id),
                        name,
                        drug_license_number1,
                        valid_until: instant(valid_until)?,
                    })
                })
                .collect()
        })
        .await
    }

    async fn list_audit(&self, query: &AuditQuery) -> StoreResult<Page<AuditEntry>> {
        self.answer_read(|| async move {
            let build = |binds: &mut Binds| {
                let filter = &query.filter;
                let mut parts = Vec::new();
                if let Some(entity) = &filter.entity {
                    // The entity matches ASCII-case-insensitively, like `eq_ignore_ascii_case`.
                    parts.push(format!("a.entity_key = {}", binds.text(entity.to_ascii_lowercase())));
                }
                if let Some(entity_id) = filter.entity_id {
                    parts.push(format!("a.entity_id = {}", binds.int(entity_id)));
                }
                if let Some(user_id) = filter.user_id {
                    parts.push(format!("a.user_id = {}", binds.int(user_id.get())));
                }
                instant_range(&mut parts, binds, "a.at", (filter.from_date, filter.to_date));
                conditions(parts)
            };
            let mut binds = Binds::default();
            let filter = build(&mut binds);
            let (limit, offset) = page_limits(query.page);
            let sql = format!(
                "SELECT (SELECT COUNT(*) FROM audit_log a WHERE {filter}) AS total_count, \
                 a.id, a.at, a.user_id, a.action, a.entity, a.entity_id, a.reason, a.changes \
                 FROM audit_log a WHERE {filter} ORDER BY a.at DESC, a.id DESC LIMIT {limit} OFFSET {offset}"
            );
            let recount = || {
                let mut binds = Binds::default();
                let filter = build(&mut binds);
                binds.query(format!("SELECT COUNT(*) FROM audit_log a WHERE {filter}"))
            };
            self.page(binds, sql, query.page, audit_from, recount).await
        })
        .await
    }

    async fn export_vendors(
        &self,
        filter: &VendorFilter,
        after: Option<VendorId>,
        limit: u32,
    ) -> StoreResult<Vec<Vendor>> {
        self.answer_read(|| async move {
            let conditions = |binds: &mut Binds| vendor_conditions(binds, filter);
            self.export(&VENDORS, conditions, (after.map(VendorId::get), limit), vendor_from).await
        })
        .await
    }

    async fn export_invoices(
        &self,
        filter: &InvoiceFilter,
        today_start: Timestamp,
        after: Option<InvoiceId>,
        limit: u32,
    ) -> StoreResult<Vec<Invoice>> {
        self.answer_read(|| async move {
            let conditions = |binds: &mut Binds| invoice_conditions(binds, filter, today_start);
            let decode = |row: &DbRow| invoice_from(row, today_start);
            self.export(&INVOICES, conditions, (after.map(InvoiceId::get), limit), decode).await
        })
        .await
    }

    async fn export_transactions(
        &self,
        filter: &TransactionFilter,
        after: Option<TransactionId>,
        limit: u32,
    ) -> StoreResult<Vec<Transaction>> {
        self.answer_read(|| async move {
            let conditions = |binds: &mut Binds| transaction_conditions(binds, filter);
            self.export(&TRANSACTIONS, conditions, (after.map(TransactionId::get), limit), transaction_from).await
        })
        .await
    }
}
