use clap::Parser;

/// mimalloc: renders allocate and free request-sized buffers (bodies, prompts, token
/// lists, responses) at a high rate; glibc's malloc returns large ones to the kernel and
/// pays page faults to get them back (measured: ~16% of server CPU in `clear_page`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // An empty `LLM_RENDER_*` variable counts as unset (a compose file's `LLM_RENDER_ENGINE=`),
    // not as an empty value for its flag. Nothing else runs yet, so nothing reads the
    // environment meanwhile.
    for (key, value) in std::env::vars_os() {
        if value.is_empty() && key.to_str().is_some_and(|k| k.starts_with("LLM_RENDER_")) {
            std::env::remove_var(key);
        }
    }
    let cli = llm_render::cli::Cli::parse();
    match llm_render::cli::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("llm-render: {e:#}");
            std::process::exit(2);
        }
    }
}
