//! What every handler shares ([`AppState`]) and what every request
//! carries ([`Conn`]). Handlers depend on this, never on `server.rs`,
//! which builds the router from them.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::sync::watch;

use crate::auth::Auth;
use crate::host::AllowedHosts;
use crate::observe::Observer;
use crate::registry::Registry;

/// Shared by every handler.
#[derive(Clone)]
pub(crate) struct AppState {
    pub(crate) registry: Arc<Registry>,
    pub(crate) auth: Auth,
    pub(crate) hosts: Arc<AllowedHosts>,
    pub(crate) observe: Arc<Observer>,
    pub(crate) board: Arc<crate::board::Board>,
    pub(crate) push: Arc<crate::push::Push>,
    pub(crate) max_ws_message: usize,
    /// How long a request body may take to arrive (`api/body.rs`).
    pub(crate) body_read_timeout: std::time::Duration,
    /// Turns true when the server is stopping; WebSocket handlers close.
    pub(crate) stop: watch::Sender<bool>,
}

/// Where a connection comes from and where it arrived; in the extensions of
/// every request it carries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Conn {
    pub(crate) remote: SocketAddr,
    pub(crate) local: SocketAddr,
}
