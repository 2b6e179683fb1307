//! Bindings of `cmetrics_core::classification`: metrics from a counted matrix.

use cmetrics_core::classification as cls;
use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

use crate::arrays::{check_2d, slice, slice2, table};
use crate::error::{run, ValidationError};
use crate::results::named;

/// One binding per metric of a matrix alone: `name(c) -> T`, the core call with the GIL
/// released (vectors come back as numpy arrays).
macro_rules! of_matrix {
    ($($(#[$doc:meta])* $name:ident -> f64;)*) => {$(
        $(#[$doc])*
        #[pyfunction]
        pub fn $name(py: Python<'_>, c: &Bound<'_, PyAny>) -> PyResult<f64> {
            let t = table(c)?;
            let c = t.cells();
            run(py, || cls::$name(c))
        }
    )*};
    ($($(#[$doc:meta])* $name:ident -> vec;)*) => {$(
        $(#[$doc])*
        #[pyfunction]
        pub fn $name<'py>(py: Python<'py>, c: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<f64>>> {
            let t = table(c)?;
            let c = t.cells();
            Ok(PyArray1::from_vec(py, run(py, || cls::$name(c))?))
        }
    )*};
}

of_matrix! {
    /// Accuracy.
    accuracy -> f64;
    /// Matthews correlation coefficient.
    matthews_corrcoef -> f64;
    /// Markedness.
    markedness -> f64;
    /// Mutual information in bits.
    mutual_information_bits -> f64;
    /// Entropy-modulated accuracy.
    entropy_modulated_accuracy -> f64;
}

of_matrix! {
    /// Per-class Youden J (NaN where undefined).
    youden_j_per_class -> vec;
    /// Per-class markedness (NaN where undefined).
    markedness_per_class -> vec;
}

/// `Marginals(tp, true_sum, pred_sum, total)` of a matrix.
#[pyfunction]
pub fn marginals<'py>(py: Python<'py>, c: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let t = table(c)?;
    let c = t.cells();
    let m = run(py, || cls::marginals(c))?;
    named!(
        py,
        "Marginals",
        PyArray1::from_vec(py, m.tp),
        PyArray1::from_vec(py, m.true_sum),
        PyArray1::from_vec(py, m.pred_sum),
        m.total
    )
}

/// `PRF(precision, recall, fbeta)` per class, NaN where 0/0.
#[pyfunction]
pub fn precision_recall_fbeta<'py>(
    py: Python<'py>,
    tp: PyReadonlyArray1<'py, f64>,
    true_sum: PyReadonlyArray1<'py, f64>,
    pred_sum: PyReadonlyArray1<'py, f64>,
    beta: f64,
) -> PyResult<Bound<'py, PyAny>> {
    let (p, r, f) = cls::precision_recall_fbeta(
        slice(&tp, "tp")?,
        slice(&true_sum, "true_sum")?,
        slice(&pred_sum, "pred_sum")?,
        beta,
    );
    named!(
        py,
        "PRF",
        PyArray1::from_vec(py, p),
        PyArray1::from_vec(py, r),
        PyArray1::from_vec(py, f)
    )
}

/// `BalancedAccuracy(score, kept)`.
#[pyfunction]
pub fn balanced_accuracy<'py>(
    py: Python<'py>,
    c: &Bound<'py, PyAny>,
    adjusted: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let t = table(c)?;
    let c = t.cells();
    let (score, kept) = run(py, || cls::balanced_accuracy(c, adjusted))?;
    named!(py, "BalancedAccuracy", score, kept)
}

/// Cohen's kappa (`weights` is None, "linear" or "quadratic").
#[pyfunction]
#[pyo3(signature = (c, weights=None))]
pub fn cohen_kappa(py: Python<'_>, c: &Bound<'_, PyAny>, weights: Option<&str>) -> PyResult<f64> {
    let kind = match weights {
        None => cls::KappaWeights::Unweighted,
        Some("linear") => cls::KappaWeights::Linear,
        Some("quadratic") => cls::KappaWeights::Quadratic,
        Some(other) => {
            return Err(ValidationError::new_err(format!(
                "weights={other:?} is invalid; use None, 'linear' or 'quadratic'"
            )))
        }
    };
    let t = table(c)?;
    let c = t.cells();
    run(py, || cls::cohen_kappa(c, kind))
}

