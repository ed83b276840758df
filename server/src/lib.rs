//! duet: a WebSocket gateway that hosts terminal programs in PTYs and gives
//! browsers both the real terminal and a chat view built from the program's
//! structured side channel (dual output, Claude Code hooks).
//!
//! The binary (`src/main.rs`) only parses flags; everything else is here so
//! tests and benchmarks can run a server in-process on port 0.

pub(crate) mod api;
pub(crate) mod assets;
pub(crate) mod auth;
pub(crate) mod board;
pub mod cli;
pub mod client;
pub(crate) mod clock;
pub mod config;
pub(crate) mod error;
#[cfg(test)]
mod fuzz;
pub(crate) mod guard;
pub mod hook;
pub(crate) mod host;
pub mod instance;
pub(crate) mod observe;
pub mod policy;
pub(crate) mod push;
pub(crate) mod registry;
pub(crate) mod secret;
pub mod server;
pub(crate) mod session;
pub(crate) mod shares;
pub(crate) mod socket;
pub(crate) mod state;
pub mod state_dir;
pub(crate) mod sync;
pub(crate) mod throttle;
pub(crate) mod ws;

pub use server::{run, ServerOptions};
pub use session::SessionLimits;
