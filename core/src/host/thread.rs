//! A host thread that takes its deliveries one at a time and blocks while
//! there are none (the C ABI's dispatch thread): [`HostThread::next_delivery`] reads
//! the transport on that thread ([`HostReader::pump`]) and sleeps in
//! `poll(2)` on the transport's descriptor and a [`Bell`], the inbox's
//! wake-up for everything pushed from other threads.
//!
//! Why: with the engine's reader task on a runtime thread, each message
//! read crossed to the host's thread (a futex wake-up of a sleeping thread)
//! and a round trip, request read to answer written, woke a thread twice per
//! process. On a virtual machine with idle CPUs such a wake-up costs tens of
//! microseconds (the C W2 round trip was 85 us p50 against 30 us for the
//! Rust core, whose handler runs where the request was read; see
//! bench/README.md). Read on the host's thread, a request is read,
//! dispatched and handed to the host there, and its answer is written there
//! too when the writer is idle: no thread hand-off at all.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use super::inbox::{Delivery, Inbox, Wake};
use crate::rpc::{HostReader, PumpState};

/// A wake-up a [`HostThread`] sleeps on: an eventfd, readable once rung
/// until the thread takes it.
#[derive(Debug)]
pub struct Bell(OwnedFd);

impl Bell {
    /// A new bell, or why the OS refused the eventfd.
    pub fn new() -> std::io::Result<Arc<Self>> {
        // SAFETY: eventfd(2) with valid flags; the result is checked.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a non-negative result is a fresh descriptor we own.
        Ok(Arc::new(Self(unsafe { OwnedFd::from_raw_fd(fd) })))
    }

    /// Wakes the thread (from any thread).
    pub fn ring(&self) {
        let one: u64 = 1;
        // SAFETY: writing 8 bytes from a valid u64 to our eventfd. It can
        // only fail when the counter would overflow: then it is rung.
        let _ = unsafe { libc::write(self.0.as_raw_fd(), (&raw const one).cast(), 8) };
    }

    /// The eventfd: readable while rung (a C host in poll mode watches it).
    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    /// The [`Wake`] to give the [`Inbox`]: rings this bell.
    pub fn wake(self: &Arc<Self>) -> Wake {
        let bell = Arc::clone(self);
        Arc::new(move || bell.ring())
    }

    /// Takes the rings so far (the descriptor is no longer readable).
    pub fn clear(&self) {
        let mut count: u64 = 0;
        // SAFETY: reading 8 bytes into a valid u64 from our non-blocking
        // eventfd (resets its counter; EAGAIN when it was not rung).
        let _ = unsafe { libc::read(self.0.as_raw_fd(), (&raw mut count).cast(), 8) };
    }
}

/// The deliveries of one connection taken by one thread (see the module
/// docs). Made with the connection's inbox (created with [`Bell::wake`]
/// as its wake-up) and its [`HostReader`], when the transport has one
/// ([`super::HostOptions::drive_reads`], [`super::HostConnection::take_reader`]);
/// without one the engine's reader task reads and this only sleeps on the
/// bell.
pub struct HostThread<T> {
    inbox: Arc<Inbox<T>>,
    bell: Arc<Bell>,
    reader: Option<HostReader>,
    /// What the last pump left the reader waiting for (the first pump is
    /// the host's to make: [`PumpState::Again`]).
    state: PumpState,
    /// `poll` saw the descriptor readable (or hung up) since the last pump.
    readable: bool,
}

impl<T> std::fmt::Debug for HostThread<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostThread")
            .field("reader", &self.reader)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl<T: Send + 'static> HostThread<T> {
    /// The thread's side of `inbox` (whose wake-up rings `bell`), reading
    /// with `reader` if there is one.
    pub fn new(inbox: Arc<Inbox<T>>, bell: Arc<Bell>, reader: Option<HostReader>) -> Self {
        Self {
            inbox,
            bell,
            reader,
            state: PumpState::Again,
            readable: false,
        }
    }

    /// The next delivery (urgent first, as [`Inbox::pop`] hands them out),
    /// reading the transport on this thread while the inbox is empty and
    /// sleeping while there is nothing to read either. Blocks until there
    /// is one: [`Delivery::Closed`] is the last (do not call again after
    /// it).
    pub fn next_delivery(&mut self) -> Delivery<T> {
        loop {
            if let Some(delivery) = self.inbox.pop() {
                return delivery;
            }
            if !self.pump() {
                self.sleep();
            }
        }
    }

    /// Pumps the reader if it can go on; whether it did.
    fn pump(&mut self) -> bool {
        let Some(reader) = &self.reader else {
            return false;
        };
        let requested = reader.take_pump_request();
        let go = requested
            || self.state == PumpState::Again
            || (self.state == PumpState::Reading && self.readable);
        if !go {
            return false;
        }
        self.readable = false;
        // What the reader pushes is for this thread: no wake-up for it
        // (`next_delivery` takes the inbox after each pump).
        self.inbox.hold_wakes();
        self.state = reader.pump();
        let _ = self.inbox.release_wakes();
        if self.state == PumpState::Finished {
            // Stops watching its descriptor first, then closes it.
            self.reader = None;
        }
        true
    }

    /// Sleeps until the bell rings or the reader's descriptor is readable
    /// (when the reader waits for input).
    fn sleep(&mut self) {
        let watch = self
            .reader
            .as_ref()
            .filter(|_| self.state == PumpState::Reading)
            .map(HostReader::fd);
        let mut fds = [
            libc::pollfd {
                fd: self.bell.0.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: watch.unwrap_or(-1),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let n: libc::nfds_t = if watch.is_some() { 2 } else { 1 };
        // SAFETY: `fds` is a valid array of `n` pollfds for the call's
        // duration; -1 waits without a timeout.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), n, -1) };
        if ready <= 0 {
            // EINTR (or a transient failure): look again.
            return;
        }
        if fds[0].revents != 0 {
            self.bell.clear();
        }
        if watch.is_some() && fds[1].revents != 0 {
            // POLLIN, or POLLHUP/POLLERR: the read says which.
            self.readable = true;
        }
    }
}

#[cfg(test)]
#[path = "thread/tests.rs"]
mod tests;
