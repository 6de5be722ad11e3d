//! The element type of the pixel tensors in responses (`mm_tensors`).

/// Element type of the pixel tensors in responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TensorDtype {
    Float32,
    /// Round-to-nearest-even from float32, as `torch.Tensor.to(torch.bfloat16)`.
    Bfloat16,
    /// No `mm_tensors` at all (vLLM's `kwargs_data` carries the pixels), as vLLM's render
    /// answers: the image is not normalized to float, saving ~67 MB of output for a 1080p
    /// photo. The default.
    #[default]
    None,
}

impl TensorDtype {
    /// Bytes per element (0 for `none`).
    pub fn width(self) -> u64 {
        match self {
            TensorDtype::Float32 => 4,
            TensorDtype::Bfloat16 => 2,
            TensorDtype::None => 0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TensorDtype::Float32 => "float32",
            TensorDtype::Bfloat16 => "bfloat16",
            TensorDtype::None => "none",
        }
    }
}

/// float32 → bfloat16 bits, rounding to nearest even; NaN stays a quiet NaN.
pub fn f32_to_bf16(v: f32) -> u16 {
    if v.is_nan() {
        return 0x7fc0;
    }
    let b = v.to_bits();
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

#[cfg(test)]
mod tests {
    use super::f32_to_bf16;

    #[test]
    fn bf16_rounds_to_nearest_even() {
        assert_eq!(f32_to_bf16(1.0), 0x3f80);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8000)), 0x3f80); // tie, even stays
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f81_8000)), 0x3f82); // tie, odd rounds up
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8001)), 0x3f81);
        assert_eq!(f32_to_bf16(-2.5), 0xc020);
        assert_eq!(f32_to_bf16(f32::NAN), 0x7fc0);
    }
}
