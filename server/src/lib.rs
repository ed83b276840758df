//! duet: a WebSocket gateway that hosts terminal programs in PTYs and gives
//! browsers both the real terminal and a chat view built from the program's
//! structured sidecar stream ("dual output").
//!
//! The binary (`src/main.rs`) only parses flags; everything else is here so
//! tests and benchmarks can run a server in-process on port 0.

pub mod api;
pub mod assets;
pub mod auth;
pub mod cli;
pub mod config;
pub mod error;
pub mod host;
pub mod registry;
pub mod server;
pub mod session;
pub mod state_dir;
pub mod throttle;
pub mod watcher;
pub mod ws;

pub use server::{run, ServerOptions};
