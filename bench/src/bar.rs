//! Progress of rows. Where stderr is a terminal, an [`indicatif`] bar holds the row's line:
//! its label, the library's own progress reports (setup, synthesis, each proof's phases;
//! `sluice_groth16::progress`), the timed runs done and the time so far; when the row ends
//! the bar gives way to the label, which its result follows. Elsewhere each label is
//! printed as its row starts and the library's default hook logs long work.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sluice_groth16::progress::{set_progress, Progress, ProgressEvent};

/// The bar's line until the library reports work: the label, the runs, the time so far.
const IDLE: &str = "{prefix}| {msg} | {elapsed}";
/// The bar's line once it has: the latest report's bar and share too.
const WORKING: &str = "{prefix}[{bar:24}] {msg} | {elapsed}";
/// How often the bar redraws (its time goes on between reports).
const TICK: Duration = Duration::from_millis(200);

/// Whether the bar is in use ([`install`]).
static ON: AtomicBool = AtomicBool::new(false);

/// The row in progress, where the bar is in use.
static ROW: Mutex<Option<Row>> = Mutex::new(None);

/// A row's bar and what it shows.
struct Row {
    bar: ProgressBar,
    /// What the row's line holds: its label, then any notes since its last newline.
    line: String,
    /// The timed runs, as shown.
    runs: String,
    /// The latest report, as shown (`None` before the first).
    work: Option<String>,
}

impl Row {
    fn show(&self) {
        let message = match &self.work {
            Some(work) => format!("{work} | {}", self.runs),
            None => self.runs.clone(),
        };
        self.bar.set_message(message);
    }
}

fn current() -> MutexGuard<'static, Option<Row>> {
    ROW.lock().unwrap_or_else(PoisonError::into_inner)
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("#.")
}

/// Puts the bar in use, as the library's progress hook too, where stderr is a terminal
/// (elsewhere the library's default hook, which logs long work, stays).
pub fn install() {
    if std::io::stderr().is_terminal() {
        ON.store(true, Ordering::Relaxed);
        set_progress(Arc::new(Hook));
    }
}

/// A row starts; `label` begins its line, which its result ends.
pub fn row_started(label: String) {
    if !ON.load(Ordering::Relaxed) {
        eprint!("{label}");
        return;
    }
    let bar = ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr())
        .with_style(style(IDLE))
        .with_prefix(label.clone());
    let row = Row {
        bar,
        line: label,
        runs: "set-up and warm-up".to_owned(),
        work: None,
    };
    row.show();
    row.bar.enable_steady_tick(TICK);
    if let Some(old) = current().replace(row) {
        old.bar.finish_and_clear();
    }
}

/// `done` of `total` timed runs of the row are done.
pub fn runs(done: usize, total: usize) {
    if let Some(row) = &mut *current() {
        row.runs = format!("run {done}/{total}");
        row.show();
    }
}

/// Prints `text` during a row (after its label, before its result) on the row's line, or
/// above the bar from its last newline on.
pub fn note(text: String) {
    let mut guard = current();
    let Some(row) = &mut *guard else {
        eprint!("{text}");
        return;
    };
    match text.rfind('\n') {
        Some(i) => {
            row.bar.suspend(|| eprint!("{}{}", row.line, &text[..=i]));
            row.line = text[i + 1..].to_owned();
        }
        None => row.line.push_str(&text),
    }
    row.bar.set_prefix(row.line.clone());
}

/// The row ended: the bar gives way to the row's line, for the result to follow.
pub fn row_ended() {
    if let Some(row) = current().take() {
        row.bar.finish_and_clear();
        eprint!("{}", row.line);
    }
}

/// The library's progress hook while the bar is in use: each report on the row's bar.
struct Hook;

impl Progress for Hook {
    fn report(&self, e: &ProgressEvent<'_>) {
        let Some(row) = &mut *current() else {
            return;
        };
        if row.work.is_none() {
            row.bar.set_style(style(WORKING));
        }
        let percent = match e.total {
            0 => 0.0,
            t => (e.done as f64 * 100.0 / t as f64).min(100.0),
        };
        let what = match e.what {
            "" => String::new(),
            w => format!(" {w}"),
        };
        row.work = Some(format!("{}{what} {percent:.0}%", e.task));
        row.bar.set_length(e.total.max(1));
        row.bar.set_position(e.done.min(e.total));
        row.show();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_templates_are_valid() {
        for template in [IDLE, WORKING] {
            assert!(ProgressStyle::with_template(template).is_ok(), "{template}");
        }
    }
}
