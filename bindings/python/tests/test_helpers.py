"""The builders of libacp.helpers give the wire shapes the schema names,
leave out what is not given, and pass the core's checks."""

from libacp import helpers as h


def test_content_blocks():
    assert h.text_block("hi") == {"type": "text", "text": "hi"}
    assert h.image_block("AAA=", "image/png") == {
        "type": "image",
        "data": "AAA=",
        "mimeType": "image/png",
    }
    assert h.audio_block("AAA=", "audio/wav")["mimeType"] == "audio/wav"
    assert h.resource_link_block("a", "file:///a", size=3) == {
        "type": "resource_link",
        "name": "a",
        "uri": "file:///a",
        "size": 3,
    }
    text = h.embedded_text_resource("file:///a", "x", mime_type="text/plain")
    assert h.resource_block(text) == {
        "type": "resource",
        "resource": {"uri": "file:///a", "text": "x", "mimeType": "text/plain"},
    }


def test_session_updates():
    update = h.update_agent_message_text("Hello")
    assert h.session_notification("s1", update) == {
        "sessionId": "s1",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "Hello"},
        },
    }
    assert h.update_agent_thought_text("hm")["sessionUpdate"] == "agent_thought_chunk"
    assert h.update_user_message_text("q")["sessionUpdate"] == "user_message_chunk"
    assert h.update_plan([h.plan_entry("step", status="in_progress")]) == {
        "sessionUpdate": "plan",
        "entries": [{"content": "step", "priority": "medium", "status": "in_progress"}],
    }
    assert h.update_current_mode("code") == {
        "sessionUpdate": "current_mode_update",
        "currentModeId": "code",
    }


def test_tool_calls():
    diff = h.tool_diff_content("/p/a.py", "new", "old")
    start = h.start_edit_tool_call("t1", "Edit a.py", "/p/a.py", "new", extra_options=[diff])
    assert start == {
        "sessionUpdate": "tool_call",
        "toolCallId": "t1",
        "title": "Edit a.py",
        "kind": "edit",
        "status": "pending",
        "content": [{"type": "diff", "path": "/p/a.py", "newText": "new", "oldText": "old"}],
        "locations": [{"path": "/p/a.py"}],
        "rawInput": {"path": "/p/a.py", "content": "new"},
    }
    done = h.update_tool_call(
        "t1", status="completed", content=[h.tool_content(h.text_block("ok"))]
    )
    assert done == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t1",
        "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": "ok"}}],
    }
    assert "title" not in done and "kind" not in done
    assert h.tool_terminal_ref("term-1") == {"type": "terminal", "terminalId": "term-1"}
    read = h.start_read_tool_call("t2", "Read", "/p/b.py")
    assert read["kind"] == "read" and read["rawInput"] == {"path": "/p/b.py"}
    assert "content" not in read
