//! AFL++ harness of the `parsers` target (`llm_render_fuzz::parsers`); docs/fuzzing.md runs it.
fn main() {
    afl::fuzz!(|data: &[u8]| llm_render_fuzz::parsers::run(data));
}
