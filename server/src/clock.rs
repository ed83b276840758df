//! Time as duet records and reads it: milliseconds since the Unix epoch
//! (session and approval times, the audit trail, the board), and the
//! durations of flags and config files (`90s`, `15m`, `2h`, `1d`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Parses `90`, `90s`, `15m`, `2h`, `1d`.
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a duration like 90s, 15m, 2h or 1d"))?;
    let secs = match unit {
        "" | "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86400,
        _ => return Err(format!("unknown unit {unit:?} in {s:?}; use s, m, h or d")),
    };
    Ok(Duration::from_secs(secs))
}
