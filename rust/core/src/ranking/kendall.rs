//! Kendall's tau-b and tau-c (docs/definitions.md §5.3): the pair counts of two vectors.
//!
//! Every method gives the same counts; they differ in speed. Knight's
//! algorithm handles any data: the rows in `(x, y)` order, and the
//! discordant pairs as the inversions of `y` in that order. Here the rows
//! are sorted by `x` and by `y` side by side, `y`'s order gives each row a
//! rank, and the inversions of the ranks in `x` order are counted one digit
//! at a time (`kendall/inversions.rs`). When both vectors have few distinct values,
//! as rounded scores, grades and quantised confidences do, a table sweep is
//! faster still: the rows are grouped by the rank of `x` (hash maps give the
//! ranks), and each group's histogram of `y` ranks is weighed against the
//! running histogram of all earlier groups. When only one vector has few
//! values, its ranks ride in the low bits of the other's sorted keys and are
//! swept block by block.

//!
//! One file per method: `ranks` (Knight's algorithm by ranks, with the digit
//! inversions of `inversions`), `merge_sort` (Knight's algorithm past 2^32
//! rows), `table` and `one_sided` (the sweeps, over the ranks of `key_map`);
//! `runs` holds what they share over sorted keys, `counts` the result.

mod counts;
mod inversions;
mod key_map;
mod merge_sort;
mod one_sided;
mod ranks;
mod runs;
mod table;

pub use counts::KendallCounts;
pub use key_map::TABLE_MAX_DISTINCT;

use crate::ensure;
use crate::error::{same_length, MetricError, Result};
use crate::parallel::Pool;
use crate::ranking::keys::Score;
use merge_sort::by_sort;
use one_sided::by_one_sided;
use ranks::by_ranks;
use table::by_table;

/// How [`kendall_counts_with`] counts the pairs. Every method gives the same
/// counts; they differ only in speed and memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KendallMethod {
    /// The table sweep when the data have few distinct values (at most
    /// [`TABLE_MAX_DISTINCT`] in each vector and a table of at most
    /// `16 n + 2^20` cells), else the one-sided sweep when one vector has
    /// few, Knight's sort otherwise.
    #[default]
    Auto,
    /// Knight's algorithm: the rows sorted by `x` and by `y` (row indices
    /// in the keys' low bits), the ranks of `y` read in `x` order, and their
    /// inversions counted digit by digit; O(n log n) time, 20 bytes per row.
    /// Beyond `2^32` rows, a sort of the `(x, y)` pairs and a merge sort of
    /// `y` (48 bytes per row).
    Sort,
    /// The table sweep whenever both vectors have at most
    /// [`TABLE_MAX_DISTINCT`] distinct values (else the sort).
    Table,
    /// The one-sided sweep whenever one vector has at most
    /// [`TABLE_MAX_DISTINCT`] distinct values (else the sort): the pairs
    /// sorted, then the inversions of that vector's ranks counted per block
    /// (by sub-blocks up to 2,048 ranks, eight bits at a time above).
    /// `Auto` uses it when the table does not fit.
    OneSided,
}

/// Kendall pair counts of `(x, y)` (docs/definitions.md §5.3), by the fastest
/// exact method. Integers are ordered as integers; `-inf` and `inf` are the
/// smallest and largest values.
///
/// # Errors
/// Length mismatch, empty input, NaN values, an interruption.
pub fn kendall_counts<X: Score, Y: Score>(x: &[X], y: &[Y], pool: &Pool) -> Result<KendallCounts> {
    kendall_counts_with(x, y, KendallMethod::Auto, pool)
}

/// The first NaN of `xs`, as an error.
fn check_not_nan<X: Score>(arg: &'static str, xs: &[X]) -> Result<()> {
    match xs.iter().position(|v| v.is_nan()) {
        Some(index) => Err(MetricError::IsNan { arg, index }),
        None => Ok(()),
    }
}

