#!/usr/bin/env bash
# Offline validation of the Kubernetes manifests in deploy/k8s; no cluster,
# no network beyond PyPI for the first run (tools cached in a virtualenv).
#
#   1. Every resource listed in kustomization.yaml (and the ConfigMap its
#      configMapGenerator makes) against the Kubernetes JSON schemas, strict
#      mode (unknown fields are errors), for the oldest and newest Kubernetes
#      versions targeted (PyPI kubernetes-validate, schemas bundled).
#   2. The kustomization's file list matches the directory.
#   3. Cross-references and the design's invariants: names that must agree
#      (headless Service <-> StatefulSet <-> router DNS domain, Secret,
#      ConfigMaps), Pod Security "restricted" settings, probes on /healthz,
#      a grace period longer than preStop + duet's shutdown.
#   4. router.Caddyfile with `caddy validate` (Caddy 2.11 from PyPI).
#
# deploy/k8s/router-test.sh goes further: it runs the router against two real
# duet processes with a stand-in cluster DNS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../tools.sh
. "$here/../tools.sh"
cd "$here"
versions=${K8S_VERSIONS:-"1.29.0 1.37.0"}

python3 - "$versions" <<'EOF'
import glob, os, subprocess, sys, tempfile
import yaml

versions = sys.argv[1].split()
kust = yaml.safe_load(open("kustomization.yaml"))
listed = kust["resources"]
present = sorted(f for f in glob.glob("*.yaml") if f != "kustomization.yaml")
errors = []
if sorted(listed) != present:
    errors.append(f"kustomization resources {sorted(listed)} != files {present}")

docs = []
for f in listed:
    for d in yaml.safe_load_all(open(f)):
        if d:
            docs.append((f, d))
# What configMapGenerator produces (kustomize adds a hash suffix to the name
# and rewrites references; the schema check does not care).
for gen in kust.get("configMapGenerator", []):
    data = {}
    for spec in gen["files"]:
        key, _, path = spec.partition("=")
        data[key] = open(path).read()
    docs.append(("configMapGenerator", {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": gen["name"], "namespace": kust["namespace"],
                     "labels": gen.get("options", {}).get("labels", {})},
        "data": data}))

# 1. Schemas.
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "all.yaml")
    with open(path, "w") as out:
        yaml.safe_dump_all([d for _, d in docs], out)
    for v in versions:
        r = subprocess.run(["kubernetes-validate", "--strict", "-k", v, path],
                           capture_output=True, text=True)
        lines = (r.stdout + r.stderr).strip().splitlines()
        for line in lines:
            print("  " + line.replace(path, "manifests"))
        bad = [l for l in lines if not l.startswith("INFO")]
        if r.returncode != 0 or bad or len(lines) != len(docs):
            errors.append(f"schema validation against Kubernetes {v} failed")

# 2./3. Cross-references and invariants.
by_kind = {}
for f, d in docs:
    by_kind.setdefault(d["kind"], {})[d["metadata"]["name"]] = d
    if d["kind"] != "Namespace" and d["metadata"].get("namespace", kust["namespace"]) != kust["namespace"]:
        errors.append(f"{f}: {d['kind']}/{d['metadata']['name']} not in namespace {kust['namespace']}")

def need(cond, msg):
    if not cond:
        errors.append(msg)

sts = by_kind["StatefulSet"]["duet"]
svc = by_kind["Service"][sts["spec"]["serviceName"]]
need(svc["spec"].get("clusterIP") == "None", "the StatefulSet's governing Service must be headless")
need(not svc["spec"].get("publishNotReadyAddresses"), "only ready pods may be in DNS (landing + fail-fast)")
need([p["name"] for p in svc["spec"]["ports"]] == ["http"], "the SRV record needs the port named http")
need(svc["spec"]["selector"].items() <= sts["spec"]["template"]["metadata"]["labels"].items(), "Service selector must match the pods")
router = by_kind["Deployment"]["duet-router"]
renv = {e["name"]: e.get("value") for e in router["spec"]["template"]["spec"]["containers"][0]["env"]}
need(renv["DUET_PODS_DOMAIN"].startswith(svc["metadata"]["name"] + ".$(POD_NAMESPACE).svc."), "router DUET_PODS_DOMAIN must name the headless Service")
caddyfile = open("router.Caddyfile").read()
need("duet-[0-9]{1,5}" in caddyfile and sts["metadata"]["name"] == "duet", "router pod-name pattern must match the StatefulSet name")
need(by_kind["Service"]["duet-router"]["spec"]["selector"]["app.kubernetes.io/name"] == "duet-router", "router Service selector")
ing = by_kind["Ingress"]["duet"]
need(ing["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"] == "duet-router", "Ingress must send everything to the router")

