//! What every binding whose host runs an event loop needs, once: an ACP
//! connection whose deliveries go to an [`Inbox`], calls whose outcomes go
//! there too, and (for descriptor transports) a [`HostReader`] so the host's
//! own loop reads. A binding then adds only value conversion and its loop's
//! wake-up (DESIGN.md, decisions 9 and 10).
//!
//! How a binding uses it:
//! 1. Make an [`Inbox`] with a `wake` function that schedules work on the
//!    host's loop (an eventfd write, `call_soon_threadsafe`, a threadsafe
//!    function, a condition variable).
//! 2. Start a [`HostConnection`] on it (the transport: a spawned agent,
//!    stdio, descriptors). With [`HostOptions::drive_reads`], take the
//!    [`HostReader`] if there is one, watch its descriptor on the loop and
//!    call [`HostConnection::pump`] when it is readable.
//! 3. On each wake: pump if [`HostReader::take_pump_request`]; take the
//!    urgent lane and handle it at once; drain the ordered lane in order
//!    (awaiting each notification handler), until
//!    [`Inbox::take_ordered`] reports it empty.
//! 4. Send with [`HostConnection::call`] (the outcome comes back as
//!    [`Delivery::Result`] with the host's tag) and the [`AcpPeer`]'s
//!    `try_notify`/`notify`; answer requests with [`HostRequest::respond`].
//!    Calls made while a notification handler runs set
//!    [`CallOptions::skip_barrier`] (only the host knows when that is).
//!
//! Round trips cost no thread hand-off: with the host reading, a request is
//! read, dispatched and handed to the host on its own thread, and the
//! answer is written there too when the writer is idle.
//!
//! A host whose code runs on one thread of its own that may block between
//! deliveries (the C ABI's dispatch thread) does steps 2 and 3 with a
//! [`HostThread`]: give the inbox a [`Bell`]'s wake-up and call
//! [`HostThread::next_delivery`], which pumps the reader and sleeps in `poll(2)`.

mod inbox;
mod runtime;
mod thread;

use std::sync::{Arc, Mutex};

use serde_json::value::RawValue;

pub use inbox::{Delivery, HookLane, HostRequest, Inbox, Pending, Wake};
pub use runtime::{ProcessRuntime, block_signals};
pub use thread::{Bell, HostThread};

use crate::error::{CallError, ConnectionError};
use crate::protocol::{AcpConnection, AcpOptions, AcpPeer, Role};
use crate::rpc::{CallOptions, CancelHandle, HostReader, PumpState, ReadMode, lock};
use crate::transport::Transport;
use crate::transport::process::AgentCommand;

/// How a [`HostConnection`] is started.
#[derive(Debug, Clone, Default)]
pub struct HostOptions {
    /// The protocol layer's (and engine's) settings.
    pub acp: AcpOptions,
    /// Let the host's loop read the transport (a [`HostReader`]) when it is
    /// a descriptor (a spawned agent's pipes, stdio pipes and sockets,
    /// [`Transport::from_fds`]); otherwise a task of the engine reads.
    pub drive_reads: bool,
    /// The engine's hooks the host takes through its inbox.
    pub hooks: InboxHooks,
}

/// Which of the engine's hooks a host takes through its inbox, and in which
/// lane: the wire trace as [`Delivery::Trace`], engine events as
/// [`Delivery::Engine`] ([`Inbox::trace_hook`], [`Inbox::events_hook`]).
/// [`HostConnection::start`] installs them in the connection's options, in
/// place of any hook set there. The default takes neither.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InboxHooks {
    /// Take the wire trace.
    pub trace: bool,
    /// Take the engine's events.
    pub events: bool,
    /// Where both go (the `ordered_hooks` option: [`crate::options::Settings::hooks`]).
    pub lane: HookLane,
}

/// An ACP connection delivering to an [`Inbox`]. Derefs to [`AcpPeer`] for
/// sending; the connection closes when this is dropped (as by
/// [`AcpPeer::close`], without waiting).
pub struct HostConnection<T> {
    acp: AcpConnection,
    inbox: Arc<Inbox<T>>,
    reader: Mutex<Option<HostReader>>,
}

