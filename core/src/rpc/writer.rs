//! The outgoing queue and the writer task.
//!
//! **Order.** Every frame is queued (or written) in the order its send was
//! made: a request when it is created, a notification when its `notify`
//! returns, an answer when `respond` is called. So wire order is call order,
//! for every binding.
//!
//! **Direct writes: no thread hand-off for a round trip.** When the writer
//! is idle (nothing queued, no write in progress) and the transport is a
//! descriptor (`transport/fd.rs`), an answer or a request is written by the
//! thread that sends it, there and then, with one non-blocking `writev`: an
//! answer from a host's event loop leaves from that loop's thread. Whatever
//! does not fit (the pipe is full) is queued, first, for the writer task.
//! Notifications always go through the queue: they come in streams, which
//! the writer task batches.
//!
//! **Batches.** The writer task drains everything queued into one buffer
//! and writes it with one `write_all` (writes coalesce under load: one
//! syscall per batch rather than per message).
//!
//! **Back-pressure.** Notifications take a permit from a semaphore of
//! `outgoing_queue` permits first (a `notify` waits for one), returned once
//! their bytes are written: a host that streams faster than the peer reads
//! waits instead of growing memory. A request takes a permit if one is free
//! and is queued at once regardless (creating a call never waits; requests
//! queued beyond the bound are bounded by the calls the host keeps alive,
//! and they hold back notifications until written). Answers and
//! `$/cancel_request` ("control" frames) never wait: they are owed by the
//! engine and must be sendable from synchronous code and from `Drop`.
//!
//! **Threads.** A direct writer claims the writer's role (`direct_busy`) under the
//! queue's lock, then traces and writes outside it; meanwhile other senders
//! queue, and the writer task waits. The writer task unpublishes the
//! descriptor (under the lock, once no direct write is in progress) before
//! it drops the write half, so nobody writes to a closed descriptor number.

use std::collections::VecDeque;
use std::io::IoSlice;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::Mutex;

use tokio::io::AsyncWriteExt;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

use super::shared::Shared;
use super::{Direction, TraceHook, lock};
use crate::error::CloseReason;
use crate::framing::{Framing, encode_into, encode_prefix, encode_suffix};
use crate::transport::WriteHalf;
use crate::transport::fd::{self, Mode};

/// Buffers above this size are not kept between batches.
const KEEP_BUFFER: usize = 1024 * 1024;

/// Queue and batch capacity (in frames) kept once drained; what a flood
/// grew beyond it is released (a frame slot is ~90 bytes: 200k queued
/// answers held ~17 MiB in each of the queue and the batch).
const KEEP_FRAMES: usize = 1024;

/// Frames this large are written from their own bytes instead of being
/// copied into the batch buffer.
const DIRECT_WRITE: usize = 256 * 1024;

enum OutFrame {
    /// A message, framed when written.
    Message { bytes: Vec<u8>, permit: bool },
    /// A framed message a direct write began (already traced): its prefix,
    /// body and suffix, of which the first `written` bytes are out. The
    /// body is the message's own buffer, not a copy.
    Rest {
        parts: [Vec<u8>; 3],
        written: usize,
        permit: bool,
    },
}

impl OutFrame {
    fn permit(&self) -> bool {
        match self {
            Self::Message { permit, .. } | Self::Rest { permit, .. } => *permit,
        }
    }
}

/// The parts of `parts` not yet written, given `written` bytes are out.
fn unwritten(parts: &[Vec<u8>; 3], written: usize) -> impl Iterator<Item = &[u8]> {
    let mut skip = written;
    parts.iter().filter_map(move |part| {
        if skip >= part.len() {
            skip -= part.len();
            return None;
        }
        let rest = &part[skip..];
        skip = 0;
        Some(rest)
    })
}

#[derive(Default)]
struct Queue {
    frames: VecDeque<OutFrame>,
    closed: bool,
    /// The writer task is writing a batch.
    writer_busy: bool,
    /// A thread is writing a frame directly (which keeps the direct
    /// descriptor open).
    direct_busy: bool,
    /// Where direct writes go: a duplicate of the writer's registered
    /// descriptor, closed (under this lock, with no direct write in
    /// progress) before the writer task ends.
    direct: Option<(OwnedFd, Mode, bool)>,
}

