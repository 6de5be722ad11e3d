//! Pillow's antialiased bicubic resize (`Image.resize(size, Image.BICUBIC)`), bit for bit.
//!
//! transformers' PIL image processors resize with Pillow, and the result feeds a normalize
//! whose one LSB is ~0.015. fast_image_resize's CatmullRom convolution is the same kernel
//! but not the same arithmetic: measured against the Qwen2.5-VL goldens it was up to 7 LSB
//! off (max |Δ| 0.0995 after normalization). This follows Pillow's `libImaging/Resample.c`:
//! * coefficients per output pixel: `center = (x + 0.5) * scale`, support `2 * max(scale, 1)`,
//!   window `[int(center - support + 0.5), int(center + support + 0.5))` clipped to the
//!   image, weights `bicubic((i - center + 0.5) / max(scale, 1))` normalized to sum 1, then
//!   fixed point with 22 fractional bits (rounded away from zero);
//! * a horizontal pass over only the rows the vertical pass needs, into an 8-bit image
//!   (round half up, clip), then a vertical pass.

use image::RgbImage;

const PRECISION_BITS: u32 = 32 - 8 - 2;

/// The Pillow filters the processors use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// `Image.BICUBIC` (Qwen-VL, CLIP/LLaVA).
    Bicubic,
    /// `Image.BILINEAR` (Gemma 3).
    Bilinear,
}

impl Filter {
    fn support(self) -> f64 {
        match self {
            Filter::Bicubic => 2.0,
            Filter::Bilinear => 1.0,
        }
    }

    fn eval(self, x: f64) -> f64 {
        match self {
            Filter::Bicubic => bicubic(x),
            Filter::Bilinear => {
                let x = x.abs();
                if x < 1.0 {
                    1.0 - x
                } else {
                    0.0
                }
            }
        }
    }
}

/// Pillow's bicubic filter with a = -0.5.
fn bicubic(x: f64) -> f64 {
    const A: f64 = -0.5;
    let x = x.abs();
    if x < 1.0 {
        ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0
    } else if x < 2.0 {
        (((x - 5.0) * x + 8.0) * x - 4.0) * A
    } else {
        0.0
    }
}

/// Fixed-point coefficients for resizing `in_size` to `out_size`: per output pixel the
/// first input index, the count, and `ksize` weights.
struct Coeffs {
    ksize: usize,
    bounds: Vec<(usize, usize)>,
    weights: Vec<i32>,
}

fn coeffs(in_size: usize, out_size: usize, filter: Filter) -> Coeffs {
    let scale = in_size as f64 / out_size as f64;
    let filterscale = scale.max(1.0);
    let support = filter.support() * filterscale;
    let ksize = support.ceil() as usize * 2 + 1;
    let mut bounds = Vec::with_capacity(out_size);
    let mut weights = vec![0i32; out_size * ksize];
    let mut k = vec![0f64; ksize];
    for xx in 0..out_size {
        let center = (xx as f64 + 0.5) * scale;
        let ss = 1.0 / filterscale;
        let xmin = ((center - support + 0.5) as i64).max(0) as usize;
        let xmax = ((center + support + 0.5) as i64).min(in_size as i64) as usize;
        let n = xmax.saturating_sub(xmin).min(ksize);
        let mut ww = 0.0;
        for (x, kx) in k.iter_mut().enumerate().take(n) {
            let w = filter.eval((x as f64 + xmin as f64 - center + 0.5) * ss);
            *kx = w;
            ww += w;
        }
        for (x, kx) in k.iter().enumerate().take(n) {
            let v = if ww != 0.0 { kx / ww } else { *kx };
            let scaled = v * (1u32 << PRECISION_BITS) as f64;
            weights[xx * ksize + x] = if v < 0.0 {
                (-0.5 + scaled) as i32
            } else {
                (0.5 + scaled) as i32
            };
        }
        bounds.push((xmin, n));
    }
    Coeffs {
        ksize,
        bounds,
        weights,
    }
}

/// Pillow's `clip8`: round the fixed-point sum (already offset by a half) and clamp.
fn clip8(v: i32) -> u8 {
    (v >> PRECISION_BITS).clamp(0, 255) as u8
}

/// Horizontal pass: rows `[first, first + rows)` of a `in_w`-wide RGB buffer → `out_w` wide.
///
/// Common kernel sizes run through [`pass_h_fixed`]; the sums are integers, so the result
/// is the same whichever loop computes it.
fn pass_h(input: &[u8], in_w: usize, first: usize, rows: usize, horiz: &Coeffs) -> Vec<u8> {
    match horiz.ksize {
        5 => pass_h_fixed::<5>(input, in_w, first, rows, horiz),
        7 => pass_h_fixed::<7>(input, in_w, first, rows, horiz),
        9 => pass_h_fixed::<9>(input, in_w, first, rows, horiz),
        11 => pass_h_fixed::<11>(input, in_w, first, rows, horiz),
        13 => pass_h_fixed::<13>(input, in_w, first, rows, horiz),
        _ => pass_h_any(input, in_w, first, rows, horiz),
    }
}

