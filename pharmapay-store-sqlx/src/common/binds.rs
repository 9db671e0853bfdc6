//! Statements built at run time: the values bound to them, and the pieces lists share.
//!
//! A list's conditions, sort and page are assembled from this crate's literals and
//! placeholders only; [`Binds`] keeps the values in placeholder order, so no value ever
//! becomes SQL text. The filters themselves are their resources' (`vendors.rs`,
//! `invoices.rs`, `payments.rs`).

use pharmapay_core::invoices::StatusTerm;
use pharmapay_core::jiff::Timestamp;
use pharmapay_core::{Page, PageRequest, SortDir};
use sqlx::{AssertSqlSafe, Row};

use super::conn::{count, micros};
use super::{Conn, DbRow, IN_ORDER_PLACEHOLDER, LOOKUP_CHUNK, Query, Result, SCRIPTS_IN_ONE_CALL, SqlStore};

// Binding values to statements built at run time.

use crate::BoundValue as Arg;

/// The values of a statement built at run time; each `bind` answers the placeholder to write.
#[derive(Default)]
pub(super) struct Binds {
    args: Vec<Arg>,
    in_order: bool,
}

impl Binds {
    /// Values whose placeholders are written once each, in the order they are bound, so the
    /// backend's cheapest placeholder can be used (see `IN_ORDER_PLACEHOLDER`). For the large
    /// statements of imports and lookups.
    pub(super) fn in_order() -> Self {
        Self { args: Vec::new(), in_order: true }
    }

    fn push(&mut self, arg: Arg) -> String {
        self.args.push(arg);
        match IN_ORDER_PLACEHOLDER {
            Some(placeholder) if self.in_order => placeholder.to_owned(),
            _ => format!("${}", self.args.len()),
        }
    }

    pub(super) fn int(&mut self, value: impl Into<Option<i64>>) -> String {
        self.push(Arg::Int(value.into()))
    }

    pub(super) fn flag(&mut self, value: bool) -> String {
        self.push(Arg::Bool(value))
    }

    pub(super) fn text(&mut self, value: impl Into<String>) -> String {
        self.push(Arg::Text(Some(value.into())))
    }

    pub(super) fn opt_text(&mut self, value: Option<String>) -> String {
        self.push(Arg::Text(value))
    }

    /// The statement `sql` with its values, as a benchmark times it.
    pub(super) fn statement(self, sql: String) -> crate::BoundStatement {
        crate::BoundStatement { sql, values: self.args }
    }

    /// The statement `sql` with every bound value. `sql` is assembled only from this file's
    /// literals and from placeholders: no value ever becomes SQL text.
    pub(super) fn query(self, sql: String) -> Query {
        let mut query = sqlx::query(AssertSqlSafe(sql));
        for arg in self.args {
            query = match arg {
                Arg::Int(value) => query.bind(value),
                Arg::Bool(value) => query.bind(value),
                Arg::Text(value) => query.bind(value),
            };
        }
        query
    }
}

/// Statements that change rows and read none, sent together: in one call where the backend
/// runs a string of statements (SQLite, whose values are then numbered across the whole
/// script), else one after another. Each statement is built by a closure that binds its values
/// and answers its text.
#[derive(Default)]
pub(super) struct Script {
    statements: Vec<(String, Binds)>,
}

impl Script {
    /// Appends the statement `build` writes.
    pub(super) fn push(&mut self, build: impl FnOnce(&mut Binds) -> Result<String>) -> Result<()> {
        match self.statements.last_mut() {
            Some((text, binds)) if SCRIPTS_IN_ONE_CALL => {
                let statement = build(binds)?;
                text.push_str(";\n");
                text.push_str(&statement);
            }
            _ => {
                let mut binds = Binds::default();
                let statement = build(&mut binds)?;
                self.statements.push((statement, binds));
            }
        }
        Ok(())
    }

    /// Runs the statements, in order.
    pub(super) async fn run(self, conn: &mut Conn) -> Result<()> {
        for (text, binds) in self.statements {
            binds.query(text).execute(&mut *conn).await?;
        }
        Ok(())
    }
}

/// A `LIKE` pattern matching `term` anywhere, with `%`, `_` and the escape character itself
/// matched literally (used with `ESCAPE '\'`).
pub(super) fn contains_pattern(term: &str) -> String {
    let mut pattern = String::with_capacity(term.len() + 2);
    pattern.push('%');
    for c in term.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

pub(super) fn direction(dir: SortDir) -> &'static str {
    match dir {
        SortDir::Asc => "ASC",
        SortDir::Desc => "DESC",
    }
}

