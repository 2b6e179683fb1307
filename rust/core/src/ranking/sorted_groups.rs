//! The sorted tie groups a ranking state keeps, and the runs merged into
//! them from the back (another state's groups, or packed rows just sorted).
//!
//! Groups hold `u32` counts; a score seen more than `u32::MAX` times on one
//! side spreads over adjacent entries with the same key, which every reader
//! adds up.

use super::keys::Item;
use crate::error::Result;
use crate::parallel::{reserve_big, Pool};
use rayon::prelude::*;

/// Sorted tie groups (adjacent equal keys past `u32::MAX` counts, or from
/// different states after [`super::union_states`]; every reader adds them up).
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Groups {
    pub(super) keys: Vec<u64>,
    pub(super) pos: Vec<u32>,
    pub(super) neg: Vec<u32>,
    pub(super) w_pos: Vec<f64>,
    pub(super) w_neg: Vec<f64>,
}

impl Groups {
    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }

    pub(super) fn reserve(&mut self, n: usize, weighted: bool) -> Result<()> {
        const WHAT: &str = "the ranking state's tie groups";
        reserve_big(&mut self.keys, n, WHAT)?;
        reserve_big(&mut self.pos, n, WHAT)?;
        reserve_big(&mut self.neg, n, WHAT)?;
        if weighted {
            reserve_big(&mut self.w_pos, n, WHAT)?;
            reserve_big(&mut self.w_neg, n, WHAT)?;
        }
        Ok(())
    }

    /// Append a group after the last one (`key` >= the last key), adding it
    /// to the last when the keys are equal and the counts fit.
    pub(super) fn push(
        &mut self,
        key: u64,
        mut p: u64,
        mut n: u64,
        mut wp: f64,
        mut wn: f64,
        weighted: bool,
    ) {
        if let (Some(&last), Some(lp), Some(ln)) =
            (self.keys.last(), self.pos.last_mut(), self.neg.last_mut())
        {
            if last == key {
                let room_p = u64::from(u32::MAX - *lp).min(p);
                let room_n = u64::from(u32::MAX - *ln).min(n);
                if room_p == p && room_n == n {
                    *lp += u32::try_from(p).unwrap_or(0);
                    *ln += u32::try_from(n).unwrap_or(0);
                    if weighted {
                        if let (Some(a), Some(b)) = (self.w_pos.last_mut(), self.w_neg.last_mut()) {
                            *a += wp;
                            *b += wn;
                        }
                    }
                    return;
                }
            }
        }
        loop {
            let a = p.min(u64::from(u32::MAX));
            let b = n.min(u64::from(u32::MAX));
            self.keys.push(key);
            self.pos.push(u32::try_from(a).unwrap_or(u32::MAX));
            self.neg.push(u32::try_from(b).unwrap_or(u32::MAX));
            if weighted {
                self.w_pos.push(wp);
                self.w_neg.push(wn);
                (wp, wn) = (0.0, 0.0);
            }
            p -= a;
            n -= b;
            if p == 0 && n == 0 {
                return;
            }
        }
    }

    /// Merge the sorted `run` of at most `r` groups into these sorted
    /// groups, in place: the arrays grow by `r` and are filled from the back,
    /// so no second copy of the groups is ever made. A group taken adds to
    /// the one written last (just above it) when their keys match and the
    /// counts fit; once the run is in, the groups below the lowest one
    /// written stay where they are (the highest of them added to it when
    /// they share its key, fit and leave a gap) and the merged ones move
    /// down onto them as far as groups were added up. Adjacent entries of
    /// one key may remain; every reader adds them up.
    ///
    /// The arrays grow by a quarter more than the run when they must grow
    /// at all (room only reserved, not touched): the next compaction of a
    /// streaming state adds at most a quarter of its groups, and then merges
    /// in place instead of moving every group to a larger block (100 MB at
    /// 6 million groups, 45 ms).
    pub(super) fn merge_in(&mut self, mut run: impl Back, r: usize, weighted: bool) -> Result<()> {
        let s = self.len();
        if r == 0 {
            return Ok(());
        }
        let end = s + r;
        self.grow(r, weighted)?;
        self.keys.resize(end, 0);
        self.pos.resize(end, 0);
        self.neg.resize(end, 0);
        if weighted {
            self.w_pos.resize(end, 0.0);
            self.w_neg.resize(end, 0.0);
        }
        // Invariant: w >= i + (groups left in the run), so a write never
        // lands on an unread group.
        let (mut i, mut w) = (s, end);
        while let Some(next) = run.last_key() {
            while i > 0 && self.keys[i - 1] > next {
                i -= 1;
                let group = self.group(i);
                self.put(&mut w, end, group, weighted);
            }
            let group = run.take_last();
            self.put(&mut w, end, group, weighted);
        }
        // Groups [0, i) are in place; the merged ones sit in [w, end).
        if w > i {
            // The groups just below take the same key's lowest merged one when they fit.
            while i > 0 && w < end && self.keys[i - 1] == self.keys[w] && self.adds_to(w, i - 1) {
                i -= 1;
            }
            let len = end - (w - i);
            self.keys.copy_within(w..end, i);
            self.pos.copy_within(w..end, i);
            self.neg.copy_within(w..end, i);
            self.keys.truncate(len);
            self.pos.truncate(len);
            self.neg.truncate(len);
            if weighted {
                self.w_pos.copy_within(w..end, i);
                self.w_neg.copy_within(w..end, i);
                self.w_pos.truncate(len);
                self.w_neg.truncate(len);
            }
        }
        Ok(())
    }

    /// Merge sorted packed rows (`run` read from its end) as tie groups: into
    /// groups that are empty (a streaming state's first compaction) from the
    /// front without a branch on the data ([`Self::build_packed`]), where
    /// reading each group's rows from the back stopped at every group's end
    /// on a branch taken at random (6.2 million groups of 8.4 million rows:
    /// 43 -> 17-21 ms, Zen 3); else by [`Self::merge_in`].
    pub(super) fn merge_packed<T: Item>(
        &mut self,
        run: PackedBack<'_, T>,
        pool: &Pool,
    ) -> Result<()> {
        if self.len() > 0 {
            let r = run.groups();
            return self.merge_in(run, r, false);
        }
        self.build_packed(
            run.e.get(..run.j).unwrap_or_default(),
            run.lo,
            run.fixed,
            pool,
        )
    }

    /// These groups, empty, made from sorted packed rows: the rows cut into
    /// chunks (one per thread, as many groups whatever the cut), each
    /// chunk's group starts counted, then each chunk writing the groups that
    /// start in it (reading on past its end to finish its last one), side by
    /// side. Each row stores its group's running counts, so no branch
    /// depends on the data.
    fn build_packed<T: Item>(
        &mut self,
        rows: &[T],
        lo: u32,
        fixed: u64,
        pool: &Pool,
    ) -> Result<()> {
        let n = rows.len();
        let v = |i: usize| rows.get(i).map_or(u64::MAX, |x| x.key() >> 1);
        let chunks = if pool.parallel_for(n) {
            pool.threads().max(1)
        } else {
            1
        };
        let bounds: Vec<(usize, usize)> = (0..chunks)
            .map(|c| (n * c / chunks, n * (c + 1) / chunks))
            .collect();
        let starts = |&(a, b): &(usize, usize)| {
            group_starts(
                rows.get(a..b).unwrap_or_default(),
                a.checked_sub(1).map_or(u64::MAX, v),
            )
        };
        let counts: Vec<usize> = if chunks > 1 {
            pool.install(|| bounds.par_iter().map(starts).collect())
        } else {
            bounds.iter().map(starts).collect()
        };
        let r: usize = counts.iter().sum();
        if r == 0 {
            return Ok(());
        }
        self.grow(r, false)?;
        // Zeros first, written in parallel: the pages of fresh memory are faulted in (and
        // cleared by the kernel) on every thread, not on this one alone (10^7 rows: 114 MB).
        if chunks > 1 {
            let zeros = |v: &mut Vec<u32>| v.par_extend(rayon::iter::repeat_n(0, r));
            pool.install(|| {
                self.keys.par_extend(rayon::iter::repeat_n(0, r));
                zeros(&mut self.pos);
                zeros(&mut self.neg);
            });
        } else {
            self.keys.resize(r, 0);
            self.pos.resize(r, 0);
            self.neg.resize(r, 0);
        }
        // Each chunk's slices of the groups.
        let mut parts = Vec::with_capacity(chunks);
        let (mut keys, mut pos, mut neg) =
            (&mut self.keys[..], &mut self.pos[..], &mut self.neg[..]);
        for (&bound, &count) in bounds.iter().zip(&counts) {
            let (k, rest_k) = keys.split_at_mut(count);
            let (p, rest_p) = pos.split_at_mut(count);
            let (q, rest_q) = neg.split_at_mut(count);
            (keys, pos, neg) = (rest_k, rest_p, rest_q);
            parts.push((bound, k, p, q));
        }
        let write = |((a, b), keys, pos, neg): &mut (
            (usize, usize),
            &mut [u64],
            &mut [u32],
            &mut [u32],
        )| {
            // The rows from this chunk's first group start to the end of its last group.
            let mut first = *a;
            while first < *b && first > 0 && v(first) == v(first - 1) {
                first += 1;
            }
            let mut last = *b;
            while last < n && last > first && v(last) == v(last - 1) {
                last += 1;
            }
            let part = rows.get(first..last).unwrap_or_default();
            let (mut w, mut prev) = (0_usize, v(first));
            let (mut p, mut q) = (0_u32, 0_u32);
            for &x in part {
                let x = x.key();
                let k = x >> 1;
                let new = k != prev;
                prev = k;
                w += usize::from(new);
                // All ones while the group goes on, zero when this row starts one.
                let keep = u32::from(!new).wrapping_neg();
                let one = (x & 1) as u32;
                (p, q) = ((p & keep) + one, (q & keep) + (1 - one));
                if let (Some(key), Some(a), Some(b)) =
                    (keys.get_mut(w), pos.get_mut(w), neg.get_mut(w))
                {
                    (*key, *a, *b) = ((k << lo) | fixed, p, q);
                }
            }
        };
        if chunks > 1 {
            pool.install(|| parts.par_iter_mut().for_each(write));
        } else {
            parts.iter_mut().for_each(write);
        }
        Ok(())
    }

    /// Room for `r` more groups: none reserved when there is room already,
    /// else room for a quarter more than that (exactly `r` when that is
    /// refused).
    fn grow(&mut self, r: usize, weighted: bool) -> Result<()> {
        let end = self.len() + r;
        let mut caps = [
            self.keys.capacity(),
            self.pos.capacity(),
            self.neg.capacity(),
        ]
        .into_iter()
        .chain(
            weighted
                .then(|| [self.w_pos.capacity(), self.w_neg.capacity()])
                .into_iter()
                .flatten(),
        );
        if caps.all(|c| c >= end) {
            return Ok(());
        }
        if self.reserve(r + end / 4, weighted).is_ok() {
            return Ok(());
        }
        self.reserve(r, weighted)
    }

    /// Group `i`: `(key, pos, neg, w_pos, w_neg)`.
    #[inline(always)]
    fn group(&self, i: usize) -> (u64, u32, u32, f64, f64) {
        (
            self.keys[i],
            self.pos[i],
            self.neg[i],
            self.w_pos.get(i).copied().unwrap_or(0.0),
            self.w_neg.get(i).copied().unwrap_or(0.0),
        )
    }

    /// Write `group` below the group at `*w` (one of the merge's, or none at
    /// `end`), or add it to that group when the keys match and the counts fit.
    #[inline(always)]
    fn put(
        &mut self,
        w: &mut usize,
        end: usize,
        (key, p, n, wp, wn): (u64, u32, u32, f64, f64),
        weighted: bool,
    ) {
        let at = *w;
        if at < end && self.keys[at] == key {
            if let (Some(a), Some(b)) = (self.pos[at].checked_add(p), self.neg[at].checked_add(n)) {
                (self.pos[at], self.neg[at]) = (a, b);
                if weighted {
                    self.w_pos[at] += wp;
                    self.w_neg[at] += wn;
                }
                return;
            }
        }
        let at = at - 1;
        *w = at;
        (self.keys[at], self.pos[at], self.neg[at]) = (key, p, n);
        if weighted {
            (self.w_pos[at], self.w_neg[at]) = (wp, wn);
        }
    }

    /// Add group `from` to group `to` (of the same key) when its counts fit;
    /// whether they did.
    fn adds_to(&mut self, to: usize, from: usize) -> bool {
        let (Some(a), Some(b)) = (
            self.pos[to].checked_add(self.pos[from]),
            self.neg[to].checked_add(self.neg[from]),
        ) else {
            return false;
        };
        (self.pos[to], self.neg[to]) = (a, b);
        if let (Some(&x), Some(&y)) = (self.w_pos.get(from), self.w_neg.get(from)) {
            if let (Some(a), Some(b)) = (self.w_pos.get_mut(to), self.w_neg.get_mut(to)) {
                *a += x;
                *b += y;
            }
        }
        true
    }

    /// The groups with equal keys added up, `(key, p, n, wp, wn)`.
    pub(super) fn distinct(&self) -> Distinct<'_> {
        Distinct { g: self, i: 0 }
    }
}

