//! duet's WebSocket protocol: JSON text frames with a `type` field.
//!
//! Terminal bytes never travel here: they are binary frames in both directions
//! (server→client output, client→server keystrokes). A binary frame that
//! follows a [`ServerMessage::Resync`] is a screen snapshot, not live output.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

pub use crate::error::ErrorCode;
use crate::ids::{ClientId, SessionId};
use crate::rest::{
    AgentModes, Approval, ChannelInfo, ConnectedClient, ExitInfo, Role, SessionStatus,
};

/// Capabilities this server offers; listed in [`Hello::capabilities`].
pub const CAPABILITIES: &[&str] = &[
    "terminal",
    "events",
    "resume",
    "approvals",
    "submit",
    "resize",
    "cancel",
    "snapshot",
    "flow_control",
    "unsent",
    "held",
    "modes",
];

/// Messages the server sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// First message on every connection.
    Hello(Hello),
    /// One sidecar event, exactly as the program wrote it.
    Event {
        /// The event's 1-based line number in the events file.
        #[ts(type = "number")]
        seq: u64,
        /// When duet received the event: milliseconds since the session's
        /// clock started, which is time 0 of its terminal recording (the
        /// asciicast's offsets), so replay lines both up. Absent when not
        /// known (a session from before duet kept times).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "number")]
        at: Option<u64>,
        /// The event object, verbatim: one of the modelled sidecar events, or
        /// any other object (an unknown type passes through).
        #[ts(type = "SidecarEvent")]
        #[schemars(with = "crate::sidecar::SidecarEvent")]
        event: Value,
    },
    /// Something odd in the side channel (a line skipped as not JSON or too
    /// long, a prompt the agent did not take, ...). The stream goes on.
    /// Recent warnings are sent again to a client that attaches later.
    Warning {
        /// Numbers the session's warnings from 1, so none is shown twice.
        #[serde(default)]
        #[ts(type = "number")]
        id: u64,
        /// What happened, in snake_case: e.g. `invalid_line`, `line_too_long`,
        /// `budget_exhausted`, `submit_ignored`. A string, not an enum, so
        /// a newer server's codes reach an older client (which shows the
        /// `message`).
        code: String,
        /// What happened, in words for a person.
        message: String,
        /// The line's number in the events file, when it had one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "number")]
        seq: Option<u64>,
    },
    /// A tool approval was requested or changed state.
    Approval(Approval),
    /// The agent's modes changed: the one it is in now, or the ones it
    /// offers. Sent whole, for every kind of agent (ACP's
    /// `current_mode_update`, a mode read from a terminal agent's screen or
    /// hooks); [`Hello::modes`] has them for a client that comes later.
    Modes(AgentModes),
    /// The next binary frame is a full screen snapshot; reset the terminal
    /// and draw it. Sent on attach and whenever this client fell too far
    /// behind the live output.
    Resync {
        /// The snapshot's width, in columns: the terminal's size now.
        cols: u16,
        /// The snapshot's height, in rows.
        rows: u16,
        /// Why the screen is sent whole.
        reason: ResyncReason,
    },
    /// The terminal size changed (a driving client resized it).
    Resize {
        /// The new width, in columns (character cells).
        cols: u16,
        /// The new height, in rows (character cells).
        rows: u16,
    },
    /// The program exited; no more output or events will follow.
    Exit(ExitInfo),
    /// Who is attached to the session now (sent when that changes).
    Clients {
        /// Every client attached now, this one included.
        clients: Vec<ConnectedClient>,
    },
    /// Something the client sent could not be done. The connection stays up.
    Error {
        /// Which error, for a program to branch on (e.g. `forbidden`).
        code: ErrorCode,
        /// What went wrong, in words for a person.
        message: String,
        /// The `id` of the client message this answers, if it had one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        id: Option<String>,
    },
    /// A client message with an `id` was carried out.
    Ack {
        /// The `id` of the client message that was carried out.
        id: String,
        /// For `submit`: true when the text is held until the program is
        /// ready to read input, false when it has been written already.
        #[serde(default)]
        queued: bool,
    },
    /// The prompts duet holds that the agent has not taken changed: both
    /// lists whole, each prompt with its text, oldest first. Sent when a
    /// prompt is held (the agent is busy), handed to the agent, discarded,
    /// or left unsent (the program ended with it still held). One message
    /// for both lists, so a prompt that moves from `held` to `prompts` at
    /// the program's end is never shown in neither or in both.
    Unsent {
        /// Unsent prompts: the program never took them and none will go by
        /// itself (see [`HeldPrompt`]).
        prompts: Vec<HeldPrompt>,
        /// Prompts waiting for the agent to be ready, in the order they go
        /// (by themselves, when its turn ends). Absent from a server
        /// without the `held` capability.
        #[serde(default)]
        held: Vec<HeldPrompt>,
    },
    /// Answer to `ping`.
    Pong {
        /// The `ping`'s `id`, echoed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        id: Option<String>,
    },
}

