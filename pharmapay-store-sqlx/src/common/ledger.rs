//! The ledger over SQL: [`VendorStore`], [`InvoiceStore`] and [`TransactionStore`].
//!
//! Vendors carry totals computed from their invoices' kept figures (D11); invoices a status
//! computed from the kept paid total (D10), numbers unique among active invoices (D4), and the
//! Overdue and PartiallyPaid counts read from `invoice_open_counts` where a filter allows
//! (migration 2). Every payment write moves its invoice's kept paid total in the same
//! transaction, locking payments before invoices and invoices before vendors, and
//! `rules::ledger` says whether the invoice may take the payment (D1, D15). The OwnPharmacy
//! rules are `rules::vendors`', restores under an inactive parent `rules::restore`'s.

use pharmapay_core::domain::{
    Invoice, InvoiceBrief, InvoiceDetail, InvoiceFilter, InvoiceQuery, InvoiceSortKey, InvoiceStatus, NewInvoice,
    NewTransaction, NewVendor, Transaction, TransactionFilter, TransactionQuery, TransactionSortKey, Vendor,
    VendorBrief, VendorFilter, VendorQuery, VendorSortKey, VendorType,
};
use pharmapay_core::ids::{InvoiceId, TransactionId, VendorId};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::money::from_scaled;
use pharmapay_core::rules::ledger::{self, PaidInvoice, PaymentWrite};
use pharmapay_core::rules::{restore, vendors as vendor_rules};
use pharmapay_core::rust_decimal::Decimal;
use pharmapay_core::store::{InvoiceStore, StoreResult, TransactionStore, UniqueKey, VendorStore, WriteContext};
use pharmapay_core::text::key;
use pharmapay_core::{Entity, Page, StoreError};
use sqlx::Row;

use super::binds::{Binds, conditions, contains_pattern, direction, instant_range, page_binds};
use super::guards::{active_vendor, check_free};
use super::rows::{
    amount, instant, invoice_brief_from, invoice_from, invoice_in, licences_json, micros, scaled_bound,
    transaction_from, transaction_in, vendor_from, vendor_in, vendor_type, wide_decimal,
};
use super::{Conn, Result, SqlStore, answer, commit, refused, row_by_id, set_active};
use crate::error::Error;
use crate::statements;

pub(super) async fn insert_vendor_row(conn: &mut Conn, vendor: &NewVendor, at: Timestamp) -> Result<i64> {
    let row = sqlx::query(
        "INSERT INTO vendors (name, name_key, vendor_type, address, phone, email, drug_license_number1, \
         drug_license_number2, additional_drug_license_numbers, is_active, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, TRUE, $10, $10) RETURNING id",
    )
    .bind(vendor.name.clone())
    .bind(key(&vendor.name))
    .bind(vendor.vendor_type.name())
    .bind(vendor.address.clone())
    .bind(vendor.phone.clone())
    .bind(vendor.email.clone())
    .bind(vendor.drug_license_number1.clone())
    .bind(vendor.drug_license_number2.clone())
    .bind(licences_json(&vendor.additional_drug_license_numbers))
    .bind(micros(at))
    .fetch_one(&mut *conn)
    .await?;
    Ok(row.try_get(0)?)
}

// List filters, written as SQL conditions over the aliases used by the list statements.

pub(super) fn vendor_conditions(binds: &mut Binds, filter: &VendorFilter) -> String {
    let mut parts = vec![if filter.is_active { "v.is_active" } else { "NOT v.is_active" }.to_owned()];
    if let Some(vendor_type) = filter.vendor_type {
        parts.push(format!("v.vendor_type = {}", binds.text(vendor_type.name())));
    }
    if let Some(search) = &filter.search {
        parts.push(format!("v.name_key LIKE {} ESCAPE '\\'", binds.text(contains_pattern(search))));
    }
    conditions(parts)
}

