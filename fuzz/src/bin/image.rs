//! AFL++ harness of the `image` target (`llm_render_fuzz::image`); docs/fuzzing.md runs it.
fn main() {
    afl::fuzz!(|data: &[u8]| llm_render_fuzz::image::run(data));
}