/// Iterator of [`Groups::distinct`].
#[derive(Clone)]
pub(super) struct Distinct<'a> {
    pub(super) g: &'a Groups,
    pub(super) i: usize,
}

impl Iterator for Distinct<'_> {
    type Item = (u64, u64, u64, f64, f64);

    fn next(&mut self) -> Option<Self::Item> {
        let g = self.g;
        let &key = g.keys.get(self.i)?;
        let mut out = (key, 0_u64, 0_u64, 0.0_f64, 0.0_f64);
        while g.keys.get(self.i) == Some(&key) {
            out.1 += u64::from(g.pos.get(self.i).copied().unwrap_or(0));
            out.2 += u64::from(g.neg.get(self.i).copied().unwrap_or(0));
            out.3 += g.w_pos.get(self.i).copied().unwrap_or(0.0);
            out.4 += g.w_neg.get(self.i).copied().unwrap_or(0.0);
            self.i += 1;
        }
        Some(out)
    }
}

/// Sorted groups read from the back: the run side of [`Groups::merge_in`].
pub(super) trait Back {
    /// The key of the last group not yet taken.
    fn last_key(&self) -> Option<u64>;
    /// Take that group: `(key, pos, neg, w_pos, w_neg)`.
    fn take_last(&mut self) -> (u64, u32, u32, f64, f64);
}

