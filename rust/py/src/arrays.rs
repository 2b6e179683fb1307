//! Numpy intake: dtype dispatch enums and zero-copy slices.

use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::error::ValidationError;

/// Integer labels as the kernels read them; the Python layer casts every
/// other label dtype to one of these once.
#[derive(FromPyObject)]
pub enum LabelArray<'py> {
    /// int32 labels.
    I32(PyReadonlyArray1<'py, i32>),
    /// int64 labels.
    I64(PyReadonlyArray1<'py, i64>),
}

/// Borrow a contiguous 1-D array as a slice (no copy).
pub fn slice<'a, T: numpy::Element>(
    a: &'a PyReadonlyArray1<'_, T>,
    name: &str,
) -> PyResult<&'a [T]> {
    a.as_slice().map_err(|_| {
        ValidationError::new_err(format!(
            "{name} is not C-contiguous; pass np.ascontiguousarray({name})"
        ))
    })
}

/// Borrow an optional contiguous 1-D array (no copy).
pub fn opt_slice<'a, T: numpy::Element>(
    a: &'a Option<PyReadonlyArray1<'_, T>>,
    name: &str,
) -> PyResult<Option<&'a [T]>> {
    a.as_ref().map(|x| slice(x, name)).transpose()
}

/// Borrow a C-contiguous 2-D array as a flat slice (no copy).
pub fn slice2<'a, T: numpy::Element>(
    a: &'a PyReadonlyArray2<'_, T>,
    name: &str,
) -> PyResult<&'a [T]> {
    a.as_slice().map_err(|_| {
        ValidationError::new_err(format!(
            "{name} is not C-contiguous; pass np.ascontiguousarray({name})"
        ))
    })
}

/// Both label arrays must share a dtype.
pub fn mismatched_dtypes() -> PyErr {
    PyTypeError::new_err("y_true and y_pred must share one integer dtype (int32 or int64)")
}
