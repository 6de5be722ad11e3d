//! AFL++ harness of the `state` target (`llm_render_fuzz::state`); docs/fuzzing.md runs it.
fn main() {
    // The models load once, before the fork server starts (`server::prepare`).
    llm_render_fuzz::server::prepare();
    afl::fuzz!(|data: &[u8]| llm_render_fuzz::state::run(data));
}
