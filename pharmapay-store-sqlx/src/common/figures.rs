//! Kept figures over SQL (D41): applying a write's [`FigureChange`] in its own transaction,
//! reading the figures back, and recounting them from the rows.
//!
//! What a row contributes is `pharmapay_core::figures`' to say; this file only stores the
//! result. Wide sums are exact pairs (`<name>_high`, `<name>_low`, value = high * 2^32 + low,
//! 0 <= low < 2^32, see migration 4): a change is added as a pair of the same form and the
//! carry of the low halves moves into the high half, so no statement ever overflows 64 bits.
//! Figure rows are changed in one order (vendors by id, due dates, days, then the totals), after
//! the payments, vendors and invoices a write locks (in that order, D48), so concurrent writers
//! never wait in a cycle: a vendor's figures live in its row, which the write locked first.

use pharmapay_core::BusinessCalendar;
use pharmapay_core::figures::{
    Contribution, CreditFacts, DayFigures, FigureChange, InvoiceFacts, KeptCount, KeptFigures, KeptTerm, LedgerTotals,
    OpenFigures, PaymentFacts, VendorDayFigures, VendorFacts, VendorFigures, day_key, day_of_key, days_of,
    vendor_days_of,
};
use pharmapay_core::ids::{BranchId, VendorId};
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::jiff::civil::Date;
use pharmapay_core::money::MAX_FRACTION_DIGITS;
use pharmapay_core::reports::setting::TIME_ZONE;
use pharmapay_core::rust_decimal::Decimal;
use sqlx::Row;

use super::binds::{Binds, Script, rows_in};
use super::conn::{instant, micros};
use super::{Conn, DbRow, Result};
use crate::error::Error;

/// 2^32: the weight of a pair's high half.
const HALF: i128 = 4_294_967_296;

/// The pair of a wide scaled value.
pub(super) fn split(value: i128) -> Result<(i64, i64)> {
    let high = i64::try_from(value.div_euclid(HALF)).map_err(|_| Error::corrupt("a kept sum past 95 bits"))?;
    Ok((high, value.rem_euclid(HALF) as i64))
}

/// The wide scaled value of a pair.
pub(super) fn join(high: i64, low: i64) -> i128 {
    i128::from(high) * HALF + i128::from(low)
}

/// `value` in ten-thousandths, exactly.
pub(super) fn scaled(value: Decimal) -> Result<i128> {
    let mut value = value;
    value.rescale(MAX_FRACTION_DIGITS);
    if value.scale() != MAX_FRACTION_DIGITS {
        return Err(Error::corrupt(format!("a kept sum with more than four decimals: {value}")));
    }
    Ok(value.mantissa())
}

/// A value in ten-thousandths as a normalised decimal.
pub(super) fn unscaled(value: i128) -> Decimal {
    Decimal::from_i128_with_scale(value, MAX_FRACTION_DIGITS).normalize()
}

/// The pair of a decimal change.
fn pair(value: Decimal) -> Result<(i64, i64)> {
    split(scaled(value)?)
}

/// The decimal of the pair `columns` of `row`, named with [`pair_columns!`].
pub(super) fn pair_of(row: &DbRow, [high, low]: [&str; 2]) -> Result<Decimal> {
    let high: i64 = row.try_get(high)?;
    let low: i64 = row.try_get(low)?;
    Ok(unscaled(join(high, low)))
}

/// The SQL that sets the pair column `name` of `table` to itself plus the pair `high`, `low`
/// (expressions), carrying the low halves' overflow into the high half: for an `UPDATE ... SET`
/// or an upsert's `DO UPDATE SET`.
fn add_pair(table: &str, name: &str, high: &str, low: &str) -> String {
    format!(
        "{name}_high = {table}.{name}_high + {high} + ({table}.{name}_low + {low}) / 4294967296, \
         {name}_low = ({table}.{name}_low + {low}) % 4294967296"
    )
}

/// Rows per multi-row statement when applying a change: well under both backends' limits on
/// bound values.
const APPLY_CHUNK: usize = 500;

/// The most rows of a kind a change may touch to be applied within a write's closing script
/// ([`script`]); a single write touches one or two.
const SCRIPT_ROWS: usize = 16;

