//! The multiclass kernels over a score matrix of any dtype and layout (read
//! through one macro, `on_matrix!`): one-vs-rest walks, the true class's rank
//! histogram, the binned one-vs-rest histograms, Hand and Till's one-vs-one AUROC.

use super::binary::{ranking_py, CurvesArg};
use super::groups::group_arrays;
use cmetrics_core::ranking as rk;
use cmetrics_core::Pool;
use numpy::{
    IntoPyArray, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyReadwriteArray2,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;

use crate::arrays::slice;
use crate::arrays::{extract_2d, opt_slice};
use crate::arrays::{slice2, slice2_mut};
use crate::error::{run_pool, ShapeError};
use crate::results::named;

/// A score matrix as the multiclass kernels read it (C-contiguous rows).
#[derive(FromPyObject)]
pub enum ScoreMatrix<'py> {
    /// float32 scores.
    F32(PyReadonlyArray2<'py, f32>),
    /// float64 scores.
    F64(PyReadonlyArray2<'py, f64>),
    /// int64 scores.
    I64(PyReadonlyArray2<'py, i64>),
}

impl ScoreMatrix<'_> {
    /// The number of columns.
    fn n_cols(&self) -> usize {
        match self {
            ScoreMatrix::F32(a) => a.shape().get(1).copied().unwrap_or(0),
            ScoreMatrix::F64(a) => a.shape().get(1).copied().unwrap_or(0),
            ScoreMatrix::I64(a) => a.shape().get(1).copied().unwrap_or(0),
        }
    }
}

/// Bind `$m` to the borrowed `rk::Matrix` of a [`ScoreMatrix`] (any dtype, either
/// memory order) and run `$body` on the pool with the GIL released: the dispatch every
/// matrix kernel below shares.
macro_rules! on_matrix {
    ($py:expr, $pool:expr, $score:expr, |$m:ident, $p:ident| $body:expr) => {
        match &$score {
            ScoreMatrix::F32(a) => on_matrix!(@one $py, $pool, a, |$m, $p| $body),
            ScoreMatrix::F64(a) => on_matrix!(@one $py, $pool, a, |$m, $p| $body),
            ScoreMatrix::I64(a) => on_matrix!(@one $py, $pool, a, |$m, $p| $body),
        }
    };
    (@one $py:expr, $pool:expr, $a:ident, |$m:ident, $p:ident| $body:expr) => {{
        let n_cols = $a.shape()[1];
        let (values, column_major) = crate::arrays::matrix($a, "y_score")?;
        let $m = rk::Matrix {
            values,
            n_cols,
            column_major,
        };
        run_pool($py, $m.values.len(), &$pool, |$p| $body)?
    }};
}

/// One walk per requested column of `y_score` against its class: `codes`
/// (uint32 class codes, multiclass) or `indicator` (an n x K bool matrix,
/// multilabel). A list of `BinaryRanking`, in the order of `columns`.
#[pyfunction]
#[pyo3(signature = (y_score, columns, codes=None, indicator=None, sample_weight=None, curves=CurvesArg::Flag(true), n_threads=0))]
#[pyo3(
    text_signature = "(y_score, columns, codes=None, indicator=None, sample_weight=None, curves=True, n_threads=0)"
)]
#[allow(clippy::too_many_arguments)]
pub fn one_vs_rest<'py>(
    py: Python<'py>,
    y_score: &Bound<'py, PyAny>,
    columns: Vec<usize>,
    codes: Option<PyReadonlyArray1<'py, u32>>,
    indicator: Option<&Bound<'py, PyAny>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    curves: CurvesArg,
    n_threads: usize,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let curves = curves.terms()?;
    let y_score: ScoreMatrix<'py> = extract_2d(y_score, "y_score")?;
    let indicator: Option<PyReadonlyArray2<'py, bool>> =
        indicator.map(|i| extract_2d(i, "indicator")).transpose()?;
    let truth = match (&codes, &indicator) {
        (Some(c), None) => rk::Truth::Codes(slice(c, "y_true")?),
        (None, Some(m)) => rk::Truth::Indicator(slice2(m, "y_true")?),
        _ => {
            return Err(crate::error::ValidationError::new_err(
                "pass exactly one of codes and indicator",
            ))
        }
    };
    let w = opt_slice(&sample_weight, "sample_weight")?;
    let pool = Pool::new(n_threads);
    let walks = on_matrix!(py, pool, y_score, |m, pool| rk::one_vs_rest(
        truth, m, &columns, w, curves, pool
    ));
    walks_py(py, &walks)
}

