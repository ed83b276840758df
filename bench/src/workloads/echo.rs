//! Keystroke echo: single keys to a raw, non-echoing `cat`, one at a time
//! (send, wait for the echo, next).

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::{blocking, Ctx, STOP_GRACE};
use crate::duet::Frame;
use crate::fixture::{mono_ns, READY};
use crate::peer::{PeerFrame, PeerSpec};
use crate::report::{Row, Samples, Target};

const WARMUP: usize = 200;
const PINGS: usize = 2_000;

fn key(i: usize) -> u8 {
    b'a' + (i % 26) as u8
}

/// Whether a terminal frame is the echo of key `k`: it ends with the key and
/// has no escape sequence. A snapshot (at attach, or after a resync) holds
/// control sequences such as `ESC[?25h`, whose letters would otherwise pass
/// for an echo and pair the next key with this one's read.
fn is_echo(b: &[u8], k: u8) -> bool {
    b.last() == Some(&k) && !b.contains(&0x1b)
}

/// Send and receipt (monotonic ns) of each measured key.
type Stamps = Vec<(u64, u64)>;

/// Reads the fixture's `in out` pairs, waiting for the file to appear.
async fn timings(path: &Path) -> Result<Stamps> {
    for _ in 0..500 {
        if let Ok(text) = std::fs::read_to_string(path) {
            return text
                .lines()
                .map(|l| {
                    let (a, b) = l.split_once(' ').context("bad timings line")?;
                    Ok((a.parse()?, b.parse()?))
                })
                .collect();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    bail!("the echo fixture wrote no timings")
}

/// Total, key → program, and program → reader, in µs.
fn split(stamps: &Stamps, program: &Stamps) -> (Samples, Samples, Samples) {
    let us = |ns: u64| ns as f64 / 1e3;
    let pairs = stamps.iter().zip(&program[WARMUP..]);
    (
        Samples::new(stamps.iter().map(|(s, r)| us(r - s)).collect()),
        Samples::new(
            pairs
                .clone()
                .map(|((s, _), (i, _))| us(i.saturating_sub(*s)))
                .collect(),
        ),
        Samples::new(
            pairs
                .map(|((_, r), (_, o))| us(r.saturating_sub(*o)))
                .collect(),
        ),
    )
}

/// The same keys through a peer: client stamps and the fixture's own.
async fn peer_keys(ctx: &Ctx, spec: &PeerSpec, n: usize, count: &str) -> Result<(Stamps, Stamps)> {
    let peer = ctx
        .peer_fixture(
            spec,
            &["echo", "--count", count, "--timings", "{dir}/echo-times"],
        )
        .await?;
    let (_term, mut c) = peer.open().await?;
    c.wait_for_text(READY).await?;
    let mut stamps = Vec::with_capacity(n);
    for i in 0..WARMUP + n {
        let k = key(i);
        let sent = mono_ns();
        c.keys(&[k]).await?;
        loop {
            match tokio::time::timeout(Duration::from_secs(10), c.next())
                .await
                .context("no echo for 10 s")??
            {
                PeerFrame::Term(b) if is_echo(&b, k) => break,
                PeerFrame::Closed => bail!("closed"),
                _ => {}
            }
        }
        if i >= WARMUP {
            stamps.push((sent, mono_ns()));
        }
    }
    let prog = timings(&peer.dir.path().join("echo-times")).await?;
    drop(c);
    peer.stop().await;
    Ok((stamps, prog))
}

pub async fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let n: usize = ctx.size(10_000, 1_000);
    let count = (WARMUP + n).to_string();

    let bare_times = ctx.tmp.path().join("echo-times");
    let mut bare = ctx.bare_fixture(&[
        "echo",
        "--count",
        &count,
        "--timings",
        &bare_times.to_string_lossy(),
    ])?;
    let bare_stamps = blocking(move || {
        bare.wait_for_text(READY)?;
        let mut buf = [0u8; 4096];
        let mut stamps = Vec::with_capacity(n);
        for i in 0..WARMUP + n {
            let k = key(i);
            let sent = mono_ns();
            bare.keys(&[k])?;
            loop {
                let got = bare.reader.read(&mut buf)?;
                anyhow::ensure!(got > 0, "EOF");
                if buf[..got].contains(&k) {
                    break;
                }
            }
            if i >= WARMUP {
                stamps.push((sent, mono_ns()));
            }
        }
        Ok((bare, stamps))
    })
    .await?;
    let (bare, bare_stamps) = bare_stamps;
    let bare_prog = timings(&bare_times).await?;
    bare.kill();

    let duet = ctx
        .duet(&[ctx.fixture(
            "echo",
            &[
                "echo",
                "--count",
                &count,
                "--timings",
                "{session_dir}/echo-times",
            ],
        )])
        .await?;
    let s = duet.create("echo").await?;
    let mut c = duet.connect(s.id).await?;
    let snap = c.attach().await?;
    c.wait_for_text(&snap, READY).await?;
    let mut stamps = Vec::with_capacity(n);
    // A client that duet saw as stalled (on a loaded machine) gets a
    // snapshot, which can hold the key before the program has echoed it:
    // then the per-leg figures (which pair keys with the program's reads)
    // are off. Counted, to say so.
    let mut resyncs = 0u32;
    for i in 0..WARMUP + n {
        let k = key(i);
        let sent = mono_ns();
        c.keys(&[k]).await?;
        loop {
            match tokio::time::timeout(Duration::from_secs(10), c.next())
                .await
                .context("no echo for 10 s")??
            {
                Frame::Json(h) if h.kind == "resync" => resyncs += 1,
                Frame::Term(b) if is_echo(&b, k) => break,
                Frame::Closed => bail!("closed"),
                _ => {}
            }
        }
        if i >= WARMUP {
            stamps.push((sent, mono_ns()));
        }
    }
    let prog = timings(&duet.session_dir(s.id).join("echo-times")).await?;
    // The WebSocket round trip alone (no PTY): client → duet → client.
    let mut rtt = Vec::with_capacity(PINGS);
    for i in 0..PINGS {
        let id = i.to_string();
        let sent = mono_ns();
        c.json(&serde_json::json!({"type": "ping", "id": id}))
            .await?;
        loop {
            match tokio::time::timeout(Duration::from_secs(10), c.next())
                .await
                .context("no pong for 10 s")??
            {
                Frame::Json(h) if h.kind == "pong" => break,
                Frame::Closed => bail!("closed"),
                _ => {}
            }
        }
        rtt.push((mono_ns() - sent) as f64 / 1e3);
    }
    duet.stop(STOP_GRACE).await;
    let rtt = Samples::new(rtt);

    let mut peers = Vec::new();
    for spec in &ctx.peers {
        let r = peer_keys(ctx, spec, n, &count).await;
        peers.push((spec.name(), r.map(|(s, p)| split(&s, &p))));
    }

    let (d, d_in, d_out) = split(&stamps, &prog);
    let (b, b_in, b_out) = split(&bare_stamps, &bare_prog);
    let ttyd = "ttyd on a similar machine: p50 145 µs / p99 225 µs vs bare 47 / 90 µs";
    let rows = vec![
        Row::new(
            "keystroke echo",
            &format!("p50 of {n} keys"),
            "µs",
            d.pct(50.0),
            Some(b.pct(50.0)),
            Target::PlusAtMost { value: 60.0 },
        )
        .note(ttyd),
        Row::new(
            "keystroke echo",
            &format!("p99 of {n} keys"),
            "µs",
            d.pct(99.0),
            Some(b.pct(99.0)),
            Target::PlusAtMost { value: 100.0 },
        )
        .note(format!(
            "max: duet {:.0} µs, bare {:.0} µs",
            d.max(),
            b.max()
        )),
        Row::new(
            "keystroke echo",
            "p50 key sent → program reads it",
            "µs",
            d_in.pct(50.0),
            Some(b_in.pct(50.0)),
            Target::Info,
        )
        .note(if resyncs > 0 {
            format!("{resyncs} resyncs during the keys: this split is unreliable")
        } else {
            String::new()
        }),
        Row::new(
            "keystroke echo",
            "p50 program writes echo → client has it",
            "µs",
            d_out.pct(50.0),
            Some(b_out.pct(50.0)),
            Target::Info,
        ),
        Row::new(
            "keystroke echo",
            &format!("p50 WebSocket ping → pong, no PTY ({PINGS})"),
            "µs",
            rtt.pct(50.0),
            None,
            Target::Info,
        )
        .note(format!("p99 {:.0} µs", rtt.pct(99.0))),
    ];
    // Peers fill the first four rows (there is no ping message to time).
    Ok(rows
        .into_iter()
        .enumerate()
        .map(|(i, mut row)| {
            for (name, r) in &peers {
                row = match (r, i) {
                    (Ok((t, _, _)), 0) => row.peer(name, t.pct(50.0), ""),
                    (Ok((t, _, _)), 1) => {
                        row.peer(name, t.pct(99.0), format!("max {:.0} µs", t.max()))
                    }
                    (Ok((_, t_in, _)), 2) => row.peer(name, t_in.pct(50.0), ""),
                    (Ok((_, _, t_out)), 3) => row.peer(name, t_out.pct(50.0), ""),
                    (Err(e), 0) => row.peer_failed(name, e),
                    _ => row,
                };
            }
            row
        })
        .collect())
}
