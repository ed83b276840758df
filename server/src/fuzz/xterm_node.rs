//! The reference terminal for `fuzz::xterm`: xterm.js (@xterm/headless,
//! the version web/package.json pins for the browser) in one Node process
//! per test run, fed cases over a pipe by `server/tests/xterm/replay.mjs`.
//!
//! `DUET_NODE` names another `node`. Without Node or web/node_modules the
//! test fails and says so: a reference that is not there must not pass for
//! one that agrees.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use base64::Engine as _;
use serde::Deserialize;
use serde_json::json;

/// One step of a case: output, or a resize to `(cols, rows)`.
#[derive(Debug, Clone)]
pub(super) enum Step {
    Out(Vec<u8>),
    Resize(u16, u16),
}

/// What xterm holds after a resize or at the end of a case.
#[derive(Debug, Deserialize, PartialEq)]
pub(super) struct State {
    /// xterm's buffer holds fewer lines than its scrollback and screen
    /// (see replay.mjs); never set on duet's side.
    #[serde(default)]
    pub(super) broken: bool,
    pub(super) cols: u16,
    pub(super) rows: u16,
    /// `[x, y]`.
    pub(super) cursor: [u16; 2],
    pub(super) alt: bool,
    /// `[text, continues the line above]`.
    pub(super) screen: Vec<(String, bool)>,
    pub(super) scrollback: Vec<(String, bool)>,
}

#[derive(Deserialize)]
struct Reply {
    states: Option<Vec<State>>,
    error: Option<String>,
}

struct Node {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

fn script() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xterm/replay.mjs")
}

fn start() -> Node {
    let node = std::env::var("DUET_NODE").unwrap_or_else(|_| "node".into());
    let mut child = Command::new(&node)
        .arg(script())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("fuzz::xterm compares with xterm.js and needs Node ({node:?}: {e}); install Node 20+ and run `npm ci` in web/")
        });
    let stdin = child.stdin.take().expect("piped");
    let stdout = BufReader::new(child.stdout.take().expect("piped"));
    Node {
        child,
        stdin,
        stdout,
    }
}

impl Node {
    /// The child's complaint, once it has gone.
    fn died(&mut self) -> String {
        let _ = self.child.wait();
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        format!(
            "the xterm.js reference ({}) stopped: {}",
            script().display(),
            err.trim()
        )
    }
}

/// Replays a case on xterm.js: a state after every resize and one at the
/// end.
pub(super) fn replay(cols: u16, rows: u16, scrollback: usize, steps: &[Step]) -> Vec<State> {
    static NODE: OnceLock<Mutex<Node>> = OnceLock::new();
    let mut node = NODE
        .get_or_init(|| Mutex::new(start()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let b64 = base64::engine::general_purpose::STANDARD;
    let steps: Vec<_> = steps
        .iter()
        .map(|s| match s {
            Step::Out(bytes) => json!({ "out": b64.encode(bytes) }),
            Step::Resize(c, r) => json!({ "resize": [c, r] }),
        })
        .collect();
    let case = json!({ "cols": cols, "rows": rows, "scrollback": scrollback, "steps": steps });
    let mut line = case.to_string();
    line.push('\n');
    let mut reply = String::new();
    let sent = node
        .stdin
        .write_all(line.as_bytes())
        .and_then(|()| node.stdin.flush());
    let read = sent.and_then(|()| node.stdout.read_line(&mut reply));
    if !matches!(read, Ok(n) if n > 0) {
        let why = node.died();
        panic!("{why}");
    }
    let reply: Reply = serde_json::from_str(&reply).expect("replay.mjs answers JSON");
    match (reply.states, reply.error) {
        (Some(states), None) => states,
        (_, error) => panic!("xterm.js failed on a case: {error:?}"),
    }
}
