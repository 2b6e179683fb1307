//! Numpy intake: dtype dispatch enums and zero-copy slices.

use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
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
            "{name} is not a C-contiguous, aligned array; pass np.require({name}, requirements=\"CA\")"
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

fn not_contiguous(name: &str) -> PyErr {
    ValidationError::new_err(format!(
        "{name} is not a C-contiguous, aligned array; pass np.require({name}, requirements=\"CA\")"
    ))
}

/// Borrow a C-contiguous 2-D array as a flat slice of rows (no copy). A
/// Fortran-ordered array is refused: its flat data holds columns.
pub fn slice2<'a, T: numpy::Element>(
    a: &'a PyReadonlyArray2<'_, T>,
    name: &str,
) -> PyResult<&'a [T]> {
    if !a.is_c_contiguous() {
        return Err(not_contiguous(name));
    }
    a.as_slice().map_err(|_| not_contiguous(name))
}

/// Borrow a C- or Fortran-contiguous 2-D array (no copy): its flat data and
/// whether that data holds columns (Fortran order) rather than rows.
pub fn matrix<'a, T: numpy::Element>(
    a: &'a PyReadonlyArray2<'_, T>,
    name: &str,
) -> PyResult<(&'a [T], bool)> {
    let column_major = !a.is_c_contiguous() && a.is_fortran_contiguous();
    if !a.is_c_contiguous() && !column_major {
        return Err(ValidationError::new_err(format!(
            "{name} is neither C- nor Fortran-contiguous; pass np.ascontiguousarray({name})"
        )));
    }
    Ok((
        a.as_slice().map_err(|_| not_contiguous(name))?,
        column_major,
    ))
}

/// Both label arrays must share a dtype.
pub fn mismatched_dtypes() -> PyErr {
    PyTypeError::new_err("y_true and y_pred must share one integer dtype (int32 or int64)")
}
