//! Keeps secrets that appear in traces out of every output.
//!
//! Agent transcripts carry bearer tokens, API keys and private keys. Whatever tracegate
//! echoes from a trace (a snippet of a line, a key value, a trace name) goes through
//! [`redact`] first, which keeps a short prefix of each secret so a reader can still
//! tell two of them apart, and hides the rest.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;

/// How many characters of a secret stay visible.
const KEEP: usize = 4;
const MASK: &str = "…[redacted]";

fn patterns() -> &'static Regex {
    static PATTERNS: OnceLock<Regex> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        Regex::new(concat!(
            // PEM private keys, whole.
            r"(?s)(?P<pem>-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$))",
            // `Bearer <token>` / `Basic <token>` in headers or text.
            r#"|(?i:bearer|basic)\s+(?P<bearer>[A-Za-z0-9\-._~+/]{8,}=*)"#,
            // Well-known key shapes: OpenAI/Anthropic, GitHub, Slack, AWS, Google.
            r"|(?P<key>\b(?:sk-[A-Za-z0-9_\-]{12,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abprs]-[A-Za-z0-9\-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{30,}))",
            // JSON members whose name says they hold a secret.
            r#"|"(?i:[a-z_\-]*(?:api[_\-]?key|token|secret|password|passwd|authorization|credential)[a-z_\-]*)"\s*:\s*"(?P<field>[^"\\]{6,})""#,
        ))
        .expect("bug: the redaction pattern is valid")
    })
}

/// Whether `text` holds something that looks like a credential: exactly what
/// [`redact`] would mask.
pub fn contains_secret(text: &str) -> bool {
    patterns().is_match(text)
}

/// `text` with every secret it contains masked.
pub fn redact(text: &str) -> Cow<'_, str> {
    let regex = patterns();
    if !regex.is_match(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for captures in regex.captures_iter(text) {
        let Some(secret) = ["pem", "bearer", "key", "field"]
            .iter()
            .find_map(|name| captures.name(name))
        else {
            continue;
        };
        out.push_str(&text[last..secret.start()]);
        let kept: String = secret.as_str().chars().take(KEEP).collect();
        out.push_str(&kept);
        out.push_str(MASK);
        last = secret.end();
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn assert_hidden(have: &str, secret: &str) {
        let out = redact(have);
        assert!(!out.contains(secret), "`{secret}` survived in {out}");
        assert!(out.contains(MASK), "{out}");
    }

    #[test]
    fn masks_common_secrets() {
        assert_hidden(
            r#"{"headers":{"Authorization":"Bearer eyJhbGciOiJIUzI1NiJ9.abc.def"}}"#,
            "eyJhbGciOiJIUzI1NiJ9.abc.def",
        );
        assert_hidden("key sk-proj-abcdefghijklmnop1234", "abcdefghijklmnop1234");
        assert_hidden(r#"{"api_key": "12345678abcdef"}"#, "12345678abcdef");
        assert_hidden("AKIAABCDEFGHIJKLMNOP", "ABCDEFGHIJKLMNOP");
        assert_hidden(
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
            "MIIEow",
        );
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        let text = r#"{"kind":"call","tool":"create_record","args":{"request_id":"r-1"}}"#;
        assert!(matches!(redact(text), Cow::Borrowed(_)));
        assert_eq!(redact(r#"{"token_count": 5}"#), r#"{"token_count": 5}"#);
    }
}
