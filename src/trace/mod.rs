//! Reading traces: streaming line reader, format adapters, the normalized record.

pub mod adapters;
mod ahead;
pub mod input;
pub mod join;
pub(crate) mod json_index;
pub mod native;
pub mod reader;
pub mod record;
pub(crate) mod spool;

pub use record::{Fields, Kind, Location, Pointer, Record, Status};
