//! Whether the machine is quiet enough to measure: the share of both cores busy, and the wait
//! for other processes to calm down before each block of measurements.

use std::time::{Duration, Instant};

/// The share of both cores busy over one second, from `/proc/stat`.
fn busy_share() -> Option<f64> {
    fn sample() -> Option<(u64, u64)> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let fields: Vec<u64> = stat.lines().next()?.split_whitespace().skip(1).filter_map(|f| f.parse().ok()).collect();
        let idle = fields.get(3)? + fields.get(4).unwrap_or(&0);
        Some((fields.iter().sum(), idle))
    }
    let (total_a, idle_a) = sample()?;
    std::thread::sleep(Duration::from_secs(1));
    let (total_b, idle_b) = sample()?;
    let total = total_b.saturating_sub(total_a).max(1) as f64;
    Some(1.0 - idle_b.saturating_sub(idle_a) as f64 / total)
}

/// Waits (up to a minute) until other processes leave the machine nearly idle, and describes
/// the conditions.
pub async fn quiet_machine(max_busy: f64) -> String {
    let started = Instant::now();
    loop {
        let busy = tokio::task::spawn_blocking(busy_share).await.ok().flatten().unwrap_or(0.0);
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        let load: Vec<&str> = load.split_whitespace().take(3).collect();
        if busy <= max_busy || started.elapsed() > Duration::from_secs(60) {
            let waited = started.elapsed().as_secs();
            let quiet = if busy <= max_busy { "quiet" } else { "NOT quiet (gave up waiting)" };
            return format!(
                "machine {quiet} before the block: {:.0} % of both cores busy over 1 s, load average {} (waited {waited} s)",
                busy * 100.0,
                load.join(" ")
            );
        }
        eprintln!("waiting for the machine to calm down: {:.0} % busy", busy * 100.0);
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
}
