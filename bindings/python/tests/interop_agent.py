"""An ACP agent written with libacp's Python binding, serving on stdio.

Prompts are commands, as for tests/bin/libacp_interop_agent.rs: `stream N`,
`permission`, `read PATH`, `write PATH TEXT`, `terminal CMD...`, `wait`.
Driven by target/debug/libacp-interop-client in test_interop.py.
"""

import asyncio
import itertools

import libacp


class InteropAgent:
    def __init__(self) -> None:
        self.ids = itertools.count(1)

    async def on_request(self, method, params, request):
        if method == "initialize":
            return {
                "protocolVersion": 1,
                "agentCapabilities": {"promptCapabilities": {"embeddedContext": True}},
                "agentInfo": {"name": "libacp-python-interop-agent", "version": "0.1.0"},
            }
        if method == "session/new":
            return {"sessionId": f"py-{next(self.ids)}"}
        if method == "session/prompt":
            text = next((b["text"] for b in params["prompt"] if b.get("type") == "text"), "")
            return {"stopReason": await self.run(request, params["sessionId"], text)}
        raise libacp.RequestError(-32601, "Method not found", {"method": method})

    async def run(self, request, session, command):
        conn = request.connection
        verb, _, rest = command.partition(" ")

        async def say(text):
            await conn.notify(
                "session/update",
                {
                    "sessionId": session,
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": text},
                    },
                },
            )

        if verb == "stream":
            for i in range(int(rest)):
                await say(f"chunk {i}")
        elif verb == "permission":
            await conn.notify(
                "session/update",
                {
                    "sessionId": session,
                    "update": {
                        "sessionUpdate": "tool_call",
                        "toolCallId": "perm-1",
                        "title": "Edit file",
                        "kind": "edit",
                        "status": "pending",
                    },
                },
            )
            answer = await conn.request(
                "session/request_permission",
                {
                    "sessionId": session,
                    "toolCall": {"toolCallId": "perm-1"},
                    "options": [
                        {"optionId": "allow_once", "name": "Allow", "kind": "allow_once"},
                        {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
                    ],
                },
            )
            outcome = answer["outcome"]
            chosen = outcome.get("optionId", outcome["outcome"])
            await say(f"permission: {chosen}")
            await conn.notify(
                "session/update",
                {
                    "sessionId": session,
                    "update": {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": "perm-1",
                        "status": "completed" if chosen == "allow_once" else "failed",
                    },
                },
            )
        elif verb == "read":
            file = await conn.request(
                "fs/read_text_file", {"sessionId": session, "path": rest.strip()}
            )
            await say(file["content"])
        elif verb == "write":
            path, _, content = rest.partition(" ")
            await conn.request(
                "fs/write_text_file", {"sessionId": session, "path": path, "content": content}
            )
            await say("wrote")
        elif verb == "terminal":
            term = await conn.request(
                "terminal/create", {"sessionId": session, "command": "sh", "args": ["-c", rest]}
            )
            ids = {"sessionId": session, "terminalId": term["terminalId"]}
            await conn.request("terminal/wait_for_exit", ids)
            output = await conn.request("terminal/output", ids)
            await conn.request("terminal/release", ids)
            await say(output["output"])
        elif verb == "wait":
            await request.wait_cancelled()
            return "cancelled"
        else:
            raise libacp.RequestError(-32602, "Invalid params", f"unknown prompt {command!r}")
        return "end_turn"


async def main() -> None:
    conn = libacp.Connection.from_stdio(InteropAgent())
    await conn.closed()
    await conn.terminated()


if __name__ == "__main__":
    asyncio.run(main())