/// How a frame may be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A notification: holds a permit, always queued.
    Notification,
    /// A request: takes a permit if one is free, may be written directly.
    Request,
    /// An answer or a cancellation: no permit, may be written directly.
    Control,
}

/// The queue between senders and the writer task.
pub(crate) struct Outbox {
    queue: Mutex<Queue>,
    wake: Notify,
    permits: Arc<Semaphore>,
    framing: Framing,
    trace: Option<TraceHook>,
}

/// The outbox is closed: nothing more will be written.
#[derive(Debug)]
pub(crate) struct OutboxClosed;

/// A reserved place in the outgoing queue (see [`Outbox::reserve`]).
pub(crate) struct Reserved(OwnedSemaphorePermit);

impl Outbox {
    pub(crate) fn new(capacity: usize, framing: Framing, trace: Option<TraceHook>) -> Self {
        Self {
            queue: Mutex::new(Queue::default()),
            wake: Notify::new(),
            permits: Arc::new(Semaphore::new(capacity.max(1))),
            framing,
            trace,
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

    /// Queues a notification in a reserved place.
    pub(crate) fn push_reserved(
        &self,
        reserved: Reserved,
        bytes: Vec<u8>,
    ) -> Result<(), OutboxClosed> {
        self.push(bytes, Kind::Notification, Some(reserved))
    }

    /// Queues (or writes) a request, with a permit if one is free.
    pub(crate) fn push_request(&self, bytes: Vec<u8>) -> Result<(), OutboxClosed> {
        let reserved = self.try_reserve()?;
        self.push(bytes, Kind::Request, reserved)
    }

    /// Queues (or writes) a control message (an answer or a cancellation)
    /// without waiting for room.
    pub(crate) fn push_control(&self, bytes: Vec<u8>) -> Result<(), OutboxClosed> {
        self.push(bytes, Kind::Control, None)
    }

    fn push(
        &self,
        bytes: Vec<u8>,
        kind: Kind,
        reserved: Option<Reserved>,
    ) -> Result<(), OutboxClosed> {
        let permit = reserved.is_some();
        let direct = {
            let mut q = lock(&self.queue);
            if q.closed {
                return Err(OutboxClosed);
            }
            let direct = match (kind, &q.direct) {
                (Kind::Notification, _) | (_, None) => None,
                _ if q.writer_busy || q.direct_busy || !q.frames.is_empty() => None,
                (_, Some((fd, mode, guard))) => Some((fd.as_raw_fd(), *mode, *guard)),
            };
            if direct.is_some() {
                q.direct_busy = true;
            } else {
                q.frames.push_back(OutFrame::Message { bytes, permit });
                if let Some(r) = reserved {
                    r.0.forget();
                }
                let writer_waits = !q.writer_busy;
                drop(q);
                if writer_waits {
                    self.wake.notify_one();
                }
                return Ok(());
            }
            direct
        };
        if let Some((fd, mode, guard)) = direct {
            self.write_direct(fd, mode, guard, bytes, reserved);
        }
        Ok(())
    }

    /// Writes one frame from the calling thread (the caller claimed
    /// `direct_busy`, which keeps `fd` open); queues what does not fit, first.
    fn write_direct(
        &self,
        fd: RawFd,
        mode: Mode,
        guard: bool,
        bytes: Vec<u8>,
        reserved: Option<Reserved>,
    ) {
        // `direct_busy` is given back even if the trace hook panics.
        let mut release = ReleaseBusy {
            outbox: self,
            armed: true,
        };
        self.trace(&bytes);
        let mut prefix = Vec::new();
        encode_prefix(self.framing, bytes.len(), &mut prefix);
        let mut suffix = Vec::new();
        encode_suffix(self.framing, &mut suffix);
        let total = prefix.len() + bytes.len() + suffix.len();
        // An error (EPIPE, ...) is left to the writer task, which writes
        // the frame again, fails the same way and closes the connection.
        let written = fd::write_now(
            fd,
            mode,
            guard,
            &[
                IoSlice::new(&prefix),
                IoSlice::new(&bytes),
                IoSlice::new(&suffix),
            ],
        )
        .unwrap_or(0);
        let rest = (written < total).then_some([prefix, bytes, suffix]);
        release.armed = false;
        let mut q = lock(&self.queue);
        q.direct_busy = false;
        if let Some(parts) = rest {
            let permit = reserved.is_some();
            if let Some(r) = reserved {
                r.0.forget();
            }
            q.frames.push_front(OutFrame::Rest {
                parts,
                written,
                permit,
            });
        }
        // A reserved place of a frame written whole returns when dropped.
        let writer_needed = !q.frames.is_empty() || q.closed;
        drop(q);
        if writer_needed {
            self.wake.notify_one();
        }
    }

    /// Calls the trace hook; a panicking hook is ignored (it must not stop
    /// the writing).
    fn trace(&self, bytes: &[u8]) {
        if let Some(trace) = &self.trace {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                trace(Direction::Outgoing, bytes);
            }));
        }
    }

    /// Publishes the writer's descriptor for direct writes (a duplicate of
    /// it, so it stays valid whatever happens to the writer).
    fn publish_direct(&self, raw: RawFd, mode: Mode, guard: bool) {
        // SAFETY: `raw` is the writer's open descriptor, borrowed for the
        // duplication only.
        let dup = unsafe { BorrowedFd::borrow_raw(raw) }.try_clone_to_owned();
        if let Ok(dup) = dup {
            lock(&self.queue).direct = Some((dup, mode, guard));
        }
    }

    /// Stops direct writes and closes their descriptor, once no direct
    /// write is in progress (one in progress is a single non-blocking call).
    pub(crate) async fn retire_direct(&self) {
        loop {
            let notified = self.wake.notified();
            let retired = {
                let mut q = lock(&self.queue);
                if q.direct_busy {
                    None
                } else {
                    Some(q.direct.take())
                }
            };
            match retired {
                Some(fd) => {
                    drop(fd);
                    return;
                }
                None => notified.await,
            }
        }
    }

    /// Stops accepting messages. What is queued is still written.
    pub(crate) fn close(&self) {
        lock(&self.queue).closed = true;
        self.permits.close();
        self.wake.notify_one();
    }
}

