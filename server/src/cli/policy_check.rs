//! `duet policy check`: what the rules of a config file say about one tool
//! call, so a rule can be tried before it is trusted.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde_json::Value;

use crate::config::Profiles;
use crate::policy::{Decision, Facts, OnDisk};

/// `duet policy ...`.
#[derive(Debug, Clone, Subcommand)]
pub enum PolicyCommand {
    /// Print the decision the config's `[[policy]]` rules make for one
    /// tool call, and the rule that makes it.
    Check(CheckArgs),
}

/// `duet policy check` flags.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// The config file (as `duet serve --config`).
    #[arg(long)]
    pub config: PathBuf,
    /// The tool's name, as the agent calls it (e.g. run_shell_command, Bash).
    #[arg(long)]
    pub tool: String,
    /// The tool's input, JSON (e.g. '{"command": "git status"}').
    #[arg(long, default_value = "{}")]
    pub input: String,
    /// The session's profile (default: the config's default profile).
    #[arg(long)]
    pub profile: Option<String>,
    /// The session's work dir, for `paths` rules (default: the current
    /// directory). Symlinks under it are followed, as for a session.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
}

/// Runs `cmd`; the text to print.
pub fn run_check(cmd: &PolicyCommand, duet_exe: PathBuf) -> Result<String> {
    let PolicyCommand::Check(args) = cmd;
    let profiles = Profiles::load(&args.config, duet_exe)?;
    let profile = profiles.get(args.profile.as_deref()).with_context(|| {
        format!(
            "--profile {:?} is not in the config (profiles: {})",
            args.profile.as_deref().unwrap_or_default(),
            profiles.names().collect::<Vec<_>>().join(", ")
        )
    })?;
    let input: Value = serde_json::from_str(&args.input).context("--input is not JSON")?;
    if !input.is_object() {
        anyhow::bail!("--input must be a JSON object (the tool's arguments)");
    }
    let work_dir = match &args.work_dir {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("the current directory")?,
    };
    let work_dir = std::fs::canonicalize(&work_dir).unwrap_or(work_dir);
    let facts = Facts::of(&args.tool, &input, &work_dir, &OnDisk);
    let verdict = profile.policies().decide(&facts);
    let mut out = format!("{}\n", verdict.decision.as_str());
    match &verdict.rule {
        Some(rule) => out.push_str(&format!("policy: {rule}\n")),
        None => out.push_str("policy: (none matched: a person is asked)\n"),
    }
    out.push_str(&format!("profile: {}\n", profile.name));
    if verdict.decision == Decision::Deny {
        out.push_str(&format!("message: {}\n", verdict.message_for_agent()));
    }
    Ok(out)
}
