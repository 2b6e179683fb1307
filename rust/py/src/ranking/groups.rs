//! Tie groups of scores (the exact streaming summary) as Python tuples of arrays.

use super::binary::{ranking_py, with_scores, ScoreArray};
use cmetrics_core::ranking as rk;
use cmetrics_core::Pool;
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;

use crate::arrays::opt_slice;
use crate::arrays::slice;
use crate::error::{run, run_pool};
use crate::probabilistic::{float_matrix, ProbaArray};
use crate::results::named;

/// `Groups(values, n_pos, n_neg, w_pos | None, w_neg | None)`.
pub(super) fn group_arrays(py: Python<'_>, g: rk::ScoreGroups) -> PyResult<Bound<'_, PyAny>> {
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
pub(super) type GroupArgs<'py> = (
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, u64>,
    PyReadonlyArray1<'py, u64>,
    Option<PyReadonlyArray1<'py, f64>>,
    Option<PyReadonlyArray1<'py, f64>>,
);

pub(super) fn group_ref<'a>(g: &'a GroupArgs<'_>, name: &str) -> PyResult<rk::GroupsRef<'a>> {
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

/// Tie groups of `(positive, score, weight)` in increasing score order
/// (unweighted scores may be a strided view).
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
    let g = if w.is_none() {
        // Unweighted scores may be strided (a column of the probabilities).
        with_scores!(view score, "y_score", |s| run_pool(
            py,
            s.len(),
            &pool,
            |pool| { rk::score_groups_of_view(p, s, pool) }
        )?)
    } else {
        with_scores!(score, "y_score", |s| run_pool(
            py,
            s.len(),
            &pool,
            |pool| { rk::score_groups(p, s, w, pool) }
        )?)
    };
    group_arrays(py, g)
}

/// The tie groups of the second column of binary probabilities, each row
/// checked as the probability pass checks it (few distinct scores counted in
/// the same pass); `None` when a row fails the check.
#[pyfunction]
#[pyo3(signature = (positive, y_proba, atol=None, n_threads=0))]
pub fn binary_proba_groups<'py>(
    py: Python<'py>,
    positive: PyReadonlyArray1<'py, bool>,
    y_proba: &Bound<'py, PyAny>,
    atol: Option<f64>,
    n_threads: usize,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let y_proba = float_matrix(y_proba, "y_proba")?;
    let p = slice(&positive, "y_true")?;
    let pool = Pool::new(n_threads);
    let atol = atol.unwrap_or(f64::NAN);
    let g = match &y_proba {
        ProbaArray::F32(a) => {
            let v = a.as_array();
            run_pool(py, v.nrows(), &pool, |pool| {
                rk::binary_proba_groups(p, v, atol, pool)
            })?
        }
        ProbaArray::F64(a) => {
            let v = a.as_array();
            run_pool(py, v.nrows(), &pool, |pool| {
                rk::binary_proba_groups(p, v, atol, pool)
            })?
        }
    };
    g.map(|g| group_arrays(py, g)).transpose()
}

/// DeLong's placement of every row of `(positive, score)` (float64).
#[pyfunction]
#[pyo3(signature = (positive, score, n_threads=0))]
pub fn row_placements<'py>(
    py: Python<'py>,
    positive: PyReadonlyArray1<'py, bool>,
    score: ScoreArray<'py>,
    n_threads: usize,
) -> PyResult<Bound<'py, numpy::PyArray1<f64>>> {
    let p = slice(&positive, "y_true")?;
    let pool = Pool::new(n_threads);
    let out = with_scores!(score, "y_score", |s| run_pool(
        py,
        s.len(),
        &pool,
        |pool| { rk::row_placements(p, s, pool) }
    )?);
    Ok(out.into_pyarray(py))
}

/// DeLong's paired summary of two models on the same rows
/// (`PairedPlacements(n_pos, n_neg, ordered_a, tied_a, ordered_b, tied_b, pos_aa, pos_bb,
/// pos_ab, neg_aa, neg_bb, neg_ab)`).
#[pyfunction]
#[pyo3(signature = (positive, score_a, score_b, n_threads=0))]
pub fn paired_placements<'py>(
    py: Python<'py>,
    positive: PyReadonlyArray1<'py, bool>,
    score_a: ScoreArray<'py>,
    score_b: ScoreArray<'py>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let p = slice(&positive, "y_true")?;
    let pool = Pool::new(n_threads);
    let r = with_scores!(score_a, "score_a", |a| with_scores!(
        score_b,
        "score_b",
        |b| {
            run_pool(py, a.len(), &pool, |pool| {
                rk::paired_placements(p, a, b, pool)
            })?
        }
    ));
    named!(
        py,
        "PairedPlacements",
        r.n_pos,
        r.n_neg,
        r.a.ordered,
        r.a.tied,
        r.b.ordered,
        r.b.tied,
        r.positive[0],
        r.positive[1],
        r.positive[2],
        r.negative[0],
        r.negative[1],
        r.negative[2],
    )
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
