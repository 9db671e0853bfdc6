//! Work that keeps a core busy for a long while, such as writing and zipping a report of a
//! million rows, runs on threads of its own at a lower scheduling priority (D48), so that while
//! it runs, answering everyone else's requests comes first: a thread at nice 10 gets about a
//! tenth of a core that a normal thread also wants, and all of an idle one. Password hashing
//! keeps threads of its own at the same priority (`auth`).
//!
//! Threads are started for each piece of work rather than taken from a pool: a thread's nice
//! value cannot be raised again without privileges, so a pooled thread once lowered would stay
//! slow for whatever work it ran next. Such work is rare and long, so starting a thread costs
//! nothing worth counting.

/// The nice value of background threads.
pub const NICENESS: i32 = 10;

/// Lowers the calling thread's scheduling priority (Linux keeps a nice value per thread).
#[cfg(target_os = "linux")]
pub fn lower_priority() {
    if let Err(error) = rustix::process::setpriority_process(None, NICENESS) {
        tracing::debug!(%error, "a background thread keeps the normal priority");
    }
}

/// Elsewhere the call would change the whole process, so background work keeps the normal
/// priority.
#[cfg(not(target_os = "linux"))]
pub fn lower_priority() {}

/// The calling thread's name and, on Linux, its nice value: what tests of background threads
/// look at.
/// Runs `read`, the reading of an uploaded file, on a thread of lower priority (D48). A reader
/// that gave up on a file (a damaged workbook can trip its parser) is the file's fault, not the
/// server's: a 400 on `file`.
pub(crate) async fn read_in_background<T: Send + 'static>(
    name: &'static str,
    read: impl FnOnce() -> T + Send + 'static,
) -> crate::error::Result<T> {
    run(name, read).await.map_err(|error| match error {
        BackgroundError::Panicked => crate::error::Error::invalid("file", "the file could not be read: it is damaged"),
        other => crate::error::Error::Store(crate::base::faults::StoreError::backend(other)),
    })
}

#[cfg(test)]
pub(crate) fn this_thread() -> (Option<String>, Option<i32>) {
    let name = std::thread::current().name().map(str::to_owned);
    #[cfg(target_os = "linux")]
    let niceness = rustix::process::getpriority_process(None).ok();
    #[cfg(not(target_os = "linux"))]
    let niceness = None::<i32>;
    (name, niceness)
}

/// Why background work gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum BackgroundError {
    /// No thread could be started (the system's limit on threads).
    #[error("no thread could be started for background work: {0}")]
    NoThread(#[source] std::io::Error),
    /// The work panicked.
    #[error("background work panicked")]
    Panicked,
}

/// Starts `work` on a thread of its own named `name`, at the background priority; it runs to
/// its end whether or not anyone waits for it.
///
/// # Errors
/// [`BackgroundError::NoThread`] when the thread cannot be started.
pub fn spawn(name: &str, work: impl FnOnce() + Send + 'static) -> Result<(), BackgroundError> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            lower_priority();
            work();
        })
        .map(drop)
        .map_err(BackgroundError::NoThread)
}

/// Starts `work` at once, as [`spawn`] does, and answers a future of its answer, which waits
/// without holding an async worker.
///
/// # Errors
/// The future fails with [`BackgroundError`] when the thread could not be started or the work
/// panicked.
pub fn run<T: Send + 'static>(
    name: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> impl Future<Output = Result<T, BackgroundError>> {
    let (reply, answer) = tokio::sync::oneshot::channel();
    let started = spawn(name, move || {
        let _ = reply.send(work());
    });
    async move {
        started?;
        answer.await.map_err(|_| BackgroundError::Panicked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn background_work_answers_from_a_thread_of_lower_priority() {
        let (name, niceness) = run("pharmapay-test-background", this_thread).await.expect("the work answers");
        assert_eq!(name.as_deref(), Some("pharmapay-test-background"));
        #[cfg(target_os = "linux")]
        {
            let own = rustix::process::getpriority_process(None).unwrap_or(0);
            assert!(niceness.is_some_and(|niceness| niceness > own), "{niceness:?} against {own}");
        }
        #[cfg(not(target_os = "linux"))]
        let _ = niceness;
    }

    #[tokio::test]
    async fn background_work_that_panics_is_an_error_not_a_hang() {
        let answered = run("pharmapay-test-panic", || -> u8 { panic!("on purpose") }).await;
        assert!(matches!(answered, Err(BackgroundError::Panicked)), "{answered:?}");
    }
}
