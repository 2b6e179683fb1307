//! The histogram of the true class's rank among each row's scores (scikit-learn's
//! tie rule: the later column first), from which every top-k accuracy follows;
//! per batch and per group.

use super::binary::check_weights;
use super::keys::Score;
use super::score_matrix::{check_matrix, Matrix, Truth};
use rayon::prelude::*;

use crate::cpu::widest;
use crate::ensure;
use crate::error::{MetricError, Result};
use crate::parallel::Pool;

/// The (weighted) number of rows whose true class ranks `r`-th among the row's
/// scores, for `r = 0..n_cols`: rank = scores above the true class's, plus the
/// ties in later columns (a reversed stable sort puts those first, as
/// scikit-learn's top-k accuracy does). Top-k accuracy is the sum of the first
/// `k` entries over the total weight. One pass, in parallel over fixed chunks
/// of rows whose sums are added in chunk order.
///
/// # Errors
/// As [`fn@super::one_vs_rest`] (shapes, codes, weights), an interruption.
pub fn rank_histogram<X: Score>(
    codes: &[u32],
    scores: Matrix<'_, X>,
    weight: Option<&[f64]>,
    pool: &Pool,
) -> Result<Vec<f64>> {
    let n = check_matrix(&scores, Truth::Codes(codes))?;
    if let Some(w) = weight {
        check_weights(w, n, "y_score")?;
    }
    let k = scores.n_cols;
    let chunk_rows = (crate::parallel::CHECK_ROWS / k).max(1);
    let part = |c: usize| -> Vec<f64> {
        let mut hist = vec![0.0_f64; k];
        if pool.stopped() {
            return hist;
        }
        let end = ((c + 1) * chunk_rows).min(n);
        let weight_of = |i: usize| weight.map_or(1.0, |w| w.get(i).copied().unwrap_or(0.0));
        if !scores.column_major {
            let rows = scores
                .values
                .get(c * chunk_rows * k..end * k)
                .unwrap_or(&[]);
            let first = c * chunk_rows;
            let truth = codes.get(first..end).unwrap_or(&[]);
            let add = |hist: &mut Vec<f64>, r: usize, rank: usize| {
                if let Some(h) = hist.get_mut(rank) {
                    *h += weight_of(first + r);
                }
            };
            row_major_ranks(rows, truth, k, &mut hist, add);
            return hist;
        }
        let first = c * chunk_rows;
        let truth = codes.get(first..end).unwrap_or(&[]);
        column_major_ranks(
            scores.values,
            n,
            first,
            truth,
            k,
            &mut hist,
            |hist, r, rank| {
                if let Some(h) = hist.get_mut(rank) {
                    *h += weight_of(first + r);
                }
            },
        );
        hist
    };
    let chunks = n.div_ceil(chunk_rows);
    let parts: Vec<Vec<f64>> = if pool.parallel_for(n * k) {
        pool.install(|| (0..chunks).into_par_iter().map(part).collect())
    } else {
        (0..chunks).map(part).collect()
    };
    pool.check()?;
    let mut total = vec![0.0_f64; k];
    for p in &parts {
        for (t, v) in total.iter_mut().zip(p) {
            *t += v;
        }
    }
    Ok(total)
}

/// Rows of a tile of [`row_major_ranks`].
const TILE_ROWS: usize = 16;

/// The rank of each row's true class (`truth`, codes below `k` by the shape
/// checks) among the row-major `rows`, handed to `add(hist, row, rank)`
/// row by row. Tiles of [`TILE_ROWS`] rows are keyed in one contiguous pass
/// and then ranked row by row, compiled for the widest vectors this CPU has
/// (a tenth of the time of keying each value as it is compared).
fn row_major_ranks<X: Score, H>(
    rows: &[X],
    truth: &[u32],
    k: usize,
    hist: &mut H,
    add: impl Fn(&mut H, usize, usize),
) {
    let mut ranks = [0_u32; TILE_ROWS];
    let mut keys = vec![0_u64; TILE_ROWS * k];
    for (t, (tile, codes)) in rows
        .chunks(TILE_ROWS * k)
        .zip(truth.chunks(TILE_ROWS))
        .enumerate()
    {
        tile_ranks(tile, codes, k, &mut keys, &mut ranks);
        for (r, &rank) in ranks.iter().take(codes.len()).enumerate() {
            add(hist, t * TILE_ROWS + r, rank as usize);
        }
    }
}

/// Rows of a tile of [`column_major_ranks`].
const COLUMN_TILE_ROWS: usize = 256;

