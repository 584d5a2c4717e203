"""``threadgate approvers add | remove | list``: who besides a run's starter may answer an agent's prompts."""

from __future__ import annotations

import argparse
from typing import Any

from gateway.base.ids import person_examples
from gateway.base.models import check_approver
from gateway.client import Threadgate
from gateway.process.commands import Exit, command_actions, emit_json, fail, run_api


def _bad_identities(identities: list[str]) -> list[str]:
    bad = []
    for identity in identities:
        try:
            check_approver(identity)
        except ValueError:
            bad.append(identity)
    return bad


def change_command(args: argparse.Namespace) -> int:
    bad = _bad_identities(args.identities)
    if bad:
        return fail(
            f"not an identity: {', '.join(bad)} (use <platform>:<id>, such as {person_examples()}, "
            "or person:<id>, group:<name>)",
            Exit.USAGE,
        )

    async def work(client: Threadgate) -> int:
        current = await client.get_agent(args.agent)
        approvers = list(current.human_input.approvers)
        if args.action == "add":
            approvers += [identity for identity in args.identities if identity not in approvers]
        else:
            approvers = [identity for identity in approvers if identity not in args.identities]
        updated = await client.put_agent(
            args.agent,
            approvers=approvers,
            expires_in_seconds=current.human_input.expires_in_seconds,
            on_unmatched_reply=current.human_input.on_unmatched_reply.value,
            approval=current.approval.model_dump(mode="json"),
            escalation=[step.model_dump(mode="json") for step in current.human_input.escalation],
            require_sign_in=current.human_input.require_sign_in,
        )
        return _show(args, updated.human_input.approvers)

    return run_api(args.url, work)


def list_command(args: argparse.Namespace) -> int:
    async def work(client: Threadgate) -> int:
        definition = await client.get_agent(args.agent)
        return _show(args, definition.human_input.approvers)

    return run_api(args.url, work)


def _show(args: argparse.Namespace, approvers: list[str]) -> int:
    if args.json:
        emit_json({"agent": args.agent, "approvers": approvers})
    elif approvers:
        print("\n".join(approvers))
    else:
        print(f"{args.agent} has no approvers: only each run's starter may answer its prompts.")
    return Exit.OK


def add_parsers(commands: Any, common: argparse.ArgumentParser) -> None:
    actions = command_actions(
        commands,
        "approvers",
        help="manage who may answer an agent's prompts besides the run's starter",
        description="An agent's approvers may answer any of its prompts, in any chat and over the API. "
        "Changing them needs an operator token (THREADGATE_TOKEN).",
    )
    for name, verb in (("add", "allow"), ("remove", "stop allowing")):
        change = actions.add_parser(
            name, parents=[common], help=f"{verb} people to answer the agent's prompts"
        )
        change.add_argument("agent", metavar="AGENT")
        change.add_argument("identities", nargs="+", metavar="IDENTITY", help=f"such as {person_examples()}")
        change.set_defaults(handler=change_command)
    listing = actions.add_parser("list", parents=[common], help="the agent's approvers")
    listing.add_argument("agent", metavar="AGENT")
    listing.set_defaults(handler=list_command)
