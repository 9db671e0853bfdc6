//! What the `pharmapay` binary says when it cannot start.

use std::process::Command;

#[test]
fn a_file_that_is_not_a_database_is_refused_with_what_sqlite_answered() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("notes.db");
    std::fs::write(&path, "These are notes, not a database.\n".repeat(200)).expect("the file is written");
    let url = format!("sqlite:{}", path.display());
    let output = Command::new(env!("CARGO_BIN_EXE_pharmapay"))
        .args(["--database-url", &url, "--listen", "127.0.0.1:0", "--log", "off"])
        .output()
        .expect("the pharmapay binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("pharmapay: could not open the database: "), "{stderr}");
    assert!(stderr.contains("file is not a database"), "the cause is named: {stderr}");
    let kept = std::fs::read_to_string(&path).expect("the file is still there");
    assert!(kept.starts_with("These are notes"), "the file is left as it was");
}
