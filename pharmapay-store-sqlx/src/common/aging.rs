//! The payables aging over SQL (D34): the whole of it added up from the open invoices, and a
//! page of today's from the kept figures (D41, D43) through core's [`TodaysAgingPage`], which
//! decides which vendors the page holds and what its totals are; this file only reads.

use pharmapay_core::PageRequest;
use pharmapay_core::ids::VendorId;
use pharmapay_core::reports::aging::{
    Aging, AgingBounds, AgingBucket, AgingBuilder, AgingFigures, KeptOwed, TodaysAgingPage,
};
use sqlx::Row;

use super::binds::Binds;
use super::figures::pair_of;
use super::rows::{count, micros};
use super::{Conn, DbRow, Result, SqlStore};
use crate::error::Error;

/// Which vendors an aging adds up.
pub(super) enum AgingOf<'a> {
    Every,
    These(&'a [VendorId]),
}

/// The SQL that names the bucket of `column`'s due dates on `bounds`' day, as an index into
/// [`AgingBucket::ALL`]: a due date falls in the first bucket whose lower bound it reaches.
fn bucket_case(binds: &mut Binds, bounds: &AgingBounds, column: &str) -> String {
    let cases: Vec<String> = bounds
        .due_from
        .iter()
        .enumerate()
        .map(|(index, from)| format!("WHEN {column} >= {} THEN {index}", binds.int(micros(*from))))
        .collect();
    format!("CAST(CASE {} ELSE {} END AS BIGINT)", cases.join(" "), bounds.due_from.len())
}

/// The conditions on `due_date` of each bucket on `bounds`' day, in [`AgingBucket::ALL`] order.
fn due_ranges(binds: &mut Binds, bounds: &AgingBounds) -> Vec<String> {
    let from: Vec<String> = bounds.due_from.iter().map(|from| binds.int(micros(*from))).collect();
    let mut ranges = vec![format!("due_date >= {}", from[0])];
    for pair in from.windows(2) {
        ranges.push(format!("due_date >= {} AND due_date < {}", pair[1], pair[0]));
    }
    ranges.push(format!("due_date < {}", from[from.len() - 1]));
    ranges
}

/// `IN (...)` over `vendors`' ids.
fn id_list(binds: &mut Binds, vendors: &[VendorId]) -> String {
    let ids: Vec<String> = vendors.iter().map(|id| binds.int(id.get())).collect();
    format!("IN ({})", ids.join(", "))
}

/// The bucket of a row's `bucket` column.
fn bucket_of(row: &DbRow) -> Result<AgingBucket> {
    let bucket = usize::try_from(row.try_get::<i64, _>("bucket")?).unwrap_or(usize::MAX);
    AgingBucket::ALL.get(bucket).copied().ok_or_else(|| Error::corrupt("an aging bucket"))
}

/// A vendor of the kept ranking from a row of `id`, `name` and the `owed` pair.
fn kept_owed(row: &DbRow) -> Result<KeptOwed> {
    Ok(KeptOwed {
        vendor_id: VendorId(row.try_get("id")?),
        vendor_name: row.try_get("name")?,
        owed: pair_of(row, pair_columns!("owed"))?,
    })
}

