//! The HTTP server: routes, shared state, the accept loop (a connection
//! cap, a header timeout) and graceful shutdown. Takes its listener from the
//! caller, so tests bind port 0 and `main` binds the configured address.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::routing::{get, post, put};
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch, Semaphore};
use tower_http::trace::TraceLayer;
use tracing::{debug, info, warn};

use crate::auth::Auth;
use crate::config::Profiles;
use crate::host::AllowedHosts;
use crate::instance::StateLock;
use crate::observe::Observer;
use crate::registry::{Registry, RegistryOptions};
use crate::session::SessionLimits;
use crate::socket::Socket;
use crate::state::{AppState, Conn};
use crate::state_dir::default_state_dir;
use crate::{api, assets, board, guard, host, push, ws};

/// Everything a server needs; build with [`ServerOptions::new`] and adjust.
#[derive(Clone)]
#[non_exhaustive]
pub struct ServerOptions {
    /// The token clients must present (the owner's); `None` turns
    /// authentication off.
    pub token: Option<String>,
    /// Named tokens with their roles (`[[token]]` in the config file).
    pub tokens: Vec<crate::config::NamedToken>,
    /// Origins (besides the server's own) allowed to use the API from a browser.
    pub allowed_origins: Vec<String>,
    /// Host names (besides loopback names and the listen address) that
    /// requests may name in `Host`: the names users reach duet by. An entry
    /// `*.example.com` allows every name under example.com.
    pub allowed_hosts: Vec<String>,
    /// TLS is terminated by a proxy in front: cookies get `Secure`.
    pub behind_tls_proxy: bool,
    /// The profiles clients may start (the built-in ones, or the config
    /// file's).
    pub profiles: Profiles,
    /// Where session directories (events, input, work dir) are created.
    pub state_dir: PathBuf,
    /// Running sessions at once.
    pub max_sessions: usize,
    /// How long ended sessions stay readable.
    pub retain: Duration,
    /// Largest WebSocket message accepted from a client.
    pub max_ws_message: usize,
    /// Open connections at once; more are closed as soon as they are accepted.
    pub max_connections: usize,
    /// How long a connection may take to send a request's headers (also
    /// how long an idle keep-alive connection stays open).
    pub header_read_timeout: Duration,
    /// How long a request's body may take to arrive, all of it: 2 MiB
    /// (the largest body taken) in 60 s is 35 KB/s.
    pub body_read_timeout: Duration,
    /// Bounds on what each session holds (output kept, sidecar line length,
    /// held prompts, clients, ...).
    pub limits: SessionLimits,
    /// Where to serve `GET /metrics` without auth (see `--metrics-listen`),
    /// besides `/metrics` behind the token on the main listener.
    pub metrics_listen: Option<MetricsListen>,
    /// Web Push to plain-http endpoints on a loopback address (tests
    /// only; real push services are https).
    pub push_insecure_loopback: bool,
    /// A turn that ran this long or longer is worth a push when it ends.
    pub push_long_turn: Duration,
    /// The VAPID `sub` claim (`mailto:` or an https URL): how a push
    /// service can reach whoever runs this duet.
    pub push_contact: String,
    /// The URL users reach duet at (`--public-url`); written for clients
    /// into `server.json` (default: the listen address).
    pub public_url: Option<String>,
    /// The state directory's lock, when the caller took it already (`main`
    /// does, to refuse before it prints a URL); otherwise [`run`] takes it.
    pub state_lock: Option<Arc<StateLock>>,
    /// How long the Allow and Deny of an approval's notification work.
    pub push_action_lifetime: Duration,
}

/// Where the unauthenticated metrics listener listens.
#[derive(Clone, Debug)]
pub enum MetricsListen {
    /// Bind this address.
    Addr(SocketAddr),
    /// Use this listener (tests bind port 0).
    Bound(Arc<std::net::TcpListener>),
}

