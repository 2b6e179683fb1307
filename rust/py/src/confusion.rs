//! Bindings of `cmetrics_core::confusion` and `labels`.

use cmetrics_core::labels::{encode_keys, encode_strings as core_encode_strings, Ucs4};
use cmetrics_core::{Confusion, CountOptions, Pool};
use numpy::ndarray::Array2;
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::prelude::*;

use crate::arrays::opt_slice;
use crate::arrays::{extract_2d, mismatched_dtypes, slice, slice2, LabelArray};
use crate::error::{run, run_attached, run_pool, LabelError, ValidationError};
use crate::results::named;
use pyo3::types::{PyFloat, PyString};

fn square<T: numpy::Element>(
    py: Python<'_>,
    v: Vec<T>,
    k: usize,
) -> PyResult<Bound<'_, PyArray2<T>>> {
    Array2::from_shape_vec((k, k), v)
        .map(|a| a.into_pyarray(py))
        .map_err(|e| ValidationError::new_err(e.to_string()))
}

/// `Counted(labels, counts, weighted)`.
fn to_py(py: Python<'_>, c: Confusion) -> PyResult<Bound<'_, PyAny>> {
    let k = c.k();
    let weighted = match c.weighted {
        Some(w) => Some(square(py, w, k)?),
        None => None,
    };
    named!(
        py,
        "Counted",
        PyArray1::from_vec(py, c.labels),
        square(py, c.counts, k)?,
        weighted
    )
}

/// Count the confusion matrix over the labels that occur.
#[pyfunction]
#[pyo3(signature = (y_true, y_pred, sample_weight=None, *, max_classes=4096, n_threads=0, min_parallel=None))]
pub fn confusion_matrix<'py>(
    py: Python<'py>,
    y_true: LabelArray<'py>,
    y_pred: LabelArray<'py>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    max_classes: usize,
    n_threads: usize,
    min_parallel: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let w = opt_slice(&sample_weight, "sample_weight")?;
    let opts = CountOptions { max_classes };
    let mut pool = Pool::new(n_threads);
    if let Some(rows) = min_parallel {
        pool = pool.with_min_parallel(rows);
    }
    let counted = match (&y_true, &y_pred) {
        (LabelArray::I32(t), LabelArray::I32(p)) => {
            let (t, p) = (slice(t, "y_true")?, slice(p, "y_pred")?);
            run_pool(py, t.len(), &pool, |pool| {
                cmetrics_core::confusion_matrix(t, p, w, &opts, pool)
            })?
        }
        (LabelArray::I64(t), LabelArray::I64(p)) => {
            let (t, p) = (slice(t, "y_true")?, slice(p, "y_pred")?);
            run_pool(py, t.len(), &pool, |pool| {
                cmetrics_core::confusion_matrix(t, p, w, &opts, pool)
            })?
        }
        _ => return Err(mismatched_dtypes()),
    };
    to_py(py, counted)
}

/// Count codes known to lie in `0..n_classes`; every class keeps its row.
#[pyfunction]
#[pyo3(signature = (y_true, y_pred, n_classes, sample_weight=None, *, n_threads=0))]
pub fn confusion_matrix_codes<'py>(
    py: Python<'py>,
    y_true: LabelArray<'py>,
    y_pred: LabelArray<'py>,
    n_classes: usize,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let w = opt_slice(&sample_weight, "sample_weight")?;
    let pool = Pool::new(n_threads);
    let counted = match (&y_true, &y_pred) {
        (LabelArray::I32(t), LabelArray::I32(p)) => {
            let (t, p) = (slice(t, "y_true")?, slice(p, "y_pred")?);
            run_pool(py, t.len(), &pool, |pool| {
                cmetrics_core::confusion_matrix_codes(t, p, w, n_classes, pool)
            })?
        }
        (LabelArray::I64(t), LabelArray::I64(p)) => {
            let (t, p) = (slice(t, "y_true")?, slice(p, "y_pred")?);
            run_pool(py, t.len(), &pool, |pool| {
                cmetrics_core::confusion_matrix_codes(t, p, w, n_classes, pool)
            })?
        }
        _ => return Err(mismatched_dtypes()),
    };
    to_py(py, counted)
}

/// Encode two fixed-width UCS-4 string arrays (viewed as `(n, width)` uint32)
/// to shared codes sorted by code point.
#[pyfunction]
#[pyo3(signature = (a, b, *, max_classes=4096))]
pub fn encode_strings<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    max_classes: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let a: PyReadonlyArray2<'py, u32> = extract_2d(a, "y_true")?;
    let b: PyReadonlyArray2<'py, u32> = extract_2d(b, "y_pred")?;
    let ua = Ucs4 {
        data: slice2(&a, "y_true")?,
        width: a.shape().get(1).copied().unwrap_or(0),
    };
    let ub = Ucs4 {
        data: slice2(&b, "y_pred")?,
        width: b.shape().get(1).copied().unwrap_or(0),
    };
    let enc = run(py, || core_encode_strings(ua, ub, max_classes))?;
    encoded_to_py(py, enc)
}

