//! Vendors over SQL: [`VendorStore`]. A vendor carries its kept figures (D11, D41), which the
//! invoice and payment writes move; a vendor write itself moves only the installation's counts.
//! The OwnPharmacy rules are `vendors::rules`' (D14).

use pharmapay_core::figures::{FigureChange, KeptCount, VendorFacts};
use pharmapay_core::ids::VendorId;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::store::{StoreResult, UniqueKey, VendorStore, WriteContext};
use pharmapay_core::text::key;
use pharmapay_core::vendors::licence::LicenseStatus;
use pharmapay_core::vendors::rules as vendor_rules;
use pharmapay_core::vendors::{NewVendor, Vendor, VendorFilter, VendorQuery, VendorSortKey, VendorType};
use pharmapay_core::{Entity, Page, StoreError};
use sqlx::Row;

use super::binds::{Binds, conditions, direction, page_limits};
use super::figures::{self, kept_count};
use super::guards::check_free;
use super::rows::{licences_json, micros, vendor_from, vendor_in, vendor_type};
use super::search::{read_from_matches, vendor_matches, vendor_search};
use super::{Conn, Result, SqlStore, answer, commit, refused, row_by_id, set_active};

/// Inserts an active vendor made at `at` and counts it in the installation's figures; answers
/// its id.
pub(super) async fn insert_vendor_row(conn: &mut Conn, vendor: &NewVendor, at: Timestamp) -> Result<i64> {
    if let Some(gstin) = &vendor.gstin {
        check_free(conn, UniqueKey::Gstin, gstin.as_str(), None).await?;
    }
    let row = sqlx::query(
        "INSERT INTO vendors (name, name_key, vendor_type, address, phone, email, drug_license_number1, \
         drug_license_number2, additional_drug_license_numbers, is_active, created_at, updated_at, \
         drug_license_valid_until, gstin) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, TRUE, $10, $10, $11, $12) RETURNING id",
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
    .bind(vendor.drug_license_valid_until.map(micros))
    .bind(vendor.gstin.as_ref().map(|gstin| gstin.as_str().to_owned()))
    .fetch_one(&mut *conn)
    .await?;
    change_vendor_state(conn, None, Some(true)).await?;
    Ok(row.try_get(0)?)
}

/// Moves the installation's vendor counts for a vendor whose state went from `before` to
/// `after` (`None`: no vendor).
pub(super) async fn change_vendor_state(conn: &mut Conn, before: Option<bool>, after: Option<bool>) -> Result<()> {
    let facts = |is_active: Option<bool>| is_active.map(|is_active| VendorFacts { is_active });
    figures::apply(conn, FigureChange::new().row(facts(before).as_ref(), facts(after).as_ref())).await
}

// List filters, written as SQL conditions over the aliases used by the list statements.

pub(super) fn vendor_conditions(binds: &mut Binds, filter: &VendorFilter) -> String {
    // Written as a comparison: SQLite uses an index that starts with `is_active` (by name, by
    // balance) only for `is_active = ...`, and would otherwise sort every vendor for a page.
    // A search through the trigram table asked for with `IN` (exports, and the count of a page
    // past the end; a list page joins the matches, see `vendor_matches`) is the exception:
    // written with `IS`, the state offers no index, and SQLite reads the vendors from the
    // search's matches instead.
    let compare = if filter.search.as_deref().is_some_and(read_from_matches) { "IS" } else { "=" };
    let mut parts = vec![format!("v.is_active {compare} {}", if filter.is_active { "TRUE" } else { "FALSE" })];
    if let Some(vendor_type) = filter.vendor_type {
        parts.push(format!("v.vendor_type = {}", binds.text(vendor_type.name())));
    }
    if let Some(search) = &filter.search {
        parts.push(vendor_search(binds, "v.id", "v.name_key", search));
    }
    if let Some((status, bounds)) = filter.licence {
        // D36: the status as `LicenseStatus::of` computes it, over the stored date.
        let column = "v.drug_license_valid_until";
        parts.push(match status {
            LicenseStatus::Unknown => format!("{column} IS NULL"),
            LicenseStatus::Expired => format!("{column} < {}", binds.int(micros(bounds.today_start))),
            LicenseStatus::ExpiringSoon => format!(
                "{column} >= {} AND {column} < {}",
                binds.int(micros(bounds.today_start)),
                binds.int(micros(bounds.soon_end))
            ),
            LicenseStatus::Valid => format!("{column} >= {}", binds.int(micros(bounds.soon_end))),
        });
    }
    conditions(parts)
}

/// The type, state and GSTIN of a vendor, locked for a change.
pub(super) async fn vendor_for_change(conn: &mut Conn, id: i64) -> Result<Option<(VendorType, bool, Option<String>)>> {
    let row =
        row_by_id(conn, concat!("SELECT vendor_type, is_active, gstin FROM vendors WHERE id = $1", for_update!()), id)
            .await?;
    row.map(|row| Ok((vendor_type(row.try_get("vendor_type")?)?, row.try_get("is_active")?, row.try_get("gstin")?)))
        .transpose()
}

impl VendorStore for SqlStore {
    async fn insert_vendor(&self, vendor: NewVendor, ctx: WriteContext) -> StoreResult<Vendor> {
        answer(|| async {
            vendor_rules::check_insert(vendor.vendor_type)?;
            let mut db_tx = self.begin().await?;
            let id = insert_vendor_row(&mut db_tx, &vendor, ctx.at).await?;
            let vendor = vendor_in(&mut db_tx, id).await?;
            commit(db_tx, &ctx, "create", Entity::Vendor, id, vendor).await
        })
        .await
    }

    async fn get_vendor(&self, id: VendorId) -> StoreResult<Option<Vendor>> {
        self.answer_read(|| async move { vendor_in(&mut *self.read().await?, id.get()).await }).await
    }

    async fn update_vendor(&self, id: VendorId, vendor: NewVendor, ctx: WriteContext) -> StoreResult<Vendor> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let Some((current_type, true, _)) = vendor_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Vendor));
            };
            if let Some(gstin) = &vendor.gstin {
                check_free(&mut db_tx, UniqueKey::Gstin, gstin.as_str(), Some(id.get())).await?;
            }
            vendor_rules::check_update(current_type, vendor.vendor_type)?;
            sqlx::query(
                "UPDATE vendors SET name = $2, name_key = $3, vendor_type = $4, address = $5, phone = $6, email = $7, \
                 drug_license_number1 = $8, drug_license_number2 = $9, additional_drug_license_numbers = $10, \
                 updated_at = $11, drug_license_valid_until = $12, gstin = $13 WHERE id = $1",
            )
            .bind(id.get())
            .bind(vendor.name.clone())
            .bind(key(&vendor.name))
            .bind(vendor.vendor_type.name())
            .bind(vendor.address.clone())
            .bind(vendor.phone.clone())
            .bind(vendor.email.clone())
            .bind(vendor.drug_license_number1.clone())
            .bind(vendor.drug_license_number2.clone())
            .bind(licences_json(&vendor.additional_drug_license_numbers))
            .bind(micros(ctx.at))
            .bind(vendor.drug_license_valid_until.map(micros))
            .bind(vendor.gstin.as_ref().map(|gstin| gstin.as_str().to_owned()))
            .execute(&mut *db_tx)
            .await?;
            let vendor = vendor_in(&mut db_tx, id.get()).await?;
            commit(db_tx, &ctx, "update", Entity::Vendor, id.get(), vendor).await
        })
        .await
    }

    async fn delete_vendor(&self, id: VendorId, ctx: WriteContext) -> StoreResult<()> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let Some((current_type, true, _)) = vendor_for_change(&mut db_tx, id.get()).await? else {
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
            change_vendor_state(&mut db_tx, Some(true), Some(false)).await?;
            commit(db_tx, &ctx, "delete", Entity::Vendor, id.get(), Some(())).await
        })
        .await
    }

    async fn restore_vendor(&self, id: VendorId, ctx: WriteContext) -> StoreResult<Vendor> {
        answer(|| async {
            let mut db_tx = self.begin().await?;
            let Some((_, false, gstin)) = vendor_for_change(&mut db_tx, id.get()).await? else {
                return refused(StoreError::NotFound(Entity::Vendor));
            };
            if let Some(gstin) = gstin {
                check_free(&mut db_tx, UniqueKey::Gstin, &gstin, Some(id.get())).await?;
            }
            set_active(
                &mut db_tx,
                "UPDATE vendors SET is_active = TRUE, updated_at = $2 WHERE id = $1",
                id.get(),
                Some(ctx.at),
            )
            .await?;
            change_vendor_state(&mut db_tx, Some(false), Some(true)).await?;
            let vendor = vendor_in(&mut db_tx, id.get()).await?;
            commit(db_tx, &ctx, "restore", Entity::Vendor, id.get(), vendor).await
        })
        .await
    }

    async fn list_vendors(&self, query: &VendorQuery) -> StoreResult<Page<Vendor>> {
        self.answer_read(|| async move {
            let (binds, sql) = vendor_page(query);
            let recount = || {
                let mut binds = Binds::default();
                let filter = vendor_conditions(&mut binds, &query.filter);
                let count = vendor_count(&mut binds, &query.filter, &filter);
                binds.query(count)
            };
            self.page(binds, sql, query.page, vendor_from, recount).await
        })
        .await
    }
}

