//! tracegate: verify what AI agents do after a tool fails.

pub mod check;
pub mod cli;
pub mod diagnostic;
pub mod files;
pub mod machine;
pub mod redact;
pub mod spec;
pub mod suggest;
pub mod trace;
