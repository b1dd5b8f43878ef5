//! The progress line `anec compile` shows on standard error: the phase and the time, for
//! a compile still running after a second, only when standard error is a terminal and
//! `--quiet` is not given. Cleared when the compile ends.

use anec::progress::{Phase, Progress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long a compile runs before its progress shows.
const DELAY: Duration = Duration::from_secs(1);

/// The delay, unless `ANEC_PROGRESS_DELAY_MS` sets another (the tests show the line for a
/// compile shorter than a second).
fn delay() -> Duration {
    let ms = std::env::var("ANEC_PROGRESS_DELAY_MS").ok().and_then(|v| v.parse().ok());
    ms.map_or(DELAY, Duration::from_millis)
}

/// The progress line of one compile.
pub struct Bar {
    bar: ProgressBar,
    done: Arc<AtomicBool>,
}

impl Bar {
    /// A line that shows after [`DELAY`] if `enabled` (see [`Bar::wanted`]).
    pub fn new(enabled: bool) -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template("{spinner} anec compile: {msg} ({elapsed})") {
            bar.set_style(style);
        }
        let done = Arc::new(AtomicBool::new(false));
        let wait = delay();
        if enabled && wait.is_zero() {
            show(&bar);
        } else if enabled {
            let (bar, done) = (bar.clone(), done.clone());
            // Detached: it sleeps out the delay and shows the line only if the compile
            // is still running.
            std::thread::spawn(move || {
                std::thread::sleep(wait);
                if !done.load(Ordering::SeqCst) {
                    show(&bar);
                }
            });
        }
        Bar { bar, done }
    }

    /// Whether to show progress: standard error is a terminal and `--quiet` is off.
    pub fn wanted(quiet: bool) -> bool {
        !quiet && std::io::stderr().is_terminal()
    }
}

/// Draws `bar` on standard error from now on.
fn show(bar: &ProgressBar) {
    bar.set_draw_target(ProgressDrawTarget::stderr());
    bar.enable_steady_tick(Duration::from_millis(120));
}

impl Progress for Bar {
    fn phase(&self, p: Phase) {
        self.bar.set_message(p.name());
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
        self.bar.finish_and_clear();
    }
}
