//! Bindings of `cmetrics_core::probabilistic`: the one pass over `y_proba`.

use cmetrics_core::probabilistic::{
    evaluate_proba as core_evaluate, evaluate_proba_groups as evaluate_groups,
    row_values as core_row_values, top_labels as core_top_labels, Prob, ProbAccumulators,
    ProbOptions, ProbaMatrix,
};
use cmetrics_core::Pool;
use numpy::ndarray::Array2;
use numpy::{
    IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;

use crate::arrays::opt_slice;
use crate::arrays::{check_2d, extract_2d, matrix, mismatched_dtypes, slice, LabelArray};
use crate::error::{run_pool, UnsupportedDtypeError, ValidationError};
use crate::ranking::ranking_py;
use crate::results::named;

/// Probabilities as the kernel reads them.
#[derive(FromPyObject)]
pub enum ProbaArray<'py> {
    /// float32 probabilities.
    F32(PyReadonlyArray2<'py, f32>),
    /// float64 probabilities.
    F64(PyReadonlyArray2<'py, f64>),
}

/// `ProbAccumulators(...)`, in the order of its fields.
fn to_py(py: Python<'_>, a: ProbAccumulators) -> PyResult<Bound<'_, PyAny>> {
    let k = a.k;
    let sq = |v: Vec<f64>| -> PyResult<Bound<'_, numpy::PyArray2<f64>>> {
        Array2::from_shape_vec((k, k), v)
            .map(|x| x.into_pyarray(py))
            .map_err(|e| ValidationError::new_err(e.to_string()))
    };
    let counts = Array2::from_shape_vec((k, k), a.hard_counts)
        .map_err(|e| ValidationError::new_err(e.to_string()))?;
    named!(
        py,
        "ProbAccumulators",
        counts.into_pyarray(py),
        a.hard_weighted.map(sq).transpose()?,
        sq(a.pcm)?,
        PyArray1::from_vec(py, a.true_count),
        PyArray1::from_vec(py, a.true_weight),
        a.entropy_sum,
        a.brier_sum,
        a.log_loss_sum,
        a.weight_sum,
        PyArray1::from_vec(py, a.bin_weight),
        PyArray1::from_vec(py, a.bin_confidence),
        PyArray1::from_vec(py, a.bin_correct),
        PyArray1::from_vec(py, a.bin_count),
        a.confidence.map(|c| PyArray1::from_vec(py, c)),
        a.correct.map(|c| PyArray1::from_vec(py, c)),
        a.ranking.map(|r| ranking_py(py, &r)).transpose()?,
    )
}

/// Read `y_proba` (C or Fortran order, borrowed) once and return every
/// accumulator.
#[pyfunction]
#[pyo3(signature = (
    y_true, y_proba, y_pred=None, sample_weight=None, *,
    validate=true, atol=None, entropy=true, scores=true, n_bins=15, keep_confidence=false, hard=true,
    rank=false, n_threads=0
))]
#[allow(clippy::too_many_arguments)]
pub fn evaluate_proba<'py>(
    py: Python<'py>,
    y_true: LabelArray<'py>,
    y_proba: &Bound<'py, PyAny>,
    y_pred: Option<LabelArray<'py>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    validate: bool,
    atol: Option<f64>,
    entropy: bool,
    scores: bool,
    n_bins: usize,
    keep_confidence: bool,
    hard: bool,
    rank: bool,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let y_proba: ProbaArray<'py> = extract_2d(y_proba, "y_proba")?;
    let opts = ProbOptions {
        rank,
        ..options(
            validate,
            atol,
            entropy,
            scores,
            n_bins,
            keep_confidence,
            hard,
        )
    };
    let mut accs = pass(
        py,
        &y_true,
        &y_proba,
        y_pred.as_ref(),
        &sample_weight,
        &opts,
        None,
        n_threads,
    )?;
    match accs.pop() {
        Some(acc) => to_py(py, acc),
        None => Err(ValidationError::new_err(
            "the probability pass returned nothing",
        )),
    }
}

