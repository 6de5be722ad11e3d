//! Image goldens (transformers' Qwen2-VL, Gemma 3 and CLIP processors; vLLM 0.33's
//! decode and mm hashes): exact resized sizes, grids and token counts; decoded RGB equal for
//! PNGs; pixel values bit-identical for PNG inputs (within 0.03 in general); mm hashes equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{fixtures, image_goldens as dir, image_jsonl as jsonl};
use llm_render::media::{self, DecodeLimits, HashAlgo, QwenVlProcessor};
use sha2::Digest;
use std::io::Read;

/// A golden image decoded as vLLM decodes it.
fn decoded(file: &str) -> image::RgbImage {
    let bytes = std::fs::read(dir().join(file)).unwrap();
    media::decode(&bytes, &DecodeLimits::default()).unwrap().rgb
}

/// sha256 of float32 values as little-endian bytes (the goldens' `pixel_values_sha256_f32le`).
fn f32_sha256(values: &[f32]) -> String {
    let le: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    hex(&sha2::Sha256::digest(&le))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The processor a golden case names.
fn processor(name: &str) -> Option<QwenVlProcessor> {
    let cfg = match name {
        "qwen2_5_vl" => std::fs::read(fixtures().join("models/qwen2_5_vl/preprocessor_config.json")).unwrap(),
        "qwen3_vl_style" => br#"{"image_processor_type": "Qwen2VLImageProcessor", "size": {"shortest_edge": 65536, "longest_edge": 16777216},
            "patch_size": 16, "merge_size": 2, "temporal_patch_size": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}"#
            .to_vec(),
        _ => return None,
    };
    QwenVlProcessor::from_config(&cfg)
}

#[test]
fn decode_matches_vllm() {
    let mut jpeg_report = Vec::new();
    for d in jsonl("decoded.jsonl") {
        let file = d["image"].as_str().unwrap();
        let bytes = std::fs::read(dir().join(file)).unwrap();
        let got = media::decode(&bytes, &DecodeLimits::default()).unwrap();
        let want = &d["vllm_decoded_rgb"];
        assert_eq!(
            [got.rgb.width(), got.rgb.height()],
            [
                want["size_wh"][0].as_u64().unwrap() as u32,
                want["size_wh"][1].as_u64().unwrap() as u32
            ],
            "{file}"
        );
        assert_eq!(
            got.converted,
            !want["io_config"].is_null(),
            "{file}: converted"
        );
        let sha = hex(&sha2::Sha256::digest(got.rgb.as_raw()));
        if file.ends_with(".png") {
            assert_eq!(
                sha, want["sha256"],
                "{file}: decoded RGB differs from vLLM's"
            );
        } else {
            jpeg_report.push(format!(
                "{file}: {}",
                if sha == want["sha256"] {
                    "identical"
                } else {
                    "differs (JPEG decoder)"
                }
            ));
        }
    }
    eprintln!("JPEG decode vs Pillow: {jpeg_report:?}");
}

