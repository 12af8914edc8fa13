//! Keeps secrets that appear in traces and specs out of every output, and control
//! characters out of every terminal.
//!
//! Agent transcripts carry bearer tokens, API keys, private keys and passwords. One
//! detector ([`secrets`]) finds them; [`redact`] masks what it finds in anything
//! tracegate echoes (a snippet of a line, a key value, a trace name, a spec string),
//! keeping a short prefix of each secret so a reader can still tell two of them
//! apart, and [`contains_secret`] answers the same question as a yes or no (the
//! `secret in` predicate of specs asks it). [`for_terminal`] also escapes control
//! characters, so that a trace cannot retitle, clear or overwrite a terminal.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::OnceLock;

use regex::Regex;

/// How many characters of a secret stay visible.
const KEEP: usize = 4;
const MASK: &str = "…[redacted]";

/// Named groups of [`patterns`] whose match is the secret itself.
const GROUPS: [&str; 9] = [
    "pem", "bearer", "auth", "key", "jwt", "urlpw", "field", "escaped", "assign",
];

/// Names that say a value is a secret, in JSON members and `name=value` text.
const SECRET_NAME: &str = r"[a-z_\-]*(?:api[_\-]?key|token|secret|password|passwd|authorization|credential|private[_\-]?key|access[_\-]?key)[a-z_\-]*";

fn patterns() -> &'static Regex {
    static PATTERNS: OnceLock<Regex> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let pattern = [
            // PEM private keys, whole.
            r"(?s:(?P<pem>-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)))".to_string(),
            // `Bearer <token>` / `Basic <token>` in headers or text.
            r"(?i:bearer|basic)\s+(?P<bearer>[A-Za-z0-9\-._~+/]{8,}=*)".to_string(),
            // `Authorization: token …` and other schemes.
            r#"(?i:authorization)\\?"?\s*[:=]\s*\\?"?(?:[A-Za-z]+\s+)?(?P<auth>[A-Za-z0-9\-._~+/]{8,}=*)"#.to_string(),
            // Well-known key shapes: OpenAI/Anthropic, GitHub, Slack, AWS key ids,
            // Google. Word boundaries are ASCII ones (`(?-u:\b)`): secrets are ASCII, and
            // a Unicode boundary makes the regex engine leave its DFA for a far slower
            // one on any non-ASCII text (a 60 MB explore report took 37 s, not 1 s).
            r"(?P<key>(?-u:\b)(?:sk-[A-Za-z0-9_\-]{12,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9\-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{30,}))".to_string(),
            // JSON Web Tokens, with or without `Bearer`.
            r"(?P<jwt>(?-u:\b)eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*)".to_string(),
            // A password in a URL: `scheme://user:password@host`.
            r#"[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@"'\\]+:(?P<urlpw>[^@\s/"'\\]+)@"#.to_string(),
            // JSON members whose name says they hold a secret (the value may hold
            // escapes).
            format!(r#""(?i:{SECRET_NAME})"\s*:\s*"(?P<field>(?:[^"\\]|\\.){{4,}}?)""#),
            // The same inside JSON text held in a JSON string (`\"password\": \"…\"`).
            // A value's characters there: plain, an escape of the outer string, or an
            // escape of the inner text (`\\\"`, `\\\\`, `\\n`).
            format!(r#"\\"(?i:{SECRET_NAME})\\"\s*:\s*\\"(?P<escaped>(?:[^"\\]|\\[^"\\]|\\\\\\"|\\\\\\\\|\\\\[^"\\])+)\\""#),
            // `password=…`, `secret: …` in plain text.
            format!(r#"(?-u:\b)(?i:{SECRET_NAME})\s*[=:]\s*(?P<assign>[^\s&"',;\\\x7d\]]{{4,}})"#),
            // AWS secret access keys: 40 characters of base64 standing alone; checked
            // further by `plausible_aws_secret`.
            r"(?:^|[^A-Za-z0-9/+=])(?P<aws>[A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])".to_string(),
        ]
        .join("|");
        Regex::new(&pattern).expect("bug: the redaction pattern is valid")
    })
}

