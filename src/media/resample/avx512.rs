//! The AVX-512 kernels.
//!
//! The horizontal pass here works along one row, 16 output values (R, G, B of 5⅓ pixels)
//! at a time, with no interleave of rows and no scatter of results: the input bytes of
//! all 16 values' windows lie within 64 bytes when the scale is near 1 (what Qwen-VL's
//! `smart_resize` makes), so one `vpermb` per 4 taps moves each tap's bytes into its lane,
//! and each lane is multiplied by its own weight. Plans whose windows do not fit in 64
//! bytes (downscales past ~2×) fall back to the row-block kernels. Each block's indices and
//! weights serve four rows. The sums are the same integers as Pillow's loop; the proptest
//! in `mod.rs` holds this kernel to it.
//!
//! Measured on photo_1080p (criterion `photo_1080p_stages/resize`, both passes): 3.4 ms
//! with the AVX2 row blocks, 2.0 ms with this kernel.

use super::{Coeffs, PRECISION_BITS};
use std::arch::x86_64::*;

/// Output values per block: one zmm of i32.
const LANES: usize = 16;
/// Rows weighed together by each block's loaded indices and weights.
const ROWS: usize = 4;

/// Where each block reads and how it weighs: built once per resize.
struct Plan {
    /// Taps per lane, rounded up to a multiple of 4 (one `vpermb` fills 4 taps × 16 lanes).
    taps: usize,
    /// Per block: the byte offset of its 64-byte window in a row.
    base: Vec<usize>,
    /// Per block, per group of 4 taps: 64 byte indices into the window, `[tap][lane]`.
    index: Vec<[u8; 64]>,
    /// Per block, per tap: 16 weights, `[tap][lane]`.
    weights: Vec<[i32; LANES]>,
}

/// The plan for `horiz` over rows of `in_w` pixels, or `None` when some block's windows
/// span more than 64 bytes.
fn plan(horiz: &Coeffs, in_w: usize) -> Option<Plan> {
    let out_vals = horiz.bounds.len() * 3;
    let taps = horiz.widest().div_ceil(4).max(1) * 4;
    let blocks = out_vals.div_ceil(LANES);
    let mut p = Plan {
        taps,
        base: Vec::with_capacity(blocks),
        index: vec![[0u8; 64]; blocks * taps / 4],
        weights: vec![[0i32; LANES]; blocks * taps],
    };
    for b in 0..blocks {
        let first_px = horiz.bounds[b * LANES / 3].0;
        if first_px >= in_w {
            return None;
        }
        p.base.push(first_px * 3);
        for lane in 0..LANES {
            let v = b * LANES + lane;
            if v >= out_vals {
                break; // index 0, weight 0: the lane adds nothing and is not stored
            }
            let (x, c) = (v / 3, v % 3);
            let (xmin, n) = horiz.bounds[x];
            let k = &horiz.weights[x * horiz.ksize..x * horiz.ksize + n];
            for (tap, &w) in k.iter().enumerate() {
                let byte = (xmin - first_px + tap) * 3 + c;
                if byte >= 64 || first_px * 3 + byte >= in_w * 3 {
                    return None;
                }
                p.index[b * taps / 4 + tap / 4][(tap % 4) * LANES + lane] = byte as u8;
                p.weights[b * taps + tap][lane] = w;
            }
        }
    }
    Some(p)
}