/// The type and state of a vendor, locked for a change.
pub(super) async fn vendor_for_change(conn: &mut Conn, id: i64) -> Result<Option<(VendorType, bool)>> {
    let row =
        row_by_id(conn, concat!("SELECT vendor_type, is_active FROM vendors WHERE id = $1", for_update!()), id).await?;
    row.map(|row| Ok((vendor_type(row.try_get("vendor_type")?)?, row.try_get("is_active")?))).transpose()
}

impl VendorStore for SqlStore {
    async fn insert_vendor(&self, vendor: NewVendor, ctx: WriteContext) -> StoreResult<Vendor> {
        answer(async move {
            vendor_rules::check_insert(vendor.vendor_type)?;
            let mut db_tx = self.begin().await?;
            let id = insert_vendor_row(&mut db_tx, &vendor, ctx.at).await?;
            let vendor = vendor_in(&mut db_tx, id).await?;
            commit(db_tx, &ctx, "create", Entity::Vendor, id, vendor).await
        })
        .await
    }

    async fn get_vendor(&self, id: VendorId) -> StoreResult<Option<Vendor>> {
        answer(async move { vendor_in(&mut *self.read().await?, id.get()).await }).await
    }

    async fn update_vendor(&self, id: VendorId, vendor: NewVendor, ctx: WriteContext) -> StoreResult<Vendor> {
        answer(async move {
            let mut db_tx = self.begin().await?;
            let Some((current_type, true)) = vendor_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Vendor));
            };
            vendor_rules::check_update(current_type, vendor.vendor_type)?;
            sqlx::query(
                "UPDATE vendors SET name = $2, name_key = $3, vendor_type = $4, address = $5, phone = $6, email = $7, \
                 drug_license_number1 = $8, drug_license_number2 = $9, additional_drug_license_numbers = $10, \
                 updated_at = $11 WHERE id = $1",
            )
            .bind(id.get())
            .bind(vendor.name.clone())
            .bind(key(&vendor.name))
            .bind(vendor.vendor_type.name())
            .bind(vendor.address)
            .bind(vendor.phone)
            .bind(vendor.email)
            .bind(vendor.drug_license_number1)
            .bind(vendor.drug_license_number2)
            .bind(licences_json(&vendor.additional_drug_license_numbers))
            .bind(micros(ctx.at))
            .execute(&mut *db_tx)
            .await?;
            let vendor = vendor_in(&mut db_tx, id.get()).await?;
            commit(db_tx, &ctx, "update", Entity::Vendor, id.get(), vendor).await
        })
        .await
    }

    async fn delete_vendor(&self, id: VendorId, ctx: WriteContext) -> StoreResult<()> {
        answer(async move {
            let mut db_tx = self.begin().await?;
            let Some((current_type, true)) = vendor_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Vendor));
            };
            vendor_rules::check_delete(current_type)?;
            set_active(
                &mut db_tx,
                "UPDATE vendors SET is_active = FALSE, updated_at = $2 WHERE id = $1",
                id.get(),
                Some(ctx.at),
            )
            .await?;
            commit(db_tx, &ctx, "delete", Entity::Vendor, id.get(), Some(())).await
        })
        .await
    }

    async fn restore_vendor(&self, id: VendorId, ctx: WriteContext) -> StoreResult<Vendor> {
        answer(async move {
            let mut db_tx = self.begin().await?;
            let Some((_, false)) = vendor_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Vendor));
            };
            set_active(
                &mut db_tx,
                "UPDATE vendors SET is_active = TRUE, updated_at = $2 WHERE id = $1",
                id.get(),
                Some(ctx.at),
            )
            .await?;
            let vendor = vendor_in(&mut db_tx, id.get()).await?;
            commit(db_tx, &ctx, "restore", Entity::Vendor, id.get(), vendor).await
        })
        .await
    }

    async fn list_vendors(&self, query: &VendorQuery) -> StoreResult<Page<Vendor>> {
        answer(async move {
            let mut binds = Binds::default();
            let filter = vendor_conditions(&mut binds, &query.filter);
            let dir = direction(query.sort.dir);
            // The page is chosen first (ids and sort values only), then its rows and totals are
            // read, so totals are computed for the page alone unless the sort needs them all.
            let (balances, sort_values): (&str, &[&str]) = match query.sort.key {
                VendorSortKey::Name => ("", &["v.name_key"]),
                VendorSortKey::VendorType => ("", &["v.vendor_type"]),
                VendorSortKey::OutstandingBalance => (
                    concat!(" LEFT JOIN (", vendor_balances!(), ") b ON b.vendor_id = v.id"),
                    &["COALESCE(b.balance_high, 0)", "COALESCE(b.balance_low, 0)"],
                ),
            };
            let page_columns: Vec<String> =
                sort_values.iter().enumerate().map(|(index, value)| format!("{value} AS sort_{index}")).collect();
            let page_order: Vec<String> = sort_values.iter().map(|value| format!("{value} {dir}")).collect();
            let order: Vec<String> = (0..sort_values.len()).map(|index| format!("page.sort_{index} {dir}")).collect();
            let (limit, offset) = page_binds(&mut binds, query.page);
            let sql = format!(
                "SELECT (SELECT COUNT(*) FROM vendors v WHERE {filter}) AS total_count, {columns} \
                 FROM (SELECT v.id AS page_id, {page_columns} FROM vendors v{balances} WHERE {filter} \
                       ORDER BY {page_order}, v.id {dir} LIMIT {limit} OFFSET {offset}) page \
                 JOIN vendors v ON v.id = page.page_id \
                 ORDER BY {order}, v.id {dir}",
                columns = vendor_columns!(),
                page_columns = page_columns.join(", "),
                page_order = page_order.join(", "),
                order = order.join(", "),
            );
            let recount = || {
                let mut binds = Binds::default();
                let filter = vendor_conditions(&mut binds, &query.filter);
                binds.query(format!("SELECT COUNT(*) FROM vendors v WHERE {filter}"))
            };
            self.page(binds, sql, query.page, vendor_from, recount).await
        })
        .await
    }
}

