"""The typed API: ``Agent``/``Client`` base classes and the typed connections.

It is a thin layer over :class:`libacp.Connection` (the dynamic API): each
typed method is one method name of the ACP v1 schema, and the values are the
``TypedDict``s of :mod:`libacp.schema` (plain dicts at run time). Every
protocol rule is still enforced by the Rust core underneath.

* An **agent** subclasses :class:`Agent`, overrides the methods it supports,
  and talks back to the client through ``self.client`` (an
  :class:`AgentConnection`). ``await libacp.run_agent(MyAgent())`` serves it
  on stdio.
* A **client** subclasses :class:`Client` (what the agent may ask of it) and
  drives the agent through a :class:`ClientConnection`, made with
  :meth:`ClientConnection.spawn` (or ``from_socket``/``from_fds``).

Methods a host does not override are answered ``-32601`` ("method not
found") by the core, exactly as in every other libacp binding.

The methods of the unstable v1 extensions (``fork_session``,
``archive_session``, ``mcp_message``, the proxy chain's
``proxy_initialize`` and ``proxy_successor``, ...; see
:data:`libacp.UNSTABLE_METHODS`) are typed here like the stable ones. The
core routes and checks them (direction, params, capabilities, sessions)
only on connections made with the ``unstable`` option naming their feature
(``unstable=["all"]`` or ``["session_fork", ...]``, the Rust SDK's feature
names); without it they still go out and come in, as extension methods the
core does not check. Inside any
handler, :func:`current_request` gives the incoming :class:`Request` (its
``cancelled`` flag, ``wait_cancelled()``, the connection).
"""

from __future__ import annotations

import contextvars
import inspect
import socket
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence, Tuple, Union, cast