/// The statement a page of vendors is read with, and its values: the page and, in the same
/// statement, the list's total count (from the kept figures when the filter allows, D41).
pub(super) fn vendor_page(query: &VendorQuery) -> (Binds, String) {
    let mut binds = Binds::default();
    let searched = query.filter.search.as_deref().and_then(|term| vendor_matches(&mut binds, term));
    let (source, filter) = match searched {
        Some((matches, condition)) => {
            let rest = VendorFilter { search: None, ..query.filter.clone() };
            (matches, format!("{} AND {condition}", vendor_conditions(&mut binds, &rest)))
        }
        None => ("vendors v", vendor_conditions(&mut binds, &query.filter)),
    };
    let dir = direction(query.sort.dir);
    // Every sort reads an index: by name, by type, or by the kept balance (D41).
    let (order, sorted_by) = match query.sort.key {
        VendorSortKey::Name => (format!("v.name_key {dir}"), "v.name_key"),
        VendorSortKey::VendorType => (format!("v.vendor_type {dir}"), "v.vendor_type"),
        VendorSortKey::OutstandingBalance => {
            (format!("v.outstanding_high {dir}, v.outstanding_low {dir}"), "v.outstanding_high, v.outstanding_low")
        }
    };
    let sql = if query.filter.search.is_some() {
        // A search is looked up once, for the count and the page alike: its matches are
        // kept with the columns this sort reads (fewer to copy: a fifth off a term one name
        // in eight holds, at a chain's scale), and only the page's rows are read whole.
        let (limit, offset) = page_limits(query.page);
        format!(
            "WITH matched AS MATERIALIZED (SELECT v.id, {sorted_by} FROM {source} WHERE {filter}) \
             SELECT (SELECT COUNT(*) FROM matched) AS total_count, {columns} FROM \
             (SELECT v.id FROM matched v ORDER BY {order}, v.id {dir} LIMIT {limit} OFFSET {offset}) p \
             JOIN vendors v ON v.id = p.id ORDER BY {order}, v.id {dir}",
            columns = vendor_columns!(),
        )
    } else {
        let count = vendor_count(&mut binds, &query.filter, &filter);
        let (limit, offset) = page_limits(query.page);
        format!(
            "SELECT ({count}) AS total_count, {columns} FROM vendors v WHERE {filter} \
             ORDER BY {order}, v.id {dir} LIMIT {limit} OFFSET {offset}",
            columns = vendor_columns!(),
        )
    };
    (binds, sql)
}

/// The statement counting the vendors `filter` selects, whose conditions are `conditions`: from
/// the kept figures when the filter allows (D41), else row by row.
fn vendor_count(binds: &mut Binds, filter: &VendorFilter, conditions: &str) -> String {
    match KeptCount::of_vendors(filter) {
        Some(kept) => kept_count(binds, kept, None),
        None => format!("SELECT COUNT(*) FROM vendors v WHERE {conditions}"),
    }
}
