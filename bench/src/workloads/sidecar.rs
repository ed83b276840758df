//! Sidecar relay: the program appends events (each stamped with the
//! monotonic clock when written) to its events file; measured at the
//! client's receipt. Two runs: paced at 1,000 events/s for latency, and
//! 100,000 events as fast as the writer goes for the sustained rate. The
//! baseline follows the same file with inotify in this process.

use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::{blocking, Ctx, STOP_GRACE};
use crate::duet::{EventBody, Frame};
use crate::fixture::{mono_ns, READY};
use crate::follow::follow;
use crate::report::{Row, Samples, Target};

/// No event for this long: the rest counts as lost.
const GIVE_UP: Duration = Duration::from_secs(10);

/// What one run saw.
struct Run {
    /// Write → receipt, µs, in order of receipt.
    lat_us: Vec<f64>,
    /// First write and last receipt, monotonic ns.
    first_write: u64,
    last_seen: u64,
    received: u64,
    out_of_order: u64,
}

impl Run {
    fn new() -> Self {
        Self {
            lat_us: Vec::new(),
            first_write: u64::MAX,
            last_seen: 0,
            received: 0,
            out_of_order: 0,
        }
    }

    fn record(&mut self, ev: &EventBody, seen: u64) {
        let (Some(i), Some(t)) = (ev.i, ev.t) else {
            return;
        };
        if i != self.received {
            self.out_of_order += 1;
        }
        self.received += 1;
        self.lat_us.push(seen.saturating_sub(t) as f64 / 1e3);
        self.first_write = self.first_write.min(t);
        self.last_seen = seen;
    }

    fn rate(&self) -> f64 {
        self.received as f64 / ((self.last_seen - self.first_write) as f64 / 1e9)
    }
}

async fn bare(ctx: &Ctx, name: &str, count: u64, rate: u64) -> Result<Run> {
    let dir = ctx.tmp.path().join(name);
    std::fs::create_dir_all(&dir)?;
    let file = dir.join("events.jsonl");
    let mut follower = follow(&file)?;
    let (count_s, rate_s) = (count.to_string(), rate.to_string());
    let file_s = file.to_string_lossy().into_owned();
    let mut pty = ctx.bare_fixture(&[
        "events", "--file", &file_s, "--count", &count_s, "--rate", &rate_s,
    ])?;
    let pty = blocking(move || {
        pty.wait_for_text(READY)?;
        pty.keys(b"g")?;
        Ok(pty)
    })
    .await?;
    let mut run = Run::new();
    while run.received < count {
        // Nothing for this long: the rest is lost.
        let Ok(seen) = tokio::time::timeout(GIVE_UP, follower.lines.recv()).await else {
            break;
        };
        let seen = seen.context("bare reader stopped")?;
        let ev: EventBody = serde_json::from_str(&seen.line)?;
        run.record(&ev, seen.at);
    }
    pty.kill();
    Ok(run)
}

async fn duet(ctx: &Ctx, count: u64, rate: u64) -> Result<Run> {
    let (count_s, rate_s) = (count.to_string(), rate.to_string());
    let duet = ctx
        .duet(&[ctx.fixture(
            "events",
            &[
                "events",
                "--file",
                "{events_file}",
                "--count",
                &count_s,
                "--rate",
                &rate_s,
            ],
        )])
        .await?;
    let s = duet.create("events").await?;
    let mut c = duet.connect(s.id).await?;
    let snap = c.attach().await?;
    c.wait_for_text(&snap, READY).await?;
    c.keys(b"g").await?;
    let mut run = Run::new();
    while run.received < count {
        let Ok(frame) = tokio::time::timeout(GIVE_UP, c.next()).await else {
            break;
        };
        match frame? {
            Frame::Json(h) if h.kind == "event" => {
                let seen = mono_ns();
                if let Some(ev) = &h.event {
                    run.record(ev, seen);
                }
            }
            Frame::Json(h) if h.kind == "warning" => {
                bail!("duet warned: {}", h.message.unwrap_or_default())
            }
            Frame::Closed => bail!("closed after {} events", run.received),
            _ => {}
        }
    }
    duet.stop(STOP_GRACE).await;
    Ok(run)
}

pub(super) async fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let paced: u64 = ctx.size(10_000, 2_000);
    let flood: u64 = ctx.size(100_000, 20_000);

    let bare_paced = bare(ctx, "paced", paced, 1000).await?;
    let duet_paced = duet(ctx, paced, 1000).await?;
    let bare_flood = bare(ctx, "flood", flood, 0).await?;
    let duet_flood = duet(ctx, flood, 0).await?;

    let d = Samples::new(duet_paced.lat_us.clone());
    let b = Samples::new(bare_paced.lat_us.clone());
    let df = Samples::new(duet_flood.lat_us.clone());
    Ok(vec![
        Row::new(
            "sidecar relay",
            &format!("write → client p50, {paced} events at 1,000/s"),
            "µs",
            d.pct(50.0),
            Some(b.pct(50.0)),
            Target::Info,
        ),
        Row::new(
            "sidecar relay",
            &format!("write → client p99, {paced} events at 1,000/s"),
            "µs",
            d.pct(99.0),
            Some(b.pct(99.0)),
            Target::AtMost { value: 2000.0 },
        )
        .note(format!(
            "max: duet {:.0} µs, bare {:.0} µs",
            d.max(),
            b.max()
        )),
        Row::new(
            "sidecar relay",
            &format!("sustained rate, {flood} events unpaced"),
            "events/s",
            duet_flood.rate(),
            Some(bare_flood.rate()),
            Target::AtLeast { value: 50_000.0 },
        )
        .note(format!(
            "received {} of {flood} in order ({} out of order); bare {} of {flood}; \
             latency under flood p50 {:.1} ms, max {:.1} ms",
            duet_flood.received,
            duet_flood.out_of_order,
            bare_flood.received,
            df.pct(50.0) / 1e3,
            df.max() / 1e3
        )),
        Row::new(
            "sidecar relay",
            "events lost (both runs)",
            "",
            (paced - duet_paced.received + flood - duet_flood.received
                + duet_paced.out_of_order
                + duet_flood.out_of_order) as f64,
            Some((paced - bare_paced.received + flood - bare_flood.received) as f64),
            Target::AtMost { value: 0.0 },
        ),
    ])
}