/// Whether a 40-character base64 run looks like an AWS secret key rather than a hex
/// digest or a path: both cases of letters and a digit, as random base64 has.
fn plausible_aws_secret(text: &str) -> bool {
    text.bytes().any(|b| b.is_ascii_uppercase())
        && text.bytes().any(|b| b.is_ascii_lowercase())
        && text.bytes().any(|b| b.is_ascii_digit())
        && !text.contains("//")
}

/// The byte ranges of the secrets in `text`, in order: the one detector behind
/// [`redact`] and [`contains_secret`].
pub(crate) fn secrets(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    patterns()
        .captures_iter(text)
        .filter_map(|captures| {
            if let Some(found) = GROUPS.iter().find_map(|name| captures.name(name)) {
                return Some(found.range());
            }
            let aws = captures.name("aws")?;
            plausible_aws_secret(aws.as_str()).then(|| aws.range())
        })
        .filter(|found| !masked_already(text, found.start))
}

/// Whether the secret found at `start` is one [`redact`] has masked (its kept prefix,
/// then the mask), so that masking twice changes nothing.
fn masked_already(text: &str, start: usize) -> bool {
    let kept: usize = text[start..].chars().take(KEEP).map(char::len_utf8).sum();
    text[start + kept..].starts_with(MASK)
}

/// Whether `text` holds a secret of any kind [`redact`] masks.
pub(crate) fn contains_secret(text: &str) -> bool {
    secrets(text).next().is_some()
}

