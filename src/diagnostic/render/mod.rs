//! Renderers: one per output format. Each turns [`Diagnostic`](crate::diagnostic::Diagnostic)s into text and nothing
//! else; the CLI decides where the text goes.

pub mod github;
pub mod html;
pub mod human;
pub mod json;
pub mod junit;
pub mod run;
pub mod sarif;

use std::io::{Read, Seek, SeekFrom};

use super::TraceSite;

/// The longest trace snippet shown, in characters; longer lines are cut.
pub const SNIPPET_CHARS: usize = 240;

/// Reads the source text of the record at `site` (for showing it in a report), cut to
/// [`SNIPPET_CHARS`] and with secrets masked. `None` if the file cannot be read.
pub fn trace_snippet(site: &TraceSite) -> Option<String> {
    let mut file = std::fs::File::open(&site.file).ok()?;
    file.seek(SeekFrom::Start(site.loc.offset)).ok()?;
    // Four bytes per char is the most UTF-8 needs; read no more than the cut requires.
    let want = site.loc.len.min((SNIPPET_CHARS * 4) as u64);
    let mut bytes = Vec::with_capacity(want as usize);
    file.take(want).read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let line = text.lines().next().unwrap_or_default();
    let mut cut: String = line.chars().take(SNIPPET_CHARS).collect();
    if cut.len() < line.len() || (bytes.len() as u64) < site.loc.len {
        cut.push('…');
    }
    Some(crate::redact::redact(&cut).into_owned())
}
