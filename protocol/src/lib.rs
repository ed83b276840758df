//! Wire types for duet, serde only: the sidecar events TUIs write, the commands
//! duet writes back to them, and duet's own WebSocket and REST messages.
//!
//! Sidecar events are *modelled*, not *policed*: any event type or field this
//! crate does not know is kept verbatim (see [`sidecar::SidecarEvent::Unknown`]
//! and the `extra` maps), because duet relays what the program wrote and a newer
//! TUI must never be cut off by an older gateway.

pub mod board;
pub mod build;
pub mod command;
pub mod error;
pub mod generate;
pub mod ids;
pub mod push;
pub mod rest;
pub mod sidecar;
pub mod usage;
pub mod ws;

mod double_option;

/// Version of duet's client protocol (the messages in [`ws`] and [`rest`]).
/// Bumped when a change could break an existing client.
pub const PROTOCOL_VERSION: u32 = 1;
