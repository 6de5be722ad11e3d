//! A chat request's `mm_processor_kwargs`: what it may change about image processing, and
//! what of it goes into the images' content hashes.
//!
//! * `output_dtype` (ext): the `mm_tensors` element type, `float32`, `bfloat16` or `none`;
//!   always accepted, never hashed (it changes only our extension field).
//! * `min_pixels`, `max_pixels`: the Qwen-VL processor's resize bounds, as transformers'
//!   `Qwen2VLImageProcessor` takes them per call. vLLM 0.33 refuses per-request processor
//!   kwargs unless started with `--trust-request-mm-kwargs`, and so do we. When given, vLLM
//!   hashes them with each image (`MultiModalHasher.hash_kwargs(..., mm_processor_kwargs=
//!   {...})`, in the order the request gave them), so the same image at another resolution
//!   gets another cache key; `media::mm_hash` reproduces that.
//!
//! Other keys are refused with a 400 rather than silently ignored.
//!
//! The server may set the same bounds for every request (`--mm-processor-kwargs`, as vLLM's
//! flag of that name): a request's own win. vLLM applies its server-level kwargs when it
//! builds the processor and does not hash them, and neither do we (checked against vLLM's
//! server in fixtures/goldens/render_mm/server_kwargs.jsonl).

use super::TensorDtype;
use crate::error::RequestError;
use crate::render::RenderOptions;
use serde_json::{Map, Value};

/// Resize bounds for the Qwen-VL processor; `None` keeps the model's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bounds {
    pub min_pixels: Option<u64>,
    pub max_pixels: Option<u64>,
}

impl Bounds {
    /// `--mm-processor-kwargs`: a JSON object with `min_pixels` and/or `max_pixels`
    /// (positive integers). vLLM's `use_fast: false` is accepted: it is what we do.
    pub fn parse_flag(json: &str) -> Result<Bounds, String> {
        let mut v: serde_json::Map<String, Value> =
            serde_json::from_str(json).map_err(|e| format!("not a JSON object: {e}"))?;
        if v.get("use_fast") == Some(&Value::Bool(false)) {
            v.remove("use_fast");
        }
        let b: Bounds = serde_json::from_value(Value::Object(v))
            .map_err(|e| format!("{e} (supported: min_pixels, max_pixels, and use_fast: false)"))?;
        if b.min_pixels == Some(0) || b.max_pixels == Some(0) {
            return Err("min_pixels and max_pixels must be positive".into());
        }
        Ok(b)
    }
}

/// The image settings of one request.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageKwargs {
    pub dtype: TensorDtype,
    /// vLLM's `mm_payload: "none"` (or `return_mm_kwargs: false`): no `kwargs_data` or
    /// `mm_metadata`, only hashes and placeholders (hash-only renders for routers).
    pub no_payload: bool,
    /// vLLM main's `skip_pixel_values`: the images' source bytes (`raw_images`) instead of
    /// any pixel tensor; no pixel is made.
    pub raw_images: bool,
    pub min_pixels: Option<u64>,
    pub max_pixels: Option<u64>,
    /// The processor kwargs as vLLM hashes them: name and value, in request order.
    pub hashed: Vec<(String, i64)>,
}

