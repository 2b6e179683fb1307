//! The sorted tie groups a ranking state keeps, and the runs merged into
//! them from the back (another state's groups, or packed rows just sorted).
//!
//! Groups hold `u32` counts; a score seen more than `u32::MAX` times on one
//! side spreads over adjacent entries with the same key, which every reader
//! adds up.

use crate::error::Result;
use crate::parallel::reserve_big;

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
    /// so no second copy of the groups is ever made.
    pub(super) fn merge_in(&mut self, mut run: impl Back, r: usize, weighted: bool) -> Result<()> {
        let s = self.len();
        if r == 0 {
            return Ok(());
        }
        let end = s + r;
        self.reserve(r, weighted)?;
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
        loop {
            let from_run = match (i.checked_sub(1), run.last_key()) {
                (_, None) if i == w => break,
                (None, None) => break,
                (Some(a), Some(b)) => self.keys.get(a).is_some_and(|&k| k <= b),
                (None, Some(_)) => true,
                (Some(_), None) => false,
            };
            let (key, p, n, wp, wn) = if from_run {
                run.take_last()
            } else {
                i -= 1;
                let wp = self.w_pos.get(i).copied().unwrap_or(0.0);
                let wn = self.w_neg.get(i).copied().unwrap_or(0.0);
                (
                    self.keys.get(i).copied().unwrap_or(0),
                    self.pos.get(i).copied().unwrap_or(0),
                    self.neg.get(i).copied().unwrap_or(0),
                    wp,
                    wn,
                )
            };
            // Add to the group written last (just above) when keys match and it fits.
            if w < end && self.keys.get(w) == Some(&key) {
                let fits = self.pos.get(w).is_some_and(|&x| x.checked_add(p).is_some())
                    && self.neg.get(w).is_some_and(|&x| x.checked_add(n).is_some());
                if fits {
                    if let (Some(a), Some(b)) = (self.pos.get_mut(w), self.neg.get_mut(w)) {
                        *a += p;
                        *b += n;
                    }
                    if weighted {
                        if let (Some(a), Some(b)) = (self.w_pos.get_mut(w), self.w_neg.get_mut(w)) {
                            *a += wp;
                            *b += wn;
                        }
                    }
                    continue;
                }
            }
            w -= 1;
            if let Some(x) = self.keys.get_mut(w) {
                *x = key;
            }
            if let Some(x) = self.pos.get_mut(w) {
                *x = p;
            }
            if let Some(x) = self.neg.get_mut(w) {
                *x = n;
            }
            if weighted {
                if let (Some(a), Some(b)) = (self.w_pos.get_mut(w), self.w_neg.get_mut(w)) {
                    (*a, *b) = (wp, wn);
                }
            }
        }
        // Groups [0, i) are in place; the merged ones sit in [w, end).
        if w > i {
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

/// Sorted packed rows (`varying key bits << 1 | outcome`) as a run of tie
/// groups (fewer than 2^32 rows: every count fits a `u32`).
pub(super) struct PackedBack<'a> {
    pub(super) e: &'a [u64],
    pub(super) j: usize,
    pub(super) lo: u32,
    pub(super) fixed: u64,
}

impl PackedBack<'_> {
    /// The number of groups (distinct `entry >> 1`).
    pub(super) fn groups(&self) -> usize {
        let mut prev = u64::MAX;
        let mut n = 0;
        for &x in self.e {
            n += usize::from(x >> 1 != prev);
            prev = x >> 1;
        }
        n
    }
}

impl Back for PackedBack<'_> {
    fn last_key(&self) -> Option<u64> {
        let v = self.e.get(self.j.checked_sub(1)?)? >> 1;
        Some((v << self.lo) | self.fixed)
    }
    fn take_last(&mut self) -> (u64, u32, u32, f64, f64) {
        let end = self.j;
        let v = self.e.get(end - 1).map_or(0, |x| x >> 1);
        let mut p = 0_u32;
        while let Some(&x) = self.j.checked_sub(1).and_then(|k| self.e.get(k)) {
            if x >> 1 != v {
                break;
            }
            p += u32::from(x & 1 == 1);
            self.j -= 1;
        }
        let n = u32::try_from(end - self.j).unwrap_or(u32::MAX) - p;
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
}
