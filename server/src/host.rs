//! The Host check: a request must name this server by a name it answers to.
//!
//! A browser only guards the *origin* (scheme, name, port). A page on
//! `evil.example` whose DNS answer is switched to 127.0.0.1 (DNS rebinding)
//! stays same-origin with itself while its requests reach duet, and its
//! `Origin` matches its `Host`. What gives it away is the name: duet is not
//! `evil.example`. So every request (but `/healthz`) must name a loopback
//! address, `localhost`, the address duet listens on (or, listening on all
//! addresses, the one the connection arrived at), or a name configured with
//! `--allowed-host`. Names are compared without their port, except for a
//! configured `name:port`.

use std::net::{IpAddr, SocketAddr};

use axum::extract::Request;
use axum::http::header::HOST;
use axum::http::StatusCode;
use duet_protocol::ws::ErrorCode;

use crate::error::AppError;

/// The path load balancers probe, by whatever address they know the server
/// by (Kubernetes probes by pod IP); it answers `ok` and nothing else.
pub(crate) const HEALTH_PATH: &str = "/healthz";

/// One `--allowed-host` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    /// Lower case; for `*.example.com`, the suffix `.example.com`.
    name: String,
    wildcard: bool,
    port: Option<u16>,
}

/// The names a server answers to.
#[derive(Debug, Clone)]
pub(crate) struct AllowedHosts {
    patterns: Vec<Pattern>,
    listen: SocketAddr,
    /// Whether a request without any Host passes (auth on: only a client
    /// holding the token gets anywhere, and browsers always send Host).
    allow_missing: bool,
}

impl AllowedHosts {
    /// Validates the configured names. `listen` is the bound address.
    pub(crate) fn new(
        configured: &[String],
        listen: SocketAddr,
        allow_missing: bool,
    ) -> anyhow::Result<Self> {
        let mut patterns = Vec::new();
        for entry in configured {
            let entry = entry.trim();
            if entry.is_empty() {
                continue;
            }
            let bad = || {
                anyhow::anyhow!(
                    "--allowed-host {entry:?}: expected a host name, an IP address or \
                     *.domain, optionally with :port"
                )
            };
            let (name, port) = split_host(entry).ok_or_else(bad)?;
            let name = name.to_ascii_lowercase();
            let (name, wildcard) = match name.strip_prefix("*.") {
                Some(rest) => (format!(".{rest}"), true),
                None => (name, false),
            };
            let label_chars = |s: &str| {
                !s.is_empty()
                    && s.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b':'))
            };
            if !label_chars(name.trim_start_matches('.')) || name.contains('*') {
                return Err(bad());
            }
            patterns.push(Pattern {
                name,
                wildcard,
                port,
            });
        }
        Ok(Self {
            patterns,
            listen,
            allow_missing,
        })
    }

    /// Whether `host` (a Host header or URI authority) names this server,
    /// for a connection that arrived at `local`.
    pub(crate) fn allows(&self, host: &str, local: Option<SocketAddr>) -> bool {
        let Some((name, port)) = split_host(host.trim()) else {
            return false;
        };
        let name = name.to_ascii_lowercase();
        if name == "localhost" {
            return true;
        }
        if let Ok(ip) = name.parse::<IpAddr>() {
            // A dual-stack socket sees IPv4 peers as ::ffff:a.b.c.d.
            let ip = ip.to_canonical();
            if ip.is_loopback() {
                return true;
            }
            let listen = self.listen.ip().to_canonical();
            if !listen.is_unspecified() && ip == listen {
                return true;
            }
            // Listening on every address: the address this connection was
            // made to is this server's own, whatever the interface.
            if listen.is_unspecified() && local.is_some_and(|l| l.ip().to_canonical() == ip) {
                return true;
            }
        }
        self.patterns.iter().any(|p| {
            let name_ok = if p.wildcard {
                name.len() > p.name.len() && name.ends_with(&p.name)
            } else {
                name == p.name
            };
            name_ok && p.port.is_none_or(|want| port == Some(want))
        })
    }

    /// Checks a request's Host header and, for an absolute-form request,
    /// its URI authority.
    /// `local` is the address the request's connection was made to.
    pub(crate) fn check(&self, req: &Request, local: Option<SocketAddr>) -> Result<(), AppError> {
        let mut headers = req.headers().get_all(HOST).iter();
        let header = headers.next().map(|v| v.to_str().unwrap_or("\u{fffd}"));
        // Only the first would be checked, and a proxy may route by another.
        if headers.next().is_some() {
            return Err(AppError::bad_request(
                "a request must have exactly one Host header",
            ));
        }
        let authority = req.uri().authority().map(|a| a.as_str());
        if header.is_none() && authority.is_none() {
            // HTTP/1.1 requires it (RFC 9112, 3.2); HTTP/1.0 clients may
            // leave it out.
            if req.version() >= axum::http::Version::HTTP_11 {
                return Err(AppError::bad_request(
                    "an HTTP/1.1 request must name the host in a Host header",
                ));
            }
            if self.allow_missing {
                return Ok(());
            }
            return Err(refused("(none)"));
        }
        for host in header.into_iter().chain(authority) {
            if !self.allows(host, local) {
                return Err(refused(host));
            }
        }
        Ok(())
    }
}

