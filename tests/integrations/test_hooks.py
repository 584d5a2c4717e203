"""``threadgate hook claude|codex`` fed real-format payloads, answered from the web chat.

Each test runs the hook as the tool would (a process, JSON on stdin) against a running gateway and checks
its stdout against the decision shape the tool documents and its published schema (fixtures/README.md).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from tests.integrations.conftest import OPERATOR_TOKEN, PERSON, THREADGATE, Gateway, fixture, unique
from tests.integrations.schemas import printed
from tests.support.redis_server import free_port

DECISION = {"hookEventName": "PermissionRequest"}


def plain_bash(**overrides: Any) -> dict[str, Any]:
    """The reference's PermissionRequest sample without its "always allow" suggestion: a plain approval."""
    payload = fixture("claude_permission_request_bash.json", **overrides)
    payload.pop("permission_suggestions")
    return payload


async def start_hook(tool: str, payload: dict[str, Any] | str, env: dict[str, str], *args: str) -> Any:
    process = await asyncio.create_subprocess_exec(
        THREADGATE,
        "hook",
        tool,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    data = payload if isinstance(payload, str) else json.dumps(payload)

    async def finish() -> tuple[int, str, str]:
        out, err = await asyncio.wait_for(process.communicate(data.encode()), 30)
        return process.returncode or 0, out.decode(), err.decode()

    return asyncio.create_task(finish())


async def test_claude_approval_answered_approve_prints_allow(gateway: Gateway) -> None:
    agent = unique("claude")
    payload = plain_bash(session_id=unique("session"))
    hook = await start_hook("claude", payload, gateway.env(agent))

    prompt = await gateway.pending_prompt(agent)
    assert prompt["kind"] == "approval"
    assert prompt["tool_call"] == {"name": "Bash", "arguments": payload["tool_input"]}
    assert "rm -rf node_modules" in prompt["questions"][0]["question"]
    assert await gateway.say(prompt["thread_id"], "approve") == "answered"

    code, out, _err = await hook
    assert code == 0
    assert printed("claude", "PermissionRequest", out) == {
        "hookSpecificOutput": {**DECISION, "decision": {"behavior": "allow"}}
    }


async def test_claude_approval_answered_no_prints_deny_with_who_denied_and_why(gateway: Gateway) -> None:
    agent = unique("claude")
    payload = plain_bash(session_id=unique("session"))
    hook = await start_hook("claude", payload, gateway.env(agent))

    prompt = await gateway.pending_prompt(agent)
    await gateway.say(prompt["thread_id"], "no, not on this branch")

    code, out, _err = await hook
    decision = json.loads(out)["hookSpecificOutput"]
    printed("claude", "PermissionRequest", out)
    assert code == 0
    assert decision["hookEventName"] == "PermissionRequest"
    assert decision["decision"] == {
        "behavior": "deny",
        "message": f"Denied in chat by web:{PERSON}: no, not on this branch",
    }


async def test_claude_ask_user_question_allows_with_answers_in_updated_input(gateway: Gateway) -> None:
    agent = unique("claude")
    payload = fixture("claude_permission_request_ask_user_question.json", session_id=unique("session"))
    hook = await start_hook("claude", payload, gateway.env(agent))

    prompt = await gateway.pending_prompt(agent)
    assert prompt["kind"] == "ask_user_question"
    asked = [
        (q["question"], q["header"], q["multiSelect"], [o["label"] for o in q["options"]])
        for q in prompt["questions"]
    ]
    assert asked == [
        ("Where should the data come from?", "Data", False, ["CSV import", "Live API"]),
        ("Which sections should I include?", "Sections", True, ["KPI cards", "Table", "Chart"]),
    ]
    answers = [
        {"question_id": "q1", "answer": ["CSV import"]},
        {"question_id": "q2", "answer": ["KPI cards", "Chart"]},
    ]
    assert (
        await gateway.say(prompt["thread_id"], "CSV import · KPI cards, Chart", answers=answers) == "answered"
    )

    code, out, _err = await hook
    decision = json.loads(out)["hookSpecificOutput"]["decision"]
    printed("claude", "PermissionRequest", out)
    assert code == 0
    assert decision["behavior"] == "allow"
    # updatedInput replaces the whole input: the questions come back unchanged, with the answers beside them.
    assert decision["updatedInput"] == {
        "questions": payload["tool_input"]["questions"],
        "answers": {
            "Where should the data come from?": "CSV import",
            "Which sections should I include?": "KPI cards, Chart",
        },
    }


async def test_ask_user_question_free_text_reaches_the_tool_verbatim(gateway: Gateway) -> None:
    agent = unique("claude")
    payload = fixture("claude_permission_request_ask_user_question.json", session_id=unique("session"))
    payload["tool_input"]["questions"] = payload["tool_input"]["questions"][:1]
    hook = await start_hook("claude", payload, gateway.env(agent))

    prompt = await gateway.pending_prompt(agent)
    await gateway.say(prompt["thread_id"], "a Postgres read replica")

    _code, out, _err = await hook
    answers = json.loads(out)["hookSpecificOutput"]["decision"]["updatedInput"]["answers"]
    assert answers == {"Where should the data come from?": "a Postgres read replica"}


async def test_codex_approval_prints_only_the_fields_codex_accepts(gateway: Gateway) -> None:
    agent = unique("codex")
    payload = fixture("codex_permission_request_bash.json", session_id=unique("session"))
    approved = await start_hook("codex", payload, gateway.env(agent))
    prompt = await gateway.pending_prompt(agent)
    assert prompt["tool_call"]["arguments"]["command"] == "git push --force origin main"
    await gateway.say(prompt["thread_id"], "yes")
    _code, out, _err = await approved
    # Codex fails closed on updatedInput: an approval is the bare behavior.
    assert printed("codex", "PermissionRequest", out) == {
        "hookSpecificOutput": {**DECISION, "decision": {"behavior": "allow"}}
    }

    denied = await start_hook("codex", payload, gateway.env(agent))
    prompt = await gateway.pending_prompt(agent)
    await gateway.say(prompt["thread_id"], "deny")
    _code, out, _err = await denied
    assert printed("codex", "PermissionRequest", out)
    assert json.loads(out)["hookSpecificOutput"]["decision"] == {
        "behavior": "deny",
        "message": f"Denied in chat by web:{PERSON}.",
    }


async def test_a_declined_question_is_a_deny(gateway: Gateway) -> None:
    agent = unique("claude")
    payload = fixture("claude_permission_request_ask_user_question.json", session_id=unique("session"))
    hook = await start_hook("claude", payload, gateway.env(agent))
    prompt = await gateway.pending_prompt(agent)
    headers = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    async with httpx.AsyncClient(base_url=gateway.url, headers=headers, timeout=10) as operator:
        response = await operator.post(
            f"/v1/agents/{agent}/inputs/{prompt['prompt_id']}",
            json={"action": "decline", "from": f"web:{PERSON}"},
        )
    assert response.status_code == 200, response.text
    _code, out, _err = await hook
    assert json.loads(out)["hookSpecificOutput"]["decision"] == {
        "behavior": "deny",
        "message": "The person declined to answer in chat.",
    }


async def test_a_sessions_prompts_share_one_thread_started_by_one_header(gateway: Gateway) -> None:
    agent, session = unique("claude"), unique("session")
    payload = plain_bash(session_id=session)
    threads = []
    for _ in range(2):
        hook = await start_hook("claude", payload, gateway.env(agent))
        prompt = await gateway.pending_prompt(agent)
        threads.append(prompt["thread_id"])
        await gateway.say(prompt["thread_id"], "ok")
        await hook

    assert threads[0] == threads[1]
    assert threads[0].startswith("web:sessions-")
    headers = [
        item
        for item in await gateway.thread_items(threads[0])
        if item["metadata"].get("type") == "session_header"
    ]
    assert [item["content"][0]["text"] for item in headers] == [f"Claude Code in api, session {session[:8]}"]


async def test_a_fixed_thread_is_used_as_named(gateway: Gateway) -> None:
    agent, room = unique("claude"), unique("fixed")
    env = gateway.env(agent, THREADGATE_THREAD=f"web:{room}")
    hook = await start_hook("claude", plain_bash(), env)
    prompt = await gateway.pending_prompt(agent)
    assert prompt["thread_id"] == f"web:{room}"
    await gateway.say(prompt["thread_id"], "approve")
    _code, out, _err = await hook
    assert json.loads(out)["hookSpecificOutput"]["decision"]["behavior"] == "allow"


async def test_gateway_down_prints_nothing_and_exits_0(gateway: Gateway) -> None:
    env = gateway.env(unique("claude"), THREADGATE_URL=f"http://127.0.0.1:{free_port()}")
    hook = await start_hook("claude", fixture("claude_permission_request_bash.json"), env)
    code, out, err = await hook
    assert (code, out) == (0, "")
    assert "unavailable" in err


async def test_an_option_this_version_does_not_know_never_blocks_the_tool(gateway: Gateway) -> None:
    """Exit code 2 would block the call (a denial): a leftover option from an older setup is ignored."""
    env = gateway.env(unique("claude"), THREADGATE_URL=f"http://127.0.0.1:{free_port()}")
    payload = fixture("claude_permission_request_bash.json")
    code, out, err = await (await start_hook("claude", payload, env, "--approve", "destructive"))
    assert (code, out) == (0, "")
    assert "ignoring unknown arguments: --approve destructive" in err


async def test_prompt_that_cannot_be_posted_prints_nothing(gateway: Gateway) -> None:
    # No Slack on this gateway: the thread's channel is not configured, so nothing can be posted there.
    env = gateway.env(unique("claude"), THREADGATE_THREAD="slack:C0NOPE:1712345678.000100")
    code, out, err = await (await start_hook("claude", fixture("claude_permission_request_bash.json"), env))
    assert (code, out) == (0, "")
    assert "not configured" in err


async def test_no_answer_in_time_prints_nothing_and_withdraws_the_prompt(gateway: Gateway) -> None:
    agent = unique("claude")
    hook = await start_hook(
        "claude", fixture("claude_permission_request_bash.json"), gateway.env(agent), "--wait", "1"
    )
    prompt = await gateway.pending_prompt(agent)
    code, out, _err = await hook
    assert (code, out) == (0, "")
    settled = await gateway.prompt(prompt["prompt_id"])
    assert settled["prompt_state"] == "cancelled"
    assert settled["reason"] == "the agent stopped waiting for an answer"


async def test_malformed_input_prints_nothing(gateway: Gateway) -> None:
    code, out, err = await (await start_hook("claude", "not json", gateway.env(unique("claude"))))
    assert (code, out) == (0, "")
    assert "threadgate hook" in err


async def test_other_hook_events_are_left_alone(gateway: Gateway) -> None:
    payload = fixture("claude_permission_request_bash.json", hook_event_name="PostToolUse")
    code, out, _err = await (await start_hook("claude", payload, gateway.env(unique("claude"))))
    assert (code, out) == (0, "")


async def test_always_allow_picked_in_chat_returns_the_suggestion_as_updated_permissions(
    gateway: Gateway,
) -> None:
    agent = unique("claude")
    payload = fixture("claude/permission_request.input.json", session_id=unique("session"))
    hook = await start_hook("claude", payload, gateway.env(agent))

    prompt = await gateway.pending_prompt(agent)
    options = [(option["label"], option["description"]) for option in prompt["questions"][0]["options"]]
    assert options == [
        ("Approve", "this call only"),
        (
            "Always allow `rm -rf node_modules` in this project (your local settings)",
            "Saved in .claude/settings.local.json.",
        ),
        ("Deny", None),
    ]
    assert "rm -rf node_modules" in prompt["questions"][0]["question"]
    await gateway.say(prompt["thread_id"], "2")

    _code, out, _err = await hook
    assert printed("claude", "PermissionRequest", out) == {
        "hookSpecificOutput": {
            **DECISION,
            "decision": {"behavior": "allow", "updatedPermissions": payload["permission_suggestions"]},
        }
    }


async def test_always_allow_shows_every_rule_in_full_and_returns_exactly_that_suggestion(
    gateway: Gateway,
) -> None:
    agent = unique("claude")
    long_rule = "rm:*" + " --preserve-root=no" * 15 + " " + "x" * 10
    assert len(long_rule) == 300
    wide = {
        "type": "addRules",
        "rules": [{"toolName": "Bash", "ruleContent": long_rule}, {"toolName": "Bash"}],
        "behavior": "allow",
        "destination": "userSettings",
    }
    narrow = fixture("claude/permission_request.input.json")["permission_suggestions"][0]
    payload = fixture(
        "claude/permission_request.input.json",
        session_id=unique("session"),
        permission_suggestions=[narrow, wide],
    )
    hook = await start_hook("claude", payload, gateway.env(agent))

    prompt = await gateway.pending_prompt(agent)
    labels = [option["label"] for option in prompt["questions"][0]["options"]]
    posted = [
        item["content"][0]["text"]
        for item in await gateway.thread_items(prompt["thread_id"])
        if item["metadata"].get("type") == "pending_prompt"
    ]
    for seen in (prompt["questions"][0]["question"], posted[-1]):  # the prompt, and what the chat shows
        assert f"`{long_rule}`, every Bash call in every project (your user settings)" in seen
        assert "Saved in your user settings." in seen
    await gateway.say(prompt["thread_id"], str(labels.index(choices_label(labels)) + 1))

    _code, out, _err = await hook
    decision = printed("claude", "PermissionRequest", out)["hookSpecificOutput"]["decision"]
    assert decision == {"behavior": "allow", "updatedPermissions": [wide]}
    assert json.dumps(wide, ensure_ascii=False) in out  # byte for byte as offered


def choices_label(labels: list[str]) -> str:
    """The label of the wide suggestion: the one cut short."""
    return next(label for label in labels if label.endswith("…"))


async def test_an_approval_with_choices_still_reads_yes_and_no(gateway: Gateway) -> None:
    agent = unique("claude")
    payload = fixture("claude/permission_request.input.json", session_id=unique("session"))
    approved = await start_hook("claude", payload, gateway.env(agent))
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "yes")
    _code, out, _err = await approved
    assert printed("claude", "PermissionRequest", out)["hookSpecificOutput"]["decision"] == {
        "behavior": "allow"
    }

    denied = await start_hook("claude", payload, gateway.env(agent))
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "not now")
    _code, out, _err = await denied
    assert printed("claude", "PermissionRequest", out)["hookSpecificOutput"]["decision"]["behavior"] == "deny"


