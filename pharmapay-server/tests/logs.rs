//! What a request leaves in the log under the filters README.md documents: the request line
//! (`pharmapay::http`) and the span that gives the request's other events their trace id
//! (`pharmapay::request`) are filtered separately, and neither needs the other.

mod process;

use hyper::Method;
use process::{Http, ServerProcess};
use serde_json::json;

/// Starts a server on a new SQLite file with the log filter `log`, sends one sign-in that
/// fails (which the engine logs as a warning) and answers with its trace id.
async fn failed_sign_in(log: &str) -> (ServerProcess, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let url = format!("sqlite:{}", dir.path().join("logs.db").display());
    let server = ServerProcess::start_logging(&url, None, log);
    let http = Http::new(&server.base);
    let login = json!({ "email": "nobody@example.com", "password": "not-a-password" });
    let (status, trace_id, answer) =
        http.traced(Method::POST, "/api/auth/login", Some(&login)).await.expect("the server answers");
    assert_eq!(status, 401, "{answer}");
    assert_eq!(trace_id.len(), 32, "every answer carries its trace id: {trace_id:?}");
    (server, trace_id, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_request_lines_a_warning_still_carries_its_trace_id() {
    let (server, trace_id, _dir) = failed_sign_in("info,pharmapay::http=warn").await;
    let warning = server.log_line(&["login failed"]).expect("the failed sign-in is logged");
    assert!(warning.contains(&format!("trace_id={trace_id}")), "{warning}");
    assert!(warning.contains("path=/api/auth/login"), "{warning}");
    // A request line would be written before its answer is sent, so once a later request's
    // warning has been read, the first request's line would have been read too.
    let http = Http::new(&server.base);
    let login = json!({ "email": "somebody@example.com", "password": "not-a-password" });
    http.call(Method::POST, "/api/auth/login", Some(&login), None).await.expect("the server answers");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while server.log_lines(&["login failed"]).len() < 2 {
        assert!(std::time::Instant::now() < deadline, "the second failed sign-in is logged");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let lines = server.log_lines(&["elapsed_ms="]);
    assert!(lines.is_empty(), "no request line: {lines:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_request_spans_a_request_line_names_its_request() {
    let (server, trace_id, _dir) = failed_sign_in("info,pharmapay::request=warn").await;
    let line = server.log_line(&["elapsed_ms=", "status=401"]).expect("the request line is logged");
    assert!(line.contains(&format!("trace_id={trace_id}")), "{line}");
    assert!(line.contains("method=POST"), "{line}");
    assert!(line.contains("path=/api/auth/login"), "{line}");
    let warning = server.log_line(&["login failed"]).expect("the failed sign-in is logged");
    assert!(!warning.contains("trace_id="), "no span gives it a trace id: {warning}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_a_request_has_both() {
    let (server, trace_id, _dir) = failed_sign_in("info").await;
    let line = server.log_line(&["elapsed_ms=", "status=401"]).expect("the request line is logged");
    assert!(line.contains(&format!("trace_id={trace_id}")), "{line}");
    let warning = server.log_line(&["login failed"]).expect("the failed sign-in is logged");
    assert!(warning.contains(&format!("trace_id={trace_id}")), "{warning}");
}