/// The invoice list's conditions over `invoices i JOIN vendors v`; status is computed for the
/// day starting at `today_start` exactly as `InvoiceStatus::compute` does (D10).
pub(super) fn invoice_conditions(binds: &mut Binds, filter: &InvoiceFilter, today_start: Timestamp) -> String {
    let mut parts = Vec::new();
    match filter.is_active {
        Some(true) => parts.push("i.is_active".to_owned()),
        Some(false) => parts.push("NOT i.is_active".to_owned()),
        None => {}
    }
    if let Some(vendor_id) = filter.vendor_id {
        parts.push(format!("i.vendor_id = {}", binds.int(vendor_id.get())));
    }
    if let Some(number) = &filter.invoice_number {
        parts.push(format!("i.number_key LIKE {} ESCAPE '\\'", binds.text(contains_pattern(number))));
    }
    if let Some(search) = &filter.search {
        let pattern = binds.text(contains_pattern(search));
        parts.push(format!("(i.number_key LIKE {pattern} ESCAPE '\\' OR v.name_key LIKE {pattern} ESCAPE '\\')"));
    }
    instant_range(&mut parts, binds, "i.invoice_date", (filter.from_date, filter.to_date));
    if let Some(min) = filter.min_amount {
        parts.push(format!("i.amount >= {}", binds.int(scaled_bound(min, Decimal::ceil))));
    }
    if let Some(max) = filter.max_amount {
        parts.push(format!("i.amount <= {}", binds.int(scaled_bound(max, Decimal::floor))));
    }
    if let Some(status) = filter.status {
        parts.push(match status {
            InvoiceStatus::Canceled => "NOT i.is_active".to_owned(),
            InvoiceStatus::FullyPaid => "i.is_active AND i.amount - i.paid <= 0".to_owned(),
            InvoiceStatus::Overdue => {
                format!("i.is_active AND i.amount - i.paid > 0 AND i.due_date < {}", binds.int(micros(today_start)))
            }
            InvoiceStatus::PartiallyPaid => {
                format!("i.is_active AND i.amount - i.paid > 0 AND i.due_date >= {}", binds.int(micros(today_start)))
            }
        });
    }
    conditions(parts)
}

