//! The integration tests: one binary, one module per area. `util` holds the harness
//! that runs the real executable.

mod cli;
mod corpus;
mod json_contract;
mod malformed;
mod properties;
mod semantics;
mod spec_errors;
mod util;