/// Powers' informedness, optionally with a training prior.
#[pyfunction]
#[pyo3(signature = (c, prior=None))]
pub fn informedness(
    py: Python<'_>,
    c: &Bound<'_, PyAny>,
    prior: Option<PyReadonlyArray1<'_, f64>>,
) -> PyResult<f64> {
    let t = table(c)?;
    let c = t.cells();
    let prior = match &prior {
        Some(p) => Some(slice(p, "prior")?),
        None => None,
    };
    run(py, || cls::informedness(c, prior))
}

/// Normalized Information Transfer.
#[pyfunction]
#[pyo3(signature = (c, n_classes=None))]
pub fn normalized_information_transfer(
    py: Python<'_>,
    c: &Bound<'_, PyAny>,
    n_classes: Option<usize>,
) -> PyResult<f64> {
    let t = table(c)?;
    let c = t.cells();
    run(py, || cls::normalized_information_transfer(c, n_classes))
}

/// Per-label sums and per-row counts of two `n x L` indicator matrices
/// (`cmetrics_core::multilabel`): `MultilabelCounts(tp, true_sum, pred_sum, tn,
/// row_tp, row_true, row_pred)`.
#[pyfunction]
#[pyo3(signature = (y_true, y_pred, sample_weight=None, n_threads=0))]
pub fn multilabel_counts<'py>(
    py: Python<'py>,
    y_true: &Bound<'py, PyAny>,
    y_pred: &Bound<'py, PyAny>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    use numpy::{IntoPyArray, PyUntypedArrayMethods};
    check_2d(y_true, "y_true")?;
    check_2d(y_pred, "y_pred")?;
    let y_true = y_true.extract::<PyReadonlyArray2<'py, bool>>()?;
    let y_pred = y_pred.extract::<PyReadonlyArray2<'py, bool>>()?;
    let n_labels = y_true.shape()[1];
    if y_pred.shape() != y_true.shape() {
        return Err(ValidationError::new_err(format!(
            "y_true has shape {:?} but y_pred has shape {:?}; pass indicator matrices of one shape",
            y_true.shape(),
            y_pred.shape()
        )));
    }
    let t = slice2(&y_true, "y_true")?;
    let p = slice2(&y_pred, "y_pred")?;
    let w = crate::arrays::opt_slice(&sample_weight, "sample_weight")?;
    let pool = cmetrics_core::Pool::new(n_threads);
    let c = crate::error::run_pool(py, t.len(), &pool, |pool| {
        cmetrics_core::multilabel::multilabel_counts(t, p, n_labels, w, pool)
    })?;
    named!(
        py,
        "MultilabelCounts",
        c.tp.into_pyarray(py),
        c.true_sum.into_pyarray(py),
        c.pred_sum.into_pyarray(py),
        c.tn.into_pyarray(py),
        c.row_tp.into_pyarray(py),
        c.row_true.into_pyarray(py),
        c.row_pred.into_pyarray(py),
    )
}

/// Add this family's functions to the extension module (every Python function
/// of this file is listed here, and nowhere else).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(marginals, m)?)?;
    m.add_function(wrap_pyfunction!(precision_recall_fbeta, m)?)?;
    m.add_function(wrap_pyfunction!(accuracy, m)?)?;
    m.add_function(wrap_pyfunction!(balanced_accuracy, m)?)?;
    m.add_function(wrap_pyfunction!(matthews_corrcoef, m)?)?;
    m.add_function(wrap_pyfunction!(cohen_kappa, m)?)?;
    m.add_function(wrap_pyfunction!(youden_j_per_class, m)?)?;
    m.add_function(wrap_pyfunction!(markedness_per_class, m)?)?;
    m.add_function(wrap_pyfunction!(informedness, m)?)?;
    m.add_function(wrap_pyfunction!(markedness, m)?)?;
    m.add_function(wrap_pyfunction!(mutual_information_bits, m)?)?;
    m.add_function(wrap_pyfunction!(normalized_information_transfer, m)?)?;
    m.add_function(wrap_pyfunction!(entropy_modulated_accuracy, m)?)?;
    m.add_function(wrap_pyfunction!(multilabel_counts, m)?)?;
    Ok(())
}
