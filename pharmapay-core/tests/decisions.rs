//! Every decision id cited in the repository (`D1`, `D38` ...) resolves to an entry of
//! `docs/decisions.md`, so a reader can follow any citation without leaving the repository.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The workspace root: this crate's parent folder.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the crate sits in the workspace").to_path_buf()
}

/// The files that may cite decisions: sources, SQL, scripts and Markdown, outside build output.
fn cited_files(folder: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                cited_files(&path, found);
            }
        } else if [".rs", ".md", ".sql", ".py"].iter().any(|ending| name.ends_with(ending)) {
            found.push(path);
        }
    }
}

/// The ids written as a `D` followed by one to three digits, standing as a word of their own.
fn decision_ids(text: &str) -> BTreeSet<u32> {
    let bytes = text.as_bytes();
    let mut ids = BTreeSet::new();
    for (index, byte) in bytes.iter().enumerate() {
        if *byte != b'D' || (index > 0 && bytes[index - 1].is_ascii_alphanumeric()) {
            continue;
        }
        let digits: String = text[index + 1..].chars().take_while(char::is_ascii_digit).collect();
        let after = bytes.get(index + 1 + digits.len());
        if (1..=3).contains(&digits.len()) && !after.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_') {
            ids.insert(digits.parse().expect("one to three digits"));
        }
    }
    ids
}

#[test]
fn every_cited_decision_has_an_entry_in_docs_decisions() {
    let root = workspace();
    let decisions = std::fs::read_to_string(root.join("docs/decisions.md")).expect("docs/decisions.md exists");
    let entries: BTreeSet<u32> = decisions
        .lines()
        .filter_map(|line| line.strip_prefix("**D"))
        .filter_map(|rest| rest.split(' ').next()?.parse().ok())
        .collect();
    let mut files = Vec::new();
    cited_files(&root, &mut files);
    let mut missing = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        for id in decision_ids(&text) {
            if !entries.contains(&id) {
                missing.push(format!("D{id} in {}", file.strip_prefix(&root).unwrap_or(&file).display()));
            }
        }
    }
    assert!(missing.is_empty(), "cited decisions without an entry in docs/decisions.md: {missing:?}");
    assert!(entries.len() >= 42, "the entries run from D1 to D42 at least: {entries:?}");
}

#[test]
fn decision_ids_are_read_as_whole_words() {
    let ids = decision_ids("D1: money. See D38, (D12) and D4. Not DD5, D5x, xD6, D2024_1 or D1000.");
    assert_eq!(ids.into_iter().collect::<Vec<_>>(), [1, 4, 12, 38]);
}
