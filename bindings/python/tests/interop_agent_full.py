"""interop_agent.py plus what the official SDKs' interop clients
(tests/interop/python/client.py, tests/interop/ts/client.mjs) check on top
of the Rust interop client: `loadSession: true` advertised, each session's
history (the prompt texts as `user_message_chunk`s, the agent's text chunks)
recorded as the turns run, and `session/load` replaying it as
`session/update`s before its answer (libacp writes every update queued
before the answer first). An unknown session on load is `-32002` with
`data.sessionId`.

Everything else (the prompt commands, fs, terminals, cancellation) is
interop_agent.py's `InteropAgent`, unchanged: its connection is wrapped only
to record the text chunks it sends.
"""

import asyncio
import pathlib
import sys

import libacp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from interop_agent import InteropAgent  # noqa: E402


class RecordingConnection:
    """The connection as InteropAgent.run sees it: text chunks it sends are
    recorded in the session's history."""

    def __init__(self, conn, history):
        self._conn = conn
        self._history = history

    async def notify(self, method, params=None):
        if method == "session/update":
            update = params.get("update") or {}
            content = update.get("content") or {}
            if (
                update.get("sessionUpdate") == "agent_message_chunk"
                and content.get("type") == "text"
            ):
                self._history.append(update)
        await self._conn.notify(method, params)

    def __getattr__(self, name):
        return getattr(self._conn, name)


class RecordingRequest:
    def __init__(self, request, history):
        self._request = request
        self.connection = RecordingConnection(request.connection, history)

    def __getattr__(self, name):
        return getattr(self._request, name)


class FullInteropAgent(InteropAgent):
    def __init__(self) -> None:
        super().__init__()
        self.history = {}  # session id -> the updates session/load replays

    async def on_request(self, method, params, request):
        if method == "initialize":
            answer = await super().on_request(method, params, request)
            answer["agentCapabilities"]["loadSession"] = True
            return answer
        if method == "session/new":
            answer = await super().on_request(method, params, request)
            self.history[answer["sessionId"]] = []
            return answer
        if method == "session/prompt":
            history = self.history.setdefault(params["sessionId"], [])
            text = next((b["text"] for b in params["prompt"] if b.get("type") == "text"), "")
            history.append(
                {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": text}}
            )
            return await super().on_request(method, params, RecordingRequest(request, history))
        if method == "session/load":
            session = params["sessionId"]
            if session not in self.history:
                raise libacp.RequestError(-32002, "Resource not found", {"sessionId": session})
            for update in list(self.history[session]):
                await request.connection.notify(
                    "session/update", {"sessionId": session, "update": update}
                )
            return {}
        return await super().on_request(method, params, request)


async def main() -> None:
    conn = libacp.Connection.from_stdio(FullInteropAgent())
    await conn.closed()
    await conn.terminated()


if __name__ == "__main__":
    asyncio.run(main())