pub(super) fn invoice_sort(key: InvoiceSortKey) -> &'static str {
    match key {
        InvoiceSortKey::InvoiceDate => "i.invoice_date",
        InvoiceSortKey::DueDate => "i.due_date",
        InvoiceSortKey::Amount => "i.amount",
        // The same expression as the index `invoices_by_pending`, so the planner uses it.
        InvoiceSortKey::PendingAmount => "(i.amount - i.paid)",
        InvoiceSortKey::PaidAmount => "i.paid",
        InvoiceSortKey::InvoiceNumber => "i.number_key",
        InvoiceSortKey::VendorName => "v.name_key",
    }
}

/// The invoices a search needs joined to their vendors; other filters read invoices alone.
pub(super) fn invoice_count_source(filter: &InvoiceFilter) -> &'static str {
    if filter.search.is_some() { invoices_with_vendor!() } else { "invoices i" }
}

/// The statement counting an invoice list's matches (`conditions` is the list's `WHERE`).
///
/// A list filtered by `Overdue` or `PartiallyPaid` alone is counted from `invoice_open_counts`
/// (migration 2): open invoices are exactly the active ones with something pending, split by
/// whether their due date is before the start of today (D10), so the sum over the buckets on
/// one side of today equals the count of the filter. Any other filter counts the invoices.
pub(super) fn invoice_count(
    binds: &mut Binds,
    filter: &InvoiceFilter,
    today_start: Timestamp,
    conditions: &str,
) -> String {
    let status_alone = InvoiceFilter { status: filter.status, is_active: filter.is_active, ..InvoiceFilter::default() };
    let side = match filter.status {
        Some(InvoiceStatus::Overdue) => Some("<"),
        Some(InvoiceStatus::PartiallyPaid) => Some(">="),
        _ => None,
    };
    match side {
        Some(side) if *filter == status_alone && filter.is_active != Some(false) => format!(
            "SELECT CAST(COALESCE(SUM(open_count), 0) AS BIGINT) FROM invoice_open_counts WHERE due_date {side} {}",
            binds.int(micros(today_start))
        ),
        _ => format!("SELECT COUNT(*) FROM {} WHERE {conditions}", invoice_count_source(filter)),
    }
}

/// The vendor, number key and state of an invoice, locked for a change.
pub(super) async fn invoice_for_change(conn: &mut Conn, id: i64) -> Result<Option<(i64, String, bool)>> {
    let row = row_by_id(
        conn,
        concat!("SELECT vendor_id, number_key, is_active FROM invoices WHERE id = $1", for_update!()),
        id,
    )
    .await?;
    row.map(|row| Ok((row.try_get("vendor_id")?, row.try_get("number_key")?, row.try_get("is_active")?))).transpose()
}

impl InvoiceStore for SqlStore {
    async fn insert_invoice(
        &self,
        invoice: NewInvoice,
        ctx: WriteContext,
        today_start: Timestamp,
    ) -> StoreResult<Invoice> {
        answer(async move {
            let mut db_tx = self.begin().await?;
            let number_key = key(&invoice.invoice_number);
            if !active_vendor(&mut db_tx, invoice.vendor_id.get()).await? {
                return refused(StoreError::ParentInactive(Entity::Vendor));
            }
            check_free(&mut db_tx, UniqueKey::InvoiceNumber, &number_key, None).await?;
            // Under a race the partial unique index decides; its violation maps to the same
            // Conflict (D5).
            let row = sqlx::query(
                "INSERT INTO invoices (vendor_id, invoice_number, number_key, amount, paid, invoice_date, due_date, \
                 description, is_active, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, 0, $5, $6, $7, TRUE, $8, $8) RETURNING id",
            )
            .bind(invoice.vendor_id.get())
            .bind(invoice.invoice_number)
            .bind(number_key)
            .bind(invoice.amount.to_scaled())
            .bind(micros(invoice.invoice_date))
            .bind(micros(invoice.due_date))
            .bind(invoice.description)
            .bind(micros(ctx.at))
            .fetch_one(&mut *db_tx)
            .await?;
            let id: i64 = row.try_get(0)?;
            let invoice = invoice_in(&mut db_tx, id, today_start).await?;
            commit(db_tx, &ctx, "create", Entity::Invoice, id, invoice).await
        })
        .await
    }

