//! Bindings of `cmetrics_core::grouping`: rows split by group.

use cmetrics_core::Pool;
use numpy::{
    IntoPyArray, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::prelude::*;

use crate::arrays::{extract_2d, slice};
use crate::error::run_pool;
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
    m.add_function(wrap_pyfunction!(scatter_rows, m)?)?;
    Ok(())
}