impl SqlStore {
    /// The aging of `bounds.as_of` over `of`'s vendors, added up by vendor and bucket (D34).
    pub(super) async fn aging_rows(conn: &mut Conn, bounds: &AgingBounds, of: AgingOf<'_>) -> Result<AgingBuilder> {
        let mut binds = Binds::default();
        let counts_before = binds.int(micros(bounds.counts_before));
        let bucket = bucket_case(&mut binds, bounds, "x.due_date");
        let vendor = match of {
            AgingOf::These(vendors) => format!(" AND i.vendor_id {}", id_list(&mut binds, vendors)),
            AgingOf::Every => String::new(),
        };
        // What each invoice owed then is its kept pending amount plus the payments and credit
        // applications (D44) dated after the day; positive remainders are added up by vendor
        // and bucket, in exact halves.
        // The later payments are bounded on both sides (the upper bound is no bound at all):
        // without statistics SQLite's planner takes a one-sided range for unselective and
        // would read every payment through the invoice index instead of the day's few.
        // Across all vendors, the invoices are read in table order: `vendor_id + 0` and
        // `+i.invoice_date` keep SQLite from walking an index in vendor or date order and
        // fetching each row from it (2.4 s instead of 0.6 s over a million invoices);
        // PostgreSQL plans the same text with its statistics either way.
        let no_later_bound = binds.int(i64::MAX);
        let sql = format!(
            "SELECT g.vendor_id, v.name, g.bucket, g.owed_high, g.owed_low, g.invoices FROM ( \
             SELECT x.vendor_id, {bucket} AS bucket, \
             CAST(SUM(x.owed / 4294967296) AS BIGINT) AS owed_high, \
             CAST(SUM(x.owed % 4294967296) AS BIGINT) AS owed_low, COUNT(*) AS invoices \
             FROM (SELECT i.vendor_id + 0 AS vendor_id, i.due_date, \
             i.amount - i.paid - i.credited + COALESCE(l.later, 0) + COALESCE(c.later, 0) AS owed \
             FROM invoices i LEFT JOIN (SELECT invoice_id, CAST(SUM(amount) AS BIGINT) AS later FROM transactions \
             WHERE is_active AND transaction_date >= {counts_before} AND transaction_date < {no_later_bound} \
             GROUP BY invoice_id) l ON l.invoice_id = i.id \
             LEFT JOIN (SELECT invoice_id, CAST(SUM(amount) AS BIGINT) AS later FROM credit_applications \
             WHERE is_active AND date >= {counts_before} AND date < {no_later_bound} \
             GROUP BY invoice_id) c ON c.invoice_id = i.id \
             WHERE i.is_active AND +i.invoice_date < {counts_before}{vendor}) x \
             WHERE x.owed > 0 GROUP BY x.vendor_id, bucket) g JOIN vendors v ON v.id = g.vendor_id",
        );
        let mut aging = AgingBuilder::new();
        for row in &binds.query(sql).fetch_all(&mut *conn).await? {
            let name: String = row.try_get("name")?;
            let owed = pair_of(row, pair_columns!("owed"))?;
            aging.add(
                VendorId(row.try_get("vendor_id")?),
                &name,
                bucket_of(row)?,
                owed,
                count(row.try_get("invoices")?),
            );
        }
        Ok(aging)
    }

