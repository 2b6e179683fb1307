//! Label types accepted by the counting kernels, and the encoding of labels to
//! the dense codes `0..K-1`.
//!
//! Integer labels that already form a small non-negative range are counted as
//! they are (no encoding pass). Anything else (negative values, sparse ids,
//! strings) goes through one encoding step: a hash pass that collects the
//! distinct values (O(n)), a sort of the K distinct values (O(K log K)) and a
//! second hash pass that writes the codes.

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{MetricError, Result};
use crate::memory::try_with_capacity;
use crate::parallel::{Pool, BASE_CHUNK};

/// An integer label type the kernels read directly (`i32` and `i64`; other
/// integer dtypes are cast once on the Python side).
pub trait Label: Copy + Send + Sync + Ord + std::hash::Hash + 'static {
    /// The value as `i64`.
    fn to_i64(self) -> i64;
    /// The value as an index below `cap`, or `cap` for anything outside
    /// `0..cap` (negative values included): the overflow slot of a padded
    /// histogram, which makes the range check branch-free.
    fn slot(self, cap: usize) -> usize;
}

impl Label for i32 {
    #[inline(always)]
    fn to_i64(self) -> i64 {
        i64::from(self)
    }
    #[inline(always)]
    fn slot(self, cap: usize) -> usize {
        // A negative value reinterpreted as u32 is >= 2^31 > any cap we use.
        #[allow(clippy::cast_sign_loss)]
        let v = self as u32 as usize;
        v.min(cap)
    }
}

impl Label for i64 {
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self
    }
    #[inline(always)]
    fn slot(self, cap: usize) -> usize {
        #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
        let v = (self as u64).min(cap as u64) as usize;
        v
    }
}

/// Smallest and largest value over both arrays (parallel, one pass each).
pub fn min_max<L: Label>(a: &[L], b: &[L], pool: &Pool) -> Option<(i64, i64)> {
    fn seq<L: Label>(x: &[L]) -> Option<(i64, i64)> {
        let first = x.first()?.to_i64();
        let mut lo = first;
        let mut hi = first;
        for v in x {
            let v = v.to_i64();
            lo = lo.min(v);
            hi = hi.max(v);
        }
        Some((lo, hi))
    }
    fn join(a: Option<(i64, i64)>, b: Option<(i64, i64)>) -> Option<(i64, i64)> {
        match (a, b) {
            (Some((l1, h1)), Some((l2, h2))) => Some((l1.min(l2), h1.max(h2))),
            (x, None) | (None, x) => x,
        }
    }
    let one = |x: &[L]| {
        if pool.parallel_for(x.len()) {
            pool.install(|| x.par_chunks(BASE_CHUNK * 4).map(seq).reduce(|| None, join))
        } else {
            seq(x)
        }
    };
    join(one(a), one(b))
}

/// The distinct values of both arrays, sorted ascending, with each array
/// rewritten as codes into that sorted list.
pub struct Encoded {
    /// Sorted distinct values.
    pub values: Vec<i64>,
    /// Codes of the first array.
    pub a: Vec<i32>,
    /// Codes of the second array.
    pub b: Vec<i32>,
}

/// Encode sparse or negative integer labels to `0..K-1` (see module docs).
///
/// # Errors
/// `LimitExceeded` when more than `max_classes` distinct values occur.
pub fn encode_ints<L: Label>(a: &[L], b: &[L], max_classes: usize, pool: &Pool) -> Result<Encoded> {
    let collect = |x: &[L]| -> FxHashSet<i64> {
        if pool.parallel_for(x.len()) {
            pool.install(|| {
                x.par_chunks(BASE_CHUNK * 4)
                    .map(|c| {
                        if pool.stopped() {
                            return FxHashSet::default();
                        }
                        c.iter().map(|v| v.to_i64()).collect::<FxHashSet<i64>>()
                    })
                    .reduce(FxHashSet::default, |mut s, t| {
                        s.extend(t);
                        s
                    })
            })
        } else {
            x.iter().map(|v| v.to_i64()).collect()
        }
    };
    let mut set = collect(a);
    set.extend(collect(b));
    pool.check()?;
    check_classes(set.len(), max_classes)?;
    let mut values: Vec<i64> = set.into_iter().collect();
    values.sort_unstable();
    let index: FxHashMap<i64, i32> = values.iter().zip(0_i32..).map(|(v, i)| (*v, i)).collect();
    let map = |x: &[L]| -> Vec<i32> {
        let code = |v: &L| index.get(&v.to_i64()).copied().unwrap_or(0);
        if pool.parallel_for(x.len()) {
            pool.install(|| x.par_iter().map(code).collect())
        } else {
            x.iter().map(code).collect()
        }
    };
    Ok(Encoded {
        a: map(a),
        b: map(b),
        values,
    })
}

