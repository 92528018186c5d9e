"""libacp: the Agent Client Protocol for asyncio, on the libacp Rust engine.

This is the dynamic API: method names and JSON values (dicts, lists, str,
int, float, bool, None) in and out. Every protocol rule (phases,
capabilities, sessions, ordering, cancellation) is enforced by the Rust
core, and every answer the binding makes on its own (``-32601`` for a
missing ``on_request``, ``-32800``, ``-32603``) is built by the core too;
this package only moves values and work between the core's threads and
your asyncio event loop.

Remote ACP: ``await Connection.connect(url, handler)`` (or the typed
``ClientConnection.connect``) reaches an agent over WebSocket or Streamable
HTTP; ``await libacp.serve(listen, factory)`` serves agents, one per remote
connection.

Threads: handlers and the ``events`` hook run on the event loop that was
running when the connection (or server) was made. The GIL is released while Rust works.
The ``trace`` and ``stderr`` hooks are the exception: they are called on
the engine's threads (keep them quick; ``logging`` is fine).
"""

# The dynamic API (_connection.py), its errors, and the typed API on it
# (_typed.py, schema.py): this module only re-exports.
from . import _libacp, schema
from ._connection import (
    AUTH_REQUIRED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    RESOURCE_NOT_FOUND,
    CommonOptions,
    Connection,
    ConnectionOptions,
    Env,
    Event,
    ExitStatus,
    RemoteInfo,
    RemoteOptions,
    Request,
    ServerOptions,
    SpawnOptions,
    StrPath,
    Trace,
    log,
    wire_log,
)
from ._errors import (
    AcpError,
    Cancelled,
    CapabilityError,
    ConnectionClosed,
    InvalidParams,
    InvalidResult,
    MethodNotFound,
    RefusedError,
    RemoteError,
    RequestError,
    RequestTimeout,
    SpawnError,
)
from ._server import Listen, Server, serve
from ._typed import (
    UNSTABLE_METHODS,
    Agent,
    AgentConnection,
    Client,
    ClientConnection,
    current_request,
    run_agent,
)

__version__: str = _libacp.__version__

__all__ = [
    "AUTH_REQUIRED",
    "AcpError",
    "Agent",
    "AgentConnection",
    "Cancelled",
    "CapabilityError",
    "Client",
    "ClientConnection",
    "CommonOptions",
    "Connection",
    "ConnectionClosed",
    "ConnectionOptions",
    "Env",
    "Event",
    "ExitStatus",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "InvalidParams",
    "InvalidResult",
    "Listen",
    "METHOD_NOT_FOUND",
    "MethodNotFound",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "RESOURCE_NOT_FOUND",
    "RefusedError",
    "RemoteError",
    "RemoteInfo",
    "RemoteOptions",
    "Request",
    "RequestError",
    "RequestTimeout",
    "Server",
    "ServerOptions",
    "SpawnError",
    "SpawnOptions",
    "StrPath",
    "Trace",
    "UNSTABLE_METHODS",
    "current_request",
    "log",
    "run_agent",
    "schema",
    "serve",
    "wire_log",
]

# The public classes say they are libacp's (help(), reprs, tracebacks).
for _public in (Connection, Request, Event, ExitStatus, Server):
    _public.__module__ = __name__
del _public
