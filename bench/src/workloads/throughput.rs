//! Throughput: the program writes 256 MiB of mixed text; one client (or the
//! bare PTY's reader) receives all of it. Timed from the start key to the
//! end marker.

use std::io::Read;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::{blocking, Ctx, STOP_GRACE};
use crate::duet::{Duet, Frame, Tail};
use crate::fixture::{END, READY};
use crate::peer::{Peer, PeerFrame};
use crate::report::{Row, Target};

const END_TEXT: &[u8] = b"__BENCH_END__";

/// One bare-PTY round: seconds from the start key to the end marker.
async fn bare_round(ctx: &Ctx, bytes_arg: &str) -> Result<f64> {
    let mut bare = ctx.bare_fixture(&["flood", "--bytes", bytes_arg])?;
    blocking(move || {
        bare.wait_for_text(READY)?;
        let mut buf = vec![0u8; 64 * 1024];
        let mut tail = Tail::default();
        let t0 = Instant::now();
        bare.keys(b"g")?;
        loop {
            let n = bare.reader.read(&mut buf)?;
            anyhow::ensure!(n > 0, "EOF before the end marker");
            if tail.push_ends_with(&buf[..n], END) {
                break;
            }
        }
        let secs = t0.elapsed().as_secs_f64();
        bare.kill();
        Ok(secs)
    })
    .await
}

/// One duet round (a new session, one client): seconds, duet CPU seconds,
/// bytes received, lagged resyncs.
async fn duet_round(duet: &Duet) -> Result<(f64, f64, u64, u32)> {
    let s = duet.create("flood").await?;
    let mut c = duet.connect(s.id).await?;
    let snap = c.attach().await?;
    c.wait_for_text(&snap, READY).await?;
    let cpu0 = duet.cpu_secs();
    let mut tail = Tail::default();
    let mut received = 0u64;
    let mut lagged = 0u32;
    let mut snapshot_next = false;
    let t0 = Instant::now();
    c.keys(b"g").await?;
    loop {
        match tokio::time::timeout(Duration::from_secs(60), c.next())
            .await
            .context("no output for 60 s")??
        {
            Frame::Term(b) => {
                received += b.len() as u64;
                if snapshot_next {
                    snapshot_next = false;
                    if b.windows(END_TEXT.len()).any(|w| w == END_TEXT) {
                        break;
                    }
                } else if tail.push_ends_with(&b, END) {
                    break;
                }
            }
            Frame::Json(h) if h.kind == "resync" => {
                lagged += 1;
                snapshot_next = true;
            }
            Frame::Json(_) => {}
            Frame::Closed => bail!("closed before the end marker"),
        }
    }
    Ok((
        t0.elapsed().as_secs_f64(),
        duet.cpu_secs() - cpu0,
        received,
        lagged,
    ))
}

/// One peer round (a new terminal, one client): seconds, server CPU
/// seconds, bytes received.
async fn peer_round(peer: &Peer) -> Result<(f64, f64, u64)> {
    let (_term, mut c) = peer.open().await?;
    c.wait_for_text(READY).await?;
    let cpu0 = peer.cpu_secs();
    let mut tail = Tail::default();
    let mut received = 0u64;
    let t0 = Instant::now();
    c.keys(b"g").await?;
    loop {
        match tokio::time::timeout(Duration::from_secs(60), c.next())
            .await
            .context("no output for 60 s")??
        {
            PeerFrame::Term(b) => {
                received += b.len() as u64;
                if tail.push_ends_with(&b, END) {
                    break;
                }
            }
            PeerFrame::Other => {}
            PeerFrame::Closed => bail!("closed before the end marker"),
        }
    }
    Ok((t0.elapsed().as_secs_f64(), peer.cpu_secs() - cpu0, received))
}

