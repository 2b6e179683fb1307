//! How a [`GroupState`]'s buffered rows become tie groups: sorted, then
//! merged into the groups it keeps (see the state's module docs).

use super::keys::Item;
use super::sorted_groups::{collapse, Groups, GroupsBack, PackedBack};
use super::state::GroupState;
use crate::error::Result;
use crate::memory::check_available;
use crate::parallel::{reserve_big, Pool};
use crate::sort::{bucket_sort, radix_sort};
use rayon::prelude::*;

impl GroupState {
    /// Sort every buffered row into the groups ([`GroupState::compact`]
    /// marks the state broken when this fails after taking rows): weighted
    /// rows by `(key, weight)` on each side, collapsed and merged; unweighted
    /// rows by [`Self::compact_unweighted`].
    pub(super) fn compact_buffer(&mut self, pool: &Pool) -> Result<()> {
        let rows = self.buffered();
        if rows == 0 {
            return Ok(());
        }
        if self.weighted {
            let (mut a, mut b) = (
                std::mem::take(&mut self.wbuf_pos),
                std::mem::take(&mut self.wbuf_neg),
            );
            // A compaction runs to its end (the state stays whole); its
            // buffer is bounded, so it is short.
            let whole = pool.without_stop();
            let mut run = Groups::default();
            if let Err(e) = run.reserve(rows, true) {
                (self.wbuf_pos, self.wbuf_neg) = (a, b);
                return Err(e);
            }
            let _ = u128::sort(&mut a, &whole);
            let _ = u128::sort(&mut b, &whole);
            collapse(&a, &b, |x| (x.key(), x.weight()), &mut run, true);
            return self.groups.merge_in(GroupsBack::new(&run), run.len(), true);
        }
        self.compact_unweighted(pool)?;
        self.buf_keys.clear();
        self.buf_pos.clear();
        Ok(())
    }

    /// Compact unweighted rows. Only the key bits that vary between the rows
    /// matter: when they and the outcome fit in 32 bits (float32 scores in
    /// one binade or a few: confidences, probabilities), each row becomes
    /// one packed `u32` (varying bits, then the outcome), sorted by the
    /// machine's chosen sort ([`Self::compact_narrow`]); when they fit in 63
    /// bits (always for float32 scores), one packed `u64`, sorted by
    /// [`bucket_sort`] into the key buffer (both buffers reused from one
    /// compaction to the next); either is merged into the groups as runs of
    /// equal `entry >> 1`. Otherwise each side is sorted on its own and the
    /// two collapsed into groups.
    pub(super) fn compact_unweighted(&mut self, pool: &Pool) -> Result<()> {
        // The sorts' buffers: the packed rows, or the two sides and a radix buffer.
        check_available(
            crate::memory::bytes_of::<u64>(self.buf_keys.len()) * 2,
            "the ranking state's sort buffers",
        )?;
        let keys = &self.buf_keys;
        // A small state, or one of many compacted side by side: no split on this thread.
        let parallel = pool.parallel_for(keys.len());
        let fold = |c: &[u64]| {
            c.iter()
                .fold((u64::MAX, 0_u64), |(a, o), &x| (a & x, o | x))
        };
        let (and, or) = if parallel {
            pool.install(|| {
                keys.par_chunks(1 << 16)
                    .map(fold)
                    .reduce(|| (u64::MAX, 0), |x, y| (x.0 & y.0, x.1 | y.1))
            })
        } else {
            fold(keys)
        };
        let varying = and ^ or;
        let (lo, bits) = if varying == 0 {
            (0, 0)
        } else {
            (
                varying.trailing_zeros(),
                64 - varying.leading_zeros() - varying.trailing_zeros(),
            )
        };
        if bits >= 63 {
            let (mut a, mut b): (Vec<u64>, Vec<u64>) = (Vec::new(), Vec::new());
            for (&k, &p) in keys.iter().zip(&self.buf_pos) {
                if p {
                    a.push(k);
                } else {
                    b.push(k);
                }
            }
            pool.install(|| rayon::join(|| radix_sort(&mut a), || radix_sort(&mut b)));
            let mut run = Groups::default();
            collapse(&a, &b, |&x| (x, 1.0), &mut run, false);
            return self
                .groups
                .merge_in(GroupsBack::new(&run), run.len(), false);
        }
        let mask = (1_u64 << bits) - 1;
        let fixed = and & !(mask << lo);
        if bits < 32 {
            return self.compact_narrow(lo, mask, fixed, parallel, pool);
        }
        let packed = &mut self.scratch;
        // Its rows are the last compaction's: grown past them, the block would move them.
        packed.clear();
        reserve_big(packed, keys.len(), "the ranking state's sort buffer")?;
        let pack = |(&k, &p): (&u64, &bool)| (((k >> lo) & mask) << 1) | u64::from(p);
        if parallel {
            pool.install(|| {
                keys.par_iter()
                    .zip(self.buf_pos.par_iter())
                    .map(pack)
                    .collect_into_vec(packed);
            });
        } else {
            packed.clear();
            packed.extend(keys.iter().zip(&self.buf_pos).map(pack));
        }
        // The keys are packed: their buffer receives the sorted rows.
        let sorted = &mut self.buf_keys;
        let merged = bucket_sort(packed, sorted, bits + 1, pool).and_then(|()| {
            self.groups.merge_packed(
                PackedBack {
                    e: sorted,
                    j: sorted.len(),
                    lo,
                    fixed,
                },
                pool,
            )
        });
        if merged.is_err() {
            // The buffer holds packed rows now, not keys: drop them (the state is broken).
            self.buf_keys.clear();
            self.buf_pos.clear();
        }
        merged
    }

    /// [`Self::compact_unweighted`] of rows whose varying key bits (`mask`
    /// from bit `lo`) and outcome fit in a `u32`: packed into the reused
    /// narrow buffer, sorted there ([`Item::sort`]: on this machine's chosen
    /// sort, vectorized where it is) and merged into the groups. The
    /// buffered rows are left as they are until the packed rows are sorted,
    /// so an error up to then (memory refused, or the stop flag) leaves the
    /// state whole; memory refused while the groups are made marks it broken
    /// ([`GroupState::compact`]), as in every compaction.
    fn compact_narrow(
        &mut self,
        lo: u32,
        mask: u64,
        fixed: u64,
        parallel: bool,
        pool: &Pool,
    ) -> Result<()> {
        let rows = &mut self.narrow;
        rows.clear();
        reserve_big(rows, self.buf_keys.len(), "the ranking state's sort buffer")?;
        // Below 2^32 by the caller's check on the varying bits.
        #[allow(clippy::cast_possible_truncation)]
        let pack = |(&k, &p): (&u64, &bool)| ((((k >> lo) & mask) << 1) | u64::from(p)) as u32;
        if parallel {
            pool.install(|| {
                self.buf_keys
                    .par_iter()
                    .zip(self.buf_pos.par_iter())
                    .map(pack)
                    .collect_into_vec(rows);
            });
        } else {
            rows.extend(self.buf_keys.iter().zip(&self.buf_pos).map(pack));
        }
        u32::sort(rows, pool)?;
        if self.groups.len() == 0 {
            // The keys are packed: their buffer, its pages already faulted in, becomes the
            // groups' keys (the next rows get a fresh one).
            self.buf_keys.clear();
            std::mem::swap(&mut self.groups.keys, &mut self.buf_keys);
        }
        self.groups.merge_packed(
            PackedBack {
                e: rows,
                j: rows.len(),
                lo,
                fixed,
            },
            pool,
        )
    }
}
