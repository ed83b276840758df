//! A `confirmation_response` that matches no pending approval gets a
//! `control_response` error, whether the id was never issued or the other
//! side already answered.

mod common;

use common::{is_tool_result, Agent};

const UNKNOWN: &str = "unknown request_id (already resolved, cancelled, or never issued)";

fn errors(agent: &Agent, count: usize) -> Vec<serde_json::Value> {
    agent.wait_events("control_response errors", count, |e| {
        e["type"] == "control_response" && e["response"]["subtype"] == "error"
    })
}

#[test]
fn a_never_issued_request_id_is_an_error() {
    let agent = Agent::start();
    agent.confirm("no-such-request", true);
    let error = errors(&agent, 1).remove(0);
    assert_eq!(error["response"]["request_id"], "no-such-request");
    assert_eq!(error["response"]["error"], UNKNOWN);
    agent.wait_screen("no pending approval");
}

#[test]
fn a_late_answer_after_the_terminal_decided_is_an_error() {
    let mut agent = Agent::start();
    agent.submit("run true");
    let request = agent.wait_event("control_request", |e| e["type"] == "control_request");
    agent.wait_screen("[y] yes  [n] no");
    agent.type_keys("y");
    agent.wait_event("tool_result", is_tool_result);

    let request_id = request["request_id"].as_str().unwrap();
    agent.confirm(request_id, false);
    let error = errors(&agent, 1).remove(0);
    assert_eq!(error["response"]["request_id"], request_id);
    let successes = agent
        .events()
        .into_iter()
        .filter(|e| e["type"] == "control_response" && e["response"]["subtype"] == "success")
        .count();
    assert_eq!(successes, 1, "the late answer must not change the outcome");
}