/// A [`Groups`] as a run.
pub(super) struct GroupsBack<'a> {
    pub(super) g: &'a Groups,
    pub(super) j: usize,
}

impl<'a> GroupsBack<'a> {
    pub(super) fn new(g: &'a Groups) -> Self {
        Self { g, j: g.len() }
    }
}

impl Back for GroupsBack<'_> {
    fn last_key(&self) -> Option<u64> {
        self.g.keys.get(self.j.checked_sub(1)?).copied()
    }
    fn take_last(&mut self) -> (u64, u32, u32, f64, f64) {
        self.j -= 1;
        let g = self.g;
        (
            g.keys.get(self.j).copied().unwrap_or(0),
            g.pos.get(self.j).copied().unwrap_or(0),
            g.neg.get(self.j).copied().unwrap_or(0),
            g.w_pos.get(self.j).copied().unwrap_or(0.0),
            g.w_neg.get(self.j).copied().unwrap_or(0.0),
        )
    }
}

/// Sorted packed rows (`varying key bits << 1 | outcome`, in `u64` or
/// `u32` items) as a run of tie groups (fewer than 2^32 rows: every count
/// fits a `u32`).
pub(super) struct PackedBack<'a, T> {
    pub(super) e: &'a [T],
    pub(super) j: usize,
    pub(super) lo: u32,
    pub(super) fixed: u64,
}

