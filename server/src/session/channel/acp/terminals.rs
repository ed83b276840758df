//! ACP terminals (`terminal/create`, `output`, `wait_for_exit`, `kill`,
//! `release`): commands the agent runs through duet, on pipes, in the
//! work dir, each in a process group of its own. Their output is kept up
//! to the agent's `outputByteLimit` (oldest bytes dropped first) and also
//! shown in the session's terminal pane.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use nix::sys::signal::Signal;
use rustix::fs::{Mode, OFlags};
use serde_json::{json, Value};
use tokio::io::AsyncReadExt;
use tokio::sync::watch;

use super::beneath::Root;
use crate::config::SpawnOptions;
use crate::session::terminal::output::Output;
use crate::session::terminal::pipes::{self, crlf};
use crate::sync::lock;

/// Terminals alive at once.
const MAX_TERMINALS: usize = 16;
/// Output kept per terminal when the agent names no limit, and at most.
const DEFAULT_LIMIT: usize = 1 << 20;
const MAX_LIMIT: usize = 4 << 20;

/// How a command ended, as ACP reports it.
type Exit = (Option<i32>, Option<String>);

struct Term {
    pid: u32,
    output: Mutex<(Vec<u8>, bool)>,
    limit: usize,
    exit: watch::Receiver<Option<Exit>>,
}

/// See the module docs.
pub(crate) struct Terminals {
    terms: Mutex<HashMap<String, Arc<Term>>>,
    next: AtomicU64,
    work_dir: PathBuf,
    pane: Arc<Output>,
}

type Answer = Result<Value, String>;

impl Terminals {
    pub(crate) fn new(work_dir: PathBuf, pane: Arc<Output>) -> Self {
        Self {
            terms: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            work_dir,
            pane,
        }
    }

    fn get(&self, params: &Value) -> Result<Arc<Term>, String> {
        let id = params["terminalId"].as_str().unwrap_or_default();
        lock(&self.terms)
            .get(id)
            .cloned()
            .ok_or_else(|| format!("no terminal {id:?}"))
    }

    /// `terminal/create`.
    pub(crate) fn create(&self, params: &Value) -> Answer {
        if lock(&self.terms).len() >= MAX_TERMINALS {
            return Err(format!(
                "{MAX_TERMINALS} terminals are open; release one first"
            ));
        }
        let cwd = match params["cwd"].as_str() {
            Some(c) => inside(&self.work_dir, Path::new(c))?,
            None => self.work_dir.clone(),
        };
        let opts = SpawnOptions {
            program: params["command"].as_str().ok_or("no command")?.to_string(),
            args: params["args"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|a| a.as_str().map(String::from))
                .collect(),
            env: params["env"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| Some((v["name"].as_str()?.into(), v["value"].as_str()?.into())))
                .collect(),
            cwd,
            cols: 80,
            rows: 24,
        };
        let limit = params["outputByteLimit"]
            .as_u64()
            .map_or(DEFAULT_LIMIT, |l| (l as usize).min(MAX_LIMIT));
        let mut piped = pipes::spawn(&opts).map_err(|e| format!("{e:#}"))?;
        drop(piped.stdin);
        let (exit_tx, exit) = watch::channel(None);
        let term = Arc::new(Term {
            pid: piped.pid,
            output: Mutex::new((Vec::new(), false)),
            limit,
            exit,
        });
        let id = format!("term-{}", self.next.fetch_add(1, Ordering::Relaxed));
        self.pane.push(Bytes::from(format!(
            "\x1b[2m$ {} {}\x1b[0m\r\n",
            opts.program,
            opts.args.join(" ")
        )));
        let readers = [
            tokio::spawn(collect(piped.stdout, term.clone(), self.pane.clone())),
            tokio::spawn(collect(piped.stderr, term.clone(), self.pane.clone())),
        ];
        tokio::spawn(async move {
            let status = piped.child.wait().await;
            for r in readers {
                let _ = r.await;
            }
            use std::os::unix::process::ExitStatusExt;
            let exit = match status {
                Ok(s) => (
                    s.code(),
                    s.signal().map(|n| {
                        Signal::try_from(n)
                            .map(|s| s.as_str().to_string())
                            .unwrap_or_else(|_| n.to_string())
                    }),
                ),
                Err(_) => (None, None),
            };
            exit_tx.send_replace(Some(exit));
        });
        lock(&self.terms).insert(id.clone(), term);
        Ok(json!({"terminalId": id}))
    }

    /// `terminal/output`.
    pub(crate) fn output(&self, params: &Value) -> Answer {
        let term = self.get(params)?;
        let (text, truncated) = {
            let out = lock(&term.output);
            (String::from_utf8_lossy(&out.0).into_owned(), out.1)
        };
        let mut answer = json!({"output": text, "truncated": truncated});
        if let Some(exit) = term.exit.borrow().clone() {
            answer["exitStatus"] = exit_json(&exit);
        }
        Ok(answer)
    }

