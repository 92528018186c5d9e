"""Builders for the values agents and clients write most: content blocks,
tool call content, plan entries, ``session/update`` payloads and whole
``session/update`` params.

Each returns a plain dict in the wire shape (camelCase members), typed with
the ``TypedDict``s of :mod:`libacp.schema`; optional members given as
``None`` are left out. The names follow the official ACP Python SDK's
``acp.helpers``, so code moving between the two reads the same::

    from libacp import helpers as h

    await client.session_update(
        h.session_notification(sid, h.update_agent_message_text("Hello"))
    )
    await client.session_update(
        h.session_notification(sid, h.start_edit_tool_call("t1", "Edit", "/p/a.py", "new"))
    )

Nothing here checks the protocol: the core does, on every call.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Sequence, cast

from . import schema as s


def _compact(**members: Any) -> Dict[str, Any]:
    """The members that are not ``None``."""
    return {k: v for k, v in members.items() if v is not None}


# ------------------------------------------------------------ content blocks


def text_block(text: str) -> s.TextContentBlock:
    """``{"type": "text", "text": text}``."""
    return {"type": "text", "text": text}


def image_block(data: str, mime_type: str, *, uri: Optional[str] = None) -> s.ImageContentBlock:
    """An image, ``data`` base64-encoded."""
    return cast(s.ImageContentBlock, _compact(type="image", data=data, mimeType=mime_type, uri=uri))


def audio_block(data: str, mime_type: str) -> s.AudioContentBlock:
    """Audio, ``data`` base64-encoded."""
    return {"type": "audio", "data": data, "mimeType": mime_type}


def resource_link_block(
    name: str,
    uri: str,
    *,
    mime_type: Optional[str] = None,
    size: Optional[int] = None,
    description: Optional[str] = None,
    title: Optional[str] = None,
) -> s.ResourceLinkContentBlock:
    """A link to a resource the other side can fetch."""
    return cast(
        s.ResourceLinkContentBlock,
        _compact(
            type="resource_link",
            name=name,
            uri=uri,
            mimeType=mime_type,
            size=size,
            description=description,
            title=title,
        ),
    )


def embedded_text_resource(
    uri: str, text: str, *, mime_type: Optional[str] = None
) -> s.TextResourceContents:
    """The contents of a text resource (for :func:`resource_block`)."""
    return cast(s.TextResourceContents, _compact(uri=uri, text=text, mimeType=mime_type))


def embedded_blob_resource(
    uri: str, blob: str, *, mime_type: Optional[str] = None
) -> s.BlobResourceContents:
    """The contents of a binary resource, base64-encoded (for
    :func:`resource_block`)."""
    return cast(s.BlobResourceContents, _compact(uri=uri, blob=blob, mimeType=mime_type))


def resource_block(resource: Any) -> s.ResourceContentBlock:
    """A resource embedded whole (``embeddedContext``)."""
    return cast(s.ResourceContentBlock, {"type": "resource", "resource": resource})


# -------------------------------------------------------- tool call content


def tool_content(block: s.ContentBlock) -> s.ContentToolCallContent:
    """A content block shown in a tool call."""
    return cast(s.ContentToolCallContent, {"type": "content", "content": block})


def tool_diff_content(
    path: str, new_text: str, old_text: Optional[str] = None
) -> s.DiffToolCallContent:
    """A file edit shown as a diff (``old_text`` ``None``: a new file)."""
    return cast(
        s.DiffToolCallContent,
        {"type": "diff", "path": path, "newText": new_text, "oldText": old_text},
    )


def tool_terminal_ref(terminal_id: str) -> s.TerminalToolCallContent:
    """A terminal (from ``terminal/create``) shown live in a tool call."""
    return {"type": "terminal", "terminalId": terminal_id}


# --------------------------------------------------------------------- plan


def plan_entry(
    content: str, *, priority: s.PlanEntryPriority = "medium", status: s.PlanEntryStatus = "pending"
) -> s.PlanEntry:
    """One entry of a plan."""
    return {"content": content, "priority": priority, "status": status}


def update_plan(entries: Iterable[s.PlanEntry]) -> s.PlanSessionUpdate:
    """The whole plan (it replaces the previous one)."""
    return cast(s.PlanSessionUpdate, {"sessionUpdate": "plan", "entries": list(entries)})


# ----------------------------------------------------------------- messages


def update_user_message(content: s.ContentBlock) -> s.UserMessageChunkSessionUpdate:
    """A chunk of the user's message (a replay in ``session/load``)."""
    return {"sessionUpdate": "user_message_chunk", "content": content}


def update_user_message_text(text: str) -> s.UserMessageChunkSessionUpdate:
    """:func:`update_user_message` of a text block."""
    return update_user_message(text_block(text))


def update_agent_message(content: s.ContentBlock) -> s.AgentMessageChunkSessionUpdate:
    """A chunk of the agent's reply."""
    return {"sessionUpdate": "agent_message_chunk", "content": content}


def update_agent_message_text(text: str) -> s.AgentMessageChunkSessionUpdate:
    """:func:`update_agent_message` of a text block."""
    return update_agent_message(text_block(text))


