//! How the audit writes and reads sizes: bytes with binary units, grouped counts, `SIZE`
//! arguments (`4MiB`, `512k`, `1.5GB`), and nearest-rank percentiles.

/// Bytes with a binary unit and two decimals: `812 B`, `37.40 KiB`, `9.49 MiB` (the
/// precision of published hop tables).
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.2} {}", UNITS[unit])
}

/// `1234567` as `1,234,567`.
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A `SIZE` argument in bytes: a number with an optional unit. `K`/`M`/`G`/`T`, with or
/// without `i` or `iB` (`Ki`, `MiB`), are binary; `KB`/`MB`/`GB`/`TB` decimal; `B` or nothing
/// bytes. Case and a space before the unit do not matter; a fraction must come to whole
/// bytes (`1.5KiB` is 1,536; `0.4` is refused). gRPC's default message limit is `4MiB`
/// (4,194,304).
pub fn parse_size(text: &str) -> Result<u64, String> {
    const UNITS: &str = "B, K/KiB, M/MiB, G/GiB, T/TiB (binary) or KB, MB, GB, TB (decimal)";
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size (e.g. 4MiB, 512KiB, 1000000)"))?;
    let unit = unit.trim().to_ascii_lowercase();
    let (prefix, decimal) = match unit.as_str() {
        "" | "b" => ("", false),
        u => match u.strip_suffix("ib").or_else(|| u.strip_suffix('i')) {
            Some(p) => (p, false),
            None => match u.strip_suffix('b') {
                Some(p) => (p, true),
                None => (u, false),
            },
        },
    };
    let power = match prefix {
        "" => 0,
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        _ => return Err(format!("{text:?}: unknown unit {unit:?}; one of {UNITS}")),
    };
    let scale = if decimal { 1000f64 } else { 1024f64 }.powi(power);
    let bytes = value * scale;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(format!("{text:?} is too large"));
    }
    if bytes.fract() != 0.0 {
        return Err(format!(
            "{text:?} is {bytes} bytes: a size is a whole number of bytes"
        ));
    }
    Ok(bytes as u64)
}

/// Nearest-rank percentile `p` (0 < p ≤ 100) of `sorted` (ascending): the smallest value
/// with at least p% of the values at or below it. `None` for no values.
pub fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// Gigabits per second that `bytes` per request need at `rate` requests per second.
pub fn gbps(bytes: f64, rate: f64) -> f64 {
    bytes * 8.0 * rate / 1e9
}

/// A rate or time with three significant digits: `206`, `5.08`, `0.00184`; below 0.0001 in
/// scientific notation (`1.23e-7`), so tiny figures never print as zeros.
pub fn sig3(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    if v.abs() < 1e-4 {
        return format!("{v:.2e}");
    }
    let decimals = (2 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
    format!("{v:.decimals$}")
}

/// Milliseconds `bytes` take over a link of `link_gbps` gigabits per second.
pub fn transfer_ms(bytes: u64, link_gbps: f64) -> f64 {
    bytes as f64 * 8.0 / (link_gbps * 1e9) * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_grouping() {
        assert_eq!(human(812), "812 B");
        assert_eq!(human(38_297), "37.40 KiB");
        assert_eq!(human(3 << 30), "3.00 GiB");
        assert_eq!(human(9_953_664), "9.49 MiB");
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1_234_567), "1,234,567");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4MiB"), Ok(4 << 20));
        assert_eq!(parse_size("4 mib"), Ok(4 << 20));
        assert_eq!(parse_size("4M"), Ok(4 << 20));
        assert_eq!(parse_size("1.5GB"), Ok(1_500_000_000));
        assert_eq!(parse_size("512k"), Ok(512 << 10));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("4 parsecs")
            .unwrap_err()
            .contains("unknown unit"));
        assert!(parse_size("MiB").unwrap_err().contains("not a size"));
        assert!(parse_size("-4MiB").is_err());
        assert!(parse_size("1e30GiB").is_err());
        assert_eq!(parse_size("4Mi"), Ok(4 << 20));
        assert_eq!(parse_size("1TiB"), Ok(1 << 40));
        assert_eq!(parse_size("2T"), Ok(2 << 40));
        assert_eq!(parse_size("1tb"), Ok(1_000_000_000_000));
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert!(parse_size("0.4").unwrap_err().contains("whole number"));
        let unknown = parse_size("4 parsecs").unwrap_err();
        assert!(
            unknown.contains("K/KiB") && unknown.contains("TB"),
            "{unknown}"
        );
    }

    #[test]
    fn nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), Some(50));
        assert_eq!(percentile(&v, 99.0), Some(99));
        assert_eq!(percentile(&v, 100.0), Some(100));
        assert_eq!(percentile(&[7], 99.0), Some(7));
        assert_eq!(percentile(&[1, 2, 3], 50.0), Some(2));
        assert_eq!(percentile(&[], 50.0), None);
        // 10 Gb/s moves 1.25 GB per second: 1.25 MB in a millisecond.
        assert!((transfer_ms(1_250_000, 10.0) - 1.0).abs() < 1e-9);
        assert!((gbps(1_250_000.0, 1000.0) - 10.0).abs() < 1e-9);
        assert_eq!(sig3(205.888), "206");
        assert_eq!(sig3(5.0849), "5.08");
        assert_eq!(sig3(0.0018399), "0.00184");
        assert_eq!(sig3(12.478), "12.5");
        assert_eq!(sig3(0.0), "0");
        assert_eq!(sig3(1.234e-7), "1.23e-7");
    }
}
