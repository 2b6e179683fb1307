//! One-vs-rest walks over a score matrix (docs/definitions.md
//! §7.6): each class's column against "is this class" (the one-vs-one pairs
//! are in `one_vs_one.rs`). Every walk is the binary walk of
//! [`super::binary_ranking`] (the same sort and tie handling), so a column's
//! AUROC and AP equal the binary functions' on that column.
//!
//! Work is spread over classes and, within each, over chunks: the classes
//! run as parallel tasks of the pool, and each task's gather and sort split
//! into chunks on the same pool when it has threads to spare. Results come
//! back in class order and none depends on the thread count.

use super::binary::{check_weights, BinaryRanking, Curves, Totals};
use super::keys::{packed_u32, starts_as_f32, Score};
use super::score_matrix::{check_matrix, row_sum_range, sum_rows, Matrix, Truth};
use super::strategy::binary_ranking;
use super::stream::Packed;
use super::top_k::{count_key_ranks, rank_histogram, RankLanes};
use super::walk::walk;
use rayon::prelude::*;

mod columns;
use columns::{read_columns, read_columns_ranked, Plan};

use crate::cpu::widest;
use crate::error::{MetricError, Result};
use crate::parallel::{big_vec, collect_chunked, Pool, CHECK_ROWS};
use crate::sort::sort_u32_alone_lending;

/// The walk of each requested column `c` of `scores` against "row is of class
/// `c`" (codes) or "indicator `c` is set" (multilabel), in the order of
/// `columns`. With `curves` false only the pair counts are computed.
///
/// # Errors
/// A shape or length mismatch, a code or column beyond the score columns, a
/// non-finite score, an invalid weight, weights summing to 0, an interruption.
pub fn one_vs_rest<X: Score>(
    truth: Truth<'_>,
    scores: Matrix<'_, X>,
    columns: &[usize],
    weight: Option<&[f64]>,
    curves: impl Into<Curves>,
    pool: &Pool,
) -> Result<Vec<BinaryRanking>> {
    let curves: Curves = curves.into();
    let n = check_matrix(&scores, truth)?;
    check_columns_and_weights(&scores, n, columns, weight)?;
    if let (Truth::Codes(codes), None) = (truth, weight) {
        if let Some(packed) = packed_columns(codes, &scores, columns, Extras::NONE, pool)? {
            return walk_packed_columns(packed.keys, codes, columns, curves, pool);
        }
    }
    each_column(truth, &scores, n, columns, weight, curves, pool)
}

/// The checks of [`one_vs_rest`] after [`check_matrix`] (which gave `n`):
/// every requested column within the score columns, valid weights.
fn check_columns_and_weights<X: Score>(
    scores: &Matrix<'_, X>,
    n: usize,
    columns: &[usize],
    weight: Option<&[f64]>,
) -> Result<()> {
    if let Some(&c) = columns.iter().find(|&&c| c >= scores.n_cols) {
        return Err(MetricError::Shape {
            arg: "labels",
            detail: format!(
                "column {c} is beyond the {} columns of y_score",
                scores.n_cols
            ),
        });
    }
    if let Some(w) = weight {
        check_weights(w, n, "y_score")?;
    }
    Ok(())
}

/// The general path of [`one_vs_rest`], its arguments checked: each column
/// gathered with its outcomes and walked as a binary ranking.
fn each_column<X: Score>(
    truth: Truth<'_>,
    scores: &Matrix<'_, X>,
    n: usize,
    columns: &[usize],
    weight: Option<&[f64]>,
    curves: Curves,
    pool: &Pool,
) -> Result<Vec<BinaryRanking>> {
    let one = |&col: &usize| -> Result<BinaryRanking> {
        let positive: Vec<bool> = match truth {
            Truth::Codes(codes) => collect_chunked(
                n,
                |i| codes.get(i).is_some_and(|&k| k as usize == col),
                pool,
            )?,
            Truth::Indicator(m) => collect_chunked(
                n,
                |i| m.get(i * scores.n_cols + col).copied().unwrap_or(false),
                pool,
            )?,
        };
        let column: Vec<X> = collect_chunked(n, |i| scores.at(n, i, col), pool)?;
        binary_ranking(&positive, &column, weight, curves, pool)
    };
    pool.install(|| columns.par_iter().map(one).collect())
}

