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
    /// The push service's URL for this browser (https, at most 2048
    /// characters); it also names the device in `DELETE` and `mute`.
    pub endpoint: String,
    /// The keys duet encrypts each message with (RFC 8291).
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
    /// The device to turn off: its push endpoint, as it subscribed.
    pub endpoint: String,
}

/// `PUT /api/push/subscriptions/mute`: no pushes about `session` to this
/// device (or again, with `muted: false`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct PushMute {
    /// The device: its push endpoint, as it subscribed.
    pub endpoint: String,
    /// The session to mute or unmute on that device.
    pub session: SessionId,
    /// `true`: no more pushes about the session; `false`: they come again.
    pub muted: bool,
}

/// One device that receives pushes (`GET /api/push/subscriptions` lists
/// the caller's; `POST` and `PUT .../mute` answer with it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct PushDevice {
    /// The push service's URL for the device, as it subscribed.
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
    /// The notification's tag: a later one with the same tag replaces it,
    /// and `close` names it.
    pub tag: String,
    /// The notification's title, e.g. "nightly: allow edit?" or "nightly:
    /// turn finished".
    pub title: String,
    /// Its text, e.g. the tool's input in short ("a b.rs (−1 +1 line)"), or
    /// "The program exited with status 2.".
    pub body: String,
    /// Where a click goes, relative to the app (`./#/session/<id>…`).
    pub url: String,
    /// What it is about: an approval, a finished turn, or an exit.
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
    /// The button's label ("Allow", "Deny").
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
    /// The secret from the notification's `decide`: it is the credential.
    pub capability: String,
    /// `true` allows the tool call, `false` denies it.
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
    /// Show a notification.
    Show(PushShow),
    /// Close the notification with this tag (decided elsewhere).
    Close {
        /// The `tag` of the notification to close.
        close: String,
    },
}