async def test_codex_always_allow_echoes_the_offered_prefix_rule(gateway: Gateway) -> None:
    agent = unique("codex")
    suggestion = {
        "type": "addRules",
        "rules": [{"type": "prefixRule", "command": ["git", "push"]}],
        "behavior": "allow",
        "destination": "projectSettings",
    }
    payload = fixture(
        "codex_permission_request_bash.json",
        session_id=unique("session"),
        permission_suggestions=[suggestion],
    )
    hook = await start_hook("codex", payload, gateway.env(agent))
    prompt = await gateway.pending_prompt(agent)
    labels = [option["label"] for option in prompt["questions"][0]["options"]]
    assert labels[1] == "Always allow commands starting `git push` in this project"
    await gateway.say(prompt["thread_id"], labels[1].lower())
    _code, out, _err = await hook
    decision = printed("codex", "PermissionRequest", out)["hookSpecificOutput"]["decision"]
    assert decision == {"behavior": "allow", "updatedPermissions": [suggestion]}


def pre_tool_use(**overrides: Any) -> dict[str, Any]:
    fresh = {"session_id": unique("session"), "tool_use_id": unique("toolu")}
    return fixture("claude/pre_tool_use.input.json", **{**fresh, **overrides})


async def test_pre_tool_use_asks_about_a_destructive_call_and_allows_it(gateway: Gateway) -> None:
    agent = unique("claude")
    hook = await start_hook("claude", pre_tool_use(), gateway.env(agent))
    prompt = await gateway.pending_prompt(agent)
    assert prompt["kind"] == "approval"
    assert prompt["tool_call"]["arguments"]["command"] == "npm test"
    await gateway.say(prompt["thread_id"], "approve")
    _code, out, _err = await hook
    assert printed("claude", "PreToolUse", out) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": f"Approved in chat by web:{PERSON}.",
        }
    }