/// `Encoded(which, rows, a, b)`.
fn encoded_to_py(
    py: Python<'_>,
    enc: cmetrics_core::labels::EncodedStrings,
) -> PyResult<Bound<'_, PyAny>> {
    let which: Vec<u8> = enc.first.iter().map(|f| f.0).collect();
    let rows: Vec<u64> = enc.first.iter().map(|f| f.1 as u64).collect();
    named!(
        py,
        "Encoded",
        PyArray1::from_vec(py, which),
        PyArray1::from_vec(py, rows),
        PyArray1::from_vec(py, enc.a),
        PyArray1::from_vec(py, enc.b)
    )
}

/// The string of each element of an object array (trailing NULs dropped, as
/// numpy's fixed-width strings drop them), or the `LabelError` naming the
/// first element that is not a string (missing: None/NaN; else mixed) or not
/// valid Unicode text (a lone surrogate).
fn object_strs<'a>(objs: &'a [Py<PyAny>], py: Python<'_>, name: &str) -> PyResult<Vec<&'a str>> {
    let mut out = Vec::with_capacity(objs.len());
    for (i, o) in objs.iter().enumerate() {
        let b = o.bind_borrowed(py);
        if let Ok(s) = b.cast::<PyString>() {
            let mut size: pyo3::ffi::Py_ssize_t = 0;
            // SAFETY: `s` is a live str; PyUnicode_AsUTF8AndSize returns its
            // cached UTF-8 buffer (or NULL with an exception set).
            let data = unsafe { pyo3::ffi::PyUnicode_AsUTF8AndSize(s.as_ptr(), &raw mut size) };
            if data.is_null() {
                // Only a lone surrogate has no UTF-8 form.
                drop(PyErr::take(py));
                return Err(LabelError::new_err(format!(
                    "{name}[{i}] is not valid Unicode text (it holds a lone surrogate); labels must be valid strings"
                )));
            }
            let len = usize::try_from(size).unwrap_or(0);
            // SAFETY: the buffer is valid UTF-8 of `len` bytes and lives as long
            // as the str object, which the array (borrowed for 'a) references;
            // the caller keeps the GIL, so no other thread can replace it.
            let text = unsafe {
                std::str::from_utf8_unchecked(std::slice::from_raw_parts(data.cast::<u8>(), len))
            };
            out.push(text.trim_end_matches('\0'));
            continue;
        }
        let missing = b.is_none() || b.cast::<PyFloat>().is_ok_and(|f| f.value().is_nan());
        let repr = b.repr().map(|r| r.to_string()).unwrap_or_default();
        return Err(if missing {
            LabelError::new_err(format!(
                "{name}[{i}] is missing ({repr}); every sample needs a label"
            ))
        } else {
            LabelError::new_err(format!(
                "{name} mixes string and number labels ({name}[{i}] = {repr}); use one label type"
            ))
        });
    }
    Ok(out)
}

/// Encode two object arrays of Python `str` to shared codes sorted by code
/// point (UTF-8 byte order), without converting them to fixed-width arrays.
///
/// This one kernel keeps the GIL: the `&str` it hashes point into the string
/// objects, which another Python thread could release by overwriting the
/// array while the GIL is free.
#[pyfunction]
#[pyo3(signature = (a, b, *, max_classes=4096))]
pub fn encode_objects<'py>(
    py: Python<'py>,
    a: PyReadonlyArray1<'py, Py<PyAny>>,
    b: PyReadonlyArray1<'py, Py<PyAny>>,
    max_classes: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let sa = object_strs(slice(&a, "y_true")?, py, "y_true")?;
    let sb = object_strs(slice(&b, "y_pred")?, py, "y_pred")?;
    let enc = run_attached(|| encode_keys(&sa, &sb, max_classes))?;
    encoded_to_py(py, enc)
}

/// Add this family's functions to the extension module (every Python function
/// of this file is listed here, and nowhere else).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(confusion_matrix, m)?)?;
    m.add_function(wrap_pyfunction!(confusion_matrix_codes, m)?)?;
    m.add_function(wrap_pyfunction!(encode_strings, m)?)?;
    m.add_function(wrap_pyfunction!(encode_objects, m)?)?;
    Ok(())
}