impl ServerOptions {
    /// Defaults around the given profiles and a token.
    pub fn new(profiles: Profiles, token: Option<String>) -> Self {
        Self {
            token,
            tokens: Vec::new(),
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            behind_tls_proxy: false,
            profiles,
            state_dir: default_state_dir(),
            max_sessions: 64,
            retain: Duration::from_secs(3600),
            max_ws_message: 4 << 20,
            max_connections: 1024,
            header_read_timeout: Duration::from_secs(30),
            body_read_timeout: Duration::from_secs(60),
            limits: SessionLimits::default(),
            metrics_listen: None,
            push_insecure_loopback: false,
            push_long_turn: Duration::from_secs(30),
            push_contact: "mailto:duet@localhost".into(),
            public_url: None,
            state_lock: None,
            push_action_lifetime: Duration::from_secs(600),
        }
    }
}

/// The start URL's base for a server listening on `local`: an unspecified
/// address is shown as loopback, and an IPv6 one in brackets (a bare
/// `http://::1:8080` is no URL).
pub fn local_base_url(local: SocketAddr) -> String {
    let ip = match local.ip() {
        ip if ip.is_unspecified() => std::net::IpAddr::from([127, 0, 0, 1]),
        ip => ip,
    };
    format!("http://{}", SocketAddr::new(ip, local.port()))
}

/// Builds the router. Public for tests that want to drive it in-process.
pub(crate) fn router(state: AppState) -> Router {
    let api = Router::new()
        .route("/me", get(api::me))
        .route("/profiles", get(api::profiles))
        .route("/sessions", get(api::list).post(api::create))
        .route("/sessions/watch", get(api::board::watch))
        .route(
            "/sessions/{id}",
            get(api::get).delete(api::delete).patch(api::board::rename),
        )
        .route("/sessions/{id}/events", get(api::events))
        .route("/sessions/{id}/resume", post(api::resume))
        .route("/sessions/{id}/history", get(api::history))
        .route("/sessions/{id}/recording", get(api::recording))
        .route("/sessions/{id}/screen", get(api::screen))
        .route("/sessions/{id}/submit", post(api::submit))
        .route("/sessions/{id}/mode", post(api::set_mode))
        .route("/sessions/{id}/model", post(api::set_model))
        .route("/sessions/{id}/approvals", get(api::approvals))
        .route("/sessions/{id}/approvals/{request_id}", post(api::approve))
        .route("/sessions/{id}/usage", get(api::usage::usage))
        .route("/sessions/{id}/budget", put(api::usage::set_budget))
        .route(
            "/sessions/{id}/shares",
            get(api::shares::list).post(api::shares::create),
        )
        .route(
            "/sessions/{id}/shares/{share_id}",
            axum::routing::delete(api::shares::revoke),
        )
        .route("/sessions/{id}/ws", get(ws::upgrade))
        .route("/sessions/{id}/audit", get(api::observe::audit))
        .route("/push/key", get(api::push::key))
        .route(
            "/push/subscriptions",
            get(api::push::list)
                .post(api::push::subscribe)
                .delete(api::push::unsubscribe),
        )
        .route("/push/subscriptions/mute", put(api::push::mute))
        .route("/logout", post(api::logout))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::require_auth,
        ))
        .route("/login", post(api::login))
        // A notification's button: its capability is its only credential.
        .route("/push/decide", post(api::push::decide))
        .layer(axum::middleware::from_fn(crate::error::json_errors));
    let metrics = Router::new()
        .route("/metrics", get(api::observe::metrics_for_owner))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::require_auth,
        ));
    Router::new()
        .route(host::HEALTH_PATH, get(api::healthz))
        .merge(metrics)
        .route("/", get(assets::root))
        .nest("/api", api)
        .fallback(assets::static_file)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::require_allowed_host,
        ))
        .layer(TraceLayer::new_for_http().make_span_with(request_span))
        .with_state(state)
}

/// Query parameters whose values are logged. `?token=` and `?share=` carry
/// credentials; any other parameter's name could be one too.
const LOGGED_PARAMS: &[&str] = &["from", "purge", "times"];
/// Parameters logged by name, their values not.
const SECRET_PARAMS: &[&str] = &["token", "share"];

/// The span of each request, as tower-http's default makes it, with its
/// URI redacted: at `RUST_LOG=tower_http=debug` the default logged the
/// main token (`/?token=…`) and share secrets (`/?share=…`) of every
/// login. Headers stay out of it, as before (`Authorization`, the cookie).
/// tower-http's target, so that the same `RUST_LOG` shows it.
fn request_span(req: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    tracing::debug_span!(
        target: "tower_http::trace::make_span",
        "request",
        method = %req.method(),
        uri = %redacted(req.uri()),
        version = ?req.version(),
    )
}

