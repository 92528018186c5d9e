"""libacp: the Agent Client Protocol for asyncio, on the libacp Rust engine.

This is the dynamic API: method names and JSON values (dicts, lists, str,
int, float, bool, None) in and out. Every protocol rule (phases,
capabilities, sessions, ordering, cancellation) is enforced by the Rust
core; this package only moves values and work between the core's threads
and your asyncio event loop.

Threads: handlers run on the event loop that was running when the
connection was made. The GIL is released while Rust works. The ``trace``
and ``stderr`` hooks are the exception: they are called on the engine's
threads (keep them quick; ``logging`` is fine).
"""

import asyncio
import inspect
import logging
import os
import socket
import weakref
from typing import Any, Callable, Optional, Sequence, Tuple, Union

from . import _libacp
from ._errors import (
    AcpError,
    Cancelled,
    CapabilityError,
    ConnectionClosed,
    InvalidParams,
    InvalidResult,
    RefusedError,
    RequestError,
    RequestTimeout,
    SpawnError,
)

__all__ = [
    "AcpError",
    "Cancelled",
    "CapabilityError",
    "Connection",
    "ConnectionClosed",
    "InvalidParams",
    "InvalidResult",
    "RefusedError",
    "Request",
    "RequestError",
    "RequestTimeout",
    "SpawnError",
]

__version__ = _libacp.__version__

log = logging.getLogger("libacp")

METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800


class Request:
    """An incoming request, as the handler's ``on_request`` sees it.

    ``cancelled`` turns True when the peer cancels it (``$/cancel_request``,
    or ``session/cancel`` for a prompt); ``await wait_cancelled()`` waits for
    that. When the answer is no longer the handler's to give (the engine
    answered ``-32800`` for it, a client's ``cancel_session`` answered a
    permission request, or the connection closed), the handler's task is
    cancelled as well.
    """

    def __init__(self, method: str, params: Any, responder: Any,
                 loop: asyncio.AbstractEventLoop, connection: Any) -> None:
        self.method = method
        self.params = params
        self._responder = responder
        self._loop = loop
        self._connection = connection
        self._cancelled = False
        self._cancel_event = asyncio.Event()
        self._superseded = False
        self._task: Optional["asyncio.Task[Any]"] = None

    @property
    def cancelled(self) -> bool:
        """Whether the peer cancelled this request."""
        return self._cancelled

    async def wait_cancelled(self) -> None:
        """Returns once the peer cancelled this request."""
        await self._cancel_event.wait()

    @property
    def connection(self) -> Optional["Connection"]:
        """The connection the request came on (for nested requests)."""
        return self._connection()

    # -- called by the native module on an engine thread (GIL held)

    def _native_cancel_requested(self) -> None:
        self._threadsafe(self._on_cancel)

    def _native_superseded(self) -> None:
        self._threadsafe(self._on_superseded)

    def _threadsafe(self, fn: Callable[[], None]) -> None:
        try:
            self._loop.call_soon_threadsafe(fn)
        except RuntimeError:  # the loop is closed
            pass

    # -- on the loop

    def _on_cancel(self) -> None:
        self._cancelled = True
        self._cancel_event.set()

    def _on_superseded(self) -> None:
        self._on_cancel()
        self._superseded = True
        if self._task is not None:
            self._task.cancel()

    def _start(self, handler: Any) -> None:
        self._task = self._loop.create_task(self._run(handler))

    async def _run(self, handler: Any) -> None:
        responder = self._responder
        fn = getattr(handler, "on_request", None)
        if fn is None:
            responder.respond_error(METHOD_NOT_FOUND, "Method not found",
                                    {"method": self.method})
            return
        try:
            result = fn(self.method, self.params, self)
            if inspect.isawaitable(result):
                result = await result
        except RequestError as e:
            _respond_error(responder, e.code, e.message, e.data)
        except asyncio.CancelledError:
            if not self._superseded:
                responder.respond_error(REQUEST_CANCELLED, "Request cancelled")
            raise
        except Exception as e:  # noqa: BLE001 - any handler failure answers -32603
            log.exception("libacp: handler for %s raised", self.method)
            responder.respond_error(INTERNAL_ERROR, "Internal error",
                                    f"{type(e).__name__}: {e}")
        else:
            try:
                responder.respond(result)
            except InvalidParams:
                log.exception("libacp: handler for %s returned a non-JSON result",
                              self.method)


