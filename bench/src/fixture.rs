//! The programs the benchmarks run inside a PTY: `duet-bench fixture <name>`.
//! The same binary runs them under duet and under the bare PTY, so both
//! sides of every comparison run exactly the same program.
//!
//! Each one that waits for a start signal first prints [`READY`] (after
//! switching its terminal to raw mode, so a key typed later is neither
//! echoed nor held for a newline), then waits for one byte on stdin or for a
//! file to appear.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};

/// Printed once a fixture is ready for its start signal.
pub(crate) const READY: &[u8] = b"BENCH-READY\r\n";
/// The last thing a flood writes.
pub(crate) const END: &[u8] = b"\r\n__BENCH_END__\r\n";

/// `duet-bench fixture <name>`.
#[derive(Debug, Subcommand)]
pub(crate) enum Fixture {
    /// Writes `--bytes` of mixed text (colours, UTF-8, long and short lines),
    /// then [`END`].
    Flood(FloodArgs),
    /// Raw mode without echo, then copies stdin to stdout (`stty raw -echo; cat`).
    Echo(EchoArgs),
    /// Appends `--count` events to `--file`, each with the monotonic clock
    /// (ns) at the moment of writing.
    Events(EventsArgs),
    /// Writes a `session_start` event and then idles: a program that takes
    /// submits through its input file.
    Agent(AgentArgs),
    /// Terminal output at `--rate` bytes/s plus `--event-rate` events/s for
    /// `--seconds`, then [`END`] and exit.
    Mixed(MixedArgs),
}

/// `fixture flood`.
#[derive(Debug, Args)]
pub(crate) struct FloodArgs {
    #[arg(long)]
    pub bytes: u64,
    /// Start when this file exists instead of on a key.
    #[arg(long)]
    pub go_file: Option<PathBuf>,
    /// Start at once.
    #[arg(long)]
    pub start_now: bool,
    /// When done, write the time the flood took (ns) to this file.
    #[arg(long)]
    pub done_file: Option<PathBuf>,
    /// Stay alive after the flood (until stdin closes).
    #[arg(long)]
    pub idle: bool,
}

/// `fixture echo`.
#[derive(Debug, Args)]
pub(crate) struct EchoArgs {
    /// After `--count` reads, write each read's arrival and its echo's
    /// departure (monotonic ns, one `in out` pair per line) to this file.
    #[arg(long, requires = "count")]
    pub timings: Option<PathBuf>,
    #[arg(long)]
    pub count: Option<usize>,
}

/// `fixture events`.
#[derive(Debug, Args)]
pub(crate) struct EventsArgs {
    #[arg(long)]
    pub file: PathBuf,
    #[arg(long)]
    pub count: u64,
    /// Events per second; 0 writes as fast as possible.
    #[arg(long, default_value_t = 0)]
    pub rate: u64,
}

/// `fixture agent`.
#[derive(Debug, Args)]
pub(crate) struct AgentArgs {
    #[arg(long)]
    pub events: PathBuf,
    /// Only there so the profile mentions `{input_file}`; submits are
    /// observed by the benchmark itself.
    #[arg(long)]
    pub input: Option<PathBuf>,
}

/// `fixture mixed`.
#[derive(Debug, Args)]
pub(crate) struct MixedArgs {
    /// Terminal bytes per second.
    #[arg(long)]
    pub rate: u64,
    #[arg(long)]
    pub seconds: u64,
    #[arg(long)]
    pub events: PathBuf,
    #[arg(long, default_value_t = 200)]
    pub event_rate: u64,
}

/// Runs a fixture; its exit code.
pub(crate) fn run(f: Fixture) -> Result<()> {
    match f {
        Fixture::Flood(a) => flood(a),
        Fixture::Echo(a) => echo(a),
        Fixture::Events(a) => events(a),
        Fixture::Agent(a) => agent(a),
        Fixture::Mixed(a) => mixed(a),
    }
}

/// CLOCK_MONOTONIC in nanoseconds: the one clock the fixtures and the
/// benchmark process share.
pub(crate) fn mono_ns() -> u64 {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_MONOTONIC)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

