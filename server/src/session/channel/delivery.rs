//! Prompt delivery: no prompt sent to duet is ever lost, and none reaches
//! the agent twice.
//!
//! A prompt goes out when the agent can take it: when it is idle, or at
//! once for a channel whose agent queues prompts itself. Prompts sent
//! meanwhile are held in order. A prompt counts as delivered only when the
//! agent's own `user` event for it appears. Agents drop prompts silently —
//! Qwen Code 0.15 before it has initialised its chat, or mid-turn — so a
//! prompt the agent has not shown while it sat idle for [`REDELIVER_AFTER`]
//! is written once more; if that copy is
//! not shown either, duet gives up on it with a warning and goes on with
//! the next. Redelivery happens only while the agent is idle, and the echo
//! of the first copy ends it, so an agent that took the prompt never gets
//! it twice.
//!
//! An agent that keeps every prompt it reads (Qwen Code 0.24: dual output
//! protocol 2) is never sent a copy: it may hold a prompt behind a dialog
//! open in its terminal, or fold it into a turn with no `user` event of its
//! own, and would answer a copy twice. Such a prompt counts as taken once
//! it has waited [`UNSHOWN_AFTER`], with a warning, and the next one may go.
//!
//! Slash commands are the agent's own business (Qwen Code writes no event
//! for them): they go out once, with no echo to wait for.
//!
//! Held prompts are numbered in their session: the numbers name them on
//! disk (`held.rs`) and to clients once they are unsent.
//!
//! Pure state; the [`Conversation`](super::Conversation) drives it.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use duet_protocol::ws::HeldPrompt;

/// How long an idle agent may go without showing a written prompt before
/// it is written again. Qwen Code polls its input file every 500 ms and
/// writes the `user` event as it takes the prompt.
pub(crate) const REDELIVER_AFTER: Duration = Duration::from_secs(3);

/// How long an idle agent that keeps its prompts may go without showing
/// one before duet stops waiting for it. Longer than [`REDELIVER_AFTER`]:
/// nothing is lost by waiting, and Qwen Code 0.24 shows a prompt written at
/// `session_start` only once its UI is up, 1.8 s later when idle and more
/// than 3 s later with other sessions starting.
pub(crate) const UNSHOWN_AFTER: Duration = Duration::from_secs(10);

/// Copies of one prompt written at most.
const MAX_ATTEMPTS: u32 = 2;

/// Why a prompt was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DeliveryError {
    #[error("{0} prompts are already waiting for the agent; try again later")]
    QueueFull(usize),
    #[error("the program has exited")]
    Closed,
}

/// Whether a prompt went out at once or is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Accepted {
    Written,
    Queued,
}

/// What the driver must do after a [`Delivery::tick`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Overdue {
    /// Write this prompt again.
    Redeliver(String),
    /// The agent never showed this prompt; it was dropped.
    GaveUp(String),
    /// The agent has not shown this prompt, but keeps what it reads (see
    /// [`Delivery::keeps_prompts`]): counted as taken, not written again.
    Unshown(String),
}

struct InFlight {
    text: String,
    attempts: u32,
    written_at: Instant,
}

/// See the module docs.
pub(crate) struct Delivery {
    held: VecDeque<HeldPrompt>,
    /// The number of the last prompt taken.
    last_n: u64,
    in_flight: Option<InFlight>,
    max_held: usize,
    closed: bool,
    /// Whether an unshown prompt is written again.
    resend: bool,
}

impl Delivery {
    /// No prompts yet; at most `max_held` waiting.
    pub(crate) fn new(max_held: usize) -> Self {
        Self {
            held: VecDeque::new(),
            last_n: 0,
            in_flight: None,
            max_held,
            closed: false,
            resend: true,
        }
    }

    /// The agent keeps every prompt it reads, so none is written twice
    /// (see the module docs).
    pub(crate) fn keeps_prompts(&mut self) {
        self.resend = false;
    }