async def test_pre_tool_use_asks_only_the_calls_the_agents_policy_names(gateway: Gateway) -> None:
    agent = unique("claude")
    await gateway.set_approval_policy(agent, {"default": "never", "tools": {"Bash": "always"}})
    session = unique("session")

    for tool_name, tool_input in (
        ("Read", {"file_path": "/srv/app/README.md"}),
        (
            "Write",
            {"file_path": "/srv/app/NOTES.md", "content": "x"},
        ),  # destructive, but the policy says never
    ):
        call = pre_tool_use(session_id=session, tool_name=tool_name, tool_input=tool_input)
        code, out, _err = await (await start_hook("claude", call, gateway.env(agent)))
        assert (code, out) == (0, "")  # no decision: Claude Code's own permission rules go on
    assert await gateway.pending(agent) == []

    bash = await start_hook("claude", pre_tool_use(session_id=session), gateway.env(agent))
    prompt = await gateway.pending_prompt(agent)
    assert (prompt["kind"], prompt["tool_call"]["name"]) == ("approval", "Bash")
    assert "npm test" in prompt["questions"][0]["question"]
    assert await gateway.say(prompt["thread_id"], "approve") == "answered"
    code, out, _err = await bash
    assert code == 0
    assert printed("claude", "PreToolUse", out) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": f"Approved in chat by web:{PERSON}.",
        }
    }


