//! Web Push (RFC 8030 delivery, RFC 8291 encryption, RFC 8292 VAPID): the
//! REST bodies of `/api/push/*` and the JSON the service worker receives.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::ids::SessionId;

/// `GET /api/push/key`: the server's VAPID public key, the
/// `applicationServerKey` for `PushManager.subscribe`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct PushKey {
    /// The uncompressed P-256 point (65 bytes), base64url without padding.
    pub public_key: String,
}

/// The keys of a browser's `PushSubscription` (base64url).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct PushSubscriptionKeys {
    /// The browser's P-256 public key (65 bytes, uncompressed).
    pub p256dh: String,
    /// The authentication secret (16 bytes).
    pub auth: String,
}

/// `POST /api/push/subscriptions`: the browser's `PushSubscription` as its
/// `toJSON()` gives it. The endpoint must be https (plain http only on
/// 127.0.0.1 with `--push-insecure-loopback`, for tests).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct PushSubscribe {
    pub endpoint: String,
    pub keys: PushSubscriptionKeys,
    /// What browsers send (usually `null`); not used.
    #[serde(
        default,
        rename = "expirationTime",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional, type = "number | null")]
    pub expiration_time: Option<f64>,
}

/// `DELETE /api/push/subscriptions`: turns a device off.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct PushUnsubscribe {
    pub endpoint: String,
}

/// `PUT /api/push/subscriptions/mute`: no pushes about `session` to this
/// device (or again, with `muted: false`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct PushMute {
    pub endpoint: String,
    pub session: SessionId,
    pub muted: bool,
}

/// One device that receives pushes (`GET /api/push/subscriptions` lists
/// the caller's; `POST` and `PUT .../mute` answer with it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct PushDevice {
    pub endpoint: String,
    /// Sessions this device hears nothing about.
    pub muted: Vec<SessionId>,
    /// Unix time in milliseconds.
    #[ts(type = "number")]
    pub created_at: u64,
}

/// What a push notification is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum PushKind {
    /// An approval waits (the tool and its input).
    Approval,
    /// A turn finished after running longer than the threshold.
    Turn,
    /// The program exited.
    Exit,
}

/// A notification to show: the same tags as the hidden-tab notifications
/// (`duet-approval-<session>-<request>`, `duet-turn-<session>`,
/// `duet-exit-<session>`), so the two never double up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct PushShow {
    pub tag: String,
    pub title: String,
    pub body: String,
    /// Where a click goes, relative to the app (`./#/session/<id>…`).
    pub url: String,
    pub kind: PushKind,
    /// The session it is about (the worker does not show it while a tab
    /// shows the session).
    pub session: SessionId,
    /// For an approval: its request id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub request_id: Option<String>,
    /// Buttons on the notification (`Notification.actions`): Allow and
    /// Deny for an approval, to a device whose principal may approve.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<PushAction>>", optional)]
    pub actions: Vec<PushAction>,
    /// How the worker answers with those buttons: present exactly when
    /// `actions` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub decide: Option<PushDecide>,
}

/// One button of a notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct PushAction {
    /// `allow` or `deny`: what the worker sends as `allowed`.
    pub action: String,
    pub title: String,
}

/// Where and with what a worker decides an approval from its notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct PushDecide {
    /// Relative to the app: `./api/push/decide`.
    pub url: String,
    /// A secret good for this one approval, this device's principal, one
    /// use and a few minutes (`expires_at`).
    pub capability: String,
    /// Unix ms.
    #[ts(type = "number")]
    pub expires_at: u64,
}

/// `POST /api/push/decide`: the answer a notification's button gives. No
/// cookie or token: the capability is the credential.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct PushDecision {
    pub capability: String,
    pub allowed: bool,
    /// The approval the worker means (its notification's `request_id`):
    /// refused when it is not the capability's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub request_id: Option<String>,
}

/// The decrypted body of a push message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum PushPayload {
    Show(PushShow),
    /// Close the notification with this tag (decided elsewhere).
    Close {
        close: String,
    },
}