#[test]
fn sizes_grids_and_token_counts_are_exact() {
    let mut n = 0;
    for c in jsonl("cases.jsonl") {
        let Some(p) = processor(c["processor"].as_str().unwrap()) else {
            continue;
        };
        let (w, h) = (
            c["input"]["size_wh"][0].as_u64().unwrap() as u32,
            c["input"]["size_wh"][1].as_u64().unwrap() as u32,
        );
        let case = c["case"].as_str().unwrap();
        match p.plan(h, w) {
            Ok(media::Plan {
                resized_hw: (rh, rw),
                grid_thw: grid,
                num_tokens: tokens,
            }) => {
                assert_eq!(serde_json::json!([rh, rw]), c["resized_hw"], "{case}");
                assert_eq!(serde_json::json!(grid), c["grid_thw"], "{case}");
                assert_eq!(
                    tokens as u64,
                    c["num_image_tokens"].as_u64().unwrap(),
                    "{case}"
                );
            }
            Err(e) => assert!(
                c["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains(&e.to_string()),
                "{case}: {e}"
            ),
        }
        n += 1;
    }
    assert_eq!(n, 26);
}

fn npy(name: &str) -> Option<(Vec<usize>, Vec<f32>)> {
    let gz = std::fs::read(dir().join("arrays").join(format!("{name}.npy.gz"))).ok()?;
    let mut b = Vec::new();
    flate2::read::GzDecoder::new(gz.as_slice())
        .read_to_end(&mut b)
        .unwrap();
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    let header = std::str::from_utf8(&b[10..10 + hlen]).unwrap();
    let shape: Vec<usize> = header
        .split("'shape': (")
        .nth(1)?
        .split(')')
        .next()?
        .split(',')
        .filter_map(|x| x.trim().parse().ok())
        .collect();
    let data = b[10 + hlen..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Some((shape, data))
}

#[test]
fn pixel_values_within_tolerance() {
    let mut checked = 0;
    for c in jsonl("cases.jsonl") {
        let case = c["case"].as_str().unwrap();
        let Some((shape, want)) = npy(case) else {
            continue;
        };
        let Some(p) = processor(c["processor"].as_str().unwrap()) else {
            continue;
        };
        let bytes = std::fs::read(dir().join(c["image"].as_str().unwrap())).unwrap();
        let img = media::decode(&bytes, &DecodeLimits::default()).unwrap();
        let got = p.process(&img.rgb).unwrap();
        assert_eq!(vec![got.rows, got.cols], shape, "{case}");
        let (mut max, mut sum) = (0f32, 0f64);
        for (a, b) in got.pixel_values.iter().zip(&want) {
            let d = (a - b).abs();
            max = max.max(d);
            sum += d as f64;
        }
        let mean = sum / want.len() as f64;
        eprintln!("{case}: max |Δ| = {max:.5}, mean |Δ| = {mean:.6}");
        assert!(max <= 0.03, "{case}: max |Δ| {max}");
        checked += 1;
    }
    assert_eq!(checked, 5);
}

#[test]
fn mm_hashes_are_exact() {
    for h in jsonl("mm_hashes.jsonl") {
        let file = h["image"].as_str().unwrap();
        let s = &h["serving_data_url"];
        let bytes = std::fs::read(dir().join(file)).unwrap();
        let decoded = media::decode(&bytes, &DecodeLimits::default());
        let converted = !s["io_config"].is_null();
        if let Ok(d) = &decoded {
            assert_eq!(d.converted, converted, "{file}");
        }
        let model = h["model_id"].as_str().unwrap();
        assert_eq!(
            media::mm_hash_image_bytes(&bytes, converted, model, &[], HashAlgo::Blake3),
            s["mm_hash_blake3"],
            "{file}"
        );
        assert_eq!(
            media::mm_hash_image_bytes(&bytes, converted, model, &[], HashAlgo::Sha256),
            s["mm_hash_sha256"],
            "{file}"
        );
    }
}

/// Beyond the tolerance: for every PNG input the float32 pixel values are bit-identical to
/// transformers' (sha256 of the little-endian bytes); JPEG inputs differ only by decoder.
#[test]
fn png_pixel_values_are_bit_exact() {
    let mut exact = 0;
    let mut jpeg = Vec::new();
    for c in jsonl("cases.jsonl") {
        let Some(p) = processor(c["processor"].as_str().unwrap()) else {
            continue;
        };
        if c["error"].is_object() || c["input_variant"] != "vllm_decoded" {
            continue;
        }
        let file = c["image"].as_str().unwrap();
        let got = p.process(&decoded(file)).unwrap();
        let sha = f32_sha256(&got.pixel_values);
        if file.ends_with(".png") {
            assert_eq!(sha, c["pixel_values_sha256_f32le"], "{}", c["case"]);
            exact += 1;
        } else {
            let mean = got.pixel_values.iter().map(|v| *v as f64).sum::<f64>()
                / got.pixel_values.len() as f64;
            jpeg.push(format!(
                "{}: mean {mean:.5} vs {:.5}",
                c["case"],
                c["pixel_values_stats"]["mean"].as_f64().unwrap()
            ));
        }
    }
    assert_eq!(exact, 16);
    eprintln!("JPEG cases (decoder differs from Pillow's libjpeg): {jpeg:#?}");
}

/// Gemma 3 (896², bilinear) and LLaVA-1.5 CLIP (short side 336, bicubic, center crop): sizes
/// and token counts for every case, pixel_values bit-identical for PNG inputs.
#[test]
fn gemma3_and_llava_processors() {
    let (mut exact, mut jpeg) = (0, 0);
    for c in jsonl("cases.jsonl") {
        let p = match c["processor"].as_str().unwrap() {
            "gemma3_896" => media::SquareProcessor::gemma3(),
            "llava_1_5_clip" => media::SquareProcessor::llava_1_5(),
            _ => continue,
        };
        let case = c["case"].as_str().unwrap();
        let (w, h) = (
            c["input"]["size_wh"][0].as_u64().unwrap() as u32,
            c["input"]["size_wh"][1].as_u64().unwrap() as u32,
        );
        let (rh, rw) = p.resized_hw(h, w);
        assert_eq!(serde_json::json!([rh, rw]), c["resized_hw"], "{case}");
        assert_eq!(
            p.num_tokens as u64,
            c["num_image_tokens"].as_u64().unwrap(),
            "{case}"
        );
        if c["input_variant"] != "vllm_decoded" {
            continue;
        }
        let file = c["image"].as_str().unwrap();
        let got = p.process(&decoded(file)).unwrap();
        if file.ends_with(".png") {
            assert_eq!(
                f32_sha256(&got.pixel_values),
                c["pixel_values_sha256_f32le"],
                "{case}"
            );
            exact += 1;
        } else {
            jpeg += 1;
        }
    }
    assert_eq!((exact, jpeg), (18, 6));
}
