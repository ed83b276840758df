//! `/api/push/*`: the VAPID key, and each principal's devices: subscribe,
//! turn off, mute a session. Every role may (a viewer is told of approvals
//! too, as its page is); a principal sees and changes its own devices only,
//! and a share link's device hears of its one session. Changes are audited.
//! And `POST /api/push/decide`: the Allow or Deny of an approval's
//! notification, whose capability is its credential.

use std::net::IpAddr;

use axum::extract::{Extension, State};
use axum::http::StatusCode;
use axum::Json;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use duet_protocol::push::{
    PushDecision, PushDevice, PushKey, PushMute, PushSubscribe, PushUnsubscribe,
};
use duet_protocol::rest::Approval;
use duet_protocol::ws::ErrorCode;

use crate::api::{session, ApiJson};
use crate::auth::{Action, Principal};
use crate::error::AppError;
use crate::observe::{Actor, Record};
use crate::push::capability::Refused;
use crate::push::send::origin;
use crate::push::store::{subscription, StoreError};
use crate::state::AppState;

/// Longest endpoint accepted (FCM's are about 200 characters).
const MAX_ENDPOINT: usize = 2048;

/// `GET /api/push/key`.
pub(crate) async fn key(State(state): State<AppState>) -> Json<PushKey> {
    Json(PushKey {
        public_key: state.push.vapid.public_key().to_string(),
    })
}

/// `GET /api/push/subscriptions`: the caller's devices.
pub(crate) async fn list(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
) -> Json<Vec<PushDevice>> {
    Json(state.push.store.of(&who.name))
}

/// `POST /api/push/subscriptions`: a browser's `PushSubscription` → 201.
pub(crate) async fn subscribe(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    actor: Actor,
    ApiJson(body): ApiJson<PushSubscribe>,
) -> Result<(StatusCode, Json<PushDevice>), AppError> {
    check_endpoint(&body.endpoint, state.push.config.insecure_loopback)
        .map_err(AppError::bad_request)?;
    check_key(&body.keys.p256dh, &body.keys.auth).map_err(AppError::bad_request)?;
    let sub = subscription(
        &who.name,
        who.share.as_ref().map(|s| s.session),
        body.endpoint,
        body.keys.p256dh,
        body.keys.auth,
    );
    let device = state.push.store.upsert(sub).map_err(store_error)?;
    tracing::info!(principal = %who.name, origin = ?origin(&device.endpoint), "push: device subscribed");
    state.observe.record(Record::PushSubscribe {
        push_service: origin(&device.endpoint),
        who: actor.json(),
    });
    Ok((StatusCode::CREATED, Json(device)))
}

/// `DELETE /api/push/subscriptions` `{endpoint}`: the device hears no more.
pub(crate) async fn unsubscribe(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    actor: Actor,
    ApiJson(body): ApiJson<PushUnsubscribe>,
) -> Result<StatusCode, AppError> {
    state
        .push
        .store
        .remove(&who.name, &body.endpoint)
        .map_err(store_error)?;
    state.observe.record(Record::PushUnsubscribe {
        push_service: origin(&body.endpoint),
        who: actor.json(),
    });
    Ok(StatusCode::NO_CONTENT)
}

/// `PUT /api/push/subscriptions/mute` `{endpoint, session, muted}`.
pub(crate) async fn mute(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    actor: Actor,
    ApiJson(body): ApiJson<PushMute>,
) -> Result<Json<PushDevice>, AppError> {
    // Only a session the caller may see (404 otherwise, as everywhere).
    session(&state, &who, &body.session.to_string(), Action::Read)?;
    let device = state
        .push
        .store
        .mute(&who.name, &body.endpoint, body.session, body.muted)
        .map_err(store_error)?;
    state.observe.record(Record::PushMute {
        push_service: origin(&body.endpoint),
        session: body.session,
        muted: body.muted,
        who: actor.json(),
    });
    Ok(Json(device))
}

/// The longest capability looked at (they are 64 hex digits).
const MAX_CAPABILITY: usize = 128;

/// `POST /api/push/decide` `{capability, allowed}`: a notification's Allow
/// or Deny, from the service worker with no page open. Outside the
/// token check: the capability is the credential, and it opens this one
/// approval once, as the device's principal (whose role must still allow
/// approving), for a few minutes. No cookie is read, so another site
/// cannot ride on a login (and its Origin is refused anyway); a wrong
/// capability counts against the address like a wrong token.
pub(crate) async fn decide(
    State(state): State<AppState>,
    conn: Option<Extension<crate::state::Conn>>,
    headers: axum::http::HeaderMap,
    actor: Actor,
    ApiJson(body): ApiJson<PushDecision>,
) -> Result<Json<Approval>, AppError> {
    state.auth.require_origin(&headers)?;
    let peer = conn.map(|c| c.remote.ip());
    state.auth.guess_allowed(peer)?;
    let refused =
        |status: StatusCode, code: ErrorCode, msg: String| AppError::new(status, code, msg);
    let grant = match body.capability.len() {
        1..=MAX_CAPABILITY => state.push.capabilities.redeem(&body.capability),
        _ => Err(Refused::Unknown),
    }
    .map_err(|why| {
        state.auth.wrong_guess(peer, &body.capability);
        match why {
            Refused::Unknown => refused(
                StatusCode::UNAUTHORIZED,
                ErrorCode::Unauthorized,
                why.to_string(),
            ),
            Refused::Expired => refused(StatusCode::GONE, ErrorCode::Unauthorized, why.to_string()),
        }
    })?;
    // Spent either way: a capability sent for another approval was not
    // sent by the worker it was made for.
    if body
        .request_id
        .as_deref()
        .is_some_and(|r| r != grant.request_id)
    {
        return Err(refused(
            StatusCode::FORBIDDEN,
            ErrorCode::Forbidden,
            "this answer is for another approval".into(),
        ));
    }
    // The principal as it stands now: a share revoked or a token removed
    // since the push takes its devices' answers with it.
    let forbidden = |msg: &str| refused(StatusCode::FORBIDDEN, ErrorCode::Forbidden, msg.into());
    let who = state
        .auth
        .principal_named(&grant.principal)
        .ok_or_else(|| forbidden("the credential this notification was sent for is gone"))?;
    if !who.sees(grant.session) {
        return Err(forbidden(
            "the credential this notification was sent for cannot see the session",
        ));
    }
    who.require(Action::Approve)?;
    let s = state
        .registry
        .get(grant.session)
        .ok_or_else(AppError::no_session)?;
    let actor = state.observe.actor_as(actor, &who);
    Ok(Json(s.approve_from_notification(
        &grant.request_id,
        body.allowed,
        &actor,
    )?))
}

