//! Hostile uploads (D51) for tests of every layer: workbooks written part by part, so that no
//! test holds a whole part in memory, and the files a security review built to take a server
//! down ([`review_files`]), which each upload route must refuse (400 or 413) or read within
//! D51's bounds.

use std::fmt::Write as _;
use std::io::{Cursor, Write};

use zip::write::SimpleFileOptions;

use crate::imports::{FileFormat, MAX_FILE_BYTES};

const REL: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/// What writes a part's content.
pub type Content = Box<dyn Fn(&mut dyn Write)>;

/// A workbook whose first worksheet is `xl/worksheets/sheet1.xml`, with `parts` (name, writer of
/// the content), deflated.
///
/// # Panics
/// When the file would be larger than an upload may be ([`MAX_FILE_BYTES`]).
pub fn workbook(parts: Vec<(&str, Content)>) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let rels = format!(
        r#"<Relationships><Relationship Id="rId1" Type="{REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#
    );
    let book =
        format!(r#"<workbook xmlns:r="{REL}"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>"#);
    for (name, content) in [("xl/_rels/workbook.xml.rels", rels), ("xl/workbook.xml", book)] {
        zip.start_file(name, options).expect("a part starts");
        zip.write_all(content.as_bytes()).expect("a part is written");
    }
    for (name, write) in parts {
        zip.start_file(name, options).expect("a part starts");
        write(&mut zip);
    }
    let bytes = zip.finish().expect("the archive ends").into_inner();
    assert!(bytes.len() <= MAX_FILE_BYTES, "the file takes {} bytes", bytes.len());
    bytes
}

/// A part of the text `text`.
pub fn part(text: &'static str) -> Content {
    Box::new(move |out| out.write_all(text.as_bytes()).expect("written"))
}

/// Writes `head`, then `count` times what `each` writes for its index, then `tail`.
pub fn repeated(
    head: &'static str,
    count: usize,
    each: impl Fn(usize, &mut String) + 'static,
    tail: &'static str,
) -> Content {
    Box::new(move |out| {
        out.write_all(head.as_bytes()).expect("written");
        let mut chunk = String::new();
        for index in 0..count {
            each(index, &mut chunk);
            if chunk.len() > 64 * 1024 {
                out.write_all(chunk.as_bytes()).expect("written");
                chunk.clear();
            }
        }
        out.write_all(chunk.as_bytes()).expect("written");
        out.write_all(tail.as_bytes()).expect("written");
    })
}

/// `size` bytes of letters, varied enough (a 16 KiB pseudo-random block, repeated) that
/// deflate packs them at well under 1000 to 1, written inside `head` and `tail`.
pub fn huge_text(head: &'static str, size: usize, tail: &'static str) -> Content {
    Box::new(move |out| {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let block: Vec<u8> = (0..16 * 1024)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                b'a' + (seed % 26) as u8
            })
            .collect();
        out.write_all(head.as_bytes()).expect("written");
        let mut written = 0;
        while written < size {
            let take = block.len().min(size - written);
            out.write_all(&block[..take]).expect("written");
            written += take;
        }
        out.write_all(tail.as_bytes()).expect("written");
    })
}

/// The letters of the 0-based column `index`.
pub fn column_name(mut index: usize) -> String {
    let mut letters = Vec::new();
    loop {
        letters.push(b'A' + (index % 26) as u8);
        if index < 26 {
            break;
        }
        index = index / 26 - 1;
    }
    letters.reverse();
    String::from_utf8(letters).expect("letters")
}

/// A workbook whose shared strings declare a trillion entries and hold two (`Name`, `Acme`).
pub fn declared_trillion_strings() -> Vec<u8> {
    workbook(vec![
        (
            "xl/sharedStrings.xml",
            part(
                r#"<sst count="1000000000000000" uniqueCount="1000000000000000"><si><t>Name</t></si><si><t>Acme</t></si></sst>"#,
            ),
        ),
        (
            "xl/worksheets/sheet1.xml",
            part(
                r#"<worksheet><dimension ref="A1:XFD1048576"/><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="2"><c r="A2" t="s"><v>1</v></c></row></sheetData></worksheet>"#,
            ),
        ),
    ])
}