/// The calendar that files payments under their business days (D3, D41): the `TimeZone`
/// setting as this write transaction reads it. On PostgreSQL the row is read `FOR SHARE`, so a
/// change of zone, which recounts every day figure, waits for this write to end, and this write
/// waits for a change under way to end before reading the new zone; on SQLite the write already
/// holds the database.
pub(super) async fn write_calendar(conn: &mut Conn) -> Result<BusinessCalendar> {
    let row = sqlx::query(CALENDAR_SETTING).bind(TIME_ZONE).fetch_optional(&mut *conn).await?;
    calendar_from(row)
}

/// The time zone setting's row, shared-locked until the write ends (binds: the setting's key).
pub(super) const CALENDAR_SETTING: &str = concat!("SELECT value FROM settings WHERE key = $1", for_share!());

/// The business calendar of the time zone setting's row, if any ([`CALENDAR_SETTING`]).
pub(super) fn calendar_from(row: Option<DbRow>) -> Result<BusinessCalendar> {
    let value: Option<String> = row.map(|row| row.try_get("value")).transpose()?;
    Ok(BusinessCalendar::from_setting(value.as_deref()))
}

/// An invoice's facts from a row holding `vendor_id`, `is_active`, `credited`, `due_date` and
/// `invoice_date` (whose business day `calendar` reads), with its scaled amount and paid total
/// in the columns `amount` and `paid` name.
pub(super) fn invoice_facts(
    row: &DbRow,
    amount: &str,
    paid: &str,
    calendar: &BusinessCalendar,
) -> Result<InvoiceFacts> {
    let amount: i64 = row.try_get(amount)?;
    let paid: i64 = row.try_get(paid)?;
    let credited: i64 = row.try_get("credited")?;
    Ok(InvoiceFacts {
        vendor_id: VendorId(row.try_get("vendor_id")?),
        branch_id: BranchId(row.try_get("branch_id")?),
        is_active: row.try_get("is_active")?,
        amount: unscaled(i128::from(amount)),
        paid: unscaled(i128::from(paid)),
        credited: unscaled(i128::from(credited)),
        due_date: instant(row.try_get("due_date")?)?,
        day: calendar.date_of(instant(row.try_get("invoice_date")?)?),
    })
}

/// The facts of invoice `invoice`'s active payments as they stand, for a write that changes
/// whose statement shows them (D35), made under the invoice's lock; inactive payments show on
/// no statement.
pub(super) async fn payments_of(
    conn: &mut Conn,
    invoice: &InvoiceFacts,
    invoice_id: i64,
    calendar: &BusinessCalendar,
) -> Result<Vec<PaymentFacts>> {
    let rows =
        sqlx::query("SELECT is_active, amount, transaction_date FROM transactions WHERE invoice_id = $1 AND is_active")
            .bind(invoice_id)
            .fetch_all(&mut *conn)
            .await?;
    rows.iter()
        .map(|row| {
            let amount: i64 = row.try_get("amount")?;
            let date = instant(row.try_get("transaction_date")?)?;
            Ok(PaymentFacts::new(row.try_get("is_active")?, unscaled(i128::from(amount)), date, calendar, invoice))
        })
        .collect()
}

/// Applies `change` to the kept figures, in the write's transaction, with multi-row statements
/// (a write touches one or two rows of each kind; an import, thousands).
pub(super) async fn apply(conn: &mut Conn, change: &FigureChange) -> Result<()> {
    let vendors: Vec<(VendorId, &VendorFigures)> = change.vendors().collect();
    if vendors.len() > 1 {
        // Several vendors change together: lock them in id order first, so two such writes
        // never wait on each other in a cycle (the multi-row UPDATE locks in no set order).
        let ids: Vec<i64> = vendors.iter().map(|(id, _)| id.get()).collect();
        rows_in(conn, &ids, |list| format!("SELECT id FROM vendors WHERE id IN ({list}) ORDER BY id{}", for_update!()))
            .await?;
    }
    for chunk in vendors.chunks(APPLY_CHUNK) {
        let mut binds = Binds::in_order();
        let sql = add_to_vendors(&mut binds, chunk)?;
        binds.query(sql).execute(&mut *conn).await?;
    }
    let open: Vec<(Timestamp, &OpenFigures)> = change.open_by_due_date().collect();
    for chunk in open.chunks(APPLY_CHUNK) {
        let mut binds = Binds::in_order();
        let sql = add_to_open_counts(&mut binds, chunk)?;
        binds.query(sql).execute(&mut *conn).await?;
    }
    let days: Vec<(Date, &DayFigures)> = change.days().collect();
    for chunk in days.chunks(APPLY_CHUNK) {
        let mut binds = Binds::in_order();
        let sql = add_to_days(&mut binds, chunk)?;
        binds.query(sql).execute(&mut *conn).await?;
    }
    let vendor_days: Vec<((VendorId, Date), &VendorDayFigures)> = change.vendor_days().collect();
    for chunk in vendor_days.chunks(APPLY_CHUNK) {
        let mut binds = Binds::in_order();
        let sql = add_to_vendor_days(&mut binds, chunk)?;
        binds.query(sql).execute(&mut *conn).await?;
    }
    if let Some(totals) = change.totals() {
        let mut binds = Binds::default();
        let sql = add_to_totals(&mut binds, totals)?;
        binds.query(sql).execute(&mut *conn).await?;
    }
    Ok(())
}

