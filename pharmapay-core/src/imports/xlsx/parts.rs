//! The archive of an xlsx upload and its parts as XML events (D51): the checks made before
//! anything is unpacked, and a part read straight out of its zip entry, no event of it taking
//! more than [`MAX_EVENT_BYTES`].

use std::borrow::Cow;
use std::io::{self, BufRead, BufReader, Cursor, Read};

use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};
use zip::ZipArchive;
use zip::result::ZipError;

use super::super::table::{FileError, Limits, MAX_CELL_BYTES, size_text, unreadable};

/// The most an xlsx entry may unpack to per byte it takes in the archive. Deflate itself
/// cannot exceed about 1032 to 1; a real workbook stays far below.
pub(super) const MAX_RATIO: u64 = 1000;

/// The most entries an archive may declare (D51); a workbook has a few dozen parts.
pub(super) const MAX_ENTRIES: usize = 10_000;

/// The most bytes one XML event (a tag with its attributes, or a run of text) may take.
pub(super) const MAX_EVENT_BYTES: usize = 1024 * 1024;

pub(super) type Archive<'a> = ZipArchive<Cursor<&'a [u8]>>;

pub(super) fn not_a_workbook() -> FileError {
    unreadable("not an xlsx workbook")
}

pub(super) fn damaged() -> FileError {
    unreadable("the worksheet is damaged and could not be read")
}

/// Refuses an archive that would unpack beyond `limits`, judged by the sizes its central
/// directory declares, or whose entries declare more than [`MAX_RATIO`] bytes unpacked per
/// byte packed, or that declares more than [`MAX_ENTRIES`] entries.
///
/// Declared sizes bound what is really unpacked: the `zip` crate (9.x, checked in 9.8.1) reads
/// an entry's packed bytes through a reader limited to its declared compressed size, and wraps
/// the decompressor in a reader (`Crc32Reader` with the declared uncompressed size as its
/// limit) that fails with "File is larger than its declared uncompressed size" as soon as more
/// comes out. Parts are opened through `ZipArchive::by_name`, which takes the sizes from the
/// central directory checked here, so an entry whose header lies about its size fails to read
/// (the workbook is then refused as damaged) instead of unpacking more. The test
/// `a_lying_size_stops_the_unpacking` pins this down.
#[cfg(test)]
pub(in crate::imports) fn check_archive(bytes: &[u8], limits: &Limits) -> Result<(), FileError> {
    open_checked(bytes, limits).map(|_| ())
}

/// The archive of `bytes`, once [`check_archive`]'s checks passed.
pub(super) fn open_checked<'a>(bytes: &'a [u8], limits: &Limits) -> Result<Archive<'a>, FileError> {
    // Compound files (magic bytes 0xD0 0xCF 0x11 0xE0) are old .xls workbooks, or xlsx ones encrypted by a password.
    if bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        return Err(unreadable("not an xlsx workbook (an .xls or password-protected file); save it as .xlsx"));
    }
    check_entry_count(bytes)?;
    let archive = ZipArchive::new(Cursor::new(bytes)).map_err(|_| not_a_workbook())?;
    if archive.len() > MAX_ENTRIES {
        return Err(too_many_entries());
    }
    let mut total = 0u64;
    for index in 0..archive.len() {
        let entry = archive.by_index_data(index).map_err(|_| not_a_workbook())?;
        let (packed, unpacked) = (entry.compressed_size(), entry.size());
        if unpacked > packed.saturating_mul(MAX_RATIO) {
            return Err(FileError::TooLarge(format!(
                "the workbook looks like a zip bomb: a part of it unpacks to more than {MAX_RATIO} times its size"
            )));
        }
        total = total.saturating_add(unpacked);
        if total > limits.max_unpacked_bytes {
            return Err(FileError::TooLarge(format!(
                "the workbook unpacks to more than {}",
                size_text(limits.max_unpacked_bytes)
            )));
        }
    }
    Ok(archive)
}

pub(super) fn too_many_entries() -> FileError {
    unreadable(format!("the workbook has more than {MAX_ENTRIES} parts"))
}

