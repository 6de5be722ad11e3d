# syntax=docker/dockerfile:1
# Build: docker build -t llm-render .
# Run:   docker run -p 8000:8000 llm-render                 (embedded Qwen3 model)
#        docker run -p 8000:8000 -v /models/x:/models/x:ro llm-render serve --model x=/models/x
#
# The binary is the `dist` profile (fat LTO, one codegen unit; see Cargo.toml), the build
# measured for production. The toolchain is pinned to the one the project is tested with.
# The two base images are arguments so that a machine without a container registry can
# build over its own: scripts/image_build.sh makes both with debootstrap and builds this
# file with podman (docs/deploy.md, "The image").
ARG RUST_IMAGE=rust:1.95.0-slim-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${RUST_IMAGE} AS build
WORKDIR /src
RUN apt-get update && apt-get install -y --no-install-recommends pkg-config gcc g++ make \
    && rm -rf /var/lib/apt/lists/*

# Dependencies first, in a layer of their own that survives source changes: the manifests
# of every workspace member, with a stub for each target they name (a `path`, or a bench's
# file) and each library, build every dependency. The stubs' own build records are removed
# so the real sources below always rebuild the crates of this workspace.
COPY Cargo.toml Cargo.lock ./
COPY parsers/Cargo.toml parsers/
COPY fuzz/Cargo.toml fuzz/
# The patched minijinja the workspace's `[patch.crates-io]` names (vendor/minijinja/PATCH.md).
COPY vendor/ vendor/
RUN for crate in . parsers fuzz; do \
        for target in $(sed -n -e 's/^path = "\(.*\)"$/\1/p' \
                               -e '/^\[\[bench\]\]/{n;s/^name = "\(.*\)"$/benches\/\1.rs/p}' $crate/Cargo.toml); do \
            mkdir -p "$(dirname "$crate/$target")" && echo 'fn main() {}' > "$crate/$target"; \
        done; \
        mkdir -p $crate/src && touch $crate/src/lib.rs; \
    done \
    && cargo build --profile dist --locked --bin llm-render \
    && rm -rf src parsers/src fuzz/src benches target/dist/llm-render* \
       target/dist/.fingerprint/llm-render* target/dist/deps/llm_render* target/dist/deps/libllm_render*

COPY . .
# The commit for `llm_render_build_info` and `--version` (.git is not in the context):
# docker build --build-arg LLM_RENDER_GIT_SHA=$(git rev-parse --short=12 HEAD) .
ARG LLM_RENDER_GIT_SHA
RUN cargo build --profile dist --locked --bin llm-render && strip target/dist/llm-render

FROM ${RUNTIME_IMAGE}
# ca-certificates: for http(s) image URLs (--allowed-media-domains). No curl: the health
# probe is the binary itself (`llm-render health`).
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --no-create-home llmrender
COPY --from=build /src/target/dist/llm-render /usr/local/bin/llm-render
USER 10001
# The listen address as environment, which `serve` and the probe both read: another port is
# `-e LLM_RENDER_PORT=…`, and the health check follows it.
ENV LLM_RENDER_HOST=0.0.0.0 LLM_RENDER_PORT=8000
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 CMD ["llm-render", "health"]
ENTRYPOINT ["llm-render"]
CMD ["serve"]