fn stdout_file() -> Result<File> {
    // A plain descriptor: `Stdout` is line-buffered and would split writes.
    Ok(File::from(std::io::stdout().as_fd().try_clone_to_owned()?))
}

fn stdin_file() -> Result<File> {
    Ok(File::from(std::io::stdin().as_fd().try_clone_to_owned()?))
}

/// Raw mode (no echo, no line discipline, no output processing), like a TUI.
fn make_raw() -> Result<()> {
    use nix::sys::termios::{cfmakeraw, tcgetattr, tcsetattr, SetArg};
    let stdin = std::io::stdin();
    let mut t = tcgetattr(&stdin).context("stdin is not a terminal")?;
    cfmakeraw(&mut t);
    tcsetattr(&stdin, SetArg::TCSANOW, &t)?;
    Ok(())
}

fn ready_and_wait(out: &mut File, go_file: Option<&Path>, now: bool) -> Result<()> {
    out.write_all(READY)?;
    if now {
        return Ok(());
    }
    match go_file {
        Some(p) => {
            while !p.exists() {
                std::thread::sleep(Duration::from_micros(500));
            }
        }
        None => {
            let mut b = [0u8; 1];
            stdin_file()?.read_exact(&mut b)?;
        }
    }
    Ok(())
}

fn idle_until_stdin_closes() {
    let Ok(mut stdin) = stdin_file() else { return };
    let mut buf = [0u8; 4096];
    while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
}

/// A deterministic xorshift generator, so every run writes the same text.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: &[&str] = &[
    "fn",
    "let",
    "mut",
    "struct",
    "impl",
    "return",
    "match",
    "self",
    "async",
    "await",
    "error:",
    "warning:",
    "note:",
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "0x7f3a",
    "{}",
    "()",
    "=>",
    "->",
    "//",
    "héllo",
    "naïve",
    "→",
    "λ",
    "✓",
    "日本語",
    "Ωmega",
    "β",
    "1234567",
    "src/main.rs",
    "Compiling",
    "Finished",
    "test",
    "ok",
    "FAILED",
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
];

