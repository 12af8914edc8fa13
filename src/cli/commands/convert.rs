//! `tracegate convert`: trace files of any format as normalized records on stdout
//! (JSON Lines), problems on stderr.

use std::io;

use super::say_format;
use crate::cli::args::OutputFormat;
use crate::cli::config::ConvertConfig;
use crate::cli::output::{Output, Stream};
use crate::files;

pub fn run(config: ConvertConfig, out: &mut Output<'_>) -> io::Result<()> {
    let (paths, missing) = files::collect(&config.files, files::is_trace_file);
    out.diagnostics(Stream::Stderr, OutputFormat::Human, &missing)?;
    for path in &paths {
        // The library streams the records to stdout as it reads them.
        let converted = crate::ingest::convert_path(
            path,
            &config.input.options,
            config.max_line_bytes,
            out.stdout(),
        )?;
        say_format(out, &config.input, path, converted.detected.as_ref())?;
        if config.input.verbose {
            out.note(&format!(
                "tracegate: {}: {} records, {} of them synthesized `missing` results\n",
                path.display(),
                converted.records,
                converted.synthesized
            ))?;
        }
        out.diagnostics(Stream::Stderr, OutputFormat::Human, &converted.diagnostics)?;
    }
    Ok(())
}