/// Appends the statements that apply `change` to `script`, when it is a single write's change
/// (one vendor, a statement of each kind); answers `false`, appending nothing, for a larger
/// change, which [`apply`] must make.
pub(super) fn script(script: &mut Script, change: &FigureChange) -> Result<bool> {
    let vendors: Vec<(VendorId, &VendorFigures)> = change.vendors().collect();
    let open: Vec<(Timestamp, &OpenFigures)> = change.open_by_due_date().collect();
    let days: Vec<(Date, &DayFigures)> = change.days().collect();
    let vendor_days: Vec<((VendorId, Date), &VendorDayFigures)> = change.vendor_days().collect();
    if vendors.len() > 1 || open.len() > SCRIPT_ROWS || days.len() > SCRIPT_ROWS || vendor_days.len() > SCRIPT_ROWS {
        return Ok(false);
    }
    if !vendors.is_empty() {
        script.push(|binds| add_to_vendors(binds, &vendors))?;
    }
    if !open.is_empty() {
        script.push(|binds| add_to_open_counts(binds, &open))?;
    }
    if !days.is_empty() {
        script.push(|binds| add_to_days(binds, &days))?;
    }
    if !vendor_days.is_empty() {
        script.push(|binds| add_to_vendor_days(binds, &vendor_days))?;
    }
    if let Some(totals) = change.totals() {
        script.push(|binds| add_to_totals(binds, totals))?;
    }
    Ok(true)
}

/// Adds each vendor's figures to its row.
fn add_to_vendors(binds: &mut Binds, vendors: &[(VendorId, &VendorFigures)]) -> Result<String> {
    let mut rows = Vec::with_capacity(vendors.len());
    for (vendor_id, vendor) in vendors {
        let (invoiced_high, invoiced_low) = pair(vendor.invoiced)?;
        let (outstanding_high, outstanding_low) = pair(vendor.outstanding())?;
        let (owed_high, owed_low) = pair(vendor.owed)?;
        let (credited_high, credited_low) = pair(vendor.credited)?;
        let (available_high, available_low) = pair(vendor.available_credit)?;
        let values = [
            binds.int(vendor_id.get()),
            binds.int(vendor.active_invoices),
            binds.int(invoiced_high),
            binds.int(invoiced_low),
            binds.int(outstanding_high),
            binds.int(outstanding_low),
            binds.int(vendor.open_invoices),
            binds.int(owed_high),
            binds.int(owed_low),
            binds.int(credited_high),
            binds.int(credited_low),
            binds.int(available_high),
            binds.int(available_low),
        ];
        rows.push(format!("({})", values.join(", ")));
    }
    Ok(format!(
        "UPDATE vendors SET active_invoices = vendors.active_invoices + d.column2, {}, {}, \
         open_invoices = vendors.open_invoices + d.column7, {}, {}, {} \
         FROM (VALUES {}) AS d WHERE vendors.id = d.column1",
        add_pair("vendors", "invoiced", "d.column3", "d.column4"),
        add_pair("vendors", "outstanding", "d.column5", "d.column6"),
        add_pair("vendors", "owed", "d.column8", "d.column9"),
        add_pair("vendors", "credited", "d.column10", "d.column11"),
        add_pair("vendors", "available_credit", "d.column12", "d.column13"),
        rows.join(", ")
    ))
}

