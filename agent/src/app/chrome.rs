//! What the agent draws around the conversation: slash commands, the help,
//! notices, the start-up banner and each frame of the screen.

use super::*;

impl App {
    pub(super) fn slash(&mut self, command: &str) {
        let name = command.split_whitespace().next().unwrap_or(command);
        match name {
            "/help" => self.help(),
            "/clear" => self.ui.clear_screen(),
            "/quit" | "/exit" => self.exit = Some(0),
            other => self.notice(&format!("unknown command {other}; /help lists them")),
        }
    }

    pub(super) fn help(&mut self) {
        let rows = [
            ("/help", "this list"),
            ("/clear", "clear the screen"),
            ("/quit", "end the session (also ctrl+c, ctrl+d)"),
            ("run <command>", "run a shell command, after you allow it"),
            ("edit <file>", "append a line to a file, after you allow it"),
            (
                "esc",
                "cancel the reply or command in progress; deny an approval",
            ),
            ("y / n", "answer an approval (also 1 / 2, enter / esc)"),
        ];
        self.ui.push(Line::blank());
        for (key, what) in rows {
            self.ui.push(Line::from_spans(
                vec![
                    Span::new(&format!("  {key:<15}"), styles::user_marker()),
                    Span::new(what, styles::dim()),
                ],
                17,
            ));
        }
    }

    pub(super) fn notice(&mut self, text: &str) {
        self.ui
            .push(Line::styled(&format!("⚠ {text}"), styles::dim()));
    }

    pub(super) fn banner(&mut self, opts: &Options) {
        self.ui.push(Line::from_spans(
            vec![
                Span::new("✦ ", styles::agent_marker()),
                Span::new(
                    &format!("duet demo agent {}", env!("CARGO_PKG_VERSION")),
                    styles::agent_marker(),
                ),
                Span::new("  offline, scripted, no API key", styles::dim()),
            ],
            2,
        ));
        let mut info = vec![format!("cwd {}", self.cwd.display())];
        if self.dual {
            info.push("dual output on".into());
        }
        if let Some(path) = &opts.input_file {
            info.push(format!("input file {}", path.display()));
        }
        self.ui.push(Line::styled(
            &format!("  {}", info.join(" · ")),
            styles::dim(),
        ));
        self.ui.push(Line::styled(
            "  Try \u{201c}hello\u{201d}, \u{201c}run ls -la\u{201d} or \u{201c}edit notes.txt\u{201d}; /help lists commands.",
            styles::dim(),
        ));
    }

    pub(super) fn render(&mut self) -> io::Result<()> {
        let approval = match &self.phase {
            Phase::Approval { call, .. } => Some(format!(
                "Allow {}: `{}`?",
                call.name(),
                crate::ui::fit(call.subject(), 120)
            )),
            _ => None,
        };
        let mut status = match self.phase {
            Phase::Idle => "ready".to_string(),
            Phase::Streaming(_) => "responding · esc to cancel".to_string(),
            Phase::Approval { .. } if self.remote_input => {
                "waiting for approval, here or in duet's chat view".to_string()
            }
            Phase::Approval { .. } => "waiting for approval".to_string(),
            Phase::Tool { .. } => "running · esc to cancel".to_string(),
        };
        if !self.queue.is_empty() {
            status.push_str(&format!(" · {} queued", self.queue.len()));
        }
        if self.dual && !self.sidecar.is_alive() {
            status.push_str(" · dual output off");
        }
        status.push_str(" · /help · ctrl+c quits");
        let placeholder = match self.phase {
            Phase::Idle => "Type a message, or try: run ls -la",
            _ => "",
        };
        self.ui.flush(&Live {
            approval: approval.as_deref(),
            status: Line::styled(&status, styles::dim()),
            input: self.editor.text(),
            cursor: self.editor.cursor(),
            placeholder,
        })
    }
}
