//! Bindings of `cmetrics_core::random` and `cmetrics_core::resampling`: the
//! counter-based stream, the Poisson bootstrap of row sums and of the
//! ranking walk.

use cmetrics_core::random::{philox4x32, row_weights, REPLICATES_PER_BLOCK};
use cmetrics_core::resampling::{
    draw_cell_walks as core_draw_walks, multinomial_draws as core_multinomial,
    replicate_ranking as core_ranking, replicate_sums as core_sums,
    walk_cell_weights as core_cell_walk, Columns, RankingReplicates, Replicates, RowIds, Segment,
};
use cmetrics_core::Pool;
use numpy::ndarray::Array2;
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::prelude::*;

use crate::arrays::{opt_slice, slice, slice2, usizes};
use crate::error::{run, run_pool, ValidationError};
use crate::ranking::{with_scores, ScoreArray};
use crate::results::named;

/// Philox4x32 with `rounds` rounds of each row of `counters` (`m x 4` uint32)
/// under `key` (two words): the `m x 4` output words.
#[pyfunction]
#[pyo3(signature = (counters, key, rounds=10))]
pub fn philox4x32_blocks<'py>(
    py: Python<'py>,
    counters: PyReadonlyArray2<'py, u32>,
    key: (u32, u32),
    rounds: usize,
) -> PyResult<Bound<'py, PyArray2<u32>>> {
    if counters.shape()[1] != 4 {
        return Err(ValidationError::new_err("counters must have 4 columns"));
    }
    let c = slice2(&counters, "counters")?;
    let out = run(py, || {
        Ok(c.chunks_exact(4)
            .flat_map(|w| philox4x32(rounds, [w[0], w[1], w[2], w[3]], [key.0, key.1]))
            .collect::<Vec<u32>>())
    })?;
    let m = out.len() / 4;
    Array2::from_shape_vec((m, 4), out)
        .map(|a| a.into_pyarray(py))
        .map_err(|e| ValidationError::new_err(e.to_string()))
}

/// The Poisson(1) weight of each of `rows` (global indices) in replicates
/// `0 .. n_resamples` of stream `seed`: `n_resamples x len(rows)` uint8.
#[pyfunction]
pub fn poisson_weights<'py>(
    py: Python<'py>,
    rows: PyReadonlyArray1<'py, u64>,
    seed: u64,
    n_resamples: usize,
) -> PyResult<Bound<'py, PyArray2<u8>>> {
    let ids = slice(&rows, "rows")?;
    let n = ids.len();
    let out = run(py, || {
        let mut out =
            cmetrics_core::memory::try_filled(n_resamples * n, 0u8, "the Poisson weights")?;
        let mut w: [Vec<u8>; REPLICATES_PER_BLOCK] = Default::default();
        for block in 0..n_resamples.div_ceil(REPLICATES_PER_BLOCK) {
            row_weights(seed, block as u32, ids, &mut w);
            for (j, weights) in w.iter().enumerate() {
                let b = REPLICATES_PER_BLOCK * block + j;
                if b < n_resamples {
                    out[b * n..(b + 1) * n].copy_from_slice(weights);
                }
            }
        }
        Ok(out)
    })?;
    Array2::from_shape_vec((n_resamples, n), out)
        .map(|a| a.into_pyarray(py))
        .map_err(|e| ValidationError::new_err(e.to_string()))
}

/// Where a segment goes: one column for every row, or a column per row.
#[derive(FromPyObject)]
pub enum SegmentColumns<'py> {
    /// The same column for every row.
    Fixed(usize),
    /// One uint32 column per row.
    PerRow(PyReadonlyArray1<'py, u32>),
}

/// The rows' global indices: the first of consecutive rows, or one per row.
#[derive(FromPyObject)]
pub enum RowArg<'py> {
    /// Consecutive rows from this index.
    From(u64),
    /// One uint64 index per row.
    Listed(PyReadonlyArray1<'py, u64>),
}

