//! The session model (work in progress).