/// Each walk as a `BinaryRanking` named tuple, in order.
fn walks_py<'py>(py: Python<'py>, walks: &[rk::BinaryRanking]) -> PyResult<Vec<Bound<'py, PyAny>>> {
    walks.iter().map(|r| ranking_py(py, r)).collect()
}

/// `ProbabilityWalks(walks, low, high)`: the walks of `one_vs_rest` by class
/// codes of probabilities whose rows must sum to 1 (numpy's `allclose`),
/// `walks` None when some row does not, with the smallest and the largest row
/// sum; the sums taken in the pass that writes the sort keys where it can
/// (`rk::one_vs_rest_of_probabilities`).
#[pyfunction]
#[pyo3(signature = (y_score, columns, codes, sample_weight=None, curves=CurvesArg::Flag(true), n_threads=0))]
#[pyo3(text_signature = "(y_score, columns, codes, sample_weight=None, curves=True, n_threads=0)")]
pub fn one_vs_rest_of_probabilities<'py>(
    py: Python<'py>,
    y_score: &Bound<'py, PyAny>,
    columns: Vec<usize>,
    codes: PyReadonlyArray1<'py, u32>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    curves: CurvesArg,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let curves = curves.terms()?;
    let y_score: ScoreMatrix<'py> = extract_2d(y_score, "y_score")?;
    let c = slice(&codes, "y_true")?;
    let w = opt_slice(&sample_weight, "sample_weight")?;
    let pool = Pool::new(n_threads);
    let got = on_matrix!(py, pool, y_score, |m, pool| {
        rk::one_vs_rest_of_probabilities(c, m, &columns, w, curves, pool)
    });
    let walks = got.walks.as_deref().map(|w| walks_py(py, w)).transpose()?;
    let (low, high) = got.sums;
    named!(py, "ProbabilityWalks", walks, low, high)
}

/// `ClassRanking(walks, rank_histogram)`: the walk of every column against its
/// class and the histogram of the true class's rank, as `one_vs_rest` of all
/// the columns and `rank_histogram` give them, the ranks counted in the pass
/// that writes the sort keys where it can (`rk::class_ranking`).
#[pyfunction]
#[pyo3(signature = (y_score, codes, sample_weight=None, curves=CurvesArg::Flag(true), n_threads=0))]
#[pyo3(text_signature = "(y_score, codes, sample_weight=None, curves=True, n_threads=0)")]
pub fn class_ranking<'py>(
    py: Python<'py>,
    y_score: &Bound<'py, PyAny>,
    codes: PyReadonlyArray1<'py, u32>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    curves: CurvesArg,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let curves = curves.terms()?;
    let y_score: ScoreMatrix<'py> = extract_2d(y_score, "y_score")?;
    let c = slice(&codes, "y_true")?;
    let w = opt_slice(&sample_weight, "sample_weight")?;
    let pool = Pool::new(n_threads);
    let got = on_matrix!(py, pool, y_score, |m, pool| rk::class_ranking(
        c, m, w, curves, pool
    ));
    let walks = walks_py(py, &got.walks)?;
    let rank_histogram = got.rank_histogram.into_pyarray(py);
    named!(py, "ClassRanking", walks, rank_histogram)
}

/// `RowSums(low, high)`: the smallest and the largest row sum of `y_score`
/// (float64 sums), after checking every score is finite (`rk::row_sum_range`).
#[pyfunction]
#[pyo3(signature = (y_score, n_threads=0))]
pub fn row_sum_range<'py>(
    py: Python<'py>,
    y_score: &Bound<'py, PyAny>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let y_score: ScoreMatrix<'py> = extract_2d(y_score, "y_score")?;
    let pool = Pool::new(n_threads);
    let (low, high) = on_matrix!(py, pool, y_score, |m, pool| rk::row_sum_range(m, pool));
    named!(py, "RowSums", low, high)
}

