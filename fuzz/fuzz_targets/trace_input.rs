//! Every trace reader on any bytes: the first byte picks the format (detection, or one
//! forced as `--format` forces it), the rest is the file. Reading never panics, and
//! yields records, problems or a stop.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracegate::trace::adapters::{Format, InputOptions};
use tracegate::trace::input::TraceInput;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let format = Format::ALL.get(usize::from(pick) % (Format::ALL.len() + 1)).copied();
    let options = InputOptions {
        format,
        ..InputOptions::default()
    };
    let mut items = 0usize;
    TraceInput::from_bytes(bytes, &options, Some(1 << 16)).for_each(|_| items += 1);
    std::hint::black_box(items);
});
