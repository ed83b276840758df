//! Name resolution for push deliveries: public addresses only.
//!
//! A subscription names the host duet will POST to. Literal addresses are
//! refused when it subscribes (`http.rs`), but a name can resolve anywhere:
//! `localhost.`, `x.localhost` (RFC 6761), or a public name pointed at an
//! address on duet's own network. So the push client resolves names itself
//! and keeps only addresses on the public internet; a name with none left
//! fails its delivery like an unreachable one. Through a proxy the same
//! filter runs before each request (`egress.rs`).

use std::net::{IpAddr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// See the module docs. `allow_loopback` is `--push-insecure-loopback`
/// (tests run a push service on loopback).
pub(crate) struct PublicOnly {
    pub(crate) allow_loopback: bool,
    /// Names resolved without the filter: the proxy's, which the operator
    /// chose (`egress.rs`). Never a push endpoint's: those are checked
    /// with [`public_addrs`] before they go to a proxy.
    pub(crate) trusted: Vec<String>,
}

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_loopback = self.allow_loopback;
        let trusted = self.trusted.iter().any(|t| t == name.as_str());
        Box::pin(async move {
            let addrs = if trusted {
                tokio::net::lookup_host((name.as_str(), 0)).await?.collect()
            } else {
                public_addrs(name.as_str(), allow_loopback).await?
            };
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// The public addresses (and loopback ones, with `allow_loopback`) that
/// `host`, a name or an address, stands for; an error when there are none.
pub(crate) async fn public_addrs(
    host: &str,
    allow_loopback: bool,
) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let found = tokio::net::lookup_host((bare, 0)).await?;
    let addrs: Vec<SocketAddr> = found
        .filter(|a| is_public(a.ip()) || (allow_loopback && a.ip().is_loopback()))
        .collect();
    if addrs.is_empty() {
        return Err(
            format!("the push endpoint's host {host} resolves to no public address").into(),
        );
    }
    Ok(addrs)
}

/// Whether `ip` is on the public internet: not loopback, private,
/// link-local, shared (CGNAT), documentation, multicast or reserved.
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => {
            let [first, second, ..] = a.octets();
            !(a.is_private()
                || a.is_loopback()
                || a.is_link_local()
                || a.is_unspecified()
                || a.is_broadcast()
                || a.is_documentation()
                || a.is_multicast()
                || first == 0
                || first >= 240
                || (first == 100 && (second & 0xc0) == 64))
        }
        IpAddr::V6(a) => {
            if let Some(v4) = a.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = a.segments()[0];
            !(a.is_loopback()
                || a.is_unspecified()
                || a.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || first == 0x2001 && a.segments()[1] == 0x0db8)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_public() {
        for local in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "2001:db8::1",
        ] {
            assert!(!is_public(local.parse().unwrap()), "{local}");
        }
        for public in ["142.250.74.36", "2a00:1450:4001:82b::200a", "1.1.1.1"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[tokio::test]
    async fn a_name_for_a_local_address_resolves_to_nothing() {
        let strict = PublicOnly {
            allow_loopback: false,
            trusted: Vec::new(),
        };
        let name: Name = "localhost".parse().unwrap();
        assert!(strict.resolve(name).await.is_err());
        let tests = PublicOnly {
            allow_loopback: true,
            trusted: Vec::new(),
        };
        let name: Name = "localhost".parse().unwrap();
        let addrs: Vec<_> = tests.resolve(name).await.unwrap().collect();
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
        assert!(public_addrs("localhost", false).await.is_err());
        assert!(public_addrs("[::1]", false).await.is_err());
        assert!(public_addrs("127.0.0.1", true).await.is_ok());
    }

    #[tokio::test]
    async fn the_proxy_s_name_is_resolved_whatever_its_address() {
        let with_proxy = PublicOnly {
            allow_loopback: false,
            trusted: vec!["localhost".into()],
        };
        let name: Name = "localhost".parse().unwrap();
        let addrs: Vec<_> = with_proxy.resolve(name).await.unwrap().collect();
        assert!(!addrs.is_empty());
        // Another name is filtered still.
        let name: Name = "localhost.".parse().unwrap();
        assert!(with_proxy.resolve(name).await.is_err());
    }
}
