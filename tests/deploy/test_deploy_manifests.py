"""k8s/: every core manifest validates against the Kubernetes schemas (kubernetes-validate,
strict); the CRD-based ones (ServiceMonitor, Kustomization), which kubernetes-validate has
no schema for, are checked structurally here; and the pieces fit together (selectors,
ports, probes, security context, the Secret, grace periods, the dashboard's metrics)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from deploy_helpers import (
    DOCKERFILE,
    K8S,
    parse_dockerfile,
    require_module,
    require_tool,
    resolved_env,
)

yaml = require_module("yaml")

# Kubernetes versions we validate against: the oldest we support and the newest known.
K8S_VERSIONS = ("1.28.0", "1.33.0")
CRD_KINDS = {"ServiceMonitor", "Kustomization"}

# The metric families the service exports (contract with service/, see docs/operations.md).
SERVICE_METRICS = {
    "heka_grpc_server_started_total",
    "heka_grpc_server_handled_total",
    "heka_grpc_server_handling_seconds",
    "heka_searches_total",
    "heka_search_iterations_total",
    "heka_search_duration_seconds",
    "heka_belief_fallbacks_total",
    "heka_searches_in_flight",
    "heka_searches_rejected_total",
    "heka_search_queue_length",
    "heka_search_queue_wait_seconds",
    "heka_reviews_in_flight",
    "heka_review_moves_total",
    "heka_review_duration_seconds",
    "heka_reviews_refused_total",
    "heka_games_created_total",
    "heka_games_finished_total",
    "heka_actions_applied_total",
    "heka_invalid_requests_total",
}


@pytest.fixture(scope="module")
def docs():
    from deploy_helpers import load_manifests

    return load_manifests()


def by_kind(docs, kind, name=None):
    found = [d for _, d in docs if d.get("kind") == kind and (name is None or d["metadata"]["name"] == name)]
    assert found, f"no {kind} {name or ''}"
    return found


@pytest.fixture(scope="module")
def kv():
    return require_module("kubernetes_validate")


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_core_manifests_validate_strictly(docs, kv, version):
    checked = 0
    for _path, doc in docs:
        if doc["kind"] in CRD_KINDS:
            continue
        kv.validate(doc, version, strict=True)  # raises ValidationError
        checked += 1
    # configmap, deployment, 2 services, hpa, pdb, network policy, secret example
    assert checked >= 8, checked


def test_validation_rejects_a_broken_manifest(docs, kv):
    """The check can fail: an unknown field (strict) and a wrong type are rejected."""
    (deployment,) = by_kind(docs, "Deployment")
    broken = json.loads(json.dumps(deployment))
    broken["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["grpcc"] = {"port": 1}
    with pytest.raises(kv.ValidationError):
        kv.validate(broken, K8S_VERSIONS[-1], strict=True)
    broken = json.loads(json.dumps(deployment))
    broken["spec"]["replicas"] = "two"
    with pytest.raises(kv.ValidationError):
        kv.validate(broken, K8S_VERSIONS[-1], strict=True)


def test_cli_validates_every_file():
    """The same check as CI's scripts/ci_checks.sh, through the command line."""
    tool = require_tool("kubernetes-validate")
    files = sorted(str(p) for p in K8S.glob("*.yaml"))
    result = subprocess.run(
        [tool, "--strict", "--quiet", *files], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_kustomization_lists_every_manifest_but_the_secret_example():
    kust = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert kust["apiVersion"] == "kustomize.config.k8s.io/v1beta1"
    assert kust["kind"] == "Kustomization"
    resources = set(kust["resources"])
    on_disk = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml", "secret.example.yaml"}
    assert resources == on_disk
    generated = {f for g in kust["configMapGenerator"] for f in g["files"]}
    for name in generated:
        assert (K8S / name).exists()
    assert "secret.example.yaml" not in resources  # never ship a key


def test_servicemonitor_structure_and_selection(docs):
    """CRD (monitoring.coreos.com/v1): checked by hand since no schema is available."""
    (sm,) = by_kind(docs, "ServiceMonitor")
    assert sm["apiVersion"] == "monitoring.coreos.com/v1"
    assert set(sm["spec"]) <= {"selector", "endpoints", "namespaceSelector", "jobLabel"}
    selector = sm["spec"]["selector"]["matchLabels"]
    matching = [s for s in by_kind(docs, "Service") if selector.items() <= s["metadata"]["labels"].items()]
    assert [s["metadata"]["name"] for s in matching] == ["heka"], "exactly the ClusterIP service"
    ports = {p["name"] for p in matching[0]["spec"]["ports"]}
    for ep in sm["spec"]["endpoints"]:
        assert set(ep) <= {"port", "path", "interval", "scrapeTimeout", "scheme", "honorLabels"}
        assert ep["port"] in ports
        assert ep["path"] == "/metrics"
        assert re.fullmatch(r"\d+s", ep["interval"])


def _pod(docs):
    (deployment,) = by_kind(docs, "Deployment")
    return deployment, deployment["spec"]["template"]["spec"]


def test_deployment_security_and_resources(docs):
    deployment, pod = _pod(docs)
    (container,) = pod["containers"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    # The uid matches the image's USER (numeric, non-root).
    stages = parse_dockerfile(DOCKERFILE.read_text())
    user = stages[-1].all("USER")[-1].value.split(":")[0]
    assert pod["securityContext"]["runAsUser"] == int(user)
    res = container["resources"]
    for kind in ("cpu", "memory"):
        assert kind in res["requests"] and kind in res["limits"]
    # Selector matches the pod template.
    template_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= template_labels.items()


def test_writable_mounts_cover_tmp_and_the_metrics_dir(docs):
    _, pod = _pod(docs)
    (container,) = pod["containers"]
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    (config,) = by_kind(docs, "ConfigMap", "heka-config")
    metrics_dir = config["data"]["HEKA_METRICS_DIR"]
    assert metrics_dir in mounts and "/tmp" in mounts
    for path in (metrics_dir, "/tmp"):
        assert "emptyDir" in volumes[mounts[path]]


def test_native_grpc_probes_on_the_health_service(docs):
    _, pod = _pod(docs)
    (container,) = pod["containers"]
    grpc_port = next(p["containerPort"] for p in container["ports"] if p["name"] == "grpc")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        assert container[probe]["grpc"]["port"] == grpc_port, probe
    assert container["readinessProbe"]["grpc"]["service"] == "heka.v1.GameService"


def test_state_key_comes_from_a_secret(docs):
    _, pod = _pod(docs)
    (container,) = pod["containers"]
    env = {e["name"]: e for e in container.get("env", [])}
    ref = env["HEKA_STATE_KEYS"]["valueFrom"]["secretKeyRef"]
    (config,) = by_kind(docs, "ConfigMap", "heka-config")
    assert "HEKA_STATE_KEYS" not in config["data"]
    (secret,) = by_kind(docs, "Secret", ref["name"])  # the example has the same shape
    assert ref["key"] in secret["stringData"]
    assert {c["configMapRef"]["name"] for c in container["envFrom"]} == {"heka-config"}


def test_config_ports_match_container_and_image(docs):
    _, pod = _pod(docs)
    (container,) = pod["containers"]
    (config,) = by_kind(docs, "ConfigMap", "heka-config")
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert int(config["data"]["HEKA_PORT"]) == ports["grpc"]
    assert int(config["data"]["HEKA_METRICS_PORT"]) == ports["metrics"]
    stages = parse_dockerfile(DOCKERFILE.read_text())
    env = resolved_env(stages, stages[-1])
    assert env["HEKA_PORT"] == config["data"]["HEKA_PORT"]
    # Reached through the pod's address: every address, as in the image.
    assert config["data"]["HEKA_HOST"] == env["HEKA_HOST"] == "[::]"
    for key in config["data"]:
        assert key.startswith("HEKA_"), key


def test_grace_period_covers_shutdown_delay_and_drain(docs):
    """The kubelet's SIGKILL comes after the shutdown delay, the drain, and the stop's tail:
    the margin in which the calls cut at the end of the drain are answered, the wait for their
    threads and for the event loop, and the search workers' stop, each bounded
    (service.server.STOP_TAIL_SECONDS), with room for the process to exit."""
    server = pytest.importorskip("service.server")
    _, pod = _pod(docs)
    (config,) = by_kind(docs, "ConfigMap", "heka-config")
    drain = float(config["data"]["HEKA_GRACE_SECONDS"])
    delay = float(config["data"]["HEKA_SHUTDOWN_DELAY_SECONDS"])
    assert delay > 0, "keep serving while endpoint removal propagates"
    assert pod["terminationGracePeriodSeconds"] >= delay + drain + server.STOP_TAIL_SECONDS + 5
    # Outside Kubernetes the container's stop timeout plays the grace period's part: every
    # `docker stop --time N` the image and the docs give is that period.
    root = Path(__file__).resolve().parents[2]
    sources = [root / "Dockerfile", *sorted((root / "docs").glob("*.md"))]
    timeouts = [
        (p.name, int(n)) for p in sources for n in re.findall(r"docker stop --time (\d+)", p.read_text())
    ]
    assert timeouts and all(n == pod["terminationGracePeriodSeconds"] for _, n in timeouts), timeouts


def test_the_drain_covers_the_longest_bot_call(docs):
    """A bot call admitted just before SIGTERM may run for the longest search the server
    admits (HEKA_MAX_MILLISECONDS, which caps the presets' time caps too) or the longest
    bot loop (HEKA_MAX_ADVANCE_SECONDS): the drain (HEKA_GRACE_SECONDS) must outlast both."""
    config_mod = pytest.importorskip("service.config")
    from ai.presets import PRESETS

    (config,) = by_kind(docs, "ConfigMap", "heka-config")
    cfg = config_mod.load(environ=config["data"])  # the server's own check (Config.validate)
    longest = max(
        cfg.max_milliseconds / 1000,
        cfg.max_advance_seconds,
        *(min(b.milliseconds or 0, cfg.max_milliseconds) / 1000 for b in PRESETS.values()),
    )
    assert cfg.longest_bot_call_seconds == longest
    assert cfg.grace_seconds >= longest + config_mod.STOP_MARGIN_SECONDS, (cfg.grace_seconds, longest)


def test_every_variable_is_a_server_setting(docs):
    """ConfigMap keys and the image's HEKA_* defaults name real settings with valid values."""
    from service import config as config_mod

    known = {s.env: s for s in config_mod.SETTINGS}
    (config,) = by_kind(docs, "ConfigMap", "heka-config")
    stages = parse_dockerfile(DOCKERFILE.read_text())
    image_env = {k: v for k, v in resolved_env(stages, stages[-1]).items() if k.startswith("HEKA_")}
    _, pod = _pod(docs)
    secret_env = {e["name"] for e in pod["containers"][0]["env"]}
    for source in (config["data"], image_env, dict.fromkeys(secret_env, "")):
        unknown = set(source) - set(known)
        assert not unknown, unknown
    for env in (config["data"], image_env):
        config_mod.load(environ=env)  # raises ConfigError on a bad value


def test_the_pod_admits_no_more_searches_than_it_has_workers(docs):
    """A search admitted past the pod's search workers waits for one with its deadline
    running, where the search queue's refusals (QUEUE_WAIT, QUEUE_DEADLINE) cannot see it; the
    ConfigMap once admitted 4 on 2 workers. Its workers are the CPUs it requests."""
    from service import config as config_mod

    (config,) = by_kind(docs, "ConfigMap", "heka-config")
    cfg = config_mod.load(environ=config["data"])
    _, pod = _pod(docs)
    cpus = float(pod["containers"][0]["resources"]["requests"]["cpu"])
    assert cfg.search_capacity <= cfg.workers * cfg.grpc_processes == cpus


def test_services_headless_for_round_robin_and_clusterip_for_metrics(docs):
    _, pod = _pod(docs)
    (deployment,) = by_kind(docs, "Deployment")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    services = {s["metadata"]["name"]: s for s in by_kind(docs, "Service")}
    headless = services["heka-headless"]["spec"]
    assert headless["clusterIP"] == "None"
    assert [p["appProtocol"] for p in headless["ports"]] == ["grpc"]
    regular = services["heka"]["spec"]
    assert regular.get("clusterIP") != "None"
    assert "metrics" in {p["name"] for p in regular["ports"]}
    container_ports = {p["name"] for p in pod["containers"][0]["ports"]}
    for svc in services.values():
        assert svc["spec"]["selector"].items() <= labels.items()
        for port in svc["spec"]["ports"]:
            assert port["targetPort"] in container_ports
    (config,) = by_kind(docs, "ConfigMap", "heka-config")
    assert int(config["data"]["HEKA_MAX_CONNECTION_AGE_SECONDS"]) > 0


def test_hpa_and_pdb_target_the_deployment(docs):
    (deployment,) = by_kind(docs, "Deployment")
    (hpa,) = by_kind(docs, "HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    assert [m["resource"]["name"] for m in hpa["spec"]["metrics"]] == ["cpu"]
    assert hpa["spec"]["minReplicas"] >= 2
    (pdb,) = by_kind(docs, "PodDisruptionBudget")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    # A PDB that allows no disruption at the minimum replica count would block node drains.
    spec = pdb["spec"]
    assert spec.get("maxUnavailable", 0) >= 1 or spec["minAvailable"] < hpa["spec"]["minReplicas"]


def test_the_hpa_alone_sets_the_replica_count(docs):
    """A workload that an HPA scales has no spec.replicas: `kubectl apply` would reset the
    fleet to that value on every apply (the Kubernetes HPA guide, "Migrating Deployments and
    StatefulSets to horizontal autoscaling"). scripts/ci_checks.sh checks the same."""
    targets = {
        (h["spec"]["scaleTargetRef"]["kind"], h["spec"]["scaleTargetRef"]["name"])
        for h in by_kind(docs, "HorizontalPodAutoscaler")
    }
    scaled = [d for _, d in docs if (d.get("kind"), d.get("metadata", {}).get("name")) in targets]
    assert len(scaled) == len(targets), "every HPA targets a workload of k8s/"
    for workload in scaled:
        assert "replicas" not in workload["spec"], f"{workload['kind']} {workload['metadata']['name']}"


def _dashboard():
    return json.loads((K8S / "grafana-dashboard.json").read_text())


def _metric_names(expr: str) -> set[str]:
    names = set(re.findall(r"\b(heka_[a-z_]+)", expr))
    out = set()
    for name in names:
        for suffix in ("_bucket", "_sum", "_count"):
            if name.endswith(suffix) and name[: -len(suffix)] in SERVICE_METRICS:
                name = name[: -len(suffix)]
        out.add(name)
    return out


def test_dashboard_queries_only_exported_metrics():
    dash = _dashboard()
    used: set[str] = set()
    ids = set()
    for panel in dash["panels"]:
        assert panel["id"] not in ids
        ids.add(panel["id"])
        for target in panel.get("targets", []):
            expr = target["expr"]
            assert expr.count("(") == expr.count(")"), expr
            used |= _metric_names(expr)
    assert used <= SERVICE_METRICS, used - SERVICE_METRICS
    # Every exported family is on the dashboard.
    assert used == SERVICE_METRICS, SERVICE_METRICS - used


def test_dashboard_has_rates_errors_and_latency_percentiles():
    exprs = [t["expr"] for p in _dashboard()["panels"] for t in p.get("targets", [])]
    titles = [p["title"] for p in _dashboard()["panels"]]
    assert any("by (grpc_method)" in e and "handled_total" in e for e in exprs)
    assert any('grpc_code!="OK"' in e and "grpc_method" in e for e in exprs)
    for q in ("0.5", "0.9", "0.99"):
        assert any(f"histogram_quantile({q}" in e and "handling_seconds_bucket" in e for e in exprs), q
    assert {"Latency p50 by method", "Latency p90 by method", "Latency p99 by method"} <= set(titles)


def test_dashboard_layout_does_not_overlap():
    cells = set()
    for panel in _dashboard()["panels"]:
        g = panel["gridPos"]
        assert g["x"] >= 0 and g["x"] + g["w"] <= 24
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in cells, panel["title"]
                cells.add((x, y))


def test_metric_contract_matches_the_service():
    """The families the dashboard (and docs/operations.md) rely on are the ones
    service/metrics.py defines: a renamed metric fails here, not silently in Grafana."""
    source = (Path(__file__).resolve().parents[2] / "service" / "metrics.py").read_text()
    defined = set(re.findall(r"(?:Counter|Gauge|Histogram|Summary)\(\s*\"(heka_[a-z_]+)\"", source))
    assert defined == SERVICE_METRICS


def test_dashboard_is_what_the_generator_prints():
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "scripts" / "gen_grafana_dashboard.py"
    spec = importlib.util.spec_from_file_location("gen_grafana_dashboard", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.build() == _dashboard(), (
        "run: python scripts/gen_grafana_dashboard.py > k8s/grafana-dashboard.json"
    )


def test_dashboard_rpc_panels_exclude_health_probes():
    for panel in _dashboard()["panels"]:
        for target in panel.get("targets", []):
            for selector in re.findall(r"heka_grpc_server_\w+\{([^}]*)\}", target["expr"]):
                assert 'grpc_service="heka.v1.GameService"' in selector, (panel["title"], selector)
