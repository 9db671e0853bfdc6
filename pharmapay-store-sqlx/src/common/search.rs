//! Search over SQL: a case-insensitive substring of a lower-cased key (`text::key`), answered
//! through a trigram index where the term allows.
//!
//! A term of three characters or more is looked up by its trigrams: in SQLite, the FTS5 tables
//! `invoice_number_search` and `vendor_name_search` (migration 4), asked for the keys holding every
//! trigram of a set that covers the term ([`covering_trigrams`]); in PostgreSQL, `pg_trgm` GIN
//! indexes, which serve the `LIKE` itself (their pending lists, which every search reads whole and
//! every payment's non-HOT row updates add to, are held to 64 kB by migration 11). The substring is
//! always checked as well ([`holds`]), so the answer is the substring match whatever the index, and
//! the index may be asked for a part of the term: invoice numbers are looked up by the term's tail
//! (see [`NUMBER_TAIL`]). A shorter term has no trigram to look up: it is matched by [`holds`]
//! alone, which scans the keys (the vendors' names, or the invoices' numbers joined to their
//! vendors' names), so its cost grows with the two tables.

use super::binds::{Binds, contains_pattern};
use super::{SEARCH_INDEX, SearchIndex};

/// The shortest term a trigram index can look up.
const TRIGRAM: usize = 3;

/// How many of a term's last characters the invoice-number index is asked for.
///
/// Invoice numbers share their beginnings (a vendor's series, a year: `D1-`, `INV/2024/`), so
/// the trigrams there are held by nearly every number, and a lookup that names them reads an
/// entry for nearly every invoice: at a chain's scale `D1-000042` took four times as long as
/// `000042`. The end of a number is what tells numbers apart, so the index is asked for the
/// term's last six characters (the whole term when shorter), and the check of the whole term
/// keeps the answer exact. Fewer would match too many numbers (`042` is in one in seventy).
const NUMBER_TAIL: usize = 6;

/// The last [`NUMBER_TAIL`] characters of `term`, or all of it.
fn number_tail(term: &str) -> &str {
    let skip = term.chars().count().saturating_sub(NUMBER_TAIL);
    term.char_indices().nth(skip).map_or(term, |(start, _)| &term[start..])
}

/// Whether `term` is looked up through the trigram index, which bounds its matches by the
/// index rather than by the table: a term of at least three characters.
pub(super) fn looked_up(term: &str) -> bool {
    term.chars().count() >= TRIGRAM
}

/// An FTS5 query for the keys that hold every trigram of a set covering `term` (at least three
/// characters): the trigrams starting at every third character, and the last one. Each key
/// holding the term is among them; the substring check beside it removes the few that hold the
/// trigrams apart. Asking for the term as a phrase (every trigram, at consecutive positions)
/// read each trigram's list and its positions: at a chain's scale, `remedies` (six trigrams,
/// each held by 1,254 to 2,940 vendor names) took 0.31 ms in the index against 0.15 ms for its
/// three covering ones, and an invoice number's tail `000042` 0.22 ms against 0.15 ms.
fn covering_trigrams(term: &str) -> String {
    let chars: Vec<char> = term.chars().collect();
    let last = chars.len().saturating_sub(TRIGRAM);
    let mut starts: Vec<usize> = (0..=last).step_by(TRIGRAM).collect();
    if starts.last() != Some(&last) {
        starts.push(last);
    }
    let quoted: Vec<String> = starts
        .into_iter()
        .map(|start| {
            let trigram: String = chars[start..(start + TRIGRAM).min(chars.len())].iter().collect();
            format!("\"{}\"", trigram.replace('"', "\"\""))
        })
        .collect();
    quoted.join(" AND ")
}

/// The check that `key_column` holds the term bound as `term` ([`bind_term`]). On SQLite,
/// `instr`: keys and terms are lower-cased alike (`text::key`), so it is the exact substring
/// test, and it costs less than a `LIKE` with an escape character (7 % of the statement of a
/// vendor search that checks 1,254 names at a chain's scale). On PostgreSQL, the `LIKE` that
/// the `pg_trgm` indexes serve.
fn holds(key_column: &str, term: &str) -> String {
    match SEARCH_INDEX {
        SearchIndex::Fts5 => format!("instr({key_column}, {term}) > 0"),
        SearchIndex::Trigram => format!("{key_column} LIKE {term} ESCAPE '\\'"),
    }
}

/// Binds `term` as [`holds`] reads it: as it is for `instr`, as a `LIKE` pattern with its
/// wildcards escaped for PostgreSQL.
fn bind_term(binds: &mut Binds, term: &str) -> String {
    match SEARCH_INDEX {
        SearchIndex::Fts5 => binds.text(term.to_owned()),
        SearchIndex::Trigram => binds.text(contains_pattern(term)),
    }
}