/// Adds the open invoices' figures to their due dates' rows, creating those missing.
fn add_to_open_counts(binds: &mut Binds, open: &[(Timestamp, &OpenFigures)]) -> Result<String> {
    let mut rows = Vec::with_capacity(open.len());
    for (due_date, open) in open {
        let (high, low) = pair(open.pending)?;
        let values = [binds.int(micros(*due_date)), binds.int(open.invoices), binds.int(high), binds.int(low)];
        rows.push(format!("({})", values.join(", ")));
    }
    Ok(format!(
        "INSERT INTO invoice_open_counts (due_date, open_count, pending_high, pending_low) VALUES {} \
         ON CONFLICT (due_date) DO UPDATE SET open_count = invoice_open_counts.open_count + excluded.open_count, {}",
        rows.join(", "),
        add_pair("invoice_open_counts", "pending", "excluded.pending_high", "excluded.pending_low")
    ))
}

/// Adds the payments' figures to their business days' rows, creating those missing.
fn add_to_days(binds: &mut Binds, days: &[(Date, &DayFigures)]) -> Result<String> {
    let mut rows = Vec::with_capacity(days.len());
    for (day, figures) in days {
        let (high, low) = pair(figures.amount)?;
        let values = [binds.int(day_key(*day)), binds.int(figures.payments), binds.int(high), binds.int(low)];
        rows.push(format!("({})", values.join(", ")));
    }
    Ok(format!(
        "INSERT INTO payment_days (day, payments, amount_high, amount_low) VALUES {} ON CONFLICT (day) \
         DO UPDATE SET payments = payment_days.payments + excluded.payments, {}",
        rows.join(", "),
        add_pair("payment_days", "amount", "excluded.amount_high", "excluded.amount_low")
    ))
}

/// Adds each vendor's statement lines to their days' rows, creating those missing.
fn add_to_vendor_days(binds: &mut Binds, days: &[((VendorId, Date), &VendorDayFigures)]) -> Result<String> {
    let mut rows = Vec::with_capacity(days.len());
    for ((vendor_id, day), figures) in days {
        let (invoiced_high, invoiced_low) = pair(figures.invoiced)?;
        let (paid_high, paid_low) = pair(figures.paid)?;
        let (credited_high, credited_low) = pair(figures.credited)?;
        let values = [
            binds.int(vendor_id.get()),
            binds.int(day_key(*day)),
            binds.int(figures.invoices),
            binds.int(invoiced_high),
            binds.int(invoiced_low),
            binds.int(figures.payments),
            binds.int(paid_high),
            binds.int(paid_low),
            binds.int(figures.credits),
            binds.int(credited_high),
            binds.int(credited_low),
        ];
        rows.push(format!("({})", values.join(", ")));
    }
    Ok(format!(
        "INSERT INTO vendor_days (vendor_id, day, invoices, invoiced_high, invoiced_low, payments, paid_high, paid_low, \
         credits, credited_high, credited_low) \
         VALUES {} ON CONFLICT (vendor_id, day) DO UPDATE SET invoices = vendor_days.invoices + excluded.invoices, \
         payments = vendor_days.payments + excluded.payments, credits = vendor_days.credits + excluded.credits, \
         {}, {}, {}",
        rows.join(", "),
        add_pair("vendor_days", "invoiced", "excluded.invoiced_high", "excluded.invoiced_low"),
        add_pair("vendor_days", "paid", "excluded.paid_high", "excluded.paid_low"),
        add_pair("vendor_days", "credited", "excluded.credited_high", "excluded.credited_low")
    ))
}

/// A vendor's statement lines of one day from a row of `vendor_days`.
pub(super) fn vendor_day_from(row: &DbRow) -> Result<(Date, VendorDayFigures)> {
    let key: i64 = row.try_get("day")?;
    let day = day_of_key(key).ok_or_else(|| Error::corrupt(format!("day key {key}")))?;
    Ok((
        day,
        VendorDayFigures {
            invoices: row.try_get("invoices")?,
            invoiced: pair_of(row, pair_columns!("invoiced"))?,
            payments: row.try_get("payments")?,
            paid: pair_of(row, pair_columns!("paid"))?,
            credits: row.try_get("credits")?,
            credited: pair_of(row, pair_columns!("credited"))?,
        },
    ))
}