for kind, name in (("StatefulSet", "duet"), ("Deployment", "duet-router")):
    pod = by_kind[kind][name]["spec"]["template"]["spec"]
    psc = pod["securityContext"]
    need(psc.get("runAsNonRoot") is True, f"{name}: runAsNonRoot")
    need(psc.get("seccompProfile", {}).get("type") == "RuntimeDefault", f"{name}: seccomp RuntimeDefault")
    need(pod.get("automountServiceAccountToken") is False, f"{name}: no service account token")
    for vol in pod.get("volumes", []):
        if "secret" in vol:
            need(vol["secret"]["secretName"] in by_kind["Secret"], f"{name}: Secret {vol['secret']['secretName']} missing")
        if "configMap" in vol:
            need(vol["configMap"]["name"] in by_kind["ConfigMap"], f"{name}: ConfigMap {vol['configMap']['name']} missing")
    for c in pod["containers"]:
        sc = c["securityContext"]
        need(sc.get("allowPrivilegeEscalation") is False, f"{name}/{c['name']}: allowPrivilegeEscalation false")
        need(sc.get("readOnlyRootFilesystem") is True, f"{name}/{c['name']}: readOnlyRootFilesystem")
        need(sc["capabilities"]["drop"] == ["ALL"], f"{name}/{c['name']}: drop ALL capabilities")
        need(set(sc["capabilities"].get("add", [])) <= {"NET_BIND_SERVICE"}, f"{name}/{c['name']}: only NET_BIND_SERVICE may be added")
        for probe in ("readinessProbe", "livenessProbe"):
            need(c[probe]["httpGet"]["path"] == "/healthz", f"{name}/{c['name']}: {probe} on /healthz")
        pre = c["lifecycle"]["preStop"]["exec"]["command"]
        need(pre[0] == "sleep", f"{name}: preStop sleep")
        # duet: SIGTERM to programs, SIGHUP, SIGKILL after 3 s, +2 s: <= 5 s.
        shutdown = 5 if name == "duet" else 10
        need(pod["terminationGracePeriodSeconds"] > int(pre[1]) + shutdown + 5,
             f"{name}: terminationGracePeriodSeconds must exceed preStop + shutdown with margin")

denv = {e["name"]: e for e in sts["spec"]["template"]["spec"]["containers"][0]["env"]}
need(denv["DUET_TOKEN_FILE"]["value"].startswith("/run/secrets/duet/"), "duet reads its token from the Secret mount")
ingress_hosts = {r["host"] for i in by_kind["Ingress"].values() for r in i["spec"]["rules"]}
allowed = set(denv.get("DUET_ALLOWED_HOST", {}).get("value", "").split(","))
need(ingress_hosts <= allowed, f"duet's DUET_ALLOWED_HOST {sorted(allowed)} must list the Ingress hosts {sorted(ingress_hosts)}")
need(len(by_kind["Secret"]["duet-token"]["stringData"]["token"]) < 16, "the placeholder token must be one duet refuses")

if errors:
    print("\n".join("ERROR " + e for e in errors))
    sys.exit(1)
print(f"  {len(docs)} resources: schemas ({', '.join(versions)}), file list and invariants ok")
EOF

caddy_home=$(mktemp -d)
trap 'rm -rf "$caddy_home"' EXIT
HOME=$caddy_home XDG_DATA_HOME=$caddy_home XDG_CONFIG_HOME=$caddy_home \
  DUET_PODS_DOMAIN=duet-pods.duet.svc.cluster.local \
  caddy validate --config router.Caddyfile --adapter caddyfile >"$caddy_home/log" 2>&1 \
  || { cat "$caddy_home/log"; exit 1; }
caddy fmt router.Caddyfile | diff -u router.Caddyfile - >/dev/null \
  || { echo "router.Caddyfile is not canonically formatted (caddy fmt)" >&2; exit 1; }
echo "  router.Caddyfile: caddy validate and caddy fmt ok"
