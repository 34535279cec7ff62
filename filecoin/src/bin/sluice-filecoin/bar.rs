//! Progress where stderr is a terminal: an indicatif spinner showing sluice's own reports
//! (setup, synthesis, each proof's phases, partitions). Elsewhere the library's default
//! hook logs long work.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use sluice::progress::{set_progress, Progress, ProgressEvent};

/// The bar of the work in progress, where stderr is a terminal.
static BAR: Mutex<Option<ProgressBar>> = Mutex::new(None);

struct BarProgress;

impl Progress for BarProgress {
    fn report(&self, event: &ProgressEvent<'_>) {
        if let Some(bar) = &*lock() {
            let share = (event.done * 100)
                .checked_div(event.total)
                .map_or(String::new(), |p| format!(" {p}%"));
            bar.set_message(format!(
                "{:?} {}: {} of {} {}{share}",
                event.task,
                event.what,
                event.done,
                event.total,
                event.task.unit()
            ));
        }
    }
}

/// Routes the library's progress to the bar where stderr is a terminal.
pub fn install() {
    if std::io::stderr().is_terminal() {
        set_progress(Arc::new(BarProgress));
    }
}

/// Starts a spinner labelled `label` (nothing where stderr is no terminal).
pub fn start(label: &str) {
    if !std::io::stderr().is_terminal() {
        return;
    }
    let bar = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {prefix} | {msg} | {elapsed}") {
        bar.set_style(style);
    }
    bar.set_prefix(label.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    *lock() = Some(bar);
}

/// Clears the spinner.
pub fn finish() {
    if let Some(bar) = lock().take() {
        bar.finish_and_clear();
    }
}

fn lock() -> MutexGuard<'static, Option<ProgressBar>> {
    BAR.lock().unwrap_or_else(PoisonError::into_inner)
}
