//! Hand and Till's one-vs-one AUROC (docs/definitions.md §7.6) in memory
//! bounded by the rows, whatever the number of class pairs.
//!
//! The AUROC of column `a` separating the rows of class `a` from those of
//! class `b` counts the (a-row, b-row) pairs that column `a` orders, ties
//! counting one half. One sort of column `a` over every row gives these
//! counts for all `b` at once: walking the tie groups upwards, each b-row has
//! above it the a-rows not yet passed, less those of its own group, which
//! tie with it. So K sorts of n rows replace K(K - 1) walks of pairs, and
//! each pair's AUROC is folded into its column's two sums as it comes: the
//! kernel keeps O(n + K) values per thread, never one per pair (2^23 pairs
//! at K = 4096).
//!
//! Each side's AUROC is the exact fraction `(2 ordered + tied) / (2 n_a n_b)`
//! rounded once to the nearest float64 ([`ratio`]). The sums run over the
//! columns' classes in ascending order, and the columns' sums are added in
//! that order too, so the result does not depend on the thread count.

use super::keys::Score;
use super::score_matrix::{check_matrix, Matrix, Truth};
use rayon::prelude::*;

use crate::error::{MetricError, Result};
use crate::memory::{try_filled, try_with_capacity};
use crate::parallel::{Pool, CHECK_ROWS};
use crate::sort::sort_keys_alone;

/// The averages of Hand and Till's pair AUROCs over the pairs of classes
/// that have rows: each pair's value is the mean of its two one-vs-one
/// AUROCs; `macro_auc` weighs the pairs alike, `weighted_auc` by their rows
/// (the prevalence of the pair). NaN when fewer than two classes have rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OneVsOne {
    /// Pairs of classes that both have rows.
    pub n_pairs: u64,
    pub macro_auc: f64,
    pub weighted_auc: f64,
}

/// Hand and Till's multiclass AUROC of `scores` (one column per class code)
/// against `codes`, over the pairs of classes with rows.
///
/// # Errors
/// A shape mismatch, a code beyond the columns, a NaN or infinite score in
/// the column of a class with rows, a buffer that cannot be allocated, an
/// interruption.
pub fn one_vs_one_auc<X: Score>(
    codes: &[u32],
    scores: Matrix<'_, X>,
    pool: &Pool,
) -> Result<OneVsOne> {
    let n = check_matrix(&scores, Truth::Codes(codes))?;
    let mut counts: Vec<u64> = try_filled(scores.n_cols, 0, "the class counts")?;
    for &c in codes {
        if let Some(slot) = counts.get_mut(c as usize) {
            *slot += 1;
        }
    }
    let present: Vec<u32> = (0..scores.n_cols)
        .filter(|&c| counts.get(c).is_some_and(|&k| k > 0))
        .map(|c| c as u32)
        .collect();
    let m = present.len() as u64;
    if m < 2 {
        return Ok(OneVsOne {
            n_pairs: 0,
            macro_auc: f64::NAN,
            weighted_auc: f64::NAN,
        });
    }
    let rows_present: u64 = counts.iter().sum();
    let column = |scratch: &mut Scratch, &a: &u32| -> Result<(f64, f64)> {
        column_sums(a, codes, &scores, n, &counts, &present, scratch, pool)
    };
    let sums: Vec<(f64, f64)> = if pool.threads() > 1 && present.len() > 1 {
        pool.install(|| {
            present
                .par_iter()
                .map_init(Scratch::default, column)
                .collect::<Result<_>>()
        })?
    } else {
        let mut scratch = Scratch::default();
        present
            .iter()
            .map(|a| column(&mut scratch, a))
            .collect::<Result<_>>()?
    };
    pool.check()?;
    let n_pairs = m * (m - 1) / 2;
    let (plain, weighted) = sums
        .iter()
        .fold((0.0, 0.0), |(p, w), &(sp, sw)| (p + sp, w + sw));
    #[allow(clippy::cast_precision_loss)]
    Ok(OneVsOne {
        n_pairs,
        // Each pair's value (A_ab + A_ba) / 2 is counted from both of its columns.
        macro_auc: plain / (2.0 * n_pairs as f64),
        // sum over pairs of (n_a + n_b) = (m - 1) x the rows of present classes.
        weighted_auc: weighted / (2.0 * (m - 1) as f64 * rows_present as f64),
    })
}

/// Buffers one thread reuses from column to column.
#[derive(Default)]
struct Scratch {
    keys32: Vec<u64>,
    keys64: Vec<u128>,
    ordered: Vec<u128>,
    tied: Vec<u128>,
}

