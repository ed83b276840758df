//! `headless_e2e`'s resume of an ended Claude Code 2.1.330 session in its
//! SDK mode (stream-json both ways): started again with `--resume
//! {agent_session_id}` (the id its `system/init` reported), it is the same
//! conversation and the model is given the earlier history
//! (`scenarios::resumed_with_history`).

use super::*;
use crate::scenarios::resumed_with_history;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_json_resumes_with_its_history() {
    let Some(mut setup) = agent::claude::headless().await else {
        return;
    };
    let mut resume = setup.profile.args.clone();
    resume.extend(["--resume".into(), "{agent_session_id}".into()]);
    setup.profile.resume_args = Some(resume);
    resumed_with_history(&mut Run::started(setup).await).await;
}
