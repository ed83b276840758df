//! `headless_e2e`'s Qwen Code 0.24 over the Agent Client Protocol
//! (`--acp`): prompts, approvals with the agent's options, a cancel.

use super::*;

/// A prompt, a streamed reply; a tool approved with one of Qwen's own
/// options runs, one rejected does not; the handshake names the agent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_reply_and_tools_approved_and_rejected_with_the_agents_options() {
    let Some(mut run) = qwen_acp().await else {
        return;
    };
    let start = run.session_start();
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
            .server()
            .post_json(
                &format!("/api/sessions/{}/mode", run.id()),
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

    run.streamed("hello there").await;

    run.client.submit(TOOL_TRIGGER).await;
    let a = run.client.pending_approval().await;
    assert_eq!(a.tool_name, "run_shell_command");
    assert_eq!(a.input["command"], TOOL_COMMAND);
    let kinds: Vec<_> = a.options.iter().map(|o| (o.id.as_str(), o.kind)).collect();
    eprintln!("qwen acp options: {kinds:?}");
    assert!(
        a.options.iter().any(|o| o.id == "proceed_once"),
        "{kinds:?}"
    );
    run.choose(&a.request_id, "proceed_once").await;
    assert_eq!(
        run.decided(&a.request_id).await.state,
        ApprovalState::Allowed
    );
    run.tool_ran().await;
    std::fs::remove_file(run.tool_file()).unwrap();

    run.client.submit(&format!("{TOOL_TRIGGER} again")).await;
    let a = run.client.pending_approval().await;
    run.denied(&a).await;
    run.delete().await;
}

/// Cancel while Qwen waits for a permission: `session/cancel`, the
/// request answered `cancelled`, the prompt ends `cancelled`, and the
/// next prompt is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_mid_turn_ends_the_turn() {
    let Some(mut run) = qwen_acp().await else {
        return;
    };
    let r = run.cancelled_while_asked().await;
    assert_eq!(r["stop_reason"], "cancelled", "{r}");
}