    async fn get_invoice(&self, id: InvoiceId, today_start: Timestamp) -> StoreResult<Option<InvoiceDetail>> {
        answer(async move {
            let row = sqlx::query(concat!(
                "SELECT ",
                invoice_columns!(),
                ", v.vendor_type AS vendor_type, v.address AS vendor_address, v.phone AS vendor_phone, \
                 v.email AS vendor_email, v.drug_license_number1 AS vendor_licence1, \
                 v.drug_license_number2 AS vendor_licence2, v.is_active AS vendor_is_active FROM ",
                invoices_with_vendor!(),
                " WHERE i.id = $1"
            ))
            .bind(id.get())
            .fetch_optional(&self.reader)
            .await?;
            let Some(row) = row else { return Ok(None) };
            let invoice = invoice_from(&row, today_start)?;
            let vendor = VendorBrief {
                id: invoice.vendor_id,
                name: invoice.vendor_name.clone(),
                vendor_type: vendor_type(row.try_get("vendor_type")?)?,
                address: row.try_get("vendor_address")?,
                phone: row.try_get("vendor_phone")?,
                email: row.try_get("vendor_email")?,
                drug_license_number1: row.try_get("vendor_licence1")?,
                drug_license_number2: row.try_get("vendor_licence2")?,
                is_active: row.try_get("vendor_is_active")?,
            };
            Ok(Some(InvoiceDetail { invoice, vendor }))
        })
        .await
    }

    async fn update_invoice(
        &self,
        id: InvoiceId,
        invoice: NewInvoice,
        ctx: WriteContext,
        today_start: Timestamp,
    ) -> StoreResult<Invoice> {
        answer(async move {
            let mut db_tx = self.begin().await?;
            let Some((_, _, true)) = invoice_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Invoice));
            };
            let number_key = key(&invoice.invoice_number);
            if !active_vendor(&mut db_tx, invoice.vendor_id.get()).await? {
                return refused(StoreError::ParentInactive(Entity::Vendor));
            }
            check_free(&mut db_tx, UniqueKey::InvoiceNumber, &number_key, Some(id.get())).await?;
            // The paid total is kept: it belongs to the payments, not to the replaced fields.
            sqlx::query(
                "UPDATE invoices SET vendor_id = $2, invoice_number = $3, number_key = $4, amount = $5, \
                 invoice_date = $6, due_date = $7, description = $8, updated_at = $9 WHERE id = $1",
            )
            .bind(id.get())
            .bind(invoice.vendor_id.get())
            .bind(invoice.invoice_number)
            .bind(number_key)
            .bind(invoice.amount.to_scaled())
            .bind(micros(invoice.invoice_date))
            .bind(micros(invoice.due_date))
            .bind(invoice.description)
            .bind(micros(ctx.at))
            .execute(&mut *db_tx)
            .await?;
            let invoice = invoice_in(&mut db_tx, id.get(), today_start).await?;
            commit(db_tx, &ctx, "update", Entity::Invoice, id.get(), invoice).await
        })
        .await
    }

    async fn delete_invoice(&self, id: InvoiceId, ctx: WriteContext) -> StoreResult<()> {
        answer(async move {
            let mut db_tx = self.begin().await?;
            let changed =
                sqlx::query("UPDATE invoices SET is_active = FALSE, updated_at = $2 WHERE id = $1 AND is_active")
                    .bind(id.get())
                    .bind(micros(ctx.at))
                    .execute(&mut *db_tx)
                    .await?
                    .rows_affected();
            if changed == 0 {
                return refused(StoreError::NotFound(Entity::Invoice));
            }
            commit(db_tx, &ctx, "delete", Entity::Invoice, id.get(), Some(())).await
        })
        .await
    }

    async fn restore_invoice(&self, id: InvoiceId, ctx: WriteContext, today_start: Timestamp) -> StoreResult<Invoice> {
        answer(async move {
            let mut db_tx = self.begin().await?;
            let Some((vendor_id, number_key, false)) = invoice_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Invoice));
            };
            restore::check_parent(Entity::Vendor, active_vendor(&mut db_tx, vendor_id).await?)?;
            check_free(&mut db_tx, UniqueKey::InvoiceNumber, &number_key, Some(id.get())).await?;
            set_active(
                &mut db_tx,
                "UPDATE invoices SET is_active = TRUE, updated_at = $2 WHERE id = $1",
                id.get(),
                Some(ctx.at),
            )
            .await?;
            let invoice = invoice_in(&mut db_tx, id.get(), today_start).await?;
            commit(db_tx, &ctx, "restore", Entity::Invoice, id.get(), invoice).await
        })
        .await
    }

    async fn list_invoices(&self, query: &InvoiceQuery, today_start: Timestamp) -> StoreResult<Page<Invoice>> {
        answer(async move {
            let mut binds = Binds::default();
            let filter = invoice_conditions(&mut binds, &query.filter, today_start);
            let dir = direction(query.sort.dir);
            let sort = invoice_sort(query.sort.key);
            let (limit, offset) = page_binds(&mut binds, query.page);
            let count = invoice_count(&mut binds, &query.filter, today_start, &filter);
            let sql = format!(
                "SELECT ({count}) AS total_count, {columns} \
                 FROM {from} WHERE {filter} ORDER BY {sort} {dir}, i.id {dir} LIMIT {limit} OFFSET {offset}",
                columns = invoice_columns!(),
                from = invoices_with_vendor!(),
            );
            let recount = || {
                let mut binds = Binds::default();
                let filter = invoice_conditions(&mut binds, &query.filter, today_start);
                let recount = invoice_count(&mut binds, &query.filter, today_start, &filter);
                binds.query(recount)
            };
            self.page(binds, sql, query.page, |row| invoice_from(row, today_start), recount).await
        })
        .await
    }
}

