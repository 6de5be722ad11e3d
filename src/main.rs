use clap::Parser;

/// mimalloc: renders allocate and free request-sized buffers (bodies, prompts, token
/// lists, responses) at a high rate; glibc's malloc returns large ones to the kernel and
/// pays page faults to get them back (measured: ~16% of server CPU in `clear_page`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = llm_render::cli::Cli::parse();
    match llm_render::cli::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("llm-render: {e:#}");
            std::process::exit(2);
        }
    }
}
