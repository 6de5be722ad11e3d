//! The Qwen2-VL image processor (also Qwen2.5-VL, and Qwen3-VL with patch 16), as
//! transformers' `Qwen2VLImageProcessor` computes it (PIL backend):
//! 1. `smart_resize`: both sides multiples of `patch * merge`, pixels within
//!    `[min_pixels, max_pixels]`, aspect ratio above 200 refused;
//! 2. Pillow's antialiased bicubic resize (`resample.rs`);
//! 3. rescale by 1/255 and normalize by mean/std, in f32 as transformers does;
//! 4. the frame is repeated `temporal_patch_size` times and cut into patches; rows are
//!    ordered (grid_h/merge, grid_w/merge, merge_h, merge_w), each row is
//!    C × temporal × patch × patch values.
//!
//! The prompt gets `grid_t * grid_h * grid_w / merge²` image tokens per image.

use super::normalize::Normalize;
use super::patchify::PatchPlanes;
use super::resample::{self, Filter};
use super::stream_store::StreamingVec;
use super::MediaError;
use image::RgbImage;
use serde::Deserialize;

/// Python's `round()`: halves go to the even neighbour.
fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - x.signum()
    } else {
        r
    }
}

/// transformers' `smart_resize(height, width, factor, min_pixels, max_pixels)` → (h, w).
pub fn smart_resize(
    height: u32,
    width: u32,
    factor: u32,
    min_pixels: u64,
    max_pixels: u64,
) -> Result<(u32, u32), MediaError> {
    let (h, w, f) = (height as f64, width as f64, factor as f64);
    let ratio = h.max(w) / h.min(w).max(1.0);
    if height == 0 || width == 0 || ratio > 200.0 {
        return Err(MediaError::AspectRatio(ratio));
    }
    let mut h_bar = round_half_even(h / f) * f;
    let mut w_bar = round_half_even(w / f) * f;
    if h_bar * w_bar > max_pixels as f64 {
        let beta = ((h * w) / max_pixels as f64).sqrt();
        h_bar = f.max((h / beta / f).floor() * f);
        w_bar = f.max((w / beta / f).floor() * f);
    } else if h_bar * w_bar < min_pixels as f64 {
        let beta = (min_pixels as f64 / (h * w)).sqrt();
        h_bar = (h * beta / f).ceil() * f;
        w_bar = (w * beta / f).ceil() * f;
    }
    Ok((h_bar as u32, w_bar as u32))
}

/// `preprocessor_config.json` keys the processor reads (flat keys or `size`).
#[derive(Debug, Clone, Deserialize)]
struct RawConfig {
    #[serde(default)]
    image_processor_type: Option<String>,
    #[serde(default)]
    min_pixels: Option<u64>,
    #[serde(default)]
    max_pixels: Option<u64>,
    #[serde(default)]
    size: Option<RawSize>,
    #[serde(default)]
    patch_size: Option<u32>,
    #[serde(default)]
    temporal_patch_size: Option<u32>,
    #[serde(default)]
    merge_size: Option<u32>,
    #[serde(default)]
    image_mean: Option<[f32; 3]>,
    #[serde(default)]
    image_std: Option<[f32; 3]>,
    #[serde(default)]
    rescale_factor: Option<f32>,
}

#[derive(Debug, Clone, Deserialize)]
struct RawSize {
    #[serde(default)]
    shortest_edge: Option<u64>,
    #[serde(default)]
    longest_edge: Option<u64>,
}

/// OpenAI CLIP's mean and std, transformers' `OPENAI_CLIP_MEAN`/`OPENAI_CLIP_STD`; written
/// as the published decimals and rounded to f32 as numpy does.
#[allow(clippy::excessive_precision)]
pub(crate) const CLIP_MEAN: [f32; 3] = [0.48145466, 0.4578275, 0.40821073];
#[allow(clippy::excessive_precision)]
pub(crate) const CLIP_STD: [f32; 3] = [0.26862954, 0.26130258, 0.27577711];

/// What an image becomes before any pixel is touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// (height, width) after `smart_resize`.
    pub resized_hw: (u32, u32),
    pub grid_thw: [u32; 3],
    /// Placeholder tokens in the prompt.
    pub num_tokens: usize,
}