/// Kendall pair counts of `(x, y)` by the given method.
///
/// # Errors
/// Length mismatch, empty input, NaN values, an interruption.
pub fn kendall_counts_with<X: Score, Y: Score>(
    x: &[X],
    y: &[Y],
    method: KendallMethod,
    pool: &Pool,
) -> Result<KendallCounts> {
    let n = x.len();
    same_length("x", Some(n), "y", y.len())?;
    ensure!(n > 0, MetricError::Empty { arg: "x" });
    let (fx, fy) = pool.install(|| rayon::join(|| check_not_nan("x", x), || check_not_nan("y", y)));
    fx?;
    fy?;
    if matches!(method, KendallMethod::Auto | KendallMethod::Table) && u32::try_from(n).is_ok() {
        let cells = (method == KendallMethod::Auto).then_some(16 * n + (1 << 20));
        let table = by_table(x, y, cells, pool);
        pool.check()?;
        if let Some(c) = table {
            return Ok(c);
        }
    }
    if matches!(method, KendallMethod::Auto | KendallMethod::OneSided) {
        // One vector with few distinct values: a sort of the pairs, and a
        // sweep of that vector's ranks (tau is symmetric in x and y).
        if let Some(c) = by_one_sided(x, y, pool)? {
            return Ok(c);
        }
        if let Some(c) = by_one_sided(y, x, pool)? {
            return Ok(KendallCounts {
                x_ties: c.y_ties,
                y_ties: c.x_ties,
                x_distinct: c.y_distinct,
                y_distinct: c.x_distinct,
                ..c
            });
        }
    }
    if let Some(c) = by_ranks(x, y, pool)? {
        return Ok(c);
    }
    by_sort(x, y, pool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::lcg;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    /// Pair counts by looking at every pair.
    fn naive(x: &[f64], y: &[f64]) -> KendallCounts {
        let mut c = KendallCounts {
            n: x.len() as u64,
            ..KendallCounts::default()
        };
        for i in 0..x.len() {
            for j in i + 1..x.len() {
                let (tx, ty) = (x[i] == x[j], y[i] == y[j]);
                c.x_ties += u128::from(tx);
                c.y_ties += u128::from(ty);
                c.joint_ties += u128::from(tx && ty);
                c.discordant +=
                    u128::from((x[i] < x[j] && y[i] > y[j]) || (x[i] > x[j] && y[i] < y[j]));
            }
        }
        let distinct = |v: &[f64]| {
            let mut k: Vec<u64> = v.iter().map(|a| a.key()).collect();
            k.sort_unstable();
            k.dedup();
            k.len() as u64
        };
        c.x_distinct = distinct(x);
        c.y_distinct = distinct(y);
        c
    }

    /// Inputs that stress the rank path: continuous values, values a few
    /// ulps apart (equal truncated keys, different values), heavy ties that
    /// take the parallel group sort, and both at once.
    fn cases(n: usize) -> Vec<(Vec<f64>, Vec<f64>)> {
        let mut next = lcg(n as u64);
        let mut unit = move || next() as f64 / f64::from(1_u32 << 31);
        let base: Vec<f64> = (0..n).map(|_| unit()).collect();
        let noisy: Vec<f64> = base.iter().map(|v| v + unit()).collect();
        let ulps: Vec<f64> = (0..n as u64)
            .map(|i| f64::from_bits(0.75_f64.to_bits() + (i * 7919) % 5000))
            .collect();
        let heavy: Vec<f64> = base
            .iter()
            .enumerate()
            .map(|(i, &v)| if i % 4 == 0 { v } else { 1.5 })
            .collect();
        let ints: Vec<f64> = (0..n).map(|i| ((i * 37) % 1013) as f64).collect();
        vec![
            (base.clone(), noisy.clone()),
            (noisy.clone(), base.clone()),
            (ulps.clone(), noisy.clone()),
            (heavy.clone(), ulps.clone()),
            (ulps.clone(), ulps.iter().rev().copied().collect()),
            (heavy.clone(), heavy.iter().rev().copied().collect()),
            (base.clone(), base.clone()),
            (ints, noisy),
        ]
    }

    #[test]
    fn ranks_match_the_pair_count() {
        for n in [1, 2, 3, 40, 700, 2500] {
            for (x, y) in cases(n) {
                let want = naive(&x, &y);
                for threads in [1, 3] {
                    let pool = Pool::new(threads).with_min_parallel(0);
                    let got = by_ranks(&x, &y, &pool).unwrap().unwrap();
                    assert_eq!(got, want, "n {n} threads {threads}");
                }
            }
        }
    }

    #[test]
    fn ranks_match_the_pair_sort_at_scale() {
        // Heavy ties of 3 * 2^16 rows (the parallel group sort), cut points
        // inside runs, and 2^18 + 1 rows (ranks of 19 bits, a 3-bit first digit).
        let n = (1 << 18) + 1;
        for (x, y) in cases(n) {
            let want = by_sort(&x, &y, &Pool::sequential()).unwrap();
            for threads in [1, 2, 3] {
                let pool = Pool::new(threads).with_min_parallel(0);
                assert_eq!(
                    by_ranks(&x, &y, &pool).unwrap().unwrap(),
                    want,
                    "threads {threads}"
                );
            }
        }
    }

    #[test]
    fn integers_near_the_extremes_keep_their_order() {
        let x: Vec<i64> = vec![i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX, 0];
        let y: Vec<i64> = vec![3, 2, i64::MAX, i64::MAX - 1, i64::MIN, 5, 5, i64::MIN + 1];
        let want = by_sort(&x, &y, &Pool::sequential()).unwrap();
        assert_eq!(
            by_ranks(&x, &y, &Pool::sequential()).unwrap().unwrap(),
            want
        );
        assert_eq!(want.x_ties, 1);
        assert_eq!(want.y_ties, 1);
    }

    #[test]
    fn a_raised_flag_stops_the_rank_path() {
        let (x, y) = cases(5000).swap_remove(0);
        let pool = Pool::new(2)
            .with_min_parallel(0)
            .with_stop(Arc::new(AtomicBool::new(true)));
        assert_eq!(by_ranks(&x, &y, &pool), Err(MetricError::Interrupted));
    }
}
