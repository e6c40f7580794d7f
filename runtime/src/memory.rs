//! How much memory this process can still allocate: the bound slc checks large allocations and
//! outputs against, so that a shape too large for the machine is an error instead of a process
//! killed by the kernel when it touches memory it was promised but cannot have.

/// Bytes this process can still allocate: the system's available memory (`MemAvailable`), or
/// what its memory cgroup still allows if that is less. `None` where neither can be read.
pub fn available_memory() -> Option<u64> {
    match (system_available(), cgroup_headroom()) {
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
    #[cfg(target_os = "linux")]
    fn linux_reports_available_memory() {
        let available = available_memory().expect("/proc/meminfo is readable on Linux");
        assert!(available > 0);
        assert!(available <= system_available().unwrap());
    }
}