async def test_a_destructive_policy_asks_about_an_http_post_and_not_a_get(gateway: Gateway) -> None:
    agent = unique("codex")
    await gateway.set_approval_policy(agent, {"default": "destructive"})
    request = {"method": "GET", "url": "https://api.example.com/deploys"}

    read = pre_tool_use(tool_name="api_request", tool_input=request)
    code, out, _err = await (await start_hook("codex", read, gateway.env(agent)))
    assert (code, out) == (0, "")
    assert await gateway.pending(agent) == []

    write = pre_tool_use(tool_name="api_request", tool_input={**request, "method": "POST"})
    hook = await start_hook("codex", write, gateway.env(agent))
    prompt = await gateway.pending_prompt(agent)
    assert prompt["tool_call"] == {"name": "api_request", "arguments": {**request, "method": "POST"}}
    await gateway.say(prompt["thread_id"], "deny")
    _code, out, _err = await hook
    assert printed("codex", "PreToolUse", out) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": f"Denied in chat by web:{PERSON}.",
        }
    }


async def test_a_permission_request_the_policy_allows_is_left_to_the_tools_dialog(gateway: Gateway) -> None:
    agent = unique("claude")
    await gateway.set_approval_policy(agent, {"default": "always", "tools": {"Bash": "never"}})
    plain = plain_bash(session_id=unique("session"))
    with_choices = fixture("claude/permission_request.input.json", session_id=unique("session"))
    for payload in (plain, with_choices):
        code, out, _err = await (await start_hook("claude", payload, gateway.env(agent)))
        assert (code, out) == (0, "")
    assert await gateway.pending(agent) == []


