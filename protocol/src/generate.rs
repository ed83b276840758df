//! Generated artifacts for clients: TypeScript declarations and JSON Schemas
//! of duet's client protocol. The checked-in copies are compared against
//! these by `tests/generated.rs` (run with `DUET_BLESS=1` to rewrite them).

use ts_rs::{Config, TS};

use crate::board::{Board, BoardEntry, RenameSession};
use crate::error::ErrorCode;
use crate::ids::{ClientId, SessionId};
use crate::push::{
    PushAction, PushDecide, PushDecision, PushDevice, PushKey, PushKind, PushMute, PushPayload,
    PushShow, PushSubscribe, PushSubscriptionKeys, PushUnsubscribe,
};
use crate::rest::{
    AgentMode, AgentModes, ApiError, ApiErrorBody, Approval, ApprovalDecision, ApprovalOption,
    ApprovalOptionKind, ApprovalState, ChannelInfo, ConnectedClient, CreateSession, CreateShare,
    Decider, ExitInfo, HistoryLine, Me, ProfileInfo, ResumeSession, Role, SessionInfo,
    SessionStatus, SetModeRequest, SetModelRequest, Share, SubmitRequest, SubmitResponse,
};
use crate::sidecar::{
    CanUseTool, Content, ContentBlock, ControlRequest, ControlRequestBody, ControlResponse,
    ControlResponseBody, Delta, Envelope, KnownBlock, KnownDelta, KnownEvent, KnownStreamEvent,
    Message, MessageEvent, ResultEvent, SessionStartData, SidecarEvent, StreamEvent,
    StreamEventEnvelope, SystemEvent,
};
use crate::usage::{
    Budget, BudgetStatus, ContextUse, SessionUsage, TokenCounts, TurnUsage, UsageTotals,
};
use crate::ws::{ClientMessage, HeldPrompt, Hello, ResyncReason, ServerMessage};

/// Path of the TypeScript file, relative to the repository root.
pub const TS_PATH: &str = "web/src/generated/protocol.ts";
/// Path of the JSON Schema file, relative to the repository root.
pub const SCHEMA_PATH: &str = "protocol/schema/duet-protocol.schema.json";
/// Path of the web's runtime guard tables, relative to the repository root.
pub const GUARDS_PATH: &str = "web/src/generated/schema.ts";