/// Column `a`'s two sums over the other classes `b` with rows, in ascending
/// order: `sum_b A_ab` and `sum_b A_ab (n_a + n_b)`, `A_ab` being the AUROC of
/// column `a` separating class `a` from class `b`.
#[allow(clippy::too_many_arguments)]
fn column_sums<X: Score>(
    a: u32,
    codes: &[u32],
    scores: &Matrix<'_, X>,
    n: usize,
    counts: &[u64],
    present: &[u32],
    s: &mut Scratch,
    pool: &Pool,
) -> Result<(f64, f64)> {
    pool.check()?;
    let k = counts.len();
    s.ordered.clear();
    s.ordered
        .extend(try_filled(k, 0_u128, "the one-vs-one pair counts")?);
    s.tied.clear();
    s.tied
        .extend(try_filled(k, 0_u128, "the one-vs-one pair counts")?);
    let n_a = counts.get(a as usize).copied().unwrap_or(0);
    let col = a as usize;
    // Rows with a float32 score (all of them, for float32 matrices and their
    // float64 copies) sort as u64: the score's 32-bit order key above the
    // class code. Others as u128: the 64-bit key above the code.
    let all_f32 = X::MAY_BE_F32 && scores.column(n, col, 0, n).all(|x| x.f32_bits().is_some());
    if all_f32 {
        fill_keys(&mut s.keys32, scores, n, col, codes, |x, c| {
            let bits = x.f32_bits().unwrap_or(0);
            (u64::from(f32_order_key(bits)) << 32) | u64::from(c)
        })?;
        sort_keys_alone(&mut s.keys32, pool)?;
        walk_column(
            &s.keys32,
            |v| (v >> 32, (v & 0xFFFF_FFFF) as u32),
            a,
            n_a,
            &mut s.ordered,
            &mut s.tied,
            pool,
        )?;
    } else {
        fill_keys(&mut s.keys64, scores, n, col, codes, |x, c| {
            (u128::from(x.key()) << 32) | u128::from(c)
        })?;
        sort_keys_alone(&mut s.keys64, pool)?;
        walk_column(
            &s.keys64,
            |v| ((v >> 32) as u64, (v & 0xFFFF_FFFF) as u32),
            a,
            n_a,
            &mut s.ordered,
            &mut s.tied,
            pool,
        )?;
    }
    let (mut plain, mut weighted) = (0.0, 0.0);
    for &b in present {
        if b == a {
            continue;
        }
        let n_b = counts.get(b as usize).copied().unwrap_or(0);
        let ordered = s.ordered.get(b as usize).copied().unwrap_or(0);
        let tied = s.tied.get(b as usize).copied().unwrap_or(0);
        let pairs = u128::from(n_a) * u128::from(n_b);
        let auc = ratio(2 * ordered + tied, 2 * pairs);
        plain += auc;
        #[allow(clippy::cast_precision_loss)]
        {
            weighted += auc * (n_a + n_b) as f64;
        }
    }
    Ok((plain, weighted))
}

/// The rows' keys of column `col` (a NaN or infinite score is an error).
fn fill_keys<X: Score, K>(
    keys: &mut Vec<K>,
    scores: &Matrix<'_, X>,
    n: usize,
    col: usize,
    codes: &[u32],
    key: impl Fn(X, u32) -> K,
) -> Result<()> {
    keys.clear();
    if keys.capacity() < n {
        *keys = try_with_capacity(n, "the one-vs-one sort keys")?;
    }
    for (index, (x, &c)) in scores.column(n, col, 0, n).zip(codes).enumerate() {
        if !x.is_finite() {
            return Err(MetricError::NonFinite {
                arg: "y_score",
                index,
                value: x.to_f64(),
            });
        }
        keys.push(key(x, c));
    }
    Ok(())
}

