//! Bindings of `cmetrics_core::classification`: metrics from a counted matrix.

use cmetrics_core::classification as cls;
use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::arrays::{slice, slice2};
use crate::error::run;

type Vec1<'py> = Bound<'py, PyArray1<f64>>;

fn mat<'a>(c: &'a PyReadonlyArray2<'_, f64>) -> PyResult<&'a [f64]> {
    slice2(c, "confusion matrix")
}

/// `(tp, true_sum, pred_sum, total)` of a matrix.
#[pyfunction]
pub fn marginals<'py>(
    py: Python<'py>,
    c: PyReadonlyArray2<'py, f64>,
) -> PyResult<(Vec1<'py>, Vec1<'py>, Vec1<'py>, f64)> {
    let c = mat(&c)?;
    let m = run(py, || cls::marginals(c))?;
    Ok((
        PyArray1::from_vec(py, m.tp),
        PyArray1::from_vec(py, m.true_sum),
        PyArray1::from_vec(py, m.pred_sum),
        m.total,
    ))
}

/// Per-class precision, recall, F-beta with NaN where 0/0.
#[pyfunction]
pub fn precision_recall_fbeta<'py>(
    py: Python<'py>,
    tp: PyReadonlyArray1<'py, f64>,
    true_sum: PyReadonlyArray1<'py, f64>,
    pred_sum: PyReadonlyArray1<'py, f64>,
    beta: f64,
) -> PyResult<(Vec1<'py>, Vec1<'py>, Vec1<'py>)> {
    let (p, r, f) = cls::precision_recall_fbeta(
        slice(&tp, "tp")?,
        slice(&true_sum, "true_sum")?,
        slice(&pred_sum, "pred_sum")?,
        beta,
    );
    Ok((
        PyArray1::from_vec(py, p),
        PyArray1::from_vec(py, r),
        PyArray1::from_vec(py, f),
    ))
}

/// Accuracy.
#[pyfunction]
pub fn accuracy(py: Python<'_>, c: PyReadonlyArray2<'_, f64>) -> PyResult<f64> {
    let c = mat(&c)?;
    run(py, || cls::accuracy(c))
}

/// Balanced accuracy and the number of classes it averages over.
#[pyfunction]
pub fn balanced_accuracy(
    py: Python<'_>,
    c: PyReadonlyArray2<'_, f64>,
    adjusted: bool,
) -> PyResult<(f64, usize)> {
    let c = mat(&c)?;
    run(py, || cls::balanced_accuracy(c, adjusted))
}

/// Matthews correlation coefficient.
#[pyfunction]
pub fn matthews_corrcoef(py: Python<'_>, c: PyReadonlyArray2<'_, f64>) -> PyResult<f64> {
    let c = mat(&c)?;
    run(py, || cls::matthews_corrcoef(c))
}

/// Cohen's kappa (`weights` is None, "linear" or "quadratic").
#[pyfunction]
#[pyo3(signature = (c, weights=None))]
pub fn cohen_kappa(
    py: Python<'_>,
    c: PyReadonlyArray2<'_, f64>,
    weights: Option<&str>,
) -> PyResult<f64> {
    let kind = match weights {
        None => cls::KappaWeights::Unweighted,
        Some("linear") => cls::KappaWeights::Linear,
        Some("quadratic") => cls::KappaWeights::Quadratic,
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "weights={other:?} is invalid; use None, 'linear' or 'quadratic'"
            )))
        }
    };
    let c = mat(&c)?;
    run(py, || cls::cohen_kappa(c, kind))
}

/// Per-class Youden J (NaN where undefined).
#[pyfunction]
pub fn youden_j_per_class<'py>(
    py: Python<'py>,
    c: PyReadonlyArray2<'py, f64>,
) -> PyResult<Vec1<'py>> {
    let c = mat(&c)?;
    Ok(PyArray1::from_vec(
        py,
        run(py, || cls::youden_j_per_class(c))?,
    ))
}

/// Per-class markedness (NaN where undefined).
#[pyfunction]
pub fn markedness_per_class<'py>(
    py: Python<'py>,
    c: PyReadonlyArray2<'py, f64>,
) -> PyResult<Vec1<'py>> {
    let c = mat(&c)?;
    Ok(PyArray1::from_vec(
        py,
        run(py, || cls::markedness_per_class(c))?,
    ))
}

/// Powers' informedness, optionally with a training prior.
#[pyfunction]
#[pyo3(signature = (c, prior=None))]
pub fn informedness(
    py: Python<'_>,
    c: PyReadonlyArray2<'_, f64>,
    prior: Option<PyReadonlyArray1<'_, f64>>,
) -> PyResult<f64> {
    let c = mat(&c)?;
    let prior = match &prior {
        Some(p) => Some(slice(p, "prior")?),
        None => None,
    };
    run(py, || cls::informedness(c, prior))
}

/// Markedness.
#[pyfunction]
pub fn markedness(py: Python<'_>, c: PyReadonlyArray2<'_, f64>) -> PyResult<f64> {
    let c = mat(&c)?;
    run(py, || cls::markedness(c))
}

/// Mutual information in bits.
#[pyfunction]
pub fn mutual_information_bits(py: Python<'_>, c: PyReadonlyArray2<'_, f64>) -> PyResult<f64> {
    let c = mat(&c)?;
    run(py, || cls::mutual_information_bits(c))
}

/// Normalized Information Transfer.
#[pyfunction]
#[pyo3(signature = (c, n_classes=None))]
pub fn normalized_information_transfer(
    py: Python<'_>,
    c: PyReadonlyArray2<'_, f64>,
    n_classes: Option<usize>,
) -> PyResult<f64> {
    let c = mat(&c)?;
    run(py, || cls::normalized_information_transfer(c, n_classes))
}

/// Entropy-modulated accuracy.
#[pyfunction]
pub fn entropy_modulated_accuracy(py: Python<'_>, c: PyReadonlyArray2<'_, f64>) -> PyResult<f64> {
    let c = mat(&c)?;
    run(py, || cls::entropy_modulated_accuracy(c))
}
