//! Bad input never panics the image path: every fixture image, truncated and with bytes
//! flipped, through decode, the mm hash and the Qwen-VL processor. Each one decodes and
//! processes, or is a clean error (the server turns those into 400s; a panic would be a
//! 500). CI runs 500 cases (~0.3 s); 20,000-case runs found nothing.
#![allow(clippy::unwrap_used)]
use llm_render::media::{decode, mm_hash_image_bytes, DecodeLimits, HashAlgo, QwenVlProcessor};
use llm_render::media::{MediaError, Tensors};
use proptest::prelude::*;
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The fixture images (PNG in every colour type, JPEG baseline, progressive and EXIF), plus
/// a GIF and a WebP.
fn images() -> Vec<Vec<u8>> {
    let dir = fixtures().join("goldens/images");
    let mut out: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("png" | "jpg")))
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    out.sort();
    assert!(out.len() >= 10, "fixture images missing from {dir:?}");
    // and GIF and lossless WebP, made here from a fixture's corner
    let largest = out.iter().max_by_key(|b| b.len()).unwrap();
    let rgb = image::load_from_memory(largest).unwrap().to_rgba8();
    let corner = image::imageops::crop_imm(&rgb, 0, 0, 48, 32).to_image();
    let mut gif = Vec::new();
    image::codecs::gif::GifEncoder::new(&mut gif)
        .encode_frame(image::Frame::new(corner.clone()))
        .unwrap();
    let mut webp = Vec::new();
    image::codecs::webp::WebPEncoder::new_lossless(&mut webp)
        .encode(corner.as_raw(), 48, 32, image::ExtendedColorType::Rgba8)
        .unwrap();
    out.extend([gif, webp]);
    out
}

fn processor() -> QwenVlProcessor {
    let json = std::fs::read(fixtures().join("models/qwen2_5_vl/preprocessor_config.json"));
    let mut p = QwenVlProcessor::from_config(&json.unwrap()).unwrap();
    // small outputs keep the cases fast; the path is the same
    p.max_pixels = 200_704;
    p
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]
    #[test]
    fn mangled_images_never_panic(
        which in any::<prop::sample::Index>(),
        cut in prop_oneof![Just(1.0f64), 0.9f64..1.0, 0.0f64..1.0],
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
    ) {
        static ALL: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
        let all = ALL.get_or_init(images);
        let mut bytes = all[which.index(all.len())].clone();
        bytes.truncate(((bytes.len() as f64) * cut) as usize);
        for (at, v) in flips {
            if !bytes.is_empty() {
                let i = at.index(bytes.len());
                bytes[i] ^= v;
            }
        }
        let limits = DecodeLimits { max_pixels: 4 << 20, max_side: 4096 };
        match decode(&bytes, &limits) {
            Ok(d) => {
                mm_hash_image_bytes(&bytes, d.converted, "m", &[], HashAlgo::Blake3);
                match processor().process_with(&d.rgb, Tensors::Both) {
                    Ok(p) => prop_assert_eq!(p.patches.len(), p.rows * p.cols),
                    Err(e) => prop_assert!(matches!(e, MediaError::AspectRatio(_)), "{e}"),
                }
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}
