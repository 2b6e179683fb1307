//! `cmetrics._core`: thin PyO3 bindings over `cmetrics-core`.
//!
//! Each function borrows its numpy inputs (zero-copy), releases the GIL around
//! the core call and maps errors through `error::run`. One file per family,
//! mirroring `python/cmetrics/`.

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

/// The extension's own allocations (the kernels' sort keys, spare arrays and
/// tables, hundreds of megabytes a call at 10^7 rows) go through jemalloc on
/// Linux, as polars' do. glibc hands every block above 32 MiB back to the
/// kernel when it is freed, so each call faulted its buffers in and had them
/// zeroed again; on a virtual machine that returns freed memory to its host
/// (free page reporting) those faults cost seconds on some calls. jemalloc
/// keeps freed pages for the next call ([`MALLOC_CONF`]).
///
/// Only this module's allocations: the symbols are prefixed and not exported,
/// so Python's, numpy's and pyarrow's allocators are untouched. Its
/// thread-local state is of the general model (`disable_initial_exec_tls`):
/// a module loaded by `dlopen` after others cannot count on room in the
/// static TLS block.
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's settings, read when it starts (the environment variable
/// `_RJEM_MALLOC_CONF` overrides them):
/// - `background_thread:true`: freed pages go back to the kernel from a
///   background thread, gradually over jemalloc's ten-second decay, idle or
///   not. Without it an arena is purged whole when its last thread exits,
///   and each call's watched kernel runs on a thread of its own (`error.rs`),
///   so every call's buffers were purged on return.
/// - `oversize_threshold:0`: no separate arena for blocks above 8 MiB, which
///   would purge them as soon as they are freed: they are the buffers worth
///   keeping.
#[cfg(target_os = "linux")]
#[export_name = "_rjem_malloc_conf"]
static MALLOC_CONF: &[u8; 44] = b"background_thread:true,oversize_threshold:0\0";

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
    m.add_function(wrap_pyfunction!(available_threads, m)?)?;
    m.add_function(wrap_pyfunction!(max_threads, m)?)?;
    m.add_function(wrap_pyfunction!(sort_algorithm, m)?)?;
    m.add(
        "VECTORIZED_SORT_BUILT",
        cmetrics_core::vectorized_sort::built(),
    )?;
    Ok(())
}
