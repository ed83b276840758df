//! Real Codex under test, offline against the OpenAI Responses API mock
//! (docs/codex.md §2): its TUI with the built-in profile
//! (`channel = "codex"`) and codex-acp (`channel = "acp"`).

use std::collections::BTreeMap;

use duet_server::config::{self, ChannelKind};

use super::{acp_profile, Setup};
use crate::mocks::openai_responses::MockResponses;
use crate::support::installed;

/// Codex's TUI with the built-in profile's arguments. `None`: skip
/// (`DUET_SKIP_CODEX=1`).
pub(crate) async fn tui() -> Option<Setup<MockResponses>> {
    let bin = installed::codex()?;
    let (home, workspace) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mock = MockResponses::start().await;
    let env = mock.env(home.path()).into_iter().collect();
    let args = config::CODEX_ARGS.map(String::from).to_vec();
    let mut profile = acp_profile("codex", &bin, args, workspace.path(), env);
    profile.channel = Some(ChannelKind::Codex);
    profile.resume_args = Some(config::CODEX_RESUME_ARGS.map(String::from).to_vec());
    Some(Setup::new(profile, workspace, home, mock))
}

/// codex-acp 2.6.0 in the mode that asks. `None`: skip
/// (`DUET_SKIP_CODEX=1`).
pub(crate) async fn acp() -> Option<Setup<MockResponses>> {
    let adapter = installed::codex_acp()?;
    let (home, workspace) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mock = MockResponses::start().await;
    let mut env: BTreeMap<String, String> = mock.env(home.path()).into_iter().collect();
    // The adapter's default mode, "agent" (Auto review), asks a model to
    // approve instead of the user (the built-in profile sets it too).
    env.insert("INITIAL_AGENT_MODE".into(), "workspace-write".into());
    let profile = acp_profile("codex-acp", &adapter, Vec::new(), workspace.path(), env);
    Some(Setup::new(profile, workspace, home, mock))
}
