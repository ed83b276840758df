//! Results: one row per measured figure, the machine they were measured on,
//! the table printed at the end and the same as JSON.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use serde::Serialize;

/// Whether bigger or smaller is better for a figure and where its target is.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Target {
    /// `duet >= value`.
    AtLeast { value: f64 },
    /// `duet <= value`.
    AtMost { value: f64 },
    /// `duet / baseline >= value`.
    RatioAtLeast { value: f64 },
    /// `duet <= baseline * value`.
    RatioAtMost { value: f64 },
    /// `duet <= baseline + value`.
    PlusAtMost { value: f64 },
    /// Reported for context, no target.
    Info,
}

/// One measured figure.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    pub workload: String,
    pub metric: String,
    pub unit: String,
    pub duet: f64,
    pub baseline: Option<f64>,
    pub ratio: Option<f64>,
    pub target: Target,
    pub target_text: String,
    pub pass: Option<bool>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// The same figure for each peer gateway (`--peer`) that ran it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub peers: Vec<PeerCell>,
}

/// One peer's figure for a row.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PeerCell {
    pub peer: String,
    /// `None` when the peer failed this workload (see `note`).
    pub value: Option<f64>,
    /// `value / duet`: above 1 means the peer's figure is bigger.
    pub vs_duet: Option<f64>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
}

impl Row {
    /// A row; ratio, target text and pass/miss are derived.
    pub(crate) fn new(
        workload: &str,
        metric: &str,
        unit: &str,
        duet: f64,
        baseline: Option<f64>,
        target: Target,
    ) -> Self {
        let ratio = baseline.filter(|b| *b != 0.0).map(|b| duet / b);
        let (pass, target_text) = match &target {
            Target::AtLeast { value } => (Some(duet >= *value), format!("≥ {}", fmt(*value))),
            Target::AtMost { value } => (Some(duet <= *value), format!("≤ {}", fmt(*value))),
            Target::RatioAtLeast { value } => {
                (ratio.map(|r| r >= *value), format!("≥ {value}× bare"))
            }
            Target::RatioAtMost { value } => (
                baseline.map(|b| duet <= b * value),
                format!("≤ {value}× base"),
            ),
            Target::PlusAtMost { value } => (
                baseline.map(|b| duet <= b + value),
                format!("≤ bare + {}", fmt(*value)),
            ),
            Target::Info => (None, "—".into()),
        };
        Self {
            workload: workload.into(),
            metric: metric.into(),
            unit: unit.into(),
            duet,
            baseline,
            ratio,
            target,
            target_text,
            pass,
            note: String::new(),
            peers: Vec::new(),
        }
    }

    /// Adds a peer's figure for the same metric.
    pub(crate) fn peer(mut self, peer: &str, value: f64, note: impl Into<String>) -> Self {
        self.peers.push(PeerCell {
            peer: peer.into(),
            value: Some(value),
            vs_duet: (self.duet != 0.0).then(|| value / self.duet),
            note: note.into(),
        });
        self
    }

    /// Records that a peer could not run this figure.
    pub(crate) fn peer_failed(mut self, peer: &str, error: &anyhow::Error) -> Self {
        self.peers.push(PeerCell {
            peer: peer.into(),
            value: None,
            vs_duet: None,
            note: format!("failed: {error:#}"),
        });
        self
    }

    /// Adds a note (shown under the table and in the JSON).
    pub(crate) fn note(mut self, note: impl Into<String>) -> Self {
        self.note = note.into();
        self
    }
}

/// A number with as many digits as it deserves.
pub(crate) fn fmt(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 || a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// The machine and conditions of a run.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Machine {
    pub nproc: usize,
    pub cpu_model: String,
    pub kernel: String,
    pub mem_total_gib: f64,
    pub load_at_start: String,
    pub load_at_end: String,
}

impl Machine {
    /// Reads /proc.
    pub(crate) fn probe() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let mem_total_gib = std::fs::read_to_string("/proc/meminfo")
            .unwrap_or_default()
            .lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / (1024.0 * 1024.0));
        Self {
            nproc: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu_model,
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
                .to_string(),
            mem_total_gib,
            load_at_start: loadavg(),
            load_at_end: String::new(),
        }
    }
}

