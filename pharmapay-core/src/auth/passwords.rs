//! Password hashing (D29): Argon2id on threads of their own at a lower priority, bounded by a
//! semaphore, each thread keeping one working memory.

use std::cell::RefCell;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};

use argon2::password_hash::phc::{Output, ParamsString, PasswordHash, Salt};
use argon2::{Argon2, Block, Params, Version};
use tokio::sync::Semaphore;

use super::tokens::Secret;
use crate::error::Error;

/// Argon2id cost settings and how many hashes may run at once.
#[derive(Clone, Debug)]
pub struct PasswordOptions {
    /// Argon2 parameters; the default is OWASP's minimum (19 MiB, t=2, p=1).
    pub params: argon2::Params,
    /// How many hashes may run at once (default: the number of cores).
    pub max_concurrent: usize,
}

impl Default for PasswordOptions {
    fn default() -> Self {
        Self {
            params: argon2::Params::default(),
            max_concurrent: std::thread::available_parallelism().map(usize::from).unwrap_or(2),
        }
    }
}

type HashingJob = Box<dyn FnOnce() + Send>;

/// Threads that run password hashing, started on first use, one per hash allowed at once.
/// They end when the engine that owns them is dropped.
struct HashingThreads {
    jobs: mpsc::Sender<HashingJob>,
}

impl HashingThreads {
    /// Starts `count` threads; `None` when not one could be started.
    fn start(count: usize) -> Option<Self> {
        let (sender, receiver) = mpsc::channel::<HashingJob>();
        let receiver = Arc::new(Mutex::new(receiver));
        let mut started = 0;
        for index in 0..count {
            let receiver = Arc::clone(&receiver);
            let spawned = std::thread::Builder::new().name(format!("pharmapay-hash-{index}")).spawn(move || {
                crate::background::lower_priority();
                loop {
                    // The lock is held only while waiting for the next job, not while hashing.
                    let job = match receiver.lock() {
                        Ok(receiver) => receiver.recv(),
                        Err(_) => return,
                    };
                    let Ok(job) = job else { return };
                    job();
                }
            });
            match spawned {
                Ok(_) => started += 1,
                Err(error) => tracing::warn!(%error, "could not start a password hashing thread"),
            }
        }
        (started > 0).then_some(Self { jobs: sender })
    }

    /// Runs `work` on a hashing thread and waits for its answer.
    async fn run<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> T {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let job: HashingJob = Box::new(move || {
            let _ = reply.send(work());
        });
        assert!(self.jobs.send(job).is_ok(), "the password hashing threads are running");
        answer.await.expect("password hashing does not panic")
    }
}

/// Hashes and verifies passwords with Argon2id, off the async workers and bounded.
pub(crate) struct Passwords {
    argon2: Argon2<'static>,
    permits: Arc<Semaphore>,
    max_concurrent: usize,
    threads: OnceLock<Option<HashingThreads>>,
    /// A hash of a random password, verified against when the email is unknown so that
    /// unknown emails take as long as wrong passwords (D21).
    decoy: tokio::sync::OnceCell<String>,
}

