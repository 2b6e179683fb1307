//! The vectorized sort: Google Highway's vqsort (a SIMD quicksort that
//! dispatches to AVX-512, AVX2 or SSE4 at run time), used for the sorts of
//! plain `u32` and `u64` keys when the build found the library and the CPU
//! is one it was measured to win on.
//!
//! Which sort runs ([`chosen`]) is decided once per process:
//! `CMETRICS_SORT=radix` or `CMETRICS_SORT=vectorized` forces one (the
//! latter only where it was built); otherwise the vectorized sort runs on
//! Intel CPUs with AVX2, where it sorts 10^7 keys about twice as fast as the
//! radix sort (an Intel Xeon guest, Emerald Rapids, AVX-512: 10^7 `u32` in
//! 66 ms against 142 ms), and on AMD Zen 5 or later with AVX-512 (an EPYC
//! guest, family 26: 10^7 `u64` keys 60-67 ms against 74-85 ms, `u32` on one
//! thread 33-38 ms against 58-69 ms), and the radix sort everywhere else (on
//! AMD Zen 4, whose AVX-512 compress-stores are slow, the radix sort beat
//! numpy's own vectorized sort of the same keys). Both sorts give the same
//! sorted keys: the choice changes the time, never a result.

use std::sync::OnceLock;

/// The sort the kernels use for plain integer keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortAlgorithm {
    /// LSD/MSB radix sorts (`rdst`), on every machine.
    Radix,
    /// Highway's vqsort (built only where the library was found).
    Vectorized,
}

impl SortAlgorithm {
    /// The name `CMETRICS_SORT` takes.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Radix => "radix",
            Self::Vectorized => "vectorized",
        }
    }
}

/// Whether this build carries the vectorized sort.
#[must_use]
pub const fn built() -> bool {
    cfg!(cmetrics_vqsort)
}

/// The sort chosen for this process (see the module's documentation).
#[must_use]
pub fn chosen() -> SortAlgorithm {
    static CHOSEN: OnceLock<SortAlgorithm> = OnceLock::new();
    *CHOSEN.get_or_init(|| {
        let forced = std::env::var("CMETRICS_SORT").ok();
        let wins = crate::cpu::avx2()
            && (crate::cpu::intel() || (crate::cpu::amd_zen5_or_later() && crate::cpu::avx512()));
        choose(forced.as_deref(), wins)
    })
}

/// The choice of [`chosen`] from the environment's setting and whether the
/// CPU is one the vectorized sort was measured to win on.
#[must_use]
pub fn choose(forced: Option<&str>, wins_here: bool) -> SortAlgorithm {
    let vectorized = built()
        && match forced.map(str::trim) {
            Some("radix") => false,
            Some("vectorized") => true,
            _ => wins_here,
        };
    if vectorized {
        SortAlgorithm::Vectorized
    } else {
        SortAlgorithm::Radix
    }
}

#[cfg(cmetrics_vqsort)]
mod ffi {
    extern "C" {
        pub fn cmetrics_vqsort_u64(keys: *mut u64, n: usize);
        pub fn cmetrics_vqsort_u32(keys: *mut u32, n: usize);
    }
}

/// Sort `u64` keys ascending with the vectorized sort; false (nothing done)
/// when this build has none.
pub fn sort_u64(v: &mut [u64]) -> bool {
    #[cfg(cmetrics_vqsort)]
    {
        // SAFETY: the pointer and length are those of a live, exclusively
        // borrowed slice; the C side sorts exactly `n` keys in place.
        unsafe { ffi::cmetrics_vqsort_u64(v.as_mut_ptr(), v.len()) };
        true
    }
    #[cfg(not(cmetrics_vqsort))]
    {
        let _ = v;
        false
    }
}

/// Sort `u32` keys ascending with the vectorized sort; false (nothing done)
/// when this build has none.
pub fn sort_u32(v: &mut [u32]) -> bool {
    #[cfg(cmetrics_vqsort)]
    {
        // SAFETY: as in `sort_u64`.
        unsafe { ffi::cmetrics_vqsort_u32(v.as_mut_ptr(), v.len()) };
        true
    }
    #[cfg(not(cmetrics_vqsort))]
    {
        let _ = v;
        false
    }
}

/// Whether the kernels sort plain keys with the vectorized sort.
#[inline]
#[must_use]
pub fn in_use() -> bool {
    chosen() == SortAlgorithm::Vectorized
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choice_follows_the_setting_then_the_cpu() {
        let vectorized = if built() {
            SortAlgorithm::Vectorized
        } else {
            SortAlgorithm::Radix
        };
        assert_eq!(choose(Some("radix"), true), SortAlgorithm::Radix);
        assert_eq!(choose(Some(" vectorized "), false), vectorized);
        assert_eq!(choose(None, true), vectorized);
        assert_eq!(choose(None, false), SortAlgorithm::Radix);
        assert_eq!(choose(Some("other"), false), SortAlgorithm::Radix);
        assert_eq!(SortAlgorithm::Vectorized.name(), "vectorized");
    }

    #[test]
    fn the_vectorized_sort_sorts_every_kind_of_key() {
        let mut next = crate::random::xorshift(0x9E37_79B9_7F4A_7C15);
        for n in [0usize, 1, 2, 3, 17, 64, 1000, 100_003] {
            let cases: [Vec<u64>; 4] = [
                (0..n).map(|_| next()).collect(),
                (0..n).map(|_| next() % 3).collect(),
                (0..n)
                    .map(|i| if i % 2 == 0 { u64::MAX } else { 0 })
                    .collect(),
                (0..n as u64).rev().collect(),
            ];
            for keys in cases {
                let mut want = keys.clone();
                want.sort_unstable();
                let mut got = keys.clone();
                assert_eq!(sort_u64(&mut got), built());
                if built() {
                    assert_eq!(got, want, "u64, {n} keys");
                }
                let narrow: Vec<u32> = keys.iter().map(|&k| (k >> 32) as u32 ^ k as u32).collect();
                let mut want32 = narrow.clone();
                want32.sort_unstable();
                let mut got32 = narrow;
                assert_eq!(sort_u32(&mut got32), built());
                if built() {
                    assert_eq!(got32, want32, "u32, {n} keys");
                }
            }
        }
    }
}