/// Adds `totals` to the installation's one row.
fn add_to_totals(binds: &mut Binds, totals: &LedgerTotals) -> Result<String> {
    let mut sets = Vec::new();
    for (column, value) in [
        ("vendors", totals.vendors),
        ("active_vendors", totals.active_vendors),
        ("invoices", totals.invoices),
        ("active_invoices", totals.active_invoices),
        ("open_invoices", totals.open_invoices),
        ("payments", totals.payments),
        ("active_payments", totals.active_payments),
        ("credits_available", totals.credits_available),
        ("pending_claims", totals.pending_claims),
    ] {
        if value != 0 {
            sets.push(format!("{column} = ledger_totals.{column} + {}", binds.int(value)));
        }
    }
    for (column, value) in [
        ("invoiced", totals.invoiced),
        ("invoice_paid", totals.invoice_paid),
        ("paid_out", totals.paid_out),
        ("invoice_credited", totals.invoice_credited),
        ("available_credit", totals.available_credit),
        ("pending_claimed", totals.pending_claimed),
    ] {
        if value.is_zero() {
            continue;
        }
        let (high, low) = pair(value)?;
        let (high, low) = (binds.int(high), binds.int(low));
        sets.push(add_pair("ledger_totals", column, &high, &low));
    }
    Ok(format!("UPDATE ledger_totals SET {} WHERE id = 1", sets.join(", ")))
}

/// A statement that answers `count` from the kept figures, for a list's `total_count`; the
/// terms are core's ([`KeptCount::terms`]), this only names their columns. Open invoices due
/// before today are summed over the due dates before `today_start`.
pub(super) fn kept_count(binds: &mut Binds, count: KeptCount, today_start: Option<Timestamp>) -> String {
    let terms: Vec<String> = count
        .terms()
        .iter()
        .map(|(term, sign)| {
            let value = match term {
                KeptTerm::Vendors => "t.vendors".to_owned(),
                KeptTerm::ActiveVendors => "t.active_vendors".to_owned(),
                KeptTerm::Invoices => "t.invoices".to_owned(),
                KeptTerm::ActiveInvoices => "t.active_invoices".to_owned(),
                KeptTerm::OpenInvoices => "t.open_invoices".to_owned(),
                KeptTerm::OpenInvoicesDueBeforeToday => format!(
                    "(SELECT CAST(COALESCE(SUM(c.open_count), 0) AS BIGINT) FROM invoice_open_counts c \
                     WHERE c.due_date < {})",
                    binds.int(micros(today_start.unwrap_or(Timestamp::MIN)))
                ),
                KeptTerm::Payments => "t.payments".to_owned(),
                KeptTerm::ActivePayments => "t.active_payments".to_owned(),
            };
            format!("({sign}) * {value}")
        })
        .collect();
    if terms.is_empty() {
        return "SELECT CAST(0 AS BIGINT)".to_owned();
    }
    format!("SELECT {} FROM ledger_totals t WHERE t.id = 1", terms.join(" + "))
}

/// The columns of the installation's totals, from `ledger_totals`.
macro_rules! ledger_totals_columns {
    () => {
        "vendors, active_vendors, invoices, active_invoices, open_invoices, invoiced_high, invoiced_low, \
         invoice_paid_high, invoice_paid_low, payments, active_payments, paid_out_high, paid_out_low, \
         invoice_credited_high, invoice_credited_low, credits_available, available_credit_high, available_credit_low, \
         pending_claims, pending_claimed_high, pending_claimed_low"
    };
}

/// The installation's totals from a row holding [`ledger_totals_columns!`].
pub(super) fn ledger_totals_from(row: &DbRow) -> Result<LedgerTotals> {
    Ok(LedgerTotals {
        vendors: row.try_get("vendors")?,
        active_vendors: row.try_get("active_vendors")?,
        invoices: row.try_get("invoices")?,
        active_invoices: row.try_get("active_invoices")?,
        open_invoices: row.try_get("open_invoices")?,
        invoiced: pair_of(row, pair_columns!("invoiced"))?,
        invoice_paid: pair_of(row, pair_columns!("invoice_paid"))?,
        payments: row.try_get("payments")?,
        active_payments: row.try_get("active_payments")?,
        paid_out: pair_of(row, pair_columns!("paid_out"))?,
        invoice_credited: pair_of(row, pair_columns!("invoice_credited"))?,
        credits_available: row.try_get("credits_available")?,
        available_credit: pair_of(row, pair_columns!("available_credit"))?,
        pending_claims: row.try_get("pending_claims")?,
        pending_claimed: pair_of(row, pair_columns!("pending_claimed"))?,
    })
}

