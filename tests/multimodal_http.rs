//! Multimodal chat render over HTTP: the Qwen2.5-VL render goldens, bad images, file and
//! http(s) URLs under their policies, and bfloat16 tensors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::vision::{data_url, image_request, post, vl_server, vl_server_named, VL_NAME};
use common::{fixtures, image_goldens as dir, image_jsonl as jsonl};
use llm_render::media;
use serde_json::Value;

#[test]
fn multimodal_render_goldens_over_http() {
    // With float tensors, which carry each image's grid (vLLM's output has it in mm_metadata).
    let base = vl_server(llm_render::render::RenderOptions {
        tensor_dtype: llm_render::render::TensorDtype::Float32,
        ..Default::default()
    });
    for g in jsonl("../render_mm/qwen2_5_vl_images.jsonl") {
        let id = g["id"].as_str().unwrap();
        let mut req = g["request"].clone();
        req["model"] = VL_NAME.into();
        let (status, body) = post(&base, &req);
        assert_eq!(status, 200, "{id}: {}", body["error"]);
        assert_eq!(body["token_ids"], g["expected_token_ids"], "{id}");
        let f = &body["features"];
        let want_ph: Vec<Value> = g["expected_mm_placeholders"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| serde_json::json!({"offset": p["offset"], "length": p["length"]}))
            .collect();
        assert_eq!(f["mm_placeholders"]["image"], Value::from(want_ph), "{id}");
        assert_eq!(f["mm_hashes"]["image"], g["expected_mm_hashes"], "{id}");
        let grids: Vec<Value> = f["mm_tensors"]["image"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["image_grid_thw"].clone())
            .collect();
        assert_eq!(Value::from(grids), g["expected_grid_thw"], "{id}");
    }
}