def _respond_error(responder: Any, code: int, message: str, data: Any) -> None:
    try:
        responder.respond_error(code, message, data)
    except InvalidParams as e:
        responder.respond_error(INTERNAL_ERROR, "Internal error",
                                f"error data is not JSON: {e.detail}")


class _Dispatcher:
    """What the native module calls (on an engine thread, GIL held) for
    what the peer sends. It only schedules work on the loop."""

    def __init__(self, handler: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.handler = handler
        self.loop = loop
        self.connection: Callable[[], Optional[Connection]] = lambda: None

    def request(self, method: str, params: Any, responder: Any) -> Request:
        req = Request(method, params, responder, self.loop, self.connection)
        try:
            self.loop.call_soon_threadsafe(req._start, self.handler)
        except RuntimeError:  # the loop is closed
            responder.respond_error(INTERNAL_ERROR, "Internal error",
                                    "the host's event loop is closed")
        return req

    def notification(self, method: str, params: Any, done: Callable[[], None]) -> None:
        fn = getattr(self.handler, "on_notification", None)
        if fn is None:
            done()
            return
        try:
            self.loop.call_soon_threadsafe(self._start_notification, fn, method,
                                           params, done)
        except RuntimeError:  # the loop is closed
            done()

    def _start_notification(self, fn: Any, method: str, params: Any,
                            done: Callable[[], None]) -> None:
        self.loop.create_task(self._run_notification(fn, method, params, done))

    async def _run_notification(self, fn: Any, method: str, params: Any,
                                done: Callable[[], None]) -> None:
        try:
            result = fn(method, params)
            if inspect.isawaitable(result):
                await result
        except Exception:  # noqa: BLE001 - a notification has no one to answer
            log.exception("libacp: notification handler for %s raised", method)
        finally:
            done()  # releases the core's ordering barrier


def _running_loop() -> asyncio.AbstractEventLoop:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(
            "libacp connections are made from a running asyncio event loop "
            "(inside `async def`, for example under asyncio.run)") from None


Env = Union[dict, Sequence[Tuple[str, str]]]


class Connection:
    """An ACP connection in one role (``"client"`` or ``"agent"``).

    Make one with :meth:`spawn_agent` (client), :meth:`from_stdio` (agent),
    :meth:`from_socket` or :meth:`from_fds` (either role), from a running
    event loop. ``handler`` is any object with optional
    ``async def on_request(method, params, request)`` (return the result,
    raise :class:`RequestError` to answer with an error) and
    ``async def on_notification(method, params)``.

    Common options: ``framing`` (``"ndjson"`` or ``"content-length"``),
    ``max_frame_size`` (bytes), ``request_timeout`` (seconds, every call),
    ``trace`` (``callable(direction, frame)``, direction ``"in"``/``"out"``,
    called on an engine thread).
    """

    def __init__(self, native: Any, dispatcher: _Dispatcher) -> None:
        self._native = native
        self._dispatcher = dispatcher
        dispatcher.connection = weakref.ref(self)

    # -- making connections

    @classmethod
    def spawn_agent(cls, argv: Sequence[str], handler: Any = None, *,
                    cwd: Optional[Union[str, os.PathLike]] = None,
                    env: Optional[Env] = None,
                    stderr: Optional[Callable[[str], None]] = None,
                    **options: Any) -> "Connection":
        """Client side: starts ``argv`` and talks ACP over its stdio. ``env``
        adds to the inherited environment; ``stderr`` gets each line the
        agent writes to its stderr (on an engine thread). Raises
        :class:`SpawnError` if the command cannot start."""
        dispatcher = _Dispatcher(handler, _running_loop())
        env_items = list(env.items()) if isinstance(env, dict) else list(env or [])
        native = _libacp.spawn_agent(
            [os.fspath(a) for a in argv], dispatcher,
            cwd=os.fspath(cwd) if cwd is not None else None,
            env=[(str(k), str(v)) for k, v in env_items], stderr=stderr, **options)
        return cls(native, dispatcher)

    @classmethod
    def from_stdio(cls, handler: Any = None, **options: Any) -> "Connection":
        """Agent side: serves on this process's stdin and stdout. Write
        nothing else to stdout afterwards (log to stderr)."""
        dispatcher = _Dispatcher(handler, _running_loop())
        return cls(_libacp.serve_stdio(dispatcher, **options), dispatcher)

    @classmethod
    def from_fds(cls, read_fd: int, write_fd: int, handler: Any = None, *,
                 role: str, **options: Any) -> "Connection":
        """Either role over descriptors it takes ownership of (closes them):
        a read and a write pipe end, or one connected socket passed as both."""
        dispatcher = _Dispatcher(handler, _running_loop())
        native = _libacp.from_fds(role, read_fd, write_fd, dispatcher, **options)
        return cls(native, dispatcher)

    @classmethod
    def from_socket(cls, sock: socket.socket, handler: Any = None, *,
                    role: str, **options: Any) -> "Connection":
        """Either role over a connected Unix socket; the connection takes it
        over (``sock`` is detached)."""
        dispatcher = _Dispatcher(handler, _running_loop())
        fd = sock.detach()
        try:
            native = _libacp.from_fds(role, fd, fd, dispatcher, **options)
        except (ValueError, TypeError):
            os.close(fd)  # refused before the native side took it over
            raise
        return cls(native, dispatcher)

    # -- sending

    async def request(self, method: str, params: Any = None, *,
                      timeout: Optional[float] = None) -> Any:
        """Sends a request and returns the peer's result (a JSON value).
        Cancelling the awaiting task abandons the call and sends
        ``$/cancel_request``. Raises :class:`RequestError` (the peer's
        error), :class:`RefusedError`/:class:`CapabilityError` (refused
        locally, nothing sent), :class:`InvalidParams`,
        :class:`ConnectionClosed`, :class:`RequestTimeout`."""
        return await self._native.request(method, params, timeout)

    async def notify(self, method: str, params: Any = None) -> None:
        """Sends a notification (waits while the outgoing queue is full)."""
        await self._native.notify(method, params)

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

    async def __aenter__(self) -> "Connection":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    # -- state

    @property
    def role(self) -> str:
        return self._native.role

    @property
    def close_reason(self) -> Optional[str]:
        return self._native.close_reason

    @property
    def protocol_version(self) -> Optional[int]:
        return self._native.protocol_version

    @property
    def pid(self) -> Optional[int]:
        """The spawned agent's process id (client side)."""
        return self._native.pid

    def peer_capabilities(self) -> Any:
        return self._native.peer_capabilities()

    def sessions(self) -> list:
        return self._native.sessions()

    def __repr__(self) -> str:
        return f"<libacp.Connection role={self.role} closed={self.close_reason!r}>"


# The typed API (imported last: it builds on Connection and Request above).
from . import schema  # noqa: E402
from ._typed import (  # noqa: E402
    Agent,
    AgentConnection,
    Client,
    ClientConnection,
    MethodNotFound,
    current_request,
    run_agent,
)

__all__ += [
    "Agent",
    "AgentConnection",
    "Client",
    "ClientConnection",
    "MethodNotFound",
    "current_request",
    "run_agent",
    "schema",
]