/// About `len` bytes of text that looks like a busy terminal: short and
/// long lines (some wider than 120 columns), SGR colours (16, 256 and
/// truecolor), bold, UTF-8, and a cursor-movement sequence now and then.
pub(crate) fn mixed_text(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed | 1);
    let mut out = Vec::with_capacity(len + 256);
    while out.len() < len {
        let style = rng.below(10);
        match style {
            0 => out.extend_from_slice(b"\x1b[1;32m"),
            1 => out.extend_from_slice(format!("\x1b[38;5;{}m", rng.below(256)).as_bytes()),
            2 => out.extend_from_slice(
                format!(
                    "\x1b[38;2;{};{};{}m",
                    rng.below(256),
                    rng.below(256),
                    rng.below(256)
                )
                .as_bytes(),
            ),
            3 => out.extend_from_slice(b"\x1b[2K\r"),
            _ => {}
        }
        let span = if rng.below(8) == 0 { 40 } else { 14 };
        let words = 2 + rng.below(span);
        for w in 0..words {
            if w > 0 {
                out.push(b' ');
            }
            out.extend_from_slice(WORDS[rng.below(WORDS.len() as u64) as usize].as_bytes());
        }
        if style < 3 {
            out.extend_from_slice(b"\x1b[0m");
        }
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// The text `flood` repeats.
pub(crate) fn flood_text() -> Vec<u8> {
    mixed_text(1 << 20, 0x5eed)
}

fn flood(a: FloodArgs) -> Result<()> {
    make_raw()?;
    let mut out = stdout_file()?;
    let text = flood_text();
    ready_and_wait(&mut out, a.go_file.as_deref(), a.start_now)?;
    let start = mono_ns();
    let mut left = a.bytes;
    let mut pos = 0usize;
    while left > 0 {
        let n = (64 * 1024).min(left as usize).min(text.len() - pos);
        out.write_all(&text[pos..pos + n])?;
        left -= n as u64;
        pos = (pos + n) % text.len();
    }
    out.write_all(END)?;
    if let Some(done) = &a.done_file {
        let took = mono_ns() - start;
        std::fs::write(done, took.to_string())?;
    }
    if a.idle {
        idle_until_stdin_closes();
    }
    Ok(())
}

fn echo(a: EchoArgs) -> Result<()> {
    make_raw()?;
    let mut out = stdout_file()?;
    let mut input = stdin_file()?;
    out.write_all(READY)?;
    let mut buf = [0u8; 4096];
    let want = a.count.unwrap_or(0);
    let mut times: Vec<(u64, u64)> = Vec::with_capacity(want);
    loop {
        let n = input.read(&mut buf)?;
        let t_in = mono_ns();
        if n == 0 {
            return Ok(());
        }
        out.write_all(&buf[..n])?;
        if times.len() < want {
            times.push((t_in, mono_ns()));
            if times.len() == want {
                if let Some(path) = &a.timings {
                    let text: String = times.iter().map(|(i, o)| format!("{i} {o}\n")).collect();
                    std::fs::write(path, text)?;
                }
            }
        }
    }
}

/// One event line (~160 bytes) stamped with the monotonic clock.
pub(crate) fn event_line(i: u64) -> String {
    format!(
        "{{\"type\":\"bench\",\"i\":{i},\"t\":{},\"text\":\"the quick brown fox jumps over the lazy dog; \
         a stream event of about the size of a token delta with its envelope\"}}\n",
        mono_ns()
    )
}

fn events(a: EventsArgs) -> Result<()> {
    make_raw()?;
    let mut out = stdout_file()?;
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&a.file)
        .with_context(|| format!("opening {}", a.file.display()))?;
    ready_and_wait(&mut out, None, false)?;
    let start = mono_ns();
    for i in 0..a.count {
        if let Some(gap) = 1_000_000_000u64.checked_div(a.rate) {
            let due = start + i * gap;
            let now = mono_ns();
            if due > now {
                std::thread::sleep(Duration::from_nanos(due - now));
            }
        }
        // One write per event, as a program appending to its log does.
        file.write_all(event_line(i).as_bytes())?;
    }
    out.write_all(END)?;
    Ok(())
}

fn agent(a: AgentArgs) -> Result<()> {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&a.events)?;
    file.write_all(
        concat!(
            r#"{"type":"system","subtype":"session_start","uuid":"00000000-0000-4000-8000-000000000001","#,
            r#""session_id":"bench","data":{"session_id":"bench","protocol_version":1,"version":"bench"}}"#,
            "\n"
        )
        .as_bytes(),
    )?;
    stdout_file()?.write_all(READY)?;
    idle_until_stdin_closes();
    Ok(())
}

fn mixed(a: MixedArgs) -> Result<()> {
    make_raw()?;
    let mut out = stdout_file()?;
    let mut events = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&a.events)?;
    let text = mixed_text(1 << 20, 0xfa17);
    ready_and_wait(&mut out, None, false)?;
    let start = mono_ns();
    let tick = 10_000_000u64; // 10 ms
    let total_ns = a.seconds * 1_000_000_000;
    let total_events = a.seconds * a.event_rate;
    let mut sent_bytes = 0u64;
    let mut sent_events = 0u64;
    let mut pos = 0usize;
    let mut t = 0u64;
    while t <= total_ns {
        let due_bytes = (a.rate as u128 * t as u128 / 1_000_000_000) as u64;
        while sent_bytes < due_bytes {
            let n = ((due_bytes - sent_bytes) as usize)
                .min(64 * 1024)
                .min(text.len() - pos);
            out.write_all(&text[pos..pos + n])?;
            sent_bytes += n as u64;
            pos = (pos + n) % text.len();
        }
        let due_events = (total_events * t / total_ns).min(total_events);
        while sent_events < due_events {
            events.write_all(event_line(sent_events).as_bytes())?;
            sent_events += 1;
        }
        t += tick;
        let due = start + t;
        let now = mono_ns();
        if due > now {
            std::thread::sleep(Duration::from_nanos(due - now));
        }
    }
    out.write_all(END)?;
    Ok(())
}
