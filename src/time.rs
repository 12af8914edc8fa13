//! Instants in time: RFC 3339 date-times read into nanoseconds since the Unix epoch and
//! written back. The bottom of the layers, beside `json`: the spec language compares
//! instants (`time >= $t + 30s`) and `check --join` orders records by them, with one
//! reading of the format.

/// An RFC 3339 date-time (`2026-12-01T03:00:00Z`, `...T03:00:00.250+02:00`; `t` or a
/// space may separate date and time, `z` is `Z`) as nanoseconds since the Unix epoch.
///
/// The arithmetic is in `i64` (four-digit years keep every part small) up to the
/// nanoseconds, which need `i128`: `check --join` reads one time per record, and
/// `i128` division is a call into a software routine.
pub fn parse_rfc3339(text: &str) -> Option<i128> {
    let b = text.as_bytes();
    let digits = |from: usize, len: usize| -> Option<i64> {
        let part = b.get(from..from + len)?;
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    let (hour, minute, second) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
    if b.get(4) != Some(&b'-')
        || b.get(7) != Some(&b'-')
        || !matches!(b.get(10), Some(b'T' | b't' | b' '))
        || b.get(13) != Some(&b':')
        || b.get(16) != Some(&b':')
    {
        return None;
    }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&month)
        || day < 1
        || day > month_days[(month - 1) as usize]
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut at = 19;
    let mut nanos = 0i64;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            if at - start < 9 {
                nanos = nanos * 10 + i64::from(b[at] - b'0');
            }
            at += 1;
        }
        if at == start {
            return None;
        }
        for _ in (at - start)..9 {
            nanos *= 10;
        }
    }
    let offset = match b.get(at) {
        Some(b'Z' | b'z') if at + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) if at + 6 == b.len() && b[at + 3] == b':' => {
            let (h, m) = (digits(at + 1, 2)?, digits(at + 4, 2)?);
            if h > 23 || m > 59 {
                return None;
            }
            let minutes = h * 60 + m;
            if *sign == b'+' { minutes } else { -minutes }
        }
        _ => return None,
    };
    // Days since the epoch of a proleptic Gregorian date (Howard Hinnant's algorithm).
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset * 60;
    Some(i128::from(seconds) * 1_000_000_000 + i128::from(nanos))
}

/// `nanos` since the Unix epoch as an RFC 3339 string in UTC (`2026-12-01T03:00:00Z`,
/// with a fraction only when there is one); `None` outside years 0 to 9999.
pub fn format_rfc3339(nanos: i128) -> Option<String> {
    let seconds = nanos.div_euclid(1_000_000_000);
    let fraction = nanos.rem_euclid(1_000_000_000);
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    // The inverse of the days-from-civil computation in `parse_rfc3339`.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i128::from(month <= 2);
    if !(0..=9999).contains(&year) {
        return None;
    }
    let (h, m, s) = (of_day / 3600, of_day % 3600 / 60, of_day % 60);
    let mut text = format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}");
    if fraction > 0 {
        let digits = format!("{fraction:09}");
        text.push('.');
        text.push_str(digits.trim_end_matches('0'));
    }
    text.push('Z');
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_print_back() {
        for text in [
            "1970-01-01T00:00:00Z",
            "2024-02-29T23:59:59.5Z",
            "2026-12-01T03:00:00Z",
        ] {
            let nanos = parse_rfc3339(text).expect("valid");
            assert_eq!(format_rfc3339(nanos).as_deref(), Some(text));
        }
    }

    #[test]
    fn rfc3339_instants() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339("1970-01-01T01:00:00.5+01:00"),
            Some(500_000_000)
        );
        assert_eq!(
            parse_rfc3339("2000-03-01T00:00:00Z"),
            Some(951_868_800 * 1_000_000_000)
        );
        // The extremes of four-digit years, past what nanoseconds in an `i64` hold.
        assert_eq!(
            parse_rfc3339("0000-01-01T00:00:00Z"),
            Some(-719_528 * 86_400 * 1_000_000_000)
        );
        assert_eq!(
            parse_rfc3339("0000-02-29T00:00:00Z"),
            Some(-719_469 * 86_400 * 1_000_000_000)
        );
        assert_eq!(
            parse_rfc3339("9999-12-31T23:59:59.999999999-23:59"),
            Some((2_932_896 * 86_400 + 86_399 + 23 * 3600 + 59 * 60) * 1_000_000_000 + 999_999_999)
        );
        for bad in [
            "2026-02-30T00:00:00Z",
            "2026-01-01",
            "yesterday",
            "2026-01-01T00:00:00",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