impl ImageKwargs {
    pub fn parse(
        kwargs: Option<&Map<String, Value>>,
        opts: &RenderOptions,
    ) -> Result<ImageKwargs, RequestError> {
        let mut out = ImageKwargs {
            dtype: opts.tensor_dtype,
            no_payload: false,
            raw_images: false,
            min_pixels: opts.processor_bounds.min_pixels,
            max_pixels: opts.processor_bounds.max_pixels,
            hashed: Vec::new(),
        };
        for (k, v) in kwargs.into_iter().flatten() {
            let param = format!("mm_processor_kwargs.{k}");
            match k.as_str() {
                "output_dtype" => out.dtype = parse_dtype(v)?,
                "min_pixels" | "max_pixels" if !opts.trust_request_mm_kwargs => {
                    return Err(RequestError::invalid(
                        param,
                        format!(
                            "mm_processor_kwargs.{k} is refused: per-request processor kwargs \
                             change the cost of preprocessing; start the server with \
                             --trust-request-mm-kwargs to accept them from trusted clients"
                        ),
                    ));
                }
                "min_pixels" | "max_pixels" => {
                    let n = v
                        .as_u64()
                        .filter(|n| (1..=i64::MAX as u64).contains(n))
                        .ok_or_else(|| {
                            RequestError::invalid(
                                &param,
                                format!("{param} must be a positive integer, got {v}"),
                            )
                        })?;
                    if k == "min_pixels" {
                        out.min_pixels = Some(n);
                    } else {
                        out.max_pixels = Some(n);
                    }
                    out.hashed.push((k.clone(), n as i64));
                }
                _ => {
                    return Err(RequestError::invalid(
                        param,
                        format!(
                            "mm_processor_kwargs.{k} is not supported (output_dtype, and with \
                             --trust-request-mm-kwargs min_pixels and max_pixels)"
                        ),
                    ))
                }
            }
        }
        Ok(out)
    }
}

/// The names `--mm-tensor-dtype` takes (one list for the flag and the request).
fn parse_dtype(v: &Value) -> Result<TensorDtype, RequestError> {
    v.as_str()
        .and_then(|s| <TensorDtype as clap::ValueEnum>::from_str(s, false).ok())
        .ok_or_else(|| {
            RequestError::invalid(
                "mm_processor_kwargs.output_dtype",
                format!("output_dtype must be float32, bfloat16 or none, got {v}"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value, trust: bool) -> Result<ImageKwargs, RequestError> {
        let opts = RenderOptions {
            trust_request_mm_kwargs: trust,
            ..Default::default()
        };
        ImageKwargs::parse(v.as_object(), &opts)
    }

    #[test]
    fn bounds_need_trust_and_keep_their_order() {
        assert!(parse(json!({"max_pixels": 100352}), false).is_err());
        let k = parse(
            json!({"max_pixels": 100352, "output_dtype": "none", "min_pixels": 3136}),
            true,
        )
        .unwrap();
        assert_eq!((k.min_pixels, k.max_pixels), (Some(3136), Some(100352)));
        assert_eq!(k.dtype, TensorDtype::None);
        let names: Vec<&str> = k.hashed.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["max_pixels", "min_pixels"]);
        assert!(parse(json!({"min_pixels": 0}), true).is_err());
        assert!(parse(json!({"min_pixels": 3.5}), true).is_err());
        assert!(parse(json!({"fps": 2}), true).is_err());
        assert!(parse(json!({"output_dtype": "int8"}), false).is_err());
        assert_eq!(parse(json!({}), false).unwrap().hashed, vec![]);
    }

    #[test]
    fn server_bounds_apply_unhashed_under_the_request() {
        let b = Bounds::parse_flag(r#"{"max_pixels": 200704, "use_fast": false}"#).unwrap();
        assert_eq!(b.max_pixels, Some(200704));
        assert!(Bounds::parse_flag(r#"{"fps": 2}"#).is_err());
        assert!(Bounds::parse_flag(r#"{"use_fast": true}"#).is_err());
        assert!(Bounds::parse_flag(r#"{"min_pixels": 0}"#).is_err());
        assert!(Bounds::parse_flag("[]").is_err());
        let opts = RenderOptions {
            trust_request_mm_kwargs: true,
            processor_bounds: Bounds {
                min_pixels: Some(3136),
                max_pixels: Some(200704),
            },
            ..Default::default()
        };
        let k = ImageKwargs::parse(json!({"min_pixels": 6272}).as_object(), &opts).unwrap();
        assert_eq!((k.min_pixels, k.max_pixels), (Some(6272), Some(200704)));
        assert_eq!(k.hashed, vec![("min_pixels".to_string(), 6272)]);
    }
}
