//! Reading traces: streaming line reader, format adapters, the normalized record.

// The adapters are being split by format; until each item there is documented, their
// missing docs are not reported.
#[allow(missing_docs)]
pub mod adapters;
pub mod input;
pub(crate) mod json_index;
pub mod native;
pub mod reader;
pub mod record;

pub use record::{Fields, Kind, Location, Record, Status};