    /// A page of today's aging from the kept figures (D41, D43), in one snapshot: the vendors
    /// with rows dated after today, the first of the kept ranking, the open invoices of the
    /// page's vendors by due date, and the open figures of every due date, for
    /// [`TodaysAgingPage`] to put together.
    pub(super) async fn todays_aging_page_in(
        conn: &mut Conn,
        bounds: &AgingBounds,
        page: PageRequest,
    ) -> Result<Aging> {
        // Invoices dated after today, along the invoice date index; payments dated after today,
        // along the payments' date index. Each range is bounded on both sides (as in
        // `aging_rows`), and each is its own statement: SQLite planned the two as one `UNION`
        // in 1.3 ms over a million invoices, and each alone in microseconds.
        let mut disturbed: Vec<i64> = Vec::new();
        for sql in [
            "SELECT DISTINCT i.vendor_id FROM invoices i WHERE i.invoice_date >= $1 AND i.invoice_date < $2 \
             AND i.is_active",
            "SELECT DISTINCT i.vendor_id FROM transactions t JOIN invoices i ON i.id = t.invoice_id \
             WHERE t.transaction_date >= $1 AND t.transaction_date < $2 AND t.is_active",
        ] {
            let found: Vec<i64> =
                sqlx::query_scalar(sql).bind(micros(bounds.counts_before)).bind(i64::MAX).fetch_all(&mut *conn).await?;
            disturbed.extend(found);
        }
        let mut plan = TodaysAgingPage::new(*bounds, page, disturbed.into_iter().map(VendorId));
        if plan.whole_is_better() {
            return Ok(plan.cut(Self::aging_rows(conn, bounds, AgingOf::Every).await?));
        }
        let disturbed: Vec<VendorId> = plan.disturbed().collect();
        let ranked = sqlx::query(concat!(
            "SELECT id, name, owed_high, owed_low FROM vendors WHERE open_invoices > 0 \
             ORDER BY owed_high DESC, owed_low DESC, name_key, name",
            byte_order!(),
            ", id LIMIT $1"
        ))
        .bind(i64::try_from(plan.ranked_needed()).unwrap_or(i64::MAX))
        .fetch_all(&mut *conn)
        .await?;
        let ranked = ranked.iter().map(kept_owed).collect::<Result<Vec<_>>>()?;
        let owing: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM vendors WHERE open_invoices > 0").fetch_one(&mut *conn).await?;
        let (exact, disturbed_kept) = if disturbed.is_empty() {
            (AgingBuilder::new(), Vec::new())
        } else {
            let exact = Self::aging_rows(conn, bounds, AgingOf::These(&disturbed)).await?;
            let mut binds = Binds::default();
            let list = id_list(&mut binds, &disturbed);
            let rows = binds
                .query(format!("SELECT id, name, owed_high, owed_low FROM vendors WHERE id {list}"))
                .fetch_all(&mut *conn)
                .await?;
            (exact, rows.iter().map(kept_owed).collect::<Result<Vec<_>>>()?)
        };
        let mut read = plan.choose(ranked, exact);
        read.extend_from_slice(&disturbed);
        let mut open = Vec::new();
        if !read.is_empty() {
            // Along `invoices_open_by_vendor`, whose condition these repeat: one range of due
            // dates per bucket, each summed in index order (a bucket computed per row would be
            // grouped through a sort: 5 ms instead of 2 for the 13,073 open invoices of the
            // first page at a chain's scale).
            let mut binds = Binds::default();
            let list = id_list(&mut binds, &read);
            let mut parts = Vec::new();
            for (index, range) in due_ranges(&mut binds, bounds).into_iter().enumerate() {
                parts.push(format!(
                    "SELECT vendor_id, CAST({index} AS BIGINT) AS bucket, \
                     CAST(SUM((amount - paid - credited) / 4294967296) AS BIGINT) AS owed_high, \
                     CAST(SUM((amount - paid - credited) % 4294967296) AS BIGINT) AS owed_low, COUNT(*) AS invoices \
                     FROM invoices WHERE vendor_id {list} AND {range} AND is_active AND amount > paid + credited \
                     GROUP BY vendor_id"
                ));
            }
            let sql = parts.join(" UNION ALL ");
            for row in &binds.query(sql).fetch_all(&mut *conn).await? {
                let owed = pair_of(row, pair_columns!("owed"))?;
                open.push((
                    VendorId(row.try_get("vendor_id")?),
                    bucket_of(row)?,
                    owed,
                    count(row.try_get("invoices")?),
                ));
            }
        }
        let mut binds = Binds::default();
        let bucket = bucket_case(&mut binds, bounds, "due_date");
        let sql = format!(
            "SELECT {bucket} AS bucket, CAST(SUM(open_count) AS BIGINT) AS invoices, \
             CAST(SUM(pending_high) AS BIGINT) AS owed_high, CAST(SUM(pending_low) AS BIGINT) AS owed_low \
             FROM invoice_open_counts GROUP BY bucket"
        );
        let mut kept_totals = AgingFigures::default();
        for row in &binds.query(sql).fetch_all(&mut *conn).await? {
            kept_totals.add(bucket_of(row)?, pair_of(row, pair_columns!("owed"))?, count(row.try_get("invoices")?));
        }
        Ok(plan.finish(count(owing), &disturbed_kept, &open, kept_totals))
    }
}
