//! Extra clients: one session running an idle program (`cat`) with one
//! client, then 100 more clients attach to it. Measures the gateway's own
//! resident memory per extra client. ttyd cannot share a terminal: each of
//! its clients gets a program of its own, whose memory is not counted here.

use std::time::Duration;

use anyhow::Result;

use super::{Ctx, STOP_GRACE};
use crate::duet::{Client, Profile};
use crate::peer::{Kind, Peer, PeerClient, PeerSpec};
use crate::report::{Row, Target};

/// Time for memory to settle after the clients attached.
const SETTLE: Duration = Duration::from_millis(500);

/// KiB per extra client: RSS before, RSS after, per client.
struct Growth {
    before: u64,
    after: u64,
    /// The server's child processes (its programs) after, and their RSS, KiB.
    children: (usize, u64),
}

impl Growth {
    fn per_client(&self, n: usize) -> f64 {
        self.after.saturating_sub(self.before) as f64 / n as f64
    }
}

async fn peer_growth(spec: &PeerSpec, n: usize) -> Result<Growth> {
    let peer = Peer::start(spec, "cat", &[]).await?;
    let (term, mut first) = peer.open().await?;
    first.greeted().await?;
    tokio::time::sleep(SETTLE).await;
    let before = peer.rss_kib();
    let mut clients: Vec<PeerClient> = Vec::with_capacity(n);
    for _ in 0..n {
        let mut c = peer.join(&term).await?;
        c.greeted().await?;
        clients.push(c);
    }
    tokio::time::sleep(SETTLE).await;
    let after = peer.rss_kib();
    let children = children_rss(peer.pid);
    drop(clients);
    drop(first);
    peer.stop().await;
    Ok(Growth {
        before,
        after,
        children,
    })
}

/// How many child processes `pid` has, and their RSS summed, KiB.
fn children_rss(pid: u32) -> (usize, u64) {
    let mut kids = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            let text = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            kids.extend(
                text.split_whitespace()
                    .filter_map(|k| k.parse::<u32>().ok()),
            );
        }
    }
    let rss = kids
        .iter()
        .map(|k| crate::duet::proc_status(*k, "VmRSS:"))
        .sum();
    (kids.len(), rss)
}

pub(super) async fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let n: usize = ctx.size(100, 20);
    let duet = ctx.duet(&[Profile::new("idle", "cat", &[])]).await?;
    let s = duet.create("idle").await?;
    let mut first = duet.connect(s.id).await?;
    first.attach().await?;
    tokio::time::sleep(SETTLE).await;
    let before = duet.rss_kib();
    let mut clients: Vec<Client> = Vec::with_capacity(n);
    for _ in 0..n {
        let mut c = duet.connect(s.id).await?;
        c.attach().await?;
        clients.push(c);
    }
    tokio::time::sleep(SETTLE).await;
    let g = Growth {
        before,
        after: duet.rss_kib(),
        children: (0, 0),
    };
    drop(clients);
    drop(first);
    duet.stop(STOP_GRACE).await;

    let mut row = Row::new(
        "extra clients",
        &format!("server RSS per extra client on one session ({n} clients)"),
        "KiB",
        g.per_client(n),
        None,
        Target::Info,
    )
    .note(format!("duet RSS {} → {} KiB", g.before, g.after));
    for spec in &ctx.peers {
        row = match peer_growth(spec, n).await {
            Ok(p) => {
                let own = if spec.kind == Kind::Ttyd {
                    format!(
                        "; ttyd starts a program per client: {} programs (cat) using {} KiB \
                         more, not counted",
                        p.children.0, p.children.1
                    )
                } else {
                    String::new()
                };
                row.peer(
                    spec.name(),
                    p.per_client(n),
                    format!("RSS {} → {} KiB{own}", p.before, p.after),
                )
            }
            Err(e) => row.peer_failed(spec.name(), &e),
        };
    }
    Ok(vec![row])
}
