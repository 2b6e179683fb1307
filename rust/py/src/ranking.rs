//! Bindings of `cmetrics_core::ranking`: binary ranking walks and Kendall counts.

use cmetrics_core::ranking as rk;
use cmetrics_core::Pool;
use numpy::{
    IntoPyArray, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::prelude::*;

use crate::arrays::opt_slice;
use crate::arrays::slice;
use crate::arrays::slice2;
use crate::error::{run, run_pool};
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

/// Tie-grouped walk of a binary outcome against a score (`rk::BinaryRanking` as a dict).
#[pyfunction]
#[pyo3(signature = (positive, score, sample_weight=None, curves=true, n_threads=0))]
pub fn binary_ranking<'py>(
    py: Python<'py>,
    positive: PyReadonlyArray1<'py, bool>,
    score: ScoreArray<'py>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    curves: bool,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let p = slice(&positive, "y_true")?;
    let w = opt_slice(&sample_weight, "sample_weight")?;
    let pool = Pool::new(n_threads);
    macro_rules! go {
        ($a:expr) => {{
            let s = slice($a, "y_score")?;
            run_pool(py, s.len(), &pool, |pool| {
                rk::binary_ranking(p, s, w, curves, pool)
            })?
        }};
    }
    let r = match &score {
        ScoreArray::F64(a) => go!(a),
        ScoreArray::F32(a) => go!(a),
        ScoreArray::I64(a) => go!(a),
        ScoreArray::U64(a) => go!(a),
    };
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
    )
}

/// `Groups(values, n_pos, n_neg, w_pos | None, w_neg | None)`.
fn group_arrays(py: Python<'_>, g: rk::ScoreGroups) -> PyResult<Bound<'_, PyAny>> {
    let weighted = g.weighted();
    named!(
        py,
        "Groups",
        g.values.into_pyarray(py),
        g.n_pos.into_pyarray(py),
        g.n_neg.into_pyarray(py),
        weighted.then(|| g.w_pos.into_pyarray(py)),
        weighted.then(|| g.w_neg.into_pyarray(py)),
    )
}

/// Borrowed group arrays from Python.
type GroupArgs<'py> = (
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, u64>,
    PyReadonlyArray1<'py, u64>,
    Option<PyReadonlyArray1<'py, f64>>,
    Option<PyReadonlyArray1<'py, f64>>,
);

fn group_ref<'a>(g: &'a GroupArgs<'_>, name: &str) -> PyResult<rk::GroupsRef<'a>> {
    let opt = |a: &'a Option<PyReadonlyArray1<'_, f64>>| -> PyResult<&'a [f64]> {
        Ok(opt_slice(a, name)?.unwrap_or(&[]))
    };
    Ok(rk::GroupsRef {
        values: slice(&g.0, name)?,
        n_pos: slice(&g.1, name)?,
        n_neg: slice(&g.2, name)?,
        w_pos: opt(&g.3)?,
        w_neg: opt(&g.4)?,
    })
}

/// Tie groups of `(positive, score, weight)` in increasing score order.
#[pyfunction]
#[pyo3(signature = (positive, score, sample_weight=None, n_threads=0))]
pub fn score_groups<'py>(
    py: Python<'py>,
    positive: PyReadonlyArray1<'py, bool>,
    score: ScoreArray<'py>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let p = slice(&positive, "y_true")?;
    let w = opt_slice(&sample_weight, "sample_weight")?;
    let pool = Pool::new(n_threads);
    macro_rules! go {
        ($a:expr) => {{
            let s = slice($a, "y_score")?;
            run_pool(py, s.len(), &pool, |pool| rk::score_groups(p, s, w, pool))?
        }};
    }
    let g = match &score {
        ScoreArray::F64(a) => go!(a),
        ScoreArray::F32(a) => go!(a),
        ScoreArray::I64(a) => go!(a),
        ScoreArray::U64(a) => go!(a),
    };
    group_arrays(py, g)
}

/// Merge two group tuples (a linear merge).
#[pyfunction]
pub fn merge_groups<'py>(
    py: Python<'py>,
    a: GroupArgs<'py>,
    b: GroupArgs<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    let (ga, gb) = (group_ref(&a, "a")?, group_ref(&b, "b")?);
    let g = run(py, || rk::merge_groups(ga, gb))?;
    group_arrays(py, g)
}

