//! Sandboxed `fs/*` handlers (work in progress).
