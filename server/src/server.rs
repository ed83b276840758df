//! The HTTP server: routes, shared state, and graceful shutdown. Takes its
//! listener from the caller, so tests bind port 0 and `main` binds the
//! configured address.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::routing::{get, post};
use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tower_http::trace::TraceLayer;
use tracing::info;

use crate::auth::Auth;
use crate::config::Profiles;
use crate::registry::{Registry, RegistryOptions};
use crate::session::SessionLimits;
use crate::{api, assets, ws};

/// Everything a server needs; build with [`ServerOptions::new`] and adjust.
#[derive(Clone)]
#[non_exhaustive]
pub struct ServerOptions {
    /// The token clients must present; `None` turns authentication off.
    pub token: Option<String>,
    /// Origins (besides the server's own) allowed to use the API from a browser.
    pub allowed_origins: Vec<String>,
    /// TLS is terminated by a proxy in front: cookies get `Secure`.
    pub behind_tls_proxy: bool,
    pub profiles: Profiles,
    /// Where session directories (events, input, work dir) are created.
    pub state_dir: PathBuf,
    /// Running sessions at once.
    pub max_sessions: usize,
    /// How long ended sessions stay readable.
    pub retain: Duration,
    /// Largest WebSocket message accepted from a client.
    pub max_ws_message: usize,
    pub limits: SessionLimits,
}

impl ServerOptions {
    /// Defaults around the given profiles and a token.
    pub fn new(profiles: Profiles, token: Option<String>) -> Self {
        Self {
            token,
            allowed_origins: Vec::new(),
            behind_tls_proxy: false,
            profiles,
            state_dir: default_state_dir(),
            max_sessions: 64,
            retain: Duration::from_secs(3600),
            max_ws_message: 4 << 20,
            limits: SessionLimits::default(),
        }
    }
}

/// A private per-user directory for session files.
pub fn default_state_dir() -> PathBuf {
    let uid = nix::unistd::getuid();
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir).join("duet"),
        _ => std::env::temp_dir().join(format!("duet-{uid}")),
    }
}

/// Shared by every handler.
#[derive(Clone)]
pub(crate) struct AppState {
    pub registry: Arc<Registry>,
    pub auth: Auth,
    pub max_ws_message: usize,
    /// Turns true when the server is stopping; WebSocket handlers close.
    pub stop: watch::Sender<bool>,
}

/// Builds the router. Public for tests that want to drive it in-process.
pub(crate) fn router(state: AppState) -> Router {
    let api = Router::new()
        .route("/profiles", get(api::profiles))
        .route("/sessions", get(api::list).post(api::create))
        .route("/sessions/{id}", get(api::get).delete(api::delete))
        .route("/sessions/{id}/events", get(api::events))
        .route("/sessions/{id}/screen", get(api::screen))
        .route("/sessions/{id}/submit", post(api::submit))
        .route("/sessions/{id}/approvals", get(api::approvals))
        .route("/sessions/{id}/approvals/{request_id}", post(api::approve))
        .route("/sessions/{id}/ws", get(ws::upgrade))
        .route("/logout", post(api::logout))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::auth::require_auth,
        ))
        .route("/login", post(api::login));
    Router::new()
        .route("/healthz", get(api::healthz))
        .route("/", get(assets::root))
        .nest("/api", api)
        .fallback(assets::static_file)
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Serves on `listener` until `shutdown` resolves, then ends every session
/// (their whole process groups) and closes every client.
pub async fn run(
    listener: TcpListener,
    opts: ServerOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let port = listener.local_addr()?.port();
    let registry = Registry::new(
        opts.profiles.clone(),
        RegistryOptions {
            state_dir: opts.state_dir.clone(),
            max_sessions: opts.max_sessions,
            retain: opts.retain,
            limits: opts.limits,
        },
    )?;
    let state = AppState {
        registry: registry.clone(),
        auth: Auth::new(
            opts.token.clone(),
            format!("duet_token_{port}"),
            opts.behind_tls_proxy,
            opts.allowed_origins.clone(),
        ),
        max_ws_message: opts.max_ws_message,
        stop: watch::channel(false).0,
    };
    let stop = state.stop.clone();
    let app = router(state);
    let stopping = {
        let registry = registry.clone();
        async move {
            shutdown.await;
            info!("shutting down: ending sessions and closing clients");
            registry.shutdown().await;
            stop.send_replace(true);
        }
    };
    // Keystroke echoes and the last bytes after a Ctrl-C are tiny frames;
    // with Nagle's algorithm they wait for the peer's delayed ACK.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(?e, "setting TCP_NODELAY");
        }
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(stopping)
        .await?;
    info!("stopped");
    Ok(())
}