    /// Numbers new prompts after `n` (prompts numbered already, kept
    /// from an earlier session).
    pub(crate) fn number_after(&mut self, n: u64) {
        self.last_n = self.last_n.max(n);
    }

    /// Takes a prompt; [`Delivery::next`] says when to write it.
    pub(crate) fn submit(&mut self, text: String) -> Result<(), DeliveryError> {
        if self.closed {
            return Err(DeliveryError::Closed);
        }
        if self.held.len() >= self.max_held {
            return Err(DeliveryError::QueueFull(self.max_held));
        }
        self.last_n += 1;
        self.held.push_back(HeldPrompt {
            n: self.last_n,
            text,
        });
        Ok(())
    }

    /// The prompts to write now, in order, given whether the agent can
    /// take one (`ready`). Marks the last one in flight.
    pub(crate) fn next(&mut self, ready: bool, now: Instant) -> Vec<String> {
        let mut out = Vec::new();
        while ready && self.in_flight.is_none() && !self.closed {
            let Some(HeldPrompt { text, .. }) = self.held.pop_front() else {
                break;
            };
            if !is_slash_command(&text) {
                self.in_flight = Some(InFlight {
                    text: text.clone(),
                    attempts: 1,
                    written_at: now,
                });
            }
            out.push(text);
        }
        out
    }

    /// The agent showed a prompt (its `user` event): if it is the one in
    /// flight, it is delivered. Returns whether it was.
    pub(crate) fn echoed(&mut self, text: &str) -> bool {
        let matches = self
            .in_flight
            .as_ref()
            .is_some_and(|f| same_prompt(&f.text, text));
        if matches {
            self.in_flight = None;
        }
        matches
    }

    /// Called now and then: a prompt in flight that an agent idle since
    /// `idle_since` has not shown for [`REDELIVER_AFTER`] is overdue.
    pub(crate) fn tick(&mut self, idle_since: Option<Instant>, now: Instant) -> Option<Overdue> {
        let idle_since = idle_since?;
        let f = self.in_flight.as_mut()?;
        let waiting_since = f.written_at.max(idle_since);
        let wait = if self.resend {
            REDELIVER_AFTER
        } else {
            UNSHOWN_AFTER
        };
        if now.duration_since(waiting_since) < wait {
            return None;
        }
        if !self.resend {
            let text = self.in_flight.take()?.text;
            return Some(Overdue::Unshown(text));
        }
        if f.attempts < MAX_ATTEMPTS {
            f.attempts += 1;
            f.written_at = now;
            return Some(Overdue::Redeliver(f.text.clone()));
        }
        let text = self.in_flight.take()?.text;
        Some(Overdue::GaveUp(text))
    }

    /// Prompts waiting to be written.
    pub(crate) fn held(&self) -> usize {
        self.held.len()
    }

    /// The prompts waiting to be written, oldest first.
    pub(crate) fn held_prompts(&self) -> std::collections::vec_deque::Iter<'_, HeldPrompt> {
        self.held.iter()
    }

    /// The program is gone: refuse new prompts; returns the held ones,
    /// which it never took.
    pub(crate) fn close(&mut self) -> Vec<HeldPrompt> {
        self.closed = true;
        self.in_flight = None;
        self.held.drain(..).collect()
    }
}

/// Whether `text` is a slash command (handled by the agent's UI, no event).
pub(crate) fn is_slash_command(text: &str) -> bool {
    text.trim_start().starts_with('/')
}

