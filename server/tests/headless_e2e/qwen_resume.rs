//! `headless_e2e`'s resume of an ended Qwen Code 0.24 session, over
//! stream-json and over ACP: the model is given the earlier history.

use super::*;

async fn resumed_with_history(mut run: Run<Setup<MockLlm>>) {
    run.client.submit("remember the apples").await;
    run.reply(&reply_to("remember the apples")).await;
    run.result().await;
    run.delete().await;
    let ended = run.server().info(run.id()).await;
    assert!(ended.resumable, "{ended:?}");
    let (resumed, mut c, _) = run.resume().await;
    c.submit("what was it").await;
    c.until_event(|e| assistant_text(e).contains(&reply_to("what was it")))
        .await;
    let mock = &run.program.mock;
    let last = mock.requests().pop().unwrap();
    assert!(
        last.to_string().contains("remember the apples"),
        "the resumed request carries the history: {}",
        mock.summary()
    );
    assert_eq!(
        run.server().info(resumed.id).await.agent_session_id,
        ended.agent_session_id
    );
}

/// stream-json: `--resume <id>` with the id Qwen answered `initialize` with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_json_resumes_with_its_history() {
    let Some(run) = qwen_stream_json().await else {
        return;
    };
    resumed_with_history(run).await;
}

/// ACP: `session/load` of the session `session/new` made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_loads_the_session_with_its_history() {
    let Some(run) = qwen_acp().await else {
        return;
    };
    resumed_with_history(run).await;
}
