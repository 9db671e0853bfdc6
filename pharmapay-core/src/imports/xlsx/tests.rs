//! Tests of the xlsx reader over workbooks written part by part, so each part says exactly
//! what a test needs (rich text, entities, strict namespaces, chartsheets, hostile bounds).

use std::io::{Cursor, Write};
use std::ops::ControlFlow;

use jiff::civil::date;
use zip::ZipArchive;
use zip::write::SimpleFileOptions;

use super::super::table::DEFAULT_LIMITS;
use super::parts::MAX_EVENT_BYTES;
use super::*;

const RELS_HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">"#;
const REL: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/// A zip of `parts` (name, content), deflated.
fn zip_of(parts: &[(&str, String)]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, content) in parts {
        writer.start_file(*name, options).unwrap();
        writer.write_all(content.as_bytes()).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// A workbook of one worksheet whose `<sheetData>` is `rows`, with `shared` strings (`<si>`
/// elements) and `styles` (a whole styles part), if any.
fn book(rows: &str, shared: Option<&str>, styles: Option<&str>) -> Vec<u8> {
    let rels = format!(
        r#"{RELS_HEAD}<Relationship Id="rId1" Type="{REL}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="{REL}/sharedStrings" Target="sharedStrings.xml"/><Relationship Id="rId3" Type="{REL}/styles" Target="styles.xml"/></Relationships>"#
    );
    let mut parts = vec![
        ("xl/_rels/workbook.xml.rels", rels),
        (
            "xl/workbook.xml",
            format!(
                r#"<workbook xmlns:r="{REL}"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>"#
            ),
        ),
        ("xl/worksheets/sheet1.xml", format!("<worksheet><sheetData>{rows}</sheetData></worksheet>")),
    ];
    if let Some(shared) = shared {
        parts.push(("xl/sharedStrings.xml", format!(r#"<sst count="1" uniqueCount="1">{shared}</sst>"#)));
    }
    if let Some(styles) = styles {
        parts.push(("xl/styles.xml", styles.to_owned()));
    }
    zip_of(&parts)
}

fn rows(bytes: &[u8]) -> Result<Vec<(u32, Vec<Cell>)>, FileError> {
    let mut rows = Vec::new();
    read(bytes, &DEFAULT_LIMITS, &mut |number, cells| {
        rows.push((number, cells.to_vec()));
        ControlFlow::Continue(())
    })?;
    Ok(rows)
}

fn text(value: &str) -> Cell {
    Cell::Text(value.to_owned())
}

#[test]
fn cells_of_every_type_are_read_with_entities_decoded() {
    let shared = "<si><t>A &amp; B &#x41;&#66;</t></si>\
        <si><r><rPr><b/></rPr><t>rich </t></r><r><t xml:space=\"preserve\">text</t></r><rPh><t>ignored</t></rPh></si>\
        <si/>";
    let sheet = r#"<row r="2"><c r="A2" t="s"><v>0</v></c><c t="s"><v>1</v></c><c r="D2" t="s"><v>2</v></c>
        <c r="E2" t="inlineStr"><is><t>in&lt;line</t><rPh><t>no</t></rPh></is></c></row>
        <row r="5"><c r="A5" t="b"><v>0</v></c><c r="B5" t="e"><v>#DIV/0!</v></c><c r="C5" t="str"><f>A1</f><v>made</v></c>
        <c r="D5" t="d"><v>2026-03-31</v></c><c r="E5"><v>1E3</v></c><c r="F5" s="1"/></row>"#;
    let read = rows(&book(sheet, Some(shared), None)).unwrap();
    assert_eq!(
        read,
        vec![
            (2, vec![text("A & B AB"), text("rich text"), Cell::Empty, Cell::Empty, text("in<line")]),
            (5, vec![Cell::Bool(false), text("#DIV/0!"), text("made"), text("2026-03-31"), Cell::Number(1000.0)]),
        ]
    );
}

#[test]
fn dates_follow_the_cell_formats_and_the_date_system() {
    let styles = r#"<styleSheet><numFmts count="2"><numFmt numFmtId="164" formatCode="dd/mm/yyyy"/>
        <numFmt numFmtId="165" formatCode="[h]:mm:ss"/></numFmts>
        <cellStyleXfs><xf numFmtId="14"/></cellStyleXfs>
        <cellXfs count="4"><xf numFmtId="0"/><xf numFmtId="164"><alignment/></xf><xf numFmtId="165"/><xf numFmtId="14"/></cellXfs>
        <dxfs><dxf><numFmt numFmtId="0" formatCode="yyyy"/></dxf></dxfs></styleSheet>"#;
    let sheet = r#"<row r="1"><c s="0"><v>46112</v></c><c s="1"><v>46112</v></c><c s="2"><v>1.5</v></c><c s="3"><v>46112.5</v></c><c s="9"><v>7</v></c></row>"#;
    let read = rows(&book(sheet, None, Some(styles))).unwrap();
    assert_eq!(
        read[0].1,
        vec![
            Cell::Number(46112.0),
            Cell::DateTime(date(2026, 3, 31).at(0, 0, 0, 0)),
            Cell::Number(1.5),
            Cell::DateTime(date(2026, 3, 31).at(12, 0, 0, 0)),
            Cell::Number(7.0),
        ]
    );
    // In the 1904 system the same serial is four years and a day later.
    let mut bytes = book(sheet, None, Some(styles));
    let workbook = format!(
        r#"<workbook xmlns:r="{REL}"><workbookPr date1904="1"/><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>"#
    );
    bytes = replace_part(&bytes, "xl/workbook.xml", &workbook);
    assert_eq!(rows(&bytes).unwrap()[0].1[1], Cell::DateTime(date(2030, 4, 1).at(0, 0, 0, 0)));
}

/// `bytes` with part `name` replaced by `content`.
fn replace_part(bytes: &[u8], name: &str, content: &str) -> Vec<u8> {
    let mut archive = ZipArchive::new(Cursor::new(bytes)).unwrap();
    let mut parts = Vec::new();
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).unwrap();
        let mut text = String::new();
        entry.read_to_string(&mut text).unwrap();
        let part = entry.name().unwrap().into_owned();
        parts.push((part.clone(), if part == name { content.to_owned() } else { text }));
    }
    let parts: Vec<(&str, String)> = parts.iter().map(|(name, text)| (name.as_str(), text.clone())).collect();
    zip_of(&parts)
}

#[test]
fn the_first_worksheet_is_found_past_chartsheets_in_strict_namespaces() {
    let rels = format!(
        r#"{RELS_HEAD}<Relationship Id="c" Type="http://purl.oclc.org/ooxml/officeDocument/relationships/chartsheet" Target="chartsheets/sheet1.xml"/><Relationship Id="w" Type="http://purl.oclc.org/ooxml/officeDocument/relationships/worksheet" Target="/xl/sheets/../worksheets/second.xml"/><Relationship Id="link" Type="{REL}/hyperlink" Target="https://example.invalid/" TargetMode="External"/></Relationships>"#
    );
    let workbook = r#"<x:workbook xmlns:x="http://purl.oclc.org/ooxml/spreadsheetml/main" xmlns:r="http://purl.oclc.org/ooxml/officeDocument/relationships"><x:sheets><x:sheet name="Chart" sheetId="1" r:id="c"/><x:sheet name="Data" sheetId="2" r:id="w"/></x:sheets></x:workbook>"#;
    let sheet = r#"<x:worksheet xmlns:x="http://purl.oclc.org/ooxml/spreadsheetml/main"><x:sheetData><x:row r="1"><x:c r="B1" t="inlineStr"><x:is><x:t>found</x:t></x:is></x:c></x:row></x:sheetData></x:worksheet>"#;
    let bytes = zip_of(&[
        ("xl/_rels/workbook.xml.rels", rels),
        ("xl/workbook.xml", workbook.to_owned()),
        ("xl/chartsheets/sheet1.xml", "<chartsheet/>".to_owned()),
        ("xl/worksheets/second.xml", sheet.to_owned()),
    ]);
    assert_eq!(rows(&bytes).unwrap(), vec![(1, vec![Cell::Empty, text("found")])]);
    assert_eq!(resolve_target("../media/a.png"), "media/a.png");
    assert_eq!(resolve_target("/xl/./worksheets/s.xml"), "xl/worksheets/s.xml");
    assert_eq!(column_of("A1"), Some(0));
    assert_eq!(column_of("AB12"), Some(27));
    assert_eq!(column_of("XFD1"), Some(16_383));
    assert_eq!(column_of("XFE1"), None);
    assert_eq!(column_of("12"), None);
}

#[test]
fn a_workbook_without_a_worksheet_or_with_rows_out_of_order_is_refused() {
    let rels = format!(r#"{RELS_HEAD}<Relationship Id="c" Type="{REL}/chartsheet" Target="c.xml"/></Relationships>"#);
    let workbook = format!(r#"<workbook xmlns:r="{REL}"><sheets><sheet r:id="c"/></sheets></workbook>"#);
    let bytes = zip_of(&[("xl/_rels/workbook.xml.rels", rels), ("xl/workbook.xml", workbook)]);
    assert_eq!(rows(&bytes).unwrap_err(), FileError::Unreadable("the workbook has no worksheet".into()));
    let bytes = book(r#"<row r="3"><c><v>1</v></c></row><row r="2"><c><v>1</v></c></row>"#, None, None);
    assert_eq!(
        rows(&bytes).unwrap_err(),
        FileError::Unreadable("the worksheet is damaged: its rows are out of order".into())
    );
    // A shared string the workbook does not hold.
    let bytes = book(r#"<row r="1"><c t="s"><v>3</v></c></row>"#, Some("<si><t>a</t></si>"), None);
    assert_eq!(rows(&bytes).unwrap_err(), damaged());
    // Unbalanced XML.
    let bytes = book(r#"<row r="1"><c><v>1</c></row>"#, None, None);
    assert_eq!(rows(&bytes).unwrap_err(), damaged());
}

#[test]
fn date_codes_are_told_from_numbers_and_durations() {
    for code in ["dd/mm/yyyy", "yyyy-mm-dd hh:mm:ss", "[$-409]d-mmm-yy;@", "[Red]d/m", "h:mm AM/PM", "mmm"] {
        assert!(is_date_code(code), "{code}");
    }
    for code in
        ["General", "0.00", "#,##0.00 \"days\"", "[h]:mm:ss", "[mm]:ss", "\\d0", "_d0", "*s0", "0;dd/mm", "[Red]0.0"]
    {
        assert!(!is_date_code(code), "{code}");
    }
    assert!(is_builtin_date(14) && is_builtin_date(22) && is_builtin_date(47));
    assert!(!is_builtin_date(46) && !is_builtin_date(0) && !is_builtin_date(49));
}

#[test]
fn a_cell_over_64_kib_and_a_row_over_1000_cells_are_refused() {
    let big = "x".repeat(MAX_CELL_BYTES + 1);
    let fits = "y".repeat(MAX_CELL_BYTES);
    let sheet = format!(r#"<row r="1"><c t="inlineStr"><is><t>{fits}</t></is></c></row>"#);
    assert!(
        matches!(&rows(&book(&sheet, None, None)).unwrap()[0].1[0], Cell::Text(text) if text.len() == MAX_CELL_BYTES)
    );
    let sheet = format!(r#"<row r="7"><c t="inlineStr"><is><t>{big}</t></is></c></row>"#);
    assert_eq!(
        rows(&book(&sheet, None, None)).unwrap_err(),
        FileError::Unreadable("row 7 has a cell of more than 64 KiB".into())
    );
    // Spread over several runs and entities, as a shared string.
    let shared = format!("<si><r><t>{fits}</t></r><r><t>&amp;</t></r></si>");
    assert_eq!(
        rows(&book("", Some(&shared), None)).unwrap_err(),
        FileError::Unreadable("a shared string holds more than 64 KiB".into())
    );
    let cells = r#"<c s="1"/>"#.repeat(MAX_ROW_CELLS);
    assert_eq!(rows(&book(&format!(r#"<row r="1">{cells}</row>"#), None, None)).unwrap(), vec![]);
    assert_eq!(
        rows(&book(&format!(r#"<row r="4">{cells}<c/></row>"#), None, None)).unwrap_err(),
        FileError::Unreadable("row 4 has more than 1000 cells".into())
    );
    assert_eq!(
        rows(&book(r#"<row r="2"><c r="ALM2"><v>1</v></c></row>"#, None, None)).unwrap_err(),
        FileError::Unreadable("row 2 has a cell beyond column 1000".into())
    );
}

#[test]
fn no_xml_event_may_pass_1_mib() {
    // The bound is checked as the reader asks for more input, so an event may pass it by one
    // buffer (64 KiB) at most.
    let attribute = "a".repeat(MAX_EVENT_BYTES + 64 * 1024 + 1);
    let error = rows(&book(&format!(r#"<row r="1" x="{attribute}"/>"#), None, None)).unwrap_err();
    assert_eq!(
        error,
        FileError::Unreadable("the workbook holds a tag or text over 1 MiB (a cell holds at most 64 KiB)".into())
    );
}

#[test]
fn more_than_64000_cell_formats_are_refused() {
    let styles = |count: usize| format!("<styleSheet><cellXfs>{}</cellXfs></styleSheet>", "<xf/>".repeat(count));
    assert_eq!(rows(&book("", None, Some(&styles(MAX_FORMATS)))).unwrap(), vec![]);
    assert_eq!(
        rows(&book("", None, Some(&styles(MAX_FORMATS + 1)))).unwrap_err(),
        FileError::Unreadable("the workbook has more than 64000 cell formats".into())
    );
}

#[test]
fn an_archive_declaring_too_many_entries_is_refused_before_it_is_opened() {
    let mut bytes = book("", None, None);
    let end = bytes.len() - 22;
    assert_eq!(&bytes[end..end + 4], b"PK\x05\x06");
    bytes[end + 8..end + 12].copy_from_slice(&[0x11, 0x27, 0x11, 0x27]); // 10,001 entries
    assert_eq!(check_archive(&bytes, &DEFAULT_LIMITS), Err(too_many_entries()));
    assert_eq!(too_many_entries(), FileError::Unreadable("the workbook has more than 10000 parts".into()));
}

#[test]
fn shared_strings_are_kept_compactly_and_capped() {
    let mut strings = SharedStrings::default();
    strings.push_text("ab").unwrap();
    strings.push_end(0).unwrap();
    strings.push_end(2).unwrap();
    strings.push_text("c").unwrap();
    strings.push_end(2).unwrap();
    assert_eq!(
        (strings.get(0), strings.get(1), strings.get(2), strings.get(3)),
        (Some("ab"), Some(""), Some("c"), None)
    );
    let mut strings = SharedStrings::default();
    let block = "z".repeat(MAX_CELL_BYTES);
    let error = loop {
        if let Err(error) = strings.push_text(&block).and_then(|()| strings.push_end(0)) {
            break error;
        }
    };
    assert_eq!(error, FileError::TooLarge("the workbook's shared strings take more than 64 MiB".into()));
    assert!(strings.text.capacity() <= MAX_SHARED_BYTES, "{}", strings.text.capacity());
}