/// A configured Qwen-VL image processor.
#[derive(Debug, Clone)]
pub struct QwenVlProcessor {
    pub patch_size: u32,
    pub temporal_patch_size: u32,
    pub merge_size: u32,
    pub min_pixels: u64,
    pub max_pixels: u64,
    pub mean: [f32; 3],
    pub std: [f32; 3],
    pub rescale: f32,
}

/// Which tensors [`QwenVlProcessor::process_planned`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tensors {
    /// Only the uint8 `patches` (vLLM's `kwargs_data`).
    Patches,
    /// Only the float32 `pixel_values` (transformers' output).
    PixelValues,
    /// Both.
    Both,
}

impl Tensors {
    fn patches(self) -> bool {
        self != Tensors::PixelValues
    }
    fn pixel_values(self) -> bool {
        self != Tensors::Patches
    }
}

/// One processed image.
#[derive(Debug, Clone)]
pub struct ProcessedImage {
    /// Row-major `[rows, cols]` float32 patches, rescaled and normalized (transformers'
    /// `pixel_values`); empty unless asked for.
    pub pixel_values: Vec<f32>,
    /// The same patches before rescale and normalize: the resized image's bytes in the same
    /// layout, which is what vLLM 0.33 ships in `kwargs_data` (its model normalizes); empty
    /// unless asked for.
    pub patches: Vec<u8>,
    pub rows: usize,
    pub cols: usize,
    pub grid_thw: [u32; 3],
    pub resized_hw: (u32, u32),
    pub num_tokens: usize,
}

impl QwenVlProcessor {
    /// Reads a `preprocessor_config.json`; `None` when it is not a Qwen2-VL-family processor
    /// or a patch, temporal or merge size is 0.
    pub fn from_config(json: &[u8]) -> Option<QwenVlProcessor> {
        let raw: RawConfig = serde_json::from_slice(json).ok()?;
        let ty = raw.image_processor_type.as_deref().unwrap_or_default();
        if !ty.starts_with("Qwen2VLImageProcessor") && !ty.starts_with("Qwen3VLImageProcessor") {
            return None;
        }
        let sizes = [raw.patch_size, raw.temporal_patch_size, raw.merge_size];
        if sizes.contains(&Some(0)) {
            return None;
        }
        let size = raw.size.as_ref();
        Some(QwenVlProcessor {
            patch_size: raw.patch_size.unwrap_or(14),
            temporal_patch_size: raw.temporal_patch_size.unwrap_or(2),
            merge_size: raw.merge_size.unwrap_or(2),
            min_pixels: raw
                .min_pixels
                .or(size.and_then(|s| s.shortest_edge))
                .unwrap_or(56 * 56),
            max_pixels: raw
                .max_pixels
                .or(size.and_then(|s| s.longest_edge))
                .unwrap_or(28 * 28 * 1280),
            mean: raw.image_mean.unwrap_or(CLIP_MEAN),
            std: raw.image_std.unwrap_or(CLIP_STD),
            rescale: raw.rescale_factor.unwrap_or(1.0 / 255.0),
        })
    }

    /// The resized size (h, w) and the placeholder count, without touching pixels.
    pub fn plan(&self, height: u32, width: u32) -> Result<Plan, MediaError> {
        let factor = self.patch_size * self.merge_size;
        let (h, w) = smart_resize(height, width, factor, self.min_pixels, self.max_pixels)?;
        let grid = [1, h / self.patch_size, w / self.patch_size];
        let tokens = (grid[0] * grid[1] * grid[2] / (self.merge_size * self.merge_size)) as usize;
        Ok(Plan {
            resized_hw: (h, w),
            grid_thw: grid,
            num_tokens: tokens,
        })
    }

    /// `[rows, cols]` of the patches a plan makes: one row per patch, each
    /// C × temporal × patch × patch values.
    pub fn shape(&self, plan: &Plan) -> (usize, usize) {
        let [t, h, w] = plan.grid_thw.map(|g| g as usize);
        let (p, tp) = (self.patch_size as usize, self.temporal_patch_size as usize);
        (t * h * w, 3 * tp * p * p)
    }

