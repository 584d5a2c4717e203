"""``threadgate people list | show | add | link | unlink | remove``: the directory of people."""

from __future__ import annotations

import argparse
from typing import Any

from gateway.base.ids import is_identity, person_examples
from gateway.base.models import Person, person_id
from gateway.client import Threadgate
from gateway.process.commands import Exit, emit_json, fail, run_api


def _checked(args: argparse.Namespace) -> str | None:
    """Why the arguments cannot be sent (None: they can)."""
    try:
        person_id(args.person)
    except ValueError as exc:
        return f"not a person: {args.person} ({exc})"
    bad = [identity for identity in getattr(args, "identities", None) or [] if not is_identity(identity)]
    if bad:
        return f"not an identity: {', '.join(bad)} (use <platform>:<id>, such as {person_examples()})"
    return None


def _show(args: argparse.Namespace, person: Person) -> int:
    if args.json:
        emit_json(person.model_dump(mode="json"))
        return Exit.OK
    print(f"person:{person.person}" + (f"  {person.name}" if person.name else ""))
    if person.email:
        print(f"  email       {person.email}")
    print(f"  identities  {', '.join(person.identities) or '(none)'}")
    print(f"  groups      {', '.join(person.groups) or '(none)'}")
    return Exit.OK


def list_command(args: argparse.Namespace) -> int:
    async def work(client: Threadgate) -> int:
        people = await client.list_people()
        if args.json:
            emit_json({"items": [person.model_dump(mode="json") for person in people]})
        elif not people:
            print("The directory has nobody in it yet: add someone with `threadgate people add`.")
        else:
            for person in people:
                identities = ", ".join(person.identities) or "-"
                print(
                    f"person:{person.person}\t{person.name or '-'}\t{identities}\t{','.join(person.groups)}"
                )
        return Exit.OK

    return run_api(args.url, work)


def show_command(args: argparse.Namespace) -> int:
    if (problem := _checked(args)) is not None:
        return fail(problem, Exit.USAGE)

    async def work(client: Threadgate) -> int:
        return _show(args, await client.get_person(args.person))

    return run_api(args.url, work)


def add_command(args: argparse.Namespace) -> int:
    if (problem := _checked(args)) is not None:
        return fail(problem, Exit.USAGE)

    async def work(client: Threadgate) -> int:
        person = await client.put_person(
            args.person, name=args.name, email=args.email, identities=args.identities, groups=args.group
        )
        return _show(args, person)

    return run_api(args.url, work)


def change_command(args: argparse.Namespace) -> int:
    """``link`` / ``unlink``: the person as stored, with identities added or taken away."""
    if (problem := _checked(args)) is not None:
        return fail(problem, Exit.USAGE)

    async def work(client: Threadgate) -> int:
        current = await client.get_person(args.person)
        identities = list(current.identities)
        if args.action == "link":
            identities += [identity for identity in args.identities if identity not in identities]
        else:
            identities = [identity for identity in identities if identity not in args.identities]
        updated = await client.put_person(
            current.person,
            name=current.name,
            email=current.email,
            identities=identities,
            groups=current.groups,
        )
        return _show(args, updated)

    return run_api(args.url, work)


def remove_command(args: argparse.Namespace) -> int:
    if (problem := _checked(args)) is not None:
        return fail(problem, Exit.USAGE)

    async def work(client: Threadgate) -> int:
        removed = await client.delete_person(args.person)
        if args.json:
            emit_json(removed.model_dump(mode="json"))
        else:
            print(f"Removed person:{removed.person}; their identities answer as nobody's now.")
        return Exit.OK

    return run_api(args.url, work)


def add_parsers(commands: Any, common: argparse.ArgumentParser) -> None:
    people = commands.add_parser(
        "people",
        help="manage the directory of people: one person behind several chat identities",
        description="A person links chat identities (one identity belongs to one person) and belongs to "
        "groups; approver lists may name person:<id> and group:<name>. Needs an operator token "
        "(THREADGATE_TOKEN); changes need one acting for every agent.",
    )
    actions = people.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", parents=[common], help="everyone in the directory")
    listing.set_defaults(handler=list_command)
    show = actions.add_parser("show", parents=[common], help="one person")
    show.add_argument("person", metavar="PERSON", help="alice or person:alice")
    show.set_defaults(handler=show_command)
    add = actions.add_parser("add", parents=[common], help="add (or replace) a person")
    add.add_argument("person", metavar="PERSON", help="an id of a-z, 0-9, '.', '_', '-'")
    add.add_argument("identities", nargs="*", metavar="IDENTITY", help=f"such as {person_examples()}")
    add.add_argument("--name", help="the person's name, as people see it")
    add.add_argument("--email", help="the email sign-in matches them by")
    add.add_argument("--group", action="append", default=[], metavar="GROUP", help="a group (repeatable)")
    add.set_defaults(handler=add_command)
    for name, verb in (("link", "link identities to"), ("unlink", "unlink identities from")):
        change = actions.add_parser(name, parents=[common], help=f"{verb} a person")
        change.add_argument("person", metavar="PERSON")
        change.add_argument("identities", nargs="+", metavar="IDENTITY")
        change.set_defaults(handler=change_command)
    remove = actions.add_parser("remove", parents=[common], help="remove a person from the directory")
    remove.add_argument("person", metavar="PERSON")
    remove.set_defaults(handler=remove_command)