/// A PNG header claiming `w` x `h` pixels followed by nothing useful.
fn png_claiming(w: u32, h: u32) -> Vec<u8> {
    let mut b = vec![
        0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, b'I', b'H', b'D', b'R',
    ];
    b.extend_from_slice(&w.to_be_bytes());
    b.extend_from_slice(&h.to_be_bytes());
    b.extend_from_slice(&[8, 2, 0, 0, 0]);
    let crc = crc32(&b[12..]);
    b.extend_from_slice(&crc.to_be_bytes());
    // A small IDAT (a zlib stream of a few zero bytes): the decompression bomb's start.
    let idat: &[u8] = &[
        b'I', b'D', b'A', b'T', 0x78, 0x9c, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01,
    ];
    b.extend_from_slice(&((idat.len() - 4) as u32).to_be_bytes());
    b.extend_from_slice(idat);
    b.extend_from_slice(&crc32(idat).to_be_bytes());
    b.extend_from_slice(&[0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xae, 0x42, 0x60, 0x82]);
    b
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &byte in data {
        crc ^= byte as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

#[test]
fn bad_images_are_4xx_with_clear_messages() {
    let opts = llm_render::render::RenderOptions {
        max_images_per_request: 2,
        ..Default::default()
    };
    let base = vl_server(opts);
    let tiny = std::fs::read(dir().join("tiny_14x14.png")).unwrap();
    let jpeg = std::fs::read(dir().join("photo_1080p.jpg")).unwrap();
    let mut wide = image::RgbImage::new(201, 1);
    wide.fill(128);
    let mut wide_png = Vec::new();
    wide.write_to(
        &mut std::io::Cursor::new(&mut wide_png),
        image::ImageFormat::Png,
    )
    .unwrap();
    let rss_before = rss_kib();
    for (urls, needle) in [
        (
            vec!["data:image/png;base64,not*base64!".to_string()],
            "invalid base64",
        ),
        (
            vec![data_url("image/jpeg", &jpeg[..jpeg.len() / 3])],
            "cannot decode image",
        ),
        (
            vec![data_url("image/png", &png_claiming(100_000, 100_000))],
            "image side 100000 exceeds",
        ),
        (
            vec![data_url("image/png", &png_claiming(30_000, 30_000))],
            "more than the limit of 89478485",
        ),
        (
            vec![data_url("image/png", &wide_png)],
            "aspect ratio must be smaller than 200, got 201",
        ),
        (vec![data_url("image/png", &tiny); 3], "too many images: 3"),
        (
            vec!["https://example.com/cat.png".to_string()],
            "http(s) image URLs are refused",
        ),
        (
            vec!["ftp://example.com/cat.png".to_string()],
            "scheme not supported: ftp",
        ),
        (
            vec!["file:///etc/passwd".to_string()],
            "file: image URLs are refused",
        ),
        (
            vec![data_url("image/png", b"not an image at all")],
            "unsupported or unrecognized image format",
        ),
    ] {
        let (status, body) = post(&base, &image_request(&urls));
        let short: String = body.to_string().chars().take(300).collect();
        assert_eq!(status, 400, "{needle}: {short}");
        let msg = body["error"]["message"].as_str().unwrap();
        assert!(msg.contains(needle), "{msg:?} lacks {needle:?}");
    }
    // The 100k x 100k and 30k x 30k claims were refused from the header, not allocated.
    assert!(
        rss_kib().saturating_sub(rss_before) < 200 * 1024,
        "RSS grew by {} KiB",
        rss_kib() - rss_before
    );
    // A template that reads content as a string has no place for images.
    let (status, body) = common::start_server_and_post_qwen3_image(&data_url("image/png", &tiny));
    assert_eq!(status, 400, "{body}");
}

#[test]
fn file_urls_only_below_the_allowed_folder() {
    let root = std::env::temp_dir().join(format!("llm-render-media-{}", std::process::id()));
    let allowed = root.join("allowed");
    std::fs::create_dir_all(&allowed).unwrap();
    std::fs::copy(dir().join("tiny_14x14.png"), allowed.join("tiny.png")).unwrap();
    std::fs::write(
        root.join("secret.png"),
        std::fs::read(dir().join("tiny_14x14.png")).unwrap(),
    )
    .unwrap();
    #[cfg(unix)]
    let _ = std::os::unix::fs::symlink(root.join("secret.png"), allowed.join("link.png"));
    let allowed = std::fs::canonicalize(&allowed).unwrap();
    let mut opts = llm_render::render::RenderOptions::default();
    opts.url_policy.allowed_local_media_path = Some(allowed.clone());
    let base = vl_server(opts);
    let ok = format!("file://{}", allowed.join("tiny.png").display());
    let (status, body) = post(&base, &image_request(&[ok]));
    assert_eq!(status, 200, "{}", body["error"]);
    assert_eq!(
        body["features"]["mm_hashes"]["image"][0],
        "ae4bbf501e85e781f2fe74a6bf833aca4db825e791db1f8c4968e3a6e117f403"
    );
    for bad in [
        format!("file://{}/../secret.png", allowed.display()),
        format!("file://{}", allowed.join("link.png").display()),
        format!("file://{}", allowed.join("missing.png").display()),
        "file:///etc/passwd".to_string(),
    ] {
        let (status, body) = post(&base, &image_request(std::slice::from_ref(&bad)));
        assert_eq!(status, 400, "{bad}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("not inside --allowed-local-media-path"),
            "{bad}: {}",
            body["error"]
        );
    }
}

/// A media server on loopback: `/tiny.png`, `/big` (2 MiB), `/slow` (2 s), `/to?u=URL` (302).
fn media_server() -> String {
    use axum::response::IntoResponse;
    use axum::routing::get;
    let tiny = std::fs::read(dir().join("tiny_14x14.png")).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let app = axum::Router::new()
                .route("/tiny.png", get(move || async move { tiny.clone() }))
                .route("/big", get(|| async { vec![0u8; 2 << 20] }))
                .route(
                    "/slow",
                    get(|| async {
                        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
                        "late"
                    }),
                )
                .route(
                    "/to",
                    get(|q: axum::extract::Query<std::collections::HashMap<String, String>>| async move {
                        let to = q.get("u").cloned().unwrap_or_default();
                        (axum::http::StatusCode::FOUND, [(axum::http::header::LOCATION, to)]).into_response()
                    }),
                );
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    format!("127.0.0.1:{}", rx.recv().unwrap().port())
}

fn fetching_server(domains: &[&str], allow_private: bool, max_bytes: u64) -> String {
    let policy = media::FetchPolicy {
        allowed_domains: domains.iter().map(|d| d.to_string()).collect(),
        allow_private,
        timeout: std::time::Duration::from_millis(500),
        max_bytes,
    };
    let opts = llm_render::render::RenderOptions {
        fetcher: Some(media::Fetcher::new(policy).unwrap()),
        ..Default::default()
    };
    vl_server(opts)
}

#[test]
fn http_images_follow_the_allowlist_and_refuse_internal_addresses() {
    let media = media_server();
    let port = media.split(':').nth(1).unwrap().to_string();
    let tiny = format!("http://{media}/tiny.png");
    let expect_error = |base: &str, url: &str, needle: &str| {
        let (status, body) = post(base, &image_request(&[url.to_string()]));
        assert_eq!(status, 400, "{url}");
        let msg = body["error"]["message"].as_str().unwrap();
        assert!(msg.contains(needle), "{url}: {msg:?} lacks {needle:?}");
    };

    // Allowed and private addresses allowed (an internal image store): fetched and hashed
    // exactly as the same bytes in a data URL.
    let open = fetching_server(&["127.0.0.1"], true, 1 << 20);
    let (status, body) = post(&open, &image_request(std::slice::from_ref(&tiny)));
    assert_eq!(status, 200, "{}", body["error"]);
    assert_eq!(
        body["features"]["mm_hashes"]["image"][0],
        "ae4bbf501e85e781f2fe74a6bf833aca4db825e791db1f8c4968e3a6e117f403"
    );
    expect_error(
        &open,
        &format!("http://{media}/big"),
        "larger than 1048576 bytes",
    );
    expect_error(&open, &format!("http://{media}/slow"), "timed out");
    // A redirect to a host that is not listed is refused, whatever the target.
    expect_error(
        &open,
        &format!("http://{media}/to?u=http://localhost:{port}/tiny.png"),
        "not in --allowed-media-domains",
    );
    expect_error(
        &open,
        "http://example.com/cat.png",
        "not in --allowed-media-domains",
    );

    // Default policy: loopback is internal, by literal IP and after DNS resolution.
    let strict = fetching_server(&["127.0.0.1", "localhost"], false, 1 << 20);
    expect_error(&strict, &tiny, "127.0.0.1 is an internal address");
    expect_error(
        &strict,
        &format!("http://localhost:{port}/tiny.png"),
        "resolves only to internal addresses",
    );
    expect_error(
        &strict,
        "http://169.254.169.254/latest/meta-data",
        "not in --allowed-media-domains",
    );
}

#[test]
fn no_tensors_on_request_keeps_kwargs_data() {
    let base = vl_server(Default::default());
    let tiny = std::fs::read(dir().join("tiny_14x14.png")).unwrap();
    let mut req = image_request(&[data_url("image/png", &tiny)]);
    let (_, full) = post(&base, &req);
    req["mm_processor_kwargs"] = serde_json::json!({"output_dtype": "none"});
    let (status, lean) = post(&base, &req);
    assert_eq!(status, 200, "{}", lean["error"]);
    let f = &lean["features"];
    assert!(f.get("mm_tensors").is_none(), "{f}");
    for key in ["mm_hashes", "mm_placeholders", "kwargs_data", "mm_metadata"] {
        assert_eq!(f[key], full["features"][key], "{key}");
    }
    assert_eq!(lean["token_ids"], full["token_ids"]);
    req["mm_processor_kwargs"] = serde_json::json!({"output_dtype": "float16"});
    let (status, err) = post(&base, &req);
    assert_eq!(status, 400);
    assert_eq!(err["error"]["param"], "mm_processor_kwargs.output_dtype");
}

#[test]
fn bfloat16_tensors_on_request() {
    use base64::Engine;
    let base = vl_server(Default::default());
    let tiny = std::fs::read(dir().join("tiny_14x14.png")).unwrap();
    let mut req = image_request(&[data_url("image/png", &tiny)]);
    req["mm_processor_kwargs"] = serde_json::json!({"output_dtype": "float32"});
    let (_, f32_body) = post(&base, &req);
    req["mm_processor_kwargs"] = serde_json::json!({"output_dtype": "bfloat16"});
    let (status, bf_body) = post(&base, &req);
    assert_eq!(status, 200, "{}", bf_body["error"]);
    let t = &bf_body["features"]["mm_tensors"]["image"][0]["pixel_values"];
    assert_eq!(t["dtype"], "bfloat16");
    let b64 = |v: &Value| {
        base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap())
            .unwrap()
    };
    let bf = b64(&t["data"]);
    let f = b64(&f32_body["features"]["mm_tensors"]["image"][0]["pixel_values"]["data"]);
    assert_eq!(bf.len() * 2, f.len());
    for (h, w) in bf.chunks_exact(2).zip(f.chunks_exact(4)) {
        let full = f32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        let half = f32::from_bits((u16::from_le_bytes([h[0], h[1]]) as u32) << 16);
        assert!(
            (full - half).abs() <= full.abs() / 128.0 + 1e-6,
            "{full} vs {half}"
        );
    }
    req["mm_processor_kwargs"] = serde_json::json!({"min_pixels": 100});
    let (status, body) = post(&base, &req);
    assert_eq!(status, 400);
    assert_eq!(body["error"]["param"], "mm_processor_kwargs.min_pixels");
}

/// `features.kwargs_data` and `mm_metadata` byte for byte as vLLM 0.33's render server wrote
/// them for the same requests (`scripts/gen_kwargs_data_goldens.py`), with the same token
/// IDs, placeholders and mm hashes, per-request `min_pixels`/`max_pixels` included.
#[test]
fn kwargs_data_equals_vllm() {
    assert_eq!(check_kwargs_goldens("kwargs_data.jsonl"), 12);
    // vLLM started with `--mm-processor-kwargs '{"max_pixels": 200704}'`: the bound applies,
    // unhashed; a request's own kwargs are hashed alone.
    assert_eq!(check_kwargs_goldens("server_kwargs.jsonl"), 3);
}

/// Renders every request of a `scripts/gen_kwargs_data_goldens.py` file on a server set up as
/// vLLM was, and compares; returns the number of requests.
fn check_kwargs_goldens(file: &str) -> usize {
    use sha2::{Digest, Sha256};
    let goldens = std::fs::read_to_string(fixtures().join("goldens/render_mm").join(file)).unwrap();
    // vLLM hashed with its `--model` value, the temporary dir it was served from.
    let first: Value = serde_json::from_str(goldens.lines().next().unwrap()).unwrap();
    let server_kwargs = &first["server_mm_processor_kwargs"];
    let opts = llm_render::render::RenderOptions {
        trust_request_mm_kwargs: true,
        processor_bounds: llm_render::render::multimodal::Bounds {
            min_pixels: server_kwargs["min_pixels"].as_u64(),
            max_pixels: server_kwargs["max_pixels"].as_u64(),
        },
        ..Default::default()
    };
    let base = vl_server_named(first["model_id"].as_str().unwrap(), opts);
    let mut n = 0;
    for line in goldens.lines() {
        let g: Value = serde_json::from_str(line).unwrap();
        assert_eq!(g["model_id"], first["model_id"]);
        let mut content: Vec<Value> = g["images"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let bytes = std::fs::read(dir().join(f.as_str().unwrap())).unwrap();
                let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes);
                serde_json::json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{b64}")}})
            })
            .collect();
        content.push(serde_json::json!({"type": "text", "text": "Describe the images."}));
        let mut body = serde_json::json!({"messages": [{"role": "user", "content": content}]});
        if !g["mm_processor_kwargs"].is_null() {
            body["mm_processor_kwargs"] = g["mm_processor_kwargs"].clone();
        }
        let (status, out) = post(&base, &body);
        assert_eq!(status, 200, "{}: {out}", g["id"]);
        assert_eq!(
            out["features"]["mm_hashes"]["image"], g["mm_hashes"],
            "{}",
            g["id"]
        );
        let ids: Vec<String> = out["token_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.to_string())
            .collect();
        let sha = |b: &[u8]| format!("{:x}", Sha256::digest(b));
        assert_eq!(
            sha(ids.join(",").as_bytes()),
            g["token_ids_sha256"],
            "{}",
            g["id"]
        );
        let f = &out["features"];
        assert_eq!(
            f["mm_placeholders"]["image"], g["mm_placeholders"],
            "{}",
            g["id"]
        );
        assert_eq!(f["mm_metadata"]["image"], g["mm_metadata"], "{}", g["id"]);
        let ours = f["kwargs_data"]["image"].as_array().unwrap();
        let want = g["kwargs_data"].as_array().unwrap();
        assert_eq!(ours.len(), want.len());
        for (o, w) in ours.iter().zip(want) {
            let o = o.as_str().unwrap();
            assert_eq!(o.len() as u64, w["len"].as_u64().unwrap(), "{}", g["id"]);
            assert_eq!(sha(o.as_bytes()), w["sha256"], "{}", g["id"]);
        }
        n += 1;
    }
    n
}