fn store_error(e: StoreError) -> AppError {
    let (status, code) = match e {
        StoreError::Full => (StatusCode::TOO_MANY_REQUESTS, ErrorCode::LimitReached),
        StoreError::NotFound => (StatusCode::NOT_FOUND, ErrorCode::UnknownRequest),
        StoreError::Save { .. } => (StatusCode::INTERNAL_SERVER_ERROR, ErrorCode::Internal),
    };
    AppError::new(status, code, e.to_string())
}

/// An endpoint duet will POST to: https to a named host; plain http only
/// to a loopback address when `insecure_loopback` (tests). Addresses are
/// refused otherwise, so a subscription cannot aim duet at a machine on
/// its own network (real push services have names).
pub(crate) fn check_endpoint(endpoint: &str, insecure_loopback: bool) -> Result<(), String> {
    if endpoint.len() > MAX_ENDPOINT {
        return Err(format!(
            "the endpoint is longer than {MAX_ENDPOINT} characters"
        ));
    }
    let url =
        reqwest::Url::parse(endpoint).map_err(|e| format!("the endpoint is not a URL: {e}"))?;
    let host = url.host_str().unwrap_or("");
    let ip: Option<IpAddr> = host.trim_matches(['[', ']']).parse().ok();
    // RFC 6761: `localhost`, with a final dot or under it, is loopback. (A
    // public name that resolves inward is refused at delivery:
    // `resolve.rs`.)
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    let host = if name == "localhost" || name.ends_with(".localhost") {
        "localhost"
    } else {
        host
    };
    let loopback = ip.is_some_and(|ip| ip.is_loopback());
    match url.scheme() {
        "http" if insecure_loopback && loopback => Ok(()),
        "https" if ip.is_none() && !host.is_empty() && host != "localhost" => Ok(()),
        "https" if insecure_loopback && loopback => Ok(()),
        "http" | "https" if ip.is_some() || host == "localhost" => Err(format!(
            "the push endpoint must name a push service (https://host/…), not the address {host}"
        )),
        _ => Err(if insecure_loopback {
            "the push endpoint must be https (plain http only on a loopback address)".into()
        } else {
            "the push endpoint must be https (see --push-insecure-loopback for tests)".into()
        }),
    }
}

/// The subscription's keys: `p256dh` a P-256 point, `auth` 16 bytes.
fn check_key(p256dh: &str, auth: &str) -> Result<(), String> {
    let point = B64
        .decode(p256dh.trim_end_matches('='))
        .map_err(|_| "keys.p256dh is not base64url".to_string())?;
    p256::PublicKey::from_sec1_bytes(&point)
        .map_err(|_| "keys.p256dh is not a P-256 public key".to_string())?;
    let secret = B64
        .decode(auth.trim_end_matches('='))
        .map_err(|_| "keys.auth is not base64url".to_string())?;
    if secret.len() != 16 {
        return Err(format!("keys.auth must be 16 bytes, not {}", secret.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_must_be_https_to_a_name() {
        assert!(check_endpoint("https://fcm.googleapis.com/fcm/send/x", false).is_ok());
        assert!(check_endpoint("http://fcm.googleapis.com/fcm/send/x", false).is_err());
        assert!(check_endpoint("http://127.0.0.1:9/p", false).is_err());
        assert!(check_endpoint("http://127.0.0.1:9/p", true).is_ok());
        assert!(check_endpoint("http://[::1]:9/p", true).is_ok());
        assert!(check_endpoint("http://10.0.0.1/p", true).is_err());
        assert!(check_endpoint("https://10.0.0.1/p", false).is_err());
        assert!(check_endpoint("https://localhost/p", false).is_err());
        assert!(check_endpoint("https://localhost./p", false).is_err());
        assert!(check_endpoint("https://foo.LOCALHOST/p", false).is_err());
        assert!(check_endpoint("ftp://push.example/p", false).is_err());
        assert!(check_endpoint("nonsense", false).is_err());
        let long = format!("https://p.example/{}", "x".repeat(MAX_ENDPOINT));
        assert!(check_endpoint(&long, false).is_err());
    }
}
