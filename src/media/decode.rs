//! Decoding as vLLM 0.33's `ImageMediaIO(image_mode="RGB").load_bytes` does:
//! `Image.open` → `ImageOps.exif_transpose` → if the image has transparency (RGBA, LA, PA or
//! a `transparency` entry), paste it on white with its alpha as mask, else `convert("RGB")`.
//! `converted` records whether the mode changed, because vLLM then hashes an `io_config`
//! along with the bytes (see `mm_hash`).
//!
//! Width and height are read from the header and checked against the limits before any
//! pixel buffer is allocated; the decoder is also given an allocation limit.

use super::MediaError;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits, RgbImage};
use std::io::Cursor;

/// Decode limits (flags of `serve`).
#[derive(Debug, Clone, Copy)]
pub struct DecodeLimits {
    /// Pillow's decompression-bomb threshold by default.
    pub max_pixels: u64,
    pub max_side: u32,
}

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits {
            max_pixels: 89_478_485,
            max_side: 32_768,
        }
    }
}

/// A decoded image in RGB, and whether vLLM would have converted its mode.
#[derive(Debug, Clone)]
pub struct Decoded {
    pub rgb: RgbImage,
    pub converted: bool,
}

/// Whether PIL opens the file in mode "RGB" (so vLLM's `convert` is a no-op).
fn pil_mode_is_rgb(bytes: &[u8], format: ImageFormat, img: &DynamicImage) -> bool {
    match format {
        // IHDR colour type 2 (truecolour) without a tRNS chunk.
        ImageFormat::Png => bytes.get(25) == Some(&2) && !png_has_trns(bytes),
        ImageFormat::Gif => false,
        _ => matches!(
            img,
            DynamicImage::ImageRgb8(_) | DynamicImage::ImageRgb16(_) | DynamicImage::ImageRgb32F(_)
        ),
    }
}

/// Whether a PNG has a `tRNS` chunk. The chunks are walked (length, type, data, CRC) up to
/// the first `IDAT`, where `tRNS` must come; scanning the bytes for "tRNS" could match
/// inside compressed image data.
fn png_has_trns(bytes: &[u8]) -> bool {
    let mut pos = 8; // after the signature
    while let (Some(len), Some(ty)) = (bytes.get(pos..pos + 4), bytes.get(pos + 4..pos + 8)) {
        match ty {
            b"tRNS" => return true,
            b"IDAT" | b"IEND" => return false,
            _ => {}
        }
        let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        pos = pos.saturating_add(12).saturating_add(len);
    }
    false
}

/// PIL's `paste(im, mask=alpha)` onto white, per channel:
/// `DIV255(255 * (255 - a) + c * a)` with `DIV255(x) = ((x + 128) >> 8 + x + 128) >> 8`.
fn over_white(c: u8, a: u8) -> u8 {
    let x = 255 * (255 - a as u32) + c as u32 * a as u32 + 128;
    (((x >> 8) + x) >> 8) as u8
}

/// A JPEG whose last scan (`FF DA`) is not followed by an end-of-image marker (`FF D9`).
/// Entropy-coded data stuffs every `FF` byte, so both markers only appear as markers
/// (an EXIF thumbnail's own EOI comes before the main image's scan).
fn jpeg_truncated(bytes: &[u8]) -> bool {
    let last_sos = bytes.windows(2).rposition(|w| w == [0xFF, 0xDA]);
    let last_eoi = bytes.windows(2).rposition(|w| w == [0xFF, 0xD9]);
    match (last_sos, last_eoi) {
        (Some(sos), Some(eoi)) => eoi < sos,
        _ => true,
    }
}

/// A decoder for `bytes`, once its format is one vLLM decodes, it is not a truncated JPEG,
/// and its header's size is within `limits`; the decoder also gets an allocation limit.
fn checked_decoder<'a>(
    bytes: &'a [u8],
    limits: &DecodeLimits,
) -> Result<(ImageFormat, impl ImageDecoder + 'a), MediaError> {
    let format = image::guess_format(bytes).map_err(|_| MediaError::Format)?;
    if !matches!(
        format,
        ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::WebP | ImageFormat::Gif
    ) {
        return Err(MediaError::Format);
    }
    if format == ImageFormat::Jpeg && jpeg_truncated(bytes) {
        // Pillow (LOAD_TRUNCATED_IMAGES off, as in vLLM) refuses these; the JPEG decoder
        // here would silently fill the missing rows.
        return Err(MediaError::Decode(
            "image file is truncated (no end-of-image marker after the scan)".into(),
        ));
    }
    // The header first, so oversized images are refused with a clear message before a
    // decoder (which has its own allocation limit) is built.
    let (width, height) = ImageReader::with_format(Cursor::new(bytes), format)
        .into_dimensions()
        .map_err(|e| MediaError::Decode(e.to_string()))?;
    let side = width.max(height);
    if side > limits.max_side {
        return Err(MediaError::TooLarge {
            side,
            limit: limits.max_side,
        });
    }
    let pixels = width as u64 * height as u64;
    if pixels > limits.max_pixels {
        return Err(MediaError::TooManyPixels {
            width,
            height,
            pixels,
            limit: limits.max_pixels,
        });
    }
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut lim = Limits::default();
    lim.max_image_width = Some(limits.max_side);
    lim.max_image_height = Some(limits.max_side);
    // RGBA at 16 bits per channel is the largest buffer a decoder allocates.
    lim.max_alloc = Some(limits.max_pixels.saturating_mul(8).saturating_add(1 << 20));
    reader.limits(lim);
    let decoder = reader
        .into_decoder()
        .map_err(|e| MediaError::Decode(e.to_string()))?;
    Ok((format, decoder))
}

