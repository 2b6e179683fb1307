//! Knight's algorithm beyond 2^32 rows: the `(x, y)` pairs sorted, then the
//! discordant pairs counted as the inversions of `y` by a merge sort.

use super::counts::KendallCounts;
use super::runs::tie_runs;
use crate::error::Result;
use crate::memory::try_filled;
use crate::parallel::{collect_chunked, Pool};
use crate::ranking::keys::Score;
use crate::sort::sort_keys;

/// Sort `v` (merge sort) and return its number of inversions (`i < j`,
/// `v[i] > v[j]`; equal values are not inversions). `buf` is scratch space
/// of the same length. Returns early, with a meaningless count, once the
/// pool's stop flag is raised (the caller checks it).
fn sort_count_inversions(v: &mut [u64], buf: &mut [u64], pool: &Pool) -> u128 {
    sort_counting(v, buf, false, pool)
}

/// The merge sort of [`sort_count_inversions`], its levels alternating
/// between `v` and `buf` (no copy back): the sorted values end in `buf` when
/// `into_buf`, in `v` otherwise.
fn sort_counting(v: &mut [u64], buf: &mut [u64], into_buf: bool, pool: &Pool) -> u128 {
    const SMALL: usize = 32;
    const PARALLEL_ABOVE: usize = 1 << 16;
    let n = v.len();
    if n >= PARALLEL_ABOVE && pool.stopped() {
        return 0;
    }
    if n <= SMALL {
        // Insertion sort: every shift past a larger value is one inversion.
        let mut inv = 0_u128;
        for i in 1..n {
            let mut j = i;
            while j > 0 && v.get(j - 1) > v.get(j) {
                v.swap(j - 1, j);
                inv += 1;
                j -= 1;
            }
        }
        if into_buf {
            if let Some(b) = buf.get_mut(..n) {
                b.copy_from_slice(v);
            }
        }
        return inv;
    }
    let mid = n / 2;
    let (vl, vr) = v.split_at_mut(mid);
    let (bl, br) = buf.split_at_mut(mid);
    // The halves end in the other array, and the merge brings them back.
    let (a, b) = if n >= PARALLEL_ABOVE && pool.threads() > 1 {
        rayon::join(
            || sort_counting(vl, bl, !into_buf, pool),
            || sort_counting(vr, br, !into_buf, pool),
        )
    } else {
        (
            sort_counting(vl, bl, !into_buf, pool),
            sort_counting(vr, br, !into_buf, pool),
        )
    };
    let inv = if into_buf {
        merge_counting(vl, vr, buf)
    } else {
        merge_counting(bl, br, v)
    };
    a + b + inv
}

/// Merge sorted `l` and `r` into `out`, counting for each value taken from
/// `r` the values of `l` above it; branch-free in the comparison.
fn merge_counting(l: &[u64], r: &[u64], out: &mut [u64]) -> u128 {
    let (mut i, mut j, mut k) = (0, 0, 0);
    let mut inv = 0_u128;
    while i < l.len() && j < r.len() {
        let (x, y) = (
            l.get(i).copied().unwrap_or(0),
            r.get(j).copied().unwrap_or(0),
        );
        let take_r = y < x;
        if let Some(s) = out.get_mut(k) {
            *s = if take_r { y } else { x };
        }
        inv += u128::from(take_r) * (l.len() - i) as u128;
        j += usize::from(take_r);
        i += usize::from(!take_r);
        k += 1;
    }
    for &x in l
        .get(i..)
        .unwrap_or(&[])
        .iter()
        .chain(r.get(j..).unwrap_or(&[]))
    {
        if let Some(s) = out.get_mut(k) {
            *s = x;
        }
        k += 1;
    }
    inv
}

/// Knight's algorithm on the `(x, y)` pairs themselves (sorted as `u128`,
/// then a merge sort of `y` counting inversions): for more than `2^32`
/// rows, whose indices do not fit the rank path's keys.
pub(super) fn by_sort<X: Score, Y: Score>(x: &[X], y: &[Y], pool: &Pool) -> Result<KendallCounts> {
    let n = x.len();
    // (x key, y key) as one u128: sorting it sorts by x, then y.
    let pair = |i: usize| {
        let a = x.get(i).map_or(0, |v| v.key());
        let b = y.get(i).map_or(0, |v| v.key());
        (u128::from(a) << 64) | u128::from(b)
    };
    let mut pairs: Vec<u128> = collect_chunked(n, pair, pool)?;
    sort_keys(&mut pairs, pool)?;
    let (x_ties, x_distinct) = tie_runs(&pairs, |p| p >> 64, pool);
    let (joint_ties, _) = tie_runs(&pairs, |p| *p, pool);
    pool.check()?;
    #[allow(clippy::cast_possible_truncation)]
    let mut ys: Vec<u64> = collect_chunked(n, |i| pairs.get(i).map_or(0, |&p| p as u64), pool)?;
    drop(pairs);
    let mut buf: Vec<u64> = try_filled(n, 0, "the merge buffer")?;
    let discordant = pool.install(|| sort_count_inversions(&mut ys, &mut buf, pool));
    pool.check()?;
    let (y_ties, y_distinct) = tie_runs(&ys, |v| *v, pool);
    pool.check()?;
    Ok(KendallCounts {
        n: n as u64,
        x_ties,
        y_ties,
        joint_ties,
        discordant,
        x_distinct,
        y_distinct,
    })
}
