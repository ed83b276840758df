//! Stalled client: one client attaches and then never reads again while the
//! program writes 1 GiB. duet's memory must stay flat and the program must
//! not be slowed down (against the same program on the same duet with no
//! client attached).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::{Ctx, STOP_GRACE};
use crate::duet::Duet;
use crate::fixture::READY;
use crate::report::{Row, Target};

/// Starts the flood by creating its go file; returns the program's own
/// time for it (from its done file) and duet's peak RSS (KiB) meanwhile.
async fn flood(duet: &Duet, dir: &Path, limit: Duration) -> Result<(f64, u64)> {
    std::fs::write(dir.join("go"), "")?;
    let done = dir.join("done");
    let t0 = Instant::now();
    let mut peak = duet.rss_kib();
    loop {
        peak = peak.max(duet.rss_kib());
        if let Ok(ns) = std::fs::read_to_string(&done) {
            if let Ok(ns) = ns.trim().parse::<u64>() {
                return Ok((ns as f64 / 1e9, peak));
            }
        }
        anyhow::ensure!(
            t0.elapsed() < limit,
            "the flood did not finish in {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until the program printed READY (seen on duet's screen).
async fn ready(duet: &Duet, id: &str) -> Result<()> {
    let t0 = Instant::now();
    let ready = String::from_utf8_lossy(READY).trim().to_string();
    while !duet.screen(id).await?.contains(&ready) {
        anyhow::ensure!(t0.elapsed() < Duration::from_secs(30), "no READY");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(())
}

pub(super) async fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let bytes: u64 = ctx.size(1 << 30, 128 << 20);
    let rounds: usize = ctx.size(3, 1);
    let bytes_s = bytes.to_string();
    let limit = Duration::from_secs(600);
    let duet = ctx
        .duet(&[ctx.fixture(
            "stalled",
            &[
                "flood",
                "--bytes",
                &bytes_s,
                "--go-file",
                "{session_dir}/go",
                "--done-file",
                "{session_dir}/done",
            ],
        )])
        .await?;

    // Interleaved rounds, best of each (the machine's load moves).
    let mut alone = Vec::new();
    let mut stalled = Vec::new();
    let mut growth_kib = 0u64;
    let (mut rss0, mut peak) = (0u64, 0u64);
    let mut cpu = 0.0f64;
    for _ in 0..rounds {
        // No client.
        let a = duet.create("stalled").await?;
        let a_id = a.id.to_string();
        ready(&duet, &a_id).await?;
        alone.push(flood(&duet, &duet.session_dir(&a_id), limit).await?.0);

        // One client that attaches and then stops reading.
        let b = duet.create("stalled").await?;
        let b_id = b.id.to_string();
        let mut c = duet.connect(&b_id).await?;
        let snap = c.attach().await?;
        c.wait_for_text(&snap, READY).await?;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let before = duet.rss_kib();
        let cpu0 = duet.cpu_secs();
        let (secs, top) = flood(&duet, &duet.session_dir(&b_id), limit)
            .await
            .context("flood with a stalled client")?;
        cpu = cpu.max(duet.cpu_secs() - cpu0);
        stalled.push(secs);
        if top.saturating_sub(before) >= growth_kib {
            growth_kib = top.saturating_sub(before);
            (rss0, peak) = (before, top);
        }
        drop(c);
    }
    duet.stop(STOP_GRACE).await;

    let best = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let list = |v: &[f64]| {
        v.iter()
            .map(|s| format!("{s:.1}"))
            .collect::<Vec<_>>()
            .join("/")
    };
    let (s_best, a_best) = (best(&stalled), best(&alone));
    Ok(vec![
        Row::new(
            "stalled client",
            &format!("duet RSS growth while {} MiB are written", bytes >> 20),
            "MiB",
            growth_kib as f64 / 1024.0,
            None,
            Target::AtMost { value: 64.0 },
        )
        .note(format!(
            "largest of {rounds} rounds: RSS {:.1} MiB before, peak {:.1} MiB",
            rss0 as f64 / 1024.0,
            peak as f64 / 1024.0
        )),
        Row::new(
            "stalled client",
            &format!("program's time to write it, best of {rounds}"),
            "s",
            s_best,
            Some(a_best),
            Target::RatioAtMost { value: 1.10 },
        )
        .note(format!(
            "baseline = same duet, no client; rounds {} s (stalled client) vs {} s (none); \
             {:.0} MB/s vs {:.0} MB/s; duet used up to {cpu:.1} CPU-s per stalled round",
            list(&stalled),
            list(&alone),
            bytes as f64 / s_best / 1e6,
            bytes as f64 / a_best / 1e6
        )),
    ])
}
