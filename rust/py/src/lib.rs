//! `cmetrics._core`: thin PyO3 bindings over `cmetrics-core`.
//!
//! Each function borrows its numpy inputs (zero-copy), releases the GIL around
//! the core call and maps errors through `error::run`. One file per family,
//! mirroring `python/cmetrics/`.

#[cfg(target_os = "linux")]
mod allocator;
mod arrays;
mod classification;
mod confusion;
mod error;
mod grouping;
mod probabilistic;
mod ranking;
mod resampling;
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

/// Arena 0's threshold past which jemalloc purges a freed block at once
/// (`None` off Linux or when jemalloc does not answer): lets the tests check
/// that the module keeps its freed buffers for the next call.
#[pyfunction]
fn _allocator_purge_threshold() -> Option<usize> {
    #[cfg(target_os = "linux")]
    return allocator::oversize_threshold();
    #[cfg(not(target_os = "linux"))]
    None
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

/// The sort the kernels use in this process for keys of the kind `keys`
/// (`"u32"`, `"u64"` or `"u64_high_bytes"`): `"vectorized"` (Highway's
/// vqsort) or `"radix"` (see `cmetrics_core::vectorized_sort`).
#[pyfunction]
#[pyo3(signature = (keys = "u64"))]
fn sort_algorithm(keys: &str) -> PyResult<&'static str> {
    let kind = cmetrics_core::vectorized_sort::Keys::from_name(keys).ok_or_else(|| {
        error::ValidationError::new_err(format!(
            "keys must be 'u32', 'u64' or 'u64_high_bytes', got {keys:?}"
        ))
    })?;
    Ok(cmetrics_core::vectorized_sort::chosen_for(kind).name())
}

#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    error::install_panic_hook();
    // A refusal only leaves jemalloc purging large blocks as it did: slower,
    // never wrong, so the module loads either way.
    #[cfg(target_os = "linux")]
    let _ = allocator::keep_freed_blocks();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "SEQUENTIAL_BELOW",
        cmetrics_core::parallel::SEQUENTIAL_BELOW,
    )?;
    confusion::register(m)?;
    classification::register(m)?;
    probabilistic::register(m)?;
    ranking::register(m)?;
    grouping::register(m)?;
    resampling::register(m)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(_allocator_purge_threshold, m)?)?;
    m.add_function(wrap_pyfunction!(available_threads, m)?)?;
    m.add_function(wrap_pyfunction!(max_threads, m)?)?;
    m.add_function(wrap_pyfunction!(sort_algorithm, m)?)?;
    m.add(
        "VECTORIZED_SORT_BUILT",
        cmetrics_core::vectorized_sort::built(),
    )?;
    Ok(())
}
