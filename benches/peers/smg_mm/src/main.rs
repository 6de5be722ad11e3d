//! SMG's llm-multimodal (crates.io) as a Rust peer: image bytes -> Qwen2-VL encoder inputs,
//! one image at a time, the same steps as llm-render's criterion bench. Prints one line per
//! file: `<file> <ms to float32 pixel_values> <ms to SMG's own output> <its kind>`. Usage: smg-mm-bench <preprocessor_config.json> <image>...
use llm_multimodal::vision::processors::Qwen2VLProcessor;
use llm_multimodal::vision::{PreProcessorConfig, VisionPreProcessor};
use std::time::Instant;

/// The allocator llm-render's server and bench use, so neither pays glibc's page faults.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let config = PreProcessorConfig::from_json(&std::fs::read_to_string(&args[1]).expect("config"))
        .expect("config json");
    let processor = Qwen2VLProcessor::new();
    for path in &args[2..] {
        let bytes = std::fs::read(path).expect("image");
        let once = |to_f32: bool| {
            let img = llm_multimodal::jpeg_turbo::decode_jpeg_rgb(&bytes)
                .unwrap_or_else(|| image::load_from_memory(&bytes).expect("decode"));
            let out = processor.preprocess(&[img], &config).expect("preprocess");
            // The same product as transformers' and llm-render's: normalized float32
            // pixel_values (SMG may hand back uint8 patches with the normalization to apply).
            let kind = match &out.encoder_input {
                llm_multimodal::encoder_inputs::EncoderInput::F32(_) => "f32",
                llm_multimodal::encoder_inputs::EncoderInput::U8 { .. } => "u8",
                llm_multimodal::encoder_inputs::EncoderInput::Wire { .. } => "wire",
            };
            if to_f32 {
                std::hint::black_box(out.encoder_input.into_f32().len());
            } else {
                std::hint::black_box(out);
            }
            kind
        };
        let median = |to_f32: bool| {
            once(to_f32);
            let mut times: Vec<f64> = (0..15)
                .map(|_| {
                    let t = Instant::now();
                    once(to_f32);
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            times.sort_by(|a, b| a.total_cmp(b));
            times[times.len() / 2]
        };
        let kind = once(false);
        let name = std::path::Path::new(path)
            .file_name()
            .unwrap()
            .to_string_lossy();
        // <file> <ms to float32 pixel_values> <ms to SMG's own output> <its kind>
        println!("{name} {:.2} {:.2} {kind}", median(true), median(false));
    }
}
