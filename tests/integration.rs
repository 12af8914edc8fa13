//! The integration tests: one binary, one module per area. `util` holds the harness
//! that runs the real executable.

mod cli;
mod coding_agents;
mod corpus;
mod coverage;
mod editor;
mod explore;
mod fmt;
mod formats;
mod graph;
mod json_contract;
mod lint;
mod malformed;
mod properties;
mod semantics;
mod shrink;
mod spec_errors;
mod util;
