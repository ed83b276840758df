//! The offline "model": scripted replies chosen from the prompt, with no
//! network and no API key. `run <command>` and `edit <file>` lead to tool
//! calls; anything else gets a friendly reply that says what the demo can do.

use std::path::Path;

use crate::tools::{self, Action, Outcome, ToolCall, ADDED_LINE};

/// One block of a reply, streamed in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    Text(String),
    Tool(ToolCall),
}

/// The reply to a prompt.
pub(crate) fn respond(prompt: &str, cwd: &Path) -> Vec<Block> {
    let request = strip_politeness(prompt.trim());
    if let Some(command) = strip_prefix_ci(request, "run ").map(unquote) {
        return vec![
            Block::Text(format!("I'll run `{command}` in {}.", cwd.display())),
            Block::Tool(ToolCall {
                id: new_tool_id(),
                action: Action::Shell {
                    command: command.to_string(),
                    description: format!("Run `{command}` as the user asked"),
                },
            }),
        ];
    }
    if let Some(file) = strip_prefix_ci(request, "edit ").map(unquote) {
        return match tools::propose_edit(new_tool_id(), file, cwd) {
            Ok(call) => {
                let intro = if matches!(call.action, Action::Write { .. }) {
                    format!("{file} doesn't exist yet, so I'll create it with one line:")
                } else {
                    format!("I'll append the line \u{201c}{ADDED_LINE}\u{201d} to {file}:")
                };
                vec![Block::Text(intro), Block::Tool(call)]
            }
            Err(why) => vec![Block::Text(format!("{why} Try another file."))],
        };
    }
    if request.eq_ignore_ascii_case("run") || request.eq_ignore_ascii_case("edit") {
        return vec![Block::Text(format!(
            "Tell me what to {0}, for example `{0} {1}`.",
            request.to_ascii_lowercase(),
            if request.eq_ignore_ascii_case("run") {
                "ls -la"
            } else {
                "notes.txt"
            }
        ))];
    }
    vec![Block::Text(chat(prompt))]
}

/// What the model says once a tool call has its outcome.
pub(crate) fn follow_up(call: &ToolCall, outcome: &Outcome) -> String {
    let denied = outcome.is_error && outcome.content == "denied by user";
    match &call.action {
        Action::Shell { command, .. } if denied => {
            format!("Okay, I won't run `{command}`. What would you like to do instead?")
        }
        Action::Shell { command, .. } if outcome.timed_out => format!(
            "`{command}` didn't finish within {} seconds, so I stopped it.",
            tools::SHELL_TIMEOUT.as_secs()
        ),
        Action::Shell { command, .. } => {
            let lines = outcome
                .content
                .lines()
                .filter(|l| !l.starts_with("[exit code"))
                .count();
            let printed = match lines {
                0 => "printed nothing".to_string(),
                1 => "printed one line".to_string(),
                n => format!("printed {n} lines"),
            };
            match outcome.exit_code {
                Some(0) => format!("Done: `{command}` exited with code 0 and {printed}."),
                Some(code) => format!(
                    "`{command}` exited with code {code} and {printed}. That usually means it failed; the output above says why."
                ),
                None => format!("I couldn't run `{command}`: {}", outcome.content),
            }
        }
        Action::Edit { shown, .. } | Action::Write { shown, .. } if denied => {
            format!("Okay, I left {shown} unchanged.")
        }
        Action::Edit { .. } | Action::Write { .. } if outcome.is_error => {
            format!("That didn't work: {}", outcome.content)
        }
        Action::Edit { shown, .. } => {
            format!("Done: {shown} now ends with \u{201c}{ADDED_LINE}\u{201d}.")
        }
        Action::Write { shown, .. } => format!("Done: I created {shown}."),
    }
}

