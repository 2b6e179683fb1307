//! `cmetrics._core`: thin PyO3 bindings over `cmetrics-core`.
//!
//! Each function borrows its numpy inputs (zero-copy), releases the GIL around
//! the core call and maps errors through [`error::run`]. One file per family,
//! mirroring `python/cmetrics/`.

mod arrays;
mod classification;
mod confusion;
mod error;
mod probabilistic;
mod ranking;
mod results;

use pyo3::prelude::*;

/// Deliberately panic inside a kernel call: lets the tests check that a bug
/// surfaces as `cmetrics.exceptions.InternalError`, not a crash.
#[pyfunction]
fn _panic_for_tests(py: Python<'_>) -> PyResult<()> {
    error::run(py, || -> cmetrics_core::Result<()> {
        panic!("deliberate test panic")
    })
}

/// Threads the crate uses when asked for 0 ("all cores").
#[pyfunction]
fn available_threads() -> usize {
    cmetrics_core::parallel::available_threads()
}

/// The most threads a kernel may use (`max(16, 4 x cores)`).
#[pyfunction]
fn max_threads() -> usize {
    cmetrics_core::parallel::max_threads()
}

#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    error::install_panic_hook();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "SEQUENTIAL_BELOW",
        cmetrics_core::parallel::SEQUENTIAL_BELOW,
    )?;
    m.add_function(wrap_pyfunction!(confusion::confusion_matrix, m)?)?;
    m.add_function(wrap_pyfunction!(confusion::confusion_matrix_codes, m)?)?;
    m.add_function(wrap_pyfunction!(confusion::encode_strings, m)?)?;
    m.add_function(wrap_pyfunction!(confusion::encode_objects, m)?)?;
    m.add_function(wrap_pyfunction!(classification::marginals, m)?)?;
    m.add_function(wrap_pyfunction!(classification::precision_recall_fbeta, m)?)?;
    m.add_function(wrap_pyfunction!(classification::accuracy, m)?)?;
    m.add_function(wrap_pyfunction!(classification::balanced_accuracy, m)?)?;
    m.add_function(wrap_pyfunction!(classification::matthews_corrcoef, m)?)?;
    m.add_function(wrap_pyfunction!(classification::cohen_kappa, m)?)?;
    m.add_function(wrap_pyfunction!(classification::youden_j_per_class, m)?)?;
    m.add_function(wrap_pyfunction!(classification::markedness_per_class, m)?)?;
    m.add_function(wrap_pyfunction!(classification::informedness, m)?)?;
    m.add_function(wrap_pyfunction!(classification::markedness, m)?)?;
    m.add_function(wrap_pyfunction!(
        classification::mutual_information_bits,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(
        classification::normalized_information_transfer,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(
        classification::entropy_modulated_accuracy,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(probabilistic::evaluate_proba, m)?)?;
    m.add_function(wrap_pyfunction!(ranking::binary_ranking, m)?)?;
    m.add_function(wrap_pyfunction!(ranking::kendall_counts, m)?)?;
    m.add_function(wrap_pyfunction!(ranking::score_groups, m)?)?;
    m.add_function(wrap_pyfunction!(ranking::merge_groups, m)?)?;
    m.add_function(wrap_pyfunction!(ranking::walk_groups, m)?)?;
    m.add_class::<ranking::GroupState>()?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(available_threads, m)?)?;
    m.add_function(wrap_pyfunction!(max_threads, m)?)?;
    Ok(())
}
