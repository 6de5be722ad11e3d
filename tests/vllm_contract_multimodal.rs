//! vLLM's multimodal render tests, transcribed against our server on the Qwen2.5-VL fixture
//! (vLLM runs them on Qwen3-VL-2B; the assertions do not depend on the model):
//! `tests/entrypoints/scale_out/render/test_render_multimodal.py` (`tr_`) and
//! `test_raw_images.py` (`raw_`), vLLM's main branch.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use base64::Engine;
use common::vision::{data_url, image_request, post, vl_server, VL_NAME};
use common::{fixtures, image_goldens};
use serde_json::{json, Value};

fn image(name: &str) -> Vec<u8> {
    std::fs::read(image_goldens().join(name)).unwrap()
}

fn unb64(v: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(v.as_str().unwrap())
        .unwrap()
}

fn with(mut req: Value, key: &str, value: Value) -> Value {
    req[key] = value;
    req
}

/// `test_chat_completion_render_with_base64_image_url`: an RGBA PNG data URL renders
/// token IDs, one string hash and one placeholder range per image.
#[test]
fn tr_test_chat_completion_render_with_base64_image_url() {
    let base = vl_server(Default::default());
    let url = data_url("image/png", &image("rgba_320x240.png"));
    assert!(url.starts_with("data:image/") && url.contains(";base64,"));
    let (code, out) = post(&base, &image_request(&[url]));
    assert_eq!(code, 200, "{out}");
    assert!(!out["token_ids"].as_array().unwrap().is_empty());
    let features = &out["features"];
    let hashes = features["mm_hashes"]["image"].as_array().unwrap();
    assert!(!hashes.is_empty() && hashes.iter().all(Value::is_string));
    for p in features["mm_placeholders"]["image"].as_array().unwrap() {
        assert!(p["offset"].is_u64());
        assert!(p["length"].as_u64().unwrap() > 0);
        // vLLM main's sparse `is_embed` mask is left out for dense placeholders
        // (`test_placeholder_mask_serde.py`), as every Qwen2-VL image's are.
        assert!(p.get("is_embed").is_none());
    }
}

/// `test_tokenize_matches_render_for_multimodal_input`: `/tokenize` of an image chat gives
/// the render's token IDs (placeholders expanded) and their count.
#[test]
fn tr_test_tokenize_matches_render_for_multimodal_input() {
    let base = vl_server(Default::default());
    let png = std::fs::read(fixtures().join("goldens/images/gray_256x192.png")).unwrap();
    let body = image_request(&[data_url("image/png", &png)]);
    let (code, render) = post(&base, &body);
    assert_eq!(code, 200, "{render}");
    let resp = common::client()
        .post(format!("{base}/tokenize"))
        .json(&body)
        .send()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let tokenize: Value = resp.json().unwrap();
    assert_eq!(tokenize["tokens"], render["token_ids"]);
    assert_eq!(
        tokenize["count"].as_u64().unwrap() as usize,
        render["token_ids"].as_array().unwrap().len()
    );
    assert!(
        render["features"]["mm_placeholders"]["image"][0]["length"]
            .as_u64()
            .unwrap()
            > 0
    );
}

