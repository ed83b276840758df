//! Results: one row per measured figure, the machine they were measured on,
//! the table printed at the end and the same as JSON.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use serde::Serialize;

/// Whether bigger or smaller is better for a figure and where its target is.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target {
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
pub struct Row {
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
}

impl Row {
    /// A row; ratio, target text and pass/miss are derived.
    pub fn new(
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
        }
    }

    /// Adds a note (shown under the table and in the JSON).
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.note = note.into();
        self
    }
}

/// A number with as many digits as it deserves.
pub fn fmt(v: f64) -> String {
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
pub struct Machine {
    pub nproc: usize,
    pub cpu_model: String,
    pub kernel: String,
    pub mem_total_gib: f64,
    pub load_at_start: String,
    pub load_at_end: String,
}

impl Machine {
    /// Reads /proc.
    pub fn probe() -> Self {
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
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Everything a run produced.
#[derive(Debug, Serialize)]
pub struct Report {
    pub machine: Machine,
    pub quick: bool,
    pub duration_s: f64,
    /// Load average when each workload started.
    pub load_per_workload: Vec<(String, String)>,
    pub rows: Vec<Row>,
    /// Workloads that failed to run, with the error.
    pub errors: Vec<(String, String)>,
}

impl Report {
    /// The table as Markdown (also what is printed).
    pub fn table(&self) -> String {
        let mut s = String::new();
        s.push_str("| workload | metric | duet | baseline | ratio | target | result |\n");
        s.push_str("|---|---|---:|---:|---:|---|---|\n");
        for r in &self.rows {
            let unit = if r.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", r.unit)
            };
            s.push_str(&format!(
                "| {} | {} | {}{unit} | {} | {} | {} | {} |\n",
                r.workload,
                r.metric,
                fmt(r.duet),
                r.baseline
                    .map_or("—".into(), |b| format!("{}{unit}", fmt(b))),
                r.ratio.map_or("—".into(), |x| format!("{x:.2}×")),
                r.target_text,
                match r.pass {
                    Some(true) => "pass",
                    Some(false) => "**MISS**",
                    None => "info",
                }
            ));
        }
        let notes: Vec<&Row> = self.rows.iter().filter(|r| !r.note.is_empty()).collect();
        if !notes.is_empty() {
            s.push('\n');
            for r in notes {
                s.push_str(&format!("- {} / {}: {}\n", r.workload, r.metric, r.note));
            }
        }
        for (w, e) in &self.errors {
            s.push_str(&format!("- {w}: FAILED TO RUN: {e}\n"));
        }
        s
    }

    /// Prints the header and the table to stdout.
    pub fn print(&self) -> Result<()> {
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
    pub fn write_json(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, serde_json::to_string_pretty(self)?)?;
        Ok(())
    }
}

/// Sorted samples and their percentiles.
pub struct Samples(Vec<f64>);

impl Samples {
    /// From raw values.
    pub fn new(mut v: Vec<f64>) -> Self {
        v.sort_by(|a, b| a.total_cmp(b));
        Self(v)
    }

    /// The `p`th percentile (nearest rank), 0 when empty.
    pub fn pct(&self, p: f64) -> f64 {
        if self.0.is_empty() {
            return 0.0;
        }
        let rank = ((p / 100.0) * self.0.len() as f64).ceil() as usize;
        self.0[rank.clamp(1, self.0.len()) - 1]
    }

    /// The largest sample.
    pub fn max(&self) -> f64 {
        self.0.last().copied().unwrap_or(0.0)
    }
}