/// [`row_major_ranks`] for a column-major matrix (`values` holds `n` rows, one
/// column after another; `truth` the codes of the rows from `first` on):
/// tiles of [`COLUMN_TILE_ROWS`] rows ranked a column at a time, so that each
/// column's stretch is read in one run and compared in vector lanes (the same
/// comparisons as [`rank_in_row`], so the same ranks).
fn column_major_ranks<X: Score, H>(
    values: &[X],
    n: usize,
    first: usize,
    truth: &[u32],
    k: usize,
    hist: &mut H,
    add: impl Fn(&mut H, usize, usize),
) {
    let mut ranks = [0_u32; COLUMN_TILE_ROWS];
    let mut own = [0_u64; COLUMN_TILE_ROWS];
    for (t, codes) in truth.chunks(COLUMN_TILE_ROWS).enumerate() {
        let lo = first + t * COLUMN_TILE_ROWS;
        column_tile_ranks(values, n, lo, codes, k, &mut own, &mut ranks);
        for (r, &rank) in ranks.iter().take(codes.len()).enumerate() {
            add(hist, t * COLUMN_TILE_ROWS + r, rank as usize);
        }
    }
}

widest! {
    /// The ranks of the column-major tile of rows `lo..lo + codes.len()`
    /// (at most [`COLUMN_TILE_ROWS`]), with the widest vectors this CPU runs.
    fn column_tile_ranks<X: Score>(
        values: &[X],
        n: usize,
        lo: usize,
        codes: &[u32],
        k: usize,
        own: &mut [u64; COLUMN_TILE_ROWS],
        ranks: &mut [u32; COLUMN_TILE_ROWS],
    ) => column_tile_ranks_portable
}

/// The ranks of one column-major tile (as [`column_tile_ranks`]), inlined
/// into each compiled variant so that the loops vectorise for its features.
#[inline(always)]
fn column_tile_ranks_portable<X: Score>(
    values: &[X],
    n: usize,
    lo: usize,
    codes: &[u32],
    k: usize,
    own: &mut [u64; COLUMN_TILE_ROWS],
    ranks: &mut [u32; COLUMN_TILE_ROWS],
) {
    let m = codes.len().min(COLUMN_TILE_ROWS);
    // The true class's key of each row (codes below `k` by the shape checks;
    // a column past the last reads as the last, as `rank_in_row` does).
    for (i, (o, &code)) in own.iter_mut().zip(codes).enumerate() {
        let t = (code as usize).min(k - 1);
        *o = values.get(t * n + lo + i).map_or(0, |x| x.key());
    }
    *ranks = [0; COLUMN_TILE_ROWS];
    for j in 0..k {
        let column = values.get(j * n + lo..j * n + lo + m).unwrap_or(&[]);
        #[allow(clippy::cast_possible_truncation)] // k < 2^32 columns
        let col = j as u32;
        for (((rank, &o), &code), x) in ranks.iter_mut().zip(own.iter()).zip(codes).zip(column) {
            let key = x.key();
            let later = col > code.min(k as u32 - 1);
            *rank += u32::from(key > o) + u32::from((key == o) & later);
        }
    }
}

widest! {
    /// The ranks of one tile (at most [`TILE_ROWS`] rows of `k` scores; `keys`
    /// has room for a whole tile), with the widest vectors this CPU runs.
    fn tile_ranks<X: Score>(
        tile: &[X],
        codes: &[u32],
        k: usize,
        keys: &mut [u64],
        ranks: &mut [u32; TILE_ROWS],
    ) => tile_ranks_portable
}

/// The ranks of one tile (as [`tile_ranks`]), inlined into each compiled
/// variant so that the loops vectorise for its features.
#[inline(always)]
fn tile_ranks_portable<X: Score>(
    tile: &[X],
    codes: &[u32],
    k: usize,
    keys: &mut [u64],
    ranks: &mut [u32; TILE_ROWS],
) {
    // The tile's keys in one contiguous pass (vectorised), then each row's
    // comparisons against its true class's key.
    for (slot, x) in keys.iter_mut().zip(tile) {
        *slot = x.key();
    }
    *ranks = [0; TILE_ROWS];
    for ((row, rank), &code) in keys.chunks_exact(k).zip(ranks.iter_mut()).zip(codes) {
        *rank = rank_in_row(row, code);
    }
}

/// The rank of the true class `code` among one row's keys (`code` below the
/// row's length by the shape checks): the keys above its key, plus the equal
/// keys in later columns.
#[inline(always)]
pub(super) fn rank_in_row<K: Copy + Ord + Default>(row: &[K], code: u32) -> u32 {
    let t = (code as usize).min(row.len().saturating_sub(1));
    let own = row.get(t).copied().unwrap_or_default();
    let mut above = 0_u32;
    for (j, &key) in row.iter().enumerate() {
        above += u32::from(key > own) + u32::from((key == own) & (j > t));
    }
    above
}

