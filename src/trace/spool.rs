//! A stream kept in a temporary file, so that it is read as a file of the same bytes
//! is.
//!
//! A stream (standard input, a pipe) can be read once, as it comes. Most inputs need
//! no more: native records and files of transcript lines are read as they come. A
//! JSON document is read twice (a first pass finds the array to stream and validates
//! the document, a second hands on its elements), and so is a Codex rollout or a file
//! of Responses items (a first pass finds which calls are answered). Such a stream is
//! copied to a [`Spool`], an anonymous temporary file in the system's temporary
//! directory (`TMPDIR`, else `/tmp`), and read from there exactly as a regular file
//! is: in bounded memory, however long the stream.
//!
//! The file is readable and writable by its owner only, and has no name in the
//! directory: with Linux's `O_TMPFILE` it never has one; otherwise it is created
//! under a random name no other file has, and that name is removed at once. The system
//! removes the file when its last handle is closed, however the run ends. It is read
//! again through `/proc/self/fd`; where there is no such path (other systems), the
//! file keeps its random name until the spool is dropped.

use std::fs::File;
use std::io::{self, BufRead, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// A stream's bytes in a temporary file, which is read again by [`Spool::path`] as
/// long as the spool lives.
pub(crate) struct Spool {
    /// The open handle, written to and read back from: it keeps the file alive.
    file: File,
    /// A path that opens the file again, each open with an offset of its own.
    path: PathBuf,
    /// Where the spool is, for an error.
    dir: PathBuf,
    /// The file's name, when it has one (no `/proc/self/fd`), removed on drop.
    _named: Option<tempfile::TempPath>,
}

impl std::fmt::Debug for Spool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spool").field("dir", &self.dir).finish()
    }
}

impl Spool {
    /// An empty spool in the system's temporary directory.
    pub(crate) fn new() -> io::Result<Spool> {
        Spool::in_dir(std::env::temp_dir())
    }

    fn in_dir(dir: PathBuf) -> io::Result<Spool> {
        if let Some(file) = unnamed(&dir)
            && let Some(path) = reopened(&file)
        {
            return Ok(Spool {
                file,
                path,
                dir,
                _named: None,
            });
        }
        // Created under a random name (exclusively, for its owner only), which is
        // removed at once if the file can be opened again without it.
        let (file, named) = tempfile::Builder::new()
            .prefix(".tracegate-spool-")
            .tempfile_in(&dir)
            .map_err(|err| failed(&dir, "created", &err))?
            .into_parts();
        let (path, named) = match reopened(&file) {
            Some(path) => match named.close() {
                Ok(()) => (path, None),
                Err(err) => return Err(failed(&dir, "created", &err)),
            },
            None => (named.to_path_buf(), Some(named)),
        };
        Ok(Spool {
            file,
            path,
            dir,
            _named: named,
        })
    }

    /// Appends `head`, then everything `rest` holds to its end. An error reading `rest`
    /// is handed on as it is; one writing the file says where the spool is.
    pub(crate) fn fill(&self, head: &[u8], rest: &mut dyn BufRead) -> io::Result<()> {
        let mut file = &self.file;
        file.write_all(head)
            .map_err(|err| failed(&self.dir, "written", &err))?;
        loop {
            let chunk = match rest.fill_buf() {
                Ok([]) => break,
                Ok(chunk) => chunk,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            let n = chunk.len();
            file.write_all(chunk)
                .map_err(|err| failed(&self.dir, "written", &err))?;
            rest.consume(n);
        }
        file.flush()
            .map_err(|err| failed(&self.dir, "written", &err))
    }

    /// A path that opens the spool again, from its start.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// At most `len` of the spool's bytes from `offset`; `None` if they cannot be read.
    pub(crate) fn read(&self, offset: u64, len: usize) -> Option<Box<[u8]>> {
        let mut file = &self.file;
        file.seek(SeekFrom::Start(offset)).ok()?;
        let mut bytes = Vec::with_capacity(len.min(1 << 16));
        file.take(len as u64).read_to_end(&mut bytes).ok()?;
        Some(bytes.into_boxed_slice())
    }
}

/// A file that never has a name, in `dir`, for its owner only (Linux's `O_TMPFILE`);
/// `None` where the system or the file system has none.
#[cfg(target_os = "linux")]
fn unnamed(dir: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(dir)
        .ok()
}

#[cfg(not(target_os = "linux"))]
fn unnamed(_dir: &Path) -> Option<File> {
    None
}

/// A path that opens `file` again, with an offset of its own, whether it has a name
/// or not (`/proc/self/fd`); `None` where there is none.
#[cfg(target_os = "linux")]
fn reopened(file: &File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    let path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    File::open(&path).is_ok().then_some(path)
}

#[cfg(not(target_os = "linux"))]
fn reopened(_file: &File) -> Option<PathBuf> {
    None
}

/// An error of the spool in `dir`, which could not be `what` (created, written).
fn failed(dir: &Path, what: &str, err: &io::Error) -> io::Error {
    io::Error::new(
        err.kind(),
        format!(
            "it is read through a temporary file in `{}`, which could not be {what}: {err}; \
             set TMPDIR to a writable directory with room for the input",
            dir.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spool_holds_the_stream_and_reads_again_from_any_offset() {
        let spool = Spool::new().unwrap();
        let rest: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect();
        spool
            .fill(b"head:", &mut io::BufReader::new(&rest[..]))
            .unwrap();
        let mut again = Vec::new();
        File::open(spool.path())
            .unwrap()
            .read_to_end(&mut again)
            .unwrap();
        assert_eq!(&again[..5], b"head:");
        assert_eq!(&again[5..], &rest[..]);
        // Two readers by path, and reading back, each from where it is.
        let mut one = File::open(spool.path()).unwrap();
        let mut two = File::open(spool.path()).unwrap();
        let (mut a, mut b) = ([0; 5], [0; 4]);
        one.read_exact(&mut a).unwrap();
        assert_eq!(&spool.read(9, 4).unwrap()[..], &1u32.to_le_bytes());
        two.read_exact(&mut b).unwrap();
        one.read_exact(&mut b).unwrap();
        assert_eq!((&a, b), (b"head:", 0u32.to_le_bytes()));
        assert_eq!(spool.read(again.len() as u64 - 2, 10).unwrap().len(), 2);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_spool_has_no_name_and_only_its_owner_may_read_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::in_dir(dir.path().to_path_buf()).unwrap();
        spool.fill(b"text", &mut io::empty()).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let mode = spool.file.metadata().unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(std::fs::read(spool.path()).unwrap(), b"text");
    }
}
