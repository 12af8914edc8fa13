//! The integration tests: one binary, one module per area. `util` holds the harness
//! that runs the real executable.

mod cli;
mod coding_agents;
mod corpus;
mod coverage;
mod editor;
mod explain_examples;
mod explore;
mod fmt;
mod formats;
mod graph;
mod human_output;
mod json_contract;
mod limits;
mod lint;
mod malformed;
mod properties;
mod readme;
mod semantics;
mod shrink;
mod spec_errors;
mod util;
