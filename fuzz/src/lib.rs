//! Fuzz targets for everything llm-render reads from clients. Each target is a function of
//! the input bytes that returns when llm-render handled them as it must, and panics on a
//! finding: a panic anywhere in the server, a 500 or 502, an error body that is not
//! OpenAI's error shape, or (parsers) a streamed result that differs from the one-shot one.
//! AFL++ runs them through the harnesses in `src/bin/` (`cargo afl`, stable toolchain), and
//! `tests/regressions.rs` replays every seed, the kept corpus and every crash reproducer
//! through the same functions on each `cargo test`. How to run a campaign: docs/fuzzing.md.
//!
//! | target     | input                                   | what it reaches                        |
//! |------------|-----------------------------------------|----------------------------------------|
//! | `request`  | a route selector byte, then a body      | every work route, through `server::respond` |
//! | `state`    | a stream state's JSON, signed by the server's key | the derender's resume of it  |
//! | `parsers`  | `tool:NAME`, `reasoning:NAME` or `harmony`, a newline, text | each parser, one-shot and chunked |
//! | `template` | a request `chat_template`               | the template engine: fuel, depth, size |
//! | `image`    | an image file                           | decode, content hash, Qwen-VL processor |

pub mod image;
pub mod parsers;
pub mod request;
pub mod server;
pub mod state;
pub mod template;

/// A target: runs one input, panics on a finding.
pub type Target = fn(&[u8]);

/// Every target by name (the names of `fuzz/seeds/`, `fuzz/corpus/` and `fuzz/regressions/`).
pub const TARGETS: &[(&str, Target)] = &[
    ("request", request::run),
    ("state", state::run),
    ("parsers", parsers::run),
    ("template", template::run),
    ("image", image::run),
];