/// Tensors past `max_mm_tensor_bytes` are a 400 that names the way out; with fewer tensor
/// bytes the same request renders. The budget counts `kwargs_data` (uint8) and `mm_tensors`.
#[test]
fn mm_tensor_budget() {
    let base = vl_server(llm_render::render::RenderOptions {
        max_mm_tensor_bytes: 6 << 20,
        ..Default::default()
    });
    let png = std::fs::read(dir().join("rgb_640x480.png")).unwrap();
    // 1,564 patch rows x 1,176 values: ~1.8 MB of uint8 plus ~7.4 MB of float32
    let mut body = image_request(&[data_url("image/png", &png)]);
    body["mm_processor_kwargs"] = serde_json::json!({"output_dtype": "float32"});
    let (status, out) = post(&base, &body);
    assert_eq!(status, 400, "{out}");
    let msg = out["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("--max-mm-tensor-bytes") && msg.contains("\"none\""),
        "{msg}"
    );
    body["mm_processor_kwargs"] = serde_json::json!({"output_dtype": "none"});
    let (status, out) = post(&base, &body);
    assert_eq!(status, 200, "{out}");
    assert!(out["features"]["mm_tensors"].is_null());
    // bfloat16 halves the floats (~1.8 + 3.7 MB), under the budget once; the same image
    // twice is not
    body["mm_processor_kwargs"] = serde_json::json!({"output_dtype": "bfloat16"});
    assert_eq!(post(&base, &body).0, 200);
    let png2 = || data_url("image/png", &png);
    let mut twice = image_request(&[png2(), png2()]);
    twice["mm_processor_kwargs"] = serde_json::json!({"output_dtype": "bfloat16"});
    assert_eq!(post(&base, &twice).0, 400);
    // and uint8 alone is bounded too: four uses are ~7.4 MB
    let mut four = image_request(&[png2(), png2(), png2(), png2()]);
    four["mm_processor_kwargs"] = serde_json::json!({"output_dtype": "none"});
    let (status, out) = post(&base, &four);
    assert_eq!(status, 400, "{out}");
    assert!(out["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("fewer or smaller images")));
    // Hashes and placeholders alone cost no tensor bytes.
    four["mm_payload"] = "none".into();
    assert_eq!(post(&base, &four).0, 200);
}

/// The default output is vLLM's: `kwargs_data` and `mm_metadata`, no float tensors.
/// `mm_payload: "none"` (or vLLM's deprecated `return_mm_kwargs: false`) leaves the pixels
/// out and keeps the token IDs, hashes and placeholders; an explicit `mm_payload` wins.
#[test]
fn default_output_and_mm_payload_as_vllm() {
    let base = vl_server(Default::default());
    let tiny = std::fs::read(dir().join("tiny_14x14.png")).unwrap();
    let req = image_request(&[data_url("image/png", &tiny)]);
    let (status, full) = post(&base, &req);
    assert_eq!(status, 200, "{full}");
    let f = full["features"].as_object().unwrap();
    let keys: Vec<&str> = f.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["mm_hashes", "mm_placeholders", "kwargs_data", "mm_metadata"]
    );
    for (extra, pixels) in [
        (serde_json::json!({"mm_payload": "none"}), false),
        (serde_json::json!({"return_mm_kwargs": false}), false),
        (
            serde_json::json!({"return_mm_kwargs": false, "mm_payload": "tensors"}),
            true,
        ),
        (serde_json::json!({"return_mm_kwargs": true}), true),
    ] {
        let mut r = req.clone();
        for (k, v) in extra.as_object().unwrap() {
            r[k] = v.clone();
        }
        let (status, out) = post(&base, &r);
        assert_eq!(status, 200, "{extra}: {out}");
        assert_eq!(out["token_ids"], full["token_ids"], "{extra}");
        let g = &out["features"];
        assert_eq!(g["mm_hashes"], full["features"]["mm_hashes"], "{extra}");
        assert_eq!(
            g["mm_placeholders"], full["features"]["mm_placeholders"],
            "{extra}"
        );
        assert_eq!(g["kwargs_data"].is_null(), !pixels, "{extra}");
        assert_eq!(g["mm_metadata"].is_null(), !pixels, "{extra}");
        assert!(g.get("mm_tensors").is_none(), "{extra}");
    }
    let mut bad = req.clone();
    bad["mm_payload"] = "pixels".into();
    let (status, out) = post(&base, &bad);
    assert_eq!(status, 400, "{out}");
    assert_eq!(out["error"]["param"], "mm_payload");
}