impl<T: Item> PackedBack<'_, T> {
    /// The number of groups (distinct `entry >> 1`).
    pub(super) fn groups(&self) -> usize {
        group_starts(self.e, u64::MAX)
    }
}

/// How many of the sorted packed `rows` start a group (`entry >> 1` unlike
/// the row before; `prev` that of the row before the first, `u64::MAX` for
/// none).
fn group_starts<T: Item>(rows: &[T], mut prev: u64) -> usize {
    let mut n = 0;
    for &x in rows {
        let v = x.key() >> 1;
        n += usize::from(v != prev);
        prev = v;
    }
    n
}

impl<T: Item> Back for PackedBack<'_, T> {
    fn last_key(&self) -> Option<u64> {
        let v = self.e.get(self.j.checked_sub(1)?)?.key() >> 1;
        Some((v << self.lo) | self.fixed)
    }
    fn take_last(&mut self) -> (u64, u32, u32, f64, f64) {
        let rows = self.e.get(..self.j).unwrap_or_default();
        let v = rows.last().map_or(0, |x| x.key() >> 1);
        let (mut p, mut taken) = (0_u32, 0_usize);
        for &x in rows.iter().rev() {
            let x = x.key();
            if x >> 1 != v {
                break;
            }
            p += (x & 1) as u32;
            taken += 1;
        }
        self.j -= taken;
        let n = u32::try_from(taken).unwrap_or(u32::MAX) - p;
        ((v << self.lo) | self.fixed, p, n, 0.0, 0.0)
    }
}

