//! Sizes and durations: how they are written in manifests and shown in
//! messages. One place, so that what a limit's error says is what a
//! manifest may write back.

use std::time::Duration;

/// 1000000000 -> "1,000,000,000".
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// 67108864 -> "64 MiB".
pub fn human_bytes(bytes: usize) -> String {
    const UNITS: [(&str, usize); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{} {unit}", bytes / size);
        }
    }
    for (unit, size) in UNITS {
        if bytes >= size {
            return format!("{:.1} {unit}", bytes as f64 / size as f64);
        }
    }
    format!("{bytes} bytes")
}

/// 10 s, 1.5 s, 250 ms.
pub fn human_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis >= 1000 && millis.is_multiple_of(1000) {
        format!("{} s", millis / 1000)
    } else if millis >= 1000 {
        format!("{:.1} s", duration.as_secs_f64())
    } else {
        format!("{millis} ms")
    }
}

/// "64 MiB" -> 67108864. `what` names the setting in the error.
pub fn parse_bytes(what: &str, text: &str) -> Result<u64, String> {
    let (number, unit) = split_number(text);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{what} `{text}` is not a size such as \"64 MiB\""))?;
    let scale: u64 = match unit {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        other => {
            return Err(format!(
                "{what}: unknown unit `{other}` (use B, KiB, MiB or GiB)"
            ));
        }
    };
    number
        .checked_mul(scale)
        .ok_or_else(|| format!("{what} `{text}` is too large"))
}

/// "10 s" -> 10 seconds; units ms, s, m (or min), h.
pub fn parse_duration(what: &str, text: &str) -> Result<Duration, String> {
    let (number, unit) = split_number(text);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{what} `{text}` is not a duration such as \"10 s\" or \"500 ms\""))?;
    match unit {
        "ms" => Ok(Duration::from_millis(number)),
        "s" => Ok(Duration::from_secs(number)),
        "m" | "min" => Ok(Duration::from_secs(number.saturating_mul(60))),
        "h" => Ok(Duration::from_secs(number.saturating_mul(3600))),
        other => Err(format!(
            "{what}: unknown unit `{other}` (use ms, s, m or h)"
        )),
    }
}

/// "64 MiB" -> ("64", "MiB"); "500ms" -> ("500", "ms"). Underscores in the
/// number are allowed, as in TOML integers.
fn split_number(text: &str) -> (String, &str) {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '_'))
        .unwrap_or(text.len());
    (text[..end].replace('_', ""), text[end..].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_read_as_limits_are_written() {
        assert_eq!(human_duration(Duration::from_millis(250)), "250 ms");
        assert_eq!(human_duration(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(64 << 20), "64 MiB");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1_000_000_000), "1,000,000,000");
        assert_eq!(parse_bytes("memory", "64 MiB"), Ok(64 << 20));
        assert_eq!(parse_bytes("memory", "1_000"), Ok(1000));
        assert_eq!(
            parse_duration("task-ttl", "24 h"),
            Ok(Duration::from_secs(24 * 3600))
        );
        assert!(
            parse_bytes("memory", "64 MB")
                .unwrap_err()
                .contains("unknown unit `MB`")
        );
        assert_eq!(
            parse_duration("timeout", "500ms"),
            Ok(Duration::from_millis(500))
        );
        assert_eq!(
            parse_duration("timeout", "2 m"),
            Ok(Duration::from_secs(120))
        );
    }
}