async def test_pre_tool_use_catches_ask_user_question_in_any_permission_mode(gateway: Gateway) -> None:
    agent = unique("claude")
    questions = fixture("claude_permission_request_ask_user_question.json")["tool_input"]["questions"][:1]
    payload = pre_tool_use(
        permission_mode="bypassPermissions", tool_name="AskUserQuestion", tool_input={"questions": questions}
    )
    await gateway.set_approval_policy(agent, {"default": "never"})  # a question is not an approval
    hook = await start_hook("claude", payload, gateway.env(agent))
    prompt = await gateway.pending_prompt(agent)
    await gateway.say(prompt["thread_id"], "2")
    _code, out, _err = await hook
    body = printed("claude", "PreToolUse", out)["hookSpecificOutput"]
    assert body["permissionDecision"] == "allow"
    assert body["updatedInput"] == {
        "questions": questions,
        "answers": {"Where should the data come from?": "Live API"},
    }


async def test_pre_tool_use_denied_in_chat_tells_claude_who_denied(gateway: Gateway) -> None:
    agent = unique("codex")
    payload = pre_tool_use(hook_event_name="PreToolUse")
    hook = await start_hook("codex", payload, gateway.env(agent))
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "deny")
    _code, out, _err = await hook
    assert printed("codex", "PreToolUse", out) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": f"Denied in chat by web:{PERSON}.",
        }
    }