/// `text` with every secret it contains masked.
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut found = secrets(text).peekable();
    if found.peek().is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for secret in found {
        out.push_str(&text[last..secret.start]);
        let kept: String = text[secret.clone()].chars().take(KEEP).collect();
        out.push_str(&kept);
        out.push_str(MASK);
        last = secret.end;
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

/// `text` made safe to show on a terminal: secrets masked, and every control
/// character (C0, DEL, C1) written as an escape (`\x1b`, `\r`, `\u{9b}`). Line breaks
/// stay when `multiline`; tabs always stay.
pub fn for_terminal(text: &str, multiline: bool) -> Cow<'_, str> {
    let masked = redact(text);
    let unsafe_char = |c: char| c.is_control() && c != '\t' && !(multiline && c == '\n');
    if !masked.chars().any(unsafe_char) {
        return masked;
    }
    let mut out = String::with_capacity(masked.len() + 8);
    for c in masked.chars() {
        match c {
            c if !unsafe_char(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of secret, each with the part that must not survive masking.
    const SECRETS: &[(&str, &str, &str)] = &[
        (
            "authorization header",
            r#"{"headers":{"Authorization":"Bearer eyJhbGciOiJIUzI1NiJ9.abc.def"}}"#,
            "eyJhbGciOiJIUzI1NiJ9.abc.def",
        ),
        (
            "authorization scheme",
            "Authorization: token 0123456789abcdefXYZ",
            "456789abcdefXYZ",
        ),
        (
            "bearer token",
            "curl -H 'Bearer abcdefgh12345678'",
            "efgh12345678",
        ),
        (
            "sk- key",
            "key sk-proj-abcdefghijklmnop1234",
            "abcdefghijklmnop1234",
        ),
        ("aws key id", "AKIAABCDEFGHIJKLMNOP", "ABCDEFGHIJKLMNOP"),
        (
            "aws secret key in a plain field",
            r#"{"value":"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}"#,
            "XUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
        (
            "github token",
            "ghp_abcdefghijklmnopqrstuvwxyz0123",
            "efghijklmnopqrstuvwxyz0123",
        ),
        (
            "github fine-grained token",
            "github_pat_11ABCDEFG0123456789_abcdefghij",
            "0123456789_abcdefghij",
        ),
        (
            "pem private key",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
            "MIIEow",
        ),
        (
            "jwt without bearer",
            r#"{"session":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"}"#,
            "eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
        ),
        (
            "password in an https url",
            "https://user:hunter2pass@example.com/x",
            "hunter2pass",
        ),
        (
            "password in a postgres url",
            "postgres://admin:s3cr3t-pw@db.internal:5432/app",
            "s3cr3t-pw",
        ),
        (
            "secret= in text",
            "run with secret=topsecret42 now",
            "topsecret42",
        ),
        (
            "password= in text",
            "password=hunter2hunter",
            "hunter2hunter",
        ),
        (
            "secret in json text held in a string",
            r#"{"output_text":"{\"api_key\": \"abcd1234efgh5678\"}"}"#,
            "1234efgh5678",
        ),
        (
            "password value with an escape",
            r#"{"password":"pa\"ss-w0rd-long"}"#,
            "ss-w0rd-long",
        ),
        (
            "password with an escaped quote in json text held in a string",
            r#"{"detail":"{\"password\": \"pa\\\"ss-w0rd-long\"}"}"#,
            "ss-w0rd-long",
        ),
        (
            "secret-named json member",
            r#"{"api_key": "12345678abcdef"}"#,
            "5678abcdef",
        ),
    ];

    /// Text that holds no secret and must come back unchanged.
    const ORDINARY: &[(&str, &str)] = &[
        (
            "record",
            r#"{"kind":"call","tool":"create_record","args":{"request_id":"r-1"}}"#,
        ),
        ("token count", r#"{"token_count": 5}"#),
        ("uuid", "550e8400-e29b-41d4-a716-446655440000"),
        ("sha1 digest", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        (
            "sha256 digest",
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        ),
        ("upper-case hex", "DA39A3EE5E6B4B0D3255BFEF95601890AFD80709"),
        (
            "call id",
            r#"{"call_id":"call_abc123XYZ","id":"toolu_01A09q90qw90lq917835lq9"}"#,
        ),
        ("url without password", "https://example.com:8443/path?q=1"),
        ("plain words", "the password policy says nothing"),
        ("request id", "req_01HZXW8K9Q2VJ7M3N5P6R8T0AB"),
    ];

    #[test]
    fn masks_every_kind_of_secret() {
        for (kind, text, secret) in SECRETS {
            assert!(contains_secret(text), "{kind}: not detected in {text}");
            let out = redact(text);
            assert!(
                !out.contains(secret),
                "{kind}: `{secret}` survived in {out}"
            );
            assert!(out.contains(MASK), "{kind}: {out}");
        }
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        for (kind, text) in ORDINARY {
            assert!(!contains_secret(text), "{kind}: {text} taken for a secret");
            assert!(matches!(redact(text), Cow::Borrowed(_)), "{kind}");
        }
    }

    #[test]
    fn control_characters_are_escaped_for_terminals() {
        let text = "a\x1b]0;title\x07b\rc\u{9b}d\x7fe\tf\ng";
        assert_eq!(
            for_terminal(text, false),
            "a\\x1b]0;title\\x07b\\rc\\u{9b}d\\x7fe\tf\\ng"
        );
        assert_eq!(for_terminal("x\ny", true), "x\ny");
        assert!(matches!(for_terminal("plain", false), Cow::Borrowed(_)));
        // Reports mask text that may be masked already (a snippet, then the block).
        for (kind, text, secret) in SECRETS {
            let twice = redact(&redact(text)).into_owned();
            assert!(!twice.contains(secret), "{kind}: {twice}");
            assert!(!twice.contains("]]"), "{kind}: {twice}");
        }
        let once = redact("x secret=topsecret42 y").into_owned();
        assert_eq!(redact(&once), once);
        assert!(!for_terminal("key sk-proj-abcdefghijklmnop1234\x1b", false).contains("ijklmnop"));
    }
}
