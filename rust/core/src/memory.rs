//! Allocations that fail with an error instead of aborting the process.
//!
//! Rust's global allocator aborts on failure (stable Rust has no hook to turn
//! that into a panic or an error), which would take the user's Python
//! process down with it. Every buffer whose size follows from the input (its
//! rows, classes, bins or groups) is therefore reserved through these
//! helpers, which ask with `try_reserve_exact` and answer a refusal with
//! [`MetricError::OutOfMemory`] naming the buffer and its size. Buffers of a
//! fixed, small size are allocated as usual.

use crate::error::{MetricError, Result};

/// The bytes `n` values of `T` take (saturating: a count past the address
/// space is refused by the allocator, and reported with this size).
#[must_use]
pub fn bytes_of<T>(n: usize) -> u128 {
    (n as u128).saturating_mul(std::mem::size_of::<T>() as u128)
}

/// Make room for `additional` more values in `v`, or say which buffer could
/// not grow.
///
/// # Errors
/// [`MetricError::OutOfMemory`].
pub fn try_reserve<T>(v: &mut Vec<T>, additional: usize, what: &'static str) -> Result<()> {
    v.try_reserve_exact(additional)
        .map_err(|_| MetricError::OutOfMemory {
            what,
            bytes: bytes_of::<T>(v.len().saturating_add(additional)),
        })
}

/// An empty vector with room for `n` values.
///
/// # Errors
/// [`MetricError::OutOfMemory`].
pub fn try_with_capacity<T>(n: usize, what: &'static str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    try_reserve(&mut v, n, what)?;
    Ok(v)
}

/// `n` copies of `value`.
///
/// # Errors
/// [`MetricError::OutOfMemory`].
pub fn try_filled<T: Clone>(n: usize, value: T, what: &'static str) -> Result<Vec<T>> {
    let mut v = try_with_capacity(n, what)?;
    v.resize(n, value);
    Ok(v)
}

/// Ask for `bytes` at once and give them back: a kernel whose buffers are
/// made deep inside its parallel loops (one accumulator per chunk and
/// thread) checks their total first, so that a machine short of memory
/// gets [`MetricError::OutOfMemory`] before the work starts.
///
/// # Errors
/// [`MetricError::OutOfMemory`].
pub fn check_available(bytes: u128, what: &'static str) -> Result<()> {
    let n = usize::try_from(bytes).map_err(|_| MetricError::OutOfMemory { what, bytes })?;
    let mut probe: Vec<u8> = Vec::new();
    probe
        .try_reserve_exact(n)
        .map_err(|_| MetricError::OutOfMemory { what, bytes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_impossible_request_is_an_error() {
        let got = try_with_capacity::<u64>(usize::MAX / 4, "the test buffer");
        assert!(matches!(
            got,
            Err(MetricError::OutOfMemory {
                what: "the test buffer",
                ..
            })
        ));
        assert_eq!(try_filled(3, 7_u8, "x"), Ok(vec![7, 7, 7]));
        assert!(check_available(1 << 20, "x").is_ok());
        assert!(check_available(u128::MAX, "x").is_err());
    }
}
