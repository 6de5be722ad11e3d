//! Processors that turn an image into one fixed-size square, as transformers computes them
//! with its PIL backend:
//! * Gemma 3 (`Gemma3ImageProcessor`, pan-and-scan off): resize to `size` (896²) with
//!   Pillow's BILINEAR, rescale, normalize with mean = std = 0.5; 256 soft tokens, which the
//!   processor writes between `<start_of_image>` and `<end_of_image>`;
//! * LLaVA-1.5 (`CLIPImageProcessor`): resize the shortest edge to 336 (the long edge to
//!   `int(336 * long / short)`), BICUBIC, center-crop 336², OpenAI CLIP mean/std; 576 tokens.
//!
//! Output is `[3, H, W]` float32, channel planes in order (transformers' `[1, 3, H, W]`).

use super::resample::{resize, Filter};
use super::MediaError;
use image::RgbImage;

/// Which fixed-size processor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SquareKind {
    Gemma3,
    Clip,
}

/// A fixed-size image processor.
#[derive(Debug, Clone, PartialEq)]
pub struct SquareProcessor {
    pub kind: SquareKind,
    /// Output side (896 for Gemma 3, 336 for LLaVA-1.5).
    pub size: u32,
    pub mean: [f32; 3],
    pub std: [f32; 3],
    /// Image tokens per image.
    pub num_tokens: usize,
}

/// A processed image: planar `[3, size, size]` float32.
#[derive(Debug, Clone)]
pub struct SquareImage {
    pub pixel_values: Vec<f32>,
    /// The size after resize, before any crop (h, w).
    pub resized_hw: (u32, u32),
    pub size: u32,
}

impl SquareProcessor {
    pub fn gemma3() -> Self {
        SquareProcessor {
            kind: SquareKind::Gemma3,
            size: 896,
            mean: [0.5; 3],
            std: [0.5; 3],
            num_tokens: 256,
        }
    }

    pub fn llava_1_5() -> Self {
        SquareProcessor {
            kind: SquareKind::Clip,
            size: 336,
            mean: super::qwen_vl::CLIP_MEAN,
            std: super::qwen_vl::CLIP_STD,
            num_tokens: 576,
        }
    }

    /// The resized (h, w) before cropping.
    pub fn resized_hw(&self, height: u32, width: u32) -> (u32, u32) {
        match self.kind {
            SquareKind::Gemma3 => (self.size, self.size),
            SquareKind::Clip => {
                let (short, long) = if width <= height {
                    (width, height)
                } else {
                    (height, width)
                };
                let new_long = (self.size as u64 * long as u64 / short.max(1) as u64) as u32;
                if width <= height {
                    (new_long, self.size)
                } else {
                    (self.size, new_long)
                }
            }
        }
    }

    pub fn process(&self, rgb: &RgbImage) -> Result<SquareImage, MediaError> {
        if rgb.width() == 0 || rgb.height() == 0 {
            return Err(MediaError::Decode("empty image".into()));
        }
        let (h, w) = self.resized_hw(rgb.height(), rgb.width());
        let filter = match self.kind {
            SquareKind::Gemma3 => Filter::Bilinear,
            SquareKind::Clip => Filter::Bicubic,
        };
        let resized = resize(rgb, w, h, filter);
        // transformers' center_crop: top = (h - crop) // 2, left = (w - crop) // 2.
        let s = self.size as usize;
        let (top, left) = (
            (h as usize).saturating_sub(s) / 2,
            (w as usize).saturating_sub(s) / 2,
        );
        let src: &[u8] = resized.as_raw();
        let stride = w as usize * 3;
        let mut out = Vec::with_capacity(3 * s * s);
        for c in 0..3 {
            let (mean, std) = (self.mean[c], self.std[c]);
            for y in 0..s {
                let row = &src[(top + y) * stride + left * 3..(top + y) * stride + (left + s) * 3];
                out.extend(
                    row.chunks_exact(3)
                        .map(|px| (px[c] as f32 / 255.0 - mean) / std),
                );
            }
        }
        Ok(SquareImage {
            pixel_values: out,
            resized_hw: (h, w),
            size: self.size,
        })
    }
}
