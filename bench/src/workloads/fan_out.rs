//! Fan-out: one session writing 10 MB/s of terminal output plus 200
//! events/s, with 100 clients. Every client must get every event, and no
//! terminal stream may need more than one `resync` (reason `lagged`).

use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use tokio::sync::Barrier;

use super::{blocking, Ctx, STOP_GRACE};
use crate::duet::{cpu_secs, Duet, Frame};
use crate::fixture::{END, READY};
use crate::follow::follow;
use crate::report::{Row, Samples, Target};

const RATE: u64 = 10_000_000;
const EVENT_RATE: u64 = 200;

#[derive(Default)]
struct Seen {
    bytes: u64,
    lagged: u32,
    events: u64,
    out_of_order: u64,
    /// Longest time without terminal bytes while the program was writing.
    max_gap: Duration,
    /// First and last terminal frame after the start.
    first: Option<Instant>,
    last: Option<Instant>,
    exited: bool,
}

impl Seen {
    fn rate(&self) -> f64 {
        match (self.first, self.last) {
            (Some(a), Some(b)) if b > a => self.bytes as f64 / (b - a).as_secs_f64() / 1e6,
            _ => 0.0,
        }
    }
}

async fn client(
    duet: Arc<Duet>,
    id: String,
    leader: bool,
    start: Arc<Barrier>,
    limit: Duration,
) -> Result<Seen> {
    let mut c = duet.connect(&id).await?;
    let snap = c.attach().await?;
    if leader {
        c.wait_for_text(&snap, READY).await?;
    }
    start.wait().await;
    if leader {
        c.keys(b"g").await?;
    }
    let mut s = Seen::default();
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let f = match tokio::time::timeout_at(deadline, c.next()).await {
            Ok(f) => f?,
            Err(_) => break,
        };
        match f {
            Frame::Term(b) => {
                let now = Instant::now();
                if let Some(last) = s.last {
                    s.max_gap = s.max_gap.max(now - last);
                }
                s.first.get_or_insert(now);
                s.last = Some(now);
                s.bytes += b.len() as u64;
            }
            Frame::Json(h) => match h.kind.as_str() {
                "resync" if h.reason.as_deref() == Some("lagged") => s.lagged += 1,
                "event" => {
                    if let Some(i) = h.event.and_then(|e| e.i) {
                        if i != s.events {
                            s.out_of_order += 1;
                        }
                        s.events += 1;
                    }
                }
                "exit" => {
                    s.exited = true;
                    break;
                }
                _ => {}
            },
            Frame::Closed => bail!("closed before the exit"),
        }
    }
    Ok(s)
}

