//! `cmetrics-core`: the pure-Rust kernels behind the `cmetrics` Python package.
//!
//! No Python types appear here; the crate is tested with `cargo test` alone.
//! Module layout mirrors the Python package: [`confusion`] counts the one
//! table every hard-label metric needs, [`classification`] derives the metrics
//! from it, [`labels`] encodes labels, [`parallel`] owns the thread pools.

pub mod classification;
pub mod confusion;
pub mod cpu;
pub mod error;
pub mod fastmath;
pub mod grouped_confusion;
pub mod grouping;
pub mod labels;
pub mod memory;
pub mod multilabel;
pub mod parallel;
pub mod probabilistic;
pub mod random;
pub mod ranking;
pub mod resampling;
pub mod row_rule;
#[cfg(target_arch = "x86_64")]
pub mod simd;
pub mod sort;
pub mod sorted_keys;
pub mod vectorized_sort;

pub use confusion::{confusion_matrix, confusion_matrix_codes, Confusion, CountOptions};
pub use error::{MetricError, Result};
pub use parallel::Pool;
