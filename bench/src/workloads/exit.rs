//! Exit after output: the program prints 16 MiB of mixed text and exits at
//! once, like `cat big.log`. Does the client get every byte before the
//! gateway reports the exit? Counted from the start key to the end of the
//! stream (duet: its `exit` message; peers: the connection closing).

use std::io::Read;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::{blocking, Ctx, STOP_GRACE};
use crate::duet::{Duet, Frame};
use crate::fixture::{END, READY};
use crate::peer::{Peer, PeerFrame};
use crate::report::{Row, Target};

/// What one round got: bytes after the key, whether the stream ended with
/// [`END`], seconds from the key to the end of the stream.
#[derive(Clone, Copy)]
struct Got {
    bytes: u64,
    ended: bool,
    secs: f64,
    /// The connection was reset rather than closed (peers).
    reset: bool,
}

/// The end of what arrived: the last bytes, to check for [`END`].
#[derive(Default)]
struct Last(Vec<u8>);

impl Last {
    fn push(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
        if self.0.len() > 64 {
            self.0.drain(..self.0.len() - 64);
        }
    }

    fn ended(&self) -> bool {
        self.0.ends_with(END)
    }
}

async fn bare_round(ctx: &Ctx, bytes: &str) -> Result<Got> {
    let mut bare = ctx.bare_fixture(&["flood", "--bytes", bytes])?;
    blocking(move || {
        bare.wait_for_text(READY)?;
        let mut buf = vec![0u8; 64 * 1024];
        let mut last = Last::default();
        let mut got = 0u64;
        let t0 = Instant::now();
        bare.keys(b"g")?;
        // Linux hands over what the program wrote, then EIO once it has
        // closed the terminal.
        while let Ok(n @ 1..) = bare.reader.read(&mut buf) {
            got += n as u64;
            last.push(&buf[..n]);
        }
        let secs = t0.elapsed().as_secs_f64();
        bare.kill();
        Ok(Got {
            bytes: got,
            ended: last.ended(),
            secs,
            reset: false,
        })
    })
    .await
}

/// A duet round. Snapshots after a lagged `resync` are not counted: they
/// stand in for bytes the client never got.
async fn duet_round(duet: &Duet) -> Result<(Got, u32)> {
    let s = duet.create("flood").await?;
    let mut c = duet.connect(s.id).await?;
    let snap = c.attach().await?;
    c.wait_for_text(&snap, READY).await?;
    let mut last = Last::default();
    let mut got = 0u64;
    let mut lagged = 0u32;
    let mut snapshot_next = false;
    let t0 = Instant::now();
    c.keys(b"g").await?;
    loop {
        match tokio::time::timeout(Duration::from_secs(60), c.next())
            .await
            .context("nothing for 60 s")??
        {
            Frame::Term(_) if snapshot_next => snapshot_next = false,
            Frame::Term(b) => {
                got += b.len() as u64;
                last.push(&b);
            }
            Frame::Json(h) if h.kind == "resync" => {
                lagged += 1;
                snapshot_next = true;
            }
            Frame::Json(h) if h.kind == "exit" => break,
            Frame::Json(_) => {}
            Frame::Closed => break,
        }
    }
    Ok((
        Got {
            bytes: got,
            ended: last.ended(),
            secs: t0.elapsed().as_secs_f64(),
            reset: false,
        },
        lagged,
    ))
}

async fn peer_round(peer: &Peer) -> Result<Got> {
    let (_term, mut c) = peer.open().await?;
    c.wait_for_text(READY).await?;
    let mut last = Last::default();
    let mut got = 0u64;
    let t0 = Instant::now();
    c.keys(b"g").await?;
    let mut reset = false;
    loop {
        match tokio::time::timeout(Duration::from_secs(60), c.next())
            .await
            .context("nothing for 60 s")?
        {
            Ok(PeerFrame::Term(b)) => {
                got += b.len() as u64;
                last.push(&b);
            }
            Ok(PeerFrame::Other) => {}
            Ok(PeerFrame::Closed) => break,
            // A reset connection ends the stream as surely as a close.
            Err(_) => {
                reset = true;
                break;
            }
        }
    }
    Ok(Got {
        bytes: got,
        ended: last.ended(),
        secs: t0.elapsed().as_secs_f64(),
        reset,
    })
}

pub(super) async fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let bytes: u64 = 16 << 20;
    let rounds: usize = ctx.size(5, 2);
    let expected = bytes + END.len() as u64;
    let arg = bytes.to_string();
    let lost = |g: &Got| expected.saturating_sub(g.bytes);

    let duet = ctx
        .duet(&[ctx.fixture("flood", &["flood", "--bytes", &arg])])
        .await?;
    let mut peers = Vec::new();
    for spec in &ctx.peers {
        let peer = ctx.peer_fixture(spec, &["flood", "--bytes", &arg]).await;
        peers.push((spec.name(), peer, Vec::new()));
    }
    let mut bare = Vec::new();
    let mut runs = Vec::new();
    for _ in 0..rounds {
        bare.push(bare_round(ctx, &arg).await?);
        runs.push(duet_round(&duet).await?);
        for (_, peer, results) in &mut peers {
            if let Ok(p) = peer {
                results.push(peer_round(p).await);
            }
        }
    }
    duet.stop(STOP_GRACE).await;

    let worst = |v: &[Got]| v.iter().map(lost).max().unwrap_or(0);
    let describe = |v: &[Got]| {
        let each: Vec<String> = v.iter().map(|g| lost(g).to_string()).collect();
        let ended = v.iter().filter(|g| g.ended).count();
        let secs: Vec<String> = v.iter().map(|g| format!("{:.2}", g.secs)).collect();
        let resets = v.iter().filter(|g| g.reset).count();
        format!(
            "lost per round {}; {ended} of {} rounds ended with the end marker; \
             key → end of stream {} s{}",
            each.join("/"),
            v.len(),
            secs.join("/"),
            if resets > 0 {
                format!("; {resets} connections reset instead of closed")
            } else {
                String::new()
            }
        )
    };
    let duet_got: Vec<Got> = runs.iter().map(|r| r.0).collect();
    let lagged: u32 = runs.iter().map(|r| r.1).sum();
    let mut row = Row::new(
        "exit after output",
        &format!(
            "bytes lost when the program prints {} MiB and exits, worst of {rounds}",
            bytes >> 20
        ),
        "B",
        worst(&duet_got) as f64,
        Some(worst(&bare) as f64),
        Target::AtMost { value: 0.0 },
    )
    .note(format!(
        "duet: {}; {lagged} lagged resyncs. bare: {}",
        describe(&duet_got),
        describe(&bare)
    ));
    for (name, peer, results) in peers {
        let results = match peer {
            Ok(p) => {
                p.stop().await;
                results.into_iter().collect::<Result<Vec<_>>>()
            }
            Err(e) => Err(e),
        };
        row = match results {
            Ok(r) if r.is_empty() => bail!("no rounds"),
            Ok(r) => row.peer(name, worst(&r) as f64, describe(&r)),
            Err(e) => row.peer_failed(name, &e),
        };
    }
    Ok(vec![row])
}
