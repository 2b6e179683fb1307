//! Two sorted runs of `u32` keys merged sixteen keys at a time in AVX-512
//! registers (x86-64 only; the caller checks [`crate::cpu::avx512`]).
//!
//! The merge holds the sixteen largest keys read so far (`hi`, sorted).
//! Each step reads the next sixteen keys of the run whose next key is the
//! smaller, merges them with `hi` in a bitonic network (the second vector
//! reversed, a lane-wise minimum and maximum, then four half-cleaning
//! levels on each half) and hands out the lower sixteen, which no key left
//! in either run can undercut (Chhugani et al., "Efficient implementation
//! of sorting on multi-core SIMD CPU architecture", VLDB 2008). A run's
//! last partial block is read with a masked load (no read past its end),
//! its missing lanes `u32::MAX`: the merge is then that of the two runs
//! followed by as many `u32::MAX` as asked for, so the first
//! `a.len() + b.len()` keys it gives are exactly the sorted keys of both
//! (equal keys are equal values: the order among them is no matter).

use std::arch::x86_64::{
    __m512i, _mm512_mask_loadu_epi32, _mm512_mask_max_epu32, _mm512_max_epu32, _mm512_min_epu32,
    _mm512_permutexvar_epi32, _mm512_set1_epi32, _mm512_set_epi32, _mm512_shuffle_epi32,
    _mm512_shuffle_i64x2, _mm512_storeu_si512, _MM_PERM_ENUM,
};

/// Keys in a vector.
pub(crate) const LANES: usize = 16;

/// The merge of two sorted runs under way.
pub(crate) struct Merge16<'a> {
    a: &'a [u32],
    b: &'a [u32],
    /// The next key of each run to read.
    ia: usize,
    ib: usize,
    /// The sixteen largest keys read and not handed out, sorted.
    hi: __m512i,
    /// The next sixteen keys to hand out, sorted.
    ready: __m512i,
}

/// Sixteen keys of `run` from `at` (clamped to its end), `u32::MAX` past it.
///
/// # Safety
/// The CPU has AVX-512 F.
#[inline(always)]
unsafe fn block(run: &[u32], at: usize) -> __m512i {
    let at = at.min(run.len());
    let left = run.len() - at;
    let mask: u16 = if left >= LANES {
        u16::MAX
    } else {
        (1_u16 << left) - 1
    };
    // SAFETY: the mask covers only keys of `run` (lanes past its end are not
    // read: AVX-512 suppresses faults of masked-out lanes); `at <= len`, so
    // the pointer is inside the slice or one past its end.
    unsafe {
        _mm512_mask_loadu_epi32(
            _mm512_set1_epi32(-1),
            mask,
            run.as_ptr().add(at).cast::<i32>(),
        )
    }
}

/// One half-cleaning level of a bitonic network at distance `d` (lanes
/// `i` and `i ^ d` compared; `swapped` is the vector with the two lanes of
/// each pair exchanged, `upper` the lanes that keep the larger key).
#[inline(always)]
unsafe fn clean(v: __m512i, swapped: __m512i, upper: u16) -> __m512i {
    // SAFETY: the caller runs on AVX-512 F.
    unsafe { _mm512_mask_max_epu32(_mm512_min_epu32(v, swapped), upper, v, swapped) }
}

/// A bitonic sequence of sixteen keys sorted in ascending order.
#[inline(always)]
unsafe fn sort_bitonic(v: __m512i) -> __m512i {
    const HALVES: i32 = 0b01_00_11_10;
    const QUARTERS: i32 = 0b10_11_00_01;
    const PAIRS: _MM_PERM_ENUM = 0b01_00_11_10;
    const NEIGHBOURS: _MM_PERM_ENUM = 0b10_11_00_01;
    // SAFETY: the caller runs on AVX-512 F.
    unsafe {
        let v = clean(v, _mm512_shuffle_i64x2::<HALVES>(v, v), 0xFF00);
        let v = clean(v, _mm512_shuffle_i64x2::<QUARTERS>(v, v), 0xF0F0);
        let v = clean(v, _mm512_shuffle_epi32::<PAIRS>(v), 0xCCCC);
        clean(v, _mm512_shuffle_epi32::<NEIGHBOURS>(v), 0xAAAA)
    }
}

/// Two sorted vectors merged: the lower sixteen keys and the upper sixteen,
/// each sorted.
#[inline(always)]
unsafe fn merge(x: __m512i, y: __m512i) -> (__m512i, __m512i) {
    // SAFETY: the caller runs on AVX-512 F.
    unsafe {
        let reverse = _mm512_set_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let y = _mm512_permutexvar_epi32(reverse, y);
        (
            sort_bitonic(_mm512_min_epu32(x, y)),
            sort_bitonic(_mm512_max_epu32(x, y)),
        )
    }
}