/// `uri` for a log line: its path, and of its query the values of
/// [`LOGGED_PARAMS`] and the names of [`SECRET_PARAMS`].
fn redacted(uri: &axum::http::Uri) -> String {
    let Some(query) = uri.query() else {
        return uri.path().to_string();
    };
    let params: Vec<String> = query
        .split('&')
        .map(|pair| {
            let name = pair.split_once('=').map_or(pair, |(name, _)| name);
            if LOGGED_PARAMS.contains(&name) {
                pair.to_string()
            } else if SECRET_PARAMS.contains(&name) {
                format!("{name}=[redacted]")
            } else {
                "[redacted]".to_string()
            }
        })
        .collect();
    format!("{}?{}", uri.path(), params.join("&"))
}

/// How long shutdown waits for requests in flight (an event stream, a
/// DELETE waiting for its program) before it stops anyway.
const DRAIN: Duration = Duration::from_secs(10);

/// Serves on `listener` until `shutdown` resolves, then ends every session
/// (their whole process groups) and closes every client.
pub async fn run(
    listener: TcpListener,
    opts: ServerOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let port = listener.local_addr()?.port();
    let mut opts = opts;
    // Programs run in their session's work directory and are handed paths
    // inside the state directory ({events_file}, {input_file}): relative to
    // duet's own directory, those named files that were not there, and the
    // side channel never started (every prompt stayed queued). Absolute,
    // not canonical: a symlinked state directory must still be refused.
    opts.state_dir = std::path::absolute(&opts.state_dir)
        .map_err(|e| anyhow::anyhow!("the state directory {}: {e}", opts.state_dir.display()))?;
    crate::state_dir::prepare(&opts.state_dir)?;
    // One duet per state directory, before anything in it is touched: a
    // second one would take the first's sessions for leftovers and end them.
    let state_lock = match opts.state_lock.take() {
        Some(lock) => lock,
        None => Arc::new(StateLock::acquire(&opts.state_dir)?),
    };
    let observe = Observer::new(&opts.state_dir, opts.behind_tls_proxy, opts.token.is_some())?;
    let metrics_listener = match &opts.metrics_listen {
        None => None,
        Some(MetricsListen::Addr(addr)) => Some(
            TcpListener::bind(addr)
                .await
                .map_err(|e| anyhow::anyhow!("listening on {addr} (--metrics-listen): {e}"))?,
        ),
        Some(MetricsListen::Bound(l)) => {
            let l = l.try_clone()?;
            l.set_nonblocking(true)?;
            Some(TcpListener::from_std(l)?)
        }
    };
    let registry = Registry::new(
        opts.profiles.clone(),
        RegistryOptions {
            state_dir: opts.state_dir.clone(),
            max_sessions: opts.max_sessions,
            retain: opts.retain,
            limits: opts.limits,
            observe: observe.clone(),
        },
    )?;
    let local_addr = listener.local_addr()?;
    let base = opts
        .public_url
        .clone()
        .unwrap_or_else(|| local_base_url(local_addr));
    state_lock
        .publish(base.trim_end_matches('/'), opts.token.as_deref())
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", crate::instance::SERVER_FILE))?;
    let stop = watch::channel(false).0;
    let board = board::Board::start(registry.clone(), stop.subscribe());
    let auth = Auth::new(
        opts.token.clone(),
        format!("duet_token_{port}"),
        opts.behind_tls_proxy,
        opts.allowed_origins.clone(),
    )
    .with_tokens(opts.tokens.clone());
    let push = push::Push::start(
        &opts.state_dir,
        push::PushConfig {
            insecure_loopback: opts.push_insecure_loopback,
            long_turn: opts.push_long_turn,
            subject: opts.push_contact.clone(),
            action_lifetime: opts.push_action_lifetime,
        },
        board.clone(),
        auth.clone(),
        &observe.metrics,
        stop.subscribe(),
    )?;
    let state = AppState {
        registry: registry.clone(),
        auth,
        push,
        hosts: Arc::new(AllowedHosts::new(
            &opts.allowed_hosts,
            local_addr,
            opts.token.is_some(),
        )?),
        observe,
        board,
        max_ws_message: opts.max_ws_message,
        body_read_timeout: opts.body_read_timeout,
        stop,
    };
    let stop = state.stop.clone();
    let audit = state.observe.clone();
    if let Some(l) = metrics_listener {
        tokio::spawn(api::observe::serve_metrics(
            l,
            state.clone(),
            state.stop.subscribe(),
        ));
    }
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
    serve(listener, app, &opts, stopping).await;
    // The last audit lines (the sessions' ends) reach the disk.
    audit.flush().await;
    // Held to the end: the sessions are over before another duet may start.
    drop(state_lock);
    info!("stopped");
    Ok(())
}