impl Passwords {
    pub(crate) fn new(options: PasswordOptions) -> Self {
        let max_concurrent = options.max_concurrent.max(1);
        Self {
            argon2: Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, options.params),
            permits: Arc::new(Semaphore::new(max_concurrent)),
            max_concurrent,
            threads: OnceLock::new(),
            decoy: tokio::sync::OnceCell::new(),
        }
    }

    async fn run_bounded<T: Send + 'static>(&self, work: impl FnOnce(&Argon2<'static>) -> T + Send + 'static) -> T {
        let permit = self.permits.acquire().await.expect("the hashing semaphore is never closed");
        self.run_holding(permit, work).await
    }

    /// Runs `work` on a hashing thread while `_permit` holds one of the bounded places.
    async fn run_holding<T: Send + 'static>(
        &self,
        _permit: tokio::sync::SemaphorePermit<'_>,
        work: impl FnOnce(&Argon2<'static>) -> T + Send + 'static,
    ) -> T {
        let argon2 = self.argon2.clone();
        if let Some(threads) = self.threads.get_or_init(|| HashingThreads::start(self.max_concurrent)) {
            return threads.run(move || work(&argon2)).await;
        }
        // No hashing thread could be started: Tokio's blocking pool, still off the async workers.
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => handle.spawn_blocking(move || work(&argon2)).await.expect("password hashing does not panic"),
            Err(_) => work(&argon2),
        }
    }

    /// Hashes a password into a PHC string.
    pub(crate) async fn hash(&self, password: &str) -> Result<String, Error> {
        let password = password.to_owned();
        self.run_bounded(move |argon2| {
            hash_phc(argon2, password.as_bytes())
                .map_err(|error| Error::Store(crate::store::StoreError::backend(HashError(error))))
        })
        .await
    }

    /// True when `password` matches the PHC string `hash`.
    pub(crate) async fn verify(&self, password: &str, hash: &str) -> bool {
        let password = password.to_owned();
        let hash = hash.to_owned();
        self.run_bounded(move |_| verify_phc(password.as_bytes(), &hash)).await
    }

    /// The hash verified against when there is no real one, so that unknown emails take as
    /// long as wrong passwords (D21). It is made once, however many sign-ins ask at the start.
    async fn decoy(&self) -> String {
        self.decoy
            .get_or_init(|| async { self.hash(Secret::generate().expose()).await.unwrap_or_default() })
            .await
            .clone()
    }

    /// Checks `password` against `hash`, or spends the same work on a decoy when there is no
    /// hash (the answer is then false). When every hashing place is busy and the call had to
    /// wait for one, it asks `still_allowed` first and answers `None` without hashing when that
    /// says no: a flood of sign-ins queued behind the hashing threads stops costing work once
    /// the login window closes on them (D40).
    pub(crate) async fn verify_unless_throttled<F: std::future::Future<Output = bool>>(
        &self,
        password: &str,
        hash: Option<&str>,
        still_allowed: impl FnOnce() -> F,
    ) -> Option<bool> {
        let (hash, real) = match hash {
            Some(hash) => (hash.to_owned(), true),
            None => (self.decoy().await, false),
        };
        let permit = match self.permits.try_acquire() {
            Ok(permit) => permit,
            Err(_) => {
                let permit = self.permits.acquire().await.expect("the hashing semaphore is never closed");
                if !still_allowed().await {
                    return None;
                }
                permit
            }
        };
        let password = password.to_owned();
        let matches = self.run_holding(permit, move |_| verify_phc(password.as_bytes(), &hash)).await;
        Some(matches && real)
    }
}

#[derive(Debug, thiserror::Error)]
#[error("password hashing failed: {0}")]
struct HashError(String);

thread_local! {
    /// Argon2's working memory (19 MiB at the default cost), kept by each hashing thread from
    /// one hash to the next. Allocating and freeing it for every sign-in left the allocator
    /// holding freed buffers: a burst of sign-ins grew the process by hundreds of megabytes
    /// that it never gave back. Kept per thread, it costs one buffer per hashing thread.
    static WORK_MEMORY: RefCell<Vec<Block>> = const { RefCell::new(Vec::new()) };
}

/// Runs `work` over this thread's Argon2 memory, grown to `blocks` blocks when needed.
fn with_work_memory<T>(blocks: usize, work: impl FnOnce(&mut [Block]) -> T) -> T {
    WORK_MEMORY.with(|memory| {
        let mut memory = memory.borrow_mut();
        if memory.len() < blocks {
            memory.resize(blocks, Block::default());
        }
        work(&mut memory[..blocks])
    })
}

/// Hashes `password` with `argon2`'s algorithm, version and costs and a fresh 16-byte salt,
/// into a PHC string (`$argon2id$v=19$m=...,t=...,p=...$salt$hash`).
fn hash_phc(argon2: &Argon2<'static>, password: &[u8]) -> Result<String, String> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|error| error.to_string())?;
    let params = argon2.params().clone();
    let mut out = vec![0u8; params.output_len().unwrap_or(Params::DEFAULT_OUTPUT_LEN)];
    with_work_memory(params.block_count(), |blocks| {
        argon2.hash_password_into_with_memory(password, &salt, &mut out, blocks)
    })
    .map_err(|error| error.to_string())?;
    let phc = PasswordHash {
        algorithm: argon2::Algorithm::Argon2id.ident(),
        version: Some(Version::V0x13.into()),
        params: ParamsString::try_from(&params).map_err(|error| error.to_string())?,
        salt: Some(Salt::new(&salt).map_err(|error| error.to_string())?),
        hash: Some(Output::new(&out).map_err(|error| error.to_string())?),
    };
    Ok(phc.to_string())
}

