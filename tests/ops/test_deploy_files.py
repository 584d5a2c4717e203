"""The deploy files, checked without a container engine: compose and manifests parsed, validated offline."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"


def k8s_documents() -> list[tuple[str, dict[str, Any]]]:
    documents = []
    for path in sorted(K8S.glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if document and document.get("kind") != "Kustomization":
                documents.append((path.name, document))
    return documents


def manifest(kind: str, name: str | None = None) -> dict[str, Any]:
    found = [d for _, d in k8s_documents() if d["kind"] == kind and name in (None, d["metadata"]["name"])]
    assert len(found) == 1, f"expected one {kind} {name or ''}"
    return found[0]


# Compose ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    return loaded


def test_compose_runs_two_gateways_against_redis(compose: dict[str, Any]) -> None:
    gateway = compose["services"]["gateway"]
    assert gateway["deploy"]["replicas"] == 2
    assert gateway["environment"]["REDIS_URL"] == "redis://redis:6379/0"
    assert gateway["depends_on"]["redis"]["condition"] == "service_healthy"
    assert gateway["stop_signal"] == "SIGTERM"
    build = gateway["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"


def test_compose_redis_keeps_an_everysec_aof_on_a_volume(compose: dict[str, Any]) -> None:
    redis = compose["services"]["redis"]
    command = redis["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert command[command.index("--appendfsync") + 1] == "everysec"
    volume, target = redis["volumes"][0].split(":")
    assert target == "/data" and volume in compose["volumes"]


def test_compose_publishes_one_host_port_per_replica(compose: dict[str, Any]) -> None:
    [ports] = compose["services"]["gateway"]["ports"]
    first, last = map(int, re.fullmatch(r"127\.0\.0\.1:(\d+)-(\d+):8787", ports).groups())  # type: ignore[union-attr]
    assert last - first + 1 == compose["services"]["gateway"]["deploy"]["replicas"]


# Kubernetes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "document"), k8s_documents(), ids=lambda v: v if isinstance(v, str) else v["kind"]
)
def test_manifest_is_valid_against_the_kubernetes_schema(path: str, document: dict[str, Any]) -> None:
    kubernetes_validate.validate(document, kubernetes_validate.latest_version(), strict=True)


def test_the_schema_check_refuses_a_broken_manifest() -> None:
    broken = yaml.safe_load((K8S / "deployment.yaml").read_text())
    broken["spec"]["replicas"] = "two"
    broken["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGett"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, kubernetes_validate.latest_version(), strict=True)


def test_deployment_runs_two_replicas_with_probes_on_readyz_and_healthz() -> None:
    deployment = manifest("Deployment")
    assert deployment["spec"]["replicas"] >= 2
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert deployment["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True


def test_deployment_reads_its_tokens_from_the_secret() -> None:
    [container] = manifest("Deployment")["spec"]["template"]["spec"]["containers"]
    secret = manifest("Secret")
    refs = [source["secretRef"]["name"] for source in container["envFrom"] if "secretRef" in source]
    assert refs == [secret["metadata"]["name"]]
    assert {"THREADGATE_API_TOKENS", "SLACK_BOT_TOKEN", "TELEGRAM_BOT_TOKEN", "DISCORD_BOT_TOKEN"} <= set(
        secret["stringData"]
    )
    assert all(value == "" for key, value in secret["stringData"].items() if key != "REDIS_URL")


def test_grace_period_covers_prestop_request_grace_and_outbox_flush() -> None:
    pod = manifest("Deployment")["spec"]["template"]["spec"]
    [container] = pod["containers"]
    pre_stop = int(container["lifecycle"]["preStop"]["exec"]["command"][1])
    request_grace = int(manifest("ConfigMap")["data"]["THREADGATE_SHUTDOWN_GRACE_S"])
    assert pod["terminationGracePeriodSeconds"] > pre_stop + request_grace + 5


def test_disruption_budget_service_and_deployment_select_the_same_pods() -> None:
    labels = manifest("Deployment")["spec"]["template"]["metadata"]["labels"]
    budget = manifest("PodDisruptionBudget")
    assert budget["spec"]["minAvailable"] == 1
    assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert manifest("Service", "threadgate")["spec"]["selector"].items() <= labels.items()


def test_kustomization_lists_every_manifest() -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    files = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kustomization["resources"]) == files


def test_redis_manifest_keeps_an_everysec_aof_on_a_persistent_volume() -> None:
    redis = manifest("StatefulSet", "threadgate-redis")
    [container] = redis["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    assert args[args.index("--appendfsync") + 1] == "everysec"
    assert (
        redis["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == container["volumeMounts"][0]["name"]
    )


# Dockerfile and systemd ------------------------------------------------------------------------------


def test_dockerfile_is_pinned_slim_non_root_and_checks_health() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    base = re.search(r"^ARG PYTHON_IMAGE=(\S+)$", text, re.M)
    assert base and re.fullmatch(r"python:\d+\.\d+\.\d+-slim-\w+", base[1])
    user = re.findall(r"^USER (\S+)$", text, re.M)
    assert user and user[-1].split(":")[0] not in ("0", "root")
    assert "HEALTHCHECK" in text and "/healthz" in text
    for source in re.findall(r"^COPY (?!--from)(\S+)", text, re.M):
        assert (ROOT / source).exists(), source


def systemd_unit() -> dict[str, dict[str, str]]:
    """The unit's sections and settings (comments dropped; a repeated setting keeps its last value)."""
    parser = configparser.ConfigParser(interpolation=None, strict=False, empty_lines_in_values=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # systemd keys are case-sensitive
    parser.read_string((DEPLOY / "systemd" / "threadgate@.service").read_text())
    return {name: dict(parser[name]) for name in parser.sections()}


def test_systemd_unit_runs_one_unprivileged_process_per_port_and_stops_gracefully() -> None:
    unit = systemd_unit()
    assert set(unit) == {"Unit", "Service", "Install"}
    service = unit["Service"]
    assert service["ExecStart"].startswith("/")
    assert service["ExecStart"].endswith(" serve --port %i --workers 1")
    assert service["KillMode"] == "mixed"  # SIGTERM to the parent alone, which stops its workers
    assert service["User"] not in ("", "root", "0") and service["NoNewPrivileges"] == "yes"
    assert service["KillSignal"] == "SIGTERM" and int(service["TimeoutStopSec"]) >= 10
    assert service["Restart"] == "on-failure"
    assert unit["Install"]["WantedBy"] == "multi-user.target"


def test_systemd_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI=true and systemd-analyze is missing: install the systemd Debian package")
        pytest.skip("systemd-analyze is not installed; install the systemd package to verify the unit")
    unit = (DEPLOY / "systemd" / "threadgate@.service").read_text()
    threadgate = Path(sys.executable).with_name("threadgate")
    local = unit.replace("/opt/threadgate/bin/threadgate", str(threadgate))
    local = re.sub(r"^(User|Group)=.*$", r"\1=root", local, flags=re.M)  # no threadgate user on this machine
    instance = tmp_path / "threadgate@8787.service"
    instance.write_text(local)
    result = subprocess.run([analyze, "verify", str(instance)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "--port %i" in unit and "KillSignal=SIGTERM" in unit


def test_deploy_readme_documents_each_file() -> None:
    readme = (DEPLOY / "README.md").read_text()
    files = [
        p.relative_to(DEPLOY).as_posix() for p in DEPLOY.rglob("*") if p.is_file() and p.name != "README.md"
    ]
    missing = [name for name in files if name not in readme]
    assert not missing, f"deploy/README.md does not mention {missing}"


def test_deployment_answers_its_pod_ip_and_service_names_as_hosts() -> None:
    # Requests naming any other host are 421: Prometheus scrapes the pod IP, in-cluster clients use the
    # Service's name; the probes answer any host, so they need no entry.
    [container] = manifest("Deployment")["spec"]["template"]["spec"]["containers"]
    env = {item["name"]: item for item in container["env"]}
    service = manifest("Service", "threadgate")["metadata"]["name"]
    assert env["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    hosts = env["THREADGATE_ALLOWED_HOSTS"]["value"].split(",")
    assert "$(POD_IP)" in hosts and service in hosts
    names = list(env)
    assert names.index("POD_IP") < names.index("THREADGATE_ALLOWED_HOSTS")  # expanded only if defined first