impl<T> std::fmt::Debug for HostConnection<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostConnection")
            .field("acp", &self.acp)
            .finish_non_exhaustive()
    }
}

impl<T> std::ops::Deref for HostConnection<T> {
    type Target = AcpPeer;
    fn deref(&self) -> &AcpPeer {
        &self.acp
    }
}

impl<T: Send + 'static> HostConnection<T> {
    /// Starts a connection playing `role` over `transport`, on `runtime`,
    /// delivering to `inbox`. [`Delivery::Closed`] is queued once the
    /// connection has closed, its writer finished and its agent (if any) is
    /// gone.
    pub fn start(
        runtime: &tokio::runtime::Handle,
        role: Role,
        transport: Transport,
        inbox: Arc<Inbox<T>>,
        options: HostOptions,
    ) -> Self {
        let handler = Arc::new(inbox::InboxHandler {
            inbox: Arc::clone(&inbox),
        });
        let mode = if options.drive_reads {
            let wake = Arc::clone(&inbox);
            ReadMode::Host(Arc::new(move || wake.wake_host()))
        } else {
            ReadMode::Inline
        };
        let mut acp = options.acp;
        let hooks = options.hooks;
        if hooks.trace {
            acp.connection.trace = Some(inbox.trace_hook(hooks.lane));
        }
        if hooks.events {
            acp.connection.events = Some(inbox.events_hook(hooks.lane));
        }
        let (acp, reader) = AcpConnection::start_mode(runtime, role, transport, handler, acp, mode);
        let peer = acp.acp_peer();
        let closing = Arc::clone(&inbox);
        runtime.spawn(async move {
            let reason = peer.closed().await;
            peer.terminated().await;
            closing.close(reason);
        });
        Self {
            acp,
            inbox,
            reader: Mutex::new(reader),
        }
    }

    /// Client side: spawns `command` (made with its stderr hook already
    /// set, for example to [`Inbox::push_log`]) and starts a connection over
    /// its stdio. A spawn failure is returned at once. The connection
    /// closes when the agent's stdout ends or the agent exits (see
    /// [`crate::transport::process::spawn`]).
    pub fn spawn_agent(
        runtime: &tokio::runtime::Handle,
        command: &AgentCommand,
        inbox: Arc<Inbox<T>>,
        options: HostOptions,
    ) -> Result<Self, ConnectionError> {
        let transport = {
            let _entered = runtime.enter();
            crate::transport::process::spawn(command)?
        };
        Ok(Self::start(
            runtime,
            Role::Client,
            transport,
            inbox,
            options,
        ))
    }

    /// The inbox this connection delivers to.
    pub fn inbox(&self) -> &Arc<Inbox<T>> {
        &self.inbox
    }

    /// A non-owning handle for sending (the connection stays open only
    /// while this `HostConnection` lives).
    pub fn acp_peer(&self) -> AcpPeer {
        self.acp.acp_peer()
    }

    /// Sends a request (checked against the protocol first: a refused call
    /// is `Err` at once and nothing is sent). Its outcome comes back as
    /// [`Delivery::Result`] carrying `tag`: in the ordered lane, or in the
    /// urgent lane with [`CallOptions::skip_barrier`].
    pub fn call(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: CallOptions,
        tag: T,
    ) -> Result<CancelHandle, CallError> {
        let inbox = Arc::clone(&self.inbox);
        let urgent = options.skip_barrier;
        self.acp.call(method, params, options, move |outcome| {
            inbox.push_result(tag, outcome, urgent);
        })
    }

    /// The reader the host drives, if [`HostOptions::drive_reads`] was set
    /// and the transport allows it (once: the host owns it from then on).
    pub fn take_reader(&self) -> Option<HostReader> {
        lock(&self.reader).take()
    }

    /// Pumps `reader` on the host's thread with the inbox's wakes held, and
    /// says which lanes now need the host (as if it had been woken).
    pub fn pump(&self, reader: &HostReader) -> (PumpState, Pending) {
        self.inbox.hold_wakes();
        let state = reader.pump();
        (state, self.inbox.release_wakes())
    }
}