/// The `n_resamples x width` Poisson-bootstrap replicates of the row sums of
/// `values` (`n x F` float64, C order), segment by segment
/// (`cmetrics_core::resampling::replicate_sums`).
#[pyfunction]
#[pyo3(signature = (values, segments, rows, seed, n_resamples, width, n_threads=0))]
#[allow(clippy::too_many_arguments)]
pub fn replicate_sums<'py>(
    py: Python<'py>,
    values: PyReadonlyArray2<'py, f64>,
    segments: Vec<(usize, SegmentColumns<'py>)>,
    rows: RowArg<'py>,
    seed: u64,
    n_resamples: usize,
    width: usize,
    n_threads: usize,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let n_values = values.shape()[1];
    let v = slice2(&values, "values")?;
    let mut segs = Vec::with_capacity(segments.len());
    for (len, cols) in &segments {
        let columns = match cols {
            SegmentColumns::Fixed(c) => Columns::Fixed(*c),
            SegmentColumns::PerRow(a) => Columns::PerRow(slice(a, "segments")?),
        };
        segs.push(Segment { len: *len, columns });
    }
    let ids = match &rows {
        RowArg::From(first) => RowIds::From(*first),
        RowArg::Listed(a) => RowIds::Listed(slice(a, "rows")?),
    };
    let spec = Replicates {
        seed,
        n_resamples,
        width,
    };
    let n = values.shape()[0];
    let pool = Pool::new(n_threads);
    let out = run_pool(py, n.saturating_mul(n_resamples) / 64, &pool, |pool| {
        core_sums(v, n_values, &segs, ids, spec, pool)
    })?;
    Array2::from_shape_vec((n_resamples, width), out)
        .map(|a| a.into_pyarray(py))
        .map_err(|e| ValidationError::new_err(e.to_string()))
}

/// The ranking metrics of `n_resamples` Poisson-bootstrap replicates of
/// `(positive, score)`, the rows keyed as for [`replicate_sums`]:
/// `RankingReplicates(auroc, average_precision, tied_share, aurc, w_pos, w_neg,
/// ordered, tied, n_pos, n_neg)`; the average precision and AURC are NaN
/// unless `curves`; the last four count the rows themselves (0 with weights).
#[pyfunction]
#[pyo3(signature = (positive, score, sample_weight, rows, seed, n_resamples, n_threads=0, curves=true))]
#[allow(clippy::too_many_arguments)]
pub fn replicate_ranking<'py>(
    py: Python<'py>,
    positive: PyReadonlyArray1<'py, bool>,
    score: ScoreArray<'py>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    rows: RowArg<'py>,
    seed: u64,
    n_resamples: usize,
    n_threads: usize,
    curves: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let p = slice(&positive, "y_true")?;
    let w = opt_slice(&sample_weight, "sample_weight")?;
    let ids = match &rows {
        RowArg::From(first) => RowIds::From(*first),
        RowArg::Listed(a) => RowIds::Listed(slice(a, "rows")?),
    };
    let pool = Pool::new(n_threads);
    let r = with_scores!(score, "y_score", |s| run_pool(
        py,
        s.len().saturating_mul(n_resamples) / 64,
        &pool,
        |pool| { core_ranking(p, s, w, ids, seed, n_resamples, curves, pool) }
    )?);
    ranking_replicates(py, r)
}

