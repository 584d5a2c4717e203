"""The compose file's ``sso`` profile (Keycloak and a gateway that signs in with it), checked without a
container engine: the compose services, the realm export and the gateway's own settings must agree."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from gateway.api.signin import build_signin
from gateway.base.settings import Settings
from gateway.people.signin import SignIn
from gateway.store.signins import SignIns

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
IMPORT_DIR = "/opt/keycloak/data/import"


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    return loaded


@pytest.fixture(scope="module")
def keycloak(compose: dict[str, Any]) -> dict[str, Any]:
    service: dict[str, Any] = compose["services"]["keycloak"]
    return service


@pytest.fixture(scope="module")
def gateway_env(compose: dict[str, Any]) -> dict[str, str]:
    return {name: str(value) for name, value in compose["services"]["gateway-sso"]["environment"].items()}


@pytest.fixture(scope="module")
def realm(keycloak: dict[str, Any]) -> dict[str, Any]:
    """The realm export the keycloak service mounts into its import directory."""
    [mount] = [volume for volume in keycloak["volumes"] if f":{IMPORT_DIR}/" in volume]
    source, target, *mode = mount.split(":")
    assert mode == ["ro"] and target.endswith(".json")
    loaded: dict[str, Any] = json.loads((DEPLOY / source).read_text())
    return loaded


@pytest.fixture(scope="module")
def client(realm: dict[str, Any], gateway_env: dict[str, str]) -> dict[str, Any]:
    """The realm's client that the gateway signs in as."""
    [found] = [c for c in realm["clients"] if c["clientId"] == gateway_env["THREADGATE_OIDC_CLIENT_ID"]]
    return found


@pytest.fixture(scope="module")
def signin(gateway_env: dict[str, str]) -> SignIn:
    """Sign-in as the gateway builds it from the profile's environment."""
    settings = Settings(_env_file=None, **{name.lower(): value for name, value in gateway_env.items()})  # type: ignore[call-arg]
    assert settings.signin_configured()
    built, _ = build_signin(settings, SignIns(None))
    assert built is not None
    return built


def published(service: dict[str, Any]) -> dict[int, int]:
    """A service's published ports: container port → host port (all on 127.0.0.1)."""
    ports = {}
    for entry in service["ports"]:
        host_ip, host, container = entry.split(":")
        assert host_ip == "127.0.0.1", "the demo's ports are published on loopback only"
        ports[int(container)] = int(host)
    return ports


def test_keycloak_and_its_gateway_start_only_with_the_sso_profile(compose: dict[str, Any]) -> None:
    profiles = {name: service.get("profiles", []) for name, service in compose["services"].items()}
    assert profiles == {"redis": [], "gateway": [], "keycloak": ["sso"], "gateway-sso": ["sso"]}


def test_keycloak_is_pinned_and_imports_the_realm_at_start(
    keycloak: dict[str, Any], realm: dict[str, Any]
) -> None:
    assert re.fullmatch(r"quay\.io/keycloak/keycloak:\d+\.\d+\.\d+", keycloak["image"])
    assert keycloak["command"] == ["start-dev", "--import-realm"]
    assert realm["realm"] == "threadgate" and realm["enabled"] is True
    assert keycloak["environment"]["KC_HEALTH_ENABLED"] == "true"  # what the healthcheck reads, on :9000
    assert "/dev/tcp/localhost/9000" in keycloak["healthcheck"]["test"][1]


def test_the_issuer_is_keycloaks_hostname_and_the_realm(
    keycloak: dict[str, Any], realm: dict[str, Any], gateway_env: dict[str, str]
) -> None:
    # Keycloak writes iss (and the discovery document's issuer) from KC_HOSTNAME: the very URL the
    # gateway is given, or every token would be refused.
    hostname = keycloak["environment"]["KC_HOSTNAME"]
    assert gateway_env["THREADGATE_OIDC_ISSUER"] == f"{hostname}/realms/{realm['realm']}"


def test_the_gateway_reaches_the_issuer_at_the_address_the_browser_uses(
    compose: dict[str, Any], keycloak: dict[str, Any], gateway_env: dict[str, str]
) -> None:
    gateway = compose["services"]["gateway-sso"]
    issuer = urlsplit(gateway_env["THREADGATE_OIDC_ISSUER"])
    kc_port = int(keycloak["environment"]["KC_HTTP_PORT"])
    # The browser opens localhost:<port> on the host; the gateway, sharing Keycloak's network namespace,
    # opens localhost:<port> there. One name, one port: the published port is the one Keycloak listens on.
    assert gateway["network_mode"] == "service:keycloak"
    assert "ports" not in gateway  # a service in another's namespace publishes through it
    assert issuer.hostname == "localhost" and issuer.port == kc_port
    assert published(keycloak)[kc_port] == kc_port
    public = urlsplit(gateway_env["THREADGATE_PUBLIC_URL"])
    gateway_port = int(gateway_env["THREADGATE_PORT"])
    assert public.hostname == "localhost" and published(keycloak)[gateway_port] == public.port
    assert gateway_port != kc_port