/// Fixed-width UCS-4 strings as numpy stores them (`<U` dtype): `n * width`
/// code points, each string padded with trailing zeros.
#[derive(Clone, Copy)]
pub struct Ucs4<'a> {
    /// The code points, row-major.
    pub data: &'a [u32],
    /// Code points per string.
    pub width: usize,
}

impl<'a> Ucs4<'a> {
    /// Number of strings.
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.width).unwrap_or(0)
    }

    /// Whether there are no strings.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn get(&self, i: usize) -> &'a [u32] {
        let s = self
            .data
            .get(i * self.width..(i + 1) * self.width)
            .unwrap_or(&[]);
        let end = s.iter().rposition(|&c| c != 0).map_or(0, |p| p + 1);
        s.get(..end).unwrap_or(&[])
    }
}

/// String labels encoded to codes; `first` locates one occurrence of each
/// distinct string (in sorted order) as `(array, row)`, array 0 = first input.
pub struct EncodedStrings {
    /// `(array, row)` of one occurrence of each distinct string, sorted by the
    /// strings' code points (Python's `sorted` order).
    pub first: Vec<(u8, usize)>,
    /// Codes of the first array.
    pub a: Vec<i32>,
    /// Codes of the second array.
    pub b: Vec<i32>,
}

/// Encode two arrays of fixed-width strings to shared codes `0..K-1`, K sorted
/// by code point. One hash pass over the rows plus a sort of the K distinct
/// strings.
///
/// # Errors
/// `LimitExceeded` when more than `max_classes` distinct strings occur.
pub fn encode_strings(a: Ucs4<'_>, b: Ucs4<'_>, max_classes: usize) -> Result<EncodedStrings> {
    let ka: Vec<&[u32]> = (0..a.len()).map(|i| a.get(i)).collect();
    let kb: Vec<&[u32]> = (0..b.len()).map(|i| b.get(i)).collect();
    encode_keys(&ka, &kb, max_classes)
}

/// Encode two arrays of hashable, ordered keys (string slices, code-point
/// slices) to shared codes `0..K-1` in ascending key order: one hash pass over
/// the rows, a sort of the K distinct keys, one pass to rewrite the codes.
///
/// # Errors
/// `LimitExceeded` when more than `max_classes` distinct keys occur.
pub fn encode_keys<K: Copy + Eq + Ord + std::hash::Hash>(
    a: &[K],
    b: &[K],
    max_classes: usize,
) -> Result<EncodedStrings> {
    let mut ids: FxHashMap<K, i32> = FxHashMap::default();
    let mut first: Vec<(u8, usize)> = Vec::new();
    let mut keys: Vec<K> = Vec::new();
    let mut codes = [
        try_with_capacity(a.len(), "the label codes")?,
        try_with_capacity(b.len(), "the label codes")?,
    ];
    for (which, arr) in [a, b].into_iter().enumerate() {
        for (i, &key) in arr.iter().enumerate() {
            let next = i32::try_from(first.len()).unwrap_or(i32::MAX);
            let code = *ids.entry(key).or_insert_with(|| {
                #[allow(clippy::cast_possible_truncation)]
                first.push((which as u8, i));
                keys.push(key);
                next
            });
            if let Some(v) = codes.get_mut(which) {
                v.push(code);
            }
        }
        check_classes(first.len(), max_classes)?;
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_unstable_by(|&x, &y| keys.get(x).cmp(&keys.get(y)));
    let mut rank = vec![0_i32; keys.len()];
    for (r, &old) in (0_i32..).zip(order.iter()) {
        if let Some(slot) = rank.get_mut(old) {
            *slot = r;
        }
    }
    let [ca, cb] = codes;
    let remap = |v: Vec<i32>| -> Vec<i32> {
        v.into_iter()
            .map(|c| {
                usize::try_from(c)
                    .ok()
                    .and_then(|c| rank.get(c).copied())
                    .unwrap_or(0)
            })
            .collect()
    };
    let sorted_first = order
        .iter()
        .filter_map(|&o| first.get(o).copied())
        .collect();
    Ok(EncodedStrings {
        first: sorted_first,
        a: remap(ca),
        b: remap(cb),
    })
}

fn check_classes(k: usize, max_classes: usize) -> Result<()> {
    if k > max_classes {
        return Err(MetricError::LimitExceeded {
            what: "the number of distinct labels",
            needed: k as u128,
            limit: max_classes as u128,
            hint: "each class adds a row and a column to the K x K tables of counts and sums (16 K^2 bytes); raise max_classes= or cmetrics.set_max_classes() if that is intended",
        });
    }
    Ok(())
}
