//! The processes the harness starts: the pharmapay server under test, the ceiling server, and
//! `pharmapay seed-demo`; plus the two hidden subcommands that run in those child processes
//! (the ceiling server and the pharmapay server over the memory store).
//!
//! Every child is held by a [`Child`] guard that stops it when dropped, also when the harness
//! panics: first SIGTERM (the pharmapay server then drains and exits), then SIGKILL after a
//! grace period. Children only ever listen on 127.0.0.1.

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

/// The ceiling server's answer: a fixed JSON body of exactly 304 bytes, the size the project's
/// ceilings were measured with.
pub const CEILING_BODY: &str = concat!(
    r#"{"id":150,"name":"Omnix Remedies Suppliers 00149","address":null,"phone":"+91 48318 05466","#,
    r#""email":null,"vendorType":"Manufacturer","drugLicenseNumber1":"DL-21-554105","drugLicenseNumber2":null,"#,
    r#""additionalDrugLicenseNumbers":[],"isActive":true,"outstandingBalance":483226.73,"totalInvoiceValue":15437.25}"#
);

/// How the log line announcing the listening address reads, in every server the harness starts.
const LISTENING: &str = "is listening";

/// A child process, stopped when dropped.
pub struct Child {
    name: String,
    child: std::process::Child,
    statements: Arc<Mutex<Vec<String>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Child {
    /// Starts `command` with its standard output read line by line, and waits up to `limit`
    /// for the line announcing its address (`... is listening addr=127.0.0.1:PORT`).
    ///
    /// # Errors
    /// When the process cannot start, exits, or says nothing in time.
    pub fn spawn_server(name: &str, mut command: Command, limit: Duration) -> Result<(Child, SocketAddr), String> {
        // The child's standard input stays open while this guard lives: the harness's own
        // subcommands exit when it closes, so they end even if the harness is killed.
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        let mut child = command.spawn().map_err(|error| format!("could not start {name}: {error}"))?;
        let stdout = child.stdout.take().expect("standard output is piped");
        let statements = Arc::new(Mutex::new(Vec::new()));
        let (found, address) = mpsc::channel::<SocketAddr>();
        let label = name.to_owned();
        let kept = Arc::clone(&statements);
        let reader = std::thread::spawn(move || forward_output(&label, stdout, &found, &kept));
        let mut guard = Child { name: name.to_owned(), child, statements, reader: Some(reader) };
        let started = Instant::now();
        loop {
            match address.recv_timeout(Duration::from_millis(200)) {
                Ok(addr) => return Ok((guard, addr)),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(format!("{name} ended without announcing its address"));
                }
            }
            if let Ok(Some(status)) = guard.child.try_wait() {
                return Err(format!("{name} exited with {status} before listening"));
            }
            if started.elapsed() > limit {
                guard.stop();
                return Err(format!("{name} did not start listening within {} s", limit.as_secs()));
            }
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops the process and returns the SQL statements it logged (sqlx's `db.statement`), in
    /// order, once its whole output has been read.
    pub fn stop_and_collect_statements(mut self) -> Vec<String> {
        self.stop();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        self.statements.lock().map(|kept| kept.clone()).unwrap_or_default()
    }

    /// Stops the process: SIGTERM, then SIGKILL if it is still running after ten seconds.
    pub fn stop(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        // Sending SIGTERM through kill(1) keeps this crate free of unsafe code.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("{} did not stop after SIGTERM; killing it", self.name);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Reads a child's output: sends the announced address, keeps logged SQL statements, and
/// echoes warnings and errors (at most a few dozen, then only their count).
fn forward_output(
    name: &str,
    stdout: std::process::ChildStdout,
    found: &mpsc::Sender<SocketAddr>,
    statements: &Mutex<Vec<String>>,
) {
    let mut echoed = 0u32;
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        if line.contains(LISTENING)
            && let Some(addr) = listening_addr(&line)
        {
            let _ = found.send(addr);
            continue;
        }
        if let Some(statement) = logged_statement(&line) {
            if let Ok(mut kept) = statements.lock() {
                // A script sent in one call (the SQLite store ends a write with its audit entry
                // and kept figures together) counts as each of its statements.
                kept.extend(statement.split(";\n").map(str::trim).filter(|part| !part.is_empty()).map(str::to_owned));
            }
            continue;
        }
        if line.contains("WARN") || line.contains("ERROR") || line.contains("panicked") {
            echoed += 1;
            if echoed <= 30 {
                eprintln!("  [{name}] {line}");
            } else if echoed.is_power_of_two() {
                eprintln!("  [{name}] ... {echoed} warning lines so far");
            }
        }
    }
}

/// The `addr=` field of a log line.
pub fn listening_addr(line: &str) -> Option<SocketAddr> {
    let rest = &line[line.find("addr=")? + 5..];
    rest.split_whitespace().next()?.trim_matches('"').parse().ok()
}

/// The statement of a sqlx query log line (`db.statement="..."`), unescaped and trimmed.
pub fn logged_statement(line: &str) -> Option<String> {
    let start = line.find("db.statement=\"")? + "db.statement=\"".len();
    let mut statement = String::new();
    let mut chars = line[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                'n' => statement.push('\n'),
                't' => statement.push('\t'),
                other => statement.push(other),
            },
            '"' => break,
            other => statement.push(other),
        }
    }
    let statement = statement.trim().to_owned();
    (!statement.is_empty()).then_some(statement)
}

/// Runs the ceiling server in this process until it is killed: a minimal hyper 1.x server
/// (HTTP/1.1 keep-alive, `TCP_NODELAY`, a multi-threaded Tokio runtime, as the pharmapay
/// server has) answering every request with [`CEILING_BODY`].
pub fn run_ceiling_server() -> std::io::Result<()> {
    exit_with_parent();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        announce("ceiling", listener.local_addr()?);
        let body = Bytes::from_static(CEILING_BODY.as_bytes());
        let mut builder = http1::Builder::new();
        builder.keep_alive(true);
        loop {
            let (stream, _) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            let body = body.clone();
            let connection = builder.serve_connection(
                TokioIo::new(stream),
                service_fn(move |_request: Request<hyper::body::Incoming>| {
                    let mut response = Response::new(Full::new(body.clone()));
                    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                    async move { Ok::<_, std::convert::Infallible>(response) }
                }),
            );
            tokio::spawn(async move {
                let _ = connection.await;
            });
        }
    })
}

