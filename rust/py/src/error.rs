//! The error boundary: core errors and panics become `cmetrics.exceptions` classes.

use std::panic::{catch_unwind, AssertUnwindSafe};

use cmetrics_core::MetricError;
use pyo3::prelude::*;

pyo3::import_exception!(cmetrics.exceptions, ValidationError);
pyo3::import_exception!(cmetrics.exceptions, LengthMismatchError);
pyo3::import_exception!(cmetrics.exceptions, WeightError);
pyo3::import_exception!(cmetrics.exceptions, LimitExceededError);
pyo3::import_exception!(cmetrics.exceptions, InternalError);
pyo3::import_exception!(cmetrics.exceptions, LabelError);
pyo3::import_exception!(cmetrics.exceptions, ProbabilityError);
pyo3::import_exception!(cmetrics.exceptions, NonFiniteError);

/// Newtype for the orphan rule: `From<PyMetricError> for PyErr`.
pub struct PyMetricError(pub MetricError);

impl From<PyMetricError> for PyErr {
    fn from(err: PyMetricError) -> Self {
        let msg = err.0.to_string();
        match err.0 {
            MetricError::LengthMismatch { .. } => LengthMismatchError::new_err(msg),
            MetricError::InvalidWeight { .. } | MetricError::ZeroWeightSum => {
                WeightError::new_err(msg)
            }
            MetricError::LimitExceeded { .. } => LimitExceededError::new_err(msg),
            MetricError::InvalidProbability { .. } | MetricError::RowSum { .. } => {
                ProbabilityError::new_err(msg)
            }
            MetricError::LabelOutOfRange { .. } => LabelError::new_err(msg),
            MetricError::NonFinite { .. } => NonFiniteError::new_err(msg),
            MetricError::Empty { .. }
            | MetricError::Shape { .. }
            | MetricError::InvalidValue { .. } => ValidationError::new_err(msg),
        }
    }
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

/// As [`run`], but keeping the GIL (for kernels that read Python objects).
pub fn run_attached<T>(f: impl FnOnce() -> cmetrics_core::Result<T>) -> PyResult<T> {
    finish(catch_unwind(AssertUnwindSafe(f)))
}

fn finish<T>(caught: std::thread::Result<cmetrics_core::Result<T>>) -> PyResult<T> {
    match caught {
        Ok(result) => result.map_err(|e| PyMetricError(e).into()),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(InternalError::new_err(format!(
                "internal error in cmetrics (please report it): {what}"
            )))
        }
    }
}