fn chat(prompt: &str) -> String {
    let said: String = prompt.split_whitespace().collect::<Vec<_>>().join(" ");
    let excerpt = crate::ui::fit(&said, 60);
    let first = said
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_lowercase();
    let opener =
        if ["hi", "hello", "hey", "hallo", "hola", "bonjour", "yo"].contains(&first.as_str()) {
            "Hello! "
        } else if said.ends_with('?') {
            "Good question. "
        } else {
            ""
        };
    format!(
        "{opener}You said \u{201c}{excerpt}\u{201d}. I'm duet's demo agent, a scripted stand-in for a real model, \
so I can't really answer that, but I can show you how a coding agent works in duet.\n\n\
Try:\n\
- run <command>: I ask for approval, then run it with sh in this directory\n\
- edit <file>: I propose a one-line change as a diff and apply it once you allow it\n\
- /help: the slash commands\n\n\
Approvals work here in the terminal or from duet's chat view; whichever answers first wins."
    )
}

/// Splits text into word-sized tokens, each with its trailing whitespace, the
/// way a model streams them.
pub(crate) fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut in_space = false;
    for c in text.chars() {
        if in_space && !c.is_whitespace() {
            out.push(std::mem::take(&mut current));
        }
        in_space = c.is_whitespace();
        current.push(c);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Splits a tool's input JSON into the pieces of `input_json_delta` events.
pub(crate) fn json_chunks(json: &str) -> Vec<String> {
    const CHUNK_CHARS: usize = 24;
    let chars: Vec<char> = json.chars().collect();
    chars
        .chunks(CHUNK_CHARS)
        .map(|c| c.iter().collect())
        .collect()
}

fn new_tool_id() -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("call_{}", &id[..24])
}

fn strip_prefix_ci<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| text[prefix.len()..].trim())
        .filter(|rest| !rest.is_empty())
}

fn strip_politeness(text: &str) -> &str {
    let mut text = text;
    for prefix in ["please ", "can you ", "could you "] {
        if let Some(rest) = strip_prefix_ci(text, prefix) {
            text = rest;
        }
    }
    text.trim_end_matches(['.', '!'])
}

/// `ls` from "`ls`", "'ls'" or "\"ls\"".
fn unquote(text: &str) -> &str {
    for quote in ['`', '\'', '"'] {
        if let Some(inner) = text
            .strip_prefix(quote)
            .and_then(|t| t.strip_suffix(quote))
            .filter(|inner| !inner.is_empty())
        {
            return inner;
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cwd() -> &'static Path {
        Path::new("/tmp")
    }

    #[test]
    fn run_asks_for_the_shell_tool() {
        for prompt in ["run ls -la", "Please run `ls -la`", "RUN ls -la"] {
            let blocks = respond(prompt, cwd());
            let Some(Block::Tool(call)) = blocks.last() else {
                panic!("no tool for {prompt:?}: {blocks:?}")
            };
            assert_eq!(call.name(), "run_shell_command");
            assert_eq!(call.input()["command"], "ls -la");
            assert!(call.id.starts_with("call_"));
        }
    }

    #[test]
    fn anything_else_is_a_friendly_reply_that_reflects_the_prompt() {
        let blocks = respond("hello there", cwd());
        let [Block::Text(text)] = &blocks[..] else {
            panic!("{blocks:?}")
        };
        assert!(text.starts_with("Hello! You said \u{201c}hello there\u{201d}"));
        assert!(text.contains("run <command>") && text.contains("edit <file>"));
        assert!(matches!(&respond("run", cwd())[..], [Block::Text(t)] if t.contains("run ls")));
    }

    #[test]
    fn tokens_keep_all_text() {
        let text = "Hello from  mock\nline two ";
        let t = tokens(text);
        assert_eq!(t, ["Hello ", "from  ", "mock\n", "line ", "two "]);
        assert_eq!(t.concat(), text);
        assert_eq!(
            json_chunks("{\"command\":\"é\"}").concat(),
            "{\"command\":\"é\"}"
        );
    }

    #[test]
    fn follow_up_reports_denial_and_exit_code() {
        let call = match respond("run false", cwd()).pop() {
            Some(Block::Tool(c)) => c,
            other => panic!("{other:?}"),
        };
        assert!(follow_up(&call, &Outcome::denied(&call)).starts_with("Okay, I won't run"));
        let failed = Outcome {
            exit_code: Some(1),
            is_error: true,
            content: "[exit code 1]".into(),
            ..Outcome::denied(&call)
        };
        assert!(follow_up(&call, &failed).contains("exited with code 1 and printed nothing"));
    }
}