/// Why a failed write closes the connection: a pipe or socket whose reader
/// is gone (EPIPE, ECONNRESET) is the peer closing, as its end of stream is
/// on the read side; whichever side notices first, the reason is the same.
fn write_failure(e: &std::io::Error) -> CloseReason {
    match e.kind() {
        std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset => {
            CloseReason::PeerClosed
        }
        _ => CloseReason::Io(format!("write failed: {e}").into()),
    }
}

/// Gives `direct_busy` back (and wakes the writer) if a direct write unwinds.
struct ReleaseBusy<'a> {
    outbox: &'a Outbox,
    armed: bool,
}

impl Drop for ReleaseBusy<'_> {
    fn drop(&mut self) {
        if self.armed {
            lock(&self.outbox.queue).direct_busy = false;
            self.outbox.wake.notify_one();
        }
    }
}

/// What the writer task found in the queue.
enum Take {
    /// A batch to write (`writer_busy` is set).
    Batch,
    /// Nothing to do until woken (a direct write is in progress, or the
    /// queue is empty).
    Wait,
    /// Closed and drained.
    Done,
}

fn take(outbox: &Outbox, into: &mut Vec<OutFrame>) -> Take {
    let mut q = lock(&outbox.queue);
    if q.direct_busy {
        return Take::Wait;
    }
    if q.frames.is_empty() {
        return if q.closed { Take::Done } else { Take::Wait };
    }
    into.extend(q.frames.drain(..));
    if q.frames.capacity() > KEEP_FRAMES {
        q.frames.shrink_to(KEEP_FRAMES);
    }
    q.writer_busy = true;
    Take::Batch
}