pub(super) fn transaction_conditions(binds: &mut Binds, filter: &TransactionFilter) -> String {
    let mut parts = vec![if filter.is_active { "t.is_active" } else { "NOT t.is_active" }.to_owned()];
    if let Some(invoice_id) = filter.invoice_id {
        parts.push(format!("t.invoice_id = {}", binds.int(invoice_id.get())));
    }
    if let Some(kind) = filter.transaction_type {
        parts.push(format!("t.transaction_type = {}", binds.text(kind.name())));
    }
    instant_range(&mut parts, binds, "t.transaction_date", (filter.from_date, filter.to_date));
    conditions(parts)
}

pub(super) fn transaction_sort(key: TransactionSortKey) -> &'static str {
    match key {
        TransactionSortKey::TransactionDate => "t.transaction_date",
        TransactionSortKey::Amount => "t.amount",
        TransactionSortKey::TransactionType => "t.transaction_type",
        TransactionSortKey::CreatedAt => "t.created_at",
    }
}

/// The invoice, amount and state of a payment, locked for a change. Payments are always
/// locked before invoices, and invoices before vendors, so writers never wait in a cycle.
pub(super) async fn payment_for_change(conn: &mut Conn, id: i64) -> Result<Option<(i64, i64, bool)>> {
    let row = row_by_id(
        conn,
        concat!("SELECT invoice_id, amount, is_active FROM transactions WHERE id = $1", for_update!()),
        id,
    )
    .await?;
    row.map(|row| Ok((row.try_get("invoice_id")?, row.try_get("amount")?, row.try_get("is_active")?))).transpose()
}

