//! `convert` on any file: the bytes are written to a file and converted with format
//! detection, as the command does. Nothing panics, every line written is a JSON
//! object, every record counted is written, and so is every `missing` result
//! synthesized at the end of a trace.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracegate::ingest::convert_path;
use tracegate::trace::adapters::InputOptions;

/// The `synthesized` field of a `missing` result made at the end of a trace.
const AT_END: &str = "no result by the end of the trace";

fuzz_target!(|data: &[u8]| {
    let mut file = tempfile::NamedTempFile::new().expect("a temporary file");
    std::io::Write::write_all(&mut file, data).expect("the file is written");
    let mut out = Vec::new();
    let converted = convert_path(
        file.path(),
        &InputOptions::default(),
        Some(1 << 16),
        &mut out,
    )
    .expect("writing to memory does not fail");
    let text = String::from_utf8(out).expect("convert writes UTF-8");
    let mut synthesized = 0;
    for line in text.lines() {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(value.is_object(), "{line}");
        synthesized += u64::from(value.get("synthesized") == Some(&AT_END.into()));
    }
    assert_eq!(text.lines().count() as u64, converted.records);
    // A native record may say the same of itself.
    assert!(
        synthesized >= converted.synthesized,
        "{synthesized} {converted:?}"
    );
});