async def test_an_unanswered_call_is_deferred_and_the_resumed_run_gets_the_late_answer(
    gateway: Gateway,
) -> None:
    agent = unique("claude")
    payload = pre_tool_use()
    first = await start_hook("claude", payload, gateway.env(agent), "--wait", "1")
    prompt = await gateway.pending_prompt(agent)
    _code, out, _err = await first
    assert printed("claude", "PreToolUse", out) == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "defer"}
    }
    assert (await gateway.prompt(prompt["prompt_id"]))["prompt_state"] == "pending"  # still asked in chat

    assert await gateway.say(prompt["thread_id"], "approve") == "answered"  # while the run is stopped

    # `claude -p --resume`: the same tool call fires PreToolUse again and finds the answered prompt.
    resumed = await start_hook("claude", payload, gateway.env(agent), "--wait", "1")
    _code, out, _err = await resumed
    assert printed("claude", "PreToolUse", out)["hookSpecificOutput"]["permissionDecision"] == "allow"
    async with gateway.agent_client() as client:
        call = await client.get(
            f"/v1/sessions/{agent}:{payload['session_id']}/calls/{payload['tool_use_id']}"
        )
    assert call.json()["prompt_id"] == prompt["prompt_id"]  # one prompt, asked once


async def test_a_resumed_call_still_unanswered_defers_again_without_asking_twice(gateway: Gateway) -> None:
    agent = unique("claude")
    payload = pre_tool_use()
    for _ in range(2):
        _code, out, _err = await (await start_hook("claude", payload, gateway.env(agent), "--wait", "1"))
        assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "defer"
    async with gateway.agent_client() as client:
        pending = (await client.get("/v1/prompts", params={"state": "pending", "agent": agent})).json()
    assert len(pending["items"]) == 1


async def test_an_approval_answers_only_the_call_it_was_raised_for(gateway: Gateway) -> None:
    """Same session, same tool_use_id, another call: the stored approval is not its answer; it is asked."""
    agent = unique("claude")
    approved = pre_tool_use(tool_input={"command": "ls -la", "description": "List files"})
    hook = await start_hook("claude", approved, gateway.env(agent))
    first = await gateway.pending_prompt(agent)
    await gateway.say(first["thread_id"], "approve")
    _code, out, _err = await hook
    assert printed("claude", "PreToolUse", out)["hookSpecificOutput"]["permissionDecision"] == "allow"

    same_ids = {"session_id": approved["session_id"], "tool_use_id": approved["tool_use_id"]}
    for tool_name, tool_input in (
        ("Bash", {"command": "rm -rf /", "description": "List files"}),
        ("Bash", {"command": "ls -la", "description": "List files", "dangerouslyDisableSandbox": True}),
        ("Write", {"command": "ls -la", "description": "List files"}),
    ):
        other = pre_tool_use(**same_ids, tool_name=tool_name, tool_input=tool_input)
        hook = await start_hook("claude", other, gateway.env(agent), "--wait", "1")
        asked = await gateway.pending_prompt(agent)
        _code, out, _err = await hook
        assert printed("claude", "PreToolUse", out) == {
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "defer"}
        }, tool_input
        assert asked["tool_call"] == {"name": tool_name, "arguments": tool_input}
        assert asked["prompt_id"] != first["prompt_id"]
        await gateway.say(asked["thread_id"], "deny")  # settle it, so the next round's prompt is the only one


