//! Keystroke echo: single keys to a raw, non-echoing `cat`, one at a time
//! (send, wait for the echo, next).

use std::io::Read;
use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::{blocking, Ctx, STOP_GRACE};
use crate::bare::Bare;
use crate::duet::{Client, Frame};
use crate::fixture::{mono_ns, READY};
use crate::peer::{Peer, PeerClient, PeerFrame, PeerSpec};
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
pub(super) type Stamps = Vec<(u64, u64)>;

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

/// Total, key → program, and program → reader, in µs; then the
/// program's own time per key (its `read` returned → its `write` of the
/// echo returned). That last one is the same code in every lane, so what
/// differs there is the kernel's work on the write: waking the TTY worker,
/// and whatever the scheduler runs on the program's vCPU before the write
/// returns (docs/benchmarks.md, "The echo's last microseconds").
type Legs = (Samples, Samples, Samples, Samples);

/// See [`Legs`].
fn split(stamps: &Stamps, program: &Stamps) -> Legs {
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
        Samples::new(
            program[WARMUP.min(program.len())..]
                .iter()
                .map(|(i, o)| us(o.saturating_sub(*i)))
                .collect(),
        ),
    )
}

/// One target of the workload (the bare PTY, duet, or a peer), kept open
/// for the whole run so that rounds can alternate between them: on a shared
/// machine the load moves within seconds, and measuring each target in one
/// stretch after the other compared different loads, not gateways.
pub(super) enum Lane {
    Bare(Option<Bare>),
    Duet { client: Client, resyncs: u32 },
    Peer(PeerClient),
}

