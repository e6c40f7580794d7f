//! How much memory this process can still allocate: the bound slc checks large allocations and
//! outputs against, so that a shape too large for the machine is an error instead of a process
//! killed by the kernel when it touches memory it was promised but cannot have.

/// Bytes this process can still allocate: the system's available memory (`MemAvailable`), or
/// what its memory cgroup still allows if that is less. `None` where neither can be read.
pub fn available_memory() -> Option<u64> {
    tighter(system_available(), cgroup_headroom())
}

/// The smaller of two bounds, either of which may be unknown.
fn tighter(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// `MemAvailable` of `/proc/meminfo`, in bytes.
fn system_available() -> Option<u64> {
    let info = read("/proc/meminfo")?;
    let line = info.lines().find_map(|l| l.strip_prefix("MemAvailable:"))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    kib.checked_mul(1024)
}

/// The limit of the memory cgroup (v2, else v1) less its usage; `None` without a limit.
fn cgroup_headroom() -> Option<u64> {
    let number = |path: &str| read(path)?.trim().parse::<u64>().ok();
    let (limit, usage) = match number("/sys/fs/cgroup/memory.max") {
        Some(limit) => (limit, number("/sys/fs/cgroup/memory.current")?),
        None => (
            number("/sys/fs/cgroup/memory/memory.limit_in_bytes")?,
            number("/sys/fs/cgroup/memory/memory.usage_in_bytes")?,
        ),
    };
    // cgroup v1 writes "no limit" as a huge page-rounded number.
    (limit < 1 << 62).then(|| limit.saturating_sub(usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tighter_known_bound_wins() {
        assert_eq!(tighter(Some(5), Some(3)), Some(3));
        assert_eq!(tighter(Some(2), Some(3)), Some(2));
        assert_eq!(tighter(Some(5), None), Some(5));
        assert_eq!(tighter(None, Some(3)), Some(3));
        assert_eq!(tighter(None, None), None);
    }

    // MemAvailable moves while other tests allocate beside this one, so two reads need not agree:
    // the live test only asserts the reads succeed; `tighter` is tested on fixed values.
    #[test]
    #[cfg(target_os = "linux")]
    fn linux_reports_available_memory() {
        let system = system_available().expect("/proc/meminfo is readable on Linux");
        assert!(system > 0);
        assert!(available_memory().is_some_and(|a| a > 0));
    }
}
