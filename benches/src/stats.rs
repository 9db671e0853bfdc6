//! Figures from samples: percentiles of latencies, rates, and this process's memory as Linux
//! reports it. Pure helpers, shared by the load harness and the reports benchmark; nothing here
//! measures anything by itself.

use std::time::Duration;

/// The nearest-rank percentile `p` (0 to 100) of `sorted`, which must be sorted ascending.
/// `None` for no samples.
pub fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let p = p.clamp(0.0, 100.0);
    // Nearest rank: the smallest value with at least p % of the samples at or below it.
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// The median, 99th percentile and count of a set of latencies in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Latencies {
    /// How many samples.
    pub count: usize,
    /// The median, in microseconds.
    pub p50_us: u64,
    /// The 99th percentile, in microseconds.
    pub p99_us: u64,
}

impl Latencies {
    /// Sorts `samples` (microseconds) and reads their median and 99th percentile.
    pub fn of(mut samples: Vec<u64>) -> Self {
        samples.sort_unstable();
        Self {
            count: samples.len(),
            p50_us: percentile(&samples, 50.0).unwrap_or(0),
            p99_us: percentile(&samples, 99.0).unwrap_or(0),
        }
    }

    /// The median in milliseconds.
    pub fn p50_ms(&self) -> f64 {
        self.p50_us as f64 / 1000.0
    }

    /// The 99th percentile in milliseconds.
    pub fn p99_ms(&self) -> f64 {
        self.p99_us as f64 / 1000.0
    }
}

/// Events per second: `count` over `elapsed`.
pub fn per_second(count: u64, elapsed: Duration) -> f64 {
    let seconds = elapsed.as_secs_f64();
    if seconds <= 0.0 { 0.0 } else { count as f64 / seconds }
}

/// A field of `/proc/self/status` in KiB, such as `VmRSS` or `VmHWM` (its peak).
/// `None` where the file or the field is missing (not Linux).
pub fn memory_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status_field_kib(&status, field)
}

/// Reads `field` (in KiB) from the text of a `/proc/<pid>/status` file.
pub fn status_field_kib(status: &str, field: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        rest.trim().trim_end_matches("kB").trim().parse().ok()
    })
}

/// Resets this process's peak resident memory (`VmHWM`) to its current resident memory, so a
/// later [`memory_kib`]`("VmHWM")` shows the peak of what ran in between. Returns false where
/// the kernel does not allow it.
pub fn reset_peak_memory() -> bool {
    // Writing 5 to clear_refs resets the peak resident set size (Linux 4.0 and later).
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let samples: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&samples, 50.0), Some(50));
        assert_eq!(percentile(&samples, 99.0), Some(99));
        assert_eq!(percentile(&samples, 100.0), Some(100));
        assert_eq!(percentile(&samples, 0.0), Some(1));
        assert_eq!(percentile(&[7], 99.0), Some(7));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn latencies_sort_their_samples_first() {
        let latencies = Latencies::of(vec![900, 100, 300, 200, 500]);
        assert_eq!(latencies.count, 5);
        assert_eq!(latencies.p50_us, 300);
        assert_eq!(latencies.p99_us, 900);
        assert_eq!(Latencies::of(Vec::new()), Latencies::default());
    }

    #[test]
    fn rates_are_per_second_and_zero_for_no_time() {
        assert_eq!(per_second(500, Duration::from_millis(250)), 2000.0);
        assert_eq!(per_second(5, Duration::ZERO), 0.0);
    }

    #[test]
    fn status_fields_are_read_in_kib() {
        let status = "Name:\tload\nVmHWM:\t  123456 kB\nVmRSS:\t   4567 kB\n";
        assert_eq!(status_field_kib(status, "VmHWM"), Some(123_456));
        assert_eq!(status_field_kib(status, "VmRSS"), Some(4_567));
        assert_eq!(status_field_kib(status, "VmSwap"), None);
    }
}
