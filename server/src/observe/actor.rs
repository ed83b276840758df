//! Who did something, as the audit trail names them: the credential
//! (principal, name, role), the WebSocket client, and the address the
//! request came from (the peer's or, behind a TLS proxy, the one it
//! forwarded for).

use std::net::IpAddr;

use duet_protocol::ids::ClientId;
use duet_protocol::rest::Role;
use serde_json::{json, Value};

use super::Observer;
use crate::auth::Principal;

/// Who did something: the credential's principal, the client, and where
/// the request came from.
#[derive(Debug, Clone)]
pub(crate) struct Actor {
    /// How the client proved itself: `token` (the server's token), `named`
    /// (a `[[token]]` of the config), `share` (a share link), or `none`
    /// with `--no-auth`.
    pub(super) principal: &'static str,
    /// The credential's name: `owner`, the named token's name, or
    /// `share:<id>`.
    pub(super) name: Option<String>,
    /// The role it holds.
    role: Option<Role>,
    /// The client's address: the peer, or behind a TLS proxy the address
    /// the proxy put last in `X-Forwarded-For`.
    remote: Option<IpAddr>,
    /// The peer address, when `remote` came from `X-Forwarded-For`.
    proxy: Option<IpAddr>,
    /// The WebSocket client, for decisions made over a WebSocket.
    pub(super) client: Option<ClientId>,
}

impl Observer {
    /// Who made a request: its credential and its address, the peer's or,
    /// behind a TLS proxy, the one the proxy says it forwarded for.
    pub(crate) fn actor(
        &self,
        credential: Option<&Principal>,
        peer: Option<IpAddr>,
        forwarded_for: impl FnOnce() -> Option<IpAddr>,
    ) -> Actor {
        let forwarded = self.trust_forwarded.then(forwarded_for).flatten();
        let principal = match credential {
            _ if !self.auth_enabled => "none",
            Some(p) if p.share.is_some() => "share",
            Some(p) if p.name != Principal::owner().name => "named",
            _ => "token",
        };
        Actor {
            principal,
            name: credential.map(|p| p.name.clone()),
            role: credential.map(|p| p.role),
            remote: forwarded.or(peer),
            proxy: forwarded.and(peer),
            client: None,
        }
    }
}

impl Observer {
    /// `actor` (its address) acting as `who`: a credential the request did
    /// not carry itself (a notification's capability stands for the
    /// device's principal).
    pub(crate) fn actor_as(&self, actor: Actor, who: &Principal) -> Actor {
        let as_who = self.actor(Some(who), None, || None);
        Actor {
            remote: actor.remote,
            proxy: actor.proxy,
            ..as_who
        }
    }
}

impl Actor {
    /// The credential's name, if it has one.
    pub(crate) fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The same actor as WebSocket client `client`.
    pub(crate) fn with_client(mut self, client: ClientId) -> Self {
        self.client = Some(client);
        self
    }

    pub(crate) fn json(&self) -> Value {
        let mut who = json!({
            "principal": self.principal,
            "name": self.name,
            "role": self.role.map(Role::as_str),
            "client": self.client,
            "remote": self.remote,
        });
        if let Some(proxy) = self.proxy {
            who["proxy"] = json!(proxy);
        }
        who
    }
}