/// The ranking walk over a group tuple (the dict of `binary_ranking`).
#[pyfunction]
#[pyo3(signature = (groups, curves=true))]
pub fn walk_groups<'py>(
    py: Python<'py>,
    groups: GroupArgs<'py>,
    curves: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let g = group_ref(&groups, "groups")?;
    let r = run(py, || rk::walk_groups(g, curves))?;
    ranking_py(py, &r)
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
    macro_rules! go {
        ($a:expr, $b:expr) => {{
            let (xs, ys) = (slice($a, "x")?, slice($b, "y")?);
            run_pool(py, xs.len(), &pool, |pool| rk::kendall_counts(xs, ys, pool))?
        }};
    }
    macro_rules! with_y {
        ($a:expr) => {
            match &y {
                ScoreArray::F64(b) => go!($a, b),
                ScoreArray::F32(b) => go!($a, b),
                ScoreArray::I64(b) => go!($a, b),
                ScoreArray::U64(b) => go!($a, b),
            }
        };
    }
    let c = match &x {
        ScoreArray::F64(a) => with_y!(a),
        ScoreArray::F32(a) => with_y!(a),
        ScoreArray::I64(a) => with_y!(a),
        ScoreArray::U64(a) => with_y!(a),
    };
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

/// The exact streaming ranking state (`rk::GroupState`): rows are buffered
/// and compacted into sorted tie groups; every method releases the GIL.
#[pyclass(module = "cmetrics._core", name = "GroupState")]
pub struct GroupState {
    inner: rk::GroupState,
}

#[pymethods]
impl GroupState {
    #[new]
    #[pyo3(signature = (weighted, min_buffer=None))]
    fn new(weighted: bool, min_buffer: Option<usize>) -> Self {
        let inner = rk::GroupState::new(weighted);
        Self {
            inner: match min_buffer {
                Some(rows) => inner.with_min_buffer(rows),
                None => inner,
            },
        }
    }

    /// Whether rows carry weights.
    #[getter]
    fn weighted(&self) -> bool {
        self.inner.weighted()
    }

    /// Bytes held.
    #[getter]
    fn nbytes(&self) -> usize {
        self.inner.nbytes()
    }

    /// Groups kept plus rows buffered.
    fn __len__(&self) -> usize {
        self.inner.entries()
    }

    /// Add rows (`positive`, `score`, optional weights); with `bins`, each
    /// score is first binned in [0, 1] (the approximate mode).
    #[pyo3(signature = (positive, score, sample_weight=None, bins=None, n_threads=0))]
    fn add(
        &mut self,
        py: Python<'_>,
        positive: PyReadonlyArray1<'_, bool>,
        score: PyReadonlyArray1<'_, f64>,
        sample_weight: Option<PyReadonlyArray1<'_, f64>>,
        bins: Option<u32>,
        n_threads: usize,
    ) -> PyResult<()> {
        let (p, s, w) = ranking_rows(&positive, &score, &sample_weight)?;
        let pool = Pool::new(n_threads);
        let inner = &mut self.inner;
        run(py, || match bins {
            Some(b) => inner.add_binned(p, s, w, b, &pool),
            None => inner.add(p, s, w, &pool),
        })
    }

    /// Add the rows of another state (which is compacted, not changed).
    #[pyo3(signature = (other, n_threads=0))]
    fn merge(
        &mut self,
        py: Python<'_>,
        mut other: PyRefMut<'_, Self>,
        n_threads: usize,
    ) -> PyResult<()> {
        let pool = Pool::new(n_threads);
        let (inner, theirs) = (&mut self.inner, &mut other.inner);
        run(py, || inner.merge(theirs, &pool))
    }

    /// Add exported groups `(values, n_pos, n_neg, w_pos | None, w_neg | None)`.
    #[pyo3(signature = (groups, n_threads=0))]
    fn absorb(&mut self, py: Python<'_>, groups: GroupArgs<'_>, n_threads: usize) -> PyResult<()> {
        let g = group_ref(&groups, "groups")?;
        let pool = Pool::new(n_threads);
        let inner = &mut self.inner;
        run(py, || inner.absorb(g, &pool))
    }

    /// The tie groups as `(values, n_pos, n_neg, w_pos | None, w_neg | None)`.
    #[pyo3(signature = (n_threads=0))]
    fn groups<'py>(&mut self, py: Python<'py>, n_threads: usize) -> PyResult<Bound<'py, PyAny>> {
        let pool = Pool::new(n_threads);
        let inner = &mut self.inner;
        let g = run(py, || inner.groups(&pool))?;
        group_arrays(py, g)
    }

    /// The ranking walk over every row added (the dict of `binary_ranking`).
    #[pyo3(signature = (curves=true, n_threads=0))]
    fn walk<'py>(
        &mut self,
        py: Python<'py>,
        curves: bool,
        n_threads: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = Pool::new(n_threads);
        let inner = &mut self.inner;
        let r = run(py, || inner.walk(curves, &pool))?;
        ranking_py(py, &r)
    }
}

