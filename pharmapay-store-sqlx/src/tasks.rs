//! Steps of a write that run to their end on tasks of their own, whoever still waits for them.

/// Runs `step` of a write on a task of its own and waits for it: the step runs to its end even
/// when the caller stops waiting (a request dropped because its client went away), and what it
/// leaves behind is dropped on that task. A write's beginning and its end go through here, so
/// its outcome never depends on whether someone still waits for it.
pub(crate) async fn to_the_end<T: Send + 'static>(
    step: impl Future<Output = Result<T, sqlx::Error>> + Send + 'static,
) -> Result<T, sqlx::Error> {
    match tokio::spawn(step).await {
        Ok(done) => done,
        Err(failed) if failed.is_panic() => std::panic::resume_unwind(failed.into_panic()),
        // Cancelled: the runtime is shutting down, and the step's outcome is unknown.
        Err(_) => Err(sqlx::Error::WorkerCrashed),
    }
}
