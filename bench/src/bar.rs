//! A progress bar for long rows, on stderr where stderr is a terminal: the row's label, the
//! timed runs done, and the library's own progress reports (setup, synthesis, each proof's
//! phases; `sluice_groth16::progress`), redrawn in place on the row's line.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use sluice_groth16::progress::{set_progress, Progress, ProgressEvent, Task};

/// A row shows its bar once it has run this long.
const SHOW_AFTER: Duration = Duration::from_secs(1);
/// At most this often.
const REDRAW: Duration = Duration::from_millis(100);
/// Cells of the bar.
const WIDTH: usize = 24;

#[derive(Default)]
struct State {
    /// The row's label as printed, and when the row started; `None` between rows.
    row: Option<(String, Instant)>,
    /// Timed runs done and in all.
    runs: (usize, usize),
    /// The latest library report: task, piece, done, total.
    work: Option<(Task, String, u64, u64)>,
    drawn: Option<Instant>,
}

/// The bar; one per process ([`install`]).
#[derive(Default)]
pub struct Bar(Mutex<State>);

static BAR: Mutex<Option<Arc<Bar>>> = Mutex::new(None);

/// Installs the bar as the progress hook where stderr is a terminal (elsewhere the
/// library's default, which logs long work, stays).
pub fn install() {
    if std::io::stderr().is_terminal() {
        let bar = Arc::new(Bar::default());
        set_progress(bar.clone());
        *BAR.lock().unwrap_or_else(PoisonError::into_inner) = Some(bar);
    }
}

fn with_bar(f: impl FnOnce(&Bar)) {
    if let Some(bar) = BAR.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
        f(bar);
    }
}

/// A row starts; `label` is what was printed of its line so far.
pub fn row_started(label: &str) {
    with_bar(|b| {
        *b.state() = State {
            row: Some((label.to_owned(), Instant::now())),
            ..State::default()
        }
    });
}

/// `done` of `total` timed runs of the row are done.
pub fn runs(done: usize, total: usize) {
    with_bar(|b| {
        b.state().runs = (done, total);
        b.draw(false);
    });
}

/// Prints `text` during a row (after its label, before its result) where the bar would
/// otherwise draw over it: the bar's line is cleared first and the text kept on the line.
pub fn note(text: String) {
    let mut kept = false;
    with_bar(|b| {
        let mut s = b.state();
        let drawn = s.drawn.is_some();
        if let Some((label, _)) = &mut s.row {
            if drawn {
                eprint!("\r\x1b[2K{label}");
            }
            eprint!("{text}");
            // The bar redraws the line from its last newline on.
            match text.rfind('\n') {
                Some(i) => *label = text[i + 1..].to_owned(),
                None => label.push_str(&text),
            }
            kept = true;
        }
    });
    if !kept {
        eprint!("{text}");
    }
}

/// The row ended: its line is back to its label, for the result to follow.
pub fn row_ended() {
    with_bar(|b| {
        b.draw(true);
        b.state().row = None;
    });
}

impl Bar {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn draw(&self, clear: bool) {
        let mut s = self.state();
        let Some((label, started)) = s.row.clone() else {
            return;
        };
        let now = Instant::now();
        let due = match s.drawn {
            Some(d) => now - d >= REDRAW,
            None => true,
        };
        if clear {
            if s.drawn.is_some() {
                eprint!("\r\x1b[2K{label}");
            }
            return;
        }
        if now - started < SHOW_AFTER || !due {
            return;
        }
        s.drawn = Some(now);
        let mut line = format!("\r\x1b[2K{label}");
        if let Some((task, what, done, total)) = &s.work {
            let fraction = match *total {
                0 => 0.0,
                t => (*done as f64 / t as f64).min(1.0),
            };
            let cells = (fraction * WIDTH as f64) as usize;
            line += &format!(
                "[{}{}] {task} {what} {:.0}% ",
                "#".repeat(cells),
                ".".repeat(WIDTH - cells),
                fraction * 100.0
            );
        }
        let runs = match s.runs {
            (_, 0) => "set-up and warm-up".to_owned(),
            (done, total) => format!("run {done}/{total}"),
        };
        line += &format!("| {runs} | {:.0} s", (now - started).as_secs_f64());
        eprint!("{line}");
        let _ = std::io::stderr().flush();
    }
}

impl Progress for Bar {
    fn report(&self, e: &ProgressEvent<'_>) {
        self.state().work = Some((e.task, e.what.to_owned(), e.done, e.total));
        self.draw(false);
    }
}