from . import schema as s
from ._errors import MethodNotFound
from ._methods import (
    AGENT_HANDLERS,
    AGENT_PROXY_HANDLERS,
    CLIENT_HANDLERS,
    CLIENT_PROXY_HANDLERS,
    UNSTABLE_METHODS,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._connection import (
        Connection,
        ConnectionOptions,
        RemoteOptions,
        Request,
        SpawnOptions,
        StrPath,
    )

_current: contextvars.ContextVar[Optional[Request]] = contextvars.ContextVar(
    "libacp_current_request", default=None
)


def _dynamic() -> type[Connection]:
    from ._connection import Connection

    return Connection


def current_request() -> Request:
    """The incoming request whose handler is running (in this task).

    Raises ``LookupError`` outside a request handler."""
    request = _current.get()
    if request is None:
        raise LookupError("libacp.current_request() is only set inside a request handler")
    return request


# ------------------------------------------------------------------ agent


class Agent:
    """Base class of a typed agent: override what you support.

    Request methods return the result (a ``TypedDict`` or plain dict) or
    raise :class:`libacp.RequestError`; the defaults answer ``-32601``.
    Notification methods (``cancel``, ``ext_notification``) return nothing.
    ``self.client`` is the connection back to the client, set before the
    first call (in :meth:`on_connect`). Handlers run as tasks on the event
    loop the connection was made on; several may run at once.
    """

    client: AgentConnection

    def on_connect(self, client: AgentConnection) -> None:
        """Called once when the connection is made, before any request."""
        self.client = client

    async def initialize(self, params: s.InitializeRequest) -> s.InitializeResponse:
        raise MethodNotFound("initialize")

    async def authenticate(self, params: s.AuthenticateRequest) -> s.AuthenticateResponse:
        raise MethodNotFound("authenticate")

    async def logout(self, params: s.LogoutRequest) -> s.LogoutResponse:
        raise MethodNotFound("logout")

    async def new_session(self, params: s.NewSessionRequest) -> s.NewSessionResponse:
        raise MethodNotFound("session/new")

    async def load_session(self, params: s.LoadSessionRequest) -> s.LoadSessionResponse:
        raise MethodNotFound("session/load")

    async def resume_session(self, params: s.ResumeSessionRequest) -> s.ResumeSessionResponse:
        raise MethodNotFound("session/resume")

    async def list_sessions(self, params: s.ListSessionsRequest) -> s.ListSessionsResponse:
        raise MethodNotFound("session/list")

    async def close_session(self, params: s.CloseSessionRequest) -> s.CloseSessionResponse:
        raise MethodNotFound("session/close")

    async def delete_session(self, params: s.DeleteSessionRequest) -> s.DeleteSessionResponse:
        raise MethodNotFound("session/delete")

    async def set_session_mode(self, params: s.SetSessionModeRequest) -> s.SetSessionModeResponse:
        raise MethodNotFound("session/set_mode")

    async def set_session_config_option(
        self, params: s.SetSessionConfigOptionRequest
    ) -> s.SetSessionConfigOptionResponse:
        raise MethodNotFound("session/set_config_option")

    async def prompt(self, params: s.PromptRequest) -> s.PromptResponse:
        """One prompt turn. ``current_request().cancelled`` turns True on
        ``session/cancel``: wind down and return; the core answers
        ``stopReason: "cancelled"`` whatever you return."""
        raise MethodNotFound("session/prompt")

    async def cancel(self, params: s.CancelNotification) -> None:
        """``session/cancel`` (the running prompt's request is already
        flagged cancelled by the core when this runs)."""

    # Unstable (the ``unstable`` option names the feature in brackets).

    async def fork_session(self, params: s.ForkSessionRequest) -> s.ForkSessionResponse:
        """``session/fork`` (``session_fork``; advertise
        ``sessionCapabilities.fork``). The session the answer names is open
        on this connection afterwards."""
        raise MethodNotFound("session/fork")

    async def archive_session(self, params: s.ArchiveSessionRequest) -> s.ArchiveSessionResponse:
        """``session/archive`` (``session_archive``; advertise
        ``sessionCapabilities.archive``). Closes the session it names on this
        connection."""
        raise MethodNotFound("session/archive")

    async def unarchive_session(
        self, params: s.UnarchiveSessionRequest
    ) -> s.UnarchiveSessionResponse:
        """``session/unarchive`` (``session_archive``; advertise
        ``sessionCapabilities.archive``)."""
        raise MethodNotFound("session/unarchive")

    async def session_status(self, params: s.SessionStatusRequest) -> s.SessionStatusResponse:
        """``session/status`` (``session_status``; advertise
        ``sessionCapabilities.status``)."""
        raise MethodNotFound("session/status")

    async def set_session_title(
        self, params: s.SetSessionTitleRequest
    ) -> s.SetSessionTitleResponse:
        """``session/set_title`` (``session_set_title``; advertise
        ``sessionCapabilities.title``)."""
        raise MethodNotFound("session/set_title")

    async def auth_status(self, params: s.AuthStatusRequest) -> s.AuthStatusResponse:
        """``auth/status`` (``auth_status``; advertise ``auth.status``)."""
        raise MethodNotFound("auth/status")

    async def list_providers(self, params: s.ListProvidersRequest) -> s.ListProvidersResponse:
        """``providers/list`` (``llm_providers``; advertise ``providers``)."""
        raise MethodNotFound("providers/list")

    async def set_provider(self, params: s.SetProviderRequest) -> s.SetProviderResponse:
        """``providers/set`` (``llm_providers``; advertise ``providers``)."""
        raise MethodNotFound("providers/set")

    async def disable_provider(self, params: s.DisableProviderRequest) -> s.DisableProviderResponse:
        """``providers/disable`` (``llm_providers``; advertise ``providers``)."""
        raise MethodNotFound("providers/disable")

    async def mcp_message(self, params: s.MessageMcpNotification) -> None:
        """``mcp/message`` notifications from the client, for an MCP server
        of transport ``acp`` (``mcp_over_acp``)."""

    async def proxy_initialize(self, params: s.InitializeProxyRequest) -> s.InitializeProxyResponse:
        """``proxy/initialize`` (``proxy_chains``): the conductor initializes
        this agent as a proxy, with the params and answer of ``initialize``
        and its rules (it is this connection's ``initialize``). Before
        answering, a proxy initializes its successor through
        ``self.client.proxy_successor``. The default answers ``-32601``: this
        agent is not a proxy."""
        raise MethodNotFound("proxy/initialize")

    async def proxy_successor(self, params: s.ProxySuccessorRequest) -> s.ProxySuccessorResponse:
        """``proxy/successor`` from the conductor (``proxy_chains``): a
        request of this proxy's successor (``method``, ``params``); return
        the wrapped request's result."""
        raise MethodNotFound("proxy/successor")

    async def proxy_successor_notification(self, params: s.ProxySuccessorNotification) -> None:
        """``proxy/successor`` notifications from the conductor
        (``proxy_chains``): a notification of this proxy's successor."""

    async def ext_method(self, method: str, params: Any) -> Any:
        """An extension request (method name starting with ``_``)."""
        raise MethodNotFound(method)

    async def ext_notification(self, method: str, params: Any) -> None:
        """An extension notification (method name starting with ``_``)."""


def _by_kind(
    table: Dict[str, str],
    methods: Dict[str, Tuple[str, Optional[str]]],
    proxy: Dict[Tuple[str, bool], str],
) -> Dict[Tuple[str, bool], str]:
    """One role's handlers, (wire name, notification?) -> the host's
    method name: ``table`` (``AGENT_HANDLERS``/``CLIENT_HANDLERS``) with
    each method's kind from ``methods`` (the schema's
    ``AGENT_METHODS``/``CLIENT_METHODS``), and the proxy-chain ones."""
    out = {(wire, methods[wire][1] is None): name for wire, name in table.items()}
    out.update(proxy)
    return out


_AGENT_BY_KIND = _by_kind(AGENT_HANDLERS, s.AGENT_METHODS, AGENT_PROXY_HANDLERS)
_CLIENT_BY_KIND = _by_kind(CLIENT_HANDLERS, s.CLIENT_METHODS, CLIENT_PROXY_HANDLERS)


class _Serve:
    """Adapts a typed host object to the dynamic handler interface.

    ``table`` names the host's method for each wire method and kind
    (notification or not): a request is never passed to a notification's
    method nor the reverse (the core refuses those for the methods it
    routes, but passes an unstable method whose feature is off
    unchecked)."""

    def __init__(self, host: Any, base: type, table: Dict[Tuple[str, bool], str]) -> None:
        self.host = host
        self.base = base
        self.table = table

    def _name(self, wire: str, notification: bool) -> Optional[str]:
        return self.table.get((wire, notification))

    def _method(self, wire: str) -> Optional[Callable[..., Any]]:
        name = self._name(wire, notification=False)
        if name is None:
            return None
        fn = getattr(self.host, name, None)
        if fn is None:
            return None
        # Not overridden: the default would only answer "method not found".
        if isinstance(self.host, self.base) and getattr(type(self.host), name, None) is getattr(
            self.base, name, None
        ):
            return None
        return cast(Callable[..., Any], fn)

    async def on_request(self, method: str, params: Any, request: Request) -> Any:
        token = _current.set(request)
        try:
            fn = self._method(method)
            if fn is not None:
                return await _maybe_await(fn(params))
            ext = getattr(self.host, "ext_method", None) if method.startswith("_") else None
            if ext is not None:
                return await _maybe_await(ext(method, params))
            raise MethodNotFound(method)
        finally:
            _current.reset(token)

    async def on_notification(self, method: str, params: Any) -> None:
        name = self._name(method, notification=True)
        if name is not None:
            fn = getattr(self.host, name, None)
            if fn is not None:
                await _maybe_await(fn(params))
            return
        if method.startswith("_"):
            ext = getattr(self.host, "ext_notification", None)
            if ext is not None:
                await _maybe_await(ext(method, params))


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


class _Typed:
    """What both typed connections share: the dynamic connection underneath
    and its lifecycle."""

    def __init__(self, connection: Connection) -> None:
        #: The same connection's dynamic API (:class:`libacp.Connection`):
        #: what the typed methods do not cover. ``connection.request(method,
        #: params)`` / ``notify`` for extension or newer methods,
        #: ``connection.peer_capabilities`` for what the peer advertised,
        #: ``connection.session_snapshot(id)`` (with ``session_model=True``),
        #: ``exit_status``/``wait_exit()`` of a spawned agent. Every protocol
        #: rule still applies on it.
        self.connection = connection

    async def _call(self, method: str, params: Any) -> Any:
        return await self.connection.request(method, params)

    async def ext_method(self, method: str, params: Any = None) -> Any:
        """Sends an extension request (``method`` should start with ``_``)."""
        return await self.connection.request(method, params)

    async def ext_notification(self, method: str, params: Any = None) -> None:
        """Sends an extension notification."""
        await self.connection.notify(method, params)

    async def close(self) -> None:
        """See :meth:`libacp.Connection.close`."""
        await self.connection.close()

    async def closed(self) -> str:
        """See :meth:`libacp.Connection.closed`."""
        return await self.connection.closed()

    async def terminated(self) -> None:
        """See :meth:`libacp.Connection.terminated`."""
        await self.connection.terminated()

    @property
    def protocol_version(self) -> Optional[int]:
        """The negotiated protocol version (after ``initialize``)."""
        return self.connection.protocol_version


class AgentConnection(_Typed):
    """The agent's side of a connection: what the agent asks of the client.

    Made by :meth:`serve_stdio`, :meth:`from_socket`/:meth:`from_fds` or
    :func:`libacp.serve` (one per remote connection), which also call
    ``agent.on_connect(self)``; every method is one ACP
    call (see :class:`libacp.Connection` for errors, cancellation and
    threads)."""

    @classmethod
    def serve_stdio(cls, agent: Any, **options: Unpack[ConnectionOptions]) -> AgentConnection:
        """Serves ``agent`` on this process's stdin/stdout (from a running
        event loop). Write nothing else to stdout; log to stderr."""
        return cls._make(agent, lambda h: _dynamic().from_stdio(h, **options))

    @classmethod
    def from_socket(
        cls, sock: socket.socket, agent: Any, **options: Unpack[ConnectionOptions]
    ) -> AgentConnection:
        """Serves ``agent`` over a connected socket (taken over)."""
        return cls._make(agent, lambda h: _dynamic().from_socket(sock, h, role="agent", **options))

    @classmethod
    def from_fds(
        cls, read_fd: int, write_fd: int, agent: Any, **options: Unpack[ConnectionOptions]
    ) -> AgentConnection:
        """Serves ``agent`` over file descriptors (taken over)."""
        return cls._make(
            agent, lambda h: _dynamic().from_fds(read_fd, write_fd, h, role="agent", **options)
        )

    @classmethod
    def _make(cls, agent: Any, connect: Callable[[_Serve], Connection]) -> AgentConnection:
        serve = _Serve(agent, Agent, _AGENT_BY_KIND)
        conn = cls(connect(serve))
        hook = getattr(agent, "on_connect", None)
        if hook is not None:
            hook(conn)
        return conn

    async def session_update(self, params: s.SessionNotification) -> None:
        """``session/update``: streams one update of a session."""
        await self.connection.notify("session/update", params)

    async def request_permission(
        self, params: s.RequestPermissionRequest
    ) -> s.RequestPermissionResponse:
        return cast(
            s.RequestPermissionResponse, await self._call("session/request_permission", params)
        )

    async def read_text_file(self, params: s.ReadTextFileRequest) -> s.ReadTextFileResponse:
        return cast(s.ReadTextFileResponse, await self._call("fs/read_text_file", params))

    async def write_text_file(self, params: s.WriteTextFileRequest) -> s.WriteTextFileResponse:
        return cast(s.WriteTextFileResponse, await self._call("fs/write_text_file", params))

    async def create_terminal(self, params: s.CreateTerminalRequest) -> s.CreateTerminalResponse:
        return cast(s.CreateTerminalResponse, await self._call("terminal/create", params))

    async def terminal_output(self, params: s.TerminalOutputRequest) -> s.TerminalOutputResponse:
        return cast(s.TerminalOutputResponse, await self._call("terminal/output", params))

    async def release_terminal(self, params: s.ReleaseTerminalRequest) -> s.ReleaseTerminalResponse:
        return cast(s.ReleaseTerminalResponse, await self._call("terminal/release", params))

    async def wait_for_terminal_exit(
        self, params: s.WaitForTerminalExitRequest
    ) -> s.WaitForTerminalExitResponse:
        return cast(
            s.WaitForTerminalExitResponse, await self._call("terminal/wait_for_exit", params)
        )

    async def kill_terminal(self, params: s.KillTerminalRequest) -> s.KillTerminalResponse:
        return cast(s.KillTerminalResponse, await self._call("terminal/kill", params))

    async def create_elicitation(
        self, params: s.CreateElicitationRequest
    ) -> s.CreateElicitationResponse:
        return cast(s.CreateElicitationResponse, await self._call("elicitation/create", params))

    async def elicitation_complete(self, params: s.CompleteElicitationNotification) -> None:
        await self.connection.notify("elicitation/complete", params)

    # Unstable (the ``unstable`` option names the feature in brackets).

    async def mcp_message(self, params: s.MessageMcpRequest) -> s.MessageMcpResponse:
        """``mcp/message`` to an MCP server of transport ``acp`` that the
        client provides (``mcp_over_acp``)."""
        return cast(s.MessageMcpResponse, await self._call("mcp/message", params))

    async def auth_status_update(self, params: s.AuthStatusUpdateNotification) -> None:
        """``auth/status_update``: the agent's authentication state changed
        (``auth_status``)."""
        await self.connection.notify("auth/status_update", params)

    async def proxy_successor(self, params: s.ProxySuccessorRequest) -> s.ProxySuccessorResponse:
        """``proxy/successor`` (``proxy_chains``): this proxy forwards a
        request (``method``, ``params``) to its successor through the
        conductor; the answer is the successor's result, unchanged."""
        return await self._call("proxy/successor", params)

    async def proxy_successor_notification(self, params: s.ProxySuccessorNotification) -> None:
        """``proxy/successor`` as a notification (``proxy_chains``): this
        proxy forwards a notification to its successor."""
        await self.connection.notify("proxy/successor", params)

    async def __aenter__(self) -> AgentConnection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def run_agent(agent: Any, **options: Unpack[ConnectionOptions]) -> None:
    """Serves ``agent`` on stdio until the client goes away (its stdin
    closes) and everything is written. ``options`` as for
    :class:`libacp.Connection`."""
    conn = AgentConnection.serve_stdio(agent, **options)
    await conn.closed()
    await conn.terminated()


# ----------------------------------------------------------------- client


class Client:
    """Base class of a typed client: override what you support (what the
    agent may ask). Defaults answer ``-32601``; ``session_update`` ignores
    the update. ``self.agent`` is the connection to the agent, set in
    :meth:`on_connect` before the first call."""

    agent: ClientConnection

    def on_connect(self, agent: ClientConnection) -> None:
        """Called once when the connection is made, before any request."""
        self.agent = agent

    async def session_update(self, params: s.SessionNotification) -> None:
        """``session/update``. Called one at a time, in arrival order; a
        prompt's answer is delivered only after its updates were handled."""

    async def request_permission(
        self, params: s.RequestPermissionRequest
    ) -> s.RequestPermissionResponse:
        raise MethodNotFound("session/request_permission")

    async def read_text_file(self, params: s.ReadTextFileRequest) -> s.ReadTextFileResponse:
        raise MethodNotFound("fs/read_text_file")

    async def write_text_file(self, params: s.WriteTextFileRequest) -> s.WriteTextFileResponse:
        raise MethodNotFound("fs/write_text_file")

    async def create_terminal(self, params: s.CreateTerminalRequest) -> s.CreateTerminalResponse:
        raise MethodNotFound("terminal/create")

    async def terminal_output(self, params: s.TerminalOutputRequest) -> s.TerminalOutputResponse:
        raise MethodNotFound("terminal/output")

    async def release_terminal(self, params: s.ReleaseTerminalRequest) -> s.ReleaseTerminalResponse:
        raise MethodNotFound("terminal/release")

    async def wait_for_terminal_exit(
        self, params: s.WaitForTerminalExitRequest
    ) -> s.WaitForTerminalExitResponse:
        raise MethodNotFound("terminal/wait_for_exit")

    async def kill_terminal(self, params: s.KillTerminalRequest) -> s.KillTerminalResponse:
        raise MethodNotFound("terminal/kill")

    async def create_elicitation(
        self, params: s.CreateElicitationRequest
    ) -> s.CreateElicitationResponse:
        raise MethodNotFound("elicitation/create")

    async def elicitation_complete(self, params: s.CompleteElicitationNotification) -> None:
        """``elicitation/complete``."""

    # Unstable (the ``unstable`` option names the feature in brackets).

    async def mcp_message(self, params: s.MessageMcpRequest) -> s.MessageMcpResponse:
        """``mcp/message`` from the agent, to an MCP server of transport
        ``acp`` this client provides (``mcp_over_acp``)."""
        raise MethodNotFound("mcp/message")

    async def auth_status_update(self, params: s.AuthStatusUpdateNotification) -> None:
        """``auth/status_update`` (``auth_status``)."""

    async def proxy_successor(self, params: s.ProxySuccessorRequest) -> s.ProxySuccessorResponse:
        """``proxy/successor`` from a proxy (``proxy_chains``; this client is
        its conductor): a request (``method``, ``params``) it forwards to its
        successor; return the successor's result."""
        raise MethodNotFound("proxy/successor")

    async def proxy_successor_notification(self, params: s.ProxySuccessorNotification) -> None:
        """``proxy/successor`` notifications from a proxy (``proxy_chains``):
        a notification it forwards to its successor."""

    async def ext_method(self, method: str, params: Any) -> Any:
        """An extension request (method name starting with ``_``)."""
        raise MethodNotFound(method)

    async def ext_notification(self, method: str, params: Any) -> None:
        """An extension notification (method name starting with ``_``)."""


def _serve_client(client: Any) -> _Serve:
    return _Serve(client if client is not None else Client(), Client, _CLIENT_BY_KIND)


class ClientConnection(_Typed):
    """The client's side of a connection: what the client asks of the agent.

    Made by :meth:`spawn`, ``await`` :meth:`connect` (a remote agent) or
    :meth:`from_socket`/:meth:`from_fds`, which also call
    ``client.on_connect(self)``. Call :meth:`initialize` first
    (the core refuses anything else before it). Use as ``async with``."""

    @classmethod
    def spawn(
        cls,
        argv: Sequence[StrPath],
        client: Any = None,
        **options: Unpack[SpawnOptions],
    ) -> ClientConnection:
        """Starts the agent command ``argv`` and connects to its stdio (from
        a running event loop). Options as for
        :meth:`libacp.Connection.spawn_agent` (``cwd``, ``env``,
        ``clear_env``, ``stderr``, ``grace_after_stdin_close_ms``,
        ``grace_after_sigterm_ms``, and every connection option)."""
        return cls._make(client, lambda h: _dynamic().spawn_agent(argv, h, **options))

    @classmethod
    async def connect(
        cls, url: str, client: Any = None, **options: Unpack[RemoteOptions]
    ) -> ClientConnection:
        """Connects to the remote agent at ``url`` (``ws://``, ``wss://``,
        ``http://``, ``https://``); options and errors as for
        :meth:`libacp.Connection.connect` (:class:`libacp.RemoteError` when
        it cannot)."""
        serve = _serve_client(client)
        return cls._wrap(serve, await _dynamic().connect(url, serve, **options))

    @classmethod
    def from_socket(
        cls, sock: socket.socket, client: Any = None, **options: Unpack[ConnectionOptions]
    ) -> ClientConnection:
        """Client side over a connected socket (taken over)."""
        return cls._make(
            client, lambda h: _dynamic().from_socket(sock, h, role="client", **options)
        )

    @classmethod
    def from_fds(
        cls, read_fd: int, write_fd: int, client: Any = None, **options: Unpack[ConnectionOptions]
    ) -> ClientConnection:
        """Client side over file descriptors (taken over)."""
        return cls._make(
            client, lambda h: _dynamic().from_fds(read_fd, write_fd, h, role="client", **options)
        )

    @classmethod
    def _make(cls, client: Any, connect: Callable[[_Serve], Connection]) -> ClientConnection:
        serve = _serve_client(client)
        return cls._wrap(serve, connect(serve))

    @classmethod
    def _wrap(cls, serve: _Serve, connection: Connection) -> ClientConnection:
        conn = cls(connection)
        hook = getattr(serve.host, "on_connect", None)
        if hook is not None:
            hook(conn)
        return conn

    async def initialize(self, params: s.InitializeRequest) -> s.InitializeResponse:
        return cast(s.InitializeResponse, await self._call("initialize", params))

    async def authenticate(self, params: s.AuthenticateRequest) -> s.AuthenticateResponse:
        return cast(s.AuthenticateResponse, await self._call("authenticate", params))

    async def logout(self, params: s.LogoutRequest) -> s.LogoutResponse:
        return cast(s.LogoutResponse, await self._call("logout", params))

    async def new_session(self, params: s.NewSessionRequest) -> s.NewSessionResponse:
        return cast(s.NewSessionResponse, await self._call("session/new", params))

    async def load_session(self, params: s.LoadSessionRequest) -> s.LoadSessionResponse:
        return cast(s.LoadSessionResponse, await self._call("session/load", params))

    async def resume_session(self, params: s.ResumeSessionRequest) -> s.ResumeSessionResponse:
        return cast(s.ResumeSessionResponse, await self._call("session/resume", params))

    async def list_sessions(self, params: s.ListSessionsRequest) -> s.ListSessionsResponse:
        return cast(s.ListSessionsResponse, await self._call("session/list", params))

    async def close_session(self, params: s.CloseSessionRequest) -> s.CloseSessionResponse:
        return cast(s.CloseSessionResponse, await self._call("session/close", params))

    async def delete_session(self, params: s.DeleteSessionRequest) -> s.DeleteSessionResponse:
        return cast(s.DeleteSessionResponse, await self._call("session/delete", params))

    async def set_session_mode(self, params: s.SetSessionModeRequest) -> s.SetSessionModeResponse:
        return cast(s.SetSessionModeResponse, await self._call("session/set_mode", params))

    async def set_session_config_option(
        self, params: s.SetSessionConfigOptionRequest
    ) -> s.SetSessionConfigOptionResponse:
        return cast(
            s.SetSessionConfigOptionResponse, await self._call("session/set_config_option", params)
        )

    async def prompt(self, params: s.PromptRequest) -> s.PromptResponse:
        """One prompt turn; returns after every ``session/update`` the agent
        sent before its answer was handled by ``Client.session_update``.
        Cancelling the awaiting task sends ``$/cancel_request``; to end a
        turn the ACP way, call :meth:`cancel`."""
        return cast(s.PromptResponse, await self._call("session/prompt", params))

    async def cancel(self, params: Union[s.CancelNotification, str]) -> None:
        """``session/cancel``: the agent winds the turn down and answers its
        prompt ``cancelled``; pending permission requests of the session are
        answered ``cancelled`` by the core. ``params`` as for every other
        call (``{"sessionId": ...}``), or the session id alone."""
        if isinstance(params, str):
            session_id = params
        elif isinstance(params, dict) and isinstance(params.get("sessionId"), str):
            session_id = params["sessionId"]
        else:
            raise TypeError(
                'cancel() takes {"sessionId": str} or the session id, '
                f"not {type(params).__name__}"
            )
        await self.connection.cancel_session(session_id)

    # Unstable (the ``unstable`` option names the feature in brackets).

    async def fork_session(self, params: s.ForkSessionRequest) -> s.ForkSessionResponse:
        """``session/fork`` (``session_fork``; needs
        ``sessionCapabilities.fork``): the session the answer names is open
        afterwards; the one it copies need not be open here."""
        return cast(s.ForkSessionResponse, await self._call("session/fork", params))

    async def archive_session(self, params: s.ArchiveSessionRequest) -> s.ArchiveSessionResponse:
        """``session/archive`` (``session_archive``; needs
        ``sessionCapabilities.archive``): closes the session it names here."""
        return cast(s.ArchiveSessionResponse, await self._call("session/archive", params))

    async def unarchive_session(
        self, params: s.UnarchiveSessionRequest
    ) -> s.UnarchiveSessionResponse:
        """``session/unarchive`` (``session_archive``; needs
        ``sessionCapabilities.archive``)."""
        return cast(s.UnarchiveSessionResponse, await self._call("session/unarchive", params))

    async def session_status(self, params: s.SessionStatusRequest) -> s.SessionStatusResponse:
        """``session/status`` (``session_status``; needs
        ``sessionCapabilities.status``); may name any session the agent
        knows."""
        return cast(s.SessionStatusResponse, await self._call("session/status", params))

    async def set_session_title(
        self, params: s.SetSessionTitleRequest
    ) -> s.SetSessionTitleResponse:
        """``session/set_title`` (``session_set_title``; needs
        ``sessionCapabilities.title``)."""
        return cast(s.SetSessionTitleResponse, await self._call("session/set_title", params))

    async def auth_status(self, params: s.AuthStatusRequest) -> s.AuthStatusResponse:
        """``auth/status`` (``auth_status``; needs ``auth.status``)."""
        return cast(s.AuthStatusResponse, await self._call("auth/status", params))

    async def list_providers(self, params: s.ListProvidersRequest) -> s.ListProvidersResponse:
        """``providers/list`` (``llm_providers``; needs ``providers``)."""
        return cast(s.ListProvidersResponse, await self._call("providers/list", params))

    async def set_provider(self, params: s.SetProviderRequest) -> s.SetProviderResponse:
        """``providers/set`` (``llm_providers``; needs ``providers``)."""
        return cast(s.SetProviderResponse, await self._call("providers/set", params))

    async def disable_provider(self, params: s.DisableProviderRequest) -> s.DisableProviderResponse:
        """``providers/disable`` (``llm_providers``; needs ``providers``)."""
        return cast(s.DisableProviderResponse, await self._call("providers/disable", params))

    async def mcp_message(self, params: s.MessageMcpNotification) -> None:
        """``mcp/message`` as a notification to the agent, from an MCP server
        of transport ``acp`` this client provides (``mcp_over_acp``)."""
        await self.connection.notify("mcp/message", params)

    async def proxy_initialize(self, params: s.InitializeProxyRequest) -> s.InitializeProxyResponse:
        """``proxy/initialize`` (``proxy_chains``): this client, a conductor,
        initializes the agent as a proxy. The same params, answer and rules
        as :meth:`initialize`: it is this connection's ``initialize``."""
        return cast(s.InitializeProxyResponse, await self._call("proxy/initialize", params))

    async def proxy_successor(self, params: s.ProxySuccessorRequest) -> s.ProxySuccessorResponse:
        """``proxy/successor`` (``proxy_chains``): the conductor delivers a
        request (``method``, ``params``) of the proxy's successor; the answer
        is the proxy's result for it."""
        return await self._call("proxy/successor", params)

    async def proxy_successor_notification(self, params: s.ProxySuccessorNotification) -> None:
        """``proxy/successor`` as a notification (``proxy_chains``): the
        conductor delivers a notification of the proxy's successor."""
        await self.connection.notify("proxy/successor", params)

    async def __aenter__(self) -> ClientConnection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


__all__ = [
    "AGENT_HANDLERS",
    "AGENT_PROXY_HANDLERS",
    "Agent",
    "AgentConnection",
    "CLIENT_HANDLERS",
    "CLIENT_PROXY_HANDLERS",
    "Client",
    "ClientConnection",
    "MethodNotFound",
    "UNSTABLE_METHODS",
    "current_request",
    "run_agent",
]
