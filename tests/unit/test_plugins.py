"""A chat platform is a plugin: what a spec installed beside Threadgate brings, the core accepts unchanged."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import types
from collections.abc import Iterator
from importlib.metadata import EntryPoint

import pytest
from pydantic import ValidationError

from gateway.base import platforms
from gateway.base.checks import Check
from gateway.base.errors import GatewayError
from gateway.base.ids import is_channel_claim, is_identity, parse_thread_id
from gateway.base.logs import configure, event, redact
from gateway.base.models import AgentDefinition, HumanInput
from gateway.base.settings import Settings
from gateway.decision.session_threads import parse_channel_ref
from gateway.delivery.plugins import (
    ChannelSpec,
    build_channels,
    channel_spec,
    lazy_doctor,
    lazy_exports,
    platform_settings,
    spec_for,
    specs,
    when_set,
)
from gateway.process.doctor import check_platforms
from gateway.rules.ownership import claimants
from gateway.store import Store
from tests.support.acme import TOKEN, AcmeChannel, AcmeSettings, acme_installed

SHIPPED = ("discord", "email", "slack", "teams", "telegram", "web")


@pytest.fixture
def acme() -> Iterator[ChannelSpec]:
    with acme_installed() as spec:
        yield spec


def test_the_entry_points_list_every_shipped_platform() -> None:
    from importlib.metadata import entry_points

    named = {point.name: point.value for point in entry_points(group="threadgate.channels")}
    assert {name: named.get(name) for name in SHIPPED} == {
        name: f"channels.{name}.spec:SPEC" for name in SHIPPED
    }
    assert [spec.name for spec in specs() if spec.name in SHIPPED] == list(SHIPPED)


def test_each_shipped_spec_is_light_and_names_its_own_prefix() -> None:
    for name in SHIPPED:
        spec = spec_for(name)
        assert spec is not None and spec.name == name
        for example in (spec.thread_example, spec.channel_example, spec.person_example):
            assert example.startswith(f"{name}:")
        # An example is a real identity, or a placeholder (``teams:<AAD object id>``) for an opaque one.
        assert "<" in spec.person_example or spec.people.fullmatch(spec.person_example)
    assert [spec.name for spec in specs() if spec.local] == ["web"]


def test_an_unknown_platform_is_no_thread_identity_channel_or_claim() -> None:
    with pytest.raises(GatewayError) as refused:
        parse_thread_id("acme:ops:t1")
    assert refused.value.code == "INVALID_THREAD_ID"
    assert not is_identity("acme:@ada")
    assert not is_channel_claim("acme:ops")
    with pytest.raises(GatewayError):
        parse_channel_ref("acme:ops")


def test_a_platform_installed_at_run_time_is_accepted_everywhere(acme: ChannelSpec) -> None:
    thread = parse_thread_id("acme:ops:t12")
    assert (thread.platform, thread.parts) == ("acme", ("ops", "t12"))
    assert is_identity("acme:@ada")
    assert parse_channel_ref("acme:ops").parts == ("ops",)
    definition = AgentDefinition(
        name="ops", channels=["acme:ops"], human_input=HumanInput(approvers=["acme:@ada"])
    )
    assert definition.channels == ["acme:ops"]
    assert claimants({"ops": ["acme:ops"]}, "acme:ops:t12") == {"ops"}


@pytest.mark.parametrize(
    ("thread_id", "identity", "channel"),
    [
        ("acme:OPS:t1", "acme:ada", "acme:o"),
        ("acme:ops:1", "acme:@Ada", "acme:ops:x"),
        ("acme:ops", "acme:@", "acme:"),
    ],
)
def test_a_platforms_own_grammar_decides_its_forms(
    acme: ChannelSpec, thread_id: str, identity: str, channel: str
) -> None:
    with pytest.raises(GatewayError) as refused:
        parse_thread_id(thread_id)
    assert "acme:<room>:t<n>" in refused.value.message
    assert not is_identity(identity)
    with pytest.raises(GatewayError) as invalid:
        parse_channel_ref(channel)
    assert invalid.value.code == "INVALID_CHANNEL" and "acme:<room>" in invalid.value.message


def test_a_claim_and_an_approver_of_no_installed_platform_are_refused(acme: ChannelSpec) -> None:
    with pytest.raises(ValidationError, match="installed platform"):
        AgentDefinition(name="ops", channels=["zeta:ops"])
    with pytest.raises(ValidationError, match="acme:@ada"):
        HumanInput(approvers=["zeta:@ada"])


def test_its_settings_come_from_the_core_settings_keywords_and_the_environment(
    acme: ChannelSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_ROOMS", "9")
    own = platform_settings(acme, Settings(_env_file=None, acme_token=TOKEN))
    assert isinstance(own, AcmeSettings)
    assert (own.acme_token is not None and own.acme_token.get_secret_value(), own.acme_rooms) == (TOKEN, 9)
    assert platform_settings(acme, Settings(_env_file=None, acme_rooms=4)).acme_rooms == 4


def test_serve_builds_it_only_when_its_settings_enable_it(acme: ChannelSpec) -> None:
    assert not any(isinstance(channel, AcmeChannel) for channel in build_channels(Settings(_env_file=None)))
    built = build_channels(Settings(_env_file=None, acme_token=TOKEN))
    assert [channel.platform for channel in built] == ["acme"]


async def test_doctor_runs_its_checks(acme: ChannelSpec) -> None:
    checks = await check_platforms(Settings(_env_file=None, acme_token=TOKEN, acme_rooms=2))
    assert [(check.name, check.detail) for check in checks if check.name == "acme"] == [
        ("acme", "token works for 2 rooms")
    ]


def test_its_token_shapes_never_reach_a_log_line(
    acme: ChannelSpec, capsys: pytest.CaptureFixture[str]
) -> None:
    assert redact(f"token {TOKEN} refused") == "token *** refused"
    configure("INFO")
    event("channel.failed", error=f"refused {TOKEN}")
    assert TOKEN not in capsys.readouterr().err


def _entry_points(*points: EntryPoint) -> object:
    return lambda group: [point for point in points if point.group == group]


def test_a_broken_entry_point_is_logged_and_skipped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    configure("INFO")
    points = (
        EntryPoint("web", "channels.web.spec:SPEC", platforms.GROUP),
        EntryPoint("gone", "threadgate_no_such_package.spec:SPEC", platforms.GROUP),
        EntryPoint("odd", "logging:INFO", platforms.GROUP),
    )
    monkeypatch.setattr(platforms, "entry_points", _entry_points(*points))
    monkeypatch.setattr(platforms, "_installed", None)
    assert [spec.name for spec in specs()] == ["web"]
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    skipped = {line["entry_point"]: line for line in lines if line["event"] == "plugins.skipped"}
    assert set(skipped) == {"gone", "odd"}
    assert skipped["gone"]["level"] == logging.getLevelName(logging.WARNING).lower()
    assert (
        "ModuleNotFoundError" in skipped["gone"]["reason"] and "not a ChannelSpec" in skipped["odd"]["reason"]
    )


def test_a_spec_that_breaks_the_naming_rule_is_refused() -> None:
    from dataclasses import replace

    from tests.support.acme import SPEC

    with pytest.raises(ValueError, match="not a platform"):
        platforms.add(replace(SPEC, name="Acme"))


def test_env_example_lists_every_core_and_platform_setting() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / ".env.example").read_text("utf-8")
    listed = {
        line.split("=", 1)[0].lower() for line in text.splitlines() if line and not line.startswith("#")
    }
    fields = set(Settings.model_fields)
    for spec in specs():
        if spec.name in SHIPPED:
            fields |= set(spec.settings.model_fields)
    assert fields - listed == set()


def test_a_platform_token_given_to_the_core_settings_never_prints(acme: ChannelSpec) -> None:
    settings = Settings(_env_file=None, acme_token=TOKEN)
    assert TOKEN not in repr(settings) and TOKEN not in str(settings)
    assert platform_settings(acme, settings).acme_token.get_secret_value() == TOKEN


def test_doctor_names_a_platform_setting_that_does_not_parse(
    acme: ChannelSpec, monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    from gateway.process.doctor import load_settings

    monkeypatch.chdir(str(tmp_path))
    monkeypatch.setenv("ACME_ROOMS", "many")
    settings, [check] = load_settings()
    assert settings is None
    assert (check.name, check.status) == ("settings", "fail") and "ACME_ROOMS" in check.detail


async def test_a_definition_naming_a_platform_no_longer_installed_still_reads(store: Store) -> None:
    """Approvers and claims were checked when written; once their platform's package is gone they match
    nobody, and reading the definition back is no error."""
    with acme_installed():
        await store.put_agent(
            AgentDefinition(
                name="ops",
                human_input=HumanInput(approvers=["acme:@ada", "web:bob"]),
                channels=["acme:ops"],
            )
        )
    store._settings.clear()  # what another process, started without the package, would read
    definition = await store.get_agent("ops")
    assert definition is not None
    assert definition.human_input.approvers == ["acme:@ada", "web:bob"]
    assert definition.channels == ["acme:ops"]
    assert (await store.human_input("ops")).approvers == []
    with pytest.raises(ValidationError):
        HumanInput(approvers=["acme:@ada"])  # what a client sends is still checked


@pytest.mark.parametrize(
    ("exports", "name", "found"),
    [
        ({"dumps": "json"}, "dumps", "dumps"),
        ({"dumps": "json"}, "loads", None),
        ({}, "dumps", None),
    ],
)
def test_a_platform_package_imports_an_exported_name_only_when_it_is_used(
    exports: dict[str, str], name: str, found: str | None
) -> None:
    getattr_ = lazy_exports("channels.acme", exports)
    if found is None:
        with pytest.raises(AttributeError, match=f"module 'channels.acme' has no attribute '{name}'"):
            getattr_(name)
    else:
        assert getattr_(name).__name__ == found


def test_the_shipped_platform_packages_load_no_sdk_until_their_channel_is_used() -> None:
    code = (
        "import sys, channels.slack, channels.telegram, channels.discord, channels.web\n"
        "assert not {'slack_bolt', 'telegram', 'discord'} & set(sys.modules), sorted(sys.modules)\n"
        "from channels.discord import DiscordChannel\n"
        "assert 'discord' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_a_platforms_doctor_check_is_imported_only_when_the_doctor_runs() -> None:
    code = (
        "import asyncio, sys\n"
        "from channels.slack.spec import SPEC\n"
        "from channels.slack.settings import SlackSettings\n"
        "assert 'channels.slack.doctor' not in sys.modules\n"
        "assert asyncio.run(SPEC.doctor(SlackSettings(_env_file=None))) == []\n"
        "assert 'channels.slack.doctor' in sys.modules\n"
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith("SLACK_")}
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=env)


async def test_a_lazy_doctor_runs_its_modules_check(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("acme_doctor")

    async def check(settings: object) -> list[Check]:
        return [Check.ok("acme", f"checked {settings}")]

    module.check = check  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "acme_doctor", module)

    assert await lazy_doctor("acme_doctor")("these settings") == [Check.ok("acme", "checked these settings")]


def test_a_spec_built_from_pattern_strings_reuses_its_thread_grammar_and_names_people_by_prefix() -> None:
    spec = channel_spec(
        "acme",
        "Acme Chat",
        AcmeSettings,
        threads=r"acme:(?P<room>\w{2,10})",
        thread_example="acme:<room>",
        person_example="acme:ada",
        enabled=when_set("acme_token"),
        build=lambda settings: AcmeChannel(),
        secrets=(r"acme-[a-z]{24}",),
    )
    assert spec.channels.pattern == spec.threads.pattern and spec.channel_example == "acme:<room>"
    assert spec.threads.fullmatch("acme:ops") and not spec.threads.fullmatch("acme:été")  # ASCII only
    assert spec.people.fullmatch("acme:@ada.lovelace") and not spec.people.fullmatch("acme:a b")
    assert not spec.people.fullmatch("acmeX:ada") and not spec.people.fullmatch("acme:" + "a" * 129)
    assert spec.secrets[0].search("token acme-" + "x" * 24)
    assert spec.enabled(AcmeSettings(acme_token=TOKEN)) and not spec.enabled(AcmeSettings(acme_token=None))
