//! The terminal manager (work in progress).