/// Why a client gets the whole screen ([`ServerMessage::Resync`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum ResyncReason {
    /// The client just attached.
    Attach,
    /// The client fell out of the output window (it read too slowly).
    Lagged,
    /// The terminal was resized: the screen was redrawn at the new size.
    Resize,
}

/// The greeting: who this session is and where the client stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct Hello {
    /// The session this connection is attached to.
    pub session_id: SessionId,
    /// This connection's id (numbered from 1 per server run), as
    /// `clients` and `connected` name it.
    pub client_id: ClientId,
    /// What this client may do.
    pub role: Role,
    /// Who this client is: `owner`, a `[[token]]` name, or `share:<id>`.
    pub principal: String,
    /// Who is attached, this client included.
    pub clients: Vec<ConnectedClient>,
    /// duet's client protocol version ([`crate::PROTOCOL_VERSION`]).
    pub protocol_version: u32,
    /// duet's version.
    pub server_version: String,
    /// What this server can do ([`CAPABILITIES`], e.g. `held`, `modes`): a
    /// client checks for a feature before it relies on it.
    pub capabilities: Vec<String>,
    /// The profile the session runs, by name.
    pub profile: String,
    /// The session's side channel: what the chat view can do.
    pub channel: ChannelInfo,
    /// Whether the program still runs.
    pub status: SessionStatus,
    /// The terminal's width now, in columns (character cells).
    pub cols: u16,
    /// The terminal's height now, in rows (character cells).
    pub rows: u16,
    /// The highest event seq the server has; events after the client's
    /// `from` up to this one follow the hello.
    #[ts(type = "number")]
    pub last_seq: u64,
    /// Approvals still pending, and those decided recently.
    pub approvals: Vec<Approval>,
    /// The agent's approval/permission modes, once duet knows them;
    /// updated by [`ServerMessage::Modes`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub modes: Option<AgentModes>,
    /// Set when the program has already exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub exit: Option<ExitInfo>,
    /// The program's handshake (`session_start.data`) once seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<Value>,
    /// Prompts the program never took (see [`HeldPrompt`]); updated by
    /// [`ServerMessage::Unsent`].
    #[serde(default)]
    pub unsent: Vec<HeldPrompt>,
    /// Prompts waiting for the agent to be ready (see [`HeldPrompt`]);
    /// updated by [`ServerMessage::Unsent`].
    #[serde(default)]
    pub held: Vec<HeldPrompt>,
}

/// A prompt duet accepted and has not handed to the program yet. *Held*
/// (`hello.held`): the program is busy, and the prompt goes by itself when
/// it can take one. *Unsent* (`hello.unsent`): it was held and the program
/// ended first (or duet was killed, and the prompt was read back from the
/// session's directory). A session that resumes an ended one offers the
/// ended one's unsent prompts again, to send or discard: none goes to the
/// agent without a client's say. Every client of the session is told both
/// lists, so each tab shows what waits, whichever tab sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub struct HeldPrompt {
    /// Numbers the prompt in its session (what `discard` names).
    #[ts(type = "number")]
    pub n: u64,
    /// The prompt, as the client submitted it.
    pub text: String,
}

