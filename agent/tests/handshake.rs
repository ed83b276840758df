//! `system/session_start` is the first event and carries the capability
//! handshake.

mod common;

use common::{kind, Agent};

#[test]
fn session_start_comes_first_with_the_handshake() {
    let agent = Agent::start();
    let first = agent.wait_event("session_start", |e| kind(e) == "session_start");
    assert_eq!(
        agent.events()[0],
        first,
        "session_start must be the first line"
    );
    let data = &first["data"];
    let session_id = first["session_id"].as_str().expect("session_id");
    assert_eq!(data["session_id"], session_id);
    assert_eq!(data["protocol_version"], 1);
    assert_eq!(data["version"], env!("CARGO_PKG_VERSION"));
    let cwd = std::path::Path::new(data["cwd"].as_str().expect("cwd"));
    assert_eq!(
        cwd.canonicalize().unwrap(),
        agent.dir.path().canonicalize().unwrap()
    );
    let supported: Vec<&str> = data["supported_events"]
        .as_array()
        .expect("supported_events")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    for needed in [
        "system",
        "user",
        "assistant",
        "stream_event",
        "control_request",
        "control_response",
    ] {
        assert!(
            supported.contains(&needed),
            "{needed} missing from {supported:?}"
        );
    }
    agent.wait_screen("duet demo agent");
}
