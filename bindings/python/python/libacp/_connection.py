"""The dynamic API: :class:`Connection`, :class:`Request` and what they use
(the package re-exports the public names; see ``libacp/__init__.py``)."""

import asyncio
import contextvars
import inspect
import logging
import os
import socket
import types
import weakref
from typing import (
    TYPE_CHECKING,
    Any,
    Awaitable,
    Callable,
    Coroutine,
    Dict,
    Generator,
    List,
    Literal,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    TypedDict,
    Union,
)

from . import _libacp
from ._errors import (
    InvalidParams,
    RequestError,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack


log = logging.getLogger("libacp")
#: ``trace=True`` / ``trace="logging"`` logs every frame here at DEBUG.
wire_log = logging.getLogger("libacp.wire")

# The JSON-RPC and ACP error codes, as the core defines them.
PARSE_ERROR: int = _libacp.PARSE_ERROR
INVALID_REQUEST: int = _libacp.INVALID_REQUEST
METHOD_NOT_FOUND: int = _libacp.METHOD_NOT_FOUND
INVALID_PARAMS: int = _libacp.INVALID_PARAMS
INTERNAL_ERROR: int = _libacp.INTERNAL_ERROR
REQUEST_CANCELLED: int = _libacp.REQUEST_CANCELLED
AUTH_REQUIRED: int = _libacp.AUTH_REQUIRED
RESOURCE_NOT_FOUND: int = _libacp.RESOURCE_NOT_FOUND


class Event(NamedTuple):
    """Something the engine handled on its own, for the ``events`` hook.

    ``kind`` is one of ``"oversized_frame"`` (``details``: ``size``, ``id``,
    ``answered``), ``"invalid_frame"`` (``error``: code/message/data,
    ``answered``), ``"bad_header"`` (``detail``), ``"unmatched_response"``
    (``id``, and ``result`` or ``error``), ``"duplicate_request_id"``
    (``id``), ``"cancel_for_unknown_request"`` (``id``),
    ``"invalid_cancel"`` (``params``), ``"ignored"`` (a notification the
    protocol layer dropped; ``message`` says which and why),
    ``"handler_panicked"`` (``panic``), ``"served"`` (a request the core's
    ``fs``/``terminal`` service answered for the host: ``method``, ``id``,
    ``subject`` with its ``sessionId``/``path``/``command``/``terminalId``,
    ``error`` or ``None``), ``"payload_rule"`` (a part of a message that
    needs a capability the peer did not advertise: ``rule``, ``withheld``
    (True: removed from our answer; False: received from the peer and
    delivered), ``method``, ``field`` (a JSON pointer), ``capability``),
    ``"closed"`` (``reason``),
    ``"events_dropped"`` (``count``: the loop fell more than 1024 events
    behind) or ``"other"``. ``message`` is a readable sentence.
    """

    kind: str
    message: str
    details: Dict[str, Any]


class ExitStatus(NamedTuple):
    """How a spawned agent ended: ``code`` when it exited, ``signal`` when
    a signal killed it."""

    code: Optional[int]
    signal: Optional[int]

    @property
    def success(self) -> bool:
        """Exit code 0."""
        return self.code == 0

    @property
    def returncode(self) -> Optional[int]:
        """As :attr:`subprocess.Popen.returncode`: the code, or minus the
        signal number."""
        if self.code is not None:
            return self.code
        return -self.signal if self.signal is not None else None


#: ``trace``: ``callable(direction, frame)`` (``"in"``/``"out"``, the
#: frame's text), or ``True``/``"logging"`` for the ``libacp.wire`` logger.
Trace = Union[Callable[[str, str], Any], bool, Literal["logging"], None]


#: Name and value pairs: a dict, or a sequence of ``(name, value)``.
Env = Union[Mapping[str, str], Sequence[Tuple[str, str]]]
#: A path: a str or an ``os.PathLike``.
StrPath = Union[str, "os.PathLike[str]"]

# The keyword options, by constructor. Names, units (``*_ms``
# milliseconds, sizes in bytes), ranges and refusals are those of the core's
# one option table (core/src/options.rs, ``_libacp.option_table()``), the
# same in every libacp binding; a test checks that these TypedDicts list
# exactly the table's options for each constructor.


class CommonOptions(TypedDict, total=False):
    """The keyword options of every connection, either role, however made
    (``None`` keeps the default). Unknown names and values of the wrong
    type raise ``TypeError``, values out of range and options that do not
    apply to the connection ``ValueError``, with the core's message."""

    #: Largest message accepted from the peer, in bytes (default 64 MiB).
    max_frame_size: Optional[int]
    #: Default timeout of every outgoing request, in milliseconds (default
    #: none); the peer is sent ``$/cancel_request`` when it passes.
    request_timeout_ms: Optional[float]
    #: After the peer's end of stream, how long requests in flight get to
    #: answer and queued messages to be written, in milliseconds (default
    #: 2000).
    flush_timeout_ms: Optional[float]
    #: Outgoing messages queued before a notify waits (default 1024).
    outgoing_queue: Optional[int]
    #: Incoming messages queued for the host before the reader waits
    #: (default 1024).
    incoming_queue: Optional[int]
    #: Requests from the peer in flight before the reader waits (default 1024).
    incoming_requests: Optional[int]
    #: The unstable ACP v1 extensions to speak: ``["all"]`` or feature names
    #: as the Rust SDK names them (``"unstable_session_fork"`` or
    #: ``"session_fork"``). Default none: their methods are then extension
    #: methods to the core (passed along unchecked). An unknown name raises
    #: ``ValueError``.
    unstable: Optional[Sequence[str]]
    #: Wire trace (see :data:`Trace`); called on the event loop, in wire
    #: order with the handlers (see ``ordered_hooks``).
    trace: Trace
    #: ``callable(event)`` for each :class:`Event`, on the event loop, in
    #: wire order with the handlers (see ``ordered_hooks``).
    events: Optional[Callable[[Event], Any]]
    #: ``trace`` and ``events`` in wire order (default True): a frame or an
    #: event reaches its callable after the notifications received before
    #: it were handled and before the answer that follows it on the wire
    #: completes its future. False: as soon as the engine sees it (never
    #: waiting for a suspended notification handler), possibly after that
    #: answer.
    ordered_hooks: Optional[bool]


class _AgentSideOptions(TypedDict, total=False):
    #: Agent side: ``session/new|load|resume`` need ``authenticate`` first.
    require_auth: Optional[bool]


class _ClientSideOptions(TypedDict, total=False):
    #: Client side: fold ``session/update``s into ``session_snapshot()``.
    session_model: Optional[bool]
    #: Client side: answer ``fs/*`` in the core, inside each session's cwd.
    fs: Optional[bool]
    #: Client side: answer ``terminal/*`` in the core with real processes
    #: (advertises the ``terminal`` capability).
    terminals: Optional[bool]


class _StreamOptions(TypedDict, total=False):
    #: ``"ndjson"`` (default) or ``"content-length"``.
    framing: Optional[Literal["ndjson", "content-length"]]


class ConnectionOptions(
    CommonOptions, _StreamOptions, _AgentSideOptions, _ClientSideOptions, total=False
):
    """The keyword options of a connection over a byte stream (stdio,
    descriptors, sockets): :class:`CommonOptions`, ``framing``,
    ``require_auth`` (agent) and ``session_model``, ``fs``, ``terminals``
    (client)."""


class SpawnOptions(CommonOptions, _StreamOptions, _ClientSideOptions, total=False):
    """The keyword options of a client spawning its agent: those of a
    client's :class:`ConnectionOptions` and the process's."""

    #: The agent's working directory (default this process's).
    cwd: Optional[StrPath]
    #: Environment variables (a dict or ``(name, value)`` pairs), added to
    #: this process's unless ``clear_env``.
    env: Optional[Env]
    #: Start the agent with only ``env``.
    clear_env: Optional[bool]
    #: On close, how long the agent gets to exit after its stdin is closed,
    #: before SIGTERM, in milliseconds (default 2000).
    grace_after_stdin_close_ms: Optional[float]
    #: On close, how long the agent gets to exit after SIGTERM, before
    #: SIGKILL, in milliseconds (default 2000).
    grace_after_sigterm_ms: Optional[float]
    #: ``callable(line)`` for each line of the agent's stderr (on an engine
    #: thread; default: this process's stderr).
    stderr: Optional[Callable[[str], Any]]


class RemoteOptions(CommonOptions, _ClientSideOptions, total=False):
    """The keyword options of a client connecting to a remote agent by URL:
    :class:`CommonOptions`, the client side's (``session_model``, ``fs``,
    ``terminals``) and the remote transport's."""

    #: Extra HTTP headers sent on the handshake and every request (a dict
    #: or ``(name, value)`` pairs), for example ``Authorization``.
    headers: Optional[Env]
    #: A PEM file of CA certificates trusted beside the platform's roots.
    ca_file: Optional[StrPath]
    #: Name resolution and TCP connect, in milliseconds (default 10000).
    connect_timeout_ms: Optional[float]
    #: TLS and the HTTP or WebSocket handshake, in milliseconds (default 10000).
    handshake_timeout_ms: Optional[float]
    #: For ``http(s)://`` URLs: try a WebSocket upgrade first, fall back to
    #: Streamable HTTP.
    prefer_websocket: Optional[bool]
    #: Speak HTTP/2 without TLS (h2c) on ``http://``.
    http2_prior_knowledge: Optional[bool]
    #: WebSocket pings, in milliseconds (default 20000); a server that
    #: answers none for twice this long is taken as gone.
    keepalive_interval_ms: Optional[float]
    #: Largest WebSocket message or event accepted, in bytes (default 64 MiB).
    max_message_size: Optional[int]
    #: Messages queued per direction between the network and the engine
    #: (default 1024).
    queue: Optional[int]


class ServerOptions(CommonOptions, _AgentSideOptions, total=False):
    """The keyword options of :func:`libacp.serve`: the server's, and
    :class:`CommonOptions` and ``require_auth`` for each agent connection
    it makes."""

    #: The endpoint's path (default ``"/acp"``).
    path: Optional[str]
    #: A PEM certificate chain; with ``tls_key`` the server speaks TLS only.
    tls_cert: Optional[StrPath]
    #: The PEM private key of ``tls_cert``.
    tls_key: Optional[StrPath]
    #: ``Origin`` values allowed (``"*"`` for any); requests without an
    #: ``Origin`` are always allowed (default: browsers refused).
    allowed_origins: Optional[Sequence[str]]
    #: Tokens accepted in ``Authorization: Bearer``; when set, other
    #: requests get 401 before any agent code runs.
    bearer_tokens: Optional[Sequence[str]]
    #: Remote connections served at once; one more gets 503 (default 4096).
    max_connections: Optional[int]
    #: A connection from which nothing arrived for this long is closed, in
    #: milliseconds (default 60000).
    idle_timeout_ms: Optional[float]
    #: On shutdown, how long connections with requests in flight get to
    #: answer them, in milliseconds (default 10000).
    shutdown_grace_ms: Optional[float]
    #: Serve WebSocket upgrades (default True).
    websocket: Optional[bool]
    #: Serve Streamable HTTP (default True).
    streamable_http: Optional[bool]
    #: WebSocket pings and SSE keep-alive comments, in milliseconds
    #: (default 20000).
    keepalive_interval_ms: Optional[float]
    #: Largest WebSocket message, POST body or event accepted, in bytes
    #: (default 64 MiB; a server answers 413).
    max_message_size: Optional[int]
    #: Messages queued per direction (and per event stream) between the
    #: network and the engine (default 1024).
    queue: Optional[int]


# True while a notification handler runs (in its task's context): requests
# made there get their results directly rather than through the ordered
# inbox, which is waiting for that very handler (the core's barrier makes
# the same exception for them).
_IN_NOTIFICATION: "contextvars.ContextVar[bool]" = contextvars.ContextVar(
    "libacp_in_notification", default=False
)


class Request:
    """An incoming request, as the handler's ``on_request`` sees it.

    ``id`` is the id the peer chose. ``cancelled`` turns True when the peer
    cancels it (``$/cancel_request``, or ``session/cancel`` for a prompt);
    ``await wait_cancelled()`` waits for that. When the answer is no longer
    the handler's to give (the engine answered ``-32800`` for it, a client's
    ``cancel_session`` answered a permission request, or the connection
    closed), the handler's task is cancelled as well.
    """

    def __init__(
        self,
        method: str,
        params: Any,
        responder: "_libacp.RequestResponder",
        loop: asyncio.AbstractEventLoop,
        connection: Callable[[], Optional["Connection"]],
    ) -> None:
        self.method = method
        self.params = params
        self._responder = responder
        self._loop = loop
        self._connection = connection
        self._cancelled = False
        self._cancel_event: Optional[asyncio.Event] = None  # made when awaited
        self._superseded = False
        self._task: Optional[asyncio.Task[None]] = None

    @property
    def id(self) -> Union[int, str, float, None]:
        """The request's id as the peer sent it (usually an int or a str)."""
        return self._responder.id

    @property
    def cancelled(self) -> bool:
        """Whether the peer cancelled this request."""
        return self._cancelled

    async def wait_cancelled(self) -> None:
        """Returns once the peer cancelled this request."""
        if self._cancelled:
            return
        if self._cancel_event is None:
            self._cancel_event = asyncio.Event()
        await self._cancel_event.wait()

    @property
    def connection(self) -> Optional["Connection"]:
        """The connection the request came on (for nested requests)."""
        return self._connection()

    def __repr__(self) -> str:
        return f"<libacp.Request {self.method} id={self.id!r}>"

    # -- on the loop (the dispatcher calls these from the inbox's signals)

    def _on_cancel(self) -> None:
        self._cancelled = True
        if self._cancel_event is not None:
            self._cancel_event.set()

    def _on_superseded(self) -> None:
        self._on_cancel()
        self._superseded = True
        if self._task is not None:
            self._task.cancel()

    def _start(self, handler: Any, done: Callable[[], Any]) -> None:
        # Inline up to the handler's first suspension (most answer at once);
        # a task of its own from there, so requests run concurrently.
        steps = _Steps(self._run(handler, done), contextvars.copy_context())
        if not steps.start():
            self._task = self._loop.create_task(_finish(steps))

    async def _run(self, handler: Any, done: Callable[[], Any]) -> None:
        # Every answer other than the handler's own result or RequestError
        # is the core's (RpcError's constructors), through the responder. A
        # RequestError that escapes the handler is answered unchanged (code,
        # message, data): MethodNotFound(method) carries the core's -32601
        # for its method, and a nested call's error that the handler did not
        # catch keeps the peer's code, message and data.
        responder = self._responder
        fn = getattr(handler, "on_request", None)
        if fn is None:
            responder.respond_method_not_found()
            done()
            return
        try:
            result = fn(self.method, self.params, self)
            if type(result) is types.CoroutineType or (
                result is not None and inspect.isawaitable(result)
            ):
                result = await result
        except RequestError as e:
            try:
                responder.respond_error(e.code, e.message, e.data)
            except (InvalidParams, TypeError, OverflowError) as bad:
                # Not JSON data (already answered -32603) or a bad code.
                log.error(
                    "libacp: handler for %s raised an unusable RequestError: %s", self.method, bad
                )
                responder.respond_internal_error(f"unusable RequestError: {bad}")
        except asyncio.CancelledError:
            if not self._superseded:
                responder.respond_cancelled()
            raise
        except Exception as e:  # noqa: BLE001 - any handler failure answers -32603
            log.exception("libacp: handler for %s raised", self.method)
            responder.respond_internal_error(f"{type(e).__name__}: {e}")
        else:
            try:
                responder.respond(result)
            except InvalidParams:  # answered -32603 by the core
                log.exception("libacp: handler for %s returned a non-JSON result", self.method)
        finally:
            done()  # the dispatcher forgets this request (no more signals)


class _Steps:
    """Runs a coroutine step by step in its own context (``ctx``), starting
    at once: :meth:`start` runs the first step (up to the first suspension);
    if it suspended, awaiting the object carries on from there, the
    enclosing task waiting on what the coroutine waits on (what ``yield
    from`` does). Handlers that never suspend then cost no task of their
    own; each still sees its own copy of the context variables, as in a
    task of its own."""

    __slots__ = ("_coro", "_ctx", "_first")

    def __init__(self, coro: Coroutine[Any, Any, Any], ctx: contextvars.Context) -> None:
        self._coro = coro
        self._ctx = ctx
        self._first: Any = None

    def start(self) -> bool:
        """Runs the first step; True if the coroutine finished (exceptions
        it raised propagate)."""
        try:
            self._first = self._ctx.run(self._coro.send, None)
        except StopIteration:
            return True
        return False

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, ctx, value = self._coro, self._ctx, self._first
        try:
            while True:
                try:
                    sent = yield value
                except GeneratorExit:
                    coro.close()
                    raise
                except BaseException as e:  # noqa: BLE001 - forwarded, like yield from
                    value = ctx.run(coro.throw, e)
                else:
                    value = ctx.run(coro.send, sent)
        except StopIteration as stop:
            return stop.value


async def _finish(steps: _Steps) -> None:
    await steps


class _Logged:
    """A suspended notification handler: awaiting it finishes the handler
    and logs what it raises (a notification has no one to answer)."""

    __slots__ = ("awaitable", "method")

    def __init__(self, awaitable: Awaitable[Any], method: str) -> None:
        self.awaitable = awaitable
        self.method = method

    def __await__(self) -> Generator[Any, Any, None]:
        try:
            yield from self.awaitable.__await__()
        except Exception:  # noqa: BLE001
            log.exception("libacp: notification handler for %s raised", self.method)


# Whether a loop can watch descriptors (`add_reader`), per loop.
_WATCHES_FDS: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, bool]" = (
    weakref.WeakKeyDictionary()
)