/// The rows a ranking state takes: correctness, confidence and optional
/// weights, borrowed from the arrays.
type RankingRows<'a> = (&'a [bool], &'a [f64], Option<&'a [f64]>);

/// Borrow the rows of `GroupState.add` and `add_segments`.
fn ranking_rows<'a>(
    positive: &'a PyReadonlyArray1<'_, bool>,
    score: &'a PyReadonlyArray1<'_, f64>,
    sample_weight: &'a Option<PyReadonlyArray1<'_, f64>>,
) -> PyResult<RankingRows<'a>> {
    Ok((
        slice(positive, "correct")?,
        slice(score, "confidence")?,
        opt_slice(sample_weight, "sample_weight")?,
    ))
}

/// The core states behind the Python ones, for the kernels over many states.
fn inner_states<'a>(states: &'a mut [PyRefMut<'_, GroupState>]) -> Vec<&'a mut rk::GroupState> {
    states.iter_mut().map(|st| &mut st.inner).collect()
}

/// Add segment `g` of the rows (`offsets[g]..offsets[g + 1]`) to
/// `states[g]`, every state in one call, side by side on the threads
/// (`rk::add_segments`: every row is checked before any state changes; with
/// `bins`, each score is binned first, as `GroupState.add` does).
#[pyfunction]
#[pyo3(signature = (states, positive, score, offsets, sample_weight=None, bins=None, n_threads=0))]
#[allow(clippy::too_many_arguments)]
pub fn add_segments(
    py: Python<'_>,
    mut states: Vec<PyRefMut<'_, GroupState>>,
    positive: PyReadonlyArray1<'_, bool>,
    score: PyReadonlyArray1<'_, f64>,
    offsets: PyReadonlyArray1<'_, i64>,
    sample_weight: Option<PyReadonlyArray1<'_, f64>>,
    bins: Option<u32>,
    n_threads: usize,
) -> PyResult<()> {
    let (p, s, w) = ranking_rows(&positive, &score, &sample_weight)?;
    let o = slice(&offsets, "offsets")?;
    let pool = Pool::new(n_threads);
    let mut inner = inner_states(&mut states);
    run(py, || rk::add_segments(&mut inner, p, s, o, w, bins, &pool))
}

/// The ranking walk of each state (as `GroupState.walk`), the states side by
/// side on the threads (`rk::walk_states`): a list in the order given.
#[pyfunction]
#[pyo3(signature = (states, curves=true, n_threads=0))]
pub fn walk_states<'py>(
    py: Python<'py>,
    mut states: Vec<PyRefMut<'py, GroupState>>,
    curves: bool,
    n_threads: usize,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let pool = Pool::new(n_threads);
    let mut inner = inner_states(&mut states);
    let walks = run(py, || rk::walk_states(&mut inner, curves, &pool))?;
    walks.iter().map(|r| ranking_py(py, r)).collect()
}

/// A new state holding every row of `states` (`rk::union_states`: each is
/// compacted, then their tie groups are merged by key; they keep their rows).
#[pyfunction]
#[pyo3(signature = (states, n_threads=0))]
pub fn union_states(
    py: Python<'_>,
    mut states: Vec<PyRefMut<'_, GroupState>>,
    n_threads: usize,
) -> PyResult<GroupState> {
    let pool = Pool::new(n_threads);
    let mut inner = inner_states(&mut states);
    let union = run(py, || rk::union_states(&mut inner, &pool))?;
    Ok(GroupState { inner: union })
}

/// The ranking walk of the union of `states` (as `union_states(states).walk()`)
/// without making the union (`rk::walk_union`: their tie groups merged by key
/// straight into the walk).
#[pyfunction]
#[pyo3(signature = (states, curves=true, n_threads=0))]
pub fn walk_union<'py>(
    py: Python<'py>,
    mut states: Vec<PyRefMut<'py, GroupState>>,
    curves: bool,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let pool = Pool::new(n_threads);
    let mut inner = inner_states(&mut states);
    let walk = run(py, || rk::walk_union(&mut inner, curves, &pool))?;
    ranking_py(py, &walk)
}

