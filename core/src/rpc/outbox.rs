//! The outgoing queue and the writer task.
//!
//! Senders push encoded messages; one writer task drains everything queued
//! into one buffer and writes it with one `write_all` (writes coalesce under
//! load, one syscall per batch rather than per message).
//!
//! Back-pressure: requests and notifications first take a permit from a
//! semaphore of `outgoing_queue` permits, returned only once their bytes were
//! written. A host that sends faster than the peer reads therefore waits
//! instead of growing memory. Responses and `$/cancel_request` skip the
//! permit ("control" frames): they are answers the engine owes and must be
//! sendable from synchronous code and from `Drop`.

use std::sync::Arc;
use std::sync::Mutex;

use tokio::io::AsyncWriteExt;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

use super::shared::Shared;
use super::{Direction, lock};
use crate::error::CloseReason;
use crate::framing::{Framing, encode_into, encode_prefix, encode_suffix};
use crate::transport::BoxWriter;

/// Buffers above this size are not kept between batches.
const KEEP_BUFFER: usize = 1024 * 1024;

/// Frames this large are written from their own bytes instead of being
/// copied into the batch buffer.
const DIRECT_WRITE: usize = 256 * 1024;

struct OutFrame {
    bytes: Vec<u8>,
    permit: bool,
}

#[derive(Default)]
struct Queue {
    frames: Vec<OutFrame>,
    closed: bool,
}

/// The queue between senders and the writer task.
pub(crate) struct Outbox {
    queue: Mutex<Queue>,
    wake: Notify,
    permits: Arc<Semaphore>,
    framing: Framing,
}

/// The outbox is closed: nothing more will be written.
#[derive(Debug)]
pub(crate) struct OutboxClosed;

/// A reserved place in the outgoing queue (see [`Outbox::reserve`]).
pub(crate) struct Reserved(OwnedSemaphorePermit);

impl Outbox {
    pub(crate) fn new(capacity: usize, framing: Framing) -> Self {
        Self {
            queue: Mutex::new(Queue::default()),
            wake: Notify::new(),
            permits: Arc::new(Semaphore::new(capacity.max(1))),
            framing,
        }
    }

    /// Waits for room in the queue (back-pressure).
    pub(crate) async fn reserve(&self) -> Result<Reserved, OutboxClosed> {
        Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .map(Reserved)
            .map_err(|_| OutboxClosed)
    }

    /// Takes a place in the queue if one is free right now: `Ok(None)` when
    /// the queue is full.
    pub(crate) fn try_reserve(&self) -> Result<Option<Reserved>, OutboxClosed> {
        match Arc::clone(&self.permits).try_acquire_owned() {
            Ok(permit) => Ok(Some(Reserved(permit))),
            Err(tokio::sync::TryAcquireError::NoPermits) => Ok(None),
            Err(tokio::sync::TryAcquireError::Closed) => Err(OutboxClosed),
        }
    }

    /// Queues a message in a reserved place.
    pub(crate) fn push_reserved(
        &self,
        reserved: Reserved,
        bytes: Vec<u8>,
    ) -> Result<(), OutboxClosed> {
        self.push(bytes, true)?;
        reserved.0.forget();
        Ok(())
    }

    /// Queues a control message (a response or a cancellation) without
    /// waiting for room.
    pub(crate) fn push_control(&self, bytes: Vec<u8>) -> Result<(), OutboxClosed> {
        self.push(bytes, false)
    }

    fn push(&self, bytes: Vec<u8>, permit: bool) -> Result<(), OutboxClosed> {
        {
            let mut q = lock(&self.queue);
            if q.closed {
                return Err(OutboxClosed);
            }
            q.frames.push(OutFrame { bytes, permit });
        }
        self.wake.notify_one();
        Ok(())
    }

    /// Stops accepting messages. What is queued is still written.
    pub(crate) fn close(&self) {
        lock(&self.queue).closed = true;
        self.permits.close();
        self.wake.notify_one();
    }

    /// Moves everything queued into `into`; returns whether the outbox is closed.
    fn take(&self, into: &mut Vec<OutFrame>) -> bool {
        let mut q = lock(&self.queue);
        std::mem::swap(&mut q.frames, into);
        q.closed
    }
}

/// The writer task: runs until the outbox is closed and drained, a write
/// fails, or the connection's hard stop fires. Then closes the write half
/// (the peer sees end of stream).
pub(crate) async fn run_writer(shared: Arc<Shared>, mut writer: BoxWriter) {
    let outbox = &shared.outbox;
    let mut batch: Vec<OutFrame> = Vec::new();
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    loop {
        let notified = outbox.wake.notified();
        let closed = outbox.take(&mut batch);
        if batch.is_empty() {
            if closed {
                break;
            }
            tokio::select! {
                () = notified => continue,
                () = shared.hard_stop.cancelled() => break,
            }
        }
        buf.clear();
        let mut permits = 0usize;
        for frame in &batch {
            shared.trace(Direction::Outgoing, &frame.bytes);
            permits += usize::from(frame.permit);
        }
        let write = async {
            // Small frames are copied into one buffer (one write per batch);
            // a large one is written from its own bytes, not copied again.
            for frame in batch.drain(..) {
                if frame.bytes.len() < DIRECT_WRITE {
                    encode_into(outbox.framing, &frame.bytes, &mut buf);
                    continue;
                }
                encode_prefix(outbox.framing, frame.bytes.len(), &mut buf);
                writer.write_all(&buf).await?;
                buf.clear();
                writer.write_all(&frame.bytes).await?;
                encode_suffix(outbox.framing, &mut buf);
            }
            writer.write_all(&buf).await?;
            writer.flush().await
        };
        let result = tokio::select! {
            r = write => r,
            () = shared.hard_stop.cancelled() => break,
        };
        outbox.permits.add_permits(permits);
        if let Err(e) = result {
            shared.shutdown(CloseReason::Io(format!("write failed: {e}").into()));
            break;
        }
        if buf.capacity() > KEEP_BUFFER {
            buf = Vec::with_capacity(64 * 1024);
        }
    }
    let _ = tokio::time::timeout(shared.options.flush_timeout, writer.shutdown()).await;
}
