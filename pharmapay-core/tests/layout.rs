//! Every `//! # Layout` list in the workspace's sources names exactly what its file holds: each
//! module the file declares is named there (as `name.rs`, `name/` or [`name`]), and each file
//! or folder it names as `name.rs` or `name/` exists beside it, so the maps cannot drift from
//! the code.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The workspace root: this crate's parent folder.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the crate sits in the workspace").to_path_buf()
}

/// The Rust sources under `folder`, outside build output.
fn sources(folder: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                sources(&path, found);
            }
        } else if name.ends_with(".rs") {
            found.push(path);
        }
    }
}

/// The text of the file's `//! # Layout` section, up to the next heading or the doc's end.
fn layout(text: &str) -> Option<String> {
    let mut lines = text.lines().skip_while(|line| !line.starts_with("//! # Layout"));
    lines.next()?;
    let section: Vec<&str> = lines
        .take_while(|line| line.starts_with("//!") && !line.starts_with("//! #"))
        .map(|line| line.trim_start_matches("//!"))
        .collect();
    Some(section.join("\n"))
}

/// The modules the file declares (`mod name;`, public or not).
fn declared(text: &str) -> BTreeSet<String> {
    text.lines()
        .map(str::trim)
        .filter_map(|line| {
            let line = line.strip_prefix("pub ").or_else(|| line.strip_prefix("pub(crate) ")).unwrap_or(line);
            let name = line.strip_prefix("mod ")?.strip_suffix(';')?;
            name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_').then(|| name.to_owned())
        })
        .collect()
}

/// Every word written in backticks, with what stands just around it.
fn quoted(section: &str) -> Vec<(String, bool)> {
    let mut found = Vec::new();
    let parts: Vec<&str> = section.split('`').collect();
    for (index, part) in parts.iter().enumerate().skip(1).step_by(2) {
        let linked =
            parts[index - 1].ends_with('[') && parts.get(index + 1).is_some_and(|after| after.starts_with(']'));
        found.push(((*part).to_owned(), linked));
    }
    found
}

fn is_name(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

#[test]
fn every_layout_names_exactly_the_modules_of_its_file() {
    let root = workspace();
    let mut files = Vec::new();
    for crate_folder in
        ["pharmapay-core", "pharmapay-store-memory", "pharmapay-store-sqlx", "pharmapay-server", "benches"]
    {
        sources(&root.join(crate_folder).join("src"), &mut files);
    }
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a source file reads");
        let Some(section) = layout(&text) else { continue };
        checked += 1;
        let shown = file.strip_prefix(&root).unwrap_or(&file).display().to_string();
        let folder = file.parent().expect("a file sits in a folder");
        // A `foo.rs` that is no `mod.rs` or `lib.rs` keeps its modules in the folder `foo/`.
        let stem = file.file_stem().and_then(|stem| stem.to_str()).unwrap_or_default();
        let modules = if ["mod", "lib", "main"].contains(&stem) { folder.to_path_buf() } else { folder.join(stem) };
        let mut named = BTreeSet::new();
        for (word, linked) in quoted(&section) {
            if let Some(name) = word.strip_suffix(".rs").filter(|name| is_name(name)) {
                named.insert(name.to_owned());
                if !modules.join(&word).is_file() {
                    problems.push(format!("{shown} names `{word}`, which is not there"));
                }
            } else if let Some(name) = word.strip_suffix('/').filter(|name| is_name(name)) {
                named.insert(name.to_owned());
                if !modules.join(name).is_dir() {
                    problems.push(format!("{shown} names `{word}`, which is not there"));
                }
            } else if linked && is_name(&word) {
                named.insert(word);
            }
        }
        for module in declared(&text).difference(&named) {
            problems.push(format!("{shown} declares `{module}` but its layout does not name it"));
        }
    }
    assert!(checked >= 10, "only {checked} layouts found");
    assert!(problems.is_empty(), "layouts that drifted from their files:\n{}", problems.join("\n"));
}