/// The walks of [`one_vs_rest`] of multiclass probabilities, whose rows must
/// each sum to 1 (scikit-learn's rule for the one-vs-rest ROC AUC, as numpy's
/// `allclose(1, sum)`: within `1e-8 + 1e-5 |sum|`), with the smallest and the
/// largest row sum (each row summed left to right in float64, as
/// [`row_sum_range`] sums them). The walks are `None` when a row's sum breaks
/// the rule (no column is sorted then). Where the packed path serves, the
/// sums are taken in the same pass that writes the sort keys, so the matrix
/// is read once instead of twice; elsewhere [`row_sum_range`] runs first.
///
/// # Errors
/// Those of [`one_vs_rest`] and of [`row_sum_range`] (a non-finite score is
/// named by it, as when it runs alone).
pub fn one_vs_rest_of_probabilities<X: Score>(
    codes: &[u32],
    scores: Matrix<'_, X>,
    columns: &[usize],
    weight: Option<&[f64]>,
    curves: impl Into<Curves>,
    pool: &Pool,
) -> Result<ProbabilityWalks> {
    let curves: Curves = curves.into();
    let truth = Truth::Codes(codes);
    let n = check_matrix(&scores, truth)?;
    let accepted = |(lo, hi): (f64, f64)| sums_to_one(lo) && sums_to_one(hi);
    if weight.is_none() && columns.iter().all(|&c| c < scores.n_cols) {
        let extras = Extras {
            sums: true,
            ranks: false,
        };
        if let Some(PackedColumns {
            keys,
            sums: Some(sums),
            ..
        }) = packed_columns(codes, &scores, columns, extras, pool)?
        {
            let walks = if accepted(sums) {
                Some(walk_packed_columns(keys, codes, columns, curves, pool)?)
            } else {
                None
            };
            return Ok(ProbabilityWalks { walks, sums });
        }
    }
    let sums = row_sum_range(scores, pool)?;
    // The rest of `one_vs_rest`'s checks, then its general path (the packed
    // keys, where they apply, were tried above: not a second attempt).
    let walks = if accepted(sums) {
        check_columns_and_weights(&scores, n, columns, weight)?;
        Some(each_column(
            truth, &scores, n, columns, weight, curves, pool,
        )?)
    } else {
        None
    };
    Ok(ProbabilityWalks { walks, sums })
}

/// What [`one_vs_rest_of_probabilities`] gives.
#[derive(Debug, Clone)]
pub struct ProbabilityWalks {
    /// The walk of each requested column, `None` when a row sum is not 1.
    pub walks: Option<Vec<BinaryRanking>>,
    /// The smallest and the largest row sum (`inf, -inf` without rows).
    pub sums: (f64, f64),
}

/// The class ranking of a score matrix by class codes, as a report reads it:
/// the walk of every column against its class ([`one_vs_rest`] of all the
/// columns, in order) and the histogram of the true class's rank
/// ([`rank_histogram`]), equal to the two calls'. Where the packed keys
/// serve and the transpose goes by tiles (unweighted rows, row-major
/// scores of at most 32 columns), the ranks are counted in the
/// pass that writes the sort keys from the same keys, so the matrix is read
/// once instead of twice.
///
/// # Errors
/// Those of [`rank_histogram`], then those of [`one_vs_rest`].
pub fn class_ranking<X: Score>(
    codes: &[u32],
    scores: Matrix<'_, X>,
    weight: Option<&[f64]>,
    curves: impl Into<Curves>,
    pool: &Pool,
) -> Result<ClassRanking> {
    let curves: Curves = curves.into();
    let truth = Truth::Codes(codes);
    let n = check_matrix(&scores, truth)?;
    let columns: Vec<usize> = (0..scores.n_cols).collect();
    if weight.is_none() {
        let extras = Extras {
            sums: false,
            ranks: true,
        };
        if let Some(packed) = packed_columns(codes, &scores, &columns, extras, pool)? {
            let rank_histogram = match packed.ranks {
                // Counts below 2^53 (rows in memory): exact as float64.
                Some(counts) => counts.iter().map(|&c| c as f64).collect(),
                None => rank_histogram(codes, scores, None, pool)?,
            };
            let walks = walk_packed_columns(packed.keys, codes, &columns, curves, pool)?;
            return Ok(ClassRanking {
                walks,
                rank_histogram,
            });
        }
    }
    let rank_histogram = rank_histogram(codes, scores, weight, pool)?;
    // The rest of `one_vs_rest`'s checks, then its general path (the packed
    // keys, where they apply, were tried above: not a second attempt).
    check_columns_and_weights(&scores, n, &columns, weight)?;
    let walks = each_column(truth, &scores, n, &columns, weight, curves, pool)?;
    Ok(ClassRanking {
        walks,
        rank_histogram,
    })
}

