"""Typed stubs of ``libacp._libacp``, the native half of the binding
(``bindings/python/src/lib.rs``). Checked against the built module by
``python -m mypy.stubtest libacp._libacp`` in scripts/test-python.sh.

Private: the public API is ``libacp`` (``__init__.py``), which wraps it.
Awaitables are asyncio futures made on the running loop; cancelling one
abandons the native work (for a request: ``$/cancel_request``).
"""

import asyncio
from typing import (
    Any,
    Awaitable,
    Dict,
    List,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    Union,
    final,
)

__all__ = [
    "_mark_finalizing",
    "NativeConnection",
    "RequestResponder",
    "NativeInbox",
    "spawn_agent",
    "serve_stdio",
    "from_fds",
    "NativeServer",
    "NativeIncoming",
    "connect",
    "serve",
    "option_table",
    "method_not_found",
    "PARSE_ERROR",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "INVALID_PARAMS",
    "INTERNAL_ERROR",
    "REQUEST_CANCELLED",
    "AUTH_REQUIRED",
    "RESOURCE_NOT_FOUND",
    "__version__",
]

__version__: str

PARSE_ERROR: int
INVALID_REQUEST: int
METHOD_NOT_FOUND: int
INVALID_PARAMS: int
INTERNAL_ERROR: int
REQUEST_CANCELLED: int
AUTH_REQUIRED: int
RESOURCE_NOT_FOUND: int

_ExitPair = Tuple[Optional[int], Optional[int]]

class _Dispatcher(Protocol):
    """``libacp._Dispatcher``: the constructors set its ``inbox``; the core
    calls ``_wake()`` (from any thread, GIL held) when a batch is waiting
    in it or its reader wants a pump."""

    inbox: NativeInbox
    def _wake(self) -> None: ...

# What NativeInbox.take_urgent() and take_ordered() return, in dispatch
# order: (0, method, params) for a notification, (1, method, params,
# responder) for a request, (2, future, ok, value) for a call's outcome
# (value: the result, or the exception when not ok), (3, key, cancelled) for
# a request's signal (cancelled False: superseded), (4, reason) for the
# close (last).
_Item = Tuple[Any, ...]

@final
class NativeInbox:
    """The core's inbox and host reader, as the dispatcher takes them
    (``bindings/python/src/inbox.rs``)."""

    def take_urgent(self) -> List[_Item]: ...
    def take_ordered(self, max: int = 64) -> Optional[List[_Item]]: ...
    def reader_fd(self) -> Optional[int]: ...
    def take_pump_request(self) -> bool: ...
    def pump(self) -> Tuple[int, bool, bool]: ...
    def release_reader(self) -> None: ...
    def __len__(self) -> int: ...

@final
class RequestResponder:
    """Answers one incoming request; dropped unanswered, the core answers
    ``-32603``. Each ``respond*`` returns whether the answer was sent."""

    def respond(self, result: Any) -> bool: ...
    def respond_error(self, code: int, message: str, data: Any = None) -> bool: ...
    def respond_method_not_found(self) -> bool: ...
    def respond_cancelled(self) -> bool: ...
    def respond_internal_error(self, detail: str) -> bool: ...
    @property
    def open(self) -> bool: ...
    @property
    def id(self) -> Union[int, str, float, None]: ...
    @property
    def method(self) -> str: ...
    @property
    def key(self) -> int: ...
    def arm(self) -> Tuple[bool, bool]: ...

@final
class NativeConnection:
    """An ACP connection in one role (the core's dynamic API)."""

    def request(
        self,
        method: str,
        params: Any = None,
        timeout: Optional[float] = None,
        ordered: bool = True,
    ) -> asyncio.Future[Any]: ...
    def notify(self, method: str, params: Any = None) -> Optional[Awaitable[None]]: ...
    def cancel_session(self, session_id: str) -> Awaitable[None]: ...
    def close(self) -> Awaitable[None]: ...
    def closed(self) -> Awaitable[str]: ...
    def terminated(self) -> Awaitable[None]: ...
    def wait_exit(self) -> Awaitable[_ExitPair]: ...
    def peer_capabilities(self) -> Dict[str, Any]: ...
    def sessions(self) -> List[str]: ...
    def session_snapshot(self, session_id: str) -> Optional[Dict[str, Any]]: ...
    def release(self) -> None: ...
    @property
    def role(self) -> str: ...
    @property
    def close_reason(self) -> Optional[str]: ...
    @property
    def protocol_version(self) -> Optional[int]: ...
    @property
    def pid(self) -> Optional[int]: ...
    @property
    def exit_status(self) -> Optional[_ExitPair]: ...

# The constructors' **options are the core's option table's (see
# option_table() and libacp.ConnectionOptions and its siblings): None keeps
# the default; unknown names and wrong types raise TypeError, values out of
# range and options that do not apply ValueError (the core's messages).
# trace and events are flags (True: the dispatcher takes (6, direction,
# frame) and (7, kind, message, details) items and calls the callables
# libacp keeps on it, in the lane ordered_hooks chose), stderr
# callable(line).

def spawn_agent(
    argv: Sequence[str],
    dispatcher: _Dispatcher,
    *,
    drive_reads: bool = True,
    **options: Any,
) -> NativeConnection: ...
def serve_stdio(
    dispatcher: _Dispatcher, *, drive_reads: bool = True, **options: Any
) -> NativeConnection: ...
def from_fds(
    role: str,
    read_fd: int,
    write_fd: int,
    dispatcher: _Dispatcher,
    *,
    drive_reads: bool = True,
    **options: Any,
) -> NativeConnection: ...
def connect(url: str, dispatcher: _Dispatcher, **options: Any) -> Awaitable[NativeConnection]: ...

class _Acceptor(Protocol):
    """``libacp.Server``: each remote connection is handed to its
    ``_accept`` on the loop it was served from."""

    def _accept(self, incoming: NativeIncoming) -> None: ...

def serve(
    listen: Union[str, Tuple[str, int]], server: _Acceptor, **options: Any
) -> Awaitable[NativeServer]: ...
@final
class NativeIncoming:
    """A remote connection waiting for its agent (``Server._accept``)."""

    def start(self, dispatcher: _Dispatcher) -> NativeConnection: ...
    def keep(self, connection: object) -> None: ...
    def reject(self) -> None: ...
    @property
    def connection_id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def remote_address(self) -> Tuple[str, int]: ...

@final
class NativeServer:
    """The core's remote server."""

    def url(self, kind: str = "websocket") -> str: ...
    @property
    def address(self) -> Tuple[str, int]: ...
    @property
    def connections(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    def shutdown(self) -> Awaitable[None]: ...
    def close(self) -> None: ...

def option_table() -> List[Dict[str, Any]]: ...
def method_not_found(method: str) -> Tuple[int, str, Any]: ...
def _mark_finalizing() -> None: ...
