"""A client on the official Python SDK (`agent-client-protocol`, run with
the interpreter of <repo>/.venv-interop) driving examples/python/agent.py,
the libacp quickstart agent, through what that example does: initialize,
session/new, one prompt whose reply is streamed word by word, a tool call,
a permission request (answered by the SDK client's handler) and its update,
stopReason end_turn; then stdin closed and the agent must exit 0.

(The official interop client, tests/interop/python/client.py, needs more
than the example offers: `loadSession`, the prompt command vocabulary, fs,
terminals; interop_agent_full.py is the agent that passes it.)

    python official_sdk_example_client.py -- AGENT_COMMAND [ARGS...]

Prints `OK` (exit 0) or `FAIL: <reason>` (exit 1); gives up after 30 s.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sys
import tempfile
from typing import Any

from acp import RequestPermissionResponse, connect_to_agent, text_block
from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES
from acp.schema import AllowedOutcome, ClientCapabilities, DeniedOutcome, Implementation

DEADLINE_S = 30.0
EXIT_GRACE_S = 5.0


class CheckFailure(Exception):
    pass


def check(condition: Any, message: str) -> None:
    if not condition:
        raise CheckFailure(message)


def dump(model: Any) -> Any:
    if hasattr(model, "model_dump"):
        return model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return model


class ExampleClient:
    # Not a subclass of acp.Client: the Protocol's stub methods would answer
    # unimplemented requests with `null` (tests/interop/README.md, quirks).

    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []
        self.permissions: list[dict[str, Any]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append({"sessionId": session_id, **dump(update)})

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permissions.append(
            {
                "sessionId": session_id,
                "toolCall": dump(tool_call),
                "options": [dump(o) for o in options],
            }
        )
        allow = next((o for o in options if o.kind == "allow_once"), None)
        if allow is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=allow.option_id)
        )


async def run(argv: list[str], work_dir: str, state: dict[str, Any]) -> None:
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=None,
        start_new_session=True,
        limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES,
    )
    state["process"] = process
    client = ExampleClient()
    conn = connect_to_agent(client, process.stdin, process.stdout)

    init = await conn.initialize(
        protocol_version=1,
        client_capabilities=ClientCapabilities(),
        client_info=Implementation(name="official-sdk-example-client", version="0.0.0"),
    )
    check(init.protocol_version == 1, f"initialize: protocolVersion {init.protocol_version!r}")
    new = await conn.new_session(cwd=work_dir, mcp_servers=[])
    session_id = new.session_id
    check(isinstance(session_id, str) and session_id, f"session/new: sessionId {session_id!r}")

    response = await conn.prompt(session_id=session_id, prompt=[text_block("hello")])
    check(response.stop_reason == "end_turn", f"prompt: stopReason {response.stop_reason!r}")
    updates = client.updates
    check(
        all(u["sessionId"] == session_id for u in updates),
        f"prompt: updates for another session: {json.dumps(updates)}",
    )
    text = "".join(
        u["content"]["text"] for u in updates if u.get("sessionUpdate") == "agent_message_chunk"
    )
    check(text == "You said: hello ", f"prompt: the streamed reply is {text!r}")
    kinds = [u.get("sessionUpdate") for u in updates]
    check(
        kinds == ["agent_message_chunk"] * 3 + ["tool_call", "tool_call_update"],
        f"prompt: updates {kinds}",
    )
    tool_call, tool_call_update = updates[3], updates[4]
    check(
        tool_call.get("kind") == "edit" and tool_call.get("status", "pending") == "pending",
        f"prompt: tool call {json.dumps(tool_call)}",
    )
    check(len(client.permissions) == 1, f"prompt: {len(client.permissions)} permission requests")
    permission = client.permissions[0]
    check(
        permission["sessionId"] == session_id
        and permission["toolCall"].get("toolCallId") == tool_call.get("toolCallId")
        and {o.get("kind") for o in permission["options"]} == {"allow_once", "reject_once"},
        f"prompt: permission request {json.dumps(permission)}",
    )
    check(
        tool_call_update.get("toolCallId") == tool_call.get("toolCallId")
        and tool_call_update.get("status") == "completed",
        f"prompt: tool call update {json.dumps(tool_call_update)}",
    )

    process.stdin.close()
    try:
        code = await asyncio.wait_for(process.wait(), EXIT_GRACE_S)
    except asyncio.TimeoutError:
        raise CheckFailure(
            f"agent still running {EXIT_GRACE_S:g} s after its stdin was closed"
        ) from None
    finally:
        await conn.close()
    check(code == 0, f"agent exited with code {code} after its stdin was closed")


async def main() -> int:
    argv = sys.argv[1:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("FAIL: usage: official_sdk_example_client.py -- AGENT_COMMAND [ARGS...]", flush=True)
        return 1
    work_dir = os.path.realpath(tempfile.mkdtemp(prefix="acp-example-"))
    state: dict[str, Any] = {}
    failure = None
    try:
        await asyncio.wait_for(run(argv, work_dir, state), DEADLINE_S)
    except asyncio.TimeoutError:
        failure = f"no result within {DEADLINE_S:g} s"
    except Exception as e:  # noqa: BLE001 - any failure is reported
        failure = str(e) if isinstance(e, CheckFailure) else f"{type(e).__name__}: {e}"
    finally:
        process = state.get("process")
        if process is not None and process.returncode is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        shutil.rmtree(work_dir, ignore_errors=True)
    if failure is None:
        print("OK", flush=True)
        return 0
    print("FAIL: " + " ".join(failure.split()), flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