/// The counts at each distinct score, cumulated from the highest down:
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
    macro_rules! go {
        ($a:expr) => {{
            let s = slice($a, "y_score")?;
            run_pool(py, s.len(), &pool, |pool| {
                rk::threshold_counts(p, s, w, rule, pool)
            })?
        }};
    }
    let c = match &score {
        ScoreArray::F64(a) => go!(a),
        ScoreArray::F32(a) => go!(a),
        ScoreArray::I64(a) => go!(a),
        ScoreArray::U64(a) => go!(a),
    };
    named!(
        py,
        "ThresholdCounts",
        c.fps.into_pyarray(py),
        c.tps.into_pyarray(py),
        c.thresholds.into_pyarray(py),
    )
}

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
#[pyo3(signature = (y_score, columns, codes=None, indicator=None, sample_weight=None, curves=true, n_threads=0))]
#[allow(clippy::too_many_arguments)]
pub fn one_vs_rest<'py>(
    py: Python<'py>,
    y_score: ScoreMatrix<'py>,
    columns: Vec<usize>,
    codes: Option<PyReadonlyArray1<'py, u32>>,
    indicator: Option<PyReadonlyArray2<'py, bool>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    curves: bool,
    n_threads: usize,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
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
    walks.iter().map(|r| ranking_py(py, r)).collect()
}

/// The (weighted) count of rows by the rank of their true class among the
/// row's scores (`rk::rank_histogram`; top-k accuracy is a prefix sum).
#[pyfunction]
#[pyo3(signature = (y_score, codes, sample_weight=None, n_threads=0))]
pub fn rank_histogram<'py>(
    py: Python<'py>,
    y_score: ScoreMatrix<'py>,
    codes: PyReadonlyArray1<'py, u32>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_threads: usize,
) -> PyResult<Bound<'py, numpy::PyArray1<f64>>> {
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
    y_score: ScoreMatrix<'py>,
    codes: PyReadonlyArray1<'py, u32>,
    offsets: PyReadonlyArray1<'py, i64>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
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
    y_score: ScoreMatrix<'py>,
    codes: PyReadonlyArray1<'py, u32>,
    bins: u32,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_threads: usize,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
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
    y_score: ScoreMatrix<'py>,
    codes: PyReadonlyArray1<'py, u32>,
    offsets: PyReadonlyArray1<'py, i64>,
    bins: u32,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
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

/// Hand and Till's multiclass AUROC over the pairs of classes with rows:
/// `OneVsOne(n_pairs, macro_auc, weighted_auc)`, in memory bounded by the rows.
#[pyfunction]
#[pyo3(signature = (y_score, codes, n_threads=0))]
pub fn one_vs_one<'py>(
    py: Python<'py>,
    y_score: ScoreMatrix<'py>,
    codes: PyReadonlyArray1<'py, u32>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let c = slice(&codes, "y_true")?;
    let pool = Pool::new(n_threads);
    let r = on_matrix!(py, pool, y_score, |m, pool| rk::one_vs_one_auc(c, m, pool));
    named!(py, "OneVsOne", r.n_pairs, r.macro_auc, r.weighted_auc)
}

/// Add this family's functions to the extension module (every Python function
/// of this file is listed here, and nowhere else).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(binary_ranking, m)?)?;
    m.add_function(wrap_pyfunction!(kendall_counts, m)?)?;
    m.add_function(wrap_pyfunction!(score_groups, m)?)?;
    m.add_function(wrap_pyfunction!(merge_groups, m)?)?;
    m.add_function(wrap_pyfunction!(walk_groups, m)?)?;
    m.add_function(wrap_pyfunction!(one_vs_rest, m)?)?;
    m.add_function(wrap_pyfunction!(threshold_counts, m)?)?;
    m.add_function(wrap_pyfunction!(one_vs_one, m)?)?;
    m.add_function(wrap_pyfunction!(rank_histogram, m)?)?;
    m.add_function(wrap_pyfunction!(rank_histogram_groups, m)?)?;
    m.add_function(wrap_pyfunction!(binned_one_vs_rest, m)?)?;
    m.add_function(wrap_pyfunction!(grouped_binned_histograms, m)?)?;
    m.add_function(wrap_pyfunction!(add_segments, m)?)?;
    m.add_function(wrap_pyfunction!(walk_states, m)?)?;
    m.add_function(wrap_pyfunction!(walk_union, m)?)?;
    m.add_function(wrap_pyfunction!(union_states, m)?)?;
    m.add_class::<GroupState>()?;
    Ok(())
}
