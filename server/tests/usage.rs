//! Usage you can see: what the demo agent reports (its messages' `usage`)
//! adds up per turn and per session in `GET /api/sessions/{id}/usage`, the
//! session's info (the board) and `/metrics` (tokens by profile and
//! direction, tool calls by tool and outcome, turn durations). The figures
//! against recorded streams of the real agents: `session/channel/usage.rs`.

mod support;

use duet_protocol::rest::SessionInfo;
use duet_protocol::usage::SessionUsage;
use support::*;

/// The value of the series `name` in `metrics`.
fn sample(metrics: &str, name: &str) -> f64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {metrics}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_reports_add_up_per_turn_and_per_session() {
    let server = TestServer::start().await;
    let s = server.create("demo").await;
    let mut client = server.connect(s.id, None).await;
    let before: SessionUsage = server.json(&format!("/api/sessions/{}/usage", s.id)).await;
    assert_eq!(before.totals.turns, 0);
    assert!(server.info(s.id).await.usage.is_none());

    client.submit("hello there").await;
    let (_, reply) = client
        .until_event(|e| kind(e) == "assistant" && assistant_text(e).contains("hello there"))
        .await;
    let reported = &reply["message"]["usage"];
    client.submit("run echo counted").await;
    let a = client.pending_approval().await;
    server
        .post_json(
            &format!("/api/sessions/{}/approvals/{}", s.id, a.request_id),
            serde_json::json!({"allowed": true}),
        )
        .await;
    client
        .until_event(|e| kind(e) == "assistant" && assistant_text(e).contains("counted"))
        .await;
    // The turn ends once the reply does: its duration is known.
    let usage = loop {
        let u: SessionUsage = server.json(&format!("/api/sessions/{}/usage", s.id)).await;
        if u.turns.len() == 2 && u.turns.iter().all(|t| t.duration_ms.is_some()) {
            break u;
        }
        client.next().await;
    };
    let first = &usage.turns[0];
    assert_eq!(first.n, 1);
    assert_eq!(
        first.tokens.input,
        reported["input_tokens"].as_u64().unwrap()
    );
    assert_eq!(
        first.tokens.output,
        reported["output_tokens"].as_u64().unwrap()
    );
    assert_eq!(usage.turns[1].tool_calls, 1);
    let t = &usage.totals;
    assert_eq!((t.turns, t.tool_calls, t.tool_errors), (2, 1, 0));
    assert_eq!(
        t.tokens.input,
        usage.turns.iter().map(|t| t.tokens.input).sum::<u64>()
    );
    assert!(t.tokens.output > first.tokens.output);
    assert!(
        t.busy_ms
            >= usage
                .turns
                .iter()
                .map(|t| t.duration_ms.unwrap())
                .sum::<u64>()
    );
    assert_eq!(t.cost, None, "the demo agent reports no cost");
    // The board's view of the session carries the same totals.
    let info: SessionInfo = server.info(s.id).await;
    assert_eq!(info.usage.as_ref().map(|u| u.tokens), Some(t.tokens));

    let metrics = server.text("/metrics").await;
    assert_eq!(
        sample(
            &metrics,
            r#"duet_tokens_total{profile="demo",direction="input"}"#
        ),
        t.tokens.input as f64
    );
    assert_eq!(
        sample(
            &metrics,
            r#"duet_tokens_total{profile="demo",direction="output"}"#
        ),
        t.tokens.output as f64
    );
    assert_eq!(
        sample(
            &metrics,
            r#"duet_tool_calls_total{tool="run_shell_command",outcome="ok"}"#
        ),
        1.0
    );
    assert_eq!(sample(&metrics, "duet_turn_duration_seconds_count"), 2.0);
}