/// A workbook of `count` empty cell formats.
pub fn cell_formats(count: usize) -> Vec<u8> {
    workbook(vec![
        (
            "xl/styles.xml",
            repeated("<styleSheet><cellXfs>", count, |_, out| out.push_str("<xf/>"), "</cellXfs></styleSheet>"),
        ),
        ("xl/worksheets/sheet1.xml", part(r#"<worksheet><sheetData/></worksheet>"#)),
    ])
}

/// A workbook whose first row holds `count` formatted empty cells.
pub fn formatted_empty_cells(count: usize) -> Vec<u8> {
    let cell = |index: usize, out: &mut String| {
        let _ = write!(out, r#"<c r="{}1" s="1"/>"#, column_name(index % 16_384));
    };
    workbook(vec![(
        "xl/worksheets/sheet1.xml",
        repeated(r#"<worksheet><sheetData><row r="1">"#, count, cell, "</row></sheetData></worksheet>"),
    )])
}

/// A workbook of `count` shared strings, nearly all empty (every 64th holds a number, so the
/// part packs well under 1000 to 1).
pub fn empty_shared_strings(count: usize) -> Vec<u8> {
    let item = |index: usize, out: &mut String| {
        if index.is_multiple_of(64) {
            let _ = write!(out, "<si><t>{}</t></si>", index.wrapping_mul(2_654_435_761) % 1_000_003);
        } else {
            out.push_str("<si/>");
        }
    };
    workbook(vec![
        ("xl/sharedStrings.xml", repeated("<sst>", count, item, "</sst>")),
        ("xl/worksheets/sheet1.xml", part("<worksheet><sheetData/></worksheet>")),
    ])
}

/// A workbook of one cell holding `size` bytes of text, inline in the worksheet.
pub fn huge_inline_cell(size: usize) -> Vec<u8> {
    workbook(vec![(
        "xl/worksheets/sheet1.xml",
        huge_text(
            r#"<worksheet><sheetData><row r="1"><c t="inlineStr"><is><t>"#,
            size,
            "</t></is></c></row></sheetData></worksheet>",
        ),
    )])
}

/// A workbook of one cell holding `size` bytes of text as its one shared string.
pub fn huge_shared_cell(size: usize) -> Vec<u8> {
    workbook(vec![
        ("xl/sharedStrings.xml", huge_text("<sst><si><t>", size, "</t></si></sst>")),
        (
            "xl/worksheets/sheet1.xml",
            part(r#"<worksheet><sheetData><row r="1"><c t="s"><v>0</v></c></row></sheetData></worksheet>"#),
        ),
    ])
}

/// A CSV whose header row is `size` bytes of commas.
pub fn comma_header(size: usize) -> Vec<u8> {
    let mut bytes = vec![b','; size];
    bytes.extend(b"\nDate,Debit\n");
    bytes
}

/// One file the review built: what it is, its format, its bytes.
pub struct HostileFile {
    /// What it is, for a test's messages.
    pub name: &'static str,
    /// CSV or xlsx.
    pub format: FileFormat,
    /// The file.
    pub bytes: Vec<u8>,
}

/// The files the review sent to the upload routes (D51): the declared shared-string count, the
/// empty cell formats (as styles and as cells), the empty shared strings, the 200 MiB cell and
/// the 19 MiB CSV header. Each route must answer 400 or 413 and grow the server's memory by at
/// most 256 MiB.
pub fn review_files() -> Vec<HostileFile> {
    const MIB: usize = 1024 * 1024;
    let file = |name, format, bytes| HostileFile { name, format, bytes };
    vec![
        file("shared strings declaring 10^15", FileFormat::Xlsx, declared_trillion_strings()),
        file("400,000 empty cell formats", FileFormat::Xlsx, cell_formats(400_000)),
        file("400,000 formatted empty cells", FileFormat::Xlsx, formatted_empty_cells(400_000)),
        file("6,000,000 empty shared strings", FileFormat::Xlsx, empty_shared_strings(6_000_000)),
        file("a 200 MiB cell", FileFormat::Xlsx, huge_inline_cell(200 * MIB)),
        file("a 19 MiB CSV header of commas", FileFormat::Csv, comma_header(19 * MIB)),
    ]
}
