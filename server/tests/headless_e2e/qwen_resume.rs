//! `headless_e2e`'s resume of an ended Qwen Code 0.24 session, over
//! stream-json and over ACP: the model is given the earlier history.

use super::*;

async fn resumed_with_history(mut run: Run<Setup<MockLlm>>) {
    run.answered(agent::scenario::REMEMBER).await;
    run.delete().await;
    let ended = run.server().info(run.id()).await;
    assert!(ended.resumable, "{ended:?}");
    let (resumed, mut c, _) = run.resume().await;
    run.asks_back(&mut c).await;
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
