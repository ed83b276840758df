//! `duet-demo-agent`: the demo agent as a standalone binary, for tests and
//! benchmarks (duet itself runs it as `duet demo-agent`).

use std::process::ExitCode;

use clap::Parser;

/// duet's demo agent: an offline, scripted TUI that speaks Qwen Code's dual-output protocol.
#[derive(Parser)]
#[command(name = "duet-demo-agent", version)]
struct Cli {
    #[command(flatten)]
    options: duet_demo_agent::Options,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match duet_demo_agent::run(cli.options) {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(e) => {
            eprintln!("duet-demo-agent: {e:#}");
            ExitCode::FAILURE
        }
    }
}