/// All TypeScript declarations in one module.
pub fn typescript() -> String {
    let cfg = Config::new().with_large_int("number");
    let decls = [
        <serde_json::Value as TS>::decl(&cfg),
        SessionId::decl(&cfg),
        ClientId::decl(&cfg),
        ErrorCode::decl(&cfg),
        SessionStatus::decl(&cfg),
        ExitInfo::decl(&cfg),
        ApprovalState::decl(&cfg),
        Decider::decl(&cfg),
        ApprovalOptionKind::decl(&cfg),
        ApprovalOption::decl(&cfg),
        Approval::decl(&cfg),
        ChannelInfo::decl(&cfg),
        Role::decl(&cfg),
        ConnectedClient::decl(&cfg),
        CreateShare::decl(&cfg),
        Share::decl(&cfg),
        Me::decl(&cfg),
        HeldPrompt::decl(&cfg),
        Hello::decl(&cfg),
        ResyncReason::decl(&cfg),
        ServerMessage::decl(&cfg),
        ClientMessage::decl(&cfg),
        CreateSession::decl(&cfg),
        ResumeSession::decl(&cfg),
        TokenCounts::decl(&cfg),
        ContextUse::decl(&cfg),
        TurnUsage::decl(&cfg),
        UsageTotals::decl(&cfg),
        Budget::decl(&cfg),
        BudgetStatus::decl(&cfg),
        SessionUsage::decl(&cfg),
        SessionInfo::decl(&cfg),
        HistoryLine::decl(&cfg),
        RenameSession::decl(&cfg),
        BoardEntry::decl(&cfg),
        Board::decl(&cfg),
        PushKey::decl(&cfg),
        PushSubscriptionKeys::decl(&cfg),
        PushSubscribe::decl(&cfg),
        PushUnsubscribe::decl(&cfg),
        PushMute::decl(&cfg),
        PushDevice::decl(&cfg),
        PushKind::decl(&cfg),
        PushAction::decl(&cfg),
        PushDecide::decl(&cfg),
        PushShow::decl(&cfg),
        PushPayload::decl(&cfg),
        PushDecision::decl(&cfg),
        ProfileInfo::decl(&cfg),
        SubmitRequest::decl(&cfg),
        AgentModes::decl(&cfg),
        AgentMode::decl(&cfg),
        SetModeRequest::decl(&cfg),
        SetModelRequest::decl(&cfg),
        SubmitResponse::decl(&cfg),
        ApprovalDecision::decl(&cfg),
        ApiError::decl(&cfg),
        ApiErrorBody::decl(&cfg),
        // The sidecar events the chat renders (an `event` message's `event`).
        SidecarEvent::decl(&cfg),
        KnownEvent::decl(&cfg),
        Envelope::decl(&cfg),
        SystemEvent::decl(&cfg),
        SessionStartData::decl(&cfg),
        MessageEvent::decl(&cfg),
        Message::decl(&cfg),
        Content::decl(&cfg),
        ContentBlock::decl(&cfg),
        KnownBlock::decl(&cfg),
        StreamEventEnvelope::decl(&cfg),
        StreamEvent::decl(&cfg),
        KnownStreamEvent::decl(&cfg),
        Delta::decl(&cfg),
        KnownDelta::decl(&cfg),
        ResultEvent::decl(&cfg),
        ControlRequest::decl(&cfg),
        ControlRequestBody::decl(&cfg),
        CanUseTool::decl(&cfg),
        ControlResponse::decl(&cfg),
        ControlResponseBody::decl(&cfg),
    ];
    let mut out = String::from(
        "// Generated from the duet-protocol crate by `DUET_BLESS=1 cargo test -p duet-protocol`.\n\
         // Do not edit: a test fails when this file drifts from the Rust types.\n\n",
    );
    out.push_str(&format!(
        "export const PROTOCOL_VERSION = {};\n\n",
        crate::PROTOCOL_VERSION
    ));
    for decl in decls {
        out.push_str("export ");
        out.push_str(&decl);
        out.push_str("\n\n");
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// JSON Schema of every message a client sends or receives, the REST bodies,
/// and the sidecar events inside `event` messages.
pub fn json_schema() -> String {
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    /// duet's client protocol: WebSocket messages in both directions and REST bodies.
    struct DuetProtocol {
        server_message: ServerMessage,
        client_message: ClientMessage,
        create_session: CreateSession,
        resume_session: ResumeSession,
        session_info: SessionInfo,
        profile_info: ProfileInfo,
        submit_request: SubmitRequest,
        set_mode_request: SetModeRequest,
        set_model_request: SetModelRequest,
        submit_response: SubmitResponse,
        approval_decision: ApprovalDecision,
        api_error: ApiError,
        create_share: CreateShare,
        share: Share,
        me: Me,
        history_line: HistoryLine,
        sidecar_event: SidecarEvent,
        rename_session: RenameSession,
        board: Board,
        push_key: PushKey,
        push_subscribe: PushSubscribe,
        push_unsubscribe: PushUnsubscribe,
        push_mute: PushMute,
        push_device: PushDevice,
        push_payload: PushPayload,
        push_decision: PushDecision,
        session_usage: SessionUsage,
        budget: Budget,
    }
    let schema = schemars::schema_for!(DuetProtocol);
    let mut out = serde_json::to_string_pretty(&schema).unwrap_or_default();
    out.push('\n');
    out
}

/// The schema's definitions without their prose, as a TypeScript module:
/// what the web's runtime guards (`web/src/net/validate.ts`) check every
/// message from the server against, so that no guard repeats the Rust
/// types by hand.
pub fn guard_tables() -> String {
    fn strip(v: serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match v {
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .filter(|(k, _)| {
                        !matches!(
                            k.as_str(),
                            "description" | "title" | "format" | "$schema" | "examples"
                        )
                    })
                    .map(|(k, v)| {
                        let v = match (k.as_str(), v) {
                            // Names of properties and definitions are data, not keywords.
                            ("properties" | "$defs", Value::Object(m)) => {
                                Value::Object(m.into_iter().map(|(k, v)| (k, strip(v))).collect())
                            }
                            (_, v) => strip(v),
                        };
                        (k, v)
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.into_iter().map(strip).collect()),
            other => other,
        }
    }
    let schema: serde_json::Value = serde_json::from_str(&json_schema()).unwrap_or_default();
    let defs = strip(schema["$defs"].clone());
    let mut out = String::from(
        "// Generated from the duet-protocol crate by `DUET_BLESS=1 cargo test -p duet-protocol`.\n\
         // Do not edit: a test fails when this file drifts from the Rust types.\n\
         // The JSON Schema of the protocol without its prose, for the runtime guards\n\
         // (src/net/validate.ts).\n\n",
    );
    out.push_str("export const DEFS: Readonly<Record<string, unknown>> = ");
    out.push_str(&serde_json::to_string(&defs).unwrap_or_default());
    out.push_str(";\n");
    out
}
