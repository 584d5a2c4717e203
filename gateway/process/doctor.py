"""``threadgate doctor``: checks the settings, Redis and each configured platform (its own checks)."""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import asdict

from pydantic import ValidationError

from gateway.base.checks import MARKS, Check
from gateway.base.logs import redact
from gateway.base.platforms import either as platforms_either
from gateway.base.settings import API_TOKENS_EXAMPLE, Settings, settings_problems
from gateway.delivery.plugins import ChannelSpec, enabled_specs, platform_settings, settings_checks, specs
from gateway.process.preflight import REDIS_TIMEOUT_S


def load_settings() -> tuple[Settings | None, list[Check]]:
    """The core's settings, once they and every installed platform's parse; else every problem found,
    the core's and each platform's (all of them, so one run of doctor shows everything to fix)."""
    failed: list[Check] = []
    settings: Settings | None = None
    try:
        settings = Settings()
    except ValidationError as exc:
        failed.append(Check.fail("settings", redact(settings_problems(exc))))
    for spec in specs():
        try:
            if settings is not None:
                platform_settings(spec, settings)
            else:  # the core's did not parse: the platform's own variables are still read
                spec.settings()
        except ValidationError as exc:
            failed.append(Check.fail("settings", redact(settings_problems(exc))))
    if failed:
        return None, failed
    return settings, [Check.ok("settings", "the environment and .env parse")]


def _scope(agents: frozenset[str] | None) -> str:
    return f" for {'|'.join(sorted(agents))}" if agents is not None else ""


def check_tokens(settings: Settings) -> list[Check]:
    try:
        tokens = settings.api_tokens()
    except ValueError as exc:
        return [Check.fail("api tokens", str(exc))]
    if not tokens:
        return [
            Check.fail(
                "api tokens",
                "THREADGATE_API_TOKENS is empty: every API call would be refused; set name:role:token "
                f"entries, such as {API_TOKENS_EXAMPLE}",
            )
        ]
    roles = {token.role for token in tokens}
    names = ", ".join(f"{token.name} ({token.role}{_scope(token.agents)})" for token in tokens)
    missing = [role for role in ("agent", "operator") if role not in roles]
    everything = [token.name for token in tokens if token.role == "agent" and token.agents is None]
    problems = []
    if everything:
        problems.append(
            f"agent token(s) {', '.join(everything)} act for every agent (*), so each can raise in, cancel "
            "and read any agent's runs: give each agent its own token (named like the agent) or list its "
            "agents (name:agent:token:ops|deploy)"
        )
    if missing:
        problems.append(
            f"no {' or '.join(missing)} token, so nobody can act as one; add an entry such as "
            + " or ".join(f"{role}-name:{role}:<secret>" for role in missing)
        )
    if problems:
        return [Check.warn("api tokens", f"{names}; {'; '.join(problems)}")]
    return [Check.ok("api tokens", names)]


async def check_redis(settings: Settings) -> list[Check]:
    """PING the configured Redis; warn when it keeps no append-only file (pending prompts need one)."""
    from gateway.process.preflight import store_problem
    from gateway.store.connection import appendonly, connect

    if not settings.redis_url:
        return [
            Check.warn(
                "redis",
                "REDIS_URL is unset: the embedded store loses every prompt on restart; set REDIS_URL "
                "(such as redis://127.0.0.1:6379/0)",
            )
        ]
    problem = await store_problem(settings.redis_url)
    if problem is not None:
        return [Check.fail("redis", problem)]
    connection = connect(settings.redis_url, max_connections=2)
    checks = [Check.ok("redis", f"{connection.description} answers")]
    try:
        async with asyncio.timeout(REDIS_TIMEOUT_S):
            persisted = await appendonly(connection.client)
        if persisted == "no":
            checks.append(
                Check.warn(
                    "redis",
                    "appendonly is off: a Redis restart loses pending prompts; enable AOF (appendonly yes)",
                )
            )
    except Exception:  # managed services may refuse CONFIG: nothing to conclude
        pass
    finally:
        await connection.client.aclose()
    return checks


def check_webhooks(settings: Settings) -> list[Check]:
    """The secret, and where each URL leads: the Redis address fails, a private range warns."""
    from gateway.delivery.webhook_targets import findings_of

    urls = settings.webhook_urls()
    if not urls:
        return []
    checks = [
        Check.fail("webhooks", finding.sentence())
        if finding.problem == "redis"
        else Check.warn("webhooks", finding.sentence())
        for finding in findings_of(settings)
    ]
    if settings.threadgate_webhook_secret is None:
        checks.append(
            Check.warn("webhooks", "THREADGATE_WEBHOOK_SECRET is unset: receivers cannot verify deliveries")
        )
    return checks or [Check.ok("webhooks", f"{len(urls)} receiver(s), deliveries signed")]


async def check_platform(spec: ChannelSpec, settings: Settings) -> list[Check]:
    """The platform's own checks, offline ones first; one that breaks is a finding, never the end of the
    report."""
    try:
        offline = settings_checks(spec, settings)
        return offline + (await spec.doctor(platform_settings(spec, settings)) if spec.doctor else [])
    except Exception as exc:
        reason = redact(str(exc)) or type(exc).__name__
        return [Check.fail(spec.name, f"its check could not run ({reason})")]


async def check_platforms(settings: Settings) -> list[Check]:
    """Every installed platform's checks, run side by side (each says nothing when not configured)."""
    results = await asyncio.gather(*(check_platform(spec, settings) for spec in specs()))
    return [check for checks in results for check in checks]


def check_channels(settings: Settings, platforms: list[Check]) -> list[Check]:
    if platforms or enabled_specs(settings):
        return []
    titles = platforms_either(spec.title for spec in specs())
    return [
        Check.warn("channels", f"no chat platform is configured: set {titles}'s settings (see .env.example)")
    ]


async def diagnose() -> list[Check]:
    """Every check, in the order a person would fix them."""
    settings, checks = load_settings()
    if settings is None:
        return checks
    checks += check_tokens(settings)
    redis, platforms = await asyncio.gather(check_redis(settings), check_platforms(settings))
    checks += redis
    checks += check_webhooks(settings)
    checks += check_channels(settings, platforms)
    return checks + platforms


def report(checks: list[Check]) -> str:
    width = max((len(check.name) for check in checks), default=0)
    lines = [f"{MARKS[check.status]} {check.name.ljust(width)}  {check.detail}" for check in checks]
    failed = sum(check.status == "fail" for check in checks)
    warned = sum(check.status == "warn" for check in checks)
    verdict = "all good" if not failed else f"{failed} problem(s) to fix"
    lines.append(f"\n{verdict}" + (f", {warned} warning(s)" if warned else ""))
    return "\n".join(lines)


def doctor_command(args: argparse.Namespace) -> int:
    """Exit 0 when nothing failed (warnings allowed), 1 otherwise."""
    from gateway.process.commands import Exit, emit_json

    checks = asyncio.run(diagnose())
    ok = not any(check.status == "fail" for check in checks)
    if args.json:
        emit_json({"ok": ok, "checks": [asdict(check) for check in checks]})
    else:
        print(report(checks))
    return int(Exit.OK if ok else Exit.FAILED)
