//! The error boundary: core errors and panics become `cmetrics.exceptions`
//! classes, and long kernels stop on Ctrl-C.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cmetrics_core::{MetricError, Pool};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;

pyo3::import_exception!(cmetrics.exceptions, ValidationError);
pyo3::import_exception!(cmetrics.exceptions, LengthMismatchError);
pyo3::import_exception!(cmetrics.exceptions, ShapeError);
pyo3::import_exception!(cmetrics.exceptions, WeightError);
pyo3::import_exception!(cmetrics.exceptions, LimitExceededError);
pyo3::import_exception!(cmetrics.exceptions, OutOfMemoryError);
pyo3::import_exception!(cmetrics.exceptions, InternalError);
pyo3::import_exception!(cmetrics.exceptions, LabelError);
pyo3::import_exception!(cmetrics.exceptions, ProbabilityError);
pyo3::import_exception!(cmetrics.exceptions, NonFiniteError);
pyo3::import_exception!(cmetrics.exceptions, UnsupportedDtypeError);

/// Newtype for the orphan rule: `From<PyMetricError> for PyErr`.
pub struct PyMetricError(pub MetricError);

impl From<PyMetricError> for PyErr {
    fn from(err: PyMetricError) -> Self {
        let msg = err.0.to_string();
        match err.0 {
            MetricError::LengthMismatch { .. } => LengthMismatchError::new_err(msg),
            MetricError::InvalidWeight { .. }
            | MetricError::ZeroWeightSum
            | MetricError::WeightRange { .. } => WeightError::new_err(msg),
            MetricError::LimitExceeded { .. } => LimitExceededError::new_err(msg),
            MetricError::InvalidProbability { .. } | MetricError::RowSum { .. } => {
                ProbabilityError::new_err(msg)
            }
            MetricError::LabelOutOfRange { .. } => LabelError::new_err(msg),
            MetricError::NonFinite { .. } | MetricError::IsNan { .. } => {
                NonFiniteError::new_err(msg)
            }
            MetricError::Empty { .. } | MetricError::Shape { .. } => ShapeError::new_err(msg),
            MetricError::InvalidValue { .. } => ValidationError::new_err(msg),
            MetricError::OutOfMemory { .. } => OutOfMemoryError::new_err(msg),
            MetricError::Interrupted => PyKeyboardInterrupt::new_err(msg),
        }
    }
}

/// Where the panic hook leaves the message of the last panic (printing it to
/// stderr is the default hook's doing, which this module replaces).
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Replace the panic hook of this extension: a panic is a bug that reaches
/// Python as `InternalError` with its message and location; nothing is
/// printed.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = Some(format!("{what}{at}"));
        }
    }));
}

/// Run a core call with the GIL released; a core error becomes its exception
/// class and a panic (a bug) becomes `InternalError`, which `except Exception`
/// catches, instead of pyo3's `PanicException`.
pub fn run<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> cmetrics_core::Result<T> + Send,
) -> PyResult<T> {
    finish(py.detach(|| catch_unwind(AssertUnwindSafe(f))))
}

/// Inputs from this many rows on run on a thread of their own while the
/// calling thread watches for Ctrl-C (a thread costs tens of microseconds).
pub const WATCH_ROWS: usize = 1 << 20;

/// As [`run`] for a kernel over `rows` rows that takes a pool: from
/// [`WATCH_ROWS`] rows on, the kernel runs on a scoped thread and the calling
/// thread, GIL released, wakes every 50 ms to run Python's signal handlers.
/// When one raises (Ctrl-C: `KeyboardInterrupt`), the pool's stop flag is set,
/// the kernel returns at its next check (a few milliseconds to a fraction of
/// a second) and the exception is raised.
pub fn run_pool<T: Send>(
    py: Python<'_>,
    rows: usize,
    pool: &Pool,
    f: impl FnOnce(&Pool) -> cmetrics_core::Result<T> + Send,
) -> PyResult<T> {
    if rows < WATCH_ROWS {
        return run(py, || f(pool));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let pool = pool.clone().with_stop(Arc::clone(&stop));
    let pool = &pool;
    // The kernel, taken by whichever thread runs it.
    let job = Mutex::new(Some(f));
    let job = &job;
    let take = || job.lock().ok().and_then(|mut slot| slot.take());
    std::thread::scope(|scope| {
        let (tx, mut rx) = mpsc::sync_channel(1);
        let spawned = std::thread::Builder::new()
            .name("cmetrics-kernel".into())
            .spawn_scoped(scope, move || {
                if let Some(f) = take() {
                    let _ = tx.send(catch_unwind(AssertUnwindSafe(|| f(pool))));
                }
            });
        if spawned.is_err() {
            // No thread to be had (the address space is capped, say): run the kernel here,
            // without watching for Ctrl-C, rather than fail the call.
            return match take() {
                Some(f) => finish(py.detach(|| catch_unwind(AssertUnwindSafe(|| f(pool))))),
                None => Err(InternalError::new_err(
                    "internal error in cmetrics (please report it): a kernel could not be started",
                )),
            };
        }
        loop {
            let (got, back) = py.detach(move || (rx.recv_timeout(Duration::from_millis(50)), rx));
            rx = back;
            match got {
                Ok(result) => return finish(result),
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals() {
                        stop.store(true, Ordering::Relaxed);
                        let _ = py.detach(move || rx.recv());
                        return Err(e);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(InternalError::new_err(
                        "internal error in cmetrics (please report it): a kernel thread ended without a result",
                    ))
                }
            }
        }
    })
}

/// As [`run`], but keeping the GIL (for kernels that read Python objects).
pub fn run_attached<T>(f: impl FnOnce() -> cmetrics_core::Result<T>) -> PyResult<T> {
    finish(catch_unwind(AssertUnwindSafe(f)))
}

fn finish<T>(caught: std::thread::Result<cmetrics_core::Result<T>>) -> PyResult<T> {
    match caught {
        Ok(result) => result.map_err(|e| PyMetricError(e).into()),
        Err(payload) => {
            let hooked = LAST_PANIC.lock().ok().and_then(|mut last| last.take());
            let what = hooked
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(InternalError::new_err(format!(
                "internal error in cmetrics (please report it): {what}"
            )))
        }
    }
}