/// A day's figures from a row of `payment_days`.
pub(super) fn day_from(row: &DbRow) -> Result<(Date, DayFigures)> {
    let key: i64 = row.try_get("day")?;
    let day = day_of_key(key).ok_or_else(|| Error::corrupt(format!("day key {key}")))?;
    Ok((day, DayFigures { payments: row.try_get("payments")?, amount: pair_of(row, pair_columns!("amount"))? }))
}

/// Every kept figure as stored.
pub(super) async fn kept(conn: &mut Conn) -> Result<KeptFigures> {
    let mut figures = KeptFigures::default();
    let totals = sqlx::query(concat!("SELECT ", ledger_totals_columns!(), " FROM ledger_totals WHERE id = 1"))
        .fetch_one(&mut *conn)
        .await?;
    figures.totals = ledger_totals_from(&totals)?;
    let vendors = sqlx::query(
        "SELECT id, active_invoices, invoiced_high, invoiced_low, outstanding_high, outstanding_low, open_invoices, \
         owed_high, owed_low, credited_high, credited_low, available_credit_high, available_credit_low FROM vendors",
    )
    .fetch_all(&mut *conn)
    .await?;
    for row in &vendors {
        let vendor = VendorFigures::of_balance(
            row.try_get("active_invoices")?,
            pair_of(row, pair_columns!("invoiced"))?,
            pair_of(row, pair_columns!("outstanding"))?,
        )
        .with_open(row.try_get("open_invoices")?, pair_of(row, pair_columns!("owed"))?)
        .with_credits(pair_of(row, pair_columns!("credited"))?, pair_of(row, pair_columns!("available_credit"))?);
        if vendor != VendorFigures::default() {
            figures.vendors.insert(VendorId(row.try_get("id")?), vendor);
        }
    }
    for row in sqlx::query("SELECT due_date, open_count, pending_high, pending_low FROM invoice_open_counts")
        .fetch_all(&mut *conn)
        .await?
    {
        let open =
            OpenFigures { invoices: row.try_get("open_count")?, pending: pair_of(&row, pair_columns!("pending"))? };
        if open != OpenFigures::default() {
            figures.open_by_due_date.insert(instant(row.try_get("due_date")?)?, open);
        }
    }
    for row in
        sqlx::query("SELECT day, payments, amount_high, amount_low FROM payment_days").fetch_all(&mut *conn).await?
    {
        let (day, figures_of_day) = day_from(&row)?;
        if figures_of_day != DayFigures::default() {
            figures.days.insert(day, figures_of_day);
        }
    }
    for row in sqlx::query(
        "SELECT vendor_id, day, invoices, invoiced_high, invoiced_low, payments, paid_high, paid_low, credits, \
         credited_high, credited_low FROM vendor_days",
    )
    .fetch_all(&mut *conn)
    .await?
    {
        let (day, lines) = vendor_day_from(&row)?;
        if lines != VendorDayFigures::default() {
            figures.vendor_days.insert((VendorId(row.try_get("vendor_id")?), day), lines);
        }
    }
    Ok(figures)
}

/// Rows read per statement by a recount.
const RECOUNT_CHUNK: i64 = 10_000;

/// Reads the rows of `sql` (which selects `id` and takes the last id read as `$1` and the chunk
/// size as `$2`) in id order, chunk by chunk, adding the facts `facts` makes of each to
/// `figures`: memory stays flat whatever the table holds.
async fn recount_rows<R: Contribution>(
    conn: &mut Conn,
    sql: &'static str,
    figures: &mut KeptFigures,
    facts: impl Fn(&DbRow) -> Result<R>,
) -> Result<()> {
    let mut after = i64::MIN;
    loop {
        let rows = sqlx::query(sql).bind(after).bind(RECOUNT_CHUNK).fetch_all(&mut *conn).await?;
        let Some(last) = rows.last() else { return Ok(()) };
        after = last.try_get("id")?;
        figures.add_rows(rows.iter().map(&facts).collect::<Result<Vec<R>>>()?);
    }
}

