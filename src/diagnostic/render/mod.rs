//! Renderers: one per output format. Each turns [`Diagnostic`](crate::diagnostic::Diagnostic)s
//! into text and nothing else; the CLI decides where the text goes.
//!
//! Renderers are pure functions of data. The spec text a diagnostic quotes travels
//! with it ([`SpecSite`](crate::diagnostic::SpecSite) holds the source); the trace text
//! arrives through a [`SourceResolver`] the caller hands in (in the manner of ruff's
//! `FileResolver`), so a renderer can be tested without files.

pub mod github;
pub mod html;
pub mod human;
pub mod json;
pub mod junit;
pub mod merge;
pub mod run;
pub mod sarif;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::TraceSite;
use crate::trace::input::is_stdin;

/// The longest trace snippet shown, in characters; longer lines are cut.
pub const SNIPPET_CHARS: usize = 240;

/// Where renderers read the trace text they quote.
pub trait SourceResolver {
    /// At most `len` bytes of `file` from byte `offset`; `None` if they cannot be read.
    fn read(&self, file: &Path, offset: u64, len: u64) -> Option<Vec<u8>>;
}

/// Reads trace text from the file system (what the command line hands in).
#[derive(Debug, Clone, Copy, Default)]
pub struct FileResolver;

impl SourceResolver for FileResolver {
    fn read(&self, file: &Path, offset: u64, len: u64) -> Option<Vec<u8>> {
        // A pipe or standard input was read to its end already; opening a named pipe
        // again would wait for a writer, and `-` names standard input, not a file.
        if is_stdin(file) || !std::fs::metadata(file).ok()?.is_file() {
            return None;
        }
        let mut file = std::fs::File::open(file).ok()?;
        file.seek(SeekFrom::Start(offset)).ok()?;
        let mut bytes = Vec::with_capacity(len as usize);
        file.take(len).read_to_end(&mut bytes).ok()?;
        Some(bytes)
    }
}

/// Reads trace text from the file system as [`FileResolver`] does, keeping the file
/// last read open: a report's findings come file by file, so one of thousands of
/// findings in a file opens it once instead of once per finding.
#[derive(Debug, Default)]
pub struct CachedFileResolver {
    /// The file last asked for, and its handle (`None`: not a regular file, or
    /// unreadable).
    last: RefCell<Option<(PathBuf, Option<std::fs::File>)>>,
}

impl SourceResolver for CachedFileResolver {
    fn read(&self, file: &Path, offset: u64, len: u64) -> Option<Vec<u8>> {
        let mut last = self.last.borrow_mut();
        if last.as_ref().is_none_or(|(path, _)| path != file) {
            // Only regular files: a pipe or standard input was read to its end already.
            let handle = std::fs::metadata(file)
                .ok()
                .filter(|meta| meta.is_file() && !is_stdin(file))
                .and_then(|_| std::fs::File::open(file).ok());
            *last = Some((file.to_path_buf(), handle));
        }
        let handle = last.as_ref()?.1.as_ref()?;
        let mut bytes = vec![0; usize::try_from(len).ok()?];
        let mut filled = 0;
        while filled < bytes.len() {
            match read_at(handle, &mut bytes[filled..], offset + filled as u64) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        bytes.truncate(filled);
        Some(bytes)
    }
}

/// Reads at `offset` without moving a shared cursor.
#[cfg(unix)]
fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(windows)]
fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

/// Trace text held in memory, by file name (for inputs that are not files, and tests).
#[derive(Debug, Clone, Default)]
pub struct MemoryResolver {
    files: BTreeMap<PathBuf, Vec<u8>>,
}

impl MemoryResolver {
    /// Makes `bytes` the content of `file`.
    pub fn insert(&mut self, file: impl Into<PathBuf>, bytes: impl Into<Vec<u8>>) {
        self.files.insert(file.into(), bytes.into());
    }
}

impl SourceResolver for MemoryResolver {
    fn read(&self, file: &Path, offset: u64, len: u64) -> Option<Vec<u8>> {
        let bytes = self.files.get(file)?;
        let start = usize::try_from(offset).ok()?.min(bytes.len());
        let end = start
            .saturating_add(usize::try_from(len).ok()?)
            .min(bytes.len());
        Some(bytes[start..end].to_vec())
    }
}

/// The source text of the record at `site` (for showing it in a report), cut to
/// [`SNIPPET_CHARS`] and with secrets masked. `None` if `resolver` cannot read it.
pub fn trace_snippet(site: &TraceSite, resolver: &dyn SourceResolver) -> Option<String> {
    let bytes = resolver.read(&site.file, site.loc.offset, snippet_bytes(site.loc.len))?;
    Some(cut_snippet(&bytes, site.loc.len))
}

/// The most bytes of a record a snippet needs: four bytes per char is the most UTF-8
/// needs, so no more than the cut requires is read or kept.
pub fn snippet_bytes(record_len: u64) -> u64 {
    record_len.min((SNIPPET_CHARS * 4) as u64)
}

/// The snippet of a record whose text starts with `bytes` and is `record_len` bytes
/// long: its first line, cut to [`SNIPPET_CHARS`], secrets masked.
pub fn cut_snippet(bytes: &[u8], record_len: u64) -> String {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().next().unwrap_or_default();
    let mut cut: String = line.chars().take(SNIPPET_CHARS).collect();
    if cut.len() < line.len() || (bytes.len() as u64) < record_len {
        cut.push('…');
    }
    crate::redact::redact(&cut).into_owned()
}
