//! Many sessions: 1,000 idle sessions (`cat`) with one client each. Measures
//! how fast they start, what each costs in duet's memory, and that none
//! fails. The baseline spawns the same number of `cat`s on bare PTYs from
//! this process.

use std::time::{Duration, Instant};

use anyhow::Result;
use futures_util::{stream, StreamExt};

use super::{blocking, Ctx, STOP_GRACE};
use crate::bare::Bare;
use crate::duet::{Client, Profile};
use crate::report::{Row, Target};

const CREATE_CONCURRENCY: usize = 8;
const CONNECT_CONCURRENCY: usize = 16;

pub(super) async fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let n: usize = ctx.size(1000, 100);

    // Baseline: n bare PTYs with cat, opened from this process.
    let cwd = ctx.tmp.path().to_path_buf();
    let bare_rate = blocking(move || {
        let t0 = Instant::now();
        let mut all = Vec::with_capacity(n);
        for _ in 0..n {
            all.push(Bare::spawn("cat", &[], &cwd)?);
        }
        let rate = n as f64 / t0.elapsed().as_secs_f64();
        for b in all {
            b.kill();
        }
        Ok(rate)
    })
    .await?;

    let duet = ctx.duet(&[Profile::new("idle", "cat", &[])]).await?;
    let rss0 = duet.rss_kib();
    let threads0 = duet.threads();
    let t0 = Instant::now();
    let created: Vec<Result<(String, f64)>> = stream::iter(0..n)
        .map(|_| {
            let duet = &duet;
            async move {
                let id = duet.create("idle").await?.id.to_string();
                Ok((id, t0.elapsed().as_secs_f64()))
            }
        })
        .buffer_unordered(CREATE_CONCURRENCY)
        .collect()
        .await;
    let create_secs = t0.elapsed().as_secs_f64();
    let mut failures = 0usize;
    let mut first_error = None;
    let mut done_at = Vec::new();
    let ids: Vec<String> = created
        .into_iter()
        .filter_map(|r| match r {
            Ok((id, at)) => {
                done_at.push(at);
                Some(id)
            }
            Err(e) => {
                failures += 1;
                first_error.get_or_insert_with(|| format!("{e:#}"));
                None
            }
        })
        .collect();
    let rss_sessions = duet.rss_kib();
    // Start rate over the first and the last tenth: does it fall as
    // sessions accumulate?
    done_at.sort_by(|a, b| a.total_cmp(b));
    let tenth = (done_at.len() / 10).max(1);
    let (first_rate, last_rate) = if done_at.len() > tenth {
        let k = done_at.len();
        (
            tenth as f64 / done_at[tenth - 1],
            tenth as f64 / (done_at[k - 1] - done_at[k - 1 - tenth]),
        )
    } else {
        (0.0, 0.0)
    };

    let t1 = Instant::now();
    let connected: Vec<Result<Client>> = stream::iter(ids.iter())
        .map(|id| {
            let duet = &duet;
            async move {
                let mut c = duet.connect(id).await?;
                c.attach().await?;
                Ok(c)
            }
        })
        .buffer_unordered(CONNECT_CONCURRENCY)
        .collect()
        .await;
    let connect_secs = t1.elapsed().as_secs_f64();
    let mut clients = Vec::new();
    for r in connected {
        match r {
            Ok(c) => clients.push(c),
            Err(e) => {
                failures += 1;
                first_error.get_or_insert_with(|| format!("{e:#}"));
            }
        }
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_all = duet.rss_kib();
    let threads = duet.threads();
    let fds = std::fs::read_dir(format!("/proc/{}/fd", duet.pid))
        .map(|d| d.count())
        .unwrap_or(0);
    drop(clients);
    duet.stop(STOP_GRACE).await;

    let per_session_mib = rss_all.saturating_sub(rss0) as f64 / 1024.0 / n as f64;
    let mut notes = format!(
        "duet RSS {:.1} → {:.1} MiB ({:.0} KiB/session before clients) → {:.1} MiB with clients; \
         {} threads (from {threads0}), {fds} fds",
        rss0 as f64 / 1024.0,
        rss_sessions as f64 / 1024.0,
        rss_sessions.saturating_sub(rss0) as f64 / n as f64,
        rss_all as f64 / 1024.0,
        threads
    );
    if let Some(e) = &first_error {
        notes.push_str(&format!("; first failure: {e}"));
    }
    Ok(vec![
        Row::new(
            "many sessions",
            &format!("duet RSS per idle session with a client ({n})"),
            "MiB",
            per_session_mib,
            None,
            Target::AtMost { value: 1.0 },
        )
        .note(notes),
        Row::new(
            "many sessions",
            &format!("session starts ({CREATE_CONCURRENCY} requests in flight)"),
            "/s",
            ids.len() as f64 / create_secs,
            Some(bare_rate),
            Target::AtLeast { value: 200.0 },
        )
        .note(format!(
            "first tenth {first_rate:.0}/s, last tenth {last_rate:.0}/s; baseline = bare PTY+cat spawns \
             from this process; {} clients attached in {connect_secs:.2} s ({:.0}/s)",
            n - failures.min(n),
            n as f64 / connect_secs
        )),
        Row::new(
            "many sessions",
            "failed starts or attaches",
            "",
            failures as f64,
            None,
            Target::AtMost { value: 0.0 },
        ),
    ])
}