/// Agents trim what they are given, and some add to it (attached context);
/// the prompt is theirs if its words are all there.
fn same_prompt(sent: &str, shown: &str) -> bool {
    let sent = sent.trim();
    !sent.is_empty() && shown.contains(sent)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(base: Instant, ms: u64) -> Instant {
        base + Duration::from_millis(ms)
    }

    #[test]
    fn holds_until_ready_then_one_turn_at_a_time() {
        let t = Instant::now();
        let mut d = Delivery::new(3);
        d.submit("one".into()).unwrap();
        d.submit("/help".into()).unwrap();
        d.submit("two".into()).unwrap();
        assert_eq!(d.submit("y".into()), Err(DeliveryError::QueueFull(3)));
        assert!(d.next(false, t).is_empty());
        assert_eq!(d.next(true, t), ["one"]);
        // "one" is in flight: nothing else goes out, even when idle.
        assert!(d.next(true, t).is_empty());
        assert!(d.echoed("  one "));
        // A slash command goes out with the next prompt behind it.
        assert_eq!(d.next(true, t), ["/help", "two"]);
        assert!(!d.echoed("something the user typed"));
        assert!(d.echoed("two"));
    }

    #[test]
    fn held_prompts_are_numbered_and_given_back_when_the_program_is_gone() {
        let t = Instant::now();
        let mut d = Delivery::new(8);
        // Two prompts kept from an earlier session are numbered 1 and 2.
        d.number_after(2);
        for text in ["one", "two", "three"] {
            d.submit(text.into()).unwrap();
        }
        assert_eq!(d.next(true, t), ["one"]);
        let held: Vec<u64> = d.held_prompts().map(|p| p.n).collect();
        assert_eq!(held, [4, 5]);
        let dropped = d.close();
        assert_eq!(
            dropped,
            [
                HeldPrompt {
                    n: 4,
                    text: "two".into()
                },
                HeldPrompt {
                    n: 5,
                    text: "three".into()
                }
            ]
        );
        assert_eq!(d.held(), 0);
    }

    #[test]
    fn a_prompt_the_idle_agent_never_shows_is_written_once_more_then_dropped() {
        let t = Instant::now();
        let mut d = Delivery::new(8);
        d.submit("hello".into()).unwrap();
        d.submit("next".into()).unwrap();
        assert_eq!(d.next(true, t), ["hello"]);
        // Busy (no idle time): never overdue.
        assert_eq!(d.tick(None, at(t, 60_000)), None);
        // Idle, but not for long enough.
        assert_eq!(d.tick(Some(t), at(t, 2_000)), None);
        assert_eq!(
            d.tick(Some(t), at(t, 3_000)),
            Some(Overdue::Redeliver("hello".into()))
        );
        assert_eq!(d.tick(Some(t), at(t, 4_000)), None);
        assert_eq!(
            d.tick(Some(t), at(t, 6_000)),
            Some(Overdue::GaveUp("hello".into()))
        );
        assert_eq!(d.next(true, at(t, 6_000)), ["next"]);
    }

    #[test]
    fn an_agent_that_keeps_prompts_never_gets_a_copy() {
        let t = Instant::now();
        let mut d = Delivery::new(8);
        d.keeps_prompts();
        d.submit("after the help".into()).unwrap();
        d.submit("next".into()).unwrap();
        assert_eq!(d.next(true, t), ["after the help"]);
        assert_eq!(d.tick(Some(t), at(t, 9_000)), None);
        assert_eq!(
            d.tick(Some(t), at(t, 10_000)),
            Some(Overdue::Unshown("after the help".into()))
        );
        assert_eq!(d.tick(Some(t), at(t, 60_000)), None);
        assert_eq!(d.next(true, at(t, 10_000)), ["next"]);
    }

    #[test]
    fn the_echo_of_the_first_copy_ends_redelivery() {
        let t = Instant::now();
        let mut d = Delivery::new(8);
        d.submit("hello".into()).unwrap();
        d.next(true, t);
        // Idle only from 2 s on (e.g. the agent finished starting up).
        assert_eq!(d.tick(Some(at(t, 2_000)), at(t, 4_000)), None);
        assert!(d.echoed("hello"));
        assert_eq!(d.tick(Some(t), at(t, 60_000)), None);
        assert_eq!(d.close(), []);
        assert_eq!(d.submit("x".into()), Err(DeliveryError::Closed));
    }
}
