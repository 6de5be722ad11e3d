//! `image`: any bytes as an image file, through what a request's image goes through:
//! decode (within limits), the content hash and the Qwen-VL processor. Each input decodes
//! and processes, or is a clean error; never a panic. The limits are smaller than serve's
//! defaults (4 Mpx, 4,096 px a side, processor output ≤ 200,704 px) so one input takes
//! milliseconds; the code path is the same.

use llm_render::media::{decode, mm_hash_image_bytes, DecodeLimits, HashAlgo, MediaError};
use llm_render::media::{QwenVlProcessor, Tensors};
use std::sync::OnceLock;

fn processor() -> &'static QwenVlProcessor {
    static P: OnceLock<QwenVlProcessor> = OnceLock::new();
    P.get_or_init(|| {
        let path = crate::server::fixtures().join("models/qwen2_5_vl/preprocessor_config.json");
        let json = std::fs::read(&path).unwrap_or_default();
        let Some(mut p) = QwenVlProcessor::from_config(&json) else {
            panic!("{} is not a Qwen-VL processor config", path.display())
        };
        p.max_pixels = 200_704;
        p
    })
}

pub fn run(data: &[u8]) {
    let limits = DecodeLimits {
        max_pixels: 4 << 20,
        max_side: 4096,
    };
    let Ok(d) = decode(data, &limits) else {
        return;
    };
    mm_hash_image_bytes(data, d.converted, "m", &[], HashAlgo::Blake3);
    match processor().process_with(&d.rgb, Tensors::Both) {
        Ok(p) => assert_eq!(p.patches.len(), p.rows * p.cols, "patch count"),
        Err(e) => assert!(matches!(e, MediaError::AspectRatio(_)), "{e}"),
    }
}
