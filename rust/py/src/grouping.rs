//! Bindings of `cmetrics_core::grouping`: rows split by group.

use cmetrics_core::Pool;
use numpy::{
    IntoPyArray, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::prelude::*;

use crate::arrays::{extract_2d, mismatched_dtypes, opt_slice, slice, LabelArray};
use crate::error::{run_pool, ValidationError};
use crate::results::named;

/// Each row's position in the group-by-group order, and each group's first
/// position (`n_groups + 1` offsets): `cmetrics_core::grouping::group_positions`.
#[pyfunction]
#[pyo3(signature = (codes, n_groups, n_threads=0))]
pub fn group_positions<'py>(
    py: Python<'py>,
    codes: PyReadonlyArray1<'py, u32>,
    n_groups: usize,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let c = slice(&codes, "groups")?;
    let pool = Pool::new(n_threads);
    let (positions, offsets) = run_pool(py, c.len(), &pool, |pool| {
        cmetrics_core::grouping::group_positions(c, n_groups, pool)
    })?;
    named!(
        py,
        "GroupSplit",
        positions.into_pyarray(py),
        offsets.into_pyarray(py)
    )
}

/// The confusion table of every group (`GroupedCounts`: group values, labels,
/// `G x K x K` counts and weighted sums), or None when the value ranges are too
/// wide for `max_cells`: `cmetrics_core::grouped_confusion::grouped_confusion`.
#[pyfunction]
#[pyo3(signature = (groups, y_true, y_pred, sample_weight=None, *, max_cells, n_threads=0))]
pub fn grouped_confusion<'py>(
    py: Python<'py>,
    groups: LabelArray<'py>,
    y_true: LabelArray<'py>,
    y_pred: LabelArray<'py>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    max_cells: usize,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    use cmetrics_core::grouped_confusion::grouped_confusion as count;
    let w = opt_slice(&sample_weight, "sample_weight")?;
    let pool = Pool::new(n_threads);
    macro_rules! run {
        ($g:expr, $t:expr, $p:expr) => {{
            let (g, t, p) = (
                slice($g, "groups")?,
                slice($t, "y_true")?,
                slice($p, "y_pred")?,
            );
            run_pool(py, g.len(), &pool, |pool| {
                count(g, t, p, w, max_cells, pool)
            })?
        }};
    }
    let counted = match (&groups, &y_true, &y_pred) {
        (LabelArray::I64(g), LabelArray::I64(t), LabelArray::I64(p)) => run!(g, t, p),
        (LabelArray::I32(g), LabelArray::I64(t), LabelArray::I64(p)) => run!(g, t, p),
        (LabelArray::I64(g), LabelArray::I32(t), LabelArray::I32(p)) => run!(g, t, p),
        (LabelArray::I32(g), LabelArray::I32(t), LabelArray::I32(p)) => run!(g, t, p),
        _ => return Err(mismatched_dtypes()),
    };
    let Some(c) = counted else {
        return Ok(py.None().into_bound(py));
    };
    let (g, k) = (c.groups.len(), c.labels.len());
    let shaped = |v: numpy::ndarray::Array1<u64>| v.into_shape_with_order((g, k, k));
    let counts = shaped(numpy::ndarray::Array1::from_vec(c.counts))
        .map_err(|e| ValidationError::new_err(e.to_string()))?;
    let weighted = match c.weighted {
        Some(w) => Some(
            numpy::ndarray::Array1::from_vec(w)
                .into_shape_with_order((g, k, k))
                .map_err(|e| ValidationError::new_err(e.to_string()))?
                .into_pyarray(py),
        ),
        None => None,
    };
    named!(
        py,
        "GroupedCounts",
        c.groups.into_pyarray(py),
        c.labels.into_pyarray(py),
        counts.into_pyarray(py),
        weighted
    )
}

/// A matrix (float32 or float64, either memory order) with its rows laid out
/// at `positions`, row-major: `cmetrics_core::grouping::scatter_rows`.
#[pyfunction]
#[pyo3(signature = (matrix, positions, n_threads=0))]
pub fn scatter_rows<'py>(
    py: Python<'py>,
    matrix: &Bound<'py, PyAny>,
    positions: PyReadonlyArray1<'py, i64>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let matrix: RowMatrix<'py> = extract_2d(matrix, "matrix")?;
    let at = slice(&positions, "positions")?;
    let pool = Pool::new(n_threads);
    macro_rules! scatter {
        ($a:expr) => {{
            let k = $a.shape().get(1).copied().unwrap_or(0);
            let (values, column_major) = crate::arrays::matrix($a, "matrix")?;
            let out = run_pool(py, at.len(), &pool, |pool| {
                cmetrics_core::grouping::scatter_rows(values, k, column_major, at, pool)
            })?;
            let rows = at.len();
            Ok(out.into_pyarray(py).reshape([rows, k])?.into_any())
        }};
    }
    match &matrix {
        RowMatrix::F32(a) => scatter!(a),
        RowMatrix::F64(a) => scatter!(a),
    }
}

/// A matrix of probabilities.
#[derive(FromPyObject)]
pub enum RowMatrix<'py> {
    /// float32 values.
    F32(PyReadonlyArray2<'py, f32>),
    /// float64 values.
    F64(PyReadonlyArray2<'py, f64>),
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(group_positions, m)?)?;
    m.add_function(wrap_pyfunction!(grouped_confusion, m)?)?;
    m.add_function(wrap_pyfunction!(scatter_rows, m)?)?;
    Ok(())
}