def _reads_on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether connections made on ``loop`` read their transport on the
    loop itself (``add_reader``): every selector loop on Unix, uvloop too.
    ``LIBACP_PYTHON_DRIVE_READS=0`` makes the engine's own thread read
    instead (a diagnostic switch; the tests run both ways)."""
    if os.environ.get("LIBACP_PYTHON_DRIVE_READS", "1") == "0":
        return False
    watches = _WATCHES_FDS.get(loop)
    if watches is None:
        r, w = os.pipe()
        try:
            loop.add_reader(r, lambda: None)
            loop.remove_reader(r)
            watches = True
        except (NotImplementedError, AttributeError, OSError, RuntimeError):
            watches = False
        finally:
            os.close(r)
            os.close(w)
        _WATCHES_FDS[loop] = watches
    return watches


class _Dispatcher:
    """Hands what the peer sends to the host's handler, on the loop, in the
    order the core dispatched it.

    The core queues deliveries in its inbox (``dispatcher.inbox``, see
    ``bindings/python/src/inbox.rs``) and calls ``_wake()`` from any thread
    when a batch starts. On the loop, ``_on_wake`` takes the urgent lane at
    once (calls that skip the barrier, requests' cancellations) and starts
    the drain of the ordered lane, which runs each notification handler to
    completion before the next item (inline; awaiting it only if it
    suspends), starts each request's handler (inline up to its first
    suspension, then in a task of its own) and completes each call's
    future. That keeps the core's ordering barrier on the loop with one
    wake-up per batch.

    When the loop can watch descriptors, the dispatcher also watches the
    transport (``add_reader``) and pumps the core's reader on the loop:
    reading, dispatching and answering then never leave the loop's thread.
    """

    inbox: "_libacp.NativeInbox"  # set by the native constructors

    def __init__(self, handler: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.handler = handler
        self.loop = loop
        self.connection: Callable[[], Optional[Connection]] = lambda: None
        self.on_notification: Optional[Callable[..., Any]] = getattr(
            handler, "on_notification", None
        )
        self.drive_reads = _reads_on_loop(loop)
        #: The trace and events callables (set by ``_native_options``).
        self.hooks = _Hooks()
        self._draining = False
        self._reader_fd: Optional[int] = None
        self._watching = False
        # Requests whose handlers run, by their inbox key (for signals).
        self._requests: Dict[int, Request] = {}

    # -- on an engine thread, or any thread (GIL held)

    def _wake(self) -> None:
        try:
            self.loop.call_soon_threadsafe(self._on_wake)
        except RuntimeError:  # the loop is closed: nobody will take items
            pass

    # -- on the loop

    def _start_reading(self) -> None:
        """Starts watching the transport, if the loop reads it."""
        self._reader_fd = self.inbox.reader_fd()
        if self._reader_fd is not None:
            self._pump()

    def _on_wake(self) -> None:
        if self.inbox.take_pump_request():
            self._pump()
        self._take_urgent()
        self._start_drain()

    def _pump(self) -> None:
        state, urgent, ordered = self.inbox.pump()
        if state == 0:  # reading: wait until the descriptor is readable
            self._watch(True)
        elif state == 1:  # more is buffered: again, after other work
            self._watch(True)
            self.loop.call_soon(self._pump)
        elif state == 2:  # waiting for room: woken when there is some
            self._watch(False)
        else:  # finished
            self._watch(False)
            self._reader_fd = None
            self.inbox.release_reader()
        if urgent:
            self._take_urgent()
        if ordered:
            self._start_drain()

    def _watch(self, on: bool) -> None:
        if on == self._watching or self._reader_fd is None:
            return
        if on:
            self.loop.add_reader(self._reader_fd, self._pump)
        else:
            self.loop.remove_reader(self._reader_fd)
        self._watching = on

    def _take_urgent(self) -> None:
        for item in self.inbox.take_urgent():
            if item[0] == 2:
                _complete(item[1], item[2], item[3])
            elif item[0] == 3:
                req = self._requests.get(item[1])
                if req is not None:
                    if item[2]:
                        req._on_cancel()
                    else:
                        req._on_superseded()
            elif item[0] >= 6:
                self._hook(item)

    def _start_drain(self) -> None:
        """Drains the ordered lane now, on the loop: synchronously while
        every handler finishes without suspending (the common case costs no
        task and no coroutine); from the first notification handler that
        suspends, the rest continues in a task that awaits it first."""
        if self._draining:
            return  # a drain runs (or waits in a handler): it takes them
        self._draining = True
        try:
            rest = self._drain_now()
        except BaseException:
            self._draining = False
            raise
        if rest is None:
            self._draining = False
        else:
            self.loop.create_task(self._drain_after(*rest))

    def _drain_now(self) -> "Optional[Tuple[_Logged, List[Any]]]":
        """Handles ordered items until the lane is empty (None) or a
        notification handler suspends: then returns what it waits on and the
        items of the batch still to handle."""
        take = self.inbox.take_ordered
        while True:
            items = take()
            if items is None:
                return None  # empty: the next push wakes the loop again
            for i, item in enumerate(items):
                kind = item[0]
                if kind == 0:
                    waiting = self._notification(item[1], item[2])
                    if waiting is not None:
                        return waiting, items[i + 1 :]
                elif kind == 1:
                    self._request(item[1], item[2], item[3])
                elif kind == 2:
                    _complete(item[1], item[2], item[3])
                elif kind >= 6:
                    self._hook(item)

    async def _drain_after(self, waiting: "_Logged", items: List[Any]) -> None:
        """The drain, continued after a notification handler suspended."""
        try:
            while True:
                await waiting
                for i, item in enumerate(items):
                    kind = item[0]
                    if kind == 0:
                        suspended = self._notification(item[1], item[2])
                        if suspended is not None:
                            waiting, items = suspended, items[i + 1 :]
                            break
                    elif kind == 1:
                        self._request(item[1], item[2], item[3])
                    elif kind == 2:
                        _complete(item[1], item[2], item[3])
                    elif kind >= 6:
                        self._hook(item)
                else:
                    rest = self._drain_now()
                    if rest is None:
                        return
                    waiting, items = rest
        finally:
            self._draining = False

    def _hook(self, item: Any) -> None:
        """A traced frame ``(6, direction, frame)`` or an engine event
        ``(7, kind, message, details)``, to the host's callable; what it
        raises is logged."""
        if item[0] == 6:
            trace = self.hooks.trace
            if trace is not None:
                try:
                    trace(item[1], item[2])
                except Exception:  # noqa: BLE001 - nobody to report to but the log
                    log.exception("libacp: trace hook raised")
        elif item[0] == 7:
            events = self.hooks.events
            if events is not None:
                _run_event_hook(events, Event(item[1], item[2], item[3]), self.loop)

    def _notification(self, method: str, params: Any) -> "Optional[_Logged]":
        """Runs the host's notification handler in its own context (where
        requests it makes skip the ordered inbox), up to its first
        suspension; returns what it still waits on, or None when done."""
        fn = self.on_notification
        if fn is None:
            return None
        ctx = contextvars.copy_context()
        ctx.run(_IN_NOTIFICATION.set, True)
        try:
            result = ctx.run(fn, method, params)
            if result is None:
                return None
            if type(result) is types.CoroutineType:
                steps = _Steps(result, ctx)
                return None if steps.start() else _Logged(steps, method)
            if inspect.isawaitable(result):
                return _Logged(result, method)
        except Exception:  # noqa: BLE001 - a notification has no one to answer
            log.exception("libacp: notification handler for %s raised", method)
        return None

    def _request(self, method: str, params: Any, responder: "_libacp.RequestResponder") -> None:
        req = Request(method, params, responder, self.loop, self.connection)
        cancelled, superseded = responder.arm()
        if superseded:  # already answered by the core (or closed): no handler
            return
        key = responder.key
        self._requests[key] = req
        if cancelled:
            req._on_cancel()
        req._start(self.handler, lambda: self._requests.pop(key, None))


def _run_event_hook(
    hook: Callable[[Event], Any], event: Event, loop: asyncio.AbstractEventLoop
) -> None:
    try:
        result = hook(event)
        if inspect.isawaitable(result):
            loop.create_task(_await_event_hook(result, event))
    except Exception:  # noqa: BLE001 - nobody to report to but the log
        log.exception("libacp: events hook raised on %s", event.kind)


async def _await_event_hook(result: Any, event: Event) -> None:
    try:
        await result
    except Exception:  # noqa: BLE001
        log.exception("libacp: events hook raised on %s", event.kind)


def _complete(future: "asyncio.Future[Any]", ok: bool, value: Any) -> None:
    if not future.done():  # not cancelled meanwhile
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)


def _log_frame(direction: str, frame: str) -> None:
    wire_log.debug("%s %s", direction, frame)


class _Hooks(NamedTuple):
    """The ``trace`` and ``events`` callables of a connection (or of a
    server, for each of its connections), called by its dispatcher on the
    loop."""

    trace: Optional[Callable[[str, str], Any]] = None
    events: Optional[Callable[[Event], Any]] = None


def _native_options(options: Mapping[str, Any], holder: Any) -> Dict[str, Any]:
    """``options`` for the native constructors: ``trace`` and ``events``
    checked and kept as ``holder.hooks`` (a dispatcher, or a server for its
    connections' dispatchers), the native side told only whether they are
    set; everything else is checked by the core's option table."""
    out = dict(options)
    trace = out.get("trace")
    if trace is True or trace == "logging":
        trace = _log_frame
    elif trace is False:
        trace = None
    elif isinstance(trace, str):
        raise ValueError(f'trace must be a callable, True or "logging", not {trace!r}')
    elif trace is not None and not callable(trace):
        raise TypeError(f'trace must be a callable, True or "logging", not {type(trace).__name__}')
    events = out.get("events")
    if events is not None and not callable(events):
        raise TypeError(f"events must be callable, not {type(events).__name__}")
    holder.hooks = _Hooks(trace, events)
    for name, hook in (("trace", trace), ("events", events)):
        if name in out:
            out[name] = True if hook is not None else None
    return out


def _running_loop() -> asyncio.AbstractEventLoop:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(
            "libacp connections are made from a running asyncio event loop "
            "(inside `async def`, for example under asyncio.run)"
        ) from None


class RemoteInfo(NamedTuple):
    """How the client of a connection :func:`libacp.serve` accepted came
    (:attr:`Connection.remote`)."""

    #: ``"websocket"`` or ``"http"`` (Streamable HTTP): the core's names.
    kind: str
    #: The connection's ``Acp-Connection-Id``.
    connection_id: str
    #: The client's address, ``(host, port)``.
    remote_address: Tuple[str, int]


class Connection:
    """An ACP connection in one role (``"client"`` or ``"agent"``).

    Make one with :meth:`spawn_agent` (client), :meth:`from_stdio` (agent),
    :meth:`from_socket` or :meth:`from_fds` (either role), from a running
    event loop. ``handler`` is any object with optional
    ``async def on_request(method, params, request)`` (return the result,
    raise :class:`RequestError` to answer with an error) and
    ``async def on_notification(method, params)``.

    Remotely: ``await Connection.connect(url, handler)`` (client) and
    :func:`libacp.serve` (agents, one connection per remote client).

    The keyword options are the core's option table's (the same names and
    units in every libacp binding): :class:`ConnectionOptions` for byte
    streams (``framing``, ``max_frame_size``, ``request_timeout_ms``,
    ``flush_timeout_ms``, ``outgoing_queue``, ``incoming_queue``,
    ``incoming_requests``, ``trace``, ``events``, ``ordered_hooks``, ``require_auth`` (agent),
    ``session_model``, ``fs``, ``terminals`` (client)),
    :class:`SpawnOptions` to spawn an agent, :class:`RemoteOptions` to
    connect by URL.
    """

    #: For a connection :func:`libacp.serve` accepted: how its client came
    #: (kind, connection id, address); ``None`` for every other connection.
    remote: Optional[RemoteInfo] = None

    def __init__(self, native: "_libacp.NativeConnection", dispatcher: _Dispatcher) -> None:
        self._native = native
        self._dispatcher = dispatcher
        dispatcher.connection = weakref.ref(self)
        dispatcher._start_reading()

    # -- making connections

    @classmethod
    def spawn_agent(
        cls,
        argv: Sequence[StrPath],
        handler: Any = None,
        **options: "Unpack[SpawnOptions]",
    ) -> "Connection":
        """Client side: starts ``argv`` (in its own process group) and talks
        ACP over its stdio. ``env`` adds to the inherited environment, or
        makes the whole environment with ``clear_env=True``; ``stderr`` gets
        each line the agent writes to its stderr (on an engine thread).
        On close the agent's stdin is closed, then it gets
        ``grace_after_stdin_close_ms`` to exit before SIGTERM and
        ``grace_after_sigterm_ms`` before SIGKILL (2000 each by default).
        Raises :class:`SpawnError` if the command cannot start."""
        dispatcher = _Dispatcher(handler, _running_loop())
        native = _libacp.spawn_agent(
            [os.fspath(a) for a in argv],
            dispatcher,
            drive_reads=dispatcher.drive_reads,
            **_native_options(options, dispatcher),
        )
        return cls(native, dispatcher)

    @classmethod
    async def connect(
        cls, url: str, handler: Any = None, **options: "Unpack[RemoteOptions]"
    ) -> "Connection":
        """Client side: connects to a remote agent at ``url`` (``ws://`` or
        ``wss://``: WebSocket; ``http://`` or ``https://``: Streamable
        HTTP, or WebSocket first with ``prefer_websocket=True``). Raises
        :class:`RemoteError` when it cannot (``.kind``: ``"refused"``,
        ``"unauthorized"``, ...; over Streamable HTTP a refusal may only
        show on ``initialize``, which then fails with it). Bad options raise
        ``TypeError``/``ValueError`` before anything is tried."""
        dispatcher = _Dispatcher(handler, _running_loop())
        native = await _libacp.connect(url, dispatcher, **_native_options(options, dispatcher))
        return cls(native, dispatcher)

    @classmethod
    def _accept(
        cls, incoming: "_libacp.NativeIncoming", handler: Any, hooks: _Hooks
    ) -> "Connection":
        """Agent side of a remote connection a server accepted (on the
        server's loop): starts it with ``handler`` (the server's options
        and ``hooks``)."""
        dispatcher = _Dispatcher(handler, _running_loop())
        dispatcher.hooks = hooks
        conn = cls(incoming.start(dispatcher), dispatcher)
        conn.remote = RemoteInfo(incoming.kind, incoming.connection_id, incoming.remote_address)
        return conn

    @classmethod
    def from_stdio(
        cls, handler: Any = None, **options: "Unpack[ConnectionOptions]"
    ) -> "Connection":
        """Agent side: serves on this process's stdin and stdout. Write
        nothing else to stdout afterwards (log to stderr)."""
        dispatcher = _Dispatcher(handler, _running_loop())
        native = _libacp.serve_stdio(
            dispatcher,
            drive_reads=dispatcher.drive_reads,
            **_native_options(options, dispatcher),
        )
        return cls(native, dispatcher)

    @classmethod
    def from_fds(
        cls,
        read_fd: int,
        write_fd: int,
        handler: Any = None,
        *,
        role: str,
        **options: "Unpack[ConnectionOptions]",
    ) -> "Connection":
        """Either role over descriptors it takes ownership of (closes them):
        a read end and a write end (pipes, FIFOs, sockets, files), or one
        connected stream socket passed as both. Pipes and FIFOs are set
        non-blocking (do not share them); a socket's write side is shut down
        when the connection closes. Not taken over when the arguments are
        refused (``ValueError``: a descriptor that is not open, a pipe given
        twice, a datagram socket; ``TypeError``)."""
        dispatcher = _Dispatcher(handler, _running_loop())
        native = _libacp.from_fds(
            role,
            read_fd,
            write_fd,
            dispatcher,
            drive_reads=dispatcher.drive_reads,
            **_native_options(options, dispatcher),
        )
        return cls(native, dispatcher)

    @classmethod
    def from_socket(
        cls,
        sock: socket.socket,
        handler: Any = None,
        *,
        role: str,
        **options: "Unpack[ConnectionOptions]",
    ) -> "Connection":
        """Either role over a connected Unix socket; the connection takes it
        over (``sock`` is detached). When the arguments are refused
        (``ValueError``, ``TypeError``) the socket stays the caller's."""
        dispatcher = _Dispatcher(handler, _running_loop())
        native_options = _native_options(options, dispatcher)
        fd = sock.fileno()
        try:
            native = _libacp.from_fds(
                role, fd, fd, dispatcher, drive_reads=dispatcher.drive_reads, **native_options
            )
        except (ValueError, TypeError):
            raise  # refused before the native side took the descriptor
        except BaseException:
            sock.detach()  # taken over (and closed) by the native side
            raise
        sock.detach()
        return cls(native, dispatcher)

    # -- sending

    def request(
        self, method: str, params: Any = None, *, timeout: Optional[float] = None
    ) -> "asyncio.Future[Any]":
        """Sends a request now (requests and notifications leave in the order
        they are made) and returns a future of the peer's result (a JSON
        value): ``result = await conn.request(...)``. Cancelling the future
        (or the task awaiting it) abandons the call and sends
        ``$/cancel_request``. The future fails with
        :class:`RefusedError`/:class:`CapabilityError` (refused locally,
        nothing sent: failed already when returned), :class:`InvalidParams`,
        :class:`RequestError` (the peer's error), :class:`ConnectionClosed`
        or :class:`RequestTimeout`."""
        return self._native.request(method, params, timeout, not _IN_NOTIFICATION.get())

    async def notify(self, method: str, params: Any = None) -> None:
        """Sends a notification (waits only while the outgoing queue is full)."""
        pending = self._native.notify(method, params)
        if pending is not None:
            await pending

    async def cancel_session(self, session_id: str) -> None:
        """Client side: sends ``session/cancel``; the session's pending
        permission requests are answered ``cancelled`` (their handlers'
        tasks are cancelled)."""
        await self._native.cancel_session(session_id)

    # -- lifecycle

    async def close(self) -> None:
        """Closes the connection (idempotent): pending calls fail with
        :class:`ConnectionClosed`, handlers are cancelled, a spawned agent is
        shut down. Returns when all of that is done."""
        await self._native.close()

    async def closed(self) -> str:
        """Waits until the connection is closed; returns why."""
        return await self._native.closed()

    async def terminated(self) -> None:
        """Waits until closed, everything queued written and a spawned agent
        gone (what an agent process awaits before it exits)."""
        await self._native.terminated()

    async def wait_exit(self) -> ExitStatus:
        """Waits for the spawned agent to exit (it is not asked to: see
        :meth:`close`) and returns how it ended. ``RuntimeError`` if this
        connection did not spawn an agent."""
        code, signal = await self._native.wait_exit()
        return ExitStatus(code, signal)

    async def __aenter__(self) -> "Connection":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- state

    @property
    def role(self) -> str:
        """``"client"`` or ``"agent"``."""
        return self._native.role

    @property
    def close_reason(self) -> Optional[str]:
        """Why the connection closed, or None while it is open."""
        return self._native.close_reason

    @property
    def protocol_version(self) -> Optional[int]:
        """The negotiated protocol version, once initialized."""
        return self._native.protocol_version

    @property
    def pid(self) -> Optional[int]:
        """The spawned agent's process id (client side)."""
        return self._native.pid

    @property
    def exit_status(self) -> Optional[ExitStatus]:
        """How the spawned agent ended, or None while it runs (or when no
        agent was spawned)."""
        status = self._native.exit_status
        return ExitStatus(*status) if status is not None else None

    def peer_capabilities(self) -> Dict[str, Any]:
        """The capabilities the peer advertised (``{}`` before ``initialize``)."""
        caps: Dict[str, Any] = self._native.peer_capabilities()
        return caps

    def sessions(self) -> List[str]:
        """Ids of the sessions open on this connection."""
        return self._native.sessions()

    def session_snapshot(self, session_id: str) -> Optional[Dict[str, Any]]:
        """Client side with ``session_model=True``: the core's model of the
        session (conversation entries, tool calls, plan, mode, commands,
        config options, usage, ...) as a dict, or None for a session it has
        not seen. ``RuntimeError`` if the session model is off."""
        return self._native.session_snapshot(session_id)

    def __repr__(self) -> str:
        return f"<libacp.Connection role={self.role} closed={self.close_reason!r}>"
