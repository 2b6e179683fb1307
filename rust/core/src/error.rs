//! The one error type of the core crate.
//!
//! Every variant names the argument at fault and says what to do about it; the
//! binding crate maps each variant to the matching Python exception class of
//! `cmetrics.exceptions`.

use thiserror::Error;

/// Everything a kernel can reject.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum MetricError {
    /// Two per-sample arguments have different lengths.
    #[error("{a} has {a_len} rows but {b} has {b_len}; pass arrays of the same length")]
    LengthMismatch {
        a: &'static str,
        a_len: usize,
        b: &'static str,
        b_len: usize,
    },
    /// No rows at all.
    #[error("{arg} is empty; at least one sample is required")]
    Empty { arg: &'static str },
    /// A weight that is NaN, infinite or negative.
    #[error("sample_weight[{index}] = {} is invalid; weights must be finite and >= 0 ({count} invalid in total)", py_float(*.value))]
    InvalidWeight {
        index: usize,
        value: f64,
        count: usize,
    },
    /// All weights are zero.
    #[error("sample_weight sums to 0; at least one sample needs a positive weight")]
    ZeroWeightSum,
    /// A sum of weights (or a quantity in weight units) beyond the float64 range.
    #[error("{what} is beyond the float64 range; divide every sample_weight by the same constant (the metrics do not change)")]
    WeightRange { what: &'static str },
    /// The number of distinct labels needs more memory than allowed.
    #[error("{what} would be {needed}, above the limit of {limit}; {hint}")]
    LimitExceeded {
        what: &'static str,
        needed: u128,
        limit: u128,
        hint: &'static str,
    },
    /// A matrix or vector argument of the wrong shape.
    #[error("{arg} has the wrong shape: {detail}")]
    Shape { arg: &'static str, detail: String },
    /// A probability that is NaN, infinite or outside [0, 1].
    #[error("y_proba[{row}, {col}] = {} is not a probability; entries must lie in [0, 1] (no NaN or inf)", py_float(*.value))]
    InvalidProbability { row: usize, col: usize, value: f64 },
    /// A probability row that does not sum to 1.
    #[error("y_proba row {row} sums to {}, not 1 (tolerance {}); pass normalised probabilities (softmax output) or validate=False", py_float(*.sum), py_float(*.atol))]
    RowSum { row: usize, sum: f64, atol: f64 },
    /// A label code outside the label set.
    #[error("{arg}[{row}] = {value} is not one of the {k} labels; pass labels= listing every class (one per y_proba column)")]
    LabelOutOfRange {
        arg: &'static str,
        row: usize,
        value: i64,
        k: usize,
    },
    /// A NaN or infinite value where only finite numbers make sense.
    #[error("{arg}[{index}] = {} is not finite; remove or impute NaN and infinite values", py_float(*.value))]
    NonFinite {
        arg: &'static str,
        index: usize,
        value: f64,
    },
    /// A NaN where values must be ordered (infinities are allowed there).
    #[error("{arg}[{index}] is NaN; remove or impute NaN values")]
    IsNan { arg: &'static str, index: usize },
    /// A value outside the range an option allows.
    #[error("{arg} is invalid: {detail}")]
    InvalidValue { arg: &'static str, detail: String },
    /// The allocator refused memory the input needs (an allocation failure
    /// is an error, never an abort: see `crate::memory`).
    #[error("{what} could not be allocated ({bytes} bytes); score the rows in smaller batches (cmetrics.Evaluator) or free memory")]
    OutOfMemory { what: &'static str, bytes: u128 },
    /// The caller raised the pool's stop flag (Ctrl-C).
    #[error("interrupted")]
    Interrupted,
}

/// Shorthand used across the crate.
pub type Result<T> = std::result::Result<T, MetricError>;

/// Return early with an error unless `cond` holds (the core's `ensure!`).
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $err:expr) => {
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        let failed = !$cond;
        if failed {
            return Err($err);
        }
    };
}

/// Refuse an optional argument `a` of `a_len` values beside `b` of `b_len`
/// (the check every kernel makes of `y_pred`, `sample_weight` and the like
/// against the rows it counts; `None`, an argument not passed, passes).
///
/// # Errors
/// [`MetricError::LengthMismatch`] naming both arguments.
pub fn same_length(
    a: &'static str,
    a_len: Option<usize>,
    b: &'static str,
    b_len: usize,
) -> Result<()> {
    match a_len {
        Some(a_len) if a_len != b_len => Err(MetricError::LengthMismatch { a, a_len, b, b_len }),
        _ => Ok(()),
    }
}

/// A float as Python's `repr` writes it (`nan`, `inf`, `-2.0`), so that both
/// backends word their messages identically.
pub(crate) fn py_float(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else {
        format!("{x:?}")
    }
}