async def test_a_deferred_question_declined_while_the_run_was_stopped_is_denied_on_resume(
    gateway: Gateway,
) -> None:
    """A decline is the person's answer: the resumed call is refused, not asked again as if it had expired."""
    agent = unique("claude")
    questions = fixture("claude_permission_request_ask_user_question.json")["tool_input"]["questions"]
    payload = pre_tool_use(tool_name="AskUserQuestion", tool_input={"questions": questions})
    _code, out, _err = await (await start_hook("claude", payload, gateway.env(agent), "--wait", "1"))
    assert printed("claude", "PreToolUse", out)["hookSpecificOutput"]["permissionDecision"] == "defer"
    prompt = await gateway.pending_prompt(agent)

    headers = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    async with httpx.AsyncClient(base_url=gateway.url, headers=headers, timeout=10) as operator:
        declined = await operator.post(
            f"/v1/agents/{agent}/inputs/{prompt['prompt_id']}",
            json={"action": "decline", "from": f"web:{PERSON}"},
        )
    assert declined.status_code == 200, declined.text

    _code, out, _err = await (await start_hook("claude", payload, gateway.env(agent), "--wait", "1"))
    assert printed("claude", "PreToolUse", out) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "The person declined to answer in chat.",
        }
    }
    assert await gateway.pending(agent) == []  # not asked again


async def test_pre_tool_use_with_the_gateway_down_defers_or_asks(gateway: Gateway) -> None:
    env = gateway.env(unique("claude"), THREADGATE_URL=f"http://127.0.0.1:{free_port()}")
    _code, out, err = await (await start_hook("claude", pre_tool_use(), env))
    assert printed("claude", "PreToolUse", out)["hookSpecificOutput"]["permissionDecision"] == "defer"
    assert "unavailable" in err
    # The policy cannot be read either: a call it might have allowed is deferred too, never guessed at.
    read = pre_tool_use(tool_name="Read", tool_input={"file_path": "/srv/app/README.md"})
    _code, out, _err = await (await start_hook("claude", read, env))
    assert printed("claude", "PreToolUse", out) == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "defer"}
    }
    _code, out, _err = await (await start_hook("claude", pre_tool_use(), env, "--unanswered", "ask"))
    assert printed("claude", "PreToolUse", out)["hookSpecificOutput"]["permissionDecision"] == "ask"


async def test_an_mcp_form_elicitation_is_filled_in_chat(gateway: Gateway) -> None:
    agent = unique("claude")
    payload = fixture("claude/elicitation_form.input.json", session_id=unique("session"))
    hook = await start_hook("claude", payload, gateway.env(agent))
    prompt = await gateway.pending_prompt(agent)
    assert prompt["kind"] == "form"
    await gateway.say(prompt["thread_id"], "alice")
    _code, out, _err = await hook
    assert printed("claude", "Elicitation", out) == {
        "hookSpecificOutput": {
            "hookEventName": "Elicitation",
            "action": "accept",
            "content": {"username": "alice"},
        }
    }


async def test_an_mcp_url_elicitation_is_done_or_declined_in_chat(gateway: Gateway) -> None:
    agent = unique("claude")
    payload = fixture("claude/elicitation_url.input.json", session_id=unique("session"))
    for reply, action in (("done", "accept"), ("no", "decline")):
        hook = await start_hook("claude", payload, gateway.env(agent))
        prompt = await gateway.pending_prompt(agent)
        assert (prompt["kind"], prompt["url"]) == ("url", "https://auth.example.com/login")
        await gateway.say(prompt["thread_id"], reply)
        _code, out, _err = await hook
        assert printed("claude", "Elicitation", out) == {
            "hookSpecificOutput": {"hookEventName": "Elicitation", "action": action}
        }


async def test_an_elicitation_nobody_can_answer_prints_nothing(gateway: Gateway) -> None:
    env = gateway.env(unique("claude"), THREADGATE_URL=f"http://127.0.0.1:{free_port()}")
    code, out, err = await (await start_hook("claude", fixture("claude/elicitation_url.input.json"), env))
    assert (code, out) == (0, "")
    assert "unavailable" in err
