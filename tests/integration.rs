//! The integration tests: one binary, one module per area. `util` holds the harness
//! that runs the real executable.

mod chain;
mod cli;
mod corpus;
mod coverage;
mod editor;
mod explore;
mod fmt;
mod formats;
mod graph;
mod join;
mod json_contract;
mod lint;
mod malformed;
mod properties;
mod semantics;
mod shrink;
mod spec_errors;
mod util;