/// Refuses an archive whose end-of-central-directory record (any candidate in the last 64 KiB
/// and 22 bytes, where a reader looks for it), or a zip64 one, declares more than
/// [`MAX_ENTRIES`] entries, before the `zip` crate sizes anything from that count (D51).
pub(super) fn check_entry_count(bytes: &[u8]) -> Result<(), FileError> {
    const EOCD: &[u8; 4] = b"PK\x05\x06";
    const EOCD64: &[u8; 4] = b"PK\x06\x06";
    let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
    let mut zip64 = false;
    for at in bytes.len().saturating_sub(22 + 65_535)..bytes.len().saturating_sub(21) {
        if &bytes[at..at + 4] == EOCD {
            let (on_disk, total) = (u16_at(at + 8), u16_at(at + 10));
            if on_disk == u16::MAX || total == u16::MAX {
                zip64 = true;
            } else if usize::from(on_disk.max(total)) > MAX_ENTRIES {
                return Err(too_many_entries());
            }
        }
    }
    // A zip64 record may lie anywhere its locator points; every candidate is checked.
    if zip64 {
        for at in 0..bytes.len().saturating_sub(39) {
            if &bytes[at..at + 4] == EOCD64 && u64_at(at + 24).max(u64_at(at + 32)) > MAX_ENTRIES as u64 {
                return Err(too_many_entries());
            }
        }
    }
    Ok(())
}

/// The part `name` as a stream of XML events, or `None` when the archive has no such part.
pub(super) fn open_part<'a>(
    archive: &'a mut Archive<'_>,
    name: &str,
) -> Result<Option<Part<impl Read + 'a>>, FileError> {
    match archive.by_name(name) {
        Ok(entry) => Ok(Some(Part::new(entry))),
        Err(ZipError::FileNotFound) => Ok(None),
        Err(_) => Err(damaged()),
    }
}

/// A reader that fails once more than [`MAX_EVENT_BYTES`] were consumed since `taken` was last
/// reset: [`Part::next`] resets it before each event, so no one event grows past the bound by
/// more than the one buffer of input (64 KiB) the parser was looking at.
pub(super) struct Bounded<R> {
    inner: R,
    taken: usize,
    tripped: bool,
}

impl<R: BufRead> Read for Bounded<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let count = available.len().min(out.len());
        out[..count].copy_from_slice(&available[..count]);
        self.consume(count);
        Ok(count)
    }
}

impl<R: BufRead> BufRead for Bounded<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.taken > MAX_EVENT_BYTES {
            self.tripped = true;
            return Err(io::Error::other("an XML event is too large"));
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, count: usize) {
        self.taken += count;
        self.inner.consume(count);
    }
}

/// One part of the workbook, read as XML events.
pub(super) struct Part<R> {
    reader: Reader<Bounded<BufReader<R>>>,
    buf: Vec<u8>,
}

impl<R: Read> Part<R> {
    pub(super) fn new(entry: R) -> Self {
        let inner = BufReader::with_capacity(64 * 1024, entry);
        Self { reader: Reader::from_reader(Bounded { inner, taken: 0, tripped: false }), buf: Vec::new() }
    }

    /// The next event; [`Event::Eof`] at the end.
    pub(super) fn next(&mut self) -> Result<Event<'_>, FileError> {
        self.buf.clear();
        self.reader.get_mut().taken = 0;
        match self.reader.read_event_into(&mut self.buf) {
            Ok(event) => Ok(event),
            Err(_) if self.reader.get_ref().tripped => Err(unreadable(format!(
                "the workbook holds a tag or text over {} (a cell holds at most {})",
                size_text(MAX_EVENT_BYTES as u64),
                size_text(MAX_CELL_BYTES as u64)
            ))),
            Err(_) => Err(damaged()),
        }
    }
}

/// The text an event adds to the element it is in: text (line ends normalised, as XML reads
/// them), CDATA, or an entity or character reference resolved; `None` for any other event.
pub(super) fn text_of<'e>(event: &'e Event<'_>) -> Result<Option<Cow<'e, str>>, FileError> {
    Ok(match event {
        Event::Text(text) => Some(text.xml10_content()),
        Event::CData(data) => Some(Cow::Borrowed(&**data)),
        Event::GeneralRef(reference) => match reference.resolve_char_ref() {
            Ok(Some(char)) => Some(Cow::Owned(char.to_string())),
            Ok(None) => Some(Cow::Borrowed(resolve_predefined_entity(reference).ok_or_else(damaged)?)),
            Err(_) => return Err(damaged()),
        },
        _ => None,
    })
}

/// Calls `each` with the local name and value of each of `element`'s attributes.
pub(super) fn attributes(element: &BytesStart<'_>, mut each: impl FnMut(&str, Cow<'_, str>)) -> Result<(), FileError> {
    for attribute in element.attributes().with_checks(false) {
        let attribute = attribute.map_err(|_| damaged())?;
        let value = attribute.normalized_value(XmlVersion::Implicit1_0).map_err(|_| damaged())?;
        each(attribute.key.local_name().as_ref(), value);
    }
    Ok(())
}

/// A start or empty element's local name and whether it is empty; `None` for other events.
pub(super) fn start<'e>(event: &'e Event<'_>) -> Option<(&'e BytesStart<'e>, bool)> {
    match event {
        Event::Start(element) => Some((element, false)),
        Event::Empty(element) => Some((element, true)),
        _ => None,
    }
}