/// Messages a client sends. `id` is optional and echoed in `ack` / `error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMessage {
    /// Send a prompt through the program's input file.
    Submit {
        /// The prompt (a slash command such as `/compact` too): not blank, at
        /// most 256 KiB of UTF-8 ([`crate::command::MAX_SUBMIT_BYTES`]).
        text: String,
        /// Echoed in the `ack` (or `error`) that answers this message; without
        /// it, success is silent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        id: Option<String>,
    },
    /// Answer a pending tool approval: with one of the approval's
    /// `options` (by id), or with `allowed` alone (the first allowing or
    /// rejecting option).
    Approve {
        /// The approval's `request_id`.
        request_id: String,
        /// `true` chooses the approval's first allowing option, `false` its
        /// first rejecting one. Send this or `option`, not both.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        allowed: Option<bool>,
        /// The `id` of one of the approval's `options`. Send this or
        /// `allowed`, not both.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        option: Option<String>,
        /// Echoed in the `ack` (or `error`) that answers this message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        id: Option<String>,
    },
    /// Let go of an unsent prompt (see [`HeldPrompt`]): it is no longer
    /// offered, and no longer kept on disk. Acked even if it was gone
    /// already (another client discarded it).
    Discard {
        /// The prompt's `n`.
        #[ts(type = "number")]
        prompt: u64,
        /// Echoed in the `ack` (or `error`) that answers this message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        id: Option<String>,
    },
    /// Resize the terminal.
    Resize {
        /// The new width, in columns (character cells): clamped to 2..=1000;
        /// 0 is refused.
        cols: u16,
        /// The new height, in rows: clamped to 1..=500; 0 is refused.
        rows: u16,
        /// Echoed in the `ack` (or `error`) that answers this message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        id: Option<String>,
    },
    /// Interrupt the program (an Escape key into the terminal).
    Cancel {
        /// Echoed in the `ack` (or `error`) that answers this message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        id: Option<String>,
    },
    /// Stop sending terminal output to this client (its terminal is busy
    /// rendering). Events still flow. Output missed while paused is replaced
    /// by a `resync` snapshot if it no longer fits the server's buffer.
    Pause {
        /// Echoed in the `ack` (or `error`) that answers this message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        id: Option<String>,
    },
    /// Resume terminal output after `pause`.
    Resume {
        /// Echoed in the `ack` (or `error`) that answers this message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        id: Option<String>,
    },
    /// Liveness check; answered with `pong`.
    Ping {
        /// Echoed in the `pong` that answers it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        id: Option<String>,
    },
}

impl ServerMessage {
    /// The message as a JSON text frame.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Builds an `error`.
    pub fn error(code: ErrorCode, message: impl Into<String>, id: Option<String>) -> Self {
        ServerMessage::Error {
            code,
            message: message.into(),
            id,
        }
    }
}

/// Builds the `event` frame for a raw events-file line without re-encoding
/// the event: the hot path of the relay. `line` must be one JSON value (the
/// server validated it); the result equals serializing [`ServerMessage::Event`].
pub fn event_frame(seq: u64, at: Option<u64>, line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 56);
    out.push_str("{\"type\":\"event\",\"seq\":");
    out.push_str(&seq.to_string());
    if let Some(at) = at {
        out.push_str(",\"at\":");
        out.push_str(&at.to_string());
    }
    out.push_str(",\"event\":");
    out.push_str(line.trim());
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_frame_matches_the_typed_message() {
        let line = r#"{"type":"user","message":{"role":"user","content":"héllo \"x\""}}"#;
        for at in [None, Some(1234)] {
            let fast: Value = serde_json::from_str(&event_frame(7, at, line)).unwrap();
            let typed = serde_json::to_value(ServerMessage::Event {
                seq: 7,
                at,
                event: serde_json::from_str(line).unwrap(),
            })
            .unwrap();
            assert_eq!(fast, typed);
        }
    }

    #[test]
    fn client_messages_parse() {
        let m: ClientMessage =
            serde_json::from_str(r#"{"type":"approve","request_id":"r","allowed":false}"#).unwrap();
        assert_eq!(
            m,
            ClientMessage::Approve {
                request_id: "r".into(),
                allowed: Some(false),
                option: None,
                id: None
            }
        );
        assert!(serde_json::from_str::<ClientMessage>(r#"{"type":"cancel"}"#).is_ok());
        // A command line can never ride along on a client message.
        assert!(serde_json::from_str::<ClientMessage>(
            r#"{"type":"resize","cols":80,"rows":24,"command":"sh"}"#
        )
        .is_err());
    }

    #[test]
    fn error_codes_serialize_as_their_names() {
        for code in [
            ErrorCode::BadMessage,
            ErrorCode::AlreadyResolved,
            ErrorCode::NoSidecar,
            ErrorCode::ProfileMisconfigured,
        ] {
            assert_eq!(
                serde_json::to_value(code).unwrap(),
                Value::String(code.as_str().into())
            );
        }
    }
}
