//! The integration tests: one binary, one module per area. `util` holds the harness
//! that runs the real executable.

mod bad_input;
mod chain;
mod ci_outputs;
mod cli;
mod coding_agents;
mod corpus;
mod coverage;
mod data_gaps;
mod documents;
mod editor;
mod explain_examples;
mod explore;
mod fmt;
mod formats;
mod graph;
mod human_output;
mod human_scale;
mod join;
mod json_contract;
mod limits;
mod lint;
mod malformed;
mod merge;
mod project;
mod properties;
mod readme;
mod runtime;
mod semantics;
mod shard;
mod shrink;
mod spec_errors;
mod spool;
mod streaming;
mod util;
mod values;