def test_the_profiles_gateway_shares_redis_and_waits_for_keycloak(compose: dict[str, Any]) -> None:
    gateway = compose["services"]["gateway-sso"]
    assert gateway["environment"]["REDIS_URL"] == compose["services"]["gateway"]["environment"]["REDIS_URL"]
    assert gateway["depends_on"]["keycloak"]["condition"] == "service_healthy"
    assert gateway["depends_on"]["redis"]["condition"] == "service_healthy"
    assert gateway["build"] == compose["services"]["gateway"]["build"]


def test_the_realm_client_is_the_gateways_confidential_registration(
    client: dict[str, Any], signin: SignIn
) -> None:
    assert client["clientId"] == signin.client.client_id
    assert client["publicClient"] is False and client["clientAuthenticatorType"] == "client-secret"
    assert client["secret"] == signin.client.client_secret
    assert client["standardFlowEnabled"] is True
    assert client["implicitFlowEnabled"] is False and client["directAccessGrantsEnabled"] is False
    assert client["attributes"]["pkce.code.challenge.method"] == "S256"


def test_the_realm_admits_the_redirect_uri_the_gateway_sends(
    client: dict[str, Any], signin: SignIn, gateway_env: dict[str, str]
) -> None:
    assert signin.client.redirect_uri == f"{gateway_env['THREADGATE_PUBLIC_URL']}/auth/callback"
    assert signin.client.redirect_uri in client["redirectUris"]
    assert all("*" not in uri for uri in client["redirectUris"])  # exact URIs, no wildcards
    assert client["webOrigins"] == [gateway_env["THREADGATE_PUBLIC_URL"]]


def test_the_groups_mapper_puts_the_gateways_groups_claim_in_the_id_token(
    client: dict[str, Any], signin: SignIn
) -> None:
    [mapper] = [m for m in client["protocolMappers"] if m["protocolMapper"] == "oidc-group-membership-mapper"]
    config = mapper["config"]
    assert config["claim.name"] == signin.groups_claim
    assert config["full.path"] == "false"  # "sre", not "/sre": the name approver lists use (group:sre)
    assert config["id.token.claim"] == "true"


def test_the_gateways_scopes_are_keycloaks_defaults(client: dict[str, Any], signin: SignIn) -> None:
    # The client names no scopes of its own, so the realm's defaults (profile, email, …) apply: the ID
    # token carries the verified email the directory is searched by.
    assert "defaultClientScopes" not in client and "optionalClientScopes" not in client
    assert set(signin.client.scopes.split()) <= {"openid", "email", "profile"}


def test_the_demo_users_sign_in_at_once_as_people_with_groups(realm: dict[str, Any]) -> None:
    groups = {group["path"] for group in realm["groups"]}
    users = {user["username"]: user for user in realm["users"]}
    assert users["alice"]["groups"] == ["/sre"]
    for user in users.values():
        assert set(user["groups"]) <= groups
        # A verified email finds the directory person; a full profile means no form at first sign-in.
        assert user["enabled"] and user["emailVerified"] and user["email"]
        assert user["firstName"] and user["lastName"]
        [credential] = user["credentials"]
        assert credential["type"] == "password" and credential["temporary"] is False


def test_every_published_secret_says_it_is_for_local_use_only(
    keycloak: dict[str, Any], client: dict[str, Any], realm: dict[str, Any], gateway_env: dict[str, str]
) -> None:
    secrets = [
        keycloak["environment"]["KC_BOOTSTRAP_ADMIN_PASSWORD"],
        client["secret"],
        gateway_env["THREADGATE_SESSION_SECRET"],
        *(credential["value"] for user in realm["users"] for credential in user["credentials"]),
    ]
    assert all("local-only" in secret for secret in secrets), secrets


def test_the_deploy_readme_and_people_doc_walk_through_the_profile() -> None:
    readme = (DEPLOY / "README.md").read_text()
    people = (DEPLOY.parent / "docs" / "people.md").read_text()
    assert "--profile sso" in readme and "--profile sso" in people
    assert "keycloak/threadgate-realm.json" in readme