/// What [`class_ranking`] gives.
#[derive(Debug, Clone)]
pub struct ClassRanking {
    /// The walk of each column against its class, in column order.
    pub walks: Vec<BinaryRanking>,
    /// The (weighted) rows by the rank of their true class ([`rank_histogram`]).
    pub rank_histogram: Vec<f64>,
}

/// numpy's `allclose(1.0, sum)`: `|1 - sum| <= 1e-8 + 1e-5 |sum|` (false for NaN).
fn sums_to_one(sum: f64) -> bool {
    (1.0 - sum).abs() <= 1e-8 + 1e-5 * sum.abs()
}

/// The packed form of every requested column, when it exists: scores that
/// are finite non-negative floats of at most 32 bits (probabilities, as
/// float32 softmax outputs are) have bit patterns that order as the values
/// (`-0.0` read as `0.0`), so `bits << 1 | is_class` is a `u32` key that
/// sorts by score with the outcome in bit 0, half the width of the general
/// path's keys. One pass over the matrix writes every column's keys (a
/// transpose, in parallel over chunks of rows); `None` when some score is
/// negative, wider than 32 bits, or not finite, and the general path runs.
/// The same pass also gives what `extras` asks for: the smallest and the
/// largest row sum (every column of a row, left to right in float64, as
/// [`row_sum_range`]), and the histogram of the true class's rank, counted
/// from the keys of each tile (where the tiles serve: else `None`).
fn packed_columns<X: Score>(
    codes: &[u32],
    scores: &Matrix<'_, X>,
    columns: &[usize],
    extras: Extras,
    pool: &Pool,
) -> Result<Option<PackedColumns>> {
    let Extras { sums, ranks } = extras;
    let n = codes.len();
    if !starts_as_f32(
        (0..scores.rows().min(64)).flat_map(|i| columns.iter().map(move |&c| scores.at(n, i, c))),
    ) {
        return Ok(None);
    }
    // Unwritten (huge-page backed) until the transpose's threads write them:
    // zeroing 40 MB a column first cost a serial pass and its page faults.
    let mut keys: Vec<Vec<u32>> = Vec::new();
    for _ in columns {
        keys.push(big_vec(n, "the one-vs-rest sort keys")?);
    }
    let chunk_rows = (CHECK_ROWS / scores.n_cols.max(1)).max(1);
    // Every column cut into the same chunks of rows: chunk c owns piece c of each.
    let mut pieces: Vec<Vec<&mut [std::mem::MaybeUninit<u32>]>> = Vec::new();
    for column in &mut keys {
        let slots = column.spare_capacity_mut().get_mut(..n).unwrap_or_default();
        for (c, piece) in slots.chunks_mut(chunk_rows).enumerate() {
            if pieces.len() <= c {
                pieces.push(Vec::new());
            }
            if let Some(p) = pieces.get_mut(c) {
                p.push(piece);
            }
        }
    }
    let plan = Plan::new(scores.n_cols, columns);
    let k = scores.n_cols;
    let tiled = !scores.column_major && columns.len() <= TILE_COLUMNS && k <= TILE_WIDTH;
    let ranks = ranks && tiled;
    // Every column, in order, read out by permutes: the ranks are counted
    // from the columns put together there ([`read_columns_ranked`]).
    let fused = ranks && plan.is_some() && columns.iter().copied().eq(0..k);
    let rank_lanes = if ranks && !fused {
        RankLanes::new(k)
    } else {
        None
    };
    let fill = |(c, piece): (usize, &mut Vec<&mut [std::mem::MaybeUninit<u32>]>)| -> Filled {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut extremes = |block: &[f64]| {
            // Finite sums (every score is, where the keys are used).
            for &sum in block {
                lo = if sum < lo { sum } else { lo };
                hi = if sum > hi { sum } else { hi };
            }
        };
        let mut hist = vec![0_u64; if ranks { k } else { 0 }];
        if pool.stopped() {
            return (true, lo, hi, hist);
        }
        let first = c * chunk_rows;
        let rows = piece.first().map_or(0, |p| p.len());
        let mut ok = true;
        let mut row_sums = [0.0_f64; TILE];
        if tiled {
            // Tiles of TILE rows: every score's key (without the outcome)
            // computed in one contiguous pass into a small table, the true
            // class's outcome bit set row by row, then each requested column
            // read out of the table into its output (whole cache lines).
            let mut tile = [0_u32; TILE * TILE_WIDTH];
            let values = scores
                .values
                .get(first * k..(first + rows) * k)
                .unwrap_or(&[]);
            let truth = codes.get(first..first + rows).unwrap_or(&[]);
            // In range by the shape checks; otherwise no key is used.
            ok &= values.len() == rows * k && truth.len() == rows;
            for (t, (block, codes)) in values.chunks(TILE * k).zip(truth.chunks(TILE)).enumerate() {
                let m = codes.len();
                if sums {
                    let block_sums = row_sums.get_mut(..m).unwrap_or_default();
                    sum_rows(block, k, block_sums);
                    extremes(block_sums);
                }
                let keys = tile.get_mut(..block.len()).unwrap_or_default();
                score_keys(block, keys);
                if ranks && !fused {
                    // Before the outcome bits: the keys order as the scores.
                    count_key_ranks(keys, codes, k, &mut hist, rank_lanes.as_ref());
                }
                for (row, &code) in keys.chunks_exact_mut(k).zip(codes) {
                    if let Some(key) = row.get_mut(code as usize) {
                        *key |= 1;
                    }
                }
                let keys = keys.get(..m * k).unwrap_or_default();
                ok &= match plan.as_ref().filter(|_| fused) {
                    Some(plan) => read_columns_ranked(
                        keys,
                        k,
                        piece,
                        t * TILE,
                        NOT_A_KEY,
                        plan,
                        codes,
                        &mut hist,
                    ),
                    None => {
                        read_columns(keys, k, columns, piece, t * TILE, NOT_A_KEY, plan.as_ref())
                    }
                };
            }
            return (ok, lo, hi, hist);
        }
        if sums {
            for at in (first..first + rows).step_by(TILE) {
                let block_sums = row_sums
                    .get_mut(..(first + rows - at).min(TILE))
                    .unwrap_or_default();
                for (r, sum) in block_sums.iter_mut().enumerate() {
                    *sum = (0..k).fold(0.0, |t, j| t + scores.at(n, at + r, j).to_f64());
                }
                extremes(block_sums);
            }
        }
        for (out, &col) in piece.iter_mut().zip(columns) {
            for (r, slot) in out.iter_mut().enumerate() {
                let i = first + r;
                let hit = codes.get(i).is_some_and(|&k| k as usize == col);
                let key = scores
                    .at(n, i, col)
                    .f32_bits()
                    .and_then(|b| packed_u32(b, hit));
                ok &= key.is_some();
                slot.write(key.unwrap_or(0));
            }
        }
        (ok, lo, hi, hist)
    };
    let both = |a: Filled, b: Filled| {
        let mut hist = a.3;
        // Integer counts: the same sums in any split (an empty side: none).
        if hist.is_empty() {
            hist = b.3;
        } else {
            for (x, y) in hist.iter_mut().zip(b.3) {
                *x += y;
            }
        }
        (a.0 & b.0, a.1.min(b.1), a.2.max(b.2), hist)
    };
    let none = || (true, f64::INFINITY, f64::NEG_INFINITY, Vec::new());
    let (all_ok, lo, hi, hist) = if pool.parallel_for(n * columns.len()) {
        pool.install(|| {
            pieces
                .par_iter_mut()
                .enumerate()
                .map(fill)
                .reduce(none, both)
        })
    } else {
        pieces.iter_mut().enumerate().map(fill).fold(none(), both)
    };
    pool.check()?;
    for column in &mut keys {
        // SAFETY: the chunks tile `..n` of every column and each wrote every
        // slot of its pieces (the stop flag, checked just above, was not
        // raised, so every chunk ran to its end); `u32` needs no drop.
        unsafe { column.set_len(n) };
    }
    // Without rows no chunk ran: an empty histogram of `k` zeros.
    let hist = if ranks && hist.is_empty() {
        vec![0; k]
    } else {
        hist
    };
    Ok(all_ok.then_some(PackedColumns {
        keys,
        sums: sums.then_some((lo, hi)),
        ranks: ranks.then_some(hist),
    }))
}