/// Accepts connections until `stopping` resolves, then lets the requests in
/// flight finish and the WebSockets close (bounded by [`DRAIN`]).
///
/// Every connection holds one of `max_connections` permits for as long as
/// its socket is open, WebSockets included, and while the socket closes
/// lingering (at most `socket::LINGER`); one over the cap is closed as
/// soon as it is accepted, so a flood of idle connections cannot use up the
/// process's file descriptors. A connection gets `header_read_timeout` to
/// send each request's headers (the first as well as the next on a kept
/// alive connection), so idle and half-sent connections do not hold their
/// permit for long. HTTP/1.1 only: browsers speak HTTP/2 only over TLS,
/// which ends at the proxy in front of duet.
async fn serve(
    listener: TcpListener,
    app: Router,
    opts: &ServerOptions,
    stopping: impl Future<Output = ()>,
) {
    let permits = Arc::new(Semaphore::new(opts.max_connections));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(opts.header_read_timeout);
    // Each connection task holds a sender; all dropped = all done
    // (mini-redis's shutdown pattern).
    let (done_tx, mut done_rx) = mpsc::channel::<()>(1);
    let (closing_tx, closing) = watch::channel(false);
    let mut over_cap_logged = false;
    tokio::pin!(stopping);
    loop {
        let (tcp, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors (EMFILE) or the like: the error
                    // repeats at once, so pause rather than spin.
                    warn!(?e, "accepting a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut stopping => break,
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            if !over_cap_logged {
                warn!(%remote, max = opts.max_connections, "connection limit reached (--max-connections): closing new connections");
                over_cap_logged = true;
            }
            drop(tcp);
            continue;
        };
        over_cap_logged = false;
        // Keystroke echoes and the last bytes after a Ctrl-C are tiny
        // frames; with Nagle's algorithm they wait for the peer's delayed ACK.
        if let Err(e) = tcp.set_nodelay(true) {
            debug!(?e, "setting TCP_NODELAY");
        }
        let conn = Conn {
            remote,
            local: tcp.local_addr().unwrap_or(remote),
        };
        let app = app.clone();
        let service = hyper::service::service_fn(
            move |mut req: axum::extract::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(conn);
                req.extensions_mut().insert(ConnectInfo(remote));
                tower::Service::call(&mut app.clone(), req)
            },
        );
        let io = TokioIo::new(Socket::new(tcp, permit));
        let connection = http.serve_connection(io, service).with_upgrades();
        let mut closing = closing.clone();
        let done = done_tx.clone();
        tokio::spawn(async move {
            tokio::pin!(connection);
            let result = tokio::select! {
                r = connection.as_mut() => r,
                () = async { let _ = closing.wait_for(|c| *c).await; } => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = result {
                debug!(%remote, ?e, "connection ended");
            }
            drop(done);
        });
    }
    drop(listener);
    closing_tx.send_replace(true);
    drop(done_tx);
    let deadline = tokio::time::Instant::now() + DRAIN;
    if tokio::time::timeout_at(deadline, done_rx.recv())
        .await
        .is_err()
    {
        warn!("requests still running after {DRAIN:?}; stopping anyway");
    }
    // An upgraded connection (a WebSocket) left hyper, and the wait above,
    // at its upgrade; its socket still holds a permit until it is closed.
    // Wait for those too: each client gets its last events, its exit and the
    // close frame that says duet is going away. Returning ended the runtime
    // under them, and a client saw its connection reset instead.
    let all = u32::try_from(opts.max_connections).unwrap_or(u32::MAX);
    if tokio::time::timeout_at(deadline, permits.acquire_many(all))
        .await
        .is_err()
    {
        warn!("connections still open after {DRAIN:?}; stopping anyway");
    }
}
