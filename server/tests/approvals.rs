//! Tool approvals: first answer wins, every client learns the outcome
//! whether it was decided in a browser or in the terminal, late and unknown
//! answers get clear errors, abandoned requests do not stay pending.

mod support;

use duet_protocol::rest::{Approval, ApprovalState, Decider};
use duet_protocol::ws::{ClientMessage, ErrorCode, ServerMessage};
use support::*;

async fn pending_approval(c: &mut Client) -> Approval {
    match c
        .until(|m| matches!(m, ServerMessage::Approval(a) if a.state == ApprovalState::Pending))
        .await
    {
        ServerMessage::Approval(a) => a,
        _ => unreachable!(),
    }
}

async fn decided(c: &mut Client, request_id: &str) -> Approval {
    match c
        .until(|m| matches!(m, ServerMessage::Approval(a) if a.request_id == request_id && a.state != ApprovalState::Pending))
        .await
    {
        ServerMessage::Approval(a) => a,
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_answer_wins_and_everyone_sees_it() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut a = server.connect(s.id, None).await;
    let mut b = server.connect(s.id, None).await;
    a.submit("tool touch x").await;
    let req = pending_approval(&mut a).await;
    assert_eq!(req.tool_name, "run_shell_command");
    assert_eq!(req.input["command"], "touch x");
    assert_eq!(pending_approval(&mut b).await.request_id, req.request_id);

    a.send(&ClientMessage::Approve {
        request_id: req.request_id.clone(),
        allowed: Some(true),
        option: None,
        id: Some("a1".into()),
    })
    .await;
    a.until(|m| matches!(m, ServerMessage::Ack { id, .. } if id == "a1"))
        .await;
    b.send(&ClientMessage::Approve {
        request_id: req.request_id.clone(),
        allowed: Some(false),
        option: None,
        id: Some("b1".into()),
    })
    .await;
    match b
        .until(|m| matches!(m, ServerMessage::Error { id: Some(i), .. } if i == "b1"))
        .await
    {
        ServerMessage::Error { code, message, .. } => {
            assert_eq!(code, ErrorCode::AlreadyResolved);
            assert!(message.contains("allowed"), "{message}");
        }
        _ => unreachable!(),
    }
    for c in [&mut a, &mut b] {
        let d = decided(c, &req.request_id).await;
        assert_eq!(d.state, ApprovalState::Allowed);
        assert_eq!(d.decided_by, Some(Decider::Client));
    }
    // The program got the confirmation_response and mirrored the outcome.
    let (_, resp) = a.until_event(|e| kind(e) == "control_response").await;
    assert_eq!(resp["response"]["response"]["allowed"], true);
    a.until_event(|e| e["message"]["content"][0]["type"] == "tool_result")
        .await;
    a.until_screen("tool allowed (input file)").await;

    // REST: late answer 409, unknown 404.
    let late = server
        .post_json(
            &format!("/api/sessions/{}/approvals/{}", s.id, req.request_id),
            serde_json::json!({"allowed": true}),
        )
        .await;
    assert_eq!(late.status(), 409);
    let body: serde_json::Value = late.json().await.unwrap();
    assert_eq!(body["error"]["code"], "already_resolved");
    let unknown = server
        .post_json(
            &format!("/api/sessions/{}/approvals/nope", s.id),
            serde_json::json!({"allowed": true}),
        )
        .await;
    assert_eq!(unknown.status(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_in_the_terminal_reaches_every_client() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut a = server.connect(s.id, None).await;
    let mut b = server.connect(s.id, None).await;
    a.submit("tool rm -rf build").await;
    let req = pending_approval(&mut a).await;
    pending_approval(&mut b).await;
    // The user presses "n" in the TUI itself.
    a.keys(b"n").await;
    for c in [&mut a, &mut b] {
        let d = decided(c, &req.request_id).await;
        assert_eq!(d.state, ApprovalState::Denied);
        assert_eq!(d.decided_by, Some(Decider::Terminal));
    }
    // A browser answering afterwards is told it is too late.
    a.send(&ClientMessage::Approve {
        request_id: req.request_id.clone(),
        allowed: Some(true),
        option: None,
        id: Some("late".into()),
    })
    .await;
    let m = a
        .until(|m| matches!(m, ServerMessage::Error { id: Some(i), .. } if i == "late"))
        .await;
    assert!(matches!(
        m,
        ServerMessage::Error {
            code: ErrorCode::AlreadyResolved,
            ..
        }
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_approval_and_late_attach_see_the_state() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut a = server.connect(s.id, None).await;
    a.submit("tool make").await;
    let req = pending_approval(&mut a).await;
    // A client attaching now learns of the pending request in its hello.
    let raw = server.connect(s.id, None).await;
    match &raw.texts[0] {
        ServerMessage::Hello(h) => {
            assert_eq!(h.approvals.len(), 1);
            assert_eq!(h.approvals[0].state, ApprovalState::Pending);
        }
        other => panic!("{other:?}"),
    }
    let ok = server
        .post_json(
            &format!("/api/sessions/{}/approvals/{}", s.id, req.request_id),
            serde_json::json!({"allowed": false}),
        )
        .await;
    assert_eq!(ok.status(), 200);
    let approval: Approval = ok.json().await.unwrap();
    assert_eq!(approval.state, ApprovalState::Denied);
    let d = decided(&mut a, &req.request_id).await;
    assert_eq!(d.state, ApprovalState::Denied);
    a.until_screen("tool denied (input file)").await;
    let info = server.info(s.id).await;
    assert_eq!(info.pending_approvals, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_the_program_abandons_do_not_stay_pending() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut a = server.connect(s.id, None).await;
    a.submit("tool first").await;
    let first = pending_approval(&mut a).await;
    // A submit while the approval is open is held (Qwen Code would drop it).
    match a.submit("after the tool").await {
        ServerMessage::Ack { queued, .. } => assert!(queued),
        other => panic!("{other:?}"),
    }
    // The user types a new prompt in the terminal instead of answering: the
    // earlier request will never be answered.
    a.keys(b"P").await;
    let d = decided(&mut a, &first.request_id).await;
    assert_eq!(d.state, ApprovalState::Abandoned);
    // Once that turn is over, the held submit is delivered.
    let (_, ev) = a
        .until_event(|e| e["message"]["content"][0]["text"] == "after the tool")
        .await;
    assert_eq!(kind(&ev), "user");
    a.until_event(|e| {
        kind(e) == "assistant" && e["message"]["content"][0]["text"] == "you said after the tool"
    })
    .await;

    a.submit("tool second").await;
    let second = pending_approval(&mut a).await;
    // The program dies mid-turn (a submit would be held behind the open
    // approval, so it is killed from the terminal side).
    a.keys(b"K").await;
    let d = decided(&mut a, &second.request_id).await;
    assert_eq!(d.state, ApprovalState::Abandoned);
    let exit = a.until(|m| matches!(m, ServerMessage::Exit(_))).await;
    match exit {
        ServerMessage::Exit(e) => {
            assert!(!e.success);
            assert_eq!(e.signal.as_deref(), Some("SIGKILL"), "{e:?}");
        }
        _ => unreachable!(),
    }
}

/// The next approval of `request_id` that the program has confirmed.
async fn confirmed(c: &mut Client, request_id: &str) -> Approval {
    match c
        .until(|m| matches!(m, ServerMessage::Approval(a) if a.request_id == request_id && a.confirmed))
        .await
    {
        ServerMessage::Approval(a) => a,
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn who_decided_is_kept_across_a_restart() {
    use duet_protocol::rest::Role;
    let (token, snippet) = duet_server::config::mint_token("ci", Role::Approver).unwrap();
    let named = toml::from_str::<duet_server::config::ConfigFile>(&snippet)
        .unwrap()
        .named_tokens()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let start = || {
        let named = named.clone();
        let state = state.clone();
        TestServer::start_with(move |o| {
            o.tokens = named;
            o.state_dir = state;
        })
    };
    let first = start().await;
    let s = first.create("demo").await;
    let mut c = first.connect(s.id, None).await;

    // Allowed over REST by the named token, confirmed by the program.
    c.submit("run echo one").await;
    let by_client = pending_approval(&mut c).await;
    let resp = first
        .http
        .post(first.url(&format!(
            "/api/sessions/{}/approvals/{}",
            s.id, by_client.request_id
        )))
        .bearer_auth(&token)
        .json(&serde_json::json!({"allowed": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let before = confirmed(&mut c, &by_client.request_id).await;
    assert_eq!(before.decided_by, Some(Decider::Client));
    assert_eq!(before.decided_by_name.as_deref(), Some("ci"));
    // Denied in the terminal.
    c.submit("run echo two").await;
    let in_terminal = pending_approval(&mut c).await;
    c.keys(b"n").await;
    let d = confirmed(&mut c, &in_terminal.request_id).await;
    assert_eq!(d.decided_by, Some(Decider::Terminal));
    let live: Vec<Approval> = first
        .json(&format!("/api/sessions/{}/approvals", s.id))
        .await;
    drop(c);
    first.shutdown().await;

    // A new duet over the same state directory tells the same story.
    let second = start().await;
    let after: Vec<Approval> = second
        .json(&format!("/api/sessions/{}/approvals", s.id))
        .await;
    let find = |list: &[Approval], id: &str| list.iter().find(|a| a.request_id == id).cloned();
    let a = find(&after, &by_client.request_id).unwrap();
    assert_eq!(
        (a.state, a.decided_by, a.decided_by_name.as_deref()),
        (ApprovalState::Allowed, Some(Decider::Client), Some("ci")),
        "{after:#?}"
    );
    assert_eq!(a.chosen, before.chosen);
    let t = find(&after, &in_terminal.request_id).unwrap();
    assert_eq!(
        (t.state, t.decided_by),
        (ApprovalState::Denied, Some(Decider::Terminal))
    );
    for (old, new) in live.iter().zip(&after) {
        assert_eq!(
            (
                &old.request_id,
                old.state,
                old.decided_by,
                &old.decided_by_name
            ),
            (
                &new.request_id,
                new.state,
                new.decided_by,
                &new.decided_by_name
            )
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_naming_both_an_option_and_allowed_is_refused() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut a = server.connect(s.id, None).await;
    a.submit("tool make").await;
    let req = pending_approval(&mut a).await;
    let allow = req
        .options
        .first()
        .expect("the approval has options")
        .id
        .clone();
    let path = format!("/api/sessions/{}/approvals/{}", s.id, req.request_id);
    let resp = server
        .post_json(
            &path,
            serde_json::json!({"option": allow, "allowed": false}),
        )
        .await;
    assert_eq!(resp.status(), 400);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "bad_message", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not both"),
        "{body}"
    );
    a.send(&ClientMessage::Approve {
        request_id: req.request_id.clone(),
        allowed: Some(true),
        option: Some(allow.clone()),
        id: Some("both".into()),
    })
    .await;
    match a
        .until(|m| matches!(m, ServerMessage::Error { id: Some(i), .. } if i == "both"))
        .await
    {
        ServerMessage::Error { code, message, .. } => {
            assert_eq!(code, ErrorCode::BadMessage);
            assert!(message.contains("not both"), "{message}");
        }
        _ => unreachable!(),
    }
    // Nothing was decided: the request still waits for a clear answer.
    let info = server.info(s.id).await;
    assert_eq!(info.pending_approvals, 1);
    let resp = server
        .post_json(&path, serde_json::json!({"option": allow}))
        .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        decided(&mut a, &req.request_id).await.state,
        ApprovalState::Allowed
    );
}
