//! The spec parser, analyzer and formatter on any text: nothing panics or overflows,
//! every error's line and column are those of its offset, and a spec that parses
//! formats to text that parses to the same tree (up to the formatter's canonical
//! order) and is a fixed point of the formatter.
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
    let source = Arc::new(SpecSource::new(PathBuf::from("fuzz.tg"), text));
    if let Err(errors) = tracegate::spec::analyzer::load(source.clone()) {
        // Every error is located as counting lines from the start would locate it.
        for error in errors {
            let at = error.span.start.min(text.len());
            if !text.is_char_boundary(at) {
                continue;
            }
            let before = &text[..at];
            let line = before.matches('\n').count() + 1;
            let column = before[before.rfind('\n').map_or(0, |i| i + 1)..]
                .chars()
                .count()
                + 1;
            assert_eq!(source.line_col(at), (line, column), "offset {at}");
        }
    }
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
