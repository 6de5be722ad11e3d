#!/usr/bin/env bash
# Builds the repository's Dockerfile with podman on a machine that cannot reach a container
# registry, then runs the image once and checks it. The Dockerfile's two base images (its
# RUST_IMAGE and RUNTIME_IMAGE arguments) are made here instead of pulled:
#
#   localhost/debian:bookworm-slim       Debian bookworm by `debootstrap --variant=minbase`
#                                        from a Debian mirror (packages are reachable)
#   localhost/rust:VERSION-slim-bookworm that system plus this machine's Rust toolchain
#                                        (`rustc --print sysroot`, docs left out), which must
#                                        be the version the Dockerfile pins, and this
#                                        machine's CA bundle (cargo fetches through the same
#                                        TLS-inspecting proxy the machine does)
#
# then `podman build --isolation=chroot --format docker` of the Dockerfile as it is (its
# apt-get and cargo fetch from Debian and crates.io; the OCI format would drop its
# HEALTHCHECK), and a run under runc: /health, a chat render equal to
# the host binary's, `--version` naming the commit, the non-root user, a read-only root
# filesystem, the image's own HEALTHCHECK, and SIGTERM (podman stop) ending with exit 0.
#
#   apt-get install -y podman debootstrap runc        # Debian bookworm: podman 4.3
#   scripts/image_build.sh                            # build, run, check (docs/deploy.md)
#   KEEP=1 scripts/image_build.sh                     # also keep the container's log
#
# Base images already made are reused (remove them with `podman rmi` to remake them). The
# first build takes 20-40 minutes on two cores (the `dist` profile: fat LTO, one codegen
# unit); the dependency layer is cached after that.
#
# Notes for this kind of machine: root without CAP_SYS_RESOURCE cannot raise rlimits, and
# podman asks runc for nofile/nproc limits above the current ones ("error setting rlimit
# type 7: operation not permitted"), so every container gets explicit, lower limits.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

WORK=${WORK:-/var/tmp/llm-render-image}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
SHA=$(git rev-parse --short=12 HEAD)
TAG=${TAG:-localhost/llm-render:$SHA}
PORT=${PORT:-18700}
ULIMITS=(--ulimit nofile=4096:4096 --ulimit nproc=4096:4096)
RUST_VERSION=$(sed -n 's/^ARG RUST_IMAGE=rust:\([0-9.]*\)-slim-bookworm$/\1/p' Dockerfile)
BASE=localhost/debian:$SUITE-slim
RUST=localhost/rust:$RUST_VERSION-slim-$SUITE

say() { printf '\n== %s (%ds)\n' "$*" $((SECONDS - started)); }
fail() { echo "FAIL: $*" >&2; exit 1; }
for tool in podman debootstrap runc curl python3; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (apt-get install -y podman debootstrap runc)"
done
[ -n "$RUST_VERSION" ] || fail "no 'ARG RUST_IMAGE=rust:X.Y.Z-slim-bookworm' in Dockerfile"
mkdir -p "$WORK"

if ! podman image exists "$BASE"; then
    say "debootstrap $SUITE (minbase) from $MIRROR"
    rm -rf "$WORK/rootfs"
    debootstrap --variant=minbase "$SUITE" "$WORK/rootfs" "$MIRROR" > "$WORK/debootstrap.log" 2>&1 \
        || { tail -20 "$WORK/debootstrap.log"; fail "debootstrap"; }
    rm -rf "$WORK/rootfs/var/cache/apt/archives/"*.deb "$WORK/rootfs/var/lib/apt/lists/"*
    tar -C "$WORK/rootfs" -c . | podman import --change 'CMD ["bash"]' - "$BASE"
fi