/// Ends this process when its standard input closes: the harness holds it open while it needs
/// the process, so a harness killed without a chance to clean up takes its subcommands along.
pub fn exit_with_parent() {
    std::thread::spawn(|| {
        let mut buffer = [0u8; 64];
        let mut stdin = std::io::stdin();
        while matches!(std::io::Read::read(&mut stdin, &mut buffer), Ok(n) if n > 0) {}
        std::process::exit(0);
    });
}

/// Prints the line the harness waits for.
pub fn announce(what: &str, addr: SocketAddr) {
    println!("{what} {LISTENING} addr={addr}");
    let _ = std::io::stdout().flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_body_is_304_bytes_of_json() {
        assert_eq!(CEILING_BODY.len(), 304);
        assert!(serde_json::from_str::<serde_json::Value>(CEILING_BODY).is_ok());
    }

    #[test]
    fn listening_lines_give_their_address() {
        let line = "2026-11-22T21:25:29.406445Z  INFO pharmapay is listening addr=127.0.0.1:18181 backend=\"sqlite\"";
        assert_eq!(listening_addr(line), Some("127.0.0.1:18181".parse().unwrap()));
        assert_eq!(listening_addr("ceiling is listening addr=127.0.0.1:9"), Some("127.0.0.1:9".parse().unwrap()));
        assert_eq!(listening_addr("no address here"), None);
    }

    #[test]
    fn logged_statements_are_unescaped() {
        let line = r#"DEBUG summary="SELECT 1" db.statement="\n\nSELECT a FROM \"t\" WHERE b = $1\n" rows_affected=0"#;
        assert_eq!(logged_statement(line).as_deref(), Some("SELECT a FROM \"t\" WHERE b = $1"));
        assert_eq!(logged_statement(r#"summary="PRAGMA x" db.statement="" rows=1"#), None);
    }
}