pub(super) async fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let clients: usize = ctx.fan_out_clients.unwrap_or(ctx.size(100, 10));
    let seconds: u64 = ctx.size(10, 3);
    let events = seconds * EVENT_RATE;
    let (rate_s, secs_s, ev_rate_s) = (
        RATE.to_string(),
        seconds.to_string(),
        EVENT_RATE.to_string(),
    );

    // Baseline: the same program on a bare PTY, one reader, inotify for events.
    let dir = ctx.tmp.path().join("fan-out");
    std::fs::create_dir_all(&dir)?;
    let ev_file = dir.join("events.jsonl");
    let mut follower = follow(&ev_file)?;
    let ev_s = ev_file.to_string_lossy().into_owned();
    let mut bare = ctx.bare_fixture(&[
        "mixed",
        "--rate",
        &rate_s,
        "--seconds",
        &secs_s,
        "--events",
        &ev_s,
        "--event-rate",
        &ev_rate_s,
    ])?;
    let bare_rate = blocking(move || {
        bare.wait_for_text(READY)?;
        bare.keys(b"g")?;
        let mut buf = vec![0u8; 64 * 1024];
        let mut tail = crate::duet::Tail::default();
        let (mut bytes, mut first) = (0u64, None);
        loop {
            let n = bare.reader.read(&mut buf)?;
            anyhow::ensure!(n > 0, "EOF before the end marker");
            first.get_or_insert_with(Instant::now);
            bytes += n as u64;
            if tail.push_ends_with(&buf[..n], END) {
                break;
            }
        }
        let secs = first.map_or(1.0, |f: Instant| f.elapsed().as_secs_f64());
        bare.kill();
        Ok(bytes as f64 / secs / 1e6)
    })
    .await?;
    let mut bare_events = 0u64;
    while bare_events < events {
        match tokio::time::timeout(Duration::from_secs(5), follower.lines.recv()).await {
            Ok(Some(_)) => bare_events += 1,
            _ => break,
        }
    }

    let duet = Arc::new(
        ctx.duet(&[ctx.fixture(
            "mixed",
            &[
                "mixed",
                "--rate",
                &rate_s,
                "--seconds",
                &secs_s,
                "--events",
                "{events_file}",
                "--event-rate",
                &ev_rate_s,
            ],
        )])
        .await?,
    );
    let s = duet.create("mixed").await?;
    let start = Arc::new(Barrier::new(clients));
    let limit = Duration::from_secs(seconds + 60);
    let cpu0 = duet.cpu_secs();
    let me = std::process::id();
    let own0 = cpu_secs(me);
    let t0 = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|i| {
            tokio::spawn(client(
                duet.clone(),
                s.id.to_string(),
                i == 0,
                start.clone(),
                limit,
            ))
        })
        .collect();
    let mut seen = Vec::new();
    for t in tasks {
        seen.push(t.await??);
    }
    let cpu = duet.cpu_secs() - cpu0;
    let own = cpu_secs(me) - own0;
    let wall = t0.elapsed().as_secs_f64();
    if let Ok(duet) = Arc::try_unwrap(duet) {
        duet.stop(STOP_GRACE).await;
    }

    let complete = seen
        .iter()
        .filter(|s| s.events == events && s.out_of_order == 0)
        .count();
    let max_lagged = seen.iter().map(|s| s.lagged).max().unwrap_or(0);
    let total_lagged: u32 = seen.iter().map(|s| s.lagged).sum();
    let rates = Samples::new(seen.iter().map(Seen::rate).collect());
    let gaps = Samples::new(seen.iter().map(|s| s.max_gap.as_secs_f64() * 1e3).collect());
    let exited = seen.iter().filter(|s| s.exited).count();
    Ok(vec![
        Row::new(
            "fan-out",
            &format!("clients with all {events} events, in order ({clients} clients)"),
            "",
            complete as f64,
            None,
            Target::AtLeast {
                value: clients as f64,
            },
        )
        .note(format!(
            "bare inotify reader got {bare_events} of {events}; {exited} of {clients} clients saw the exit"
        )),
        Row::new(
            "fan-out",
            "most lagged resyncs on one client",
            "",
            max_lagged as f64,
            None,
            Target::AtMost { value: 1.0 },
        )
        .note(format!("{total_lagged} lagged resyncs over all clients")),
        Row::new(
            "fan-out",
            "slowest client's terminal rate",
            "MB/s",
            rates.pct(0.0),
            Some(bare_rate),
            Target::Info,
        )
        .note(format!(
            "median client {:.1} MB/s; program writes {} MB/s; in {wall:.1} s duet used {cpu:.1} CPU-s \
             ({:.0}% of one core), the clients (this process) {own:.1} CPU-s ({:.0}%)",
            rates.pct(50.0),
            RATE / 1_000_000,
            100.0 * cpu / wall,
            100.0 * own / wall
        )),
        Row::new(
            "fan-out",
            "longest terminal gap on any client",
            "ms",
            gaps.max(),
            None,
            Target::Info,
        )
        .note(format!("median client's longest gap {:.0} ms", gaps.pct(50.0))),
    ])
}