/// [`super::pass_h`] along rows, or `None` when the plan does not fit (see [`plan`]).
///
/// # Safety
/// The CPU has AVX-512F, AVX-512BW and AVX-512VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
pub(super) fn pass_h(
    input: &[u8],
    in_w: usize,
    first: usize,
    rows: usize,
    horiz: &Coeffs,
) -> Option<Vec<u8>> {
    let plan = plan(horiz, in_w)?;
    let (in_stride, out_stride) = (in_w * 3, horiz.bounds.len() * 3);
    let mut out = vec![0u8; rows * out_stride];
    let half = _mm512_set1_epi32(1 << (PRECISION_BITS - 1));
    let zero = _mm512_setzero_si512();
    let groups = plan.taps / 4;
    // Rows go by fours, so each block's indices and weights are loaded once for four rows;
    // past the last row, a block's spare lanes redo the last row (same bytes, same place).
    for y0 in (0..rows).step_by(ROWS) {
        let row_of = |r: usize| first + y0 + r.min(rows - y0 - 1);
        for (b, &base) in plan.base.iter().enumerate() {
            // Each row's window: 64 bytes from `base`, masked at the row's end (masked-off
            // bytes are neither read nor used: every index points inside the row).
            let left = in_stride - base;
            let window = |r: usize| {
                let row = &input[row_of(r) * in_stride..][..in_stride];
                // SAFETY: `base < in_stride` (checked in `plan`); a plain load when 64
                // bytes remain, else the mask keeps it inside `row`.
                unsafe {
                    let at = row.as_ptr().add(base);
                    if left >= 64 {
                        _mm512_loadu_si512(at.cast())
                    } else {
                        _mm512_maskz_loadu_epi8((1u64 << left) - 1, at.cast())
                    }
                }
            };
            let windows: [__m512i; ROWS] = std::array::from_fn(window);
            let mut acc = [half; ROWS];
            for g in 0..groups {
                let idx = &plan.index[b * groups + g];
                let w = &plan.weights[(b * groups + g) * 4..][..4];
                // SAFETY: `idx` and every `[i32; 16]` are 64 bytes.
                let (idx, w) = unsafe {
                    let load = |w: &[i32; LANES]| _mm512_loadu_si512(w.as_ptr().cast());
                    let w = [load(&w[0]), load(&w[1]), load(&w[2]), load(&w[3])];
                    (_mm512_loadu_si512(idx.as_ptr().cast()), w)
                };
                for (acc, &window) in acc.iter_mut().zip(&windows) {
                    let taps = _mm512_permutexvar_epi8(idx, window);
                    let lane =
                        |t: __m128i, w: __m512i| _mm512_mullo_epi32(_mm512_cvtepu8_epi32(t), w);
                    let mut a = *acc;
                    a = _mm512_add_epi32(a, lane(_mm512_extracti32x4_epi32::<0>(taps), w[0]));
                    a = _mm512_add_epi32(a, lane(_mm512_extracti32x4_epi32::<1>(taps), w[1]));
                    a = _mm512_add_epi32(a, lane(_mm512_extracti32x4_epi32::<2>(taps), w[2]));
                    a = _mm512_add_epi32(a, lane(_mm512_extracti32x4_epi32::<3>(taps), w[3]));
                    *acc = a;
                }
            }
            let start = b * LANES;
            let n = LANES.min(out_stride - start);
            for (r, acc) in acc.iter().enumerate() {
                // clip8: shift, clamp below at 0, saturate above at 255.
                let v = _mm512_max_epi32(_mm512_srai_epi32::<{ PRECISION_BITS }>(*acc), zero);
                let out_row = &mut out[(row_of(r) - first) * out_stride..][..out_stride];
                // SAFETY: `start + n <= out_stride`; a whole store when 16 values remain (a
                // masked store is microcoded on AMD Zen 4/5), else the mask keeps it in the
                // row.
                unsafe {
                    let at = out_row.as_mut_ptr().add(start);
                    if n == LANES {
                        _mm_storeu_si128(at.cast(), _mm512_cvtusepi32_epi8(v));
                    } else {
                        _mm512_mask_cvtusepi32_storeu_epi8(at.cast(), (1u16 << n) - 1, v);
                    }
                }
            }
        }
    }
    Some(out)
}

/// [`super::pass_v_rows`] with 16 lanes: LLVM vectorizes the loop as it stands (measured
/// on photo_1080p, criterion `photo_1080p_stages/resize`: 4.2 → 3.4 ms for the whole
/// resize against the AVX2 build of the same loop).
#[target_feature(enable = "avx512f")]
pub(super) fn pass_v_rows(
    input: &[u8],
    w: usize,
    vert: &Coeffs,
    first: usize,
    y0: usize,
    out: &mut [u8],
) {
    super::pass_v_rows(input, w, vert, first, y0, out)
}
