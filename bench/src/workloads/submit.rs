//! Submit path: a client `submit` until its line is in the session's input
//! file, seen by an inotify reader in this process. The texts are slash
//! commands (`/bench N`), which do not close duet's turn gate, so every
//! submit is written at once instead of waiting for a turn to end. The
//! baseline is this process appending the same line itself, seen by the
//! same kind of reader: the floor that the observation adds.

use std::io::Write;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::{Ctx, STOP_GRACE};
use crate::duet::Frame;
use crate::fixture::mono_ns;
use crate::follow::{follow, Follower};
use crate::report::{Row, Samples, Target};

const WAIT: Duration = Duration::from_secs(10);

/// Waits for the input line whose text is `text`; when it was seen.
async fn seen(f: &mut Follower, text: &str) -> Result<u64> {
    loop {
        let s = tokio::time::timeout(WAIT, f.lines.recv())
            .await
            .with_context(|| format!("{text:?} did not reach the input file"))?
            .context("follower stopped")?;
        let v: serde_json::Value = serde_json::from_str(&s.line)?;
        if v["text"] == text {
            return Ok(s.at);
        }
    }
}

pub(super) async fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let n: usize = ctx.size(5_000, 500);

    // Baseline: our own append, seen by our own reader.
    let dir = ctx.tmp.path().join("submit");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("input.jsonl");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)?;
    let mut f = follow(&path)?;
    let mut bare = Vec::with_capacity(n);
    for i in 0..n {
        let text = format!("/bench {i}");
        let line = format!("{}\n", serde_json::json!({"type": "submit", "text": text}));
        let t0 = mono_ns();
        file.write_all(line.as_bytes())?;
        bare.push((seen(&mut f, &text).await? - t0) as f64 / 1e3);
    }
    drop(f);

    let duet = ctx
        .duet(&[ctx.fixture(
            "agent",
            &[
                "agent",
                "--events",
                "{events_file}",
                "--input",
                "{input_file}",
            ],
        )])
        .await?;
    let s = duet.create("agent").await?;
    let mut f = follow(&duet.session_dir(s.id).join("input.jsonl"))?;
    let mut c = duet.connect(s.id).await?;
    c.attach().await?;
    loop {
        match tokio::time::timeout(WAIT, c.next())
            .await
            .context("no session_start")??
        {
            Frame::Json(h)
                if h.event.as_ref().and_then(|e| e.subtype.as_deref()) == Some("session_start") =>
            {
                break
            }
            Frame::Closed => bail!("closed before session_start"),
            _ => {}
        }
    }
    // The gate opens right after session_start is relayed; a warm-up
    // submit, held or not, is written once it is open.
    c.json(&serde_json::json!({"type": "submit", "text": "/warm-up"}))
        .await?;
    seen(&mut f, "/warm-up").await?;
    let mut lat = Vec::with_capacity(n);
    for i in 0..n {
        let text = format!("/bench {i}");
        let msg = serde_json::json!({"type": "submit", "text": text});
        let t0 = mono_ns();
        c.json(&msg).await?;
        lat.push((seen(&mut f, &text).await? - t0) as f64 / 1e3);
    }
    duet.stop(STOP_GRACE).await;

    let d = Samples::new(lat);
    let b = Samples::new(bare);
    Ok(vec![
        Row::new(
            "submit path",
            &format!("submit → input file p50, {n} submits"),
            "µs",
            d.pct(50.0),
            Some(b.pct(50.0)),
            Target::Info,
        ),
        Row::new(
            "submit path",
            &format!("submit → input file p99, {n} submits"),
            "µs",
            d.pct(99.0),
            Some(b.pct(99.0)),
            Target::AtMost { value: 1000.0 },
        )
        .note(format!(
            "baseline = this process appending the line itself (the inotify floor); max: duet {:.0} µs, bare {:.0} µs",
            d.max(),
            b.max()
        )),
    ])
}