/// The Python `RankingReplicates` of a kernel's result.
fn ranking_replicates(py: Python<'_>, r: RankingReplicates) -> PyResult<Bound<'_, PyAny>> {
    named!(
        py,
        "RankingReplicates",
        PyArray1::from_vec(py, r.auroc),
        PyArray1::from_vec(py, r.average_precision),
        PyArray1::from_vec(py, r.tied_share),
        PyArray1::from_vec(py, r.aurc),
        PyArray1::from_vec(py, r.w_pos),
        PyArray1::from_vec(py, r.w_neg),
        r.pairs[0],
        r.pairs[1],
        r.pairs[2],
        r.pairs[3],
    )
}

/// Replicates `first .. first + count` of the multinomial resampling of the
/// cell `counts`, each stratum (its cells end at `stratum_ends`) keeping its
/// total: `count x cells` float64 counts, the same on any thread count.
#[pyfunction]
#[pyo3(signature = (counts, stratum_ends, first, count, seed, n_threads=0))]
pub fn multinomial_draws<'py>(
    py: Python<'py>,
    counts: PyReadonlyArray1<'py, u64>,
    stratum_ends: PyReadonlyArray1<'py, u64>,
    first: u64,
    count: usize,
    seed: u64,
    n_threads: usize,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let c = slice(&counts, "counts")?;
    let ends = usizes(&stratum_ends, "stratum_ends")?;
    let cells = c.len();
    let pool = Pool::new(n_threads);
    let out = run_pool(py, cells.saturating_mul(count) / 8, &pool, |pool| {
        core_multinomial(c, &ends, first, count, seed, pool)
    })?;
    Array2::from_shape_vec((count, cells), out)
        .map(|a| a.into_pyarray(py))
        .map_err(|e| ValidationError::new_err(e.to_string()))
}

/// The ranking metrics of each replicate of drawn (group, side) cell weights:
/// `drawn` is `replicates x cells`, `cells` the listed cells in increasing
/// order (cell `c < groups` the positives of group `c`, `groups + c` its
/// negatives, the groups from the highest score down). The same
/// `RankingReplicates` as [`replicate_ranking`], the rows' pair counts 0.
#[pyfunction]
#[pyo3(signature = (drawn, cells, groups, curves=true))]
pub fn walk_cell_weights<'py>(
    py: Python<'py>,
    drawn: PyReadonlyArray2<'py, f64>,
    cells: PyReadonlyArray1<'py, u64>,
    groups: usize,
    curves: bool,
) -> PyResult<Bound<'py, PyAny>> {
    if drawn.shape()[1] != cells.len() {
        return Err(ValidationError::new_err(format!(
            "drawn has {} columns but there are {} cells; pass one column per cell",
            drawn.shape()[1],
            cells.len()
        )));
    }
    let d = slice2(&drawn, "drawn")?;
    let c = usizes(&cells, "cells")?;
    let r = run(py, || core_cell_walk(d, &c, groups, curves))?;
    ranking_replicates(py, r)
}

/// Replicates `first .. first + count` of `walk_cell_weights` drawn on the
/// spot: `counts` holds the rows of each listed cell (one stratum), each
/// replicate's cell weights `multinomial_draws` of them, walked as soon as
/// drawn. The same `RankingReplicates` as the two calls, bit for bit, on any
/// thread count, without the `count x cells` draws in memory.
#[pyfunction]
#[pyo3(signature = (counts, cells, groups, first, count, seed, curves=true, n_threads=0))]
#[allow(clippy::too_many_arguments)] // the two calls' arguments, as Python passes them
pub fn draw_cell_walks<'py>(
    py: Python<'py>,
    counts: PyReadonlyArray1<'py, u64>,
    cells: PyReadonlyArray1<'py, u64>,
    groups: usize,
    first: u64,
    count: usize,
    seed: u64,
    curves: bool,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let n = slice(&counts, "counts")?;
    let c = usizes(&cells, "cells")?;
    let pool = Pool::new(n_threads);
    let r = run_pool(py, c.len().saturating_mul(count) / 8, &pool, |pool| {
        core_draw_walks(n, &c, groups, (first, count, seed), curves, pool)
    })?;
    ranking_replicates(py, r)
}

/// Add the functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(philox4x32_blocks, m)?)?;
    m.add_function(wrap_pyfunction!(poisson_weights, m)?)?;
    m.add_function(wrap_pyfunction!(replicate_sums, m)?)?;
    m.add_function(wrap_pyfunction!(replicate_ranking, m)?)?;
    m.add_function(wrap_pyfunction!(multinomial_draws, m)?)?;
    m.add_function(wrap_pyfunction!(walk_cell_weights, m)?)?;
    m.add_function(wrap_pyfunction!(draw_cell_walks, m)?)?;
    Ok(())
}