/// True when `password` matches the PHC string `phc`, hashed with the algorithm, version, costs
/// and salt the string names; the outputs are compared in constant time. Anything unreadable
/// matches nothing.
fn verify_phc(password: &[u8], phc: &str) -> bool {
    let Ok(hash) = PasswordHash::new(phc) else { return false };
    let (Some(salt), Some(expected)) = (hash.salt, hash.hash) else { return false };
    let Ok(algorithm) = argon2::Algorithm::try_from(hash.algorithm.as_str()) else { return false };
    let version = match hash.version {
        Some(number) => Version::try_from(number),
        None => Ok(Version::default()),
    };
    let (Ok(version), Ok(params)) = (version, Params::try_from(&hash)) else { return false };
    let argon2 = Argon2::new(algorithm, version, params.clone());
    let mut out = vec![0u8; expected.len()];
    let hashed = with_work_memory(params.block_count(), |blocks| {
        argon2.hash_password_into_with_memory(password, &salt, &mut out, blocks)
    });
    hashed.is_ok() && Output::new(&out).is_ok_and(|output| output == expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_made_by_the_argon2_crate_itself_still_verify() {
        use argon2::PasswordHasher as _;
        let argon2 = Argon2::new(argon2::Algorithm::Argon2id, Version::V0x13, Params::new(1024, 1, 1, None).unwrap());
        let stored = argon2.hash_password(b"correct horse").unwrap().to_string();
        assert!(verify_phc(b"correct horse", &stored));
        assert!(!verify_phc(b"wrong horse", &stored));
        let ours = hash_phc(&argon2, b"correct horse").unwrap();
        assert!(ours.starts_with("$argon2id$v=19$m=1024,t=1,p=1$"), "{ours}");
        assert!(verify_phc(b"correct horse", &ours));
        assert_ne!(hash_phc(&argon2, b"correct horse").unwrap(), ours, "each hash has its own salt");
    }

    #[test]
    fn unreadable_hashes_match_nothing() {
        for phc in
            ["", "not a hash", "$argon2id$v=19$m=1024,t=1,p=1$c2FsdA", "$scrypt$ln=15,r=8,p=1$c2FsdHNhbHQ$aGFzaA"]
        {
            assert!(!verify_phc(b"anything", phc), "{phc:?}");
        }
    }

    #[test]
    fn each_thread_keeps_one_working_memory() {
        let first = with_work_memory(1024, |blocks| blocks.as_ptr() as usize);
        let second = with_work_memory(512, |blocks| blocks.as_ptr() as usize);
        assert_eq!(first, second, "the same buffer serves the next hash");
    }

    #[tokio::test]
    async fn hashing_verifies_the_right_password_only() {
        let passwords = Passwords::new(PasswordOptions::default());
        let hash = passwords.hash("correct horse").await.unwrap();
        assert!(hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{hash}");
        assert!(passwords.verify("correct horse", &hash).await);
        assert!(!passwords.verify("wrong horse", &hash).await);
        assert!(!passwords.verify("correct horse", "not a hash").await);
    }

    #[tokio::test]
    async fn hashing_runs_on_its_own_threads_below_the_normal_priority() {
        let passwords = Passwords::new(PasswordOptions { max_concurrent: 2, ..PasswordOptions::default() });
        let (name, niceness) = passwords.run_bounded(|_| crate::background::this_thread()).await;
        assert!(name.as_deref().is_some_and(|name| name.starts_with("pharmapay-hash-")), "{name:?}");
        if cfg!(target_os = "linux") {
            // Raising one's own nice value needs no privilege, so this holds for any user
            // unless the process already runs at 10 or above.
            assert!(niceness.is_some_and(|niceness| niceness >= crate::background::NICENESS), "{niceness:?}");
        }
    }
}