/// Count each row's rank of its true class into `hist` (unweighted), for
/// rows of `k` `u32` keys laid end to end in `keys` (any keys that order as
/// the scores and are equal where they are: the packed keys of the
/// one-vs-rest transpose, which counts the ranks in the pass that writes its
/// sort keys). With [`RankLanes`] for `k` (AVX-512, `k <= 16`), sixteen rows
/// at a time ([`count_key_ranks_avx512`]); the rest row by row.
pub(super) fn count_key_ranks(
    keys: &[u32],
    codes: &[u32],
    k: usize,
    hist: &mut [u64],
    lanes: Option<&RankLanes>,
) {
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if let Some(lanes) = lanes.filter(|l| l.k == k) {
        // SAFETY: `RankLanes` exist only on a CPU with AVX-512 F, `k <= 16`.
        done = unsafe { count_key_ranks_avx512(keys, codes, lanes, hist) };
    }
    let _ = lanes;
    let keys = keys.get(done * k..).unwrap_or_default();
    for (row, &code) in keys
        .chunks_exact(k.max(1))
        .zip(codes.get(done..).unwrap_or_default())
    {
        if let Some(h) = hist.get_mut(rank_in_row(row, code) as usize) {
            *h += 1;
        }
    }
}

/// Rows of a group of [`count_key_ranks_avx512`] (the lanes of a vector of `u32`).
const RANK_LANES: usize = 16;

/// For the `k` vectors of a group of sixteen rows of `k` keys: the row and
/// the column of each lane's key. Made once per call of the caller (a tile
/// of rows is too short to make them each time).
pub(super) struct RankLanes {
    k: usize,
    rows: [[u32; RANK_LANES]; RANK_LANES],
    cols: [[u32; RANK_LANES]; RANK_LANES],
}

impl RankLanes {
    /// The lanes for rows of `k` keys, when this CPU has AVX-512 and
    /// `1 <= k <= 16`; `None` otherwise (the row-by-row count serves).
    pub(super) fn new(k: usize) -> Option<Self> {
        if !(crate::cpu::avx512() && (1..=RANK_LANES).contains(&k)) {
            return None;
        }
        let mut rows = [[0_u32; RANK_LANES]; RANK_LANES];
        let mut cols = [[0_u32; RANK_LANES]; RANK_LANES];
        for (v, (row, col)) in rows.iter_mut().zip(cols.iter_mut()).enumerate() {
            for (lane, (r, c)) in row.iter_mut().zip(col.iter_mut()).enumerate() {
                let at = v * RANK_LANES + lane;
                #[allow(clippy::cast_possible_truncation)]
                {
                    (*r, *c) = ((at / k).min(RANK_LANES - 1) as u32, (at % k) as u32);
                }
            }
        }
        Some(Self { k, rows, cols })
    }
}

