//! Keystroke echo: single keys to a raw, non-echoing `cat`, one at a time
//! (send, wait for the echo, next).

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::{blocking, Ctx, STOP_GRACE};
use crate::duet::Frame;
use crate::fixture::{mono_ns, READY};
use crate::report::{Row, Samples, Target};

const WARMUP: usize = 200;
const PINGS: usize = 2_000;

fn key(i: usize) -> u8 {
    b'a' + (i % 26) as u8
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
    for i in 0..WARMUP + n {
        let k = key(i);
        let sent = mono_ns();
        c.keys(&[k]).await?;
        loop {
            match tokio::time::timeout(Duration::from_secs(10), c.next())
                .await
                .context("no echo for 10 s")??
            {
                Frame::Term(b) if b.contains(&k) => break,
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

    let (d, d_in, d_out) = split(&stamps, &prog);
    let (b, b_in, b_out) = split(&bare_stamps, &bare_prog);
    let ttyd = "ttyd on a similar machine: p50 145 µs / p99 225 µs vs bare 47 / 90 µs";
    Ok(vec![
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
        ),
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
    ])
}