pub(super) async fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let bytes: u64 = ctx.size(256 << 20, 32 << 20);
    let rounds: usize = ctx.size(3, 1);
    let bytes_arg = bytes.to_string();
    let duet = ctx
        .duet(&[ctx.fixture("flood", &["flood", "--bytes", &bytes_arg])])
        .await?;
    // Interleaved rounds, best of each: on a shared 2-core machine the
    // load moves between rounds, and the best round is the least disturbed.
    let mut peers = Vec::new();
    for spec in &ctx.peers {
        // `--idle`: the program stays after the end marker. ttyd closes the
        // connection when its program exits without sending what it still
        // holds (see the exit workload), which would cut off the marker.
        let peer = ctx
            .peer_fixture(spec, &["flood", "--bytes", &bytes_arg, "--idle"])
            .await;
        peers.push((spec.name(), peer, Vec::new()));
    }
    let mut bare = Vec::new();
    let mut runs = Vec::new();
    for _ in 0..rounds {
        bare.push(bare_round(ctx, &bytes_arg).await?);
        runs.push(duet_round(&duet).await?);
        for (_, peer, rounds) in &mut peers {
            if let Ok(p) = peer {
                rounds.push(peer_round(p).await);
            }
        }
    }
    duet.stop(STOP_GRACE).await;

    let bare_secs = bare.iter().copied().fold(f64::INFINITY, f64::min);
    let (duet_secs, cpu, received, lagged) = runs
        .iter()
        .copied()
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .context("no round")?;
    let mb = bytes as f64 / 1e6;
    let mut row = Row::new(
        "throughput",
        &format!("{} MiB to one client, best of {rounds}", bytes >> 20),
        "MB/s",
        mb / duet_secs,
        Some(mb / bare_secs),
        Target::RatioAtLeast { value: 0.9 },
    );
    for (name, peer, results) in peers {
        let results = match peer {
            Ok(p) => {
                p.stop().await;
                results.into_iter().collect::<Result<Vec<_>>>()
            }
            Err(e) => Err(e),
        };
        row = match results {
            Ok(r) => {
                let (secs, cpu, received) = r
                    .iter()
                    .copied()
                    .min_by(|a, b| a.0.total_cmp(&b.0))
                    .context("no round")?;
                let all: Vec<String> = r.iter().map(|x| format!("{:.0}", mb / x.0)).collect();
                row.peer(
                    name,
                    mb / secs,
                    format!(
                        "rounds {} MB/s; best round used {cpu:.2} CPU-s ({:.0}% of one core), \
                         {received} bytes received",
                        all.join("/"),
                        100.0 * cpu / secs
                    ),
                )
            }
            Err(e) => row.peer_failed(name, &e),
        };
    }
    let all = |v: &mut dyn Iterator<Item = f64>| {
        v.map(|s| format!("{:.0}", mb / s))
            .collect::<Vec<_>>()
            .join("/")
    };
    let parser = parser_rate(ctx.size(64 << 20, 8 << 20));
    Ok(vec![
        row.note(format!(
            "rounds duet {} MB/s, bare {} MB/s; best duet round used {cpu:.2} CPU-s \
         ({:.0}% of one core), {received} bytes received, {lagged} lagged resyncs",
            all(&mut runs.iter().map(|r| r.0)),
            all(&mut bare.iter().copied()),
            100.0 * cpu / duet_secs
        )),
        Row::new(
            "throughput",
            "screen parser alone, same text (vt100, 120×36, 2,000 lines kept)",
            "MB/s",
            parser,
            None,
            Target::Info,
        )
        .note(
            "duet's server-side screen (for attach and /screen) parses what a client could still \
         see and skims what scrolls away unseen (server/src/session/terminal/skim.rs); before \
         the skim, the reader waited for a parser 8 MiB behind and this rate bounded the row above",
        ),
    ])
}

/// The rate at which vt100 takes the flood's text by itself, in this
/// process: what bounded duet's throughput while its screen parsed every
/// byte (the reader waits for a parser more than 8 MiB behind).
fn parser_rate(bytes: usize) -> f64 {
    let text = crate::fixture::flood_text();
    let mut parser = vt100::Parser::new(36, 120, 2000);
    let t0 = Instant::now();
    let mut left = bytes;
    while left > 0 {
        for chunk in text.chunks(64 << 10) {
            let n = chunk.len().min(left);
            parser.process(&chunk[..n]);
            left -= n;
            if left == 0 {
                break;
            }
        }
    }
    bytes as f64 / 1e6 / t0.elapsed().as_secs_f64()
}