/// The writer task: runs until the outbox is closed and drained, a write
/// fails, or the connection's hard stop fires. Then closes the write half
/// (the peer sees end of stream).
pub(crate) async fn run_writer(shared: Arc<Shared>, mut writer: WriteHalf) {
    let outbox = &shared.outbox;
    if let WriteHalf::Fd(w) = &mut writer {
        w.register();
        if let Some((raw, mode, guard)) = w.direct() {
            outbox.publish_direct(raw, mode, guard);
        }
    }
    let mut batch: Vec<OutFrame> = Vec::new();
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    loop {
        let notified = outbox.wake.notified();
        match take(outbox, &mut batch) {
            Take::Done => break,
            Take::Wait => {
                tokio::select! {
                    () = notified => continue,
                    () = shared.hard_stop.cancelled() => break,
                }
            }
            Take::Batch => {}
        }
        buf.clear();
        let mut permits = 0usize;
        for frame in &batch {
            if let OutFrame::Message { bytes, .. } = frame {
                outbox.trace(bytes);
            }
            permits += usize::from(frame.permit());
        }
        let write = async {
            // Small frames are copied into one buffer (one write per batch);
            // a large one is written from its own bytes, not copied again.
            for frame in batch.drain(..) {
                match frame {
                    OutFrame::Rest { parts, written, .. } => {
                        for part in unwritten(&parts, written) {
                            if part.len() < DIRECT_WRITE {
                                buf.extend_from_slice(part);
                            } else {
                                writer.write_all(&buf).await?;
                                buf.clear();
                                writer.write_all(part).await?;
                            }
                        }
                    }
                    OutFrame::Message { bytes, .. } if bytes.len() < DIRECT_WRITE => {
                        encode_into(outbox.framing, &bytes, &mut buf);
                    }
                    OutFrame::Message { bytes, .. } => {
                        encode_prefix(outbox.framing, bytes.len(), &mut buf);
                        writer.write_all(&buf).await?;
                        buf.clear();
                        writer.write_all(&bytes).await?;
                        encode_suffix(outbox.framing, &mut buf);
                    }
                }
            }
            writer.write_all(&buf).await?;
            writer.flush().await
        };
        let result = tokio::select! {
            r = write => r,
            () = shared.hard_stop.cancelled() => {
                lock(&outbox.queue).writer_busy = false;
                break;
            }
        };
        lock(&outbox.queue).writer_busy = false;
        outbox.permits.add_permits(permits);
        if let Err(e) = result {
            shared.shutdown(write_failure(&e));
            break;
        }
        if buf.capacity() > KEEP_BUFFER {
            buf = Vec::with_capacity(64 * 1024);
        }
        if batch.capacity() > KEEP_FRAMES {
            batch.shrink_to(KEEP_FRAMES);
        }
    }
    // No direct write may start once the descriptor is retired; one in
    // progress finishes first.
    outbox.retire_direct().await;
    let _ = tokio::time::timeout(shared.options.flush_timeout, writer.shutdown()).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flood of answers (no back-pressure) grows the queue; once the
    /// writer has taken them, the queue does not keep that capacity.
    #[test]
    fn the_queue_releases_what_a_flood_grew_once_drained() {
        let outbox = Outbox::new(16, Framing::Ndjson, None);
        lock(&outbox.queue).writer_busy = true; // nothing is written directly
        for i in 0..100_000u32 {
            outbox
                .push_control(format!("{{\"id\":{i}}}").into_bytes())
                .expect("open");
        }
        assert!(lock(&outbox.queue).frames.capacity() >= 100_000);
        lock(&outbox.queue).writer_busy = false;
        let mut batch = Vec::new();
        assert!(matches!(take(&outbox, &mut batch), Take::Batch));
        assert_eq!(batch.len(), 100_000);
        assert!(lock(&outbox.queue).frames.capacity() <= KEEP_FRAMES);
    }
}
