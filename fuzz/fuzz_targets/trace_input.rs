//! Every trace reader on any bytes: the first byte picks the format (detection, or one
//! forced as `--format` forces it), the rest is the file. Reading never panics, and
//! yields records, problems or a stop; native lines decoded ahead, on a second thread,
//! are the items one thread reads, in the same order.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracegate::trace::adapters::{Format, InputOptions};
use tracegate::trace::input::TraceInput;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let format = Format::ALL
        .get(usize::from(pick) % (Format::ALL.len() + 1))
        .copied();
    let options = InputOptions {
        format,
        ..InputOptions::default()
    };
    let read = |ahead: bool| {
        let mut input = TraceInput::from_bytes(bytes, &options, Some(1 << 16));
        let decoding_ahead = ahead && input.decode_ahead();
        let mut items = Vec::new();
        input.for_each(|item| items.push(format!("{item:?}")));
        (decoding_ahead, items)
    };
    let (_, items) = read(false);
    if let (true, ahead) = read(true) {
        assert_eq!(items, ahead, "decoded ahead, the items differ");
    }
});