/// `test_skip_pixel_values_returns_source_bytes_not_tensors`: `skip_pixel_values` swaps the
/// payload for the image's source bytes; tokens, hashes and placeholders are unchanged, and
/// the response is smaller.
#[test]
fn tr_test_skip_pixel_values_returns_source_bytes_not_tensors() {
    let base = vl_server(Default::default());
    let source = image("rgba_320x240.png");
    let req = image_request(&[data_url("image/png", &source)]);
    let bytes = |body: &Value| {
        let resp = common::client()
            .post(format!("{base}/v1/chat/completions/render"))
            .json(body)
            .send()
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        resp.bytes().unwrap().to_vec()
    };
    let full_bytes = bytes(&with(req.clone(), "skip_pixel_values", false.into()));
    let skipped_bytes = bytes(&with(req, "skip_pixel_values", true.into()));
    let full: Value = serde_json::from_slice(&full_bytes).unwrap();
    let skipped: Value = serde_json::from_slice(&skipped_bytes).unwrap();
    assert_eq!(skipped["token_ids"], full["token_ids"]);
    let (f, s) = (&full["features"], &skipped["features"]);
    assert_eq!(s["mm_hashes"], f["mm_hashes"]);
    assert_eq!(s["mm_placeholders"], f["mm_placeholders"]);
    assert!(!f["kwargs_data"].is_null());
    assert!(s["kwargs_data"].is_null() && s["mm_metadata"].is_null());
    assert!(f.get("raw_images").is_none(), "only when asked for");
    let raw = s["raw_images"].as_object().unwrap();
    assert_eq!(raw.keys().collect::<Vec<_>>(), ["image"]);
    assert_eq!(
        raw["image"].as_array().unwrap().len(),
        s["mm_hashes"]["image"].as_array().unwrap().len()
    );
    assert_eq!(unb64(&raw["image"][0]), source);
    assert!(skipped_bytes.len() < full_bytes.len());
}

/// `test_raw_images.py::test_encodes_every_item_when_all_bytes_are_retained`: `raw_images`
/// is positional with `mm_hashes`, one entry per item, a repeated image included. Every
/// item here is loaded from bytes, so vLLM's fallback to `kwargs_data` (an item without
/// source bytes, `test_declines_*`) cannot arise; no tensor is made, so
/// `--max-mm-tensor-bytes` does not apply, and neither do a float `mm_tensors` default or
/// `mm_payload` (vLLM's `skip_pixel_values` branch comes first).
#[test]
fn raw_test_encodes_every_item_when_all_bytes_are_retained() {
    let base = vl_server(llm_render::render::RenderOptions {
        tensor_dtype: llm_render::render::TensorDtype::Float32,
        max_mm_tensor_bytes: 1,
        ..Default::default()
    });
    let (a, b) = (image("tiny_14x14.png"), image("palette_300x200.png"));
    let urls = [
        data_url("image/png", &a),
        data_url("image/png", &b),
        data_url("image/png", &a),
    ];
    let req = with(image_request(&urls), "skip_pixel_values", true.into());
    let (code, out) = post(&base, &with(req, "mm_payload", "none".into()));
    assert_eq!(code, 200, "{out}");
    let f = &out["features"];
    let raw: Vec<Vec<u8>> = f["raw_images"]["image"]
        .as_array()
        .unwrap()
        .iter()
        .map(unb64)
        .collect();
    assert_eq!(raw, [a.clone(), b, a]);
    let hashes = f["mm_hashes"]["image"].as_array().unwrap();
    assert_eq!(hashes.len(), 3);
    assert_eq!(hashes[0], hashes[2]);
    assert!(f.get("mm_tensors").is_none());

    // The same hashes and placeholders as the render with pixels.
    let base = vl_server(Default::default());
    let (code, full) = post(&base, &image_request(&urls));
    assert_eq!(code, 200, "{full}");
    assert_eq!(full["features"]["mm_hashes"], f["mm_hashes"]);
    assert_eq!(full["features"]["mm_placeholders"], f["mm_placeholders"]);
    assert_eq!(full["token_ids"], out["token_ids"]);
}

/// `skip_pixel_values` is a boolean (vLLM's pydantic field); a completion render, which has
/// no images, accepts it and changes nothing.
#[test]
fn skip_pixel_values_is_a_boolean_and_text_renders_ignore_it() {
    let base = vl_server(Default::default());
    let req = image_request(&[data_url("image/png", &image("tiny_14x14.png"))]);
    let (code, out) = post(&base, &with(req, "skip_pixel_values", "yes".into()));
    assert_eq!(code, 400, "{out}");
    assert_eq!(out["error"]["param"], "skip_pixel_values");
    let body = json!({"model": VL_NAME, "prompt": "Hello", "skip_pixel_values": true});
    let (code, out) = common::post_json(&format!("{base}/v1/completions/render"), &body);
    assert_eq!(code, 200, "{out}");
    assert!(out[0]["features"].is_null(), "{out}");
}
