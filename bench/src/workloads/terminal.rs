//! The terminal client: `duet attach` driven as a person's terminal drives
//! it, from the master of a PTY the bench holds (the bare lane's PTY code),
//! beside the WebSocket client path and the bare PTY in the same run.
//! Keystroke echo through `duet attach` against the WebSocket client's
//! (rounds alternating between the three lanes), the first screen of a
//! session with 10 MiB of history (from starting `duet attach` to the end
//! marker on the terminal), and a flood's rate on the attached terminal
//! against the bare PTY's.

use std::io::Read;
use std::time::Instant;

use anyhow::Result;

use super::echo::{alternate, Lane, Stamps};
use super::{blocking, Ctx, STOP_GRACE};
use crate::bare::Bare;
use crate::duet::{Duet, Tail, TOKEN};
use crate::fixture::READY;
use crate::report::{Row, Samples, Target};

/// `duet attach` to session `id`, on a PTY of the bench's (120×36, as the
/// sessions are, so it asks for no resize).
fn attach(ctx: &Ctx, duet: &Duet, id: &str) -> Result<Bare> {
    let url = format!("http://{}", duet.addr);
    let exe = ctx.duet_exe.to_string_lossy();
    Bare::spawn(
        &exe,
        &[
            "attach",
            "--server",
            &url,
            "--token",
            TOKEN,
            "--detach-key",
            "none",
            id,
        ],
        ctx.tmp.path(),
    )
}

fn wait_ready(mut b: Bare) -> impl FnOnce() -> Result<Bare> {
    move || {
        b.wait_for_text(READY.strip_suffix(b"\r\n").unwrap_or(READY))?;
        Ok(b)
    }
}

/// Echo times (µs): the bare PTY, the WebSocket client, `duet attach`
/// (a PTY lane like the bare one), in alternating rounds (`echo.rs`).
async fn echo(ctx: &Ctx, duet: &Duet, n: usize) -> Result<[Samples; 3]> {
    let bare = blocking(wait_ready(ctx.bare_fixture(&["echo"])?)).await?;
    let ws_session = duet.create("echo").await?;
    let mut ws = duet.connect(ws_session.id).await?;
    let snap = ws.attach().await?;
    ws.wait_for_text(&snap, b"BENCH-READY").await?;
    let term_session = duet.create("echo").await?;
    let term = attach(ctx, duet, &term_session.id.to_string())?;
    let term = blocking(wait_ready(term)).await?;
    let mut lanes = [
        Lane::Bare(Some(bare)),
        Lane::Duet {
            client: ws,
            resyncs: 0,
        },
        Lane::Bare(Some(term)),
    ];
    let mut stamps: [Stamps; 3] = Default::default();
    {
        let mut both: Vec<(&mut Lane, &mut Stamps)> =
            lanes.iter_mut().zip(stamps.iter_mut()).collect();
        alternate(&mut both, n, None).await?;
    }
    for lane in lanes {
        if let Lane::Bare(Some(b)) = lane {
            b.kill();
        }
    }
    Ok(stamps.map(|s| Samples::new(s.iter().map(|(a, b)| (b - a) as f64 / 1e3).collect())))
}

/// ms from starting `duet attach` to the end marker on its terminal, for
/// each of `n` attaches to a session with 10 MiB of history.
async fn first_screens(ctx: &Ctx, duet: &Duet, n: usize) -> Result<Samples> {
    let id = super::attach::session_with_history(duet).await?;
    let mut ms = Vec::with_capacity(n);
    for _ in 0..n {
        let t0 = Instant::now();
        let term = attach(ctx, duet, &id)?;
        let term = blocking(move || {
            let mut term = term;
            term.wait_for_text(b"__BENCH_END__")?;
            Ok(term)
        })
        .await?;
        ms.push(t0.elapsed().as_secs_f64() * 1e3);
        term.kill();
    }
    Ok(Samples::new(ms))
}

