//! The mocks in front of the real programs, headless and offline: Gemini
//! CLI 0.61.0 (`gemini -p`) against the Gemini API mock, Codex 0.171.0
//! (`codex exec`) against the Responses API mock. Each run gets its own
//! HOME (and CODEX_HOME), a fresh workspace, no update checks, no
//! telemetry; docs/gemini-cli.md §2 and docs/codex.md §2 give the why of
//! each setting.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::Value;
use tempfile::TempDir;

use crate::mocks::gemini::{write_settings, MockGemini};
use crate::mocks::openai_responses::{MockResponses, QUIET_TRIGGER};
use crate::mocks::{reply_to, AFTER_TOOL, SIDE_REPLY, TOOL_FILE, TOOL_TRIGGER};
use crate::support::installed::{codex, gemini};

/// Longest a headless run may take (Gemini CLI starts in ~2 s, Codex in
/// well under one; both far slower on a loaded machine).
const RUN_LIMIT: Duration = Duration::from_secs(90);

/// Runs `program args` in `cwd` with only `env` (and the PATH, for `node`),
/// and returns its output once it exits.
async fn run(program: &Path, args: &[&str], cwd: &Path, env: &[(String, String)]) -> Output {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let out = tokio::time::timeout(RUN_LIMIT, cmd.output())
        .await
        .unwrap_or_else(|_| {
            panic!(
                "{} {args:?} did not exit in {RUN_LIMIT:?}",
                program.display()
            )
        })
        .unwrap();
    eprintln!(
        "--- {} {args:?}: {}\nstdout:\n{}\nstderr:\n{}",
        program.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The stdout of a run that succeeded and printed `expected`; fails with
/// the mock's `summary` of what it was asked otherwise.
fn printed(out: &Output, expected: &str, summary: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}\n{summary}", out.status);
    assert!(stdout.contains(expected), "{stdout}\n{summary}");
    stdout
}

/// A home and a workspace for one run.
struct Dirs {
    home: TempDir,
    work: TempDir,
}

impl Dirs {
    fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
        }
    }
}

mod gemini {
    use super::*;

    async fn headless(dirs: &Dirs, mock: &MockGemini, args: &[&str]) -> Option<Output> {
        let program = gemini()?;
        write_settings(dirs.home.path());
        Some(
            run(
                &program,
                args,
                dirs.work.path(),
                &mock.env(dirs.home.path()),
            )
            .await,
        )
    }

    /// A prompt is routed (the side request gets the filled schema), then
    /// answered by the main model, streamed.
    #[tokio::test]
    async fn a_headless_prompt_is_answered_by_the_mock() {
        let (dirs, mock) = (Dirs::new(), MockGemini::start().await);
        let Some(out) = headless(&dirs, &mock, &["-p", "hello there"]).await else {
            return;
        };
        let stdout = printed(&out, &reply_to("hello there"), &mock.summary());
        let all = mock.all_requests();
        assert!(
            all.iter().any(|r| r.uri.ends_with(":generateContent")
                && r.body["generationConfig"]["responseJsonSchema"].is_object()),
            "the router's side request: {}",
            mock.summary()
        );
        let main = mock.requests();
        assert_eq!(main.len(), 1, "{}", mock.summary());
        let last = main[0]["contents"].as_array().unwrap().last().unwrap();
        assert_eq!(
            last["parts"].as_array().unwrap().last().unwrap()["text"],
            "hello there"
        );
        assert!(!stdout.contains(SIDE_REPLY));
    }

    /// In YOLO mode the scripted `run_shell_command` runs without asking,
    /// and the mock's answer to its result is shown.
    #[tokio::test]
    async fn the_scripted_shell_call_runs_in_yolo_mode() {
        let (dirs, mock) = (Dirs::new(), MockGemini::start().await);
        let args = ["--approval-mode", "yolo", "-p", TOOL_TRIGGER];
        let Some(out) = headless(&dirs, &mock, &args).await else {
            return;
        };
        printed(&out, AFTER_TOOL, &mock.summary());
        assert!(
            dirs.work.path().join(TOOL_FILE).exists(),
            "{}",
            mock.summary()
        );
        let last = mock.requests().last().cloned().unwrap_or(Value::Null);
        assert!(
            last.to_string().contains("functionResponse"),
            "{}",
            mock.summary()
        );
    }
}

mod codex {
    use super::*;

    async fn exec(dirs: &Dirs, mock: &MockResponses, args: &[&str]) -> Option<Output> {
        let program = codex()?;
        let env = mock.env(dirs.home.path());
        let mut all = vec!["exec", "--skip-git-repo-check"];
        all.extend_from_slice(args);
        Some(run(&program, &all, dirs.work.path(), &env).await)
    }

    /// A prompt is answered from the streamed Responses events.
    #[tokio::test]
    async fn an_exec_prompt_is_answered_by_the_mock() {
        let (dirs, mock) = (Dirs::new(), MockResponses::start().await);
        let Some(out) = exec(&dirs, &mock, &["hello there"]).await else {
            return;
        };
        printed(&out, &reply_to("hello there"), &mock.summary());
        let main = mock.requests();
        assert_eq!(main.len(), 1, "{}", mock.summary());
        assert_eq!(main[0]["stream"], true);
        assert!(
            mock.all_requests().iter().all(|r| r.uri == "/v1/responses"),
            "{}",
            mock.summary()
        );
    }

    /// With approvals and the sandbox bypassed, the scripted
    /// `exec_command` (without an escalation request, which the `never`
    /// approval policy of `exec` refuses) runs and the mock's answer to its
    /// output is shown.
    #[tokio::test]
    async fn the_scripted_exec_command_runs_when_approvals_are_bypassed() {
        let (dirs, mock) = (Dirs::new(), MockResponses::start().await);
        let args = ["--dangerously-bypass-approvals-and-sandbox", QUIET_TRIGGER];
        let Some(out) = exec(&dirs, &mock, &args).await else {
            return;
        };
        let done = format!("{AFTER_TOOL} (no output)");
        printed(&out, &done, &mock.summary());
        assert!(
            dirs.work.path().join(TOOL_FILE).exists(),
            "{}",
            mock.summary()
        );
    }
}
