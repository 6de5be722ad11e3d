//! Block-hash goldens (vLLM 0.33's own Python, llm-d's own Go) through the library, the HTTP
//! route and the CLI: every hash equal, and the serialized bytes of block 0 equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use llm_render::hashing::{self, BlockExtraKeys, ExtraInputs, HashRequest, VllmAlgo};
use serde_json::{json, Value};

fn records(name: &str) -> Vec<Value> {
    common::gz_jsonl(&format!("goldens/hashes/{name}"))
}

fn algo(name: &str) -> VllmAlgo {
    match name {
        "sha256" => VllmAlgo::Sha256,
        "sha256_cbor" => VllmAlgo::Sha256Cbor,
        "xxhash_cbor" => VllmAlgo::XxhashCbor,
        other => panic!("{other}"),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The `/v1/block_hashes` body that reproduces a vLLM golden record.
fn vllm_request(r: &Value, format: &str) -> Value {
    let lora = &r["lora_request"];
    json!({
        "token_ids": r["token_ids"], "block_size": r["block_size"], "algorithm": r["hash_algo"],
        "seed": r["pythonhashseed"], "format": format, "lora_name": lora["lora_name"],
        "lora_path": lora["lora_path"], "cache_salt": r["cache_salt"],
        "mm": r["mm_features"].as_array().unwrap().iter()
            .map(|m| json!({"identifier": m["identifier"], "offset": m["offset"], "length": m["length"]})).collect::<Vec<_>>(),
    })
}

fn llmd_request(r: &Value, format: &str) -> Value {
    let mut mm = Vec::new();
    if let Some(m) = r["mm"].as_object() {
        for (h, p) in m["mm_hashes"]["image"]
            .as_array()
            .unwrap()
            .iter()
            .zip(m["mm_placeholders"]["image"].as_array().unwrap())
        {
            mm.push(json!({"identifier": h, "offset": p["offset"], "length": p["length"]}));
        }
    }
    json!({"token_ids": r["token_ids"], "block_size": r["block_size"], "algorithm": "llmd_fnv64a",
        "seed": r["hash_seed"], "format": format, "model_name": r["model_name"], "mm": mm,
        "parent_key": r["parent_key"]})
}

#[test]
fn vllm_goldens_library() {
    let recs = records("vllm_block_hashes.jsonl.gz");
    assert_eq!(recs.len(), 208);
    for r in &recs {
        let id = r["id"].as_str().unwrap();
        let a = algo(r["hash_algo"].as_str().unwrap());
        let none = a.none_hash(r["pythonhashseed"].as_str()).unwrap();
        assert_eq!(hex(&none), r["none_hash_hex"], "{id}: NONE_HASH");
        let req: HashRequest = serde_json::from_value(vllm_request(r, "hex")).unwrap();
        let got = hashing::compute(&req).unwrap();
        let want: Vec<Value> = r["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["hash_hex"].clone())
            .collect();
        assert_eq!(got.block_hashes, want, "{id}");
        assert_eq!(
            got.num_full_blocks,
            r["num_full_blocks"].as_u64().unwrap() as usize
        );
        let req: HashRequest = serde_json::from_value(vllm_request(r, "u64")).unwrap();
        let want: Vec<Value> = r["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["hash_int"].clone())
            .collect();
        assert_eq!(
            hashing::compute(&req).unwrap().block_hashes,
            want,
            "{id}: u64"
        );
        if let Some(block0) = r["block0_serialized_hex"].as_str() {
            let tokens: Vec<u32> = serde_json::from_value(r["token_ids"].clone()).unwrap();
            let bs = r["block_size"].as_u64().unwrap() as usize;
            let inputs = ExtraInputs {
                lora: req
                    .lora_name
                    .as_deref()
                    .map(|n| (n, req.lora_path.as_deref())),
                cache_salt: req.cache_salt.as_deref(),
                mm: &req.mm,
            };
            let extra = BlockExtraKeys::new(inputs).block(0, bs);
            assert_eq!(
                hex(&a.serialize_block(&none, &tokens[..bs], extra.as_deref())),
                block0,
                "{id}: block 0 bytes"
            );
        }
    }
}

#[test]
fn llmd_goldens_library() {
    let recs = records("llmd_block_keys.jsonl.gz");
    assert_eq!(recs.len(), 64);
    for r in &recs {
        let id = r["id"].as_str().unwrap();
        let root = hashing::llmd_root_key(
            r["hash_seed"].as_str().unwrap(),
            r["model_name"].as_str().unwrap(),
        );
        assert_eq!(root, r["root_hash"].as_u64().unwrap(), "{id}: root");
        let req: HashRequest = serde_json::from_value(llmd_request(r, "u64")).unwrap();
        assert_eq!(
            Value::from(hashing::compute(&req).unwrap().block_hashes),
            r["keys"],
            "{id}"
        );
        let req: HashRequest = serde_json::from_value(llmd_request(r, "hex")).unwrap();
        assert_eq!(
            Value::from(hashing::compute(&req).unwrap().block_hashes),
            r["keys_hex"],
            "{id}: hex"
        );
    }
}

fn all_requests() -> Vec<(String, Value, Value)> {
    let mut out = Vec::new();
    for r in records("vllm_block_hashes.jsonl.gz") {
        let want: Vec<Value> = r["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["hash_hex"].clone())
            .collect();
        out.push((
            r["id"].as_str().unwrap().to_string(),
            vllm_request(&r, "hex"),
            Value::from(want),
        ));
    }
    for r in records("llmd_block_keys.jsonl.gz") {
        out.push((
            format!("llmd/{}", r["id"].as_str().unwrap()),
            llmd_request(&r, "u64"),
            r["keys"].clone(),
        ));
    }
    out
}

#[test]
fn goldens_over_http() {
    let base = start_server(
        load_models(&["qwen3"], &Default::default()),
        Default::default(),
    );
    let client = client();
    for (id, req, want) in all_requests() {
        let resp: Value = client
            .post(format!("{base}/v1/block_hashes"))
            .json(&req)
            .send()
            .unwrap()
            .json()
            .unwrap();
        assert_eq!(resp["block_hashes"], want, "{id}");
        assert_eq!(
            resp["num_full_blocks"],
            want.as_array().unwrap().len(),
            "{id}"
        );
    }
    // Bad options are 400s naming the field.
    for (body, param) in [
        (json!({"token_ids": [1], "algorithm": "md5"}), "algorithm"),
        (
            json!({"token_ids": [1], "algorithm": "xxhash_cbor"}),
            "seed",
        ),
        (json!({"token_ids": [1], "block_size": 0}), "block_size"),
        (json!({"token_ids": [1], "format": "base64"}), "format"),
        (
            json!({"token_ids": [1], "algorithm": "llmd_fnv64a"}),
            "model_name",
        ),
        (json!({"token_ids": [-1]}), "token_ids[0]"),
    ] {
        let resp = client
            .post(format!("{base}/v1/block_hashes"))
            .json(&body)
            .send()
            .unwrap();
        assert_eq!(resp.status().as_u16(), 400);
        let v: Value = resp.json().unwrap();
        assert_eq!(v["error"]["param"], param, "{v}");
    }
}

#[test]
fn goldens_through_cli() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    for (id, req, want) in all_requests() {
        let mut child = Command::new(env!("CARGO_BIN_EXE_llm-render"))
            .arg("hash")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(req.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{id}");
        let got: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(got["block_hashes"], want, "{id}");
    }
}

/// `return_block_hashes` on the render route hashes the rendered IDs: the long_9k render's
/// first 562 blocks equal vLLM's hashes of its 9,000-token prefix.
#[test]
fn render_route_returns_block_hashes() {
    let golden = records("vllm_block_hashes.jsonl.gz")
        .into_iter()
        .find(|r| r["id"] == "text/len9000/bs16/sha256_cbor/seed=0")
        .unwrap();
    let long = goldens()
        .into_iter()
        .find(|g| g.id == "qwen3/long_9k")
        .unwrap();
    let mut req = long.request.clone();
    req["model"] = json!("qwen3");
    req["return_block_hashes"] =
        json!({"block_size": 16, "algorithm": "sha256_cbor", "seed": "0", "format": "hex"});
    let resp: Value = client()
        .post(format!("{}/v1/chat/completions/render", golden_server()))
        .json(&req)
        .send()
        .unwrap()
        .json()
        .unwrap();
    let got = resp["block_hashes"].as_array().unwrap();
    assert_eq!(got.len(), 10140 / 16);
    for (i, b) in golden["blocks"].as_array().unwrap().iter().enumerate() {
        assert_eq!(got[i], b["hash_hex"], "block {i}");
    }
    // Without the option the field is absent, as in vLLM's shape.
    req.as_object_mut().unwrap().remove("return_block_hashes");
    let resp: Value = client()
        .post(format!("{}/v1/chat/completions/render", golden_server()))
        .json(&req)
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert!(resp.get("block_hashes").is_none());
}
