//! `duet-bench`: starts a real `duet serve` on loopback, drives it over
//! WebSockets with the workloads of docs/benchmarks.md, runs each one
//! against a bare PTY in the same run, and prints one table (also written
//! as JSON). `duet-bench fixture <name>` is the program inside the PTY.

mod bare;
mod duet;
mod fixture;
mod follow;
mod peer;
mod report;
mod workloads;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};

/// Benchmarks duet against the bare PTY. See docs/benchmarks.md.
#[derive(Debug, Parser)]
#[command(name = "duet-bench")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    suite: SuiteArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// A program for the benchmarks to run inside a PTY.
    #[command(subcommand, hide = true)]
    Fixture(fixture::Fixture),
}

/// Which workloads to run, and how.
#[derive(Debug, Clone, Args)]
pub struct SuiteArgs {
    /// Every workload.
    #[arg(long)]
    pub all: bool,
    /// Smaller sizes and counts: a smoke run of the harness, not a measurement.
    #[arg(long)]
    pub quick: bool,
    /// 256 MiB of terminal output to one client.
    #[arg(long)]
    pub throughput: bool,
    /// 10,000 single keystrokes, each waiting for its echo.
    #[arg(long)]
    pub echo: bool,
    /// Ctrl-C while `yes` floods the terminal.
    #[arg(long)]
    pub ctrl_c: bool,
    /// Events file → client latency and sustained rate.
    #[arg(long)]
    pub sidecar: bool,
    /// Client `submit` → line in the input file.
    #[arg(long)]
    pub submit: bool,
    /// One session at 10 MB/s with 100 clients.
    #[arg(long)]
    pub fan_out: bool,
    /// One client stops reading while the program writes 1 GiB.
    #[arg(long)]
    pub stalled: bool,
    /// First screen of a new client on a session with 10 MiB of history.
    #[arg(long)]
    pub attach: bool,
    /// 1,000 idle sessions with a client each.
    #[arg(long)]
    pub many_sessions: bool,
    /// A program prints 16 MiB and exits: bytes that never reach the client.
    #[arg(long)]
    pub exit: bool,
    /// Memory per extra client on one session (100 clients).
    #[arg(long)]
    pub clients: bool,
    /// The terminal client (`duet attach` in a PTY the bench holds): echo,
    /// first screen, flood rate.
    #[arg(long)]
    pub terminal: bool,
    /// Also measure another gateway with the same client and programs:
    /// `ttyd[=PATH]` (default .cache/ttyd/bin/ttyd, from bench/build-ttyd.sh) or
    /// `terminado[=PYTHON]` (default .cache/terminado-venv/bin/python, from
    /// bench/setup-terminado.sh). Repeatable. Workloads that need duet's own
    /// features show "—" for peers.
    #[arg(long, value_name = "PEER")]
    pub peer: Vec<peer::PeerSpec>,
    /// Clients in the fan-out workload [default: 100, 10 with --quick].
    #[arg(long, value_name = "N")]
    pub fan_out_clients: Option<usize>,
    /// Keystroke echo at a typist's pace: this long between keys, 600 keys
    /// (the program and duet go idle between them, as when a person types).
    #[arg(long, value_name = "MS")]
    pub echo_gap_ms: Option<u64>,
    /// Where to write the results as JSON [default: target/bench/results.json].
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// The duet binary [default: `duet` next to this binary].
    #[arg(long)]
    pub duet: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(Command::Fixture(f)) = cli.command {
        return match fixture::run(f) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("duet-bench fixture: {e:#}");
                ExitCode::FAILURE
            }
        };
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("duet-bench: starting the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(suite(cli.suite)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(2),
        Err(e) => {
            eprintln!("duet-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the chosen workloads; whether every target was met.
async fn suite(args: SuiteArgs) -> Result<bool> {
    raise_fd_limit();
    let bench_exe = std::env::current_exe()?;
    let exe_dir = bench_exe
        .parent()
        .context("the benchmark binary has no directory")?
        .to_path_buf();
    let duet_exe = args.duet.clone().unwrap_or_else(|| exe_dir.join("duet"));
    anyhow::ensure!(
        duet_exe.is_file(),
        "{} not found: build it with `cargo build --release -p duet-server` or pass --duet",
        duet_exe.display()
    );
    let json = args.json.clone().unwrap_or_else(|| {
        exe_dir
            .parent()
            .unwrap_or(&exe_dir)
            .join("bench/results.json")
    });
    let mut ctx = workloads::Ctx::new(duet_exe, bench_exe, args.quick)?;
    ctx.fan_out_clients = args.fan_out_clients;
    ctx.echo_gap = args.echo_gap_ms.map(std::time::Duration::from_millis);
    ctx.peers = args.peer.clone();
    let chosen = workloads::chosen(&args);
    anyhow::ensure!(
        !chosen.is_empty(),
        "nothing to run: pass --all or one of the workload flags (see --help)"
    );

    let started = Instant::now();
    let mut report = report::Report {
        machine: report::Machine::probe(),
        peers: args.peer.iter().map(|p| p.name().to_string()).collect(),
        quick: args.quick,
        duration_s: 0.0,
        load_per_workload: Vec::new(),
        rows: Vec::new(),
        errors: Vec::new(),
    };
    for w in chosen {
        let load = report::loadavg();
        eprintln!("duet-bench: {} (load {load})", w.name());
        report.load_per_workload.push((w.name().into(), load));
        let t = Instant::now();
        match w.run(&ctx).await {
            Ok(rows) => {
                for r in &rows {
                    eprintln!(
                        "  {}: duet {} {} / baseline {}",
                        r.metric,
                        report::fmt(r.duet),
                        r.unit,
                        r.baseline.map_or("—".into(), report::fmt)
                    );
                }
                report.rows.extend(rows);
            }
            Err(e) => {
                eprintln!("  FAILED: {e:#}");
                report.errors.push((w.name().into(), format!("{e:#}")));
            }
        }
        eprintln!("  ({:.1} s)", t.elapsed().as_secs_f64());
    }
    report.duration_s = started.elapsed().as_secs_f64();
    report.machine.load_at_end = report::loadavg();
    report.print()?;
    report.write_json(&json)?;
    eprintln!("duet-bench: results written to {}", json.display());
    Ok(report.errors.is_empty() && report.rows.iter().all(|r| r.pass != Some(false)))
}

/// Many sessions need many descriptors (in this process for the clients, in
/// duet, which inherits the limit, for PTYs and sockets).
fn raise_fd_limit() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        if soft < hard {
            let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
        }
    }
}