/// The whole groups of sixteen rows of [`count_key_ranks`]: the rows done.
/// The true class's key of each row is gathered into one vector; each of the
/// group's `k` vectors of keys is compared with it, spread to the lanes of
/// its rows by a permute, giving one bit per key (above the true class's
/// key, or equal to it in a later column). A row's bits are `k` consecutive
/// bits of the group's `16 k`, and its rank is their count.
///
/// # Safety
/// The CPU has AVX-512 F (as every [`RankLanes`] vouches).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn count_key_ranks_avx512(
    keys: &[u32],
    codes: &[u32],
    lanes: &RankLanes,
    hist: &mut [u64],
) -> usize {
    use std::arch::x86_64::{
        __m512i, _mm512_add_epi32, _mm512_cmpeq_epi32_mask, _mm512_cmpgt_epu32_mask,
        _mm512_i32gather_epi32, _mm512_loadu_si512, _mm512_min_epu32, _mm512_mullo_epi32,
        _mm512_permutexvar_epi32, _mm512_set1_epi32, _mm512_setr_epi32,
    };
    let k = lanes.k;
    #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
    let (last, width) = (_mm512_set1_epi32(k as i32 - 1), _mm512_set1_epi32(k as i32));
    let starts = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        width,
    );
    // Four copies of the counts, taken in turn: a run of rows of one rank
    // does not wait on one counter (ranks are below k <= 16).
    let mut counts = [[0_u64; RANK_LANES]; 4];
    let window = (1_u32 << k) - 1;
    let mut done = 0;
    for (group, truth) in keys
        .chunks_exact(RANK_LANES * k)
        .zip(codes.chunks_exact(RANK_LANES))
    {
        // SAFETY: `truth` holds 16 codes.
        let truth = unsafe { _mm512_loadu_si512(truth.as_ptr().cast::<__m512i>()) };
        // Codes are below `k` by the shape checks; clamped all the same, so
        // that every gathered index `r k + code` is inside `group`.
        let truth = _mm512_min_epu32(truth, last);
        // SAFETY: as just said, every index is below `16 k`.
        let own = unsafe {
            _mm512_i32gather_epi32::<4>(_mm512_add_epi32(starts, truth), group.as_ptr().cast())
        };
        // The group's bits, 16 a vector, in 64-bit words (one spare, so that
        // every row's window is read from a pair of words). Words, not bytes:
        // a read spanning several narrower writes just made would wait for
        // them to reach the cache.
        let mut bits = [0_u64; RANK_LANES / 4 + 1];
        for (v, (chunk, (row, col))) in group
            .chunks_exact(RANK_LANES)
            .zip(lanes.rows.iter().zip(&lanes.cols))
            .enumerate()
        {
            // SAFETY: `chunk`, `row` and `col` hold 16 lanes each.
            let (key, row, col) = unsafe {
                (
                    _mm512_loadu_si512(chunk.as_ptr().cast::<__m512i>()),
                    _mm512_loadu_si512(row.as_ptr().cast::<__m512i>()),
                    _mm512_loadu_si512(col.as_ptr().cast::<__m512i>()),
                )
            };
            let own = _mm512_permutexvar_epi32(row, own);
            let code = _mm512_permutexvar_epi32(row, truth);
            let counted = _mm512_cmpgt_epu32_mask(key, own)
                | (_mm512_cmpeq_epi32_mask(key, own) & _mm512_cmpgt_epu32_mask(col, code));
            if let Some(word) = bits.get_mut(v / 4) {
                *word |= u64::from(counted) << (16 * (v % 4));
            }
        }
        for r in 0..RANK_LANES {
            let at = r * k;
            let (low, high) = (
                bits.get(at / 64).copied().unwrap_or(0),
                bits.get(at / 64 + 1).copied().unwrap_or(0),
            );
            let pair = (u128::from(high) << 64) | u128::from(low);
            #[allow(clippy::cast_possible_truncation)]
            let rank = ((pair >> (at % 64)) as u32 & window).count_ones() as usize;
            if let Some(c) = counts.get_mut(r % 4).and_then(|c| c.get_mut(rank)) {
                *c += 1;
            }
        }
        done += RANK_LANES;
    }
    for copy in &counts {
        for (h, &c) in hist.iter_mut().zip(copy) {
            *h += c;
        }
    }
    done
}

/// [`rank_histogram`] of every group of rows at once (rows laid out group by
/// group, `offsets` the `G + 1` starts of the groups), side by side: `G x K`
/// values, group by group.
///
/// # Errors
/// [`MetricError::Shape`] for offsets that do not cover the rows in order; the
/// errors of [`rank_histogram`].
pub fn rank_histogram_groups<X: Score>(
    codes: &[u32],
    scores: Matrix<'_, X>,
    offsets: &[i64],
    weight: Option<&[f64]>,
    pool: &Pool,
) -> Result<Vec<f64>> {
    let n = check_matrix(&scores, Truth::Codes(codes))?;
    if let Some(w) = weight {
        check_weights(w, n, "y_score")?;
    }
    crate::grouping::check_offsets(offsets, n, false)?;
    ensure!(
        !scores.column_major,
        MetricError::Shape {
            arg: "y_score",
            detail: format!("a row-major matrix of {n} rows is needed"),
        }
    );
    let k = scores.n_cols;
    let one = |g: usize| -> Result<Vec<f64>> {
        let lo = usize::try_from(offsets.get(g).copied().unwrap_or(0)).unwrap_or(0);
        let hi = usize::try_from(offsets.get(g + 1).copied().unwrap_or(0)).unwrap_or(0);
        if lo == hi {
            return Ok(vec![0.0; k]);
        }
        let rows = Matrix {
            values: scores.values.get(lo * k..hi * k).unwrap_or(&[]),
            n_cols: k,
            column_major: false,
        };
        rank_histogram(
            codes.get(lo..hi).unwrap_or(&[]),
            rows,
            weight.and_then(|w| w.get(lo..hi)),
            &pool.sequential_like(),
        )
    };
    let groups = offsets.len() - 1;
    let parts: Result<Vec<Vec<f64>>> = if pool.parallel_for(n * k) {
        pool.install(|| (0..groups).into_par_iter().map(one).collect())
    } else {
        (0..groups).map(one).collect()
    };
    Ok(parts?.concat())
}
