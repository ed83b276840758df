//! Test servers that differ from the default one: other profiles (the
//! resumable stream-json fake) or more credentials (a named token per
//! role).

use std::path::PathBuf;

use duet_protocol::rest::Role;
use duet_server::config::{ChannelKind, ConfigFile, Profile};

use super::{TestServer, TOKEN};

/// The scripted stream-json agent (`fixtures/fake_stream_json.py`) as
/// profile "fake": its `initialize` answer names its conversation, so an
/// ended session of it can be resumed.
pub(crate) fn resumable_profile() -> Profile {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fake_stream_json.py")
        .to_string_lossy()
        .into_owned();
    Profile {
        extra_args: false,
        name: "fake".into(),
        description: None,
        command: "python3".into(),
        args: vec![script.clone()],
        env: Default::default(),
        cwd: None,
        ready_text: None,
        channel: Some(ChannelKind::StreamJson),
        resume_args: Some(vec![script, "--resume".into(), "{agent_session_id}".into()]),
    }
}

/// A server with one named token per role but owner (`drv`, `apr`,
/// `vw`); returns it and each role's token, the owner's first.
pub(crate) async fn server_with_roles() -> (TestServer, Vec<(Role, String)>) {
    let mut config = String::new();
    let mut tokens = vec![(Role::Owner, TOKEN.to_string())];
    for (name, role) in [
        ("drv", Role::Driver),
        ("apr", Role::Approver),
        ("vw", Role::Viewer),
    ] {
        let (token, snippet) = duet_server::config::mint_token(name, role).unwrap();
        config.push_str(&snippet);
        tokens.push((role, token));
    }
    let named = toml::from_str::<ConfigFile>(&config)
        .unwrap()
        .named_tokens()
        .unwrap();
    let server = TestServer::start_with(|o| o.tokens = named).await;
    (server, tokens)
}
