//! Budgets: a profile's `[[budget]]` holds a session's next prompt once a
//! limit is reached, says why (a warning, the board), and lets it go when
//! an owner raises the limit (`PUT /api/sessions/{id}/budget`); a budget
//! that interrupts stops the running turn.

mod support;

use duet_protocol::rest::{ApprovalState, SessionInfo};
use duet_protocol::usage::BudgetStatus;
use duet_protocol::ws::ServerMessage;
use serde_json::{json, Value};
use support::watch::Watch;
use support::*;

async fn server(budget: &str) -> TestServer {
    let text = format!(
        "{}\n[[budget]]\nprofile = \"demo\"\n{budget}\n",
        demo_config()
    );
    let profiles = profiles_from(&text);
    TestServer::start_with(|o| o.profiles = profiles).await
}

/// The next warning with `code`; its message.
async fn warning(client: &mut Client, code: &str) -> String {
    match client
        .until(|m| matches!(m, ServerMessage::Warning { code: c, .. } if c.as_str() == code))
        .await
    {
        ServerMessage::Warning { message, .. } => message,
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spent_budget_holds_the_next_prompt_until_an_owner_raises_it() {
    let server = server("turns = 1").await;
    let s = server.create("demo").await;
    let mut client = server.connect(s.id, None).await;
    let mut watch = Watch::open(&server, TOKEN).await;

    client.submit("hello one").await;
    // The first turn begins, and with it the budget of one turn is spent:
    // it may finish, the next prompt may not go.
    let why = warning(&mut client, "budget_exhausted").await;
    assert!(why.contains("the budget of 1 turn is spent"), "{why}");
    client
        .until_event(|e| kind(e) == "assistant" && assistant_text(e).contains("hello one"))
        .await;
    let queued = server
        .post_json(
            &format!("/api/sessions/{}/submit", s.id),
            json!({"text": "hello two"}),
        )
        .await;
    assert_eq!(queued.json::<Value>().await.unwrap()["queued"], true);
    // The board says why it waits.
    let board = watch
        .until(|b| {
            b.sessions.iter().any(|e| {
                e.session.id == s.id
                    && e.session
                        .budget
                        .as_ref()
                        .is_some_and(|b| b.exhausted.is_some())
            })
        })
        .await;
    let entry = board
        .sessions
        .iter()
        .find(|e| e.session.id == s.id)
        .unwrap();
    assert_eq!(
        entry.session.budget.as_ref().unwrap().exhausted.as_deref(),
        Some("the budget of 1 turn is spent")
    );
    assert_eq!(entry.session.usage.as_ref().unwrap().turns, 1);

    // Only an owner raises it; then the held prompt goes.
    let viewer_share: duet_protocol::rest::Share = server
        .post_json(
            &format!("/api/sessions/{}/shares", s.id),
            json!({"role": "driver", "expires_in": 60}),
        )
        .await
        .json()
        .await
        .unwrap();
    let put = |token: String, body: Value| {
        server
            .http
            .put(server.url(&format!("/api/sessions/{}/budget", s.id)))
            .bearer_auth(token)
            .json(&body)
            .send()
    };
    assert_eq!(
        put(share_secret(&viewer_share), json!({"turns": 5}))
            .await
            .unwrap()
            .status(),
        403
    );
    assert_eq!(
        put(TOKEN.into(), json!({"turns": 0}))
            .await
            .unwrap()
            .status(),
        400
    );
    let resp = put(TOKEN.into(), json!({"turns": 3})).await.unwrap();
    assert_eq!(resp.status(), 200);
    let status: BudgetStatus = resp.json().await.unwrap();
    assert_eq!((status.limits.turns, status.exhausted), (Some(3), None));
    warning(&mut client, "budget_raised").await;
    client
        .until_event(|e| kind(e) == "assistant" && assistant_text(e).contains("hello two"))
        .await;
    let info: SessionInfo = server.info(s.id).await;
    assert_eq!(info.usage.unwrap().turns, 2);
    let audit = server.text(&format!("/api/sessions/{}/audit", s.id)).await;
    assert!(
        audit
            .lines()
            .any(|l| l.contains(r#""kind":"budget""#) && l.contains(r#""turns":3"#)),
        "{audit}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_that_interrupts_stops_the_running_turn() {
    // The reply that asks for the tool already spends more than 1 token.
    let server = server("tokens = 1\ninterrupt = true").await;
    let s = server.create("demo").await;
    let mut client = server.connect(s.id, None).await;
    client.submit("run echo never-runs").await;
    let why = warning(&mut client, "budget_exhausted").await;
    assert!(why.contains("(the running turn is stopped)"), "{why}");
    // Opened now, while the turn runs: its first board is as things are.
    let mut watch = Watch::open(&server, TOKEN).await;
    // Stopped: the agent is idle again with nothing waiting (without the
    // interrupt its approval would wait, the turn running, for good).
    watch
        .until(|b| {
            b.sessions
                .iter()
                .any(|e| e.session.id == s.id && e.busy_since.is_none() && e.pending.is_empty())
        })
        .await;
    let approvals: Vec<duet_protocol::rest::Approval> = server
        .json(&format!("/api/sessions/{}/approvals", s.id))
        .await;
    assert!(
        approvals.iter().all(|a| a.state != ApprovalState::Allowed),
        "{approvals:?}"
    );
    let held = server
        .post_json(
            &format!("/api/sessions/{}/submit", s.id),
            json!({"text": "more"}),
        )
        .await;
    assert_eq!(held.json::<Value>().await.unwrap()["queued"], true);
}
