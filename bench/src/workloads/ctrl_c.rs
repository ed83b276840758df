//! Ctrl-C under flood: `yes` fills the terminal; after 2 s the client types
//! 0x03. Measured from the key to the last terminal byte received, where
//! "stopped" means no byte for 200 ms.

use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::{blocking, Ctx, STOP_GRACE};
use crate::bare::Bare;
use crate::duet::Frame;
use crate::peer::{Peer, PeerFrame, PeerSpec};
use crate::report::{Row, Samples, Target};

const FLOOD: Duration = Duration::from_secs(2);
const QUIET: Duration = Duration::from_millis(200);

/// Time to the last byte, and bytes received after the key.
struct Stop {
    to_last: Duration,
    bytes_after: u64,
}

fn bare_once(cwd: &Path) -> Result<Stop> {
    let mut bare = Bare::spawn("yes", &[], cwd)?;
    // (last byte seen, bytes since the key, EOF)
    let state = Arc::new(Mutex::new((Instant::now(), 0u64, false)));
    let mut reader = std::mem::replace(&mut bare.reader, Box::new(std::io::empty()));
    let reading = {
        let state = state.clone();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = reader.read(&mut buf).unwrap_or(0);
                let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
                if n == 0 {
                    s.2 = true;
                    return;
                }
                s.0 = Instant::now();
                s.1 += n as u64;
            }
        })
    };
    std::thread::sleep(FLOOD);
    let sent = {
        let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
        s.1 = 0;
        bare.keys(&[0x03])?;
        Instant::now()
    };
    loop {
        std::thread::sleep(Duration::from_millis(5));
        let s = state.lock().unwrap_or_else(|e| e.into_inner());
        if s.2 || s.0.elapsed() > QUIET {
            break;
        }
    }
    let (last, bytes_after, _) = *state.lock().unwrap_or_else(|e| e.into_inner());
    bare.kill();
    let _ = reading.join();
    Ok(Stop {
        to_last: last.saturating_duration_since(sent),
        bytes_after,
    })
}

/// The same through a peer: `reps` floods, each on a new terminal.
async fn peer_runs(spec: &PeerSpec, reps: usize) -> Result<Vec<Stop>> {
    let peer = Peer::start(spec, "yes", &[]).await?;
    let mut runs = Vec::new();
    for _ in 0..reps {
        let (_term, mut c) = peer.open().await?;
        let flood_end = tokio::time::Instant::now() + FLOOD;
        loop {
            tokio::select! {
                f = c.next() => if let PeerFrame::Closed = f? { anyhow::bail!("closed during the flood") },
                _ = tokio::time::sleep_until(flood_end) => break,
            }
        }
        let sent = Instant::now();
        c.keys(&[0x03]).await?;
        let mut last = sent;
        let mut bytes_after = 0u64;
        loop {
            match tokio::time::timeout(QUIET, c.next()).await {
                Err(_) => break,
                Ok(Ok(PeerFrame::Term(b))) => {
                    last = Instant::now();
                    bytes_after += b.len() as u64;
                }
                // `yes` dies of the Ctrl-C, and ttyd then drops the
                // connection (a reset, for a nonzero exit): the stream ended.
                Ok(Ok(PeerFrame::Closed) | Err(_)) => break,
                Ok(Ok(PeerFrame::Other)) => {}
            }
        }
        runs.push(Stop {
            to_last: last - sent,
            bytes_after,
        });
    }
    peer.stop().await;
    Ok(runs)
}

pub(super) async fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let reps: usize = ctx.size(5, 1);

    let mut bare = Vec::new();
    for _ in 0..reps {
        let cwd = ctx.tmp.path().to_path_buf();
        bare.push(blocking(move || bare_once(&cwd)).await?);
    }

    let duet = ctx
        .duet(&[crate::duet::Profile::new("yes", "yes", &[])])
        .await?;
    let mut runs = Vec::new();
    for _ in 0..reps {
        let s = duet.create("yes").await?;
        let mut c = duet.connect(s.id).await?;
        c.attach().await?;
        let flood_end = tokio::time::Instant::now() + FLOOD;
        loop {
            tokio::select! {
                f = c.next() => if let Frame::Closed = f? { anyhow::bail!("closed during the flood") },
                _ = tokio::time::sleep_until(flood_end) => break,
            }
        }
        let sent = Instant::now();
        c.keys(&[0x03]).await?;
        let mut last = sent;
        let mut bytes_after = 0u64;
        loop {
            match tokio::time::timeout(QUIET, c.next()).await {
                Err(_) => break,
                Ok(f) => match f.context("reading after Ctrl-C")? {
                    Frame::Term(b) => {
                        last = Instant::now();
                        bytes_after += b.len() as u64;
                    }
                    Frame::Closed => break,
                    Frame::Json(_) => {}
                },
            }
        }
        runs.push(Stop {
            to_last: last - sent,
            bytes_after,
        });
    }
    duet.stop(STOP_GRACE).await;
    let mut peers = Vec::new();
    for spec in &ctx.peers {
        peers.push((spec.name(), peer_runs(spec, reps).await));
    }

    let ms = |v: &[Stop]| {
        Samples::new(
            v.iter()
                .map(|s| s.to_last.as_secs_f64() * 1e3)
                .collect::<Vec<_>>(),
        )
    };
    let (d, b) = (ms(&runs), ms(&bare));
    let after = |v: &[Stop]| v.iter().map(|s| s.bytes_after).max().unwrap_or(0);
    let mut row = Row::new(
        "ctrl-c under flood",
        &format!("Ctrl-C → last byte, median of {reps}"),
        "ms",
        d.pct(50.0),
        Some(b.pct(50.0)),
        Target::AtMost { value: 10.0 },
    )
    .note(format!(
        "max: duet {:.1} ms, bare {:.1} ms; at most {} KiB (duet) / {} KiB (bare) arrived after the key",
        d.max(),
        b.max(),
        after(&runs) >> 10,
        after(&bare) >> 10
    ));
    for (name, r) in peers {
        row = match r {
            Ok(runs) => {
                let p = ms(&runs);
                row.peer(
                    name,
                    p.pct(50.0),
                    format!(
                        "max {:.1} ms; at most {} KiB arrived after the key",
                        p.max(),
                        after(&runs) >> 10
                    ),
                )
            }
            Err(e) => row.peer_failed(name, &e),
        };
    }
    Ok(vec![row])
}