    /// Resizes, normalizes and patchifies an RGB image into both tensors.
    pub fn process(&self, rgb: &RgbImage) -> Result<ProcessedImage, MediaError> {
        self.process_with(rgb, Tensors::Both)
    }

    /// [`Self::process`], making only the `tensors` asked for.
    pub fn process_with(
        &self,
        rgb: &RgbImage,
        tensors: Tensors,
    ) -> Result<ProcessedImage, MediaError> {
        let plan = self.plan(rgb.height(), rgb.width())?;
        Ok(self.process_planned(rgb, &plan, tensors))
    }

    /// [`Self::process_with`] by a plan already made for this image (and checked against
    /// limits by the caller).
    pub fn process_planned(&self, rgb: &RgbImage, plan: &Plan, tensors: Tensors) -> ProcessedImage {
        let Plan {
            resized_hw: (h, w),
            grid_thw: grid,
            num_tokens,
        } = *plan;
        let (p, t, m) = (
            self.patch_size as usize,
            self.temporal_patch_size as usize,
            self.merge_size as usize,
        );
        let gw = grid[2] as usize;
        let (rows, cols) = self.shape(plan);
        let stride = w as usize * 3;
        // One row per patch, in merge-window order: `[channel][frame][y][x]`. The image is
        // resized one band of `merge` patch rows at a time (the height is a multiple of
        // it), and a band holds the next `gw * merge` rows of output. Each patch's
        // frame is split into channel planes in a small buffer, then appended once per
        // frame: the output is written in order, never zeroed first (at 1080p, zeroing was
        // ~60 MB of memset for bytes written again at once).
        let plane = p * p;
        let mut frame = PatchPlanes::new(p);
        let (want_u8, want_f32) = (tensors.patches(), tensors.pixel_values());
        let mut patches = Vec::with_capacity(if want_u8 { rows * cols } else { 0 });
        // A float row is made from the same small buffer while it is in cache (the first
        // frame normalized, the others copied), then streamed to the output: the
        // ~50 MB of a 1080p image are written once and not read back here.
        let normalize = Normalize::new(self.mean, self.std, self.rescale);
        let mut row = vec![0f32; if want_f32 { cols } else { 0 }];
        let mut pixel_values = StreamingVec::with_capacity(if want_f32 { rows * cols } else { 0 });
        let band_rows = m * p;
        resample::resize_in_bands(rgb, w, h, Filter::Bicubic, band_rows, |band| {
            for bw in 0..gw / m {
                for mh in 0..m {
                    for mw in 0..m {
                        let origin = mh * p * stride + (bw * m + mw) * p * 3;
                        frame.load(band, stride, origin);
                        if want_u8 {
                            for channel in (0..3).map(|c| frame.channel(c)) {
                                for _ in 0..t {
                                    patches.extend_from_slice(channel);
                                }
                            }
                        }
                        if want_f32 {
                            let planes = (0..3)
                                .map(|c| frame.channel(c))
                                .zip(row.chunks_exact_mut(t * plane));
                            for (c, (channel, out)) in planes.enumerate() {
                                let (first, rest) = out.split_at_mut(plane);
                                normalize.channel(c, channel, first);
                                for frame in rest.chunks_exact_mut(plane) {
                                    frame.copy_from_slice(first);
                                }
                            }
                            pixel_values.extend(&row);
                        }
                    }
                }
            }
        });
        ProcessedImage {
            pixel_values: pixel_values.finish(),
            patches,
            rows,
            cols,
            grid_thw: grid,
            resized_hw: (h, w),
            num_tokens,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// transformers' steps one at a time, from the whole resized image: the reference the
    /// banded, vectorized processor is held to.
    fn reference(p: &QwenVlProcessor, rgb: &RgbImage) -> (Vec<u8>, Vec<f32>) {
        let plan = p.plan(rgb.height(), rgb.width()).unwrap();
        let (h, w) = plan.resized_hw;
        let img = resample::resize_bicubic(rgb, w, h);
        let (ps, t, m) = (p.patch_size, p.temporal_patch_size, p.merge_size);
        let [_, gh, gw] = plan.grid_thw;
        let (mut bytes, mut floats) = (vec![], vec![]);
        for bh in 0..gh / m {
            for bw in 0..gw / m {
                for mh in 0..m {
                    for mw in 0..m {
                        for c in 0..3 {
                            for _ in 0..t {
                                for y in 0..ps {
                                    for x in 0..ps {
                                        let (py, px) =
                                            ((bh * m + mh) * ps + y, (bw * m + mw) * ps + x);
                                        let v = img.get_pixel(px, py)[c];
                                        bytes.push(v);
                                        let scaled = v as f32 / 255.0;
                                        floats.push((scaled - p.mean[c]) / p.std[c]);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        (bytes, floats)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn process_equals_the_stepwise_reference(
            w in 1u32..160, h in 1u32..160, patch16 in any::<bool>(), seed in any::<u64>(),
        ) {
            let kind = if patch16 { "Qwen3VLImageProcessor" } else { "Qwen2VLImageProcessor" };
            let patch = if patch16 { 16 } else { 14 };
            let json = format!(
                r#"{{"image_processor_type": "{kind}", "patch_size": {patch}, "min_pixels": 1024, "max_pixels": 65536}}"#
            );
            let p = QwenVlProcessor::from_config(json.as_bytes()).unwrap();
            let mut state = seed | 1;
            let rgb = RgbImage::from_fn(w, h, |_, _| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                image::Rgb([(state >> 8) as u8, (state >> 16) as u8, (state >> 24) as u8])
            });
            let Ok(got) = p.process(&rgb) else {
                // aspect ratio over 200: the reference would refuse it too
                prop_assert!(p.plan(h, w).is_err());
                return Ok(());
            };
            let (bytes, floats) = reference(&p, &rgb);
            prop_assert_eq!(got.patches, bytes);
            prop_assert_eq!(got.pixel_values, floats);
            let only = p.process_with(&rgb, Tensors::PixelValues).unwrap();
            prop_assert!(only.patches.is_empty());
            prop_assert_eq!(only.pixel_values.len(), got.rows * got.cols);
        }
    }

    #[test]
    fn shape_is_what_process_makes() {
        let p = QwenVlProcessor::from_config(
            br#"{"image_processor_type": "Qwen2VLImageProcessor", "min_pixels": 3136, "max_pixels": 12845056}"#,
        )
        .unwrap();
        for (w, h) in [(14, 14), (640, 480), (37, 301)] {
            let img = RgbImage::new(w, h);
            let plan = p.plan(h, w).unwrap();
            let got = p.process(&img).unwrap();
            assert_eq!((got.rows, got.cols), p.shape(&plan));
            assert_eq!(got.rows * got.cols, got.pixel_values.len());
        }
    }

    #[test]
    fn zero_sizes_are_not_a_processor() {
        for key in ["patch_size", "temporal_patch_size", "merge_size"] {
            let json =
                format!(r#"{{"image_processor_type": "Qwen2VLImageProcessor", "{key}": 0}}"#);
            assert!(
                QwenVlProcessor::from_config(json.as_bytes()).is_none(),
                "{key}"
            );
        }
    }

    #[test]
    fn smart_resize_matches_transformers() {
        // shared/goldens/images/cases.jsonl (qwen2_5_vl: factor 28, 3136..12845056)
        let f = |h, w| smart_resize(h, w, 28, 3136, 12_845_056);
        assert_eq!(f(1080, 1920), Ok((1092, 1932)));
        assert_eq!(f(14, 14), Ok((56, 56)));
        assert_eq!(f(20, 3000), Ok((28, 2996)));
        assert_eq!(f(640, 360), Ok((644, 364)));
        assert!(matches!(f(4200, 20), Err(MediaError::AspectRatio(r)) if (r - 210.0).abs() < 1e-9));
        assert_eq!(round_half_even(0.5), 0.0);
        assert_eq!(round_half_even(1.5), 2.0);
        assert_eq!(round_half_even(2.5), 2.0);
    }
}
