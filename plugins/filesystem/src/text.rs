//! The original's text helpers, in JavaScript's exact arithmetic:
//! `head`/`tail` line reading, `formatSize` (with `toFixed`'s rounding),
//! `Date.prototype.toString` in UTC, `padEnd`/`padStart` (which count
//! UTF-16 units), `pathToFileURL` and an approximation of ICU's
//! `localeCompare`.

use std::cmp::Ordering;
use std::io::{self, Read, Seek, SeekFrom};

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// The original's `tailFile`: reads 1 KiB chunks from the end until
/// `lines` newlines are seen, decodes, and keeps the last `lines` pieces
/// of the text split on `\n` (with JavaScript's `slice` on a fractional or
/// negative count).
pub fn tail(file: &mut std::fs::File, size: u64, lines: f64) -> io::Result<String> {
    const CHUNK: u64 = 1024;
    if size == 0 {
        return Ok(String::new());
    }
    let mut position = size;
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    let mut newlines = 0f64;
    while position > 0 && newlines < lines {
        let len = CHUNK.min(position);
        position -= len;
        file.seek(SeekFrom::Start(position))?;
        let mut chunk = vec![0; len as usize];
        let read = read_up_to(file, &mut chunk)?;
        if read == 0 {
            break;
        }
        chunk.truncate(read);
        newlines += chunk.iter().filter(|&&b| b == b'\n').count() as f64;
        chunks.push(chunk);
    }
    chunks.reverse();
    let text = String::from_utf8_lossy(&chunks.concat()).replace("\r\n", "\n");
    let pieces: Vec<&str> = text.split('\n').collect();
    let start = js_slice_start(-lines, pieces.len());
    Ok(pieces[start..].join("\n"))
}

/// Reads until `buf` is full or the file ends.
fn read_up_to(file: &mut std::fs::File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// `Array.prototype.slice(start)`'s start index for `len` elements.
fn js_slice_start(start: f64, len: usize) -> usize {
    let start = start.trunc();
    if start.is_infinite() && start < 0.0 {
        0
    } else if start < 0.0 {
        (len as f64 + start).max(0.0) as usize
    } else {
        start.min(len as f64) as usize
    }
}

/// The original's `headFile`: reads 1 KiB chunks, decoding as it goes,
/// and collects complete lines until it has `lines` of them (or the file
/// ends: then the unterminated rest is a line too). No `\r\n`
/// normalization, unlike `tail`.
pub fn head(file: &mut std::fs::File, lines: f64) -> io::Result<String> {
    let mut out: Vec<String> = Vec::new();
    let mut buffer = String::new();
    let mut decoder = Utf8Stream::default();
    let mut chunk = [0u8; 1024];
    while (out.len() as f64) < lines {
        let read = read_up_to(file, &mut chunk)?;
        if read == 0 {
            break;
        }
        buffer.push_str(&decoder.write(&chunk[..read]));
        if let Some(index) = buffer.rfind('\n') {
            let complete: Vec<String> = buffer[..index].split('\n').map(String::from).collect();
            buffer = buffer[index + 1..].to_string();
            for line in complete {
                out.push(line);
                if out.len() as f64 >= lines {
                    break;
                }
            }
        }
    }
    buffer.push_str(&decoder.end());
    if !buffer.is_empty() && (out.len() as f64) < lines {
        out.push(buffer);
    }
    Ok(out.join("\n"))
}

/// Node's `StringDecoder('utf-8')`: decodes what it can, holds back an
/// incomplete character at the end of a chunk for the next one.
#[derive(Default)]
struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    fn write(&mut self, bytes: &[u8]) -> String {
        let mut all = std::mem::take(&mut self.pending);
        all.extend_from_slice(bytes);
        let keep = incomplete_tail(&all);
        self.pending = all.split_off(all.len() - keep);
        String::from_utf8_lossy(&all).into_owned()
    }

    fn end(&mut self) -> String {
        if self.pending.is_empty() {
            String::new()
        } else {
            self.pending.clear();
            "\u{fffd}".into()
        }
    }
}

/// How many bytes at the end of `bytes` begin a UTF-8 character that the
/// next chunk may complete.
fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=3.min(bytes.len()) {
        let byte = bytes[bytes.len() - back];
        let needed = match byte {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            0x80..=0xBF => continue,
            _ => return 0,
        };
        return if needed > back { back } else { 0 };
    }
    0
}

/// The original's `formatSize`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    if bytes == 0 {
        return "0 B".into();
    }
    let bytes_f = bytes as f64;
    let i = (bytes_f.ln() / 1024f64.ln()).floor();
    if i <= 0.0 {
        return format!("{bytes} B");
    }
    let unit = (i as usize).min(UNITS.len() - 1);
    let value = bytes_f / 1024f64.powi(unit as i32);
    format!("{} {}", to_fixed_2(value), UNITS[unit])
}

