//! Client services: what every editor rewrites, offered by the core so that
//! every host gets them (opt-in).
//!
//! * [`session_model`]: folds `session/update` notifications into a state
//!   snapshot per session.
//! * [`fs`]: `fs/read_text_file` and `fs/write_text_file` sandboxed to the
//!   session's working directory.
//! * [`terminal`]: the `terminal/*` methods, backed by real processes.

pub mod fs;
pub mod session_model;
pub mod terminal;

#[cfg(test)]
mod test_dir;
