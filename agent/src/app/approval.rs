//! A tool call's way through the agent: shown, asked about, decided (in the
//! terminal or through the input file) and run, and the reply that follows
//! its result.

use super::*;

impl App {
    pub(super) fn show_call(&mut self, call: &ToolCall) {
        self.ui.push(Line::from_spans(
            vec![
                Span::new("● ", styles::tool()),
                Span::new(call.name(), styles::tool()),
                Span::plain("  "),
                Span::new(call.subject(), styles::tool_text()),
            ],
            2,
        ));
        let diff = call.diff();
        let lines: Vec<&str> = diff.lines().collect();
        for line in lines.iter().take(SHOWN_DIFF_LINES) {
            let style = if line.starts_with("+++") || line.starts_with("---") {
                styles::dim()
            } else if line.starts_with('+') {
                styles::diff_add()
            } else if line.starts_with('-') {
                styles::diff_del()
            } else if line.starts_with("@@") {
                styles::diff_hunk()
            } else {
                styles::dim()
            };
            self.ui.push(Line::from_spans(
                vec![Span::plain("  "), Span::new(line, style)],
                2,
            ));
        }
        if lines.len() > SHOWN_DIFF_LINES {
            self.ui.push(Line::styled(
                &format!("  … {} more diff lines", lines.len() - SHOWN_DIFF_LINES),
                styles::dim(),
            ));
        }
    }

    pub(super) fn confirm_from_file(&mut self, request_id: &str, allowed: bool) {
        match &self.phase {
            Phase::Approval {
                request_id: pending,
                ..
            } if pending == request_id => {
                self.decide(allowed, Decider::InputFile);
            }
            _ => {
                self.sidecar
                    .emit(&self.events.control_error(request_id, UNKNOWN_REQUEST));
                self.notice(&format!(
                    "input file: no pending approval {request_id}; ignored"
                ));
            }
        }
    }

    /// Resolves the pending approval, whoever answered first.
    pub(super) fn decide(&mut self, allowed: bool, by: Decider) {
        let Phase::Approval { request_id, call } = std::mem::replace(&mut self.phase, Phase::Idle)
        else {
            return;
        };
        self.sidecar
            .emit(&self.events.control_allowed(&request_id, allowed));
        let (mark, verb, style) = if allowed {
            ("✓", "allowed", styles::ok())
        } else {
            ("✗", "denied", styles::error())
        };
        // Said in the user's words: the input file is how the decision
        // travelled, not where the user made it (the chat card says "Allowed in
        // the browser." too).
        let place = match by {
            Decider::Terminal => "in the terminal",
            Decider::InputFile => "in the browser",
        };
        self.ui
            .push(Line::styled(&format!("  {mark} {verb} {place}"), style));
        if !allowed {
            let outcome = Outcome::denied(&call);
            self.tool_finished(call, outcome);
            return;
        }
        match &call.action {
            Action::Shell { .. } => {
                let tx = self.tx.clone();
                match tools::spawn_shell(&call, &self.cwd, tools::SHELL_TIMEOUT, move |outcome| {
                    let _ = tx.send(AppEvent::ToolDone(outcome));
                }) {
                    Ok(running) => self.phase = Phase::Tool { call, running },
                    Err(e) => {
                        let outcome =
                            Outcome::error(&call, format!("could not start the command: {e}"));
                        self.tool_finished(call, outcome);
                    }
                }
            }
            Action::Edit { .. } | Action::Write { .. } => {
                let outcome = tools::apply_edit(&call);
                self.tool_finished(call, outcome);
            }
        }
    }

    pub(super) fn tool_done(&mut self, outcome: Outcome) {
        match std::mem::replace(&mut self.phase, Phase::Idle) {
            Phase::Tool { call, .. } if call.id == outcome.tool_use_id => {
                self.tool_finished(call, outcome);
            }
            other => self.phase = other,
        }
    }

    /// Reports a tool's outcome: the tool_result, what the terminal shows,
    /// then the model's follow-up (none after a cancel).
    pub(super) fn tool_finished(&mut self, call: ToolCall, outcome: Outcome) {
        self.sidecar.emit(&self.events.tool_result(
            &outcome.tool_use_id,
            outcome.is_error,
            &outcome.content,
        ));
        if matches!(call.action, Action::Shell { .. }) && outcome.content != "denied by user" {
            let lines: Vec<&str> = outcome.content.lines().collect();
            for line in lines.iter().take(SHOWN_OUTPUT_LINES) {
                self.ui.push(Line::from_spans(
                    vec![
                        Span::new("  │ ", styles::dim()),
                        Span::new(line, styles::dim()),
                    ],
                    4,
                ));
            }
            if lines.len() > SHOWN_OUTPUT_LINES {
                self.ui.push(Line::styled(
                    &format!("  │ … {} more lines", lines.len() - SHOWN_OUTPUT_LINES),
                    styles::dim(),
                ));
            }
        } else if !(outcome.is_error && outcome.content == "denied by user") {
            let style = if outcome.is_error {
                styles::error()
            } else {
                styles::ok()
            };
            self.ui
                .push(Line::styled(&format!("  {}", outcome.content), style));
        }
        if outcome.cancelled {
            self.ui.push(Line::styled("(cancelled)", styles::dim()));
            self.phase = Phase::Idle;
            return;
        }
        let text = script::follow_up(&call, &outcome);
        self.stream(vec![Block::Text(text)], 0);
    }
}
