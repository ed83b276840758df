//! Denying an approval with the `n` key: the command does not run, and every
//! observer sees `allowed: false` and a `denied by user` tool_result.

mod common;

use common::{is_tool_result, Agent};

#[test]
fn n_in_the_terminal_denies_the_command() {
    let mut agent = Agent::start();
    agent.submit("run touch should-not-exist");
    let request = agent.wait_event("control_request", |e| e["type"] == "control_request");
    agent.wait_screen("[y] yes  [n] no");
    agent.type_keys("n");

    let response = agent.wait_event("control_response", |e| e["type"] == "control_response");
    assert_eq!(response["response"]["subtype"], "success");
    assert_eq!(response["response"]["request_id"], request["request_id"]);
    assert_eq!(response["response"]["response"]["allowed"], false);

    let result = agent.wait_event("tool_result", is_tool_result);
    assert_eq!(result["message"]["content"][0]["is_error"], true);
    assert_eq!(result["message"]["content"][0]["content"], "denied by user");
    agent.wait_event("follow-up", |e| {
        e["type"] == "assistant"
            && e["message"]["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("won't run"))
    });
    agent.wait_screen("denied in the terminal");
    assert!(!agent.dir.path().join("should-not-exist").exists());
}
