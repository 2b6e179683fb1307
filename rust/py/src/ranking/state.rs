//! The exact streaming ranking state (`GroupState`) and the kernels over many
//! states at once.

use super::binary::ranking_py;
use super::groups::{group_arrays, group_ref, GroupArgs};
use crate::results::named;
use cmetrics_core::ranking as rk;
use cmetrics_core::Pool;
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;

use crate::arrays::opt_slice;
use crate::arrays::slice;
use crate::error::run;

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

    /// Points of the curve from the highest score down, `(fps, tps, thresholds)`:
    /// every group up to `steps` of them, else the first of each of `steps`
    /// equal steps of `(fpr + tpr) / 2` and the two ends.
    #[pyo3(signature = (steps, n_threads=0))]
    fn curve_points<'py>(
        &mut self,
        py: Python<'py>,
        steps: usize,
        n_threads: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = Pool::new(n_threads);
        let inner = &mut self.inner;
        let c = run(py, || inner.curve_points(steps, &pool))?;
        named!(
            py,
            "CurvePoints",
            c.fps.into_pyarray(py),
            c.tps.into_pyarray(py),
            c.thresholds.into_pyarray(py),
        )
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
