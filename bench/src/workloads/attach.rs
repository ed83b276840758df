//! Attach: a session with 10 MiB of output behind it; a new client's first
//! screen (connect, `hello`, `resync`, the snapshot frame). The baseline is
//! the same attach to an idle session with no history.

use std::time::{Duration, Instant};

use anyhow::Result;

use super::{Ctx, STOP_GRACE};
use crate::duet::{Duet, Profile};
use crate::report::{Row, Samples, Target};

/// Times `n` attaches to `id`; the times (ms) and the largest snapshot.
async fn attaches(duet: &Duet, id: &str, n: usize) -> Result<(Samples, usize)> {
    let mut ms = Vec::with_capacity(n);
    let mut size = 0;
    for _ in 0..n {
        let t0 = Instant::now();
        let mut c = duet.connect(id).await?;
        let snap = c.attach().await?;
        ms.push(t0.elapsed().as_secs_f64() * 1e3);
        size = size.max(snap.len());
    }
    Ok((Samples::new(ms), size))
}

/// A session of profile `history` once the whole of its history has been
/// through duet's screen; its id.
pub(super) async fn session_with_history(duet: &Duet) -> Result<String> {
    let h = duet.create("history").await?;
    let id = h.id.to_string();
    let t0 = Instant::now();
    while !duet.screen(&id).await?.contains("__BENCH_END__") {
        anyhow::ensure!(
            t0.elapsed() < Duration::from_secs(120),
            "history not written"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(id)
}

pub(super) async fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let history: u64 = 10 << 20;
    let n: usize = ctx.size(20, 5);
    let history_s = history.to_string();
    let duet = ctx
        .duet(&[
            ctx.fixture(
                "history",
                &["flood", "--bytes", &history_s, "--start-now", "--idle"],
            ),
            Profile::new("empty", "cat", &[]),
        ])
        .await?;
    let h_id = session_with_history(&duet).await?;
    let (with, size) = attaches(&duet, &h_id, n).await?;
    let e = duet.create("empty").await?;
    let (empty, empty_size) = attaches(&duet, &e.id.to_string(), n).await?;
    duet.stop(STOP_GRACE).await;

    Ok(vec![
        Row::new(
            "attach",
            &format!("first screen, 10 MiB history, p50 of {n}"),
            "ms",
            with.pct(50.0),
            Some(empty.pct(50.0)),
            Target::AtMost { value: 50.0 },
        )
        .note(format!(
            "baseline = attach to an empty session; snapshot {} KiB vs {} KiB",
            size >> 10,
            empty_size >> 10
        )),
        Row::new(
            "attach",
            &format!("first screen, 10 MiB history, max of {n}"),
            "ms",
            with.max(),
            Some(empty.max()),
            Target::AtMost { value: 50.0 },
        ),
    ])
}
