//! Appending to a large `Vec<f32>` that is written once and read much later, with
//! non-temporal (streaming) stores where the CPU has AVX.
//!
//! A 1080p image's float32 `pixel_values` are ~50 MB, more than the last-level cache. A
//! plain store first reads each cache line it writes (read-for-ownership), so writing 50 MB
//! moves ~100 MB; a streaming store skips the read and does not evict the cache the
//! processor works in. Measured on photo_1080p (criterion `photo_1080p_stages/process_float32`
//! in `benches/images.rs`, resize included): 5.1 ms with plain stores, 3.4 ms streaming.

/// A `Vec<f32>` filled by [`StreamingVec::extend`] and handed over by
/// [`StreamingVec::finish`], which orders the streaming stores before anything after it.
pub(crate) struct StreamingVec {
    vec: Vec<f32>,
    streaming: bool,
}

impl StreamingVec {
    /// Room for `capacity` values, allocated once.
    pub(crate) fn with_capacity(capacity: usize) -> StreamingVec {
        #[cfg(target_arch = "x86_64")]
        let streaming = capacity > 0 && std::arch::is_x86_feature_detected!("avx");
        #[cfg(not(target_arch = "x86_64"))]
        let streaming = false;
        StreamingVec {
            vec: Vec::with_capacity(capacity),
            streaming,
        }
    }

    /// Appends `src`. Streams when the end of the vector is 32-byte aligned and has room
    /// (it stays aligned when every `src` is a multiple of 8 values, as patch rows are);
    /// otherwise copies as `extend_from_slice` does.
    pub(crate) fn extend(&mut self, src: &[f32]) {
        #[cfg(target_arch = "x86_64")]
        if self.streaming
            && self.vec.capacity() - self.vec.len() >= src.len()
            && (self.vec.as_ptr() as usize + self.vec.len() * 4).is_multiple_of(32)
        {
            // SAFETY: AVX was detected in `with_capacity`; the destination has room for
            // `src.len()` values past `len` and is 32-byte aligned, as checked just above.
            unsafe {
                let len = self.vec.len();
                avx::stream(self.vec.as_mut_ptr().add(len), src);
                self.vec.set_len(len + src.len());
            }
            return;
        }
        self.vec.extend_from_slice(src);
    }

    /// The filled vector; the streaming stores are fenced so that any thread that later
    /// sees the vector sees its values.
    pub(crate) fn finish(self) -> Vec<f32> {
        #[cfg(target_arch = "x86_64")]
        if self.streaming {
            // SAFETY: SSE is part of x86-64.
            unsafe { std::arch::x86_64::_mm_sfence() };
        }
        self.vec
    }
}

#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;

    /// Writes `src` at `dst` with 8-value streaming stores, the tail with plain ones.
    ///
    /// # Safety
    /// The CPU has AVX; `dst` is 32-byte aligned with room for `src.len()` values.
    #[target_feature(enable = "avx")]
    pub(super) unsafe fn stream(dst: *mut f32, src: &[f32]) {
        let mut chunks = src.chunks_exact(8);
        let mut d = dst;
        for c in &mut chunks {
            _mm256_stream_ps(d, _mm256_loadu_ps(c.as_ptr()));
            d = d.add(8);
        }
        let tail = chunks.remainder();
        std::ptr::copy_nonoverlapping(tail.as_ptr(), d, tail.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equals_extend_from_slice_for_any_lengths() {
        for capacity in [0usize, 7, 8, 100, 1176 * 3 + 5] {
            let mut got = StreamingVec::with_capacity(capacity);
            let mut want = Vec::new();
            let mut next = 0f32;
            for n in [8usize, 1176, 3, 16, 1176, 9, 40] {
                let src: Vec<f32> = (0..n)
                    .map(|_| {
                        next += 1.0;
                        next
                    })
                    .collect();
                got.extend(&src);
                want.extend_from_slice(&src);
            }
            assert_eq!(got.finish(), want);
        }
    }
}
