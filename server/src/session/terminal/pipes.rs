//! Programs that run headless, on pipes rather than a PTY: agents driven
//! through a structured protocol on their stdin and stdout (stream-json,
//! ACP). Their stderr goes to the session's terminal output, so the
//! terminal pane shows what they complain about instead of nothing.
//!
//! The program leads a process group of its own (`process_group(0)`, done
//! by posix_spawn, no `fork()` of duet), so `process.rs` ends it and
//! whatever it started the same way as a PTY program.

use anyhow::{Context, Result};
use bytes::Bytes;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};

use super::output::Output;
use super::program::{program_path, set_env};
use super::pty::SpawnOptions;

/// A started headless program.
pub(crate) struct Piped {
    pub child: Child,
    /// Also its process-group id.
    pub pid: u32,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

/// Starts `opts.program` with its stdin, stdout and stderr piped to duet.
/// Must run inside a tokio runtime.
pub(crate) fn spawn(opts: &SpawnOptions) -> Result<Piped> {
    let program = program_path(opts)?;
    let mut cmd = std::process::Command::new(&program);
    cmd.args(&opts.args).current_dir(&opts.cwd);
    set_env(&mut cmd, opts);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.process_group(0);
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {:?}", opts.program))?;
    let pid = child.id().context("the program has no pid")?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        anyhow::bail!("the program's pipes were not set up");
    };
    Ok(Piped {
        child,
        pid,
        stdin,
        stdout,
        stderr,
    })
}

/// Moves the program's stderr into the terminal output until EOF, as a
/// terminal would show it (`\n` → `\r\n`), then closes the output.
pub(crate) async fn pump_stderr(mut stderr: ChildStderr, output: std::sync::Arc<Output>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        output.make_room().await;
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => output.push(Bytes::from(crlf(&buf[..n]))),
        }
    }
    output.close();
}

/// `\n` as `\r\n`, so lines start at the left margin on a terminal.
pub(crate) fn crlf(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 16 + 2);
    let mut prev = 0u8;
    for &b in bytes {
        if b == b'\n' && prev != b'\r' {
            out.push(b'\r');
        }
        out.push(b);
        prev = b;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newlines_become_terminal_newlines() {
        assert_eq!(crlf(b"a\nb\r\nc"), b"a\r\nb\r\nc");
    }

    #[tokio::test]
    async fn the_program_gets_pipes_and_a_group_of_its_own() {
        let opts = SpawnOptions {
            program: "sh".into(),
            args: vec![
                "-c".into(),
                "echo \"$(ps -o pgid= -p $$ | tr -d ' ') $$\"; read x; echo \"got $x\" >&2".into(),
            ],
            env: vec![],
            cwd: std::env::temp_dir(),
            cols: 80,
            rows: 24,
        };
        let mut p = spawn(&opts).unwrap();
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        let mut line = String::new();
        tokio::io::BufReader::new(&mut p.stdout)
            .read_line(&mut line)
            .await
            .unwrap();
        let parts: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(parts[0], parts[1], "leads its own group: {line}");
        assert_eq!(parts[1], p.pid.to_string());
        p.stdin.write_all(b"hi\n").await.unwrap();
        let mut err = String::new();
        p.stderr.read_to_string(&mut err).await.unwrap();
        assert_eq!(err, "got hi\n");
        assert!(p.child.wait().await.unwrap().success());
    }
}