/// `Number.prototype.toFixed(2)` for a positive number: the exact binary
/// value rounded half up (Rust's `{:.2}` rounds exact ties to even).
fn to_fixed_2(value: f64) -> String {
    // 1074 digits are enough to write any f64 exactly.
    let exact = format!("{value:.1074}");
    let (int, frac) = exact.split_once('.').unwrap_or((&exact, ""));
    let digits = format!("{int}{}", &frac[..2]);
    let round_up = frac.as_bytes()[2] >= b'5';
    let mut number: Vec<u8> = digits.into_bytes();
    if round_up {
        let mut i = number.len();
        loop {
            if i == 0 {
                number.insert(0, b'1');
                break;
            }
            i -= 1;
            if number[i] == b'9' {
                number[i] = b'0';
            } else {
                number[i] += 1;
                break;
            }
        }
    }
    let text = String::from_utf8(number).expect("digits");
    let (int, frac) = text.split_at(text.len() - 2);
    format!("{int}.{frac}")
}

/// `Date.prototype.toString()` for a time given in milliseconds since the
/// epoch, in UTC: `Fri Nov 27 2026 00:15:41 GMT+0000 (Coordinated Universal Time)`.
pub fn js_date(millis: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let seconds = millis.div_euclid(1000);
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{} {} {:02} {:04} {:02}:{:02}:{:02} GMT+0000 (Coordinated Universal Time)",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        day,
        year,
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

/// Howard Hinnant's days-to-civil: (year, month 1-12, day 1-31).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `text.padEnd(width)`: JavaScript counts UTF-16 units.
pub fn pad_end(text: &str, width: usize) -> String {
    let len = text.encode_utf16().count();
    format!("{text}{}", " ".repeat(width.saturating_sub(len)))
}

/// `text.padStart(width)`.
pub fn pad_start(text: &str, width: usize) -> String {
    let len = text.encode_utf16().count();
    format!("{}{text}", " ".repeat(width.saturating_sub(len)))
}

/// Node's `url.pathToFileURL(path).href` for an absolute POSIX path.
pub fn file_url(path: &str) -> String {
    let mut out = String::from("file://");
    for byte in path.bytes() {
        let keep = byte.is_ascii_graphic()
            && !matches!(
                byte,
                b'"' | b'#' | b'%' | b'<' | b'>' | b'?' | b'`' | b'{' | b'}' | b'\\'
            )
            || byte == b'/';
        if keep && byte != b' ' {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// An approximation of `a.localeCompare(b)` under ICU's root collation,
/// which the original sorts names with: punctuation and symbols first (in
/// CLDR's order for the ASCII ones), then digits, then letters without
/// regard to case or accents; ties broken by accents, then lower case
/// before upper case, then code points.
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    let primary = |s: &str| -> Vec<(u32, char)> {
        s.nfd()
            .filter(|c| !is_combining_mark(*c))
            .map(primary_key)
            .collect()
    };
    primary(a)
        .cmp(&primary(b))
        .then_with(|| {
            let marks =
                |s: &str| -> Vec<char> { s.nfd().filter(|c| is_combining_mark(*c)).collect() };
            marks(a).cmp(&marks(b))
        })
        .then_with(|| {
            let cases = |s: &str| -> Vec<bool> {
                s.nfd()
                    .filter(|c| !is_combining_mark(*c))
                    .map(char::is_uppercase)
                    .collect()
            };
            cases(a).cmp(&cases(b))
        })
        .then_with(|| a.cmp(b))
}

/// A character's primary weight: its group, then its rank in the group.
fn primary_key(c: char) -> (u32, char) {
    // CLDR root order of the ASCII punctuation and symbols.
    const SYMBOLS: &str = "\t\n\u{b}\u{c}\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";
    if let Some(rank) = SYMBOLS.find(c) {
        return (0, char::from_u32(rank as u32).unwrap_or(c));
    }
    if c.is_ascii_digit() {
        return (2, c);
    }
    if c.is_alphabetic() {
        let lower = c.to_lowercase().next().unwrap_or(c);
        return (3, lower);
    }
    if c.is_whitespace()
        || c.is_ascii_punctuation()
        || (!c.is_alphanumeric() && (c as u32) < 0x3000)
    {
        return (1, c);
    }
    (4, c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_round_half_up_as_to_fixed_does() {
        assert_eq!(format_size(0), "0 B");
        assert_eq!(format_size(1023), "1023 B");
        assert_eq!(format_size(1024), "1.00 KB");
        assert_eq!(format_size(1152), "1.13 KB"); // 1.125: toFixed rounds up
        assert_eq!(format_size(1536), "1.50 KB");
        assert_eq!(format_size(1048576), "1.00 MB");
    }

    #[test]
    fn dates_read_as_javascript_writes_them() {
        assert_eq!(
            js_date(1_795_738_541_000),
            "Fri Nov 27 2026 00:15:41 GMT+0000 (Coordinated Universal Time)"
        );
        assert_eq!(
            js_date(0),
            "Thu Jan 01 1970 00:00:00 GMT+0000 (Coordinated Universal Time)"
        );
    }

    #[test]
    fn names_sort_as_icu_sorts_them() {
        let mut names = vec![
            "b.txt", "B.txt", "a.txt", "_x", "10", "2", "é", "e", "Z", "-y",
        ];
        names.sort_by(|a, b| locale_compare(a, b));
        assert_eq!(
            names,
            vec![
                "_x", "-y", "10", "2", "a.txt", "b.txt", "B.txt", "e", "é", "Z"
            ]
        );
    }

    #[test]
    fn file_urls_are_percent_encoded() {
        assert_eq!(file_url("/a b/ü#?.bin"), "file:///a%20b/%C3%BC%23%3F.bin");
    }
}
