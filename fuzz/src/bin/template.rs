//! AFL++ harness of the `template` target (`llm_render_fuzz::template`); docs/fuzzing.md runs it.
fn main() {
    // The models load once, before the fork server starts (`server::prepare`).
    llm_render_fuzz::server::prepare();
    afl::fuzz!(|data: &[u8]| llm_render_fuzz::template::run(data));
}
