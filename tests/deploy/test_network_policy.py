"""k8s/networkpolicy.yaml: who may reach the heka pods (docs/security.md, "Who is who").

There is no cluster here, so the policy is read by a small model of how Kubernetes applies
NetworkPolicy (the Kubernetes docs, "Network Policies": a selected pod is isolated in each
direction its policies name; a connection is allowed when some rule admits both its peer and
its port; an absent or empty `from`, `to` or `ports` admits everything). The model raises on
anything it does not know, so a new construct in the policy fails here instead of passing.
The last tests show the model catching the ways a policy opens up.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest
from deploy_helpers import require_module

yaml = require_module("yaml")

HEKA_NS = "heka"  # the manifests carry no namespace: the one they are applied in


@dataclass(frozen=True)
class Pod:
    namespace: str
    labels: dict[str, str] = field(default_factory=dict)
    namespace_labels: dict[str, str] = field(default_factory=dict)

    def ns_labels(self) -> dict[str, str]:
        # Every namespace carries its own name as a label (Kubernetes >= 1.21).
        return {"kubernetes.io/metadata.name": self.namespace, **self.namespace_labels}


def matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    unknown = set(selector) - {"matchLabels", "matchExpressions"}
    if unknown:
        raise ValueError(f"selector fields the model does not know: {unknown}")
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values", [])
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
        if op not in {"In", "NotIn", "Exists", "DoesNotExist"}:
            raise ValueError(f"selector operator the model does not know: {op}")
    return True


def peer_admits(peer: dict[str, Any], source: Pod) -> bool:
    unknown = set(peer) - {"podSelector", "namespaceSelector"}
    if unknown:  # ipBlock admits addresses, not pods: the model has no answer for it
        raise ValueError(f"peer fields the model does not know: {unknown}")
    if "namespaceSelector" in peer:
        if not matches(peer["namespaceSelector"], source.ns_labels()):
            return False
    elif source.namespace != HEKA_NS:  # a bare podSelector means the policy's namespace
        return False
    return matches(peer.get("podSelector", {}), source.labels)


def port_admits(ports: list[dict[str, Any]] | None, port: tuple[str, int]) -> bool:
    if not ports:
        return True
    name, number = port
    for entry in ports:
        unknown = set(entry) - {"port", "protocol", "endPort"}
        if unknown:
            raise ValueError(f"port fields the model does not know: {unknown}")
        if entry.get("protocol", "TCP") != "TCP":
            continue
        want = entry.get("port")
        if want is None or want in (name, number):
            return True
        if isinstance(want, int) and want <= number <= entry.get("endPort", want):
            return True
    return False


def admitted(policy: dict[str, Any], target: dict[str, str], source: Pod, port: tuple[str, int]) -> bool:
    """Whether `source` may open a TCP connection to `port` (name, number) of a pod labelled
    `target` in heka's namespace, with `policy` the only policy there."""
    spec = policy["spec"]
    if not matches(spec["podSelector"], target) or "Ingress" not in spec["policyTypes"]:
        return True  # not isolated for ingress
    for rule in spec.get("ingress") or []:
        peers = rule.get("from")
        if (not peers or any(peer_admits(p, source) for p in peers)) and port_admits(rule.get("ports"), port):
            return True
    return False


def egress_allowed(policy: dict[str, Any], target: dict[str, str], dest: Pod, port: tuple[str, int]) -> bool:
    spec = policy["spec"]
    if not matches(spec["podSelector"], target) or "Egress" not in spec["policyTypes"]:
        return True
    for rule in spec.get("egress") or []:
        peers = rule.get("to")
        if (not peers or any(peer_admits(p, dest) for p in peers)) and port_admits(rule.get("ports"), port):
            return True
    return False


@pytest.fixture(scope="module")
def docs():
    from deploy_helpers import load_manifests

    return [d for _, d in load_manifests()]


@pytest.fixture(scope="module")
def policy(docs):
    (found,) = [d for d in docs if d["kind"] == "NetworkPolicy"]
    return found