/// `/proc/loadavg`'s three load averages.
pub(crate) fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Everything a run produced.
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    pub machine: Machine,
    /// The peer gateways measured alongside duet, in column order.
    pub peers: Vec<String>,
    pub quick: bool,
    pub duration_s: f64,
    /// Load average when each workload started.
    pub load_per_workload: Vec<(String, String)>,
    pub rows: Vec<Row>,
    /// Workloads that failed to run, with the error.
    pub errors: Vec<(String, String)>,
}

impl Report {
    /// The table as Markdown (also what is printed). Each peer adds a
    /// column with its figure and one with its figure ÷ duet's.
    pub(crate) fn table(&self) -> String {
        let mut s = String::new();
        s.push_str("| workload | metric | duet | baseline | ratio |");
        for p in &self.peers {
            s.push_str(&format!(" {p} | {p} ÷ duet |"));
        }
        s.push_str(" target | result |\n|---|---|---:|---:|---:|");
        for _ in &self.peers {
            s.push_str("---:|---:|");
        }
        s.push_str("---|---|\n");
        for r in &self.rows {
            let unit = if r.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", r.unit)
            };
            s.push_str(&format!(
                "| {} | {} | {}{unit} | {} | {} |",
                r.workload,
                r.metric,
                fmt(r.duet),
                r.baseline
                    .map_or("—".into(), |b| format!("{}{unit}", fmt(b))),
                r.ratio.map_or("—".into(), |x| format!("{x:.2}×")),
            ));
            for p in &self.peers {
                match r.peers.iter().find(|c| &c.peer == p) {
                    Some(PeerCell {
                        value: Some(v),
                        vs_duet,
                        ..
                    }) => s.push_str(&format!(
                        " {}{unit} | {} |",
                        fmt(*v),
                        vs_duet.map_or("—".into(), |x| format!("{x:.2}×"))
                    )),
                    Some(_) => s.push_str(" failed | — |"),
                    None => s.push_str(" — | — |"),
                }
            }
            s.push_str(&format!(
                " {} | {} |\n",
                r.target_text,
                match r.pass {
                    Some(true) => "pass",
                    Some(false) => "**MISS**",
                    None => "info",
                }
            ));
        }
        let mut notes = Vec::new();
        for r in &self.rows {
            if !r.note.is_empty() {
                notes.push(format!("- {} / {}: {}\n", r.workload, r.metric, r.note));
            }
            for c in r.peers.iter().filter(|c| !c.note.is_empty()) {
                notes.push(format!(
                    "- {} / {} ({}): {}\n",
                    r.workload, r.metric, c.peer, c.note
                ));
            }
        }
        if !notes.is_empty() {
            s.push('\n');
            s.extend(notes);
        }
        for (w, e) in &self.errors {
            s.push_str(&format!("- {w}: FAILED TO RUN: {e}\n"));
        }
        s
    }

    /// Prints the header and the table to stdout.
    pub(crate) fn print(&self) -> Result<()> {
        let m = &self.machine;
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "\nduet-bench{}: {} × {} ({:.0} GiB), Linux {}; load {} → {}; {:.0} s\n",
            if self.quick { " --quick" } else { "" },
            m.nproc,
            m.cpu_model,
            m.mem_total_gib,
            m.kernel,
            m.load_at_start,
            m.load_at_end,
            self.duration_s
        )?;
        out.write_all(self.table().as_bytes())?;
        Ok(())
    }

    /// Writes the JSON file (creating its directory).
    pub(crate) fn write_json(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, serde_json::to_string_pretty(self)?)?;
        Ok(())
    }
}

/// Sorted samples and their percentiles.
pub(crate) struct Samples(Vec<f64>);

impl Samples {
    /// From raw values.
    pub(crate) fn new(mut v: Vec<f64>) -> Self {
        v.sort_by(|a, b| a.total_cmp(b));
        Self(v)
    }

    /// The `p`th percentile (nearest rank), 0 when empty.
    pub(crate) fn pct(&self, p: f64) -> f64 {
        if self.0.is_empty() {
            return 0.0;
        }
        let rank = ((p / 100.0) * self.0.len() as f64).ceil() as usize;
        self.0[rank.clamp(1, self.0.len()) - 1]
    }

    /// The largest sample.
    pub(crate) fn max(&self) -> f64 {
        self.0.last().copied().unwrap_or(0.0)
    }
}
