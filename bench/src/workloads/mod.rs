//! The workloads: each starts its own duet (so memory figures are its own),
//! measures it, runs the same program on a bare PTY, and returns rows.

mod attach;
mod clients;
mod ctrl_c;
mod echo;
mod exit;
mod fan_out;
mod many;
mod sidecar;
mod stalled;
mod submit;
mod terminal;
mod throughput;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;

use crate::bare::Bare;
use crate::duet::{Duet, Profile};
use crate::peer::{Peer, PeerSpec};
use crate::report::Row;
use crate::SuiteArgs;

/// What every workload needs.
pub(crate) struct Ctx {
    pub duet_exe: PathBuf,
    pub bench_exe: PathBuf,
    pub quick: bool,
    /// Overrides the fan-out client count.
    pub fan_out_clients: Option<usize>,
    /// The pause between keystrokes in the echo workload (`--echo-gap-ms`).
    pub echo_gap: Option<Duration>,
    /// Scratch space for the baselines.
    pub tmp: tempfile::TempDir,
    /// Other gateways to measure alongside duet (`--peer`).
    pub peers: Vec<PeerSpec>,
}

impl Ctx {
    /// A context; creates the scratch directory.
    pub(crate) fn new(duet_exe: PathBuf, bench_exe: PathBuf, quick: bool) -> Result<Self> {
        Ok(Self {
            duet_exe,
            bench_exe,
            quick,
            fan_out_clients: None,
            echo_gap: None,
            peers: Vec::new(),
            tmp: tempfile::Builder::new()
                .prefix("duet-bench-bare-")
                .tempdir()?,
        })
    }

    /// `full` normally, `quick` with --quick.
    pub(crate) fn size<T>(&self, full: T, quick: T) -> T {
        if self.quick {
            quick
        } else {
            full
        }
    }

    /// A duet profile running `duet-bench fixture args...`.
    pub(crate) fn fixture(&self, name: &str, args: &[&str]) -> Profile {
        let mut all = vec!["fixture"];
        all.extend_from_slice(args);
        Profile::new(name, self.bench_exe.to_string_lossy(), &all)
    }

    /// Starts a duet with these profiles.
    pub(crate) async fn duet(&self, profiles: &[Profile]) -> Result<Duet> {
        Duet::start(&self.duet_exe, profiles).await
    }

    /// A peer serving `duet-bench fixture args...` (`{dir}`: the peer's scratch directory).
    pub(crate) async fn peer_fixture(&self, peer: &PeerSpec, args: &[&str]) -> Result<Peer> {
        let mut all = vec!["fixture"];
        all.extend_from_slice(args);
        Peer::start(peer, &self.bench_exe.to_string_lossy(), &all).await
    }

    /// `duet-bench fixture args...` on a bare PTY.
    pub(crate) fn bare_fixture(&self, args: &[&str]) -> Result<Bare> {
        let mut all = vec!["fixture"];
        all.extend_from_slice(args);
        Bare::spawn(&self.bench_exe.to_string_lossy(), &all, self.tmp.path())
    }
}

/// How long a duet gets to stop (it ends every session first).
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(20);

/// One workload.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Workload {
    Throughput,
    Echo,
    CtrlC,
    Sidecar,
    Submit,
    FanOut,
    Stalled,
    Attach,
    Exit,
    Clients,
    ManySessions,
    Terminal,
}

impl Workload {
    /// Its name in the table.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Workload::Throughput => "throughput",
            Workload::Echo => "keystroke echo",
            Workload::CtrlC => "ctrl-c under flood",
            Workload::Sidecar => "sidecar relay",
            Workload::Submit => "submit path",
            Workload::FanOut => "fan-out",
            Workload::Stalled => "stalled client",
            Workload::Attach => "attach",
            Workload::ManySessions => "many sessions",
            Workload::Exit => "exit after output",
            Workload::Clients => "extra clients",
            Workload::Terminal => "terminal client",
        }
    }

    /// Runs it.
    pub(crate) async fn run(self, ctx: &Ctx) -> Result<Vec<Row>> {
        match self {
            Workload::Throughput => throughput::run(ctx).await,
            Workload::Echo => on_one_thread(echo::run(ctx)),
            Workload::CtrlC => ctrl_c::run(ctx).await,
            Workload::Sidecar => sidecar::run(ctx).await,
            Workload::Submit => submit::run(ctx).await,
            Workload::FanOut => fan_out::run(ctx).await,
            Workload::Stalled => stalled::run(ctx).await,
            Workload::Attach => attach::run(ctx).await,
            Workload::ManySessions => many::run(ctx).await,
            Workload::Exit => exit::run(ctx).await,
            Workload::Clients => clients::run(ctx).await,
            // Its echo lanes poll their sockets themselves, as `Echo`'s do.
            Workload::Terminal => on_one_thread(terminal::run(ctx)),
        }
    }
}

/// The workloads the flags ask for, in suite order.
pub(crate) fn chosen(a: &SuiteArgs) -> Vec<Workload> {
    [
        (a.throughput, Workload::Throughput),
        (a.echo, Workload::Echo),
        (a.ctrl_c, Workload::CtrlC),
        (a.sidecar, Workload::Sidecar),
        (a.submit, Workload::Submit),
        (a.fan_out, Workload::FanOut),
        (a.stalled, Workload::Stalled),
        (a.attach, Workload::Attach),
        (a.exit, Workload::Exit),
        (a.clients, Workload::Clients),
        (a.many_sessions, Workload::ManySessions),
        (a.terminal, Workload::Terminal),
    ]
    .into_iter()
    .filter(|(on, _)| a.all || *on)
    .map(|(_, w)| w)
    .collect()
}

/// Runs a latency workload on a runtime of its own with one thread, which
/// polls the sockets itself and runs the client: a reply goes from
/// `epoll_wait` to `recvfrom` to the next `sendto` in one thread, as in a
/// plain blocking client and as the bare lane reads its PTY. On the suite's
/// runtime the workload's future runs on the `block_on` thread while a
/// worker holds the I/O driver, so every reply would also cost the client a
/// futex wake-up and a thread hop (profiled: `docs/benchmarks.md`), for the
/// gateways but not for the bare PTY.
fn on_one_thread<T: Send>(work: impl std::future::Future<Output = Result<T>> + Send) -> Result<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?
                .block_on(work)
        })
        .join()
        .map_err(|_| anyhow::anyhow!("the workload's thread panicked"))?
    })
}

/// Runs blocking baseline code off the async runtime.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f).await?
}
