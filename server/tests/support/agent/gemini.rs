//! Real Gemini CLI under test, offline against the Gemini API mock
//! (docs/gemini-cli.md §2): its TUI with the built-in profile
//! (`channel = "gemini"`) and `gemini --acp` (`channel = "acp"`).

use std::collections::BTreeMap;

use duet_server::config::{self, ChannelKind};

use super::{acp_profile, Setup};
use crate::mocks::gemini::{write_settings, MockGemini};
use crate::support::installed;

/// A HOME with the offline settings, a workspace, the mock, and the
/// environment pointing Gemini CLI at it.
async fn offline() -> (tempfile::TempDir, tempfile::TempDir, MockGemini) {
    let home = tempfile::tempdir().unwrap();
    write_settings(home.path());
    (
        home,
        tempfile::tempdir().unwrap(),
        MockGemini::start().await,
    )
}

/// Gemini CLI's TUI with the built-in profile's arguments, environment
/// and ready text. `None`: skip (`DUET_SKIP_GEMINI=1`).
pub(crate) async fn tui() -> Option<Setup<MockGemini>> {
    let bin = installed::gemini()?;
    let (home, workspace, mock) = offline().await;
    let mut env: BTreeMap<String, String> = config::GEMINI_ENV
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    env.extend(mock.env(home.path()));
    let args = config::GEMINI_ARGS.map(String::from).to_vec();
    let mut profile = acp_profile("gemini", &bin, args, workspace.path(), env);
    profile.channel = Some(ChannelKind::Gemini);
    profile.ready_text = Some(config::GEMINI_READY_TEXT.into());
    profile.resume_args = Some(config::GEMINI_RESUME_ARGS.map(String::from).to_vec());
    Some(Setup::new(profile, workspace, home, mock))
}

/// `gemini --acp`. `None`: skip (`DUET_SKIP_GEMINI=1`).
pub(crate) async fn acp() -> Option<Setup<MockGemini>> {
    let bin = installed::gemini()?;
    let (home, workspace, mock) = offline().await;
    let env = mock.env(home.path()).into_iter().collect();
    let args = vec!["--acp".to_string()];
    let profile = acp_profile("gemini-acp", &bin, args, workspace.path(), env);
    Some(Setup::new(profile, workspace, home, mock))
}
