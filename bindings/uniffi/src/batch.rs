//! Outgoing notifications in batches: [`Connection::try_notify_batch`]
//! queues many notifications with one call across the FFI.
//!
//! Why: in Kotlin each call into Rust allocates several JNA structures (the
//! call status, a buffer per string), which the JVM registers in a global
//! table and frees from a cleaner thread. Measured on W1 (an agent streaming
//! `session/update`s): one `try_notify` per update spent most of the agent's
//! time there; a batch pays that cost once per batch. The Kotlin layer
//! (`Notifications.kt`) gathers what a handler sends and flushes it here.
//!
//! [`Connection::try_notify_batch`]: crate::Connection::try_notify_batch

use crate::error::AcpError;

/// One notification to send: the method and its params as JSON text.
#[derive(Debug, Clone, uniffi::Record)]
pub struct OutgoingNotification {
    /// The method name.
    pub method: String,
    /// The params as JSON text; `None` for none.
    pub params: Option<String>,
}

/// A notification of a batch that was refused (nothing of it was sent).
#[derive(Debug, Clone, uniffi::Record)]
pub struct BatchError {
    /// Its index in the batch.
    pub index: u32,
    /// Why: what `notify` would have thrown for it.
    pub error: AcpError,
}

/// What [`Connection::try_notify_batch`](crate::Connection::try_notify_batch) did.
#[derive(Debug, Clone, uniffi::Record)]
pub struct BatchOutcome {
    /// How many notifications, from the start of the batch, were handled:
    /// queued for the peer, or refused (listed in `errors`). Fewer than the
    /// batch when the outgoing queue filled up: the rest was not touched
    /// (send the first of them with `notify`, which waits for room, then
    /// the others).
    pub handled: u32,
    /// The refused ones among the handled, in order.
    pub errors: Vec<BatchError>,
}
