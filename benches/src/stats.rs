//! Figures from samples: percentiles of latencies, rates, and a process's memory and processor
//! time as Linux reports them. Pure helpers, shared by the load harness and the reports benchmark; nothing here
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

/// Processor time (user and system, every thread) a process has used so far, from
/// `/proc/<pid>/stat` (`None` for this process: `/proc/self/stat`). Linux counts it in clock
/// ticks, which its interface to programs fixes at 100 a second, so a figure over a window of a
/// few seconds is good to a fraction of a percent. `None` where the file cannot be read.
pub fn cpu_time(pid: Option<u32>) -> Option<Duration> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/stat"),
        None => "/proc/self/stat".to_owned(),
    };
    stat_cpu_time(&std::fs::read_to_string(path).ok()?)
}

/// Processor time used so far by each process whose command name is `name` (PostgreSQL's are
/// all `postgres`), by process id, from `/proc/<pid>/stat`.
pub fn cpu_times_of(name: &str) -> std::collections::HashMap<u32, Duration> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Default::default() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            (stat_name(&stat)? == name).then_some(())?;
            Some((pid, stat_cpu_time(&stat)?))
        })
        .collect()
}

/// The processor time used between two readings of [`cpu_times_of`]: by the processes in both,
/// the difference; by those started in between, all of it. A process that ended in between took
/// its time with it and is not counted, so over a window this is the time of the processes that
/// lived through it (a database's connections, opened before it and kept).
pub fn cpu_time_between(
    before: &std::collections::HashMap<u32, Duration>,
    after: &std::collections::HashMap<u32, Duration>,
) -> Duration {
    after.iter().map(|(pid, now)| before.get(pid).map_or(*now, |then| now.saturating_sub(*then))).sum()
}

/// The command name in the text of a `/proc/<pid>/stat` file (field 2, in parentheses; it may
/// hold spaces and parentheses itself).
pub fn stat_name(stat: &str) -> Option<&str> {
    stat.get(stat.find('(')? + 1..stat.rfind(')')?)
}

/// Clock ticks a second in `/proc/<pid>/stat` (`USER_HZ`).
const TICKS_PER_SECOND: u64 = 100;

/// Reads user and system time from the text of a `/proc/<pid>/stat` file.
pub fn stat_cpu_time(stat: &str) -> Option<Duration> {
    // The command name (field 2) is in parentheses and may hold spaces or parentheses itself:
    // the fields after it start after its last closing parenthesis, with the state (field 3).
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace();
    // utime and stime are fields 14 and 15, the 12th and 13th after the name.
    let user: u64 = fields.nth(11)?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    let ticks = user + system;
    Some(Duration::from_millis(ticks * 1000 / TICKS_PER_SECOND))
}

/// A rate with sensible precision.
pub fn rate(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// Milliseconds with sensible precision.
pub fn ms(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else if value >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
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

    #[test]
    fn processor_time_is_user_and_system_ticks_after_the_name() {
        // A name holding a space and a parenthesis; utime 250 and stime 130 ticks.
        let stat = "4242 (tokio (rt) x) S 1 4242 4242 0 -1 4194560 500 0 0 0 250 130 0 0 20 0 6 0 100 0 0";
        assert_eq!(stat_cpu_time(stat), Some(Duration::from_millis(3_800)));
        assert_eq!(stat_cpu_time("4242 (cut) S 1 2"), None);
        assert!(cpu_time(None).is_some(), "this process's own time can be read on Linux");
    }

    #[test]
    fn the_name_is_everything_between_the_outer_parentheses() {
        assert_eq!(stat_name("4242 (tokio (rt) x) S 1"), Some("tokio (rt) x"));
        assert_eq!(stat_name("7 (postgres) S 1"), Some("postgres"));
        assert_eq!(stat_name("7 postgres S 1"), None);
    }

    #[test]
    fn time_between_readings_counts_the_processes_that_lived_through_or_started() {
        let ms = Duration::from_millis;
        let before = [(1, ms(100)), (2, ms(50)), (3, ms(70))].into_iter().collect();
        // 1 went on, 2 ended (its time is gone with it), 4 started.
        let after = [(1, ms(130)), (4, ms(20))].into_iter().collect();
        assert_eq!(cpu_time_between(&before, &after), ms(50));
    }

    #[test]
    fn this_process_is_found_by_its_name() {
        let own = std::fs::read_to_string("/proc/self/stat").unwrap();
        let name = stat_name(&own).unwrap().to_owned();
        assert!(cpu_times_of(&name).contains_key(&std::process::id()));
    }
}
