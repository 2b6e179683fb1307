//! Score vectors of any dtype the kernels order exactly ([`ScoreArray`], read
//! through one macro, [`with_scores`]), and the binary kernels over them: the
//! ranking walk, Kendall's pair counts, the threshold counts.

use cmetrics_core::ranking as rk;
use cmetrics_core::Pool;
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;

use crate::arrays::opt_slice;
use crate::arrays::slice;
use crate::error::run_pool;
use crate::results::named;

/// Scores as the kernels read them: float64, or integers ordered exactly
/// (int64, or uint64 for values above the int64 range).
#[derive(FromPyObject)]
pub enum ScoreArray<'py> {
    /// float64 scores.
    F64(PyReadonlyArray1<'py, f64>),
    /// float32 scores (curves and tie groups only).
    F32(PyReadonlyArray1<'py, f32>),
    /// int64 scores.
    I64(PyReadonlyArray1<'py, i64>),
    /// uint64 scores.
    U64(PyReadonlyArray1<'py, u64>),
}

/// Bind `$s` to the borrowed slice of a [`ScoreArray`] (named `$name` in errors),
/// whatever its dtype, and evaluate `$body` with it: the one dispatch over score
/// dtypes every binding of a score vector shares.
macro_rules! with_scores {
    ($score:expr, $name:expr, |$s:ident| $body:expr) => {
        with_scores!(@by slice, $score, $name, |$s| $body)
    };
    // The same dispatch binding a view (strided or not) instead of a slice.
    (view $score:expr, $name:expr, |$s:ident| $body:expr) => {
        with_scores!(@by $crate::arrays::view, $score, $name, |$s| $body)
    };
    // One match over the four dtypes, `$borrow` turning the array into `$s`.
    (@by $borrow:path, $score:expr, $name:expr, |$s:ident| $body:expr) => {
        match &$score {
            ScoreArray::F64(a) => {
                let $s = $borrow(a, $name)?;
                $body
            }
            ScoreArray::F32(a) => {
                let $s = $borrow(a, $name)?;
                $body
            }
            ScoreArray::I64(a) => {
                let $s = $borrow(a, $name)?;
                $body
            }
            ScoreArray::U64(a) => {
                let $s = $borrow(a, $name)?;
                $body
            }
        }
    };
}
pub(crate) use with_scores;

/// The `curves` argument of the walks: `True` (every curve term), `False`
/// (pair counts only), `"precision"` (the average precision alone) or
/// `"placements"` (DeLong's placements alone).
#[derive(FromPyObject)]
pub(crate) enum CurvesArg {
    Flag(bool),
    Named(String),
}

impl CurvesArg {
    pub(crate) fn terms(&self) -> PyResult<rk::Curves> {
        match self {
            CurvesArg::Flag(all) => Ok((*all).into()),
            CurvesArg::Named(name) if name == "precision" => Ok(rk::Curves::Precision),
            CurvesArg::Named(name) if name == "placements" => Ok(rk::Curves::Placements),
            CurvesArg::Named(name) => Err(crate::error::ValidationError::new_err(format!(
                "curves must be True, False, 'precision' or 'placements', got {name:?}"
            ))),
        }
    }
}

/// Tie-grouped walk of a binary outcome against a score (`rk::BinaryRanking` as a dict).
#[pyfunction]
#[pyo3(signature = (positive, score, sample_weight=None, curves=CurvesArg::Flag(true), n_threads=0))]
#[pyo3(text_signature = "(positive, score, sample_weight=None, curves=True, n_threads=0)")]
pub fn binary_ranking<'py>(
    py: Python<'py>,
    positive: PyReadonlyArray1<'py, bool>,
    score: ScoreArray<'py>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    curves: CurvesArg,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let curves = curves.terms()?;
    let p = slice(&positive, "y_true")?;
    let w = opt_slice(&sample_weight, "sample_weight")?;
    let pool = Pool::new(n_threads);
    let r = with_scores!(score, "y_score", |s| run_pool(
        py,
        s.len(),
        &pool,
        |pool| { rk::binary_ranking(p, s, w, curves, pool) }
    )?);
    ranking_py(py, &r)
}

/// `BinaryRanking(...)`, in the order of its fields.
pub(crate) fn ranking_py<'py>(
    py: Python<'py>,
    r: &rk::BinaryRanking,
) -> PyResult<Bound<'py, PyAny>> {
    named!(
        py,
        "BinaryRanking",
        r.n_pos,
        r.n_neg,
        r.w_pos,
        r.w_neg,
        r.reversed,
        r.tied,
        r.ordered,
        r.reversed_share,
        r.tied_share,
        r.ordered_share,
        r.average_precision,
        r.aupr_trapezoid,
        r.aurc,
        r.n_thresholds,
        r.placement_pos_sq,
        r.placement_neg_sq,
    )
}

/// Kendall pair counts of `(x, y)` (`rk::KendallCounts` as a dict, exact
/// integers); each vector float64, int64 or uint64.
#[pyfunction]
#[pyo3(signature = (x, y, n_threads=0))]
pub fn kendall_counts<'py>(
    py: Python<'py>,
    x: ScoreArray<'py>,
    y: ScoreArray<'py>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let pool = Pool::new(n_threads);
    let c = with_scores!(x, "x", |xs| with_scores!(y, "y", |ys| run_pool(
        py,
        xs.len(),
        &pool,
        |pool| rk::kendall_counts(xs, ys, pool)
    )?));
    named!(
        py,
        "KendallCounts",
        c.n,
        c.x_ties,
        c.y_ties,
        c.joint_ties,
        c.discordant,
        c.x_distinct,
        c.y_distinct,
        c.tau_b(),
        c.tau_c(),
    )
}

/// The counts at or above each distinct score, from the lowest score up:
/// `ThresholdCounts(fps, tps, thresholds)`; `drop` is "none", "collinear"
/// (the ROC rule) or "flat" (the precision-recall and DET rule).
#[pyfunction]
#[pyo3(signature = (positive, score, sample_weight=None, drop="none", n_threads=0))]
pub fn threshold_counts<'py>(
    py: Python<'py>,
    positive: PyReadonlyArray1<'py, bool>,
    score: ScoreArray<'py>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    drop: &str,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let rule = match drop {
        "none" => rk::Drop::None,
        "collinear" => rk::Drop::Collinear,
        "flat" => rk::Drop::FlatPositives,
        _ => {
            return Err(crate::error::ValidationError::new_err(format!(
                "drop must be 'none', 'collinear' or 'flat', got {drop:?}"
            )))
        }
    };
    let p = slice(&positive, "y_true")?;
    let w = opt_slice(&sample_weight, "sample_weight")?;
    let pool = Pool::new(n_threads);
    let c = with_scores!(score, "y_score", |s| run_pool(
        py,
        s.len(),
        &pool,
        |pool| { rk::threshold_counts(p, s, w, rule, pool) }
    )?);
    named!(
        py,
        "ThresholdCounts",
        c.fps.into_pyarray(py),
        c.tps.into_pyarray(py),
        c.thresholds.into_pyarray(py),
    )
}