/// Per-request resize bounds are refused unless the server trusts them, and a `min_pixels`
/// that would blow an image up past the pixel limit is refused before processing.
#[test]
fn processor_kwargs_need_trust_and_respect_the_pixel_limit() {
    let png = std::fs::read(dir().join("tiny_14x14.png")).unwrap();
    let mut body = image_request(&[data_url("image/png", &png)]);
    body["mm_processor_kwargs"] = serde_json::json!({"min_pixels": 200704});
    let (status, out) = post(&vl_server(Default::default()), &body);
    assert_eq!(status, 400, "{out}");
    assert_eq!(out["error"]["param"], "mm_processor_kwargs.min_pixels");
    assert!(out["error"]["message"]
        .as_str()
        .unwrap()
        .contains("--trust-request-mm-kwargs"));

    let trusted = vl_server(llm_render::render::RenderOptions {
        trust_request_mm_kwargs: true,
        ..Default::default()
    });
    let (status, out) = post(&trusted, &body);
    assert_eq!(status, 200, "{out}");
    assert_eq!(
        out["features"]["mm_placeholders"]["image"][0]["length"],
        256
    );
    body["mm_processor_kwargs"] = serde_json::json!({"min_pixels": 1_000_000_000_000u64});
    let (status, out) = post(&trusted, &body);
    assert_eq!(status, 400, "{out}");
    assert!(out["error"]["message"]
        .as_str()
        .unwrap()
        .contains("would be resized"));
    body["mm_processor_kwargs"] = serde_json::json!({"max_pixels": "many"});
    assert_eq!(post(&trusted, &body).0, 400);
}

/// A render on the blocking pool whose request went away stops before its next image
/// (`render::cancel`); outside a cancelled scope the same request renders.
#[test]
fn a_cancelled_render_stops_before_its_images() {
    use llm_render::error::RequestError;
    use llm_render::render::{cancel, render_chat, RenderOptions};
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    let dir = fixtures().join("models/qwen2_5_vl");
    let model = llm_render::model::Model::load_dir("vl", &dir, &Default::default()).unwrap();
    let g = jsonl("../render_mm/qwen2_5_vl_images.jsonl")
        .into_iter()
        .next()
        .unwrap();
    let req: llm_render::protocol::ChatRequest =
        serde_json::from_value(g["request"].clone()).unwrap();
    let opts = RenderOptions::default();
    assert!(render_chat(&model, &req, &opts, None).is_ok());
    let flag = Arc::new(AtomicBool::new(false));
    let live = cancel::scope(flag.clone(), || render_chat(&model, &req, &opts, None));
    assert!(live.is_ok());
    drop(cancel::CancelOnDrop(flag.clone()));
    let gone = cancel::scope(flag, || render_chat(&model, &req, &opts, None));
    assert!(matches!(gone, Err(RequestError::Cancelled)), "{gone:?}");
}
