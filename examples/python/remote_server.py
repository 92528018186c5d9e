"""Serves the example agent (examples/python/agent.py) over remote ACP:
WebSocket and Streamable HTTP on one endpoint, a fresh agent per remote
connection. With ACP_TOKEN set, clients must send it as a bearer token.
Usage: `python examples/python/remote_server.py [HOST:PORT]` (default
127.0.0.1:8765; port 0 picks a free one); Ctrl+C stops it gracefully.
"""

import asyncio
import os
import sys

import libacp
from agent import EchoAgent  # examples/python/agent.py


async def main(listen: str) -> None:
    token = os.environ.get("ACP_TOKEN")
    async with await libacp.serve(
        listen, EchoAgent, bearer_tokens=[token] if token else None
    ) as server:  # leaving the block shuts down: running turns finish first
        print(f"serving {server.url('websocket')} and {server.url('http')}", flush=True)
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:8765"))
    except KeyboardInterrupt:
        pass
