"""Runs one turn with a remote ACP agent (for example
examples/python/remote_server.py), printing what it streams with the
example client's handler (examples/python/client.py). With ACP_TOKEN set,
sends it as a bearer token.
Usage: `python examples/python/remote_client.py URL` (`ws://...`,
`wss://...`: WebSocket; `http://...`, `https://...`: Streamable HTTP).
"""

import asyncio
import os
import sys

import libacp
from client import Printer  # examples/python/client.py


async def main(url: str) -> None:
    token = os.environ.get("ACP_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else None
    try:
        agent = await libacp.ClientConnection.connect(url, Printer(), headers=headers)
    except libacp.RemoteError as e:  # e.kind: "refused", "unauthorized", ...
        sys.exit(f"cannot reach {url}: {e.kind} ({e})")
    async with agent:
        await agent.initialize({"protocolVersion": 1, "clientCapabilities": {}})
        session = await agent.new_session({"cwd": os.getcwd(), "mcpServers": []})
        done = await agent.prompt(
            {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "hello"}]}
        )
        print(f"\n=> {done['stopReason']}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
