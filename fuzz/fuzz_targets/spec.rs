//! The spec parser, analyzer and formatter on any text: nothing panics or overflows,
//! and a spec that parses formats to text that parses to the same tree (up to the
//! formatter's canonical order) and is a fixed point of the formatter.
#![no_main]

use std::path::PathBuf;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use tracegate::machine::SpecSource;
use tracegate::spec::fmt::{canonical_order, format_source, without_spans};
use tracegate::spec::parse;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = tracegate::spec::analyzer::load(Arc::new(SpecSource::new(PathBuf::from("fuzz.tg"), text.to_owned())));
    let Ok(before) = parse(text) else {
        return;
    };
    let formatted = format_source(text).expect("a spec that parses formats");
    let after = match parse(&formatted) {
        Ok(after) => after,
        Err(errors) => panic!("formatted text does not parse: {errors:?}\n{formatted}"),
    };
    assert_eq!(
        without_spans(&canonical_order(&before)),
        without_spans(&after),
        "fmt changed the tree:\n{text}\n---\n{formatted}"
    );
    let again = format_source(&formatted).expect("formatted text formats");
    assert_eq!(formatted, again, "fmt is not idempotent");
});