def update_agent_thought(content: s.ContentBlock) -> s.AgentThoughtChunkSessionUpdate:
    """A chunk of the agent's reasoning."""
    return {"sessionUpdate": "agent_thought_chunk", "content": content}


def update_agent_thought_text(text: str) -> s.AgentThoughtChunkSessionUpdate:
    """:func:`update_agent_thought` of a text block."""
    return update_agent_thought(text_block(text))


def update_available_commands(
    commands: Iterable[s.AvailableCommand],
) -> s.AvailableCommandsUpdateSessionUpdate:
    """The slash commands the agent offers now."""
    return cast(
        s.AvailableCommandsUpdateSessionUpdate,
        {"sessionUpdate": "available_commands_update", "availableCommands": list(commands)},
    )


def update_current_mode(current_mode_id: str) -> s.CurrentModeUpdateSessionUpdate:
    """The session switched to another mode."""
    return {"sessionUpdate": "current_mode_update", "currentModeId": current_mode_id}


def session_notification(session_id: str, update: Any) -> s.SessionNotification:
    """The params of ``session/update``: ``update`` for ``session_id``."""
    return cast(s.SessionNotification, {"sessionId": session_id, "update": update})


# --------------------------------------------------------------- tool calls


def _tool_call(tag: str, tool_call_id: str, fields: Dict[str, Any]) -> Dict[str, Any]:
    """A ``tool_call``/``tool_call_update`` from the builders' keyword
    arguments (snake case) in wire names, without those not given."""
    wire = {"raw_input": "rawInput", "raw_output": "rawOutput"}
    members = {wire.get(k, k): v for k, v in fields.items()}
    for listed in ("content", "locations"):
        if members.get(listed) is not None:
            members[listed] = list(members[listed])
    return _compact(sessionUpdate=tag, toolCallId=tool_call_id, **members)


def start_tool_call(
    tool_call_id: str,
    title: str,
    *,
    kind: Optional[s.ToolKind] = None,
    status: Optional[s.ToolCallStatus] = None,
    content: Optional[Sequence[s.ToolCallContent]] = None,
    locations: Optional[Sequence[s.ToolCallLocation]] = None,
    raw_input: Any = None,
    raw_output: Any = None,
) -> s.ToolCallSessionUpdate:
    """A new tool call (``sessionUpdate: "tool_call"``)."""
    fields = dict(locals())
    del fields["tool_call_id"]
    return cast(s.ToolCallSessionUpdate, _tool_call("tool_call", tool_call_id, fields))


def start_read_tool_call(
    tool_call_id: str,
    title: str,
    path: str,
    *,
    extra_options: Optional[Sequence[s.ToolCallContent]] = None,
) -> s.ToolCallSessionUpdate:
    """A pending ``read`` tool call of one file: its location, and
    ``rawInput: {"path": path}``; ``extra_options`` become its content."""
    return start_tool_call(
        tool_call_id,
        title,
        kind="read",
        status="pending",
        content=extra_options,
        locations=[{"path": path}],
        raw_input={"path": path},
    )


def start_edit_tool_call(
    tool_call_id: str,
    title: str,
    path: str,
    content: Any,
    *,
    extra_options: Optional[Sequence[s.ToolCallContent]] = None,
) -> s.ToolCallSessionUpdate:
    """A pending ``edit`` tool call of one file: its location, and
    ``rawInput: {"path": path, "content": content}``; ``extra_options``
    (a :func:`tool_diff_content`, say) become its content."""
    return start_tool_call(
        tool_call_id,
        title,
        kind="edit",
        status="pending",
        content=extra_options,
        locations=[{"path": path}],
        raw_input={"path": path, "content": content},
    )


def update_tool_call(
    tool_call_id: str,
    *,
    title: Optional[str] = None,
    kind: Optional[s.ToolKind] = None,
    status: Optional[s.ToolCallStatus] = None,
    content: Optional[Sequence[s.ToolCallContent]] = None,
    locations: Optional[Sequence[s.ToolCallLocation]] = None,
    raw_input: Any = None,
    raw_output: Any = None,
) -> s.ToolCallUpdateSessionUpdate:
    """A change to a tool call: only the given fields (``content`` and
    ``locations`` replace the previous ones whole)."""
    fields = dict(locals())
    del fields["tool_call_id"]
    return cast(s.ToolCallUpdateSessionUpdate, _tool_call("tool_call_update", tool_call_id, fields))


__all__ = [
    "audio_block",
    "embedded_blob_resource",
    "embedded_text_resource",
    "image_block",
    "plan_entry",
    "resource_block",
    "resource_link_block",
    "session_notification",
    "start_edit_tool_call",
    "start_read_tool_call",
    "start_tool_call",
    "text_block",
    "tool_content",
    "tool_diff_content",
    "tool_terminal_ref",
    "update_agent_message",
    "update_agent_message_text",
    "update_agent_thought",
    "update_agent_thought_text",
    "update_available_commands",
    "update_current_mode",
    "update_plan",
    "update_tool_call",
    "update_user_message",
    "update_user_message_text",
]
