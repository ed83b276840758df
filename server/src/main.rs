//! The `duet` binary: parses flags, sets up logging and signals, and hands
//! over to the library.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use duet_server::cli::{Cli, Command, ServeArgs};
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve(args),
        Command::Run(args) => duet_server::client::run(args),
        Command::Attach(args) => duet_server::client::attach(args),
        Command::Resume(args) => duet_server::client::resume(args),
        Command::Ls(args) => duet_server::client::ls(args),
        Command::Hook(args) => duet_server::hook::run(&args),
        Command::Token(args) => match duet_server::config::mint_token(&args.name, args.role) {
            Ok((token, snippet)) => {
                #[allow(clippy::print_stdout)]
                {
                    println!("token (shown once; duet keeps only its hash): {token}\n");
                    println!("add to the config file (--config):\n\n{snippet}");
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("duet token: {e:#}");
                ExitCode::FAILURE
            }
        },
        Command::Policy(cmd) => {
            let exe = std::env::current_exe().unwrap_or_else(|_| "duet".into());
            match duet_server::cli::run_check(&cmd, exe) {
                Ok(text) => {
                    #[allow(clippy::print_stdout)]
                    {
                        print!("{text}");
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("duet policy: {e:#}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::DemoAgent(opts) => match duet_demo_agent::run(opts) {
            Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            Err(e) => {
                eprintln!("duet demo-agent: {e:#}");
                ExitCode::FAILURE
            }
        },
    }
}

fn serve(args: ServeArgs) -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| EnvFilter::new("duet_server=info,tower_http=warn")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(log_colour())
        .init();
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = args.worker_threads {
        runtime.worker_threads(n.into());
    }
    let runtime = match runtime.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("duet: starting the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve_async(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("duet: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Colour codes in log lines only for a person at a terminal: journald,
/// `docker logs` and log files get plain text. A non-empty `NO_COLOR`
/// turns colour off everywhere (https://no-color.org).
fn log_colour() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

async fn serve_async(args: ServeArgs) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let public_url = args.public_url.clone();
    // A token the operator chose is not printed: it would end up in
    // container and journald logs. A generated one must be, or nobody
    // could sign in.
    let token_supplied = args.token.is_some() || args.token_file.is_some();
    let (addr, mut opts) = args.into_options(exe)?;
    // An unsafe state directory, or one another duet runs on, is refused
    // before a start URL is printed that would lead nowhere (the server
    // checks the directory again as it starts).
    opts.state_dir = std::path::absolute(&opts.state_dir)?;
    duet_server::state_dir::prepare(&opts.state_dir)?;
    let lock = std::sync::Arc::new(duet_server::instance::StateLock::acquire(&opts.state_dir)?);
    opts.state_lock = Some(lock.clone());
    opts.public_url = public_url.clone();
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("listening on {addr}: {e}"))?;
    let local = listener.local_addr()?;
    let shutdown = shutdown_signal()?;
    let base = public_url.unwrap_or_else(|| duet_server::server::local_base_url(local));
    let base = base.trim_end_matches('/');
    // Clients find it from the moment it says it is ready.
    lock.publish(base, opts.token.as_deref())?;
    let url = match &opts.token {
        Some(_) if token_supplied => format!("{base}/ (sign in with the configured token)"),
        Some(t) => format!("{base}/?token={t}"),
        None => format!("{base}/"),
    };
    #[allow(clippy::print_stdout)]
    {
        println!("duet is ready: {url}");
    }
    duet_server::run(listener, opts, shutdown).await
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM. The handlers are installed
/// here, before the ready line is printed, not when the future is first
/// polled (by the accept loop): a SIGTERM sent as soon as duet said it was
/// ready (by a supervisor, a test) killed it outright, status 143, without
/// the orderly stop.
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut int = signal(SignalKind::interrupt())
        .map_err(|e| anyhow::anyhow!("installing the SIGINT handler: {e}"))?;
    let mut term = signal(SignalKind::terminate())
        .map_err(|e| anyhow::anyhow!("installing the SIGTERM handler: {e}"))?;
    Ok(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
    })
}