/// The (weighted) count of rows by the rank of their true class among the
/// row's scores (`rk::rank_histogram`; top-k accuracy is a prefix sum).
#[pyfunction]
#[pyo3(signature = (y_score, codes, sample_weight=None, n_threads=0))]
pub fn rank_histogram<'py>(
    py: Python<'py>,
    y_score: &Bound<'py, PyAny>,
    codes: PyReadonlyArray1<'py, u32>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_threads: usize,
) -> PyResult<Bound<'py, numpy::PyArray1<f64>>> {
    let y_score: ScoreMatrix<'py> = extract_2d(y_score, "y_score")?;
    let c = slice(&codes, "y_true")?;
    let w = opt_slice(&sample_weight, "sample_weight")?;
    let pool = Pool::new(n_threads);
    let h = on_matrix!(py, pool, y_score, |m, pool| rk::rank_histogram(
        c, m, w, pool
    ));
    Ok(h.into_pyarray(py))
}

/// [`rank_histogram`] of every group of rows (rows laid out group by group in a
/// row-major matrix, `offsets` the `G + 1` starts of the groups): a `(G, K)`
/// array (`rk::rank_histogram_groups`).
#[pyfunction]
#[pyo3(signature = (y_score, codes, offsets, sample_weight=None, n_threads=0))]
pub fn rank_histogram_groups<'py>(
    py: Python<'py>,
    y_score: &Bound<'py, PyAny>,
    codes: PyReadonlyArray1<'py, u32>,
    offsets: PyReadonlyArray1<'py, i64>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let y_score: ScoreMatrix<'py> = extract_2d(y_score, "y_score")?;
    let c = slice(&codes, "y_true")?;
    let o = slice(&offsets, "offsets")?;
    let w = opt_slice(&sample_weight, "sample_weight")?;
    let k = y_score.n_cols();
    let pool = Pool::new(n_threads);
    let h = on_matrix!(py, pool, y_score, |m, pool| rk::rank_histogram_groups(
        c, m, o, w, pool
    ));
    Ok(h.into_pyarray(py)
        .reshape([o.len().saturating_sub(1), k])?
        .into_any())
}

/// The approximate one-vs-rest summary: each column's tie groups binned in
/// [0, 1] (`rk::binned_one_vs_rest`), a list of `Groups`.
#[pyfunction]
#[pyo3(signature = (y_score, codes, bins, sample_weight=None, n_threads=0))]
pub fn binned_one_vs_rest<'py>(
    py: Python<'py>,
    y_score: &Bound<'py, PyAny>,
    codes: PyReadonlyArray1<'py, u32>,
    bins: u32,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_threads: usize,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let y_score: ScoreMatrix<'py> = extract_2d(y_score, "y_score")?;
    let c = slice(&codes, "y_true")?;
    let w = opt_slice(&sample_weight, "sample_weight")?;
    let pool = Pool::new(n_threads);
    let groups = on_matrix!(py, pool, y_score, |m, pool| rk::binned_one_vs_rest(
        c, m, w, bins, pool
    ));
    groups.into_iter().map(|g| group_arrays(py, g)).collect()
}

/// Dense binned one-vs-rest histograms of each group of rows (rows laid out
/// group by group, `offsets` the `G + 1` group starts): arrays of shape
/// `(G, K, bins + 1)` of all rows, positive rows and (with weights) their
/// weights (`rk::grouped_binned_histograms`).
#[pyfunction]
#[pyo3(signature = (y_score, codes, offsets, bins, sample_weight=None, n_threads=0))]
pub fn grouped_binned_histograms<'py>(
    py: Python<'py>,
    y_score: &Bound<'py, PyAny>,
    codes: PyReadonlyArray1<'py, u32>,
    offsets: PyReadonlyArray1<'py, i64>,
    bins: u32,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let y_score: ScoreMatrix<'py> = extract_2d(y_score, "y_score")?;
    let c = slice(&codes, "y_true")?;
    let o = slice(&offsets, "offsets")?;
    let w = opt_slice(&sample_weight, "sample_weight")?;
    let k = y_score.n_cols();
    let pool = Pool::new(n_threads);
    let h = on_matrix!(py, pool, y_score, |m, pool| rk::grouped_binned_histograms(
        c, m, o, w, bins, pool
    ));
    let shape = [o.len().saturating_sub(1), k, bins as usize + 1];
    let all = h.all.into_pyarray(py).reshape(shape)?.into_any();
    let pos = h.pos.into_pyarray(py).reshape(shape)?.into_any();
    let (w_all, w_pos) = if w.is_some() {
        (
            Some(h.w_all.into_pyarray(py).reshape(shape)?.into_any()),
            Some(h.w_pos.into_pyarray(py).reshape(shape)?.into_any()),
        )
    } else {
        (None, None)
    };
    named!(py, "GroupedHistograms", all, pos, w_all, w_pos)
}