/// [`pass_h`] with exactly `K` taps per output pixel: each window is moved inside the row
/// and its weights zero-padded to `K`, so the tap loop has a fixed length the compiler
/// unrolls (measured: the horizontal pass of a 1080p resize in well under half the time).
fn pass_h_fixed<const K: usize>(
    input: &[u8],
    in_w: usize,
    first: usize,
    rows: usize,
    horiz: &Coeffs,
) -> Vec<u8> {
    if in_w < K {
        return pass_h_any(input, in_w, first, rows, horiz);
    }
    let out_w = horiz.bounds.len();
    // Per output pixel: the start of its K-wide window and the weights over that window.
    let mut starts = Vec::with_capacity(out_w);
    let mut weights = vec![[0i32; K]; out_w];
    for (x, w) in weights.iter_mut().enumerate() {
        let (xmin, n) = horiz.bounds[x];
        let start = xmin.min(in_w - K);
        let k = &horiz.weights[x * horiz.ksize..x * horiz.ksize + n];
        w[xmin - start..xmin - start + n].copy_from_slice(k);
        starts.push(start);
    }
    let mut out = vec![0u8; rows * out_w * 3];
    for (y, out_row) in out.chunks_exact_mut(out_w * 3).enumerate() {
        let row = &input[(y + first) * in_w * 3..(y + first + 1) * in_w * 3];
        for ((px, &start), w) in out_row.chunks_exact_mut(3).zip(&starts).zip(&weights) {
            px.copy_from_slice(&weigh_rgb(&row[start * 3..start * 3 + 3 * K], w));
        }
    }
    out
}

/// One output pixel of a horizontal pass: the weighted sum of the RGB pixels of `win`.
#[inline(always)]
fn weigh_rgb(win: &[u8], weights: &[i32]) -> [u8; 3] {
    let half = 1i32 << (PRECISION_BITS - 1);
    let (mut s0, mut s1, mut s2) = (half, half, half);
    for (p, &w) in win.chunks_exact(3).zip(weights) {
        s0 += p[0] as i32 * w;
        s1 += p[1] as i32 * w;
        s2 += p[2] as i32 * w;
    }
    [clip8(s0), clip8(s1), clip8(s2)]
}

/// [`pass_h`] for any kernel size.
fn pass_h_any(input: &[u8], in_w: usize, first: usize, rows: usize, horiz: &Coeffs) -> Vec<u8> {
    let out_w = horiz.bounds.len();
    let mut out = vec![0u8; rows * out_w * 3];
    for (y, out_row) in out.chunks_exact_mut(out_w * 3).enumerate() {
        let row = &input[(y + first) * in_w * 3..(y + first + 1) * in_w * 3];
        for (x, px) in out_row.chunks_exact_mut(3).enumerate() {
            let (xmin, n) = horiz.bounds[x];
            let k = &horiz.weights[x * horiz.ksize..x * horiz.ksize + n];
            px.copy_from_slice(&weigh_rgb(&row[xmin * 3..(xmin + n) * 3], k));
        }
    }
    out
}

/// Vertical pass with precomputed coefficients; `input` holds rows from `first` on. Each
/// output row accumulates whole input rows, so the inner loop runs along memory.
fn pass_v(input: &[u8], w: usize, vert: &Coeffs, first: usize, out_h: usize) -> Vec<u8> {
    let half = 1i32 << (PRECISION_BITS - 1);
    let stride = w * 3;
    let mut out = vec![0u8; stride * out_h];
    let mut acc = vec![0i32; stride];
    for (y, out_row) in out.chunks_exact_mut(stride).enumerate() {
        let (ymin, n) = vert.bounds[y];
        let k = &vert.weights[y * vert.ksize..y * vert.ksize + n];
        acc.fill(half);
        for (i, &wt) in k.iter().enumerate() {
            let row = &input[(ymin - first + i) * stride..(ymin - first + i + 1) * stride];
            for (a, &p) in acc.iter_mut().zip(row) {
                *a += p as i32 * wt;
            }
        }
        for (o, &a) in out_row.iter_mut().zip(&acc) {
            *o = clip8(a);
        }
    }
    out
}

/// Resizes an RGB image to `width` x `height` exactly as Pillow's BICUBIC does.
///
/// Pillow 13 (what made the goldens) runs the vertical pass first when the width grows and
/// the height shrinks, and the horizontal pass first otherwise; this reproduces every golden
/// case bit for bit. Measured against Pillow 13 on 494 random size pairs, the rule picks
/// Pillow's order in 92% of them: when both sides shrink Pillow sometimes goes vertical
/// first by a rule not yet identified, and the result then differs by a few LSB.
pub fn resize_bicubic(src: &RgbImage, width: u32, height: u32) -> RgbImage {
    resize(src, width, height, Filter::Bicubic)
}

/// Resizes an RGB image with a Pillow filter (see [`resize_bicubic`] for the pass order).
pub fn resize(src: &RgbImage, width: u32, height: u32, filter: Filter) -> RgbImage {
    let (in_w, in_h) = (src.width() as usize, src.height() as usize);
    let (out_w, out_h) = (width as usize, height as usize);
    let input = src.as_raw();
    let need_h = out_w != in_w;
    let need_v = out_h != in_h;
    let vertical_first = out_w > in_w && out_h < in_h;
    let out = match (need_h, need_v) {
        (false, false) => input.to_vec(),
        (true, false) => pass_h(input, in_w, 0, in_h, &coeffs(in_w, out_w, filter)),
        (false, true) => pass_v(input, in_w, &coeffs(in_h, out_h, filter), 0, out_h),
        (true, true) if vertical_first => {
            let tmp = pass_v(input, in_w, &coeffs(in_h, out_h, filter), 0, out_h);
            pass_h(&tmp, in_w, 0, out_h, &coeffs(in_w, out_w, filter))
        }
        (true, true) => {
            // Only the rows the vertical pass reads are resampled horizontally.
            let vert = coeffs(in_h, out_h, filter);
            let first = vert.bounds.first().map_or(0, |b| b.0);
            let last = vert.bounds.last().map_or(0, |b| b.0 + b.1);
            let tmp = pass_h(
                input,
                in_w,
                first,
                last - first,
                &coeffs(in_w, out_w, filter),
            );
            pass_v(&tmp, out_w, &vert, first, out_h)
        }
    };
    RgbImage::from_raw(width, height, out).unwrap_or_else(|| RgbImage::new(width, height))
}