/// The width and height [`decode`] gives `bytes` (its header's, turned by its EXIF
/// orientation), with the same checks before decoding, but without decoding the pixels:
/// an image that passes here may still fail to decode.
pub fn dimensions(bytes: &[u8], limits: &DecodeLimits) -> Result<(u32, u32), MediaError> {
    let (_, mut decoder) = checked_decoder(bytes, limits)?;
    let (width, height) = decoder.dimensions();
    let orientation = decoder
        .orientation()
        .map_err(|e| MediaError::Decode(e.to_string()))?;
    use image::metadata::Orientation::*;
    Ok(match orientation {
        Rotate90 | Rotate270 | Rotate90FlipH | Rotate270FlipH => (height, width),
        NoTransforms | Rotate180 | FlipHorizontal | FlipVertical => (width, height),
    })
}

/// Decodes `bytes` into RGB with vLLM's rules; refuses oversized images before decoding.
pub fn decode(bytes: &[u8], limits: &DecodeLimits) -> Result<Decoded, MediaError> {
    let (format, mut decoder) = checked_decoder(bytes, limits)?;
    let orientation = decoder
        .orientation()
        .map_err(|e| MediaError::Decode(e.to_string()))?;
    // A decoder that panics on a malformed file is a bad image, not a server error: png
    // 0.18.1 slices past a PLTE chunk whose length is not a multiple of 3
    // (`decoder/transform/palette.rs`; found by the `image` fuzz target,
    // fuzz/regressions/image/). The decoder owns its buffers, so nothing is left half-made.
    let img = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        DynamicImage::from_decoder(decoder)
    }))
    .map_err(|_| MediaError::Decode("the decoder failed on a malformed file".into()))?;
    let mut img = img.map_err(|e| MediaError::Decode(e.to_string()))?;
    img.apply_orientation(orientation);
    let converted = !pil_mode_is_rgb(bytes, format, &img);
    let rgb = if img.color().has_alpha() {
        let rgba = img.into_rgba8();
        let (w, h) = rgba.dimensions();
        let mut out = RgbImage::new(w, h);
        for (o, p) in out.pixels_mut().zip(rgba.pixels()) {
            let a = p[3];
            *o = image::Rgb([
                over_white(p[0], a),
                over_white(p[1], a),
                over_white(p[2], a),
            ]);
        }
        out
    } else {
        // No copy when the decoder already made 8-bit RGB (every baseline JPEG).
        img.into_rgb8()
    };
    Ok(Decoded { rgb, converted })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dimensions_are_the_decoded_size() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/goldens/images");
        let mut checked = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if !["png", "jpg"].contains(&ext) {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            let limits = DecodeLimits::default();
            let decoded = decode(&bytes, &limits).unwrap();
            assert_eq!(
                dimensions(&bytes, &limits).unwrap(),
                decoded.rgb.dimensions(),
                "{}",
                path.display()
            );
            checked += 1;
        }
        // The EXIF-rotated JPEG among them.
        assert!(checked >= 10, "{checked}");
        let tight = DecodeLimits {
            max_pixels: 100,
            max_side: 32_768,
        };
        let png = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/goldens/images/rgb_640x480.png"),
        )
        .unwrap();
        assert!(matches!(
            dimensions(&png, &tight),
            Err(MediaError::TooManyPixels { .. })
        ));
    }

    fn chunk(ty: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut c = (data.len() as u32).to_be_bytes().to_vec();
        c.extend_from_slice(ty);
        c.extend_from_slice(data);
        c.extend_from_slice(&[0; 4]); // CRC, not checked here
        c
    }

    #[test]
    fn trns_is_a_chunk_not_a_byte_pattern() {
        let sig = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
        let ihdr = chunk(b"IHDR", &[0; 13]);
        let without: Vec<u8> = [
            &sig[..],
            &ihdr,
            &chunk(b"IDAT", b"..tRNS.."),
            &chunk(b"IEND", b""),
        ]
        .concat();
        assert!(!png_has_trns(&without));
        let with: Vec<u8> = [
            &sig[..],
            &ihdr,
            &chunk(b"tRNS", &[0, 0]),
            &chunk(b"IDAT", b"x"),
            &chunk(b"IEND", b""),
        ]
        .concat();
        assert!(png_has_trns(&with));
        assert!(!png_has_trns(&sig));
    }
}
