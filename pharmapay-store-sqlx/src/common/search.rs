//! Search over SQL: a case-insensitive substring of a lower-cased key (`text::key`), answered
//! through a trigram index where the term allows.
//!
//! A term of three characters or more is looked up by its trigrams: in SQLite, the FTS5 tables
//! `invoice_number_search` and `vendor_name_search` (migration 4), whose phrase query matches
//! exactly the keys holding the term; in PostgreSQL, `pg_trgm` GIN indexes, which serve the
//! `LIKE` itself. The `LIKE` is always checked as well, so the answer is the substring match
//! whatever the index. A shorter term has no trigram to look up: it is matched by `LIKE` alone,
//! which scans the keys (the vendors' names, or the invoices' numbers joined to their vendors'
//! names); at a chain's scale that scan is bounded by the size of the two tables and measured
//! in BENCHMARKS.md.

use super::binds::{Binds, contains_pattern};
use super::{SEARCH_INDEX, SearchIndex};

/// The shortest term a trigram index can look up.
const TRIGRAM: usize = 3;

/// An FTS5 phrase matching keys that hold `term`.
fn phrase(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

fn like(key_column: &str, pattern: &str) -> String {
    format!("{key_column} LIKE {pattern} ESCAPE '\\'")
}

/// The condition that a vendor (id in `id_column`, name key in `key_column`) has a name
/// holding `term`.
pub(super) fn vendor_search(binds: &mut Binds, id_column: &str, key_column: &str, term: &str) -> String {
    let pattern = binds.text(contains_pattern(term));
    let like = like(key_column, &pattern);
    match SEARCH_INDEX {
        SearchIndex::Fts5 if term.chars().count() >= TRIGRAM => {
            let phrase = binds.text(phrase(term));
            format!(
                "{id_column} IN (SELECT rowid FROM vendor_name_search WHERE vendor_name_search MATCH {phrase}) AND {like}"
            )
        }
        _ => like,
    }
}

/// The condition over `invoices i JOIN vendors v` that the invoice's number or its vendor's
/// name holds `term`. With a trigram index the matching invoices are gathered first (by number,
/// and by the vendors whose names match), so the list reads them alone.
pub(super) fn invoice_search(binds: &mut Binds, term: &str) -> String {
    let pattern = binds.text(contains_pattern(term));
    let number = like("i.number_key", &pattern);
    let name = like("v.name_key", &pattern);
    if term.chars().count() < TRIGRAM {
        return format!("({number} OR {name})");
    }
    let matches = match SEARCH_INDEX {
        SearchIndex::Fts5 => {
            let phrase = binds.text(phrase(term));
            format!(
                "SELECT rowid FROM invoice_number_search WHERE invoice_number_search MATCH {phrase} \
                 UNION SELECT m.id FROM invoices m WHERE m.vendor_id IN \
                 (SELECT rowid FROM vendor_name_search WHERE vendor_name_search MATCH {phrase})"
            )
        }
        SearchIndex::Trigram => format!(
            "SELECT m.id FROM invoices m WHERE {} UNION SELECT m.id FROM invoices m WHERE m.vendor_id IN \
             (SELECT mv.id FROM vendors mv WHERE {})",
            like("m.number_key", &pattern),
            like("mv.name_key", &pattern)
        ),
    };
    format!("i.id IN ({matches}) AND ({number} OR {name})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_quote_their_term() {
        assert_eq!(phrase("inv-00042"), "\"inv-00042\"");
        assert_eq!(phrase("a\"b"), "\"a\"\"b\"");
    }
}