/// Adds a payment to an invoice's paid total and asks [`ledger::receive`] whether the invoice,
/// as the statement left it, may keep it. One atomic statement adds, locks the invoice row
/// (concurrent payments queue instead of losing updates) and returns the row as it now
/// stands; a refusal returns before the commit, so dropping the transaction undoes the
/// addition.
pub(super) async fn add_paid_to(
    conn: &mut Conn,
    invoice_id: i64,
    scaled: i64,
    write: PaymentWrite,
) -> Result<InvoiceBrief> {
    // RETURNING also gives the payment's nested invoice as it stands after the change, so
    // the new payment need not be read back inside the write transaction.
    let changed = sqlx::query(statements::ADD_PAID).bind(invoice_id).bind(scaled).fetch_optional(&mut *conn).await?;
    let paid_invoice = changed
        .as_ref()
        .map(|row| -> Result<PaidInvoice> {
            Ok(PaidInvoice { is_active: row.try_get("is_active")?, paid: from_scaled(row.try_get("invoice_paid")?) })
        })
        .transpose()?;
    ledger::receive(paid_invoice, write)?;
    let row = changed.ok_or_else(|| Error::corrupt("an invoice the ledger accepted has no row"))?;
    invoice_brief_from(&row, InvoiceId(invoice_id))
}

