//! Criterion bench: image bytes → pixel_values (decode, resize, normalize, patchify) with
//! the Qwen2.5-VL processor, one image at a time on one thread; the same to uint8 patches
//! (what vLLM's engine takes); photo_1080p on two threads at once (`both_cores`); and the
//! stages of photo_1080p. Side by side with transformers:
//! `python3 benches/images_vs_transformers.py`.

use criterion::{criterion_group, criterion_main, Criterion};

/// The server's allocator: a 1080p image's ~50 MB of float32 patches cost mostly page
/// faults, and mimalloc reuses freed memory where glibc's mmap threshold returns it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use llm_render::media::{decode, resample, DecodeLimits, QwenVlProcessor, Tensors};
use std::path::PathBuf;

fn bench(c: &mut Criterion) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let Some(processor) = std::fs::read(root.join("models/qwen2_5_vl/preprocessor_config.json"))
        .ok()
        .and_then(|b| QwenVlProcessor::from_config(&b))
    else {
        eprintln!("no processor config");
        return;
    };
    let limits = DecodeLimits::default();
    // Image bytes to the tensors asked for: decode, resize, patchify (and normalize).
    let to_tensors = |bytes: &[u8], tensors: Tensors| {
        decode(bytes, &limits)
            .ok()
            .and_then(|d| processor.process_with(&d.rgb, tensors).ok())
            .map_or(0, |p| p.rows)
    };
    // To float32 `pixel_values` (transformers' output), and to the uint8 patches a vLLM
    // engine takes (`kwargs_data`, `--mm-tensor-dtype none`; it normalizes on the GPU).
    for (group, tensors) in [
        ("image_to_pixel_values", Tensors::PixelValues),
        ("image_to_uint8_patches", Tensors::Patches),
    ] {
        let mut g = c.benchmark_group(group);
        g.sample_size(20);
        for file in [
            "photo_1080p.jpg",
            "rgb_640x480.png",
            "progressive_800x600.jpg",
        ] {
            let Ok(bytes) = std::fs::read(root.join("goldens/images").join(file)) else {
                continue;
            };
            g.bench_function(file, |b| b.iter(|| to_tensors(&bytes, tensors)));
        }
        g.finish();
    }

    let Some(bytes) = std::fs::read(root.join("goldens/images/photo_1080p.jpg")).ok() else {
        return;
    };

    // Both cores: two threads, one photo_1080p each to pixel_values per iteration (the
    // time is per pair; images/s = 2 / time).
    let mut g = c.benchmark_group("both_cores");
    g.sample_size(20);
    g.bench_function("photo_1080p_pair_to_pixel_values", |b| {
        b.iter(|| {
            std::thread::scope(|s| {
                let one = || to_tensors(&bytes, Tensors::PixelValues);
                let a = s.spawn(one);
                let b = s.spawn(one);
                (a.join().ok(), b.join().ok())
            })
        })
    });
    g.finish();

    // The stages of photo_1080p, to see where the time goes.
    let Ok(decoded) = decode(&bytes, &limits) else {
        return;
    };
    let rgb = decoded.rgb;
    let Ok(plan) = processor.plan(rgb.height(), rgb.width()) else {
        return;
    };
    let (h, w) = plan.resized_hw;
    let mut g = c.benchmark_group("photo_1080p_stages");
    g.sample_size(20);
    g.bench_function("decode", |b| b.iter(|| decode(&bytes, &limits).is_ok()));
    g.bench_function("resize", |b| {
        b.iter(|| resample::resize_bicubic(&rgb, w, h).width())
    });
    for (name, tensors) in [
        ("process_uint8", Tensors::Patches),
        ("process_float32", Tensors::PixelValues),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| processor.process_with(&rgb, tensors).map(|p| p.rows).ok())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
