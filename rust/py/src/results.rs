//! Kernel results as the named tuples of `cmetrics._kernels`, where the field names are
//! spelled once; the bindings fill them positionally, in field order (a test compares every
//! field with the numpy backend's).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyTuple;

/// Build `cmetrics._kernels.<name>(fields...)`.
pub fn build<'py>(
    py: Python<'py>,
    name: &str,
    fields: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let module =
        MODULE.get_or_try_init(py, || py.import("cmetrics._kernels").map(Bound::unbind))?;
    module
        .bind(py)
        .getattr(name)?
        .call1(PyTuple::new(py, fields)?)
}

/// `named!(py, "Type", field, ...)`: a named tuple of `cmetrics._kernels` from values that
/// convert to Python objects.
macro_rules! named {
    ($py:expr, $name:literal, $($field:expr),+ $(,)?) => {{
        use pyo3::IntoPyObjectExt;
        let py = $py;
        let fields = vec![$($field.into_bound_py_any(py)?),+];
        $crate::results::build(py, $name, fields)
    }};
}
pub(crate) use named;
