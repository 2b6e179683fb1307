//! The walks of the merge of two sorted arrays of packed `u32` keys (the
//! two halves of a column sorted side by side): merged sixteen keys at a
//! time in AVX-512 registers ([`Merge16`]) into a small stage, which the
//! block walk ([`super::blocks`]) or the counted walk ([`Walk::run_counted`])
//! reads as one array. The rows of the scalar merge in the same order, so
//! the same counts and bits; on a CPU without AVX-512 nothing here runs and
//! the scalar merge serves.

use super::pairs::Pairs;
use super::Walk;
use crate::parallel::Pool;
#[cfg(target_arch = "x86_64")]
use {
    super::super::stream::Packed,
    super::blocks::blocks,
    crate::sort::network::{Merge16, LANES},
};

impl Walk {
    /// [`Walk::run_pairs`] of the merge of two sorted arrays of packed `u32`
    /// keys (each key's score bits above its outcome bit), merged sixteen
    /// keys at a time in AVX-512 registers ([`Merge16`]) into a stage of
    /// [`STAGE`] rows that the block walk reads: the rows of the scalar
    /// merge in the same order, so the same counts and bits. False (nothing
    /// walked) on a CPU without AVX-512.
    pub(super) fn run_pairs_packed_merge<const AP: bool>(
        &mut self,
        a: &[u32],
        b: &[u32],
        pool: &Pool,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        if crate::cpu::avx512() {
            // SAFETY: the CPU has the features `pairs_merge_avx512` is compiled for.
            unsafe { self.pairs_merge_avx512::<AP>(a, b, pool) };
            return true;
        }
        let _ = (a, b, pool);
        false
    }

    /// [`Walk::run_pairs_packed_merge`] compiled for AVX-512.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,popcnt,bmi1")]
    unsafe fn pairs_merge_avx512<const AP: bool>(&mut self, a: &[u32], b: &[u32], pool: &Pool) {
        let n = a.len() + b.len();
        if n == 0 {
            return;
        }
        // SAFETY: this function runs on AVX-512 CPUs only.
        let mut merge = unsafe { Merge16::new(a, b) };
        // The row before the stage, then the stage's rows.
        let mut stage = [0_u32; STAGE + 1];
        let rows = n.min(STAGE);
        // SAFETY: as above.
        unsafe { fill(&mut merge, &mut stage, rows) };
        let head = stage[1];
        let mut walk = Pairs::start::<AP, false>(self, u64::from(head >> 1), head & 1 == 1);
        blocks::<AP, true>(&mut walk, stage.get(..=rows).unwrap_or_default(), 2);
        let mut done = rows;
        while done < n {
            walk.settle();
            if AP {
                walk.flush();
            }
            if pool.stopped() {
                return;
            }
            stage[0] = stage[STAGE];
            let rows = (n - done).min(STAGE);
            // SAFETY: as above.
            unsafe { fill(&mut merge, &mut stage, rows) };
            blocks::<AP, true>(&mut walk, stage.get(..=rows).unwrap_or_default(), 1);
            done += rows;
        }
        walk.finish::<AP, false>(self);
    }
}

impl Walk {
    /// [`Walk::run_counted`] of the merge of two sorted arrays of packed
    /// `u32` keys, merged sixteen keys at a time in AVX-512 registers
    /// ([`Merge16`]) into a stage that the counted walk reads: the rows of
    /// the scalar merge in the same order, so the same counts and bits.
    /// False (nothing walked) on a CPU without AVX-512.
    pub(super) fn run_counted_packed_merge(&mut self, a: &[u32], b: &[u32], pool: &Pool) -> bool {
        #[cfg(target_arch = "x86_64")]
        if crate::cpu::avx512() {
            // SAFETY: the CPU has the features `counted_merge_avx512` is compiled for.
            unsafe { self.counted_merge_avx512(a, b, pool) };
            return true;
        }
        let _ = (a, b, pool);
        false
    }

    /// [`Walk::run_counted_packed_merge`] compiled for AVX-512.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,popcnt,bmi1")]
    unsafe fn counted_merge_avx512(&mut self, a: &[u32], b: &[u32], pool: &Pool) {
        let n = a.len() + b.len();
        // SAFETY: this function runs on AVX-512 CPUs only.
        let mut merge = unsafe { Merge16::new(a, b) };
        // Slot 0 unused here (`fill` writes after it); the row before each
        // stage is carried as its key.
        let mut stage = [0_u32; STAGE + 1];
        let (mut done, mut prev) = (0, None);
        while done < n {
            let rows = (n - done).min(STAGE);
            // SAFETY: as above.
            unsafe { fill(&mut merge, &mut stage, rows) };
            done += rows;
            let keys = stage.get(1..=rows).unwrap_or_default();
            prev = self.counted_rows(
                Packed { rows: keys.iter() },
                rows as u64,
                prev,
                done == n,
                pool,
            );
            if prev.is_none() {
                // Stopped: the caller reports the interruption.
                return;
            }
        }
    }
}

/// Rows of the stage the walks here merge into and walk (the block walk of
/// [`Walk::run_pairs_packed_merge`], the counted walk of
/// [`Walk::run_counted_packed_merge`]): 4 KiB, in the first-level cache.
#[cfg(target_arch = "x86_64")]
const STAGE: usize = 1024;

/// The next `rows` rows of `merge` (rounded up to whole vectors) into the
/// stage, after the row before it.
///
/// # Safety
/// The CPU has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn fill(merge: &mut Merge16<'_>, stage: &mut [u32; STAGE + 1], rows: usize) {
    let to = stage
        .get_mut(1..=rows.next_multiple_of(LANES))
        .unwrap_or_default();
    for out in to.chunks_exact_mut(LANES) {
        if let Ok(out) = <&mut [u32; LANES]>::try_from(out) {
            // SAFETY: the caller vouches for the features.
            unsafe { merge.next_into(out) };
        }
    }
}