    /// `terminal/wait_for_exit` (may wait long: run it on a task).
    pub(crate) async fn wait_for_exit(self: Arc<Self>, params: Value) -> Answer {
        let term = self.get(&params)?;
        let mut exit = term.exit.clone();
        let exit = exit
            .wait_for(Option::is_some)
            .await
            .map_err(|_| "the terminal is gone".to_string())?
            .clone()
            .unwrap_or((None, None));
        Ok(exit_json(&exit))
    }

    /// `terminal/kill`: the command ends; its output stays.
    pub(crate) fn kill(&self, params: &Value) -> Answer {
        let term = self.get(params)?;
        kill(&term);
        Ok(json!({}))
    }

    /// `terminal/release`: killed if running, and forgotten.
    pub(crate) fn release(&self, params: &Value) -> Answer {
        let id = params["terminalId"].as_str().unwrap_or_default();
        let term = lock(&self.terms)
            .remove(id)
            .ok_or_else(|| format!("no terminal {id:?}"))?;
        kill(&term);
        Ok(json!({}))
    }

    /// The session is over: every command goes.
    pub(crate) fn close(&self) {
        for (_, term) in lock(&self.terms).drain() {
            kill(&term);
        }
    }
}

fn kill(term: &Term) {
    if term.exit.borrow().is_none() {
        let _ =
            nix::sys::signal::killpg(nix::unistd::Pid::from_raw(term.pid as i32), Signal::SIGKILL);
    }
}

fn exit_json(exit: &Exit) -> Value {
    json!({"exitCode": exit.0, "signal": exit.1})
}

/// `dir` if it names a directory beneath `root` (`beneath.rs`: absolute,
/// under the work dir, and no `..` or symlink leading out).
///
/// The command then starts in `dir` by that path, which the kernel
/// resolves again when the child changes into it, so a rename in between
/// could move it elsewhere. That gap is left open on purpose: closing it
/// would protect nothing, since the agent chooses the command too, and a
/// `cd` in it goes anywhere this check refuses. The check keeps the cwd
/// the agent asks for honest (inside, not wherever a symlink points). The
/// ways to close the gap cost more than that: `/proc/self/fd/N` of the
/// checked directory as the cwd turns a relative program (`./build.sh`)
/// into a path under `/proc/self/fd` that a script's interpreter cannot
/// open once exec has closed the descriptor, and `fchdir` in the child
/// needs `pre_exec` (unsafe code, and a fork of duet, not posix_spawn).
fn inside(root: &Path, dir: &Path) -> Result<PathBuf, String> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    Root::open(root)
        .and_then(|r| r.open_path(dir, flags, Mode::empty()))
        .map_err(|e| e.to_string())?;
    Ok(dir.to_path_buf())
}

/// Keeps a command's output (the newest `limit` bytes) and shows it.
async fn collect(mut from: impl tokio::io::AsyncRead + Unpin, term: Arc<Term>, pane: Arc<Output>) {
    let mut buf = vec![0u8; 8192];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                pane.push(Bytes::from(crlf(&buf[..n])));
                let mut out = lock(&term.output);
                out.0.extend_from_slice(&buf[..n]);
                if out.0.len() > term.limit {
                    let mut cut = out.0.len() - term.limit;
                    // Whole characters only.
                    while cut < out.0.len() && (out.0[cut] & 0xc0) == 0x80 {
                        cut += 1;
                    }
                    out.0.drain(..cut);
                    out.1 = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::channel::acp::beneath::tests::dirs;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_cwd_is_a_directory_beneath_the_work_dir() {
        let d = dirs();
        let (r, out) = (&d.root, &d.outside);
        symlink("sub", r.join("inner")).unwrap();
        symlink(out, r.join("out")).unwrap();
        assert_eq!(inside(r, r).unwrap(), *r);
        assert_eq!(
            inside(r, &r.join("inner/deeper")).unwrap(),
            r.join("inner/deeper")
        );
        let refused = |dir: &Path, why: &str| {
            let e = inside(r, dir).unwrap_err();
            assert!(e.contains(why), "{dir:?}: {e}");
        };
        refused(Path::new("sub"), "not an absolute path");
        refused(Path::new("/"), "/ is outside the session's work dir");
        refused(out, "is outside");
        refused(&r.join(".."), "leads outside");
        refused(&r.join("out"), "leads outside");
        refused(&r.join("sub/a.txt"), "Not a directory");
        refused(&r.join("missing"), "No such file");
    }
}
