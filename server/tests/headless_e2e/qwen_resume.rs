//! `headless_e2e`'s resume of an ended Qwen Code 0.24 session, over
//! stream-json and over ACP: the model is given the earlier history.

use super::*;

async fn resumed_with_history(mut run: Run) {
    run.client.submit("remember the apples").await;
    run.reply(&mock_llm::reply_to("remember the apples")).await;
    run.result().await;
    let resp = run
        .server
        .delete(&format!("/api/sessions/{}", run.id))
        .await;
    assert!(resp.status().is_success());
    run.client
        .until(|m| matches!(m, ServerMessage::Exit(_)))
        .await;
    let ended = run.server.info(run.id).await;
    assert!(ended.resumable, "{ended:?}");
    let resp = run
        .server
        .post_json(&format!("/api/sessions/{}/resume", run.id), json!({}))
        .await;
    assert_eq!(resp.status(), 201);
    let resumed: duet_protocol::rest::SessionInfo = resp.json().await.unwrap();
    let mut c = run.server.connect(resumed.id, None).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while tokio::time::timeout(
        std::time::Duration::from_secs(15),
        c.until_event(|e| e["subtype"] == "session_start"),
    )
    .await
    .is_err()
    {
        assert!(std::time::Instant::now() < deadline, "no session_start");
    }
    c.submit("what was it").await;
    c.until_event(|e| assistant_text(e).contains(&mock_llm::reply_to("what was it")))
        .await;
    let last = run.mock.requests().pop().unwrap();
    assert!(
        last.to_string().contains("remember the apples"),
        "the resumed request carries the history: {}",
        run.mock.summary()
    );
    assert_eq!(
        run.server.info(resumed.id).await.agent_session_id,
        ended.agent_session_id
    );
}

/// stream-json: `--resume <id>` with the id Qwen answered `initialize` with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_json_resumes_with_its_history() {
    let Some(run) = Run::qwen().await else {
        return;
    };
    resumed_with_history(run).await;
}

/// ACP: `session/load` of the session `session/new` made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_loads_the_session_with_its_history() {
    let Some(run) =
        Run::qwen_with(ChannelKind::Acp, &["--acp", "--approval-mode", "default"]).await
    else {
        return;
    };
    resumed_with_history(run).await;
}