/// [`evaluate_proba`] of every group of rows (rows laid out group by group in a
/// row-major matrix, `offsets` the `G + 1` starts of the groups), the groups
/// side by side: a list of accumulators, one per group
/// (`cmetrics_core::probabilistic::evaluate_proba_groups`).
#[pyfunction]
#[pyo3(signature = (
    y_true, y_proba, offsets, y_pred=None, sample_weight=None, *,
    validate=true, atol=None, entropy=true, scores=true, n_bins=15, keep_confidence=false, hard=true, n_threads=0
))]
#[allow(clippy::too_many_arguments)]
pub fn evaluate_proba_groups<'py>(
    py: Python<'py>,
    y_true: LabelArray<'py>,
    y_proba: &Bound<'py, PyAny>,
    offsets: PyReadonlyArray1<'py, i64>,
    y_pred: Option<LabelArray<'py>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    validate: bool,
    atol: Option<f64>,
    entropy: bool,
    scores: bool,
    n_bins: usize,
    keep_confidence: bool,
    hard: bool,
    n_threads: usize,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let y_proba: ProbaArray<'py> = extract_2d(y_proba, "y_proba")?;
    let opts = options(
        validate,
        atol,
        entropy,
        scores,
        n_bins,
        keep_confidence,
        hard,
    );
    let o = slice(&offsets, "offsets")?;
    let accs = pass(
        py,
        &y_true,
        &y_proba,
        y_pred.as_ref(),
        &sample_weight,
        &opts,
        Some(o),
        n_threads,
    )?;
    accs.into_iter().map(|a| to_py(py, a)).collect()
}

fn options(
    validate: bool,
    atol: Option<f64>,
    entropy: bool,
    scores: bool,
    n_bins: usize,
    keep_confidence: bool,
    hard: bool,
) -> ProbOptions {
    ProbOptions {
        validate_rows: validate,
        atol: atol.unwrap_or(f64::NAN),
        entropy,
        scores,
        n_bins,
        keep_confidence,
        rank: false,
        hard,
        portable: false,
    }
}

/// The probability pass over the whole matrix, or (with `offsets`) over each
/// group of its rows, dispatched on the dtypes.
#[allow(clippy::too_many_arguments)]
fn pass<'py>(
    py: Python<'py>,
    y_true: &LabelArray<'py>,
    y_proba: &ProbaArray<'py>,
    y_pred: Option<&LabelArray<'py>>,
    sample_weight: &Option<PyReadonlyArray1<'py, f64>>,
    opts: &ProbOptions,
    offsets: Option<&[i64]>,
    n_threads: usize,
) -> PyResult<Vec<ProbAccumulators>> {
    let w = opt_slice(sample_weight, "sample_weight")?;
    let pool = Pool::new(n_threads);
    macro_rules! go {
        ($t:expr, $p:expr, $yp:expr) => {{
            let t = slice($t, "y_true")?;
            let (p, _) = proba_matrix($p)?;
            let yp = match $yp {
                Some(v) => Some(slice(v, "y_pred")?),
                None => None,
            };
            run_pool(py, t.len(), &pool, |pool| match offsets {
                None => core_evaluate(t, p, yp, w, opts, pool).map(|a| vec![a]),
                Some(o) => evaluate_groups(t, p, yp, w, opts, o, pool),
            })?
        }};
    }
    Ok(match (y_true, y_pred) {
        (LabelArray::I32(t), None) => match y_proba {
            ProbaArray::F32(p) => go!(t, p, None::<&PyReadonlyArray1<'py, i32>>),
            ProbaArray::F64(p) => go!(t, p, None::<&PyReadonlyArray1<'py, i32>>),
        },
        (LabelArray::I64(t), None) => match y_proba {
            ProbaArray::F32(p) => go!(t, p, None::<&PyReadonlyArray1<'py, i64>>),
            ProbaArray::F64(p) => go!(t, p, None::<&PyReadonlyArray1<'py, i64>>),
        },
        (LabelArray::I32(t), Some(LabelArray::I32(yp))) => match y_proba {
            ProbaArray::F32(p) => go!(t, p, Some(yp)),
            ProbaArray::F64(p) => go!(t, p, Some(yp)),
        },
        (LabelArray::I64(t), Some(LabelArray::I64(yp))) => match y_proba {
            ProbaArray::F32(p) => go!(t, p, Some(yp)),
            ProbaArray::F64(p) => go!(t, p, Some(yp)),
        },
        _ => return Err(mismatched_dtypes()),
    })
}

/// A 2-D float32 or float64 array argument: [`check_2d`] first, then the
/// dtype (an `UnsupportedDtypeError` naming it, as the numpy backend's).
pub(crate) fn float_matrix<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<ProbaArray<'py>> {
    check_2d(obj, name)?;
    obj.extract::<ProbaArray<'py>>().map_err(|_| {
        let dtype = obj
            .cast::<PyUntypedArray>()
            .map_or_else(|_| "another".to_owned(), |a| a.dtype().to_string());
        UnsupportedDtypeError::new_err(format!(
            "{name} has dtype {dtype}; pass float32 or float64 probabilities"
        ))
    })
}

/// A probability matrix borrowed as the kernels read it (C- or
/// Fortran-contiguous, no copy), with its number of rows.
fn proba_matrix<'a, P: numpy::Element>(
    p: &'a PyReadonlyArray2<'_, P>,
) -> PyResult<(ProbaMatrix<'a, P>, usize)> {
    let (n, k) = (p.shape()[0], p.shape()[1]);
    let (values, column_major) = matrix(p, "y_proba")?;
    Ok((
        if column_major {
            ProbaMatrix::column_major(values, k)
        } else {
            ProbaMatrix::row_major(values, k)
        },
        n,
    ))
}