/// Tie groups of two sorted sides (positives `a`, negatives `b`) appended to `out`.
pub(super) fn collapse<T>(
    a: &[T],
    b: &[T],
    kw: impl Fn(&T) -> (u64, f64),
    out: &mut Groups,
    weighted: bool,
) {
    let (mut i, mut j) = (0, 0);
    loop {
        let ka = a.get(i).map(&kw);
        let kb = b.get(j).map(&kw);
        let key = match (ka, kb) {
            (Some((x, _)), Some((y, _))) => x.min(y),
            (Some((x, _)), None) => x,
            (None, Some((y, _))) => y,
            (None, None) => return,
        };
        let (p, wp) = take_run(a, &mut i, key, &kw);
        let (n, wn) = take_run(b, &mut j, key, &kw);
        out.push(key, p, n, wp, wn, weighted);
    }
}

/// Count (and sum the weights of) the items of `xs` from `*at` on whose key
/// is `key`, moving `*at` past them.
fn take_run<T>(xs: &[T], at: &mut usize, key: u64, kw: impl Fn(&T) -> (u64, f64)) -> (u64, f64) {
    let (mut count, mut sum) = (0_u64, 0.0_f64);
    while let Some((k, w)) = xs.get(*at).map(&kw) {
        if k != key {
            break;
        }
        count += 1;
        sum += w;
        *at += 1;
    }
    (count, sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_past_u32_spread_over_entries() {
        let mut g = Groups::default();
        let big = u64::from(u32::MAX) + 10;
        g.push(5, big, 1, 0.0, 0.0, false);
        g.push(5, 3, 0, 0.0, 0.0, false);
        g.push(7, 1, 1, 0.0, 0.0, false);
        let d: Vec<_> = g.distinct().collect();
        assert_eq!(d, vec![(5, big + 3, 1, 0.0, 0.0), (7, 1, 1, 0.0, 0.0)]);
        let mut h = Groups::default();
        h.push(5, u64::from(u32::MAX), 0, 0.0, 0.0, false);
        h.push(6, 2, 2, 0.0, 0.0, false);
        g.merge_in(GroupsBack::new(&h), h.len(), false).unwrap();
        let d: Vec<_> = g.distinct().collect();
        assert_eq!(
            d,
            vec![
                (5, big + 3 + u64::from(u32::MAX), 1, 0.0, 0.0),
                (6, 2, 2, 0.0, 0.0),
                (7, 1, 1, 0.0, 0.0)
            ]
        );
    }

    /// A group as `(key, pos, neg)`.
    type Entry = (u64, u32, u32);

    /// A plain merge of two lists of groups, adding equal keys.
    fn naive(a: &[Entry], b: &[Entry]) -> Vec<(u64, u64, u64, f64, f64)> {
        let mut all: Vec<(u64, u32, u32)> = a.iter().chain(b).copied().collect();
        all.sort_by_key(|g| g.0);
        let mut out: Vec<(u64, u64, u64, f64, f64)> = Vec::new();
        for (k, p, n) in all {
            match out.last_mut() {
                Some(last) if last.0 == k => {
                    last.1 += u64::from(p);
                    last.2 += u64::from(n);
                }
                _ => out.push((k, u64::from(p), u64::from(n), 0.0, 0.0)),
            }
        }
        out
    }

    fn groups_of(entries: &[(u64, u32, u32)]) -> Groups {
        // Laid out as given (adjacent equal keys kept apart, as a union leaves them).
        Groups {
            keys: entries.iter().map(|g| g.0).collect(),
            pos: entries.iter().map(|g| g.1).collect(),
            neg: entries.iter().map(|g| g.2).collect(),
            ..Groups::default()
        }
    }

    #[test]
    fn a_merge_adds_equal_keys_wherever_the_run_ends() {
        let cases: [(&[Entry], &[Entry]); 6] = [
            // The run above every group, below every group, interleaved.
            (&[(1, 1, 0), (2, 0, 1)], &[(5, 1, 1), (6, 2, 0)]),
            (&[(5, 1, 1), (6, 2, 0)], &[(1, 1, 0), (2, 0, 1)]),
            (
                &[(1, 1, 0), (4, 0, 1), (9, 3, 3)],
                &[(2, 1, 1), (4, 2, 0), (9, 1, 0)],
            ),
            // Adjacent entries of one key below the run's lowest group of that key.
            (
                &[(3, 1, 0), (5, 1, 0), (5, 2, 2), (7, 0, 1)],
                &[(5, 4, 0), (8, 1, 1)],
            ),
            (&[(5, 1, 0), (5, 2, 2)], &[(5, 4, 0)]),
            // Counts that no longer fit one entry stay apart.
            (&[(5, u32::MAX - 1, 0), (6, 1, 1)], &[(5, 3, 1)]),
        ];
        for (a, b) in cases {
            let mut g = groups_of(a);
            let run = groups_of(b);
            g.merge_in(GroupsBack::new(&run), run.len(), false).unwrap();
            assert_eq!(
                g.distinct().collect::<Vec<_>>(),
                naive(a, b),
                "{a:?} + {b:?}"
            );
            assert!(g.keys.windows(2).all(|w| w[0] <= w[1]));
            assert!(g.len() <= a.len() + b.len());
        }
    }

    #[test]
    fn a_grown_merge_leaves_room_for_a_quarter_more() {
        let mut g = Groups::default();
        let first: Vec<(u64, u32, u32)> = (0..4000).map(|k| (2 * k, 1, 0)).collect();
        let run = groups_of(&first);
        g.merge_in(GroupsBack::new(&run), run.len(), false).unwrap();
        assert!(g.keys.capacity() >= 5000 && g.pos.capacity() >= 5000 && g.neg.capacity() >= 5000);
        // The next quarter merges where the groups are.
        let at = (g.keys.as_ptr(), g.pos.as_ptr(), g.neg.as_ptr());
        let second: Vec<(u64, u32, u32)> = (0..1000).map(|k| (2 * k + 1, 0, 1)).collect();
        let run = groups_of(&second);
        g.merge_in(GroupsBack::new(&run), run.len(), false).unwrap();
        assert_eq!(at, (g.keys.as_ptr(), g.pos.as_ptr(), g.neg.as_ptr()));
        assert_eq!(g.distinct().collect::<Vec<_>>(), naive(&first, &second));
    }

    #[test]
    fn packed_rows_merge_as_their_groups() {
        let mut next = crate::random::xorshift(99);
        let (lo, fixed) = (3, 1 << 60);
        let mut rows_of = |n: usize, values: u64| {
            let mut e: Vec<u64> = (0..n).map(|_| next() % (2 * values)).collect();
            e.sort_unstable();
            let groups: Vec<(u64, u32, u32)> = e
                .iter()
                .map(|&x| (((x >> 1) << lo) | fixed, (x & 1) as u32, 1 - (x & 1) as u32))
                .collect();
            (e, groups)
        };
        // The first compaction's groups built in one chunk or in one per thread.
        let pools = [
            Pool::sequential(),
            Pool::new(2).with_min_parallel(1),
            Pool::new(3).with_min_parallel(1),
        ];
        for ((n, values), pool) in [(1, 1), (50, 3), (1000, 40), (1000, 5000), (7, 2)]
            .into_iter()
            .flat_map(|c| pools.iter().map(move |p| (c, p)))
        {
            let (first, a) = rows_of(n, values);
            let (second, b) = rows_of(n / 2 + 1, values);
            let mut g = Groups::default();
            for e in [&first, &second] {
                let run = PackedBack {
                    e,
                    j: e.len(),
                    lo,
                    fixed,
                };
                g.merge_packed(run, pool).unwrap();
            }
            assert_eq!(
                g.distinct().collect::<Vec<_>>(),
                naive(&a, &b),
                "{n} rows of {values} on {} threads",
                pool.threads()
            );
            // The readers add up adjacent entries of one key (a merge may leave them).
            assert!(g.keys.windows(2).all(|w| w[0] <= w[1]));
        }
    }
}