/// What [`packed_columns`] computes beside the keys.
#[derive(Debug, Clone, Copy)]
struct Extras {
    /// The smallest and the largest row sum.
    sums: bool,
    /// The histogram of the true class's rank (where the tiles serve).
    ranks: bool,
}

impl Extras {
    const NONE: Self = Self {
        sums: false,
        ranks: false,
    };
}

/// What [`packed_columns`] gives: the sort keys of every requested column,
/// and what its [`Extras`] asked for.
struct PackedColumns {
    keys: Vec<Vec<u32>>,
    sums: Option<(f64, f64)>,
    ranks: Option<Vec<u64>>,
}

/// What a chunk of [`packed_columns`] gives: whether every key was made, the
/// smallest and largest row sum of its rows (when asked for), and its rows'
/// rank counts (empty unless asked for).
type Filled = (bool, f64, f64, Vec<u64>);

/// Rows of a tile of the transpose, the most columns it takes, and the most
/// columns of the matrix it reads (its table is `TILE x TILE_WIDTH` keys).
const TILE: usize = 64;
const TILE_COLUMNS: usize = 32;
const TILE_WIDTH: usize = 64;

/// What [`score_keys`] writes for a score with no packed key (negative, not
/// finite, or wider than float32): above every key, and still itself with
/// the outcome bit set.
const NOT_A_KEY: u32 = u32::MAX;