/// A batch's binned one-vs-rest counts added in place into dense tables of
/// shape `(K, bins + 1)`: rows and positive rows (`uint64`), and with
/// weights the positive and negative weights (`float64`)
/// (`rk::add_binned_one_vs_rest`; an error leaves the tables as they were).
#[pyfunction]
#[pyo3(signature = (y_score, codes, bins, all, pos, w_pos=None, w_neg=None, sample_weight=None, n_threads=0))]
#[allow(clippy::too_many_arguments)]
pub fn add_binned_one_vs_rest<'py>(
    py: Python<'py>,
    y_score: &Bound<'py, PyAny>,
    codes: PyReadonlyArray1<'py, u32>,
    bins: u32,
    mut all: PyReadwriteArray2<'py, u64>,
    mut pos: PyReadwriteArray2<'py, u64>,
    w_pos: Option<PyReadwriteArray2<'py, f64>>,
    w_neg: Option<PyReadwriteArray2<'py, f64>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_threads: usize,
) -> PyResult<()> {
    let y_score: ScoreMatrix<'py> = extract_2d(y_score, "y_score")?;
    let c = slice(&codes, "y_true")?;
    let w = opt_slice(&sample_weight, "sample_weight")?;
    let (mut w_pos, mut w_neg) = (w_pos, w_neg);
    let want = [y_score.n_cols(), bins as usize + 1];
    if (w_pos.is_some(), w_neg.is_some()) != (w.is_some(), w.is_some()) {
        return Err(ShapeError::new_err(
            "w_pos and w_neg are the weight tables: give both with sample_weight, and neither without",
        ));
    }
    let tables = [("all", all.shape()), ("pos", pos.shape())];
    let weights = [("w_pos", w_pos.as_ref()), ("w_neg", w_neg.as_ref())];
    let weights = weights
        .iter()
        .filter_map(|(n, a)| a.map(|a| (*n, a.shape())));
    if let Some((name, shape)) = tables.into_iter().chain(weights).find(|(_, s)| *s != want) {
        return Err(ShapeError::new_err(format!(
            "{name} has the shape {shape:?}; the dense tables are (K, bins + 1) = {want:?}"
        )));
    }
    let out = rk::DenseTables {
        all: slice2_mut(&mut all, "all")?,
        pos: slice2_mut(&mut pos, "pos")?,
        w_pos: match w_pos.as_mut() {
            Some(a) => slice2_mut(a, "w_pos")?,
            None => &mut [],
        },
        w_neg: match w_neg.as_mut() {
            Some(a) => slice2_mut(a, "w_neg")?,
            None => &mut [],
        },
    };
    let pool = Pool::new(n_threads);
    on_matrix!(py, pool, y_score, |m, pool| rk::add_binned_one_vs_rest(
        c, m, w, bins, out, pool
    ));
    Ok(())
}

/// Hand and Till's multiclass AUROC over the pairs of classes with rows:
/// `OneVsOne(n_pairs, macro_auc, weighted_auc)`, in memory bounded by the rows.
#[pyfunction]
#[pyo3(signature = (y_score, codes, n_threads=0))]
pub fn one_vs_one<'py>(
    py: Python<'py>,
    y_score: &Bound<'py, PyAny>,
    codes: PyReadonlyArray1<'py, u32>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let y_score: ScoreMatrix<'py> = extract_2d(y_score, "y_score")?;
    let c = slice(&codes, "y_true")?;
    let pool = Pool::new(n_threads);
    let r = on_matrix!(py, pool, y_score, |m, pool| rk::one_vs_one_auc(c, m, pool));
    named!(py, "OneVsOne", r.n_pairs, r.macro_auc, r.weighted_auc)
}