/// Every figure recounted from the rows, with payments filed under `calendar`'s days.
pub(super) async fn recount(conn: &mut Conn, calendar: &BusinessCalendar) -> Result<KeptFigures> {
    let mut figures = KeptFigures::default();
    recount_rows(conn, "SELECT id, is_active FROM vendors WHERE id > $1 ORDER BY id LIMIT $2", &mut figures, |row| {
        Ok(VendorFacts { is_active: row.try_get("is_active")? })
    })
    .await?;
    recount_rows(
        conn,
        "SELECT id, vendor_id, branch_id, is_active, amount, paid, credited, due_date, invoice_date FROM invoices WHERE id > $1 \
         ORDER BY id LIMIT $2",
        &mut figures,
        |row| invoice_facts(row, "amount", "paid", calendar),
    )
    .await?;
    recount_rows(
        conn,
        "SELECT t.id, t.is_active, t.amount, t.transaction_date, i.vendor_id, i.is_active AS invoice_active \
         FROM transactions t JOIN invoices i ON i.id = t.invoice_id WHERE t.id > $1 ORDER BY t.id LIMIT $2",
        &mut figures,
        |row| {
            let amount: i64 = row.try_get("amount")?;
            let date = instant(row.try_get("transaction_date")?)?;
            let payment = PaymentFacts::dated(row.try_get("is_active")?, unscaled(i128::from(amount)), date, calendar);
            let invoice_active: bool = row.try_get("invoice_active")?;
            Ok(PaymentFacts { owner: invoice_active.then_some(VendorId(row.try_get("vendor_id")?)), ..payment })
        },
    )
    .await?;
    recount_rows(conn, CREDIT_FACTS_AFTER, &mut figures, |row| credit_facts(row, calendar)).await?;
    Ok(figures)
}

/// The credits after the id `$1`, at most `$2`, in id order, with what [`credit_facts`] reads.
const CREDIT_FACTS_AFTER: &str = "SELECT id, vendor_id, branch_id, is_active, claimed, claim_date, accepted, decision_date, applied \
     FROM vendor_credits WHERE id > $1 ORDER BY id LIMIT $2";

/// A credit's facts (D44) from a row holding `vendor_id`, `is_active`, `claimed`, `claim_date`,
/// `accepted`, `decision_date` (whose business day `calendar` reads) and `applied`.
pub(super) fn credit_facts(row: &DbRow, calendar: &BusinessCalendar) -> Result<CreditFacts> {
    let scaled = |column: &str| -> Result<Decimal> { Ok(unscaled(i128::from(row.try_get::<i64, _>(column)?))) };
    let decision_date = row.try_get::<Option<i64>, _>("decision_date")?.map(instant).transpose()?;
    Ok(CreditFacts {
        vendor_id: VendorId(row.try_get("vendor_id")?),
        branch_id: BranchId(row.try_get("branch_id")?),
        is_active: row.try_get("is_active")?,
        claimed: scaled("claimed")?,
        claim_date: instant(row.try_get("claim_date")?)?,
        accepted: row.try_get::<Option<i64>, _>("accepted")?.map(|accepted| unscaled(i128::from(accepted))),
        decision_date,
        decided_on: decision_date.map(|date| calendar.date_of(date)),
        applied: scaled("applied")?,
    })
}

