"""Remote ACP, server side: :func:`serve` and :class:`Server` (the package
re-exports them).

The server is the core's (``remote::Server``: WebSocket and Streamable HTTP
on one endpoint, its ``Origin`` and bearer-token checks, limits, idle
timeout and graceful shutdown); this module only calls the host's factory
on the event loop for each remote connection and starts that connection's
agent there, like every other libacp connection.
"""

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Callable, Literal, Tuple, Union

from . import _libacp
from ._connection import Connection, ServerOptions, _Hooks, _native_options, _running_loop

if TYPE_CHECKING:
    from typing_extensions import Unpack

log = logging.getLogger("libacp")

#: Where a server listens: ``"host:port"`` or ``(host, port)``; port 0
#: picks a free one (see :attr:`Server.address`).
Listen = Union[str, Tuple[str, int]]


class Server:
    """A running remote ACP server, made by :func:`serve`.

    Each remote connection (WebSocket, or Streamable HTTP's ``initialize``)
    gets its own agent: the factory given to :func:`serve` is called on the
    event loop, and the connection's handlers run on that loop like every
    other libacp handler. The server holds each connection until its client
    goes away, closes it or stays idle past ``idle_timeout_ms``.

    Keep a reference: a server that is garbage collected closes, like
    :meth:`close`. Use as ``async with`` (graceful :meth:`shutdown` on exit).
    """

    _native: "_libacp.NativeServer"

    def __init__(self, factory: Callable[[], Any], loop: asyncio.AbstractEventLoop) -> None:
        self._factory = factory
        self._loop = loop
        #: The trace and events callables of every connection (set by
        #: ``_native_options``).
        self.hooks = _Hooks()
        self._done = asyncio.Event()

    def url(self, kind: Literal["websocket", "http"] = "websocket") -> str:
        """The endpoint's URL: ``"websocket"`` (``ws://``, ``wss://`` with
        TLS) or ``"http"`` (Streamable HTTP: ``http://``, ``https://``),
        with the address listened on as host."""
        return self._native.url(kind)

    @property
    def address(self) -> Tuple[str, int]:
        """The address listened on, ``(host, port)``."""
        return self._native.address

    @property
    def connections(self) -> int:
        """Remote connections open now."""
        return self._native.connections

    async def shutdown(self) -> None:
        """Stops accepting, lets every request already received be answered
        (running prompt turns finish, up to ``shutdown_grace_ms``), closes
        the connections and returns once they are gone. Idempotent."""
        try:
            await self._native.shutdown()
        finally:
            self.close()

    def close(self) -> None:
        """Closes the server and every connection now (idempotent)."""
        self._native.close()
        self._done.set()

    async def serve_forever(self) -> None:
        """Returns once the server was shut down or closed."""
        await self._done.wait()

    async def __aenter__(self) -> "Server":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.shutdown()

    def __repr__(self) -> str:
        state = "closed" if self._native.closed else f"{self.connections} connections"
        return f"<libacp.Server {self.url()} {state}>"

    # -- on the loop: a remote connection for the factory

    def _accept(self, incoming: "_libacp.NativeIncoming") -> None:
        try:
            host = self._factory()
            kept: Any = _connect(incoming, host, self.hooks)
        except Exception:  # noqa: BLE001 - the connection is refused, the server goes on
            log.exception(
                "libacp: the server's factory failed for a %s connection from %s",
                incoming.kind,
                incoming.remote_address,
            )
            incoming.reject()
            return
        incoming.keep(kept)


def _connect(incoming: "_libacp.NativeIncoming", host: Any, hooks: _Hooks) -> Any:
    """Starts the agent connection for ``host``: a handler with
    ``on_request``/``on_notification`` gets the dynamic API (and its
    ``on_connect(connection)``, if it has one, the :class:`Connection`);
    anything else (an :class:`libacp.Agent`) the typed one."""
    from ._typed import Agent, AgentConnection

    dynamic = not isinstance(host, Agent) and (
        hasattr(host, "on_request") or hasattr(host, "on_notification")
    )
    if dynamic:
        conn = Connection._accept(incoming, host, hooks)
        hook = getattr(host, "on_connect", None)
        if hook is not None:
            hook(conn)
        return conn
    return AgentConnection._make(host, lambda h: Connection._accept(incoming, h, hooks))


async def serve(
    listen: Listen,
    factory: Callable[[], Any],
    **options: "Unpack[ServerOptions]",
) -> Server:
    """Serves remote ACP (WebSocket and Streamable HTTP, one endpoint,
    ``/acp`` by default) on ``listen`` until :meth:`Server.shutdown` or
    :meth:`Server.close`.

    ``factory()`` is called on the running event loop for each remote
    connection and returns its agent: a :class:`libacp.Agent` (the typed
    API; a class works as its own factory: ``serve(addr, MyAgent)``) or a
    handler with ``on_request``/``on_notification`` (the dynamic API; its
    optional ``on_connect(connection)`` gets the :class:`Connection` before
    any message is handled, as an agent's gets its ``AgentConnection``). If
    it raises, that connection is refused (and the error logged).

    Options (:class:`ServerOptions`, the core's table): the server's
    (``bearer_tokens``, ``allowed_origins``, ``tls_cert``/``tls_key``,
    ``max_connections``, ``idle_timeout_ms``, ``shutdown_grace_ms``, ...)
    and, for every connection, the connection options. Raises ``OSError``
    when the address cannot be bound."""
    server = Server(factory, _running_loop())
    server._native = await _libacp.serve(listen, server, **_native_options(options, server))
    return server
