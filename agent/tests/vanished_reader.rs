//! An events reader that goes away (a FIFO whose reader closes) turns dual
//! output off; the TUI keeps working.

mod common;

use std::io::{BufRead, BufReader};

use common::{standard_args, Agent};
use nix::sys::stat::Mode;

#[test]
fn the_tui_survives_its_events_reader() {
    let mut agent = Agent::start_with(
        |dir| {
            nix::unistd::mkfifo(&dir.join("events.jsonl"), Mode::from_bits_truncate(0o600)).unwrap()
        },
        standard_args,
    );
    // Opening blocks until the agent opens its end.
    let fifo = std::fs::File::open(&agent.events).unwrap();
    let mut first = String::new();
    BufReader::new(&fifo).read_line(&mut first).unwrap();
    assert!(first.contains("session_start"), "{first}");
    drop(fifo);

    agent.wait_screen("Type a message");
    agent.type_keys("anyone listening?\r");
    agent.wait_screen("You said");
    agent.wait_screen("dual output off");
    agent.type_keys("run echo still-$((1+1))\r");
    agent.wait_screen("[y] yes  [n] no");
    agent.type_keys("y");
    agent.wait_screen("still-2");
    agent.type_keys("/quit\r");
    assert_eq!(agent.wait_exit(), 0);
}