impl<'a> Merge16<'a> {
    /// The merge of the sorted runs `a` and `b`.
    ///
    /// # Safety
    /// The CPU has AVX-512 F.
    #[inline(always)]
    pub(crate) unsafe fn new(a: &'a [u32], b: &'a [u32]) -> Self {
        // SAFETY: the caller vouches for the features.
        let (ready, hi) = unsafe { merge(block(a, 0), block(b, 0)) };
        Self {
            a,
            b,
            ia: LANES,
            ib: LANES,
            hi,
            ready,
        }
    }

    /// The next sixteen keys of the merge into `out`, in ascending order
    /// (`u32::MAX` once both runs are handed out).
    ///
    /// # Safety
    /// The CPU has AVX-512 F.
    #[inline(always)]
    pub(crate) unsafe fn next_into(&mut self, out: &mut [u32; LANES]) {
        // The run whose next key is the smaller (an exhausted run has none).
        let a_next = self.a.get(self.ia).copied();
        let b_next = self.b.get(self.ib).copied();
        let take_a = match (a_next, b_next) {
            (Some(x), Some(y)) => x <= y,
            (x, _) => x.is_some(),
        };
        let (run, at) = if take_a {
            (self.a, self.ia)
        } else {
            (self.b, self.ib)
        };
        self.ia += usize::from(take_a) * LANES;
        self.ib += usize::from(!take_a) * LANES;
        // SAFETY: `out` holds sixteen keys; the caller vouches for the features.
        unsafe {
            _mm512_storeu_si512(out.as_mut_ptr().cast(), self.ready);
            (self.ready, self.hi) = merge(block(run, at), self.hi);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Merge16, LANES};

    fn runs(n: usize, m: usize, distinct: u32, seed: u64) -> (Vec<u32>, Vec<u32>) {
        let mut s = seed;
        let mut draw = || {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            #[allow(clippy::cast_possible_truncation)]
            let x = (s >> 33) as u32 % distinct;
            x
        };
        let mut a: Vec<u32> = (0..n).map(|_| draw()).collect();
        let mut b: Vec<u32> = (0..m).map(|_| draw()).collect();
        a.sort_unstable();
        b.sort_unstable();
        (a, b)
    }

    /// The merge hands out the sorted keys of both runs, then `u32::MAX`,
    /// for runs of every length around the vector width, few and many
    /// distinct keys, and keys at `u32::MAX` itself.
    #[test]
    fn merges_equal_a_sort() {
        if !crate::cpu::avx512() {
            return;
        }
        for (n, m) in [
            (0, 0),
            (0, 5),
            (7, 0),
            (1, 1),
            (15, 17),
            (16, 16),
            (33, 100),
            (1000, 3),
            (4099, 5003),
        ] {
            for distinct in [3, 1000, u32::MAX] {
                let (a, b) = runs(n, m, distinct, (n * 31 + m) as u64);
                let mut want: Vec<u32> = a.iter().chain(&b).copied().collect();
                want.sort_unstable();
                let blocks = (n + m).div_ceil(LANES) + 2;
                let mut got = vec![0_u32; blocks * LANES];
                // SAFETY: checked above.
                let mut merge = unsafe { Merge16::new(&a, &b) };
                for out in got.chunks_exact_mut(LANES) {
                    let out: &mut [u32; LANES] = out.try_into().unwrap();
                    // SAFETY: checked above.
                    unsafe { merge.next_into(out) };
                }
                assert_eq!(got[..n + m], want[..], "n {n} m {m} distinct {distinct}");
                assert!(got[n + m..].iter().all(|&x| x == u32::MAX));
            }
        }
        // Keys at u32::MAX in one run, the other exhausted first.
        let a = vec![1, u32::MAX, u32::MAX];
        let b: Vec<u32> = (0..40).collect();
        let mut want: Vec<u32> = a.iter().chain(&b).copied().collect();
        want.sort_unstable();
        let mut got = vec![0_u32; 4 * LANES];
        // SAFETY: checked above.
        let mut merge = unsafe { Merge16::new(&a, &b) };
        for out in got.chunks_exact_mut(LANES) {
            let out: &mut [u32; LANES] = out.try_into().unwrap();
            // SAFETY: checked above.
            unsafe { merge.next_into(out) };
        }
        assert_eq!(got[..43], want[..]);
    }
}