fn refused(host: &str) -> AppError {
    let shown: String = host.chars().take(100).collect();
    AppError::new(
        StatusCode::MISDIRECTED_REQUEST,
        ErrorCode::Forbidden,
        format!(
            "duet does not answer to the host name {shown:?}. Reach it by localhost, a loopback \
             or its listen address, or allow the name with --allowed-host (DUET_ALLOWED_HOST). \
             Foreign names are refused so that another site's page cannot reach duet by \
             rebinding its DNS name to this address."
        ),
    )
}

/// Splits `name[:port]` or `[v6]:port`; `None` if malformed.
fn split_host(h: &str) -> Option<(&str, Option<u16>)> {
    if h.contains(['@', '/', ' ', '?', '#']) {
        return None;
    }
    let parse_port = |p: &str| -> Option<Option<u16>> {
        (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse().ok().map(Some))
            .flatten()
    };
    if let Some(rest) = h.strip_prefix('[') {
        let (addr, after) = rest.split_once(']')?;
        let port = match after {
            "" => None,
            p => parse_port(p.strip_prefix(':')?)?,
        };
        return Some((addr, port));
    }
    match h.split_once(':') {
        Some((name, p)) if !p.contains(':') => Some((name, parse_port(p)?)),
        Some(_) => None,
        None => Some((h, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(configured: &[&str], listen: &str) -> AllowedHosts {
        let configured: Vec<String> = configured.iter().map(|s| s.to_string()).collect();
        AllowedHosts::new(&configured, listen.parse().unwrap(), false).unwrap()
    }

    #[test]
    fn loopback_names_any_port() {
        let h = hosts(&[], "127.0.0.1:8080");
        for ok in [
            "localhost",
            "LOCALHOST:1",
            "127.0.0.1:8080",
            "127.9.9.9",
            "[::1]:80",
            "[::1]",
        ] {
            assert!(h.allows(ok, None), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "evil.localhost",
            "localhost.",
            "127.0.0.1.evil.example",
            "0.0.0.0:8080",
            "10.0.0.1:8080",
            "::1",
            "localhost:http",
            "user@localhost",
            "",
        ] {
            assert!(!h.allows(bad, None), "{bad}");
        }
    }

    #[test]
    fn the_listen_address_and_the_connections_own() {
        let h = hosts(&[], "192.0.2.7:8080");
        assert!(h.allows("192.0.2.7:8080", None));
        assert!(!h.allows("192.0.2.8:8080", None));
        let all = hosts(&[], "0.0.0.0:8080");
        let local: SocketAddr = "10.1.2.3:8080".parse().unwrap();
        assert!(all.allows("10.1.2.3:8080", Some(local)));
        assert!(!all.allows("10.1.2.4:8080", Some(local)));
        assert!(!all.allows("0.0.0.0:8080", Some(local)));
        let dual = hosts(&[], "[::]:8080");
        let mapped: SocketAddr = "[::ffff:10.1.2.3]:8080".parse().unwrap();
        assert!(dual.allows("10.1.2.3:8080", Some(mapped)));
        assert!(dual.allows("[::ffff:127.0.0.1]:8080", None));
    }

    #[test]
    fn configured_names() {
        let h = hosts(
            &["duet.example.com", "*.pods.example", "fixed.example:8443"],
            "127.0.0.1:8080",
        );
        assert!(h.allows("duet.example.com", None));
        assert!(h.allows("DUET.example.com:443", None));
        assert!(h.allows("duet-0.pods.example:8080", None));
        assert!(h.allows("a.b.pods.example", None));
        assert!(!h.allows("pods.example", None));
        assert!(!h.allows("xpods.example", None));
        assert!(!h.allows("duet.example.com.evil.example", None));
        assert!(h.allows("fixed.example:8443", None));
        assert!(!h.allows("fixed.example", None));
        assert!(!h.allows("fixed.example:443", None));
        for bad in ["a b", "*", "*.", "x/y", "a:b:c", "*.a.*.b"] {
            assert!(
                AllowedHosts::new(&[bad.to_string()], "127.0.0.1:1".parse().unwrap(), false)
                    .is_err(),
                "{bad}"
            );
        }
    }
}