/// Whether SQLite's planner should read a vendor list searched for `term` from the search
/// table's matches rather than walk a vendor index in list order checking each vendor against
/// them: true for the FTS5 lookups of [`vendor_search`]. Walking every vendor's name in order
/// (what SQLite picks when offered an index for the order) took 1.4 times as long at a chain's
/// scale for a term one name in eight holds, and nearly five times as long for a rare one.
pub(super) fn read_from_matches(term: &str) -> bool {
    SEARCH_INDEX == SearchIndex::Fts5 && looked_up(term)
}

/// The condition that a vendor (id in `id_column`, name key in `key_column`) has a name
/// holding `term`.
pub(super) fn vendor_search(binds: &mut Binds, id_column: &str, key_column: &str, term: &str) -> String {
    let bound = bind_term(binds, term);
    let holds = holds(key_column, &bound);
    match SEARCH_INDEX {
        SearchIndex::Fts5 if looked_up(term) => {
            let trigrams = binds.text(covering_trigrams(term));
            format!(
                "{id_column} IN (SELECT rowid FROM vendor_name_search WHERE vendor_name_search MATCH {trigrams}) AND {holds}"
            )
        }
        _ => holds,
    }
}

/// How a vendor list searched for `term` reads the search table's matches (see
/// [`read_from_matches`]): the `FROM` clause, each match joined to its vendor, and the condition
/// that stands for [`vendor_search`]'s there. `None` where the term is not looked up so.
///
/// Joined, each match is looked up as the index yields it; asked for as `v.id IN (...)`, SQLite
/// first copied every match into a list of its own and then looked each up: about a tenth of a
/// search for a term one name in eight holds, at a chain's scale.
pub(super) fn vendor_matches(binds: &mut Binds, term: &str) -> Option<(&'static str, String)> {
    if !read_from_matches(term) {
        return None;
    }
    let bound = bind_term(binds, term);
    let trigrams = binds.text(covering_trigrams(term));
    Some((
        // CROSS JOIN keeps the order as written: the search table drives.
        "vendor_name_search s CROSS JOIN vendors v ON v.id = s.rowid",
        format!("s.vendor_name_search MATCH {trigrams} AND {}", holds("v.name_key", &bound)),
    ))
}

/// The condition over `invoices i JOIN vendors v` that the invoice's number or its vendor's
/// name holds `term`. With a trigram index the matching invoices are gathered first (by number,
/// and by the vendors whose names match), so the list reads them alone.
pub(super) fn invoice_search(binds: &mut Binds, term: &str) -> String {
    let bound = bind_term(binds, term);
    let number = holds("i.number_key", &bound);
    let name = holds("v.name_key", &bound);
    if !looked_up(term) {
        return format!("({number} OR {name})");
    }
    let tail = number_tail(term);
    let matches = match SEARCH_INDEX {
        SearchIndex::Fts5 => {
            let number_trigrams = binds.text(covering_trigrams(tail));
            let name_trigrams = binds.text(covering_trigrams(term));
            format!(
                "SELECT rowid FROM invoice_number_search WHERE invoice_number_search MATCH {number_trigrams} \
                 UNION SELECT m.id FROM invoices m WHERE m.vendor_id IN \
                 (SELECT rowid FROM vendor_name_search WHERE vendor_name_search MATCH {name_trigrams})"
            )
        }
        SearchIndex::Trigram => {
            let bound_tail = bind_term(binds, tail);
            format!(
                "SELECT m.id FROM invoices m WHERE {} UNION SELECT m.id FROM invoices m WHERE m.vendor_id IN \
                 (SELECT mv.id FROM vendors mv WHERE {})",
                holds("m.number_key", &bound_tail),
                holds("mv.name_key", &bound)
            )
        }
    };
    format!("i.id IN ({matches}) AND ({number} OR {name})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_looked_up_by_the_terms_last_six_characters() {
        assert_eq!(number_tail("d1-000042"), "000042");
        assert_eq!(number_tail("inv"), "inv");
        assert_eq!(number_tail("000042"), "000042");
        // Characters, not bytes: a tail never splits one.
        assert_eq!(number_tail("éé-ü12345"), "ü12345");
    }

    #[test]
    fn a_term_is_covered_by_every_third_trigram_and_its_last() {
        assert_eq!(covering_trigrams("remedies"), r#""rem" AND "edi" AND "ies""#);
        assert_eq!(covering_trigrams("000042"), r#""000" AND "042""#);
        assert_eq!(covering_trigrams("inv"), r#""inv""#);
        assert_eq!(covering_trigrams("abcd"), r#""abc" AND "bcd""#);
        // Characters, not bytes; quotes doubled inside FTS5 strings.
        assert_eq!(covering_trigrams("éüa\"b"), r#""éüa" AND "a""b""#);
    }
}