/// [`core_top_labels`] of one dtype's matrix.
fn tops<P: Prob + numpy::Element>(
    py: Python<'_>,
    y_proba: &PyReadonlyArray2<'_, P>,
    n_threads: usize,
) -> PyResult<Vec<i64>> {
    let (p, n) = proba_matrix(y_proba)?;
    let pool = Pool::new(n_threads);
    run_pool(py, n, &pool, |pool| core_top_labels(p, n, pool))
}

/// Each row's top label: the first column of its largest probability
/// (`cmetrics_core::probabilistic::top_labels`), from float32 or float64
/// probabilities.
#[pyfunction]
#[pyo3(signature = (y_proba, n_threads=0))]
pub fn top_labels<'py>(
    py: Python<'py>,
    y_proba: &Bound<'py, PyAny>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let out = match float_matrix(y_proba, "y_proba")? {
        ProbaArray::F32(p) => tops(py, &p, n_threads)?,
        ProbaArray::F64(p) => tops(py, &p, n_threads)?,
    };
    Ok(PyArray1::from_vec(py, out))
}

/// [`core_row_values`] of one dtype's matrix: its width and its values.
fn row_values<P: Prob + numpy::Element>(
    py: Python<'_>,
    y_true: &LabelArray<'_>,
    y_proba: &PyReadonlyArray2<'_, P>,
    w: Option<&[f64]>,
    n_threads: usize,
) -> PyResult<(usize, Vec<f64>)> {
    let (p, n) = proba_matrix(y_proba)?;
    let pool = Pool::new(n_threads);
    let out = match y_true {
        LabelArray::I32(t) => {
            let t = slice(t, "y_true")?;
            run_pool(py, n, &pool, |pool| core_row_values(t, p, w, pool))?
        }
        LabelArray::I64(t) => {
            let t = slice(t, "y_true")?;
            run_pool(py, n, &pool, |pool| core_row_values(t, p, w, pool))?
        }
    };
    Ok((p.k() + 4, out))
}

/// Each row's `K + 4` contributions to a probability model's Poisson
/// replicate sums (`cmetrics_core::probabilistic::row_values`).
#[pyfunction]
#[pyo3(signature = (y_true, y_proba, sample_weight=None, n_threads=0))]
pub fn proba_row_values<'py>(
    py: Python<'py>,
    y_true: LabelArray<'py>,
    y_proba: &Bound<'py, PyAny>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_threads: usize,
) -> PyResult<Bound<'py, numpy::PyArray2<f64>>> {
    let y_proba = float_matrix(y_proba, "y_proba")?;
    let w = opt_slice(&sample_weight, "sample_weight")?;
    let (width, out) = match &y_proba {
        ProbaArray::F32(p) => row_values(py, &y_true, p, w, n_threads)?,
        ProbaArray::F64(p) => row_values(py, &y_true, p, w, n_threads)?,
    };
    let rows = out.len() / width;
    Array2::from_shape_vec((rows, width), out)
        .map(|a| a.into_pyarray(py))
        .map_err(|e| ValidationError::new_err(e.to_string()))
}

/// Add this family's functions to the extension module (every Python function
/// of this file is listed here, and nowhere else).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(top_labels, m)?)?;
    m.add_function(wrap_pyfunction!(proba_row_values, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate_proba, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate_proba_groups, m)?)?;
    Ok(())
}
