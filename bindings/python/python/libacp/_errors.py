"""The exception hierarchy of libacp (built by the native module too)."""

import json
from typing import Any, Dict, Optional

#: How much of an error's ``data`` its text shows.
_DATA_SHOWN = 500


def _describe(code: int, message: str, data: Any) -> str:
    text = f"JSON-RPC error {code}: {message}"
    if data is None:
        return text
    try:
        shown = json.dumps(data, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        shown = repr(data)
    if len(shown) > _DATA_SHOWN:
        shown = shown[:_DATA_SHOWN] + f"... ({len(shown)} characters)"
    return f"{text} (data: {shown})"


class AcpError(Exception):
    """Base class of every libacp error."""


class RequestError(AcpError):
    """A JSON-RPC error: the peer answered a call with it, or a handler raises
    it to answer its request with it. ``str()`` shows ``data`` too (the
    reason a real peer gives is often only there), capped.

    One that escapes a handler is answered unchanged (the same code,
    message and data), so a nested call's error the handler does not catch
    reaches the caller exactly as the peer sent it, a ``-32601`` too."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(_describe(code, message, data))
        self.code = code
        self.message = message
        self.data = data

    def __repr__(self) -> str:
        return f"RequestError({self.code!r}, {self.message!r}, {self.data!r})"


class MethodNotFound(RequestError):
    """Raise it from a handler to say "not handled here": it carries the
    core's ``-32601`` for ``method`` (``"Method not found"``, ``data:
    {"method": ...}``), so for the request's own method the answer is
    exactly the one given when no handler exists. The typed API's default
    methods raise it. (A peer's ``-32601`` is a plain
    :class:`RequestError`.)"""

    def __init__(self, method: str) -> None:
        from . import _libacp  # the core builds the answer

        code, message, data = _libacp.method_not_found(method)
        super().__init__(code, message, data)
        self.method = method


class ConnectionClosed(AcpError):
    """The connection is closed (the call failed because of it)."""

    def __init__(self, message: str, reason: Optional[str] = None) -> None:
        super().__init__(message)
        self.reason = reason


class RemoteError(ConnectionClosed):
    """A remote agent could not be reached, or its remote transport failed.

    ``.kind`` is the core's stable name of what went wrong, the same in
    every libacp binding: ``"invalid_url"``, ``"dns"``, ``"refused"``,
    ``"timeout"``, ``"tls"``, ``"unauthorized"`` (401), ``"forbidden"``
    (403), ``"not_found"`` (404), ``"version_refused"``, ``"http"`` (another
    status), ``"io"``. ``.status`` is the HTTP status when the server
    answered with one. ``.reason`` is the close reason's text when a
    connection closed because of it (a call failed), ``None`` when
    :meth:`libacp.Connection.connect` failed."""

    def __init__(
        self,
        message: str,
        kind: str = "",
        status: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> None:
        super().__init__(message, reason)
        self.kind = kind
        self.status = status


class SpawnError(AcpError, OSError):
    """The agent command could not be started."""

    def __init__(self, message: str, program: str = "", error: str = "") -> None:
        AcpError.__init__(self, message)
        self.program = program
        self.error = error


class Cancelled(AcpError):
    """The call was abandoned (the peer was sent ``$/cancel_request``)."""


class RequestTimeout(AcpError, TimeoutError):
    """No answer within the call's timeout (the peer was sent
    ``$/cancel_request``)."""


class InvalidParams(AcpError, ValueError):
    """Params (or a result) that are not JSON, or not a dict/list; nothing
    was sent. ``.detail`` says which member and why."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


class InvalidResult(AcpError):
    """The peer's answer could not be decoded, or breaks the schema's rules
    for that result (a missing required member, a value outside an enum
    such as ``stopReason: "done"``)."""


class RefusedError(AcpError):
    """The protocol layer refused the call locally; nothing was sent.
    ``.kind`` is the refusal (``"NotInitialized"``, ``"UnknownSession"``,
    ``"PromptInProgress"``, ...), ``.details`` the core's JSON description
    (``{"kind": ..., "method": ..., "sessionId": ...}``)."""

    def __init__(self, message: str, details: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.details: Dict[str, Any] = dict(details or {})
        self.kind: str = str(self.details.get("kind", ""))
        self.method: Optional[str] = self.details.get("method")


class CapabilityError(RefusedError):
    """The peer did not advertise the capability this call needs.
    ``.capability`` is its path, for example ``agentCapabilities.loadSession``."""

    def __init__(self, message: str, details: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message, details)
        self.capability: Optional[str] = self.details.get("capability")


def _from_native(kind: str, message: str, info: Any) -> AcpError:
    """Called by the native module to build the exception for a failure."""
    info = info if isinstance(info, dict) else {}
    if kind == "rpc":
        return RequestError(info.get("code", 0), message, info.get("data"))
    if kind == "closed":
        return ConnectionClosed(message, info.get("reason"))
    if kind == "remote":
        return RemoteError(message, info.get("kind", ""), info.get("status"), info.get("reason"))
    if kind == "spawn":
        return SpawnError(message, info.get("program", ""), info.get("error", ""))
    if kind == "cancelled":
        return Cancelled(message)
    if kind == "timeout":
        return RequestTimeout(message)
    if kind == "invalid_params":
        return InvalidParams(message, info.get("detail", ""))
    if kind == "invalid_result":
        return InvalidResult(message)
    if kind == "refused":
        if info.get("kind") == "CapabilityNotAdvertised":
            return CapabilityError(message, info)
        return RefusedError(message, info)
    return AcpError(message)