/// A page's `LIMIT` and `OFFSET`, written into the statement as numbers rather than bound.
///
/// PostgreSQL plans a prepared statement again on every execution while its generic plan looks
/// dearer than the plans made for the values, and a generic plan cannot see how small the limit
/// is: a default list whose only parameters were its limit and offset was planned anew for each
/// request (0.6-0.9 ms at a chain's scale, most of the payments list's 1.1 ms). A statement with
/// no parameters left keeps one plan per connection. Each page size and page is then a
/// statement text of its own, which sqlx's per-connection cache of prepared statements holds
/// like any other. The numbers come from a validated `PageRequest`, never from text.
/// `column IN (...)` over the branches a list keeps (D49), each a bound value: a scope lists
/// at least one branch and at most a chain's hundreds.
pub(super) fn branch_condition(binds: &mut Binds, column: &str, branches: &[pharmapay_core::ids::BranchId]) -> String {
    if branches.is_empty() {
        return "FALSE".to_owned();
    }
    let values: Vec<String> = branches.iter().map(|branch| binds.int(branch.get())).collect();
    format!("{column} IN ({})", values.join(", "))
}

pub(super) fn page_limits(page: PageRequest) -> (String, String) {
    let offset = i64::try_from(page.offset()).unwrap_or(i64::MAX);
    (page.page_size().to_string(), offset.to_string())
}

/// Adds the conditions of an inclusive range of instants on `column` (`from` and `to`, each
/// optional) to `parts`.
pub(super) fn instant_range(
    parts: &mut Vec<String>,
    binds: &mut Binds,
    column: &str,
    (from, to): (Option<Timestamp>, Option<Timestamp>),
) {
    if let Some(from) = from {
        parts.push(format!("{column} >= {}", binds.int(micros(from))));
    }
    if let Some(to) = to {
        parts.push(format!("{column} <= {}", binds.int(micros(to))));
    }
}

pub(super) fn conditions(parts: Vec<String>) -> String {
    if parts.is_empty() { "TRUE".to_owned() } else { parts.join(" AND ") }
}

/// A value an `IN (...)` list can hold.
pub(super) trait Listed {
    /// Binds the value, answering its placeholder.
    fn placeholder(&self, binds: &mut Binds) -> String;
}

impl Listed for i64 {
    fn placeholder(&self, binds: &mut Binds) -> String {
        binds.int(*self)
    }
}

impl Listed for String {
    fn placeholder(&self, binds: &mut Binds) -> String {
        binds.text(self.clone())
    }
}

/// The rows the statements `sql` writes around `IN` lists of `values` read, a chunk of at most
/// [`LOOKUP_CHUNK`] values per statement, so a long list never passes a backend's limit on
/// bound values.
pub(super) async fn rows_in<V: Listed>(
    conn: &mut Conn,
    values: &[V],
    sql: impl Fn(&str) -> String,
) -> Result<Vec<DbRow>> {
    let mut rows = Vec::new();
    for chunk in values.chunks(LOOKUP_CHUNK) {
        let mut binds = Binds::in_order();
        let list: Vec<String> = chunk.iter().map(|value| value.placeholder(&mut binds)).collect();
        rows.extend(binds.query(sql(&list.join(", "))).fetch_all(&mut *conn).await?);
    }
    Ok(rows)
}

impl SqlStore {
    /// A page of a list (D8): the rows `sql` reads with `binds`, decoded, and the total the
    /// statement read with them (one statement, one snapshot); a page past the end has no row to
    /// carry it, and is counted apart by the statement `recount` builds.
    pub(super) async fn page<T>(
        &self,
        binds: Binds,
        sql: String,
        request: PageRequest,
        decode: impl Fn(&DbRow) -> Result<T>,
        recount: impl FnOnce() -> Query,
    ) -> Result<Page<T>> {
        let mut conn = self.read().await?;
        let rows = binds.query(sql).fetch_all(&mut *conn).await?;
        let items = rows.iter().map(decode).collect::<Result<Vec<_>>>()?;
        let total_count = match rows.first() {
            Some(row) => count(row.try_get("total_count")?),
            None if request.offset() == 0 => 0,
            None => count(recount().fetch_one(&mut *conn).await?.try_get(0)?),
        };
        Ok(Page { items, total_count, page: request.page(), page_size: request.page_size() })
    }
}

/// The SQL condition selecting the invoices of the table or alias `table` that meet every one
/// of `terms`, the status table's (D10, `pharmapay_core::invoices`), today starting at the
/// placeholder `today`: the one rendering of the status table in SQL, which every list, count
/// and lock that selects invoices by status or openness uses. "Still owes" is written
/// `amount - paid - credited > 0` (D44), the expression the pending-amount index is built on.
pub(super) fn terms_condition(table: &str, terms: &[StatusTerm], today: Option<&str>) -> String {
    let rendered: Vec<String> = terms
        .iter()
        .map(|term| match *term {
            StatusTerm::Active(true) => format!("{table}.is_active"),
            StatusTerm::Active(false) => format!("NOT {table}.is_active"),
            StatusTerm::Owes(true) => format!("{table}.amount - {table}.paid - {table}.credited > 0"),
            StatusTerm::Owes(false) => format!("{table}.amount - {table}.paid - {table}.credited <= 0"),
            StatusTerm::DueBeforeToday(before) => {
                let operator = if before { "<" } else { ">=" };
                format!("{table}.due_date {operator} {}", today.unwrap_or("NULL"))
            }
        })
        .collect();
    rendered.join(" AND ")
}
