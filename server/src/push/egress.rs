//! How push deliveries leave this host: straight to the push service, or
//! through the HTTP proxy the environment names (`HTTPS_PROXY`, else
//! `ALL_PROXY`; `NO_PROXY` exempts hosts), with the public-address filter
//! (`resolve.rs`) applied either way.
//!
//! A deployment behind a corporate proxy often has no other way out, so
//! push goes through the proxy rather than ignore it. But a proxied
//! request names its host to the proxy (`CONNECT host:443`) and the proxy
//! resolves it: duet's resolver, which drops every address but public ones,
//! is then asked only for the proxy's own name, and a subscription whose
//! endpoint names a host that resolves to loopback or to the private
//! network had the proxy connect there for it. So, with a proxy, each
//! delivery first resolves its endpoint's host through the same filter and
//! goes no further when nothing public is left. What remains is the proxy's
//! own lookup a moment later: a name that answers duet with a public
//! address and the proxy with a private one (DNS rebinding) is the proxy's
//! egress rules to stop, as for every other client on its network.
//!
//! The proxy is read here, not by reqwest, so the resolver knows its name:
//! the operator chose it, and it is resolved without the filter (a proxy
//! on the private network is the usual case).

use std::sync::Arc;
use std::time::Duration;

use reqwest::{NoProxy, Proxy, Url};

use super::resolve::PublicOnly;

/// Where push requests go out (see the module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct Egress {
    /// The proxy's URL (`http://proxy.corp:3128`; a missing scheme is
    /// `http://`, as curl reads it).
    pub(crate) proxy: Option<String>,
    /// `NO_PROXY`: hosts reached directly.
    pub(crate) no_proxy: Option<String>,
}

/// The first of `names` set to something in the environment.
fn env(names: &[&str]) -> Option<String> {
    names
        .iter()
        .filter_map(|n| std::env::var(n).ok())
        .find(|v| !v.trim().is_empty())
}

impl Egress {
    /// As the environment says. Push services are https, so `HTTP_PROXY`
    /// is not read (plain http goes only to loopback, in tests).
    pub(crate) fn from_env() -> Self {
        Self {
            proxy: env(&["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]),
            no_proxy: env(&["NO_PROXY", "no_proxy"]),
        }
    }

    /// Whether deliveries may go through a proxy.
    pub(crate) fn proxied(&self) -> bool {
        self.proxy.is_some()
    }

    /// The push client: the filtering resolver, the proxy if any, no
    /// redirects, `timeout` for each request.
    pub(crate) fn client(
        &self,
        allow_loopback: bool,
        timeout: Duration,
    ) -> anyhow::Result<reqwest::Client> {
        // The environment was read above; reqwest must not read it again
        // behind the resolver's back.
        let mut builder = reqwest::Client::builder().no_proxy();
        let mut trusted = Vec::new();
        if let Some(proxy) = &self.proxy {
            let url = if proxy.contains("://") {
                Url::parse(proxy)
            } else {
                Url::parse(&format!("http://{proxy}"))
            }
            .map_err(|e| anyhow::anyhow!("the push proxy {proxy:?}: {e}"))?;
            // An address (no lookup) or a name.
            if let Some(host) = url.host_str() {
                trusted.push(host.to_string());
            }
            let no_proxy = self.no_proxy.as_deref().and_then(NoProxy::from_string);
            builder = builder.proxy(Proxy::https(url)?.no_proxy(no_proxy));
        }
        Ok(builder
            .dns_resolver(Arc::new(PublicOnly {
                allow_loopback,
                trusted,
            }))
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("duet/", env!("CARGO_PKG_VERSION")))
            .build()?)
    }
}
