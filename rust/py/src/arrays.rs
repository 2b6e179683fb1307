//! Numpy intake: dtype dispatch enums and zero-copy slices.

use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::error::{ShapeError, UnsupportedDtypeError, ValidationError};

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

/// Borrow an aligned 1-D array as a view, strided or not (no copy): a
/// column of a row-major matrix is read where it lies.
pub fn view<'a, T: numpy::Element>(
    a: &'a PyReadonlyArray1<'_, T>,
    name: &str,
) -> PyResult<numpy::ndarray::ArrayView1<'a, T>> {
    if !a.is_aligned() {
        return Err(ValidationError::new_err(format!(
            "{name} is not an aligned array; pass np.require({name}, requirements=\"CA\")"
        )));
    }
    Ok(a.as_array())
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

/// Borrow a C-contiguous 2-D array mutably as a flat slice of rows (no
/// copy): a table a kernel adds into in place.
pub fn slice2_mut<'a, T: numpy::Element>(
    a: &'a mut numpy::PyReadwriteArray2<'_, T>,
    name: &str,
) -> PyResult<&'a mut [T]> {
    if !a.is_c_contiguous() {
        return Err(not_contiguous(name));
    }
    a.as_slice_mut().map_err(|_| not_contiguous(name))
}

/// A 1-D `uint64` array of indices or positions as `usize` (a value past
/// the platform's range becomes `usize::MAX`, which the kernels refuse as
/// out of range).
pub fn usizes(a: &PyReadonlyArray1<'_, u64>, name: &str) -> PyResult<Vec<usize>> {
    Ok(slice(a, name)?
        .iter()
        .map(|&e| usize::try_from(e).unwrap_or(usize::MAX))
        .collect())
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

/// A shape as Python writes it: `(4, 4)`, `(8,)`, `()`.
fn py_shape(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Refuse an array argument that is not a 2-D numpy array, as the numpy
/// backend refuses it: a `ShapeError` for another number of dimensions, an
/// `UnsupportedDtypeError` for anything but a numpy array (pyo3's own
/// extraction would say `TypeError` to both). The dtype is left to the
/// extraction that follows.
pub fn check_2d(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<()> {
    let a = obj.cast::<PyUntypedArray>().map_err(|_| {
        UnsupportedDtypeError::new_err(format!(
            "{name} must be a numpy array, got {}",
            type_name(obj)
        ))
    })?;
    if a.ndim() != 2 {
        return Err(ShapeError::new_err(format!(
            "{name} must be 2-D, got shape {}",
            py_shape(a.shape())
        )));
    }
    Ok(())
}

/// The name of `obj`'s type, for messages.
fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "an object".to_owned(), |n| n.to_string())
}

/// A 2-D array argument of kernel type `T` (a readonly array, or an enum of
/// them by dtype): [`check_2d`] first, then pyo3's extraction.
pub fn extract_2d<'py, T>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<T>
where
    T: for<'a> FromPyObject<'a, 'py>,
{
    check_2d(obj, name)?;
    obj.extract::<T>().map_err(Into::into)
}

/// A K x K table of float64 counts or weights (K >= 1), read in row-major
/// order: borrowed when C-contiguous, else copied (K^2 cells, no more than
/// the input holds).
pub struct Table<'py> {
    array: PyReadonlyArray2<'py, f64>,
    copy: Option<Vec<f64>>,
}

impl Table<'_> {
    /// The cells, row by row.
    pub fn cells(&self) -> &[f64] {
        match &self.copy {
            Some(v) => v,
            None => self.array.as_slice().unwrap_or(&[]),
        }
    }
}

/// The table argument of the kernels that derive metrics from a confusion
/// matrix, checked as the numpy backend checks it: a numpy array (else
/// `UnsupportedDtypeError`), square and non-empty (else `ShapeError`), of
/// float64 (else `UnsupportedDtypeError`).
pub fn table<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Table<'py>> {
    const NAME: &str = "confusion matrix";
    let a = obj.cast::<PyUntypedArray>().map_err(|_| {
        UnsupportedDtypeError::new_err(format!(
            "{NAME} must be a numpy array of float64, got {}",
            type_name(obj)
        ))
    })?;
    let shape = a.shape();
    if shape.len() != 2 || shape[0] != shape[1] || shape[0] == 0 {
        return Err(ShapeError::new_err(format!(
            "{NAME} has the wrong shape: {} is not a non-empty square",
            py_shape(shape)
        )));
    }
    let array = obj.extract::<PyReadonlyArray2<'py, f64>>().map_err(|_| {
        UnsupportedDtypeError::new_err(format!(
            "{NAME} has dtype {}; pass a float64 table",
            a.dtype()
        ))
    })?;
    let copy = (!array.is_c_contiguous()).then(|| array.as_array().iter().copied().collect());
    Ok(Table { array, copy })
}