@pytest.fixture(scope="module")
def server(docs):
    """The heka pod: its labels and its named container ports."""
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    template = deployment["spec"]["template"]
    (container,) = template["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    return template["metadata"]["labels"], ports


OPTED_IN = {"heka-client": "true"}  # a namespace whose owner admits its labelled pods
BACKEND = Pod("games", {"app": "game-server", "heka-client": "true"}, OPTED_IN)
BACKEND_HERE = Pod(HEKA_NS, {"app": "game-server", "heka-client": "true"})
LOADGEN = Pod("load", {"app": "locust", "heka-client": "true"}, OPTED_IN)
PROMETHEUS = Pod("monitoring", {"app.kubernetes.io/name": "prometheus", "prometheus": "k8s"}, OPTED_IN)
# Anyone who may create a pod anywhere can give it a label; only a namespace's owner can
# label the namespace.
SELF_LABELLED = Pod("someone", {"heka-client": "true"})
FAKE_PROMETHEUS = Pod("someone", {"app.kubernetes.io/name": "prometheus"})
INGRESS = Pod("ingress-nginx", {"app.kubernetes.io/name": "ingress-nginx"})
NEIGHBOUR = Pod(HEKA_NS, {"app": "something-else"})
NOT_A_CLIENT = Pod("games", {"heka-client": "false"})
GRAFANA = Pod("monitoring", {"app.kubernetes.io/name": "grafana"})


@pytest.mark.parametrize("source", [BACKEND, BACKEND_HERE, LOADGEN], ids=["backend", "same-ns", "loadgen"])
def test_a_labelled_client_reaches_grpc_and_nothing_else(policy, server, source):
    labels, ports = server
    assert admitted(policy, labels, source, ("grpc", ports["grpc"]))
    assert not admitted(policy, labels, source, ("metrics", ports["metrics"]))


def test_prometheus_reaches_metrics_and_nothing_else(policy, server):
    labels, ports = server
    assert admitted(policy, labels, PROMETHEUS, ("metrics", ports["metrics"]))
    assert not admitted(policy, labels, PROMETHEUS, ("grpc", ports["grpc"]))


@pytest.mark.parametrize(
    "source",
    [INGRESS, NEIGHBOUR, NOT_A_CLIENT, GRAFANA, SELF_LABELLED, FAKE_PROMETHEUS],
    ids=[
        "ingress-controller",
        "unlabelled-neighbour",
        "label-false",
        "grafana",
        "self-labelled-pod-elsewhere",
        "self-labelled-prometheus-elsewhere",
    ],
)
def test_anyone_else_reaches_nothing(policy, server, source):
    labels, ports = server
    for name, number in ports.items():
        assert not admitted(policy, labels, source, (name, number)), (source, name)
    assert not admitted(policy, labels, source, ("ssh", 22))


def test_another_heka_pod_is_no_client(policy, server):
    labels, ports = server
    peer = Pod(HEKA_NS, dict(labels))
    assert not admitted(policy, labels, peer, ("grpc", ports["grpc"]))


def test_nothing_leaves_a_heka_pod(policy, server):
    labels, _ = server
    dns = Pod("kube-system", {"k8s-app": "kube-dns"})
    for dest, port in [(dns, ("dns", 53)), (BACKEND, ("http", 443)), (PROMETHEUS, ("web", 9090))]:
        assert not egress_allowed(policy, labels, dest, port), dest


def test_the_policy_selects_the_server_pods_and_names_their_ports(policy, server, docs):
    labels, ports = server
    assert matches(policy["spec"]["podSelector"], labels)
    assert policy["spec"]["podSelector"]["matchLabels"], "an empty selector would isolate every pod"
    named = {p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"]}
    assert named == set(ports), "every container port has its rule, by the name the pod gives it"
    # The ports the Services and the ServiceMonitor use are the ones admitted.
    (monitor,) = [d for d in docs if d["kind"] == "ServiceMonitor"]
    assert {e["port"] for e in monitor["spec"]["endpoints"]} == {"metrics"}
    for svc in (d for d in docs if d["kind"] == "Service"):
        for port in svc["spec"]["ports"]:
            assert port["targetPort"] in named


def test_the_client_label_is_the_one_the_docs_give():
    from deploy_helpers import ROOT

    for page in ("docs/operations.md", "docs/security.md"):
        assert 'heka-client: "true"' in (ROOT / page).read_text(), page


# The model itself: each way a policy could open up is caught.


def _open(policy, edit):
    opened = copy.deepcopy(policy)
    edit(opened["spec"])
    return opened


@pytest.mark.parametrize(
    ("edit", "source"),
    [
        (lambda s: s["ingress"][0].pop("from"), INGRESS),
        (lambda s: s["ingress"][0]["from"].__setitem__(1, {"namespaceSelector": {}}), INGRESS),
        (lambda s: s["ingress"][0]["from"][1].update(namespaceSelector={}), SELF_LABELLED),
        (lambda s: s["ingress"][0]["from"][0].update(podSelector={}), NEIGHBOUR),
        (lambda s: s["ingress"].append({}), INGRESS),
        (lambda s: s.update(policyTypes=["Egress"]), INGRESS),
        (lambda s: s.update(podSelector={"matchLabels": {"app.kubernetes.io/name": "other"}}), INGRESS),
    ],
    ids=[
        "no-from",
        "namespace-only",
        "any-namespace",
        "empty-pod-selector",
        "empty-rule",
        "no-ingress-type",
        "wrong-pods",
    ],
)
def test_the_model_sees_an_opened_policy(policy, server, edit, source):
    labels, ports = server
    assert not admitted(policy, labels, source, ("grpc", ports["grpc"]))
    assert admitted(_open(policy, edit), labels, source, ("grpc", ports["grpc"]))


def test_the_model_sees_open_egress(policy, server):
    labels, _ = server
    dns = Pod("kube-system", {"k8s-app": "kube-dns"})
    opened = _open(policy, lambda s: s.update(egress=[{"to": [{"namespaceSelector": {}}]}]))
    assert egress_allowed(opened, labels, dns, ("dns", 53))


def test_the_model_refuses_what_it_does_not_know(policy, server):
    labels, ports = server
    opened = _open(policy, lambda s: s["ingress"][0]["from"].append({"ipBlock": {"cidr": "0.0.0.0/0"}}))
    with pytest.raises(ValueError, match="ipBlock"):
        admitted(opened, labels, INGRESS, ("grpc", ports["grpc"]))