pub(super) async fn add_paid(conn: &mut Conn, invoice_id: i64, scaled: i64) -> Result<()> {
    sqlx::query("UPDATE invoices SET paid = paid + $2 WHERE id = $1")
        .bind(invoice_id)
        .bind(scaled)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

impl TransactionStore for SqlStore {
    async fn insert_transaction(&self, transaction: NewTransaction, ctx: WriteContext) -> StoreResult<Transaction> {
        answer(async move {
            let mut db_tx = self.begin().await?;
            let scaled = transaction.amount.to_scaled();
            let invoice = add_paid_to(&mut db_tx, transaction.invoice_id.get(), scaled, PaymentWrite::Record).await?;
            let row = sqlx::query(statements::INSERT_PAYMENT)
                .bind(transaction.invoice_id.get())
                .bind(scaled)
                .bind(micros(transaction.transaction_date))
                .bind(transaction.transaction_type.name())
                .bind(transaction.description.clone())
                .bind(micros(ctx.at))
                .fetch_one(&mut *db_tx)
                .await?;
            let id: i64 = row.try_get(0)?;
            commit(db_tx, &ctx, "create", Entity::Transaction, id, Some(())).await?;
            // The payment as a read would give it: instants at the stored precision (microseconds)
            // and the amount through the stored scale, exactly as `transaction_from` builds it.
            let created_at = instant(micros(ctx.at))?;
            Ok(Transaction {
                id: TransactionId(id),
                invoice_id: transaction.invoice_id,
                amount: amount(scaled)?,
                transaction_date: instant(micros(transaction.transaction_date))?,
                transaction_type: transaction.transaction_type,
                description: transaction.description,
                is_active: true,
                created_at,
                updated_at: created_at,
                invoice,
            })
        })
        .await
    }

    async fn get_transaction(&self, id: TransactionId) -> StoreResult<Option<Transaction>> {
        answer(async move { transaction_in(&mut *self.read().await?, id.get()).await }).await
    }

    async fn update_transaction(
        &self,
        id: TransactionId,
        transaction: NewTransaction,
        ctx: WriteContext,
    ) -> StoreResult<Transaction> {
        answer(async move {
            let mut db_tx = self.begin().await?;
            let Some((old_invoice, old_amount, true)) = payment_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Transaction));
            };
            let new_invoice = transaction.invoice_id.get();
            // Lock both invoices in id order, so two moves in opposite directions cannot deadlock.
            let locked = sqlx::query(concat!(
                "SELECT id, is_active, paid FROM invoices WHERE id = $1 OR id = $2 ORDER BY id",
                for_update!()
            ))
            .bind(old_invoice)
            .bind(new_invoice)
            .fetch_all(&mut *db_tx)
            .await?;
            let new_amount = transaction.amount.to_scaled();
            // A payment that stays on its invoice frees its old amount there first.
            let freed = if old_invoice == new_invoice { old_amount } else { 0 };
            let mut target = None;
            for row in &locked {
                if row.try_get::<i64, _>("id")? == new_invoice {
                    let paid = i128::from(row.try_get::<i64, _>("paid")?) + i128::from(new_amount) - i128::from(freed);
                    target = Some(PaidInvoice { is_active: row.try_get("is_active")?, paid: wide_decimal(paid) });
                }
            }
            ledger::receive(target, PaymentWrite::Record)?;
            // One statement for both invoices: PostgreSQL's open-count trigger then sees both
            // changes at once and locks the buckets they touch in due-date order (migration 2).
            sqlx::query(
                "UPDATE invoices SET paid = paid + CASE WHEN id = $1 THEN $2 ELSE 0 END \
                 + CASE WHEN id = $3 THEN $4 ELSE 0 END WHERE id = $1 OR id = $3",
            )
            .bind(old_invoice)
            .bind(-old_amount)
            .bind(new_invoice)
            .bind(new_amount)
            .execute(&mut *db_tx)
            .await?;
            sqlx::query(
                "UPDATE transactions SET invoice_id = $2, amount = $3, transaction_date = $4, transaction_type = $5, \
                 description = $6, updated_at = $7 WHERE id = $1",
            )
            .bind(id.get())
            .bind(new_invoice)
            .bind(new_amount)
            .bind(micros(transaction.transaction_date))
            .bind(transaction.transaction_type.name())
            .bind(transaction.description)
            .bind(micros(ctx.at))
            .execute(&mut *db_tx)
            .await?;
            let transaction = transaction_in(&mut db_tx, id.get()).await?;
            commit(db_tx, &ctx, "update", Entity::Transaction, id.get(), transaction).await
        })
        .await
    }

    async fn delete_transaction(&self, id: TransactionId, ctx: WriteContext) -> StoreResult<()> {
        answer(async move {
            let mut db_tx = self.begin().await?;
            let Some((invoice_id, scaled, true)) = payment_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Transaction));
            };
            set_active(
                &mut db_tx,
                "UPDATE transactions SET is_active = FALSE, updated_at = $2 WHERE id = $1",
                id.get(),
                Some(ctx.at),
            )
            .await?;
            add_paid(&mut db_tx, invoice_id, -scaled).await?;
            commit(db_tx, &ctx, "delete", Entity::Transaction, id.get(), Some(())).await
        })
        .await
    }

    async fn restore_transaction(&self, id: TransactionId, ctx: WriteContext) -> StoreResult<Transaction> {
        answer(async move {
            let mut db_tx = self.begin().await?;
            let Some((invoice_id, scaled, false)) = payment_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Transaction));
            };
            add_paid_to(&mut db_tx, invoice_id, scaled, PaymentWrite::Restore).await?;
            set_active(
                &mut db_tx,
                "UPDATE transactions SET is_active = TRUE, updated_at = $2 WHERE id = $1",
                id.get(),
                Some(ctx.at),
            )
            .await?;
            let transaction = transaction_in(&mut db_tx, id.get()).await?;
            commit(db_tx, &ctx, "restore", Entity::Transaction, id.get(), transaction).await
        })
        .await
    }

    async fn list_transactions(&self, query: &TransactionQuery) -> StoreResult<Page<Transaction>> {
        answer(async move {
            let mut binds = Binds::default();
            let filter = transaction_conditions(&mut binds, &query.filter);
            let dir = direction(query.sort.dir);
            let sort = transaction_sort(query.sort.key);
            let (limit, offset) = page_binds(&mut binds, query.page);
            let sql = format!(
                "SELECT (SELECT COUNT(*) FROM transactions t WHERE {filter}) AS total_count, {columns} \
                 FROM {from} WHERE {filter} ORDER BY {sort} {dir}, t.id {dir} LIMIT {limit} OFFSET {offset}",
                columns = transaction_columns!(),
                from = transactions_with_invoice!(),
            );
            let recount = || {
                let mut binds = Binds::default();
                let filter = transaction_conditions(&mut binds, &query.filter);
                binds.query(format!("SELECT COUNT(*) FROM transactions t WHERE {filter}"))
            };
            self.page(binds, sql, query.page, transaction_from, recount).await
        })
        .await
    }
}
