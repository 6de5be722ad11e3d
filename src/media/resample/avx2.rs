//! The AVX2 kernels. LLVM leaves [`super::Portable`] scalar (24 lanes of three rows ×
//! eight), so the 8-lane multiply-adds are written out: measured, 9 ms → 2 ms for the
//! horizontal pass of photo_1080p.

use super::{Coeffs, Weigh, LANES, PRECISION_BITS};
use std::arch::x86_64::*;

struct Avx2;

impl Weigh for Avx2 {
    #[inline(always)]
    fn weigh<const K: usize>(cols: &[[u8; LANES]], w: &[i32; K]) -> [u8; LANES] {
        let mut out = [0u8; LANES];
        // SAFETY: only reached from `pass_h_fixed` below, which runs with AVX2 enabled;
        // every load reads 8 bytes inside one 24-byte column, and `cols` has K columns.
        unsafe {
            let half = _mm256_set1_epi32(1 << (PRECISION_BITS - 1));
            let (mut a0, mut a1, mut a2) = (half, half, half);
            for (col, &wk) in cols[..K].iter().zip(w) {
                let wk = _mm256_set1_epi32(wk);
                let p = col.as_ptr();
                let l0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64(p as *const __m128i));
                let l1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64(p.add(8) as *const __m128i));
                let l2 = _mm256_cvtepu8_epi32(_mm_loadl_epi64(p.add(16) as *const __m128i));
                a0 = _mm256_add_epi32(a0, _mm256_mullo_epi32(l0, wk));
                a1 = _mm256_add_epi32(a1, _mm256_mullo_epi32(l1, wk));
                a2 = _mm256_add_epi32(a2, _mm256_mullo_epi32(l2, wk));
            }
            let (n0, n1, n2) = (narrow(a0), narrow(a1), narrow(a2));
            let lo = _mm_packus_epi16(n0, n1);
            let hi = _mm_packus_epi16(n2, n2);
            _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, lo);
            _mm_storel_epi64(out.as_mut_ptr().add(16) as *mut __m128i, hi);
        }
        out
    }
}

/// [`super::pass_v_rows`] compiled for AVX2: LLVM vectorizes it as it stands, but
/// baseline x86-64 has no 8-lane `vpmulld` (measured: 4.7 → 1.5 ms for the vertical
/// pass of photo_1080p).
#[target_feature(enable = "avx2")]
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

/// `clip8` on 8 lanes: arithmetic shift, then saturate to i16 (a later `packus` to u8
/// completes the clamp to 0..=255).
///
/// # Safety
/// The caller runs with AVX2 enabled.
#[inline(always)]
unsafe fn narrow(a: __m256i) -> __m128i {
    let a = _mm256_srai_epi32::<{ PRECISION_BITS as i32 }>(a);
    _mm_packs_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256::<1>(a))
}

#[target_feature(enable = "avx2")]
pub(super) fn pass_h_fixed<const K: usize>(
    input: &[u8],
    in_w: usize,
    first: usize,
    rows: usize,
    horiz: &Coeffs,
) -> Vec<u8> {
    super::pass_h_blocks::<K, Avx2>(input, in_w, first, rows, horiz)
}
