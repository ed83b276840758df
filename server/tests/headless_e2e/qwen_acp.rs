//! `headless_e2e`'s Qwen Code 0.24 over the Agent Client Protocol
//! (`--acp`): prompts, approvals with the agent's options, a cancel.

use super::*;

async fn run() -> Option<Run> {
    Run::qwen_with(ChannelKind::Acp, &["--acp", "--approval-mode", "default"]).await
}

/// A prompt, a streamed reply; a tool approved with one of Qwen's own
/// options runs, one rejected does not; the handshake names the agent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_reply_and_tools_approved_and_rejected_with_the_agents_options() {
    let Some(mut run) = run().await else {
        return;
    };
    let start = run
        .client
        .texts
        .iter()
        .find_map(|m| match m {
            ServerMessage::Event { event, .. } if event["subtype"] == "session_start" => {
                Some(event.clone())
            }
            _ => None,
        })
        .expect("session_start");
    assert_eq!(start["data"]["agent"]["name"], "qwen-code", "{start}");
    assert_eq!(start["data"]["protocol"], "acp");

    // Qwen offers its approval modes; choosing one goes to it as
    // `session/set_mode` and comes back as the current mode. It starts in
    // the one that asks (the profile says so), so another one first, and
    // back: choosing the current mode changes nothing and says nothing.
    let modes: Vec<&str> = start["data"]["modes"]["availableModes"]
        .as_array()
        .expect("Qwen offers modes")
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert!(modes.contains(&"default"), "{modes:?}");
    let other = *modes
        .iter()
        .find(|m| **m != "default")
        .expect("another mode");
    for mode in [other, "default"] {
        let resp = run
            .server
            .post_json(
                &format!("/api/sessions/{}/mode", run.id),
                serde_json::json!({"mode": mode}),
            )
            .await;
        assert_eq!(resp.status(), 204);
        let (_, news) = run
            .client
            .until_event(|e| {
                e["subtype"] == "acp_current_mode_update" && e["update"]["currentModeId"] == mode
            })
            .await;
        assert_eq!(news["update"]["currentModeId"], mode);
    }

    let sent = std::time::Instant::now();
    run.client.submit("hello there").await;
    run.client
        .until_event(|e| e["event"]["delta"]["type"] == "text_delta")
        .await;
    let first = sent.elapsed();
    run.reply(&mock_llm::reply_to("hello there")).await;
    assert_eq!(run.result().await["is_error"], false);
    eprintln!(
        "measured: acp submit to first delta {first:?}, to result {:?}",
        sent.elapsed()
    );

    run.client.submit(mock_llm::TOOL_TRIGGER).await;
    let a = run.client.pending_approval().await;
    assert_eq!(a.tool_name, "run_shell_command");
    assert_eq!(a.input["command"], mock_llm::TOOL_COMMAND);
    let kinds: Vec<_> = a.options.iter().map(|o| (o.id.as_str(), o.kind)).collect();
    eprintln!("qwen acp options: {kinds:?}");
    assert!(
        a.options.iter().any(|o| o.id == "proceed_once"),
        "{kinds:?}"
    );
    run.client
        .send(&ClientMessage::Approve {
            request_id: a.request_id.clone(),
            allowed: None,
            option: Some("proceed_once".into()),
            id: None,
        })
        .await;
    assert_eq!(
        run.settled(&a.request_id).await.state,
        ApprovalState::Allowed
    );
    run.client
        .until_event(|e| kind(e) == "user" && e["message"]["content"][0]["type"] == "tool_result")
        .await;
    run.reply(mock_llm::AFTER_TOOL).await;
    run.result().await;
    assert!(run.workspace.path().join("made_by_tool.txt").exists());
    std::fs::remove_file(run.workspace.path().join("made_by_tool.txt")).unwrap();

    run.client
        .submit(&format!("{} again", mock_llm::TOOL_TRIGGER))
        .await;
    let a = run.client.pending_approval().await;
    run.decide(&a.request_id, false).await;
    assert_eq!(
        run.settled(&a.request_id).await.state,
        ApprovalState::Denied
    );
    let r = run.result().await;
    eprintln!("acp result after a rejection: {r}");
    assert!(!run.workspace.path().join("made_by_tool.txt").exists());
    run.client.submit("after the rejection").await;
    run.reply(&mock_llm::reply_to("after the rejection")).await;
    let resp = run
        .server
        .delete(&format!("/api/sessions/{}", run.id))
        .await;
    assert!(resp.status().is_success());
    run.client
        .until(|m| matches!(m, ServerMessage::Exit(_)))
        .await;
}

/// Cancel while Qwen waits for a permission: `session/cancel`, the
/// request answered `cancelled`, the prompt ends `cancelled`, and the
/// next prompt is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_mid_turn_ends_the_turn() {
    let Some(mut run) = run().await else {
        return;
    };
    run.client.submit(mock_llm::TOOL_TRIGGER).await;
    let a = run.client.pending_approval().await;
    run.client.send(&ClientMessage::Cancel { id: None }).await;
    assert_eq!(
        run.settled(&a.request_id).await.state,
        ApprovalState::Abandoned
    );
    let r = run.result().await;
    eprintln!("acp result after a cancel: {r}");
    assert_eq!(r["stop_reason"], "cancelled", "{r}");
    assert!(!run.workspace.path().join("made_by_tool.txt").exists());
    run.client.submit("after the cancel").await;
    run.reply(&mock_llm::reply_to("after the cancel")).await;
}
