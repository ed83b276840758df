//! The mock model APIs of `support/mocks/` (Gemini API, OpenAI Responses
//! API), checked on their own (their unit tests) and against the real
//! programs they stand in front of: Gemini CLI 0.61.0 headless (`-p`) and
//! Codex 0.171.0 headless (`codex exec`), offline, each with its own HOME.
//! Those two need `scripts/install-gemini.sh` and `scripts/install-codex.sh`
//! (under `DUET_CACHE_DIR`, default `<repo>/.cache`); without them they
//! fail, unless `DUET_SKIP_GEMINI=1` / `DUET_SKIP_CODEX=1`, which make them
//! print a skip line and pass. `acp` drives both through duet's ACP channel
//! (`gemini --acp`, codex-acp); their TUIs through duet are `gemini_e2e` and
//! `codex_e2e`.

#[path = "support/agent/mod.rs"]
mod agent;
#[path = "support/mocks/mod.rs"]
mod mocks;
mod support;

#[path = "agent_mocks/acp.rs"]
mod acp;
#[path = "agent_mocks/acp_turns.rs"]
mod acp_turns;
#[path = "agent_mocks/real.rs"]
mod real;
#[path = "support/agent/turns.rs"]
mod scenarios;
