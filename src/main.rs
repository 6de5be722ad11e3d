use clap::Parser;

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