/// Seconds from the start key to the end marker: on a bare PTY, or through
/// `duet attach` (`via` a session of `duet`).
async fn flood_secs(ctx: &Ctx, via: Option<&Duet>, bytes: &str) -> Result<f64> {
    let term = match via {
        None => ctx.bare_fixture(&["flood", "--bytes", bytes])?,
        Some(duet) => {
            let s = duet.create("flood").await?;
            attach(ctx, duet, &s.id.to_string())?
        }
    };
    blocking(move || {
        let mut term = wait_ready(term)()?;
        let mut buf = vec![0u8; 64 * 1024];
        let mut tail = Tail::default();
        let t0 = Instant::now();
        term.keys(b"g")?;
        loop {
            let n = term.reader.read(&mut buf)?;
            anyhow::ensure!(n > 0, "EOF before the end marker");
            // Through duet a redraw may bring the marker in the middle of
            // a screen rather than at the end of the stream.
            if tail.push_contains(&buf[..n], b"__BENCH_END__") {
                break;
            }
        }
        let secs = t0.elapsed().as_secs_f64();
        term.kill();
        Ok(secs)
    })
    .await
}

pub(super) async fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let n: usize = ctx.size(5_000, 500);
    let attaches: usize = ctx.size(10, 3);
    let bytes: u64 = ctx.size(256 << 20, 32 << 20);
    let rounds: usize = ctx.size(3, 1);
    let (history, bytes_s) = ((10u64 << 20).to_string(), bytes.to_string());
    let duet = ctx
        .duet(&[
            ctx.fixture("echo", &["echo"]),
            ctx.fixture(
                "history",
                &["flood", "--bytes", &history, "--start-now", "--idle"],
            ),
            ctx.fixture("flood", &["flood", "--bytes", &bytes_s]),
        ])
        .await?;
    let [bare, ws, term] = echo(ctx, &duet, n).await?;
    let screens = first_screens(ctx, &duet, attaches).await?;
    let (mut bare_best, mut term_best) = (f64::INFINITY, f64::INFINITY);
    let (mut bare_all, mut term_all) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let b = flood_secs(ctx, None, &bytes_s).await?;
        let t = flood_secs(ctx, Some(&duet), &bytes_s).await?;
        bare_best = bare_best.min(b);
        term_best = term_best.min(t);
        bare_all.push(b);
        term_all.push(t);
    }
    duet.stop(STOP_GRACE).await;
    let mb = bytes as f64 / 1e6;
    let rates = |v: &[f64]| {
        v.iter()
            .map(|s| format!("{:.0}", mb / s))
            .collect::<Vec<_>>()
            .join("/")
    };
    let echo_note = format!(
        "baseline = the WebSocket client (duet-bench's) to the same program; bare PTY p50 {:.0} / p99 {:.0} µs; {n} keys each, lanes alternating",
        bare.pct(50.0),
        bare.pct(99.0)
    );
    Ok(vec![
        Row::new(
            "terminal client",
            &format!("keystroke echo through duet attach, p50 ({n} keys)"),
            "µs",
            term.pct(50.0),
            Some(ws.pct(50.0)),
            Target::PlusAtMost { value: 1000.0 },
        )
        .note(echo_note),
        Row::new(
            "terminal client",
            &format!("keystroke echo through duet attach, p99 ({n} keys)"),
            "µs",
            term.pct(99.0),
            Some(ws.pct(99.0)),
            Target::PlusAtMost { value: 1000.0 },
        ),
        Row::new(
            "terminal client",
            &format!("first screen, 10 MiB history, from starting duet attach, max of {attaches}"),
            "ms",
            screens.max(),
            None,
            Target::AtMost { value: 100.0 },
        )
        .note(format!(
            "p50 {:.1} ms: the process start, the session list, the WebSocket, the snapshot drawn",
            screens.pct(50.0)
        )),
        Row::new(
            "terminal client",
            &format!(
                "{} MiB flood onto the attached terminal, best of {rounds}",
                bytes >> 20
            ),
            "MB/s",
            mb / term_best,
            Some(mb / bare_best),
            Target::RatioAtLeast { value: 0.8 },
        )
        .note(format!(
            "rounds duet attach {} MB/s, bare PTY {} MB/s",
            rates(&term_all),
            rates(&bare_all)
        )),
    ])
}
