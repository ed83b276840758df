//! `headless_e2e`'s resume of an ended Qwen Code 0.24 session, over
//! stream-json and over ACP: the model is given the earlier history
//! (`scenarios::resumed_with_history`).

use super::*;
use crate::scenarios::resumed_with_history;

/// stream-json: `--resume <id>` with the id Qwen answered `initialize` with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_json_resumes_with_its_history() {
    let Some(mut run) = qwen_stream_json().await else {
        return;
    };
    resumed_with_history(&mut run).await;
}

/// ACP: `session/load` of the session `session/new` made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_loads_the_session_with_its_history() {
    let Some(mut run) = qwen_acp().await else {
        return;
    };
    resumed_with_history(&mut run).await;
}