if ! podman image exists "$RUST"; then
    have=$(rustc --version | awk '{print $2}')
    [ "$have" = "$RUST_VERSION" ] || fail "the Dockerfile pins Rust $RUST_VERSION, this machine has $have"
    say "$RUST: $BASE plus this machine's Rust $have"
    sysroot=$(rustc --print sysroot)
    rm -rf "$WORK/rust" && mkdir -p "$WORK/rust/usr/local/rust" "$WORK/rust/usr/local/cargo"
    tar -C "$sysroot" --exclude=./share/doc -c . | tar -C "$WORK/rust/usr/local/rust" -x
    cp "${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}" "$WORK/rust/usr/local/ca-certificates.crt"
    container=$(podman create "${ULIMITS[@]}" "$BASE" true)
    podman cp "$WORK/rust/usr/local/." "$container:/usr/local/"
    podman commit -q \
        --change 'ENV CARGO_HOME=/usr/local/cargo' \
        --change 'ENV CARGO_HTTP_CAINFO=/usr/local/ca-certificates.crt' \
        --change 'ENV SSL_CERT_FILE=/usr/local/ca-certificates.crt' \
        --change 'ENV PATH=/usr/local/cargo/bin:/usr/local/rust/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'CMD ["bash"]' "$container" "$RUST" >/dev/null
    podman rm "$container" >/dev/null
    rm -rf "$WORK/rust"
fi

say "podman build $TAG"
podman build --isolation=chroot --format docker "${ULIMITS[@]}" \
    --build-arg RUST_IMAGE="$RUST" --build-arg RUNTIME_IMAGE="$BASE" \
    --build-arg LLM_RENDER_GIT_SHA="$SHA" \
    -t "$TAG" . 2>&1 | tee "$WORK/build.log" | grep -E '^(STEP|COMMIT)|error|warning: unused' || true
podman image exists "$TAG" || { tail -40 "$WORK/build.log"; fail "podman build"; }
size=$(podman image inspect "$TAG" --format '{{.Size}}')

say "run $TAG under runc (read-only root filesystem) on 127.0.0.1:$PORT"
name=llm-render-image-check
podman rm -f "$name" >/dev/null 2>&1 || true
# --health-interval disable: no systemd here for podman's health timer; the check is run once
# below by `podman healthcheck run`.
podman run -d --name "$name" --runtime runc "${ULIMITS[@]}" --read-only --health-interval disable \
    -p "127.0.0.1:$PORT:8000" -e LLM_RENDER_DRAIN_DELAY_SECS=1 "$TAG" >/dev/null
cleanup() {
    [ -n "${KEEP:-}" ] && podman logs "$name" > "$WORK/run.log" 2>&1
    podman rm -f "$name" >/dev/null 2>&1 || true
}
trap cleanup EXIT
for _ in $(seq 1 120); do
    curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
    sleep 0.5
done
curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null || { podman logs "$name" | tail -20; fail "/health"; }

body='{"model":"qwen3","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Grüße aus Zürich 🤖 — what is 2+2?"}],"tools":[{"type":"function","function":{"name":"add","parameters":{"type":"object","properties":{"a":{"type":"integer"}}}}}]}'
in_image=$(curl -fsS "http://127.0.0.1:$PORT/v1/chat/completions/render" -H 'content-type: application/json' -d "$body")
host_bin=${HOST_BIN:-target/release/llm-render}
if [ -x "$host_bin" ]; then
    on_host=$(printf '%s' "$body" | "$host_bin" render 2>/dev/null || true)
    python3 - "$in_image" "$on_host" <<'EOF' || fail "the image's render differs from the host binary's"
import json, sys
a = json.loads(sys.argv[1])
ids = a["token_ids"] if "token_ids" in a else a[0]["token_ids"]
print(f"chat render in the image: {len(ids)} token IDs")
if sys.argv[2].strip():
    b = json.loads(sys.argv[2])
    other = b["token_ids"] if "token_ids" in b else b[0]["token_ids"]
    assert ids == other, "token IDs differ"
    print("equal to the host binary's render")
EOF
fi
version=$(podman exec "$name" llm-render --version)
echo "version: $version"
[[ "$version" == *"$SHA"* ]] || fail "--version does not name the commit"
uid=$(podman exec "$name" id -u)
[ "$uid" = 10001 ] || fail "runs as uid $uid, not 10001"
podman healthcheck run "$name" || fail "the image's HEALTHCHECK"
echo "healthcheck: healthy; user: uid $uid; root filesystem: read-only"

say "podman stop (SIGTERM, drain)"
podman stop -t 30 "$name" >/dev/null
code=$(podman inspect "$name" --format '{{.State.ExitCode}}')
[ "$code" = 0 ] || { podman logs "$name" | tail -20; fail "exit code $code after SIGTERM"; }
echo "exit code after SIGTERM: 0"

say "ok: $TAG, $((size / 1000000)) MB"