/// Walk the sorted keys of column `a` in tie groups: every row of another
/// class `b` adds the a-rows above its group to `ordered[b]` and the a-rows
/// of its group to `tied[b]`.
fn walk_column<K: Copy>(
    sorted: &[K],
    split: impl Fn(K) -> (u64, u32),
    a: u32,
    n_a: u64,
    ordered: &mut [u128],
    tied: &mut [u128],
    pool: &Pool,
) -> Result<()> {
    let mut a_below = 0_u64;
    let (mut lo, mut next_check) = (0, 0);
    while lo < sorted.len() {
        if lo >= next_check {
            pool.check()?;
            next_check = lo + CHECK_ROWS;
        }
        let Some(&first) = sorted.get(lo) else { break };
        let key = split(first).0;
        let hi = lo
            + sorted
                .get(lo..)
                .unwrap_or_default()
                .iter()
                .take_while(|&&v| split(v).0 == key)
                .count();
        let group = sorted.get(lo..hi).unwrap_or_default();
        let a_here = group.iter().filter(|&&v| split(v).1 == a).count() as u64;
        let above = u128::from(n_a - a_below - a_here);
        for &v in group {
            let c = split(v).1;
            if c != a {
                if let Some(o) = ordered.get_mut(c as usize) {
                    *o += above;
                }
                if let Some(t) = tied.get_mut(c as usize) {
                    *t += u128::from(a_here);
                }
            }
        }
        a_below += a_here;
        lo = hi;
    }
    Ok(())
}

/// The order key of a float32's bits (`-0.0` as `0.0`): unsigned order is
/// the floats' order.
fn f32_order_key(bits: u32) -> u32 {
    let bits = if bits == 0x8000_0000 { 0 } else { bits };
    if bits & 0x8000_0000 == 0 {
        bits | 0x8000_0000
    } else {
        !bits
    }
}

/// `num / den` rounded once to the nearest float64 (ties to even), for
/// `num <= den`, `den > 0`: what Python's `float(Fraction(num, den))` gives.
/// Below 2^53 both are exact float64s and IEEE division rounds once; above,
/// the quotient's bits come from long division.
#[must_use]
pub fn ratio(num: u128, den: u128) -> f64 {
    const EXACT: u128 = 1 << 53;
    if den <= EXACT {
        #[allow(clippy::cast_precision_loss)]
        return num as f64 / den as f64;
    }
    ratio_by_division(num, den)
}

#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
fn ratio_by_division(num: u128, den: u128) -> f64 {
    if num == 0 || den == 0 {
        return 0.0;
    }
    if num >= den {
        return 1.0;
    }
    if den >= 1 << 127 {
        // Beyond any count of rows a machine holds; the shift below would overflow.
        return num as f64 / den as f64;
    }
    // 54 quotient bits from the first 1 (53 kept, one to round with) and
    // whether anything is left over (the sticky bit).
    let (mut r, mut q, mut bits, mut exp) = (num, 0_u64, 0_u32, 0_i32);
    while bits < 54 {
        r <<= 1;
        exp -= 1;
        let one = r >= den;
        if one {
            r -= den;
        }
        if q == 0 && !one {
            continue;
        }
        q = (q << 1) | u64::from(one);
        bits += 1;
    }
    let round = q & 1;
    let mut q = q >> 1;
    exp += 1;
    if round == 1 && (r != 0 || q & 1 == 1) {
        q += 1;
    }
    q as f64 * 2_f64.powi(exp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_division_rounds_as_ieee_division() {
        // Below 2^53 IEEE division is the correctly rounded quotient: the
        // long division must agree on every case, ties and tiny values included.
        let mut next = crate::random::xorshift(0x9E37_79B9_7F4A_7C15);
        for _ in 0..200_000 {
            let x = next();
            let den = (x >> 11) | 1;
            let num = (x.rotate_left(29) >> 11) % (den + 1);
            let want = num as f64 / den as f64;
            assert_eq!(
                ratio_by_division(u128::from(num), u128::from(den)).to_bits(),
                want.to_bits()
            );
        }
        for (num, den) in [(1_u128, 3_u128), (2, 3), (1, 1 << 60), (5, 10)] {
            assert_eq!(ratio_by_division(num, den), num as f64 / den as f64);
        }
        assert_eq!(ratio(0, 1 << 80), 0.0);
        assert_eq!(ratio(1 << 80, 1 << 80), 1.0);
        // 1/3 of a 2^70 denominator: the float nearest 1/3.
        assert_eq!(ratio((1 << 70) / 3, 1 << 70), 1.0 / 3.0);
    }

    #[test]
    fn f32_keys_order_as_the_floats() {
        let xs = [-f32::MAX, -1.5, -0.0, 0.0, 1e-45, 0.25, 1.0, f32::MAX];
        for w in xs.windows(2) {
            let (lo, hi) = (f32_order_key(w[0].to_bits()), f32_order_key(w[1].to_bits()));
            assert!(lo <= hi, "{w:?}");
        }
        assert_eq!(
            f32_order_key((-0.0_f32).to_bits()),
            f32_order_key(0.0_f32.to_bits())
        );
    }
}