widest! {
    /// The packed key of each score ([`packed_u32`], outcome 0), or
    /// [`NOT_A_KEY`], with the widest vectors this CPU runs.
    fn score_keys<X: Score>(values: &[X], keys: &mut [u32]) => score_keys_portable
}

/// The loop of [`score_keys`], inlined into each variant so that it
/// vectorises for its features.
#[inline(always)]
fn score_keys_portable<X: Score>(values: &[X], keys: &mut [u32]) {
    for (key, &x) in keys.iter_mut().zip(values) {
        *key = x
            .f32_bits()
            .and_then(|b| packed_u32(b, false))
            .unwrap_or(NOT_A_KEY);
    }
}

/// Sort each packed column and walk it (the binary walk of the column).
fn walk_packed_columns(
    keys: Vec<Vec<u32>>,
    codes: &[u32],
    columns: &[usize],
    curves: Curves,
    pool: &Pool,
) -> Result<Vec<BinaryRanking>> {
    let n = codes.len() as u64;
    // The rows of each class, counted in chunks on the pool's threads
    // (integer sums: the same counts in any split).
    let width = columns.iter().max().map_or(0, |&c| c + 1);
    let count = |chunk: &[u32]| {
        let mut counts = vec![0_u64; width];
        for &k in chunk {
            if let Some(slot) = counts.get_mut(k as usize) {
                *slot += 1;
            }
        }
        counts
    };
    let add = |mut a: Vec<u64>, b: Vec<u64>| {
        for (x, y) in a.iter_mut().zip(b) {
            *x += y;
        }
        a
    };
    let counts = if pool.parallel_for(codes.len()) {
        pool.install(|| {
            codes
                .par_chunks(CHECK_ROWS)
                .map(count)
                .reduce(|| vec![0; width], add)
        })
    } else {
        count(codes)
    };
    let spares: std::sync::Mutex<Vec<Vec<u32>>> = std::sync::Mutex::new(Vec::new());
    let one = |(mut column, &col): (Vec<u32>, &usize)| -> Result<BinaryRanking> {
        // A spare array per thread at work, lent from one column's sort to
        // the next (its pages touched once, not once per column).
        let mut spare = spares
            .lock()
            .map(|mut s| s.pop().unwrap_or_default())
            .unwrap_or_default();
        let sorted = sort_u32_alone_lending(&mut column, &mut spare, pool);
        if let Ok(mut s) = spares.lock() {
            s.push(spare);
        }
        sorted?;
        let n_pos = counts.get(col).copied().unwrap_or(0);
        let totals = Totals::counted(n_pos, n - n_pos);
        walk(
            Packed {
                rows: column.iter(),
            },
            totals,
            curves,
            pool,
        )
    };
    pool.install(|| {
        keys.into_par_iter()
            .zip(columns.par_iter())
            .map(one)
            .collect()
    })
}
