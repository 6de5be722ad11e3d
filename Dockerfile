# syntax=docker/dockerfile:1
# Build: docker build -t llm-render .
# Run:   docker run -p 8000:8000 llm-render                 (embedded Qwen3 model)
#        docker run -p 8000:8000 -v /models/x:/models/x llm-render serve --host 0.0.0.0 --model x=/models/x
FROM rust:1-slim-bookworm AS build
WORKDIR /src
RUN apt-get update && apt-get install -y --no-install-recommends pkg-config gcc g++ make && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cargo build --release --locked --bin llm-render && strip target/release/llm-render

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --no-create-home llmrender
COPY --from=build /src/target/release/llm-render /usr/local/bin/llm-render
USER 10001
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 CMD curl -fsS http://127.0.0.1:8000/health || exit 1
ENTRYPOINT ["llm-render"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
