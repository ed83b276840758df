//! The input writer: any command goes into the agent's input file as
//! exactly one line that parses back to the same command.

use duet_protocol::command::InputCommand;
use proptest::prelude::*;

use crate::session::channel::dual_output::input::InputFile;

fn command() -> impl Strategy<Value = InputCommand> {
    prop_oneof![
        super::string().prop_map(|text| InputCommand::Submit { text }),
        any::<String>().prop_map(|text| InputCommand::Submit { text }),
        (super::string(), any::<bool>()).prop_map(|(request_id, allowed)| {
            InputCommand::ConfirmationResponse {
                request_id,
                allowed,
            }
        }),
    ]
}

#[test]
fn any_command_is_written_as_exactly_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let n = std::cell::Cell::new(0u64);
    proptest!(super::config(), |(cmds in prop::collection::vec(command(), 1..4))| {
        n.set(n.get() + 1);
        let path = dir.path().join(format!("input-{}", n.get() % 4));
        let _ = std::fs::remove_file(&path);
        let w = InputFile::open(&path).unwrap();
        for cmd in &cmds {
            w.send(cmd).unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        prop_assert!(text.ends_with('\n'));
        let lines: Vec<&str> = text.split_terminator('\n').collect();
        prop_assert_eq!(lines.len(), cmds.len(), "one line per command: {:?}", text);
        for (line, cmd) in lines.iter().zip(&cmds) {
            let back: InputCommand = serde_json::from_str(line).unwrap();
            prop_assert_eq!(&back, cmd);
        }
    });
}