/// Replaces every kept figure by `figures` (after a migration recounted them).
pub(super) async fn replace(conn: &mut Conn, figures: &KeptFigures) -> Result<()> {
    sqlx::query(
        "UPDATE vendors SET active_invoices = 0, invoiced_high = 0, invoiced_low = 0, outstanding_high = 0, \
         outstanding_low = 0, open_invoices = 0, owed_high = 0, owed_low = 0, credited_high = 0, credited_low = 0, \
         available_credit_high = 0, available_credit_low = 0",
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM invoice_open_counts").execute(&mut *conn).await?;
    sqlx::query("DELETE FROM payment_days").execute(&mut *conn).await?;
    sqlx::query("DELETE FROM vendor_days").execute(&mut *conn).await?;
    sqlx::query(
        "UPDATE ledger_totals SET vendors = 0, active_vendors = 0, invoices = 0, active_invoices = 0, \
         open_invoices = 0, invoiced_high = 0, invoiced_low = 0, invoice_paid_high = 0, invoice_paid_low = 0, \
         payments = 0, active_payments = 0, paid_out_high = 0, paid_out_low = 0, invoice_credited_high = 0, \
         invoice_credited_low = 0, credits_available = 0, available_credit_high = 0, available_credit_low = 0, \
         pending_claims = 0, pending_claimed_high = 0, pending_claimed_low = 0 WHERE id = 1",
    )
    .execute(&mut *conn)
    .await?;
    apply(conn, &figures.as_change()).await
}

/// Replaces the day figures by those of `calendar`'s days (D41: a new `TimeZone`), in the
/// transaction that changes the setting. Payments are read grouped by their date, over the
/// covering index `transactions_by_date`: payments recorded with a bare date share one instant,
/// so the groups are about as many as the days.
pub(super) async fn recount_days(conn: &mut Conn, calendar: &BusinessCalendar) -> Result<()> {
    let rows = sqlx::query(concat!(
        "SELECT transaction_date, COUNT(*) AS payments, ",
        exact_sum!("amount", "amount"),
        " FROM transactions WHERE is_active GROUP BY transaction_date"
    ))
    .fetch_all(&mut *conn)
    .await?;
    let mut groups = Vec::with_capacity(rows.len());
    for row in &rows {
        let date = instant(row.try_get("transaction_date")?)?;
        groups.push((
            date,
            DayFigures { payments: row.try_get("payments")?, amount: pair_of(row, pair_columns!("amount"))? },
        ));
    }
    // Each vendor's statement lines: its active invoices grouped by invoice date, and the
    // active payments of them grouped by payment date.
    let mut lines = Vec::new();
    for sql in [
        concat!(
            "SELECT vendor_id, invoice_date AS at, COUNT(*) AS lines, ",
            exact_sum!("amount", "amount"),
            ", TRUE AS invoiced FROM invoices WHERE is_active GROUP BY vendor_id, invoice_date"
        ),
        concat!(
            "SELECT i.vendor_id, t.transaction_date AS at, COUNT(*) AS lines, ",
            exact_sum!("t.amount", "amount"),
            ", FALSE AS invoiced FROM transactions t JOIN invoices i ON i.id = t.invoice_id \
             WHERE t.is_active AND i.is_active GROUP BY i.vendor_id, t.transaction_date"
        ),
    ] {
        for row in &sqlx::query(sql).fetch_all(&mut *conn).await? {
            let (count, amount): (i64, Decimal) = (row.try_get("lines")?, pair_of(row, pair_columns!("amount"))?);
            let figures = if row.try_get("invoiced")? {
                VendorDayFigures { invoices: count, invoiced: amount, ..VendorDayFigures::default() }
            } else {
                VendorDayFigures { payments: count, paid: amount, ..VendorDayFigures::default() }
            };
            lines.push((VendorId(row.try_get("vendor_id")?), instant(row.try_get("at")?)?, figures));
        }
    }
    // D44: and its active credits with something accepted, by decision date.
    let credits = sqlx::query(
        "SELECT id, vendor_id, branch_id, is_active, claimed, claim_date, accepted, decision_date, applied \
         FROM vendor_credits WHERE is_active AND accepted > 0",
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut figures_of_credits = KeptFigures::default();
    figures_of_credits.add_rows(credits.iter().map(|row| credit_facts(row, calendar)).collect::<Result<Vec<_>>>()?);
    let credit_days = figures_of_credits.vendor_days;
    let mut vendor_days = vendor_days_of(calendar, lines);
    for (key, figures) in credit_days {
        vendor_days.entry(key).or_default().apply(&figures);
    }
    let days = KeptFigures { days: days_of(calendar, groups), vendor_days, ..KeptFigures::default() };
    sqlx::query("DELETE FROM payment_days").execute(&mut *conn).await?;
    sqlx::query("DELETE FROM vendor_days").execute(&mut *conn).await?;
    apply(conn, &days.as_change()).await
}