impl Lane {
    /// Sends keys `range` one at a time, waiting for each echo; appends the
    /// stamps of those past the warm-up.
    pub(super) async fn keys(
        &mut self,
        range: Range<usize>,
        stamps: &mut Stamps,
        gap: Option<Duration>,
    ) -> Result<()> {
        match self {
            Lane::Bare(slot) => {
                let mut bare = slot.take().context("the bare fixture is gone")?;
                let (bare, got) = blocking(move || {
                    let mut buf = [0u8; 4096];
                    let mut got = Vec::with_capacity(range.len());
                    for i in range {
                        let k = key(i);
                        let sent = mono_ns();
                        bare.keys(&[k])?;
                        loop {
                            let n = bare.reader.read(&mut buf)?;
                            anyhow::ensure!(n > 0, "EOF");
                            if buf[..n].contains(&k) {
                                break;
                            }
                        }
                        if i >= WARMUP {
                            got.push((sent, mono_ns()));
                            if let Some(gap) = gap {
                                std::thread::sleep(gap);
                            }
                        }
                    }
                    Ok((bare, got))
                })
                .await?;
                *slot = Some(bare);
                stamps.extend(got);
            }
            Lane::Duet { client, resyncs } => {
                for i in range {
                    let k = key(i);
                    let sent = mono_ns();
                    client.keys(&[k]).await?;
                    loop {
                        match tokio::time::timeout(Duration::from_secs(10), client.next())
                            .await
                            .context("no echo for 10 s")??
                        {
                            Frame::Json(h) if h.kind == "resync" => *resyncs += 1,
                            Frame::Term(b) if is_echo(&b, k) => break,
                            Frame::Closed => bail!("closed"),
                            _ => {}
                        }
                    }
                    if i >= WARMUP {
                        stamps.push((sent, mono_ns()));
                        if let Some(gap) = gap {
                            tokio::time::sleep(gap).await;
                        }
                    }
                }
            }
            Lane::Peer(c) => {
                for i in range {
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
                        if let Some(gap) = gap {
                            tokio::time::sleep(gap).await;
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// Rounds the keys are spread over; each round gives every lane a block.
const ROUNDS: usize = 10;

/// Runs the keys on every lane: the warm-up, then `ROUNDS` blocks each,
/// the lanes taking turns (and a different one first in each round).
pub(super) async fn alternate(
    lanes: &mut [(&mut Lane, &mut Stamps)],
    n: usize,
    gap: Option<Duration>,
) -> Result<()> {
    for (lane, stamps) in lanes.iter_mut() {
        lane.keys(0..WARMUP, stamps, None).await?;
    }
    let per = n.div_ceil(ROUNDS);
    for round in 0..ROUNDS {
        let from = WARMUP + round * per;
        let to = (from + per).min(WARMUP + n);
        let count = lanes.len();
        for j in 0..count {
            let (lane, stamps) = &mut lanes[(round + j) % count];
            lane.keys(from..to, stamps, gap).await?;
        }
    }
    Ok(())
}

pub(super) async fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    // At a typist's pace the keys take their gap each: fewer of them.
    let n: usize = match ctx.echo_gap {
        Some(_) => 600,
        None => ctx.size(10_000, 1_000),
    };
    let paced = ctx.echo_gap.map_or(String::new(), |g| {
        format!(", one every {} ms", g.as_millis())
    });
    let count = (WARMUP + n).to_string();

    let bare_times = ctx.tmp.path().join("echo-times");
    let mut bare = ctx.bare_fixture(&[
        "echo",
        "--count",
        &count,
        "--timings",
        &bare_times.to_string_lossy(),
    ])?;
    let bare = blocking(move || {
        bare.wait_for_text(READY)?;
        Ok(bare)
    })
    .await?;

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

    // Every peer's program runs from the start; a peer that fails to start
    // gets its error in the table and no lane.
    let mut peers: Vec<(&PeerSpec, Result<(Peer, PeerClient)>)> = Vec::new();
    for spec in &ctx.peers {
        let opened = async {
            let peer = ctx
                .peer_fixture(
                    spec,
                    &["echo", "--count", &count, "--timings", "{dir}/echo-times"],
                )
                .await?;
            let (_term, mut pc) = peer.open().await?;
            pc.wait_for_text(READY).await?;
            Ok((peer, pc))
        }
        .await;
        peers.push((spec, opened));
    }

    // A client that duet saw as stalled (on a loaded machine) gets a
    // snapshot, which can hold the key before the program has echoed it:
    // then the per-leg figures (which pair keys with the program's reads)
    // are off. Counted, to say so.
    let mut bare_lane = Lane::Bare(Some(bare));
    let mut duet_lane = Lane::Duet {
        client: c,
        resyncs: 0,
    };
    let mut peer_lanes: Vec<(Lane, Peer)> = Vec::new();
    let mut peer_failed: Vec<(&'static str, anyhow::Error)> = Vec::new();
    let mut peer_names: Vec<&'static str> = Vec::new();
    for (spec, opened) in peers {
        match opened {
            Ok((peer, pc)) => {
                peer_names.push(spec.name());
                peer_lanes.push((Lane::Peer(pc), peer));
            }
            Err(e) => peer_failed.push((spec.name(), e)),
        }
    }
    let mut bare_stamps = Vec::with_capacity(n);
    let mut stamps = Vec::with_capacity(n);
    let mut peer_stamps: Vec<Stamps> = peer_lanes.iter().map(|_| Vec::with_capacity(n)).collect();
    {
        let mut lanes: Vec<(&mut Lane, &mut Stamps)> = vec![
            (&mut bare_lane, &mut bare_stamps),
            (&mut duet_lane, &mut stamps),
        ];
        for ((lane, _), st) in peer_lanes.iter_mut().zip(peer_stamps.iter_mut()) {
            lanes.push((lane, st));
        }
        alternate(&mut lanes, n, ctx.echo_gap).await?;
    }

    let Lane::Bare(Some(bare)) = bare_lane else {
        bail!("the bare fixture is gone")
    };
    let bare_prog = timings(&bare_times).await?;
    bare.kill();
    let Lane::Duet {
        client: mut c,
        resyncs,
    } = duet_lane
    else {
        bail!("the duet lane is gone")
    };
    let prog = timings(&duet.session_dir(s.id).join("echo-times")).await?;
    let mut peers: Vec<(&'static str, Result<Legs>)> = Vec::new();
    for (((lane, peer), st), name) in peer_lanes.into_iter().zip(&peer_stamps).zip(peer_names) {
        let prog = timings(&peer.dir.path().join("echo-times")).await;
        drop(lane);
        peer.stop().await;
        peers.push((name, prog.map(|p| split(st, &p))));
    }
    for (name, e) in peer_failed {
        peers.push((name, Err(e)));
    }

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

    let (d, d_in, d_out, d_own) = split(&stamps, &prog);
    let (b, b_in, b_out, b_own) = split(&bare_stamps, &bare_prog);
    let ttyd = format!(
        "bare, duet and peers take turns: {ROUNDS} rounds of {} keys each, after {WARMUP} warm-up keys",
        n.div_ceil(ROUNDS)
    );
    let rows = vec![
        Row::new(
            "keystroke echo",
            &format!("p50 of {n} keys{paced}"),
            "µs",
            d.pct(50.0),
            Some(b.pct(50.0)),
            Target::PlusAtMost { value: 60.0 },
        )
        .note(ttyd),
        Row::new(
            "keystroke echo",
            &format!("p99 of {n} keys{paced}"),
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
            "p50 program reads the key → its echo's write returns",
            "µs",
            d_own.pct(50.0),
            Some(b_own.pct(50.0)),
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
    // Peers fill the first five rows (there is no ping message to time).
    Ok(rows
        .into_iter()
        .enumerate()
        .map(|(i, mut row)| {
            for (name, r) in &peers {
                row = match (r, i) {
                    (Ok((t, ..)), 0) => row.peer(name, t.pct(50.0), ""),
                    (Ok((t, ..)), 1) => {
                        row.peer(name, t.pct(99.0), format!("max {:.0} µs", t.max()))
                    }
                    (Ok((_, t_in, ..)), 2) => row.peer(name, t_in.pct(50.0), ""),
                    (Ok((_, _, t_out, _)), 3) => row.peer(name, t_out.pct(50.0), ""),
                    (Ok((.., own)), 4) => row.peer(name, own.pct(50.0), ""),
                    (Err(e), 0) => row.peer_failed(name, e),
                    _ => row,
                };
            }
            row
        })
        .collect())
}
