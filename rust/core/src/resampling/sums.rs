//! The Poisson bootstrap of sums over rows: every replicate `b` of a sum
//! `S = sum_i v_i` is `S_b = sum_i w_ib v_i`, with `w_ib ~ Poisson(1)` a pure
//! function of `(seed, global row index, b)` ([`crate::random`]).
//!
//! Each row carries `F` values laid in segments; segment `s` of row `i` is added
//! at column `columns_s(i)` of the replicate's output row (a cell of a confusion
//! matrix, a row of the probabilistic confusion matrix, a fixed column for a
//! scalar sum). The rows are first put in groups that send every value to the
//! same columns; within a group the sums of sixteen replicates are a small
//! matrix product held in registers. Replicates are shared among the threads
//! sixteen at a time (two Philox blocks per row) and every replicate adds its
//! rows in the same order, so the sums are the same bit for bit whatever the
//! thread count.

use crate::error::{MetricError, Result};
use crate::memory::try_filled;
use crate::parallel::Pool;
use crate::random::{row_weights16, REPLICATES_PER_DRAW};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// Where one segment of every row's values goes.
#[derive(Clone, Copy, Debug)]
pub enum Columns<'a> {
    /// The same first column for every row.
    Fixed(usize),
    /// The first column of each row.
    PerRow(&'a [u32]),
}

/// `len` consecutive values of each row, added at `columns`.
#[derive(Clone, Copy, Debug)]
pub struct Segment<'a> {
    /// How many values the segment holds.
    pub len: usize,
    /// Where they go.
    pub columns: Columns<'a>,
}

/// The global indices of the rows: consecutive from a first one, or listed.
#[derive(Clone, Copy, Debug)]
pub enum RowIds<'a> {
    /// Rows `first, first + 1, ...`.
    From(u64),
    /// The index of each row.
    Listed(&'a [u64]),
}

/// What to resample.
#[derive(Clone, Copy, Debug)]
pub struct Replicates {
    /// The seed of the stream.
    pub seed: u64,
    /// How many replicates.
    pub n_resamples: usize,
    /// The width of a replicate's output row.
    pub width: usize,
}

/// Rows of one group a thread takes at a time: their values (`TILE x F`) and
/// weights stay in cache while every replicate group of the thread reads them.
const TILE: usize = 512;

/// Replicates drawn and summed together (two Philox blocks per row).
const R: usize = REPLICATES_PER_DRAW;

fn check_segments(n: usize, n_values: usize, segments: &[Segment<'_>], width: usize) -> Result<()> {
    let total: usize = segments.iter().map(|s| s.len).sum();
    if total != n_values {
        return Err(MetricError::Shape {
            arg: "segments",
            detail: format!("the segments hold {total} values but each row has {n_values}"),
        });
    }
    for s in segments {
        let bad = match s.columns {
            Columns::Fixed(c) => c.checked_add(s.len).is_none_or(|end| end > width),
            Columns::PerRow(cols) => {
                cols.len() != n || cols.iter().any(|&c| (c as usize) + s.len > width)
            }
        };
        if bad {
            return Err(MetricError::Shape {
                arg: "segments",
                detail: format!(
                    "a segment of {} values falls outside the {width} columns of a replicate (or has one column \
                     per row for another number of rows)",
                    s.len
                ),
            });
        }
    }
    Ok(())
}

/// The rows in groups that send every value to the same columns: rows with
/// the same column in every segment at a column per row. Within a group a
/// replicate's sums are a small matrix product (replicates x rows times rows
/// x values), run in registers.
struct Groups {
    /// The rows, group by group (each group in row order).
    order: Vec<usize>,
    /// `(first, end, group)`: runs of `order` of at most `TILE` rows in one group.
    tiles: Vec<(usize, usize, usize)>,
    /// The output column of each value of each group (`groups x n_values`).
    columns: Vec<usize>,
}

/// Above this many `(group, column)` pairs the groups are found by hashing
/// rather than by a table.
const TABLE_CELLS: usize = 1 << 22;

fn group_rows(n: usize, n_values: usize, segments: &[Segment<'_>], width: usize) -> Result<Groups> {
    // The group of each row, numbered in order of first appearance, refined
    // one segment at a time.
    let mut group = try_filled(n, 0u32, "the bootstrap's row groups")?;
    let mut count = 1usize;
    for s in segments {
        let Columns::PerRow(cols) = s.columns else {
            continue;
        };
        let side = width.max(1);
        let mut next = 0u32;
        if count.saturating_mul(side) <= TABLE_CELLS {
            let mut table = vec![u32::MAX; count * side];
            for (g, &c) in group.iter_mut().zip(cols) {
                let slot = &mut table[*g as usize * side + c as usize];
                if *slot == u32::MAX {
                    *slot = next;
                    next += 1;
                }
                *g = *slot;
            }
        } else {
            let mut seen: FxHashMap<(u32, u32), u32> = FxHashMap::default();
            for (g, &c) in group.iter_mut().zip(cols) {
                *g = *seen.entry((*g, c)).or_insert_with(|| {
                    next += 1;
                    next - 1
                });
            }
        }
        count = next.max(1) as usize;
    }
    // A stable counting sort of the rows by group.
    let mut starts = vec![0usize; count + 1];
    for &g in &group {
        starts[g as usize + 1] += 1;
    }
    for g in 0..count {
        starts[g + 1] += starts[g];
    }
    let mut order = try_filled(n, 0usize, "the bootstrap's row order")?;
    let mut at = starts.clone();
    for (i, &g) in group.iter().enumerate() {
        order[at[g as usize]] = i;
        at[g as usize] += 1;
    }
    let mut columns = Vec::with_capacity(count * n_values);
    let mut tiles = Vec::new();
    for g in 0..count {
        let (lo, hi) = (starts[g], starts[g + 1]);
        let first = order.get(lo).copied().unwrap_or(0);
        for s in segments {
            let base = match s.columns {
                Columns::Fixed(c) => c,
                Columns::PerRow(cols) => cols.get(first).map_or(0, |&c| c as usize),
            };
            columns.extend(base..base + s.len);
        }
        tiles.extend((lo..hi).step_by(TILE).map(|t| (t, (t + TILE).min(hi), g)));
    }
    Ok(Groups {
        order,
        tiles,
        columns,
    })
}

/// `sum_t w[t][r] * values[t][c0 + c]` for the `C` values from `c0` and the
/// sixteen replicates of one group (the caller adds them at `columns[c]` of
/// replicate `r`'s row): the `C x 16` sums stay in registers over the tile's
/// rows. The portable kernel: a multiply then an add; the x86 kernels
/// (`x86.rs`) fuse them (one rounding instead of two),
/// in the same order, so the instruction sets agree to rounding and each gives
/// the same bits on every thread count.
#[inline(always)]
fn add_chunk<const C: usize>(
    weights: &[[u8; R]],
    values: &[f64],
    n_values: usize,
    c0: usize,
) -> [[f64; R]; C] {
    let mut acc = [[0.0f64; R]; C];
    for (w, row) in weights.iter().zip(values.chunks_exact(n_values)) {
        let w = w.map(f64::from);
        let v: [f64; C] = std::array::from_fn(|c| row[c0 + c]);
        for c in 0..C {
            for r in 0..R {
                acc[c][r] += w[r] * v[c];
            }
        }
    }
    acc
}

/// Add a chunk's sums to the replicates' output rows.
#[inline(always)]
fn flush<const C: usize>(
    out: &mut [f64],
    width: usize,
    m: usize,
    acc: &[[f64; R]; C],
    columns: &[usize],
) {
    for (a, &col) in acc.iter().zip(columns) {
        for (r, &a) in a.iter().enumerate().take(m) {
            out[r * width + col] += a;
        }
    }
}

/// The chunk kernels written with the vector registers of each x86-64 level.
#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(target_arch = "x86_64")]
use x86::{add_chunk_avx512, add_tile_avx2};

/// Which chunk kernel a thread runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Isa {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

/// All values of one tile into the replicates of one group, as many values at
/// a time as the registers of the instruction set hold sums for.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn add_tile(
    out: &mut [f64],
    width: usize,
    m: usize,
    weights: &[[u8; R]],
    values: &[f64],
    n_values: usize,
    columns: &[usize],
    isa: Isa,
    scratch: &mut (Vec<[f64; R]>, Vec<[f64; R]>),
) {
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx2 {
        let (wide, acc) = scratch;
        // SAFETY: `Isa::Avx2` is chosen from the features the CPU reports.
        unsafe { add_tile_avx2(weights, values, n_values, wide, acc) };
        for (c, a) in acc.iter().enumerate() {
            flush(out, width, m, &[*a], &columns[c..=c]);
        }
        return;
    }
    // How many values' sums of sixteen replicates the registers hold.
    let at_once = if isa == Isa::Portable { 2 } else { 14 };
    let mut c0 = 0;
    while c0 < n_values {
        let c = (n_values - c0).min(at_once);
        macro_rules! by_len {
            ($kernel:ident, $($l:literal)*) => {
                match c {
                    $($l => {
                        let acc = $kernel::<$l>(weights, values, n_values, c0);
                        flush(out, width, m, &acc, &columns[c0..c0 + $l]);
                    })*
                    _ => unreachable!(),
                }
            };
        }
        match isa {
            // SAFETY: `Isa` is chosen from the features the CPU reports.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { by_len!(add_chunk_avx512, 1 2 3 4 5 6 7 8 9 10 11 12 13 14) },
            // The portable loop (AVX2 tiles returned above).
            _ => by_len!(add_chunk, 1 2),
        }
        c0 += c;
    }
}

/// The weights of sixteen replicates of `rows`, with the instruction set's
/// registers (the same draws on every one).
#[inline(always)]
pub(super) fn draw16(isa: Isa, seed: u64, group: u32, rows: &[u64], out: &mut Vec<[u8; R]>) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx512` is chosen only on CPUs with AVX-512.
        Isa::Avx512 => unsafe { crate::random::x86::row_weights16(seed, group, rows, out) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` is chosen only on CPUs with AVX2.
        Isa::Avx2 => unsafe { crate::random::avx2::row_weights16(seed, group, rows, out) },
        Isa::Portable => row_weights16(seed, group, rows, out),
    }
}

/// One call's work, shared by the threads: each sums all rows into its own
/// replicates.
struct Job<'a> {
    values: &'a [f64],
    n_values: usize,
    groups: &'a Groups,
    rows: RowIds<'a>,
    seed: u64,
    width: usize,
    n_resamples: usize,
    per: usize,
}

impl Job<'_> {
    /// The replicates of thread `part` (replicate groups `part * per ..`),
    /// with the widest vectors this CPU has.
    fn run(&self, part: usize, chunk: &mut [f64], pool: &Pool) -> Result<()> {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512dq")
            {
                // SAFETY: the CPU has the features `run_avx512` is compiled for.
                return unsafe { self.run_avx512(part, chunk, pool) };
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                // SAFETY: the CPU has the features `run_avx2` is compiled for.
                return unsafe { self.run_avx2(part, chunk, pool) };
            }
        }
        self.run_portable(part, chunk, pool, Isa::Portable)
    }

    /// 32 registers of eight sums: 14 values x 16 replicates in 28 of them.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
    unsafe fn run_avx512(&self, part: usize, chunk: &mut [f64], pool: &Pool) -> Result<()> {
        self.run_portable(part, chunk, pool, Isa::Avx512)
    }

    /// 16 registers of four sums: 2 values x 16 replicates in 8 of them.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run_avx2(&self, part: usize, chunk: &mut [f64], pool: &Pool) -> Result<()> {
        self.run_portable(part, chunk, pool, Isa::Avx2)
    }

    /// The loop itself, inlined into each of the above. The order of the
    /// additions depends on the groups and tiles only, never on the thread
    /// count or the instruction set.
    #[inline(always)]
    fn run_portable(&self, part: usize, chunk: &mut [f64], pool: &Pool, isa: Isa) -> Result<()> {
        let f = self.n_values;
        let first = part * self.per;
        let mut ids: Vec<u64> = Vec::with_capacity(TILE);
        let mut values: Vec<f64> = Vec::with_capacity(TILE * f);
        let mut drawn: Vec<[u8; R]> = Vec::with_capacity(TILE);
        let mut scratch = (Vec::new(), Vec::new());
        for &(lo, hi, g) in &self.groups.tiles {
            pool.check()?;
            ids.clear();
            values.clear();
            for &i in &self.groups.order[lo..hi] {
                ids.push(match self.rows {
                    RowIds::From(first_row) => first_row.wrapping_add(i as u64),
                    RowIds::Listed(listed) => listed[i],
                });
                values.extend_from_slice(&self.values[i * f..(i + 1) * f]);
            }
            let columns = &self.groups.columns[g * f..(g + 1) * f];
            for (local, out) in chunk.chunks_mut(R * self.width).enumerate() {
                let replicate_group = first + local;
                let m = (self.n_resamples - R * replicate_group).min(R);
                #[allow(clippy::cast_possible_truncation)]
                draw16(isa, self.seed, replicate_group as u32, &ids, &mut drawn);
                add_tile(
                    out,
                    self.width,
                    m,
                    &drawn,
                    &values,
                    f,
                    columns,
                    isa,
                    &mut scratch,
                );
            }
        }
        Ok(())
    }
}

/// The `n_resamples x width` replicate sums (row-major) of `values`
/// (`n x n_values`, row-major).
pub fn replicate_sums(
    values: &[f64],
    n_values: usize,
    segments: &[Segment<'_>],
    rows: RowIds<'_>,
    spec: Replicates,
    pool: &Pool,
) -> Result<Vec<f64>> {
    let n = values.len().checked_div(n_values).unwrap_or(0);
    if n * n_values != values.len() {
        return Err(MetricError::Shape {
            arg: "values",
            detail: format!("{} values do not make rows of {n_values}", values.len()),
        });
    }
    if let RowIds::Listed(ids) = rows {
        if ids.len() != n {
            return Err(MetricError::Shape {
                arg: "rows",
                detail: format!("{} row indices for {n} rows", ids.len()),
            });
        }
    }
    check_segments(n, n_values, segments, spec.width)?;
    let cells = spec
        .n_resamples
        .checked_mul(spec.width)
        .ok_or_else(|| MetricError::Shape {
            arg: "n_resamples",
            detail: "n_resamples x width overflows".into(),
        })?;
    let mut out = try_filled(cells, 0.0f64, "the bootstrap replicates")?;
    let replicate_groups = spec.n_resamples.div_ceil(R);
    if replicate_groups == 0 || spec.width == 0 || n == 0 {
        return Ok(out);
    }
    let groups = group_rows(n, n_values, segments, spec.width)?;
    let threads = pool.threads().clamp(1, replicate_groups);
    // Contiguous ranges of replicate groups, one per thread.
    let per = replicate_groups.div_ceil(threads);
    let stride = R * per * spec.width;
    let job = Job {
        values,
        n_values,
        groups: &groups,
        rows,
        seed: spec.seed,
        width: spec.width,
        n_resamples: spec.n_resamples,
        per,
    };
    let work = |(part, chunk): (usize, &mut [f64])| -> Result<()> { job.run(part, chunk, pool) };
    if threads == 1 {
        work((0, &mut out[..]))?;
    } else {
        pool.install(|| out.par_chunks_mut(stride).enumerate().try_for_each(work))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::weight_of as weight;

    #[test]
    fn sums_equal_a_plain_loop_whatever_the_threads() {
        let n = 5000;
        let values: Vec<f64> = (0..n * 3)
            .map(|i| ((i * 7919) % 101) as f64 / 10.0)
            .collect();
        let cols: Vec<u32> = (0..n).map(|i| ((i * 31) % 4) as u32).collect();
        let segments = [
            Segment {
                len: 2,
                columns: Columns::PerRow(&cols),
            },
            Segment {
                len: 1,
                columns: Columns::Fixed(5),
            },
        ];
        let spec = Replicates {
            seed: 9,
            n_resamples: 13,
            width: 6,
        };
        let mut want = vec![0.0; 13 * 6];
        for b in 0..13 {
            for i in 0..n {
                let w = weight(9, 100 + i as u64, b);
                let c = cols[i] as usize;
                want[b * 6 + c] += w * values[i * 3];
                want[b * 6 + c + 1] += w * values[i * 3 + 1];
                want[b * 6 + 5] += w * values[i * 3 + 2];
            }
        }
        // The fixed column is summed tile by tile: equal to rounding, and the
        // same bits on every thread count.
        let one = replicate_sums(
            &values,
            3,
            &segments,
            RowIds::From(100),
            spec,
            &Pool::sequential(),
        )
        .unwrap();
        for (a, b) in one.iter().zip(&want) {
            assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} against {b}");
        }
        for threads in [2, 3, 8] {
            let got = replicate_sums(
                &values,
                3,
                &segments,
                RowIds::From(100),
                spec,
                &Pool::new(threads),
            )
            .unwrap();
            assert_eq!(got, one, "{threads} threads");
        }
        let ids: Vec<u64> = (100..100 + n as u64).collect();
        let listed = replicate_sums(
            &values,
            3,
            &segments,
            RowIds::Listed(&ids),
            spec,
            &Pool::new(2),
        )
        .unwrap();
        assert_eq!(listed, one);
    }

    #[test]
    fn segments_outside_the_output_are_refused() {
        let cols = [0u32, 9];
        let segments = [Segment {
            len: 1,
            columns: Columns::PerRow(&cols),
        }];
        let spec = Replicates {
            seed: 0,
            n_resamples: 4,
            width: 4,
        };
        assert!(replicate_sums(
            &[1.0, 2.0],
            1,
            &segments,
            RowIds::From(0),
            spec,
            &Pool::sequential()
        )
        .is_err());
        let fixed = [Segment {
            len: 2,
            columns: Columns::Fixed(3),
        }];
        assert!(replicate_sums(
            &[1.0, 2.0],
            2,
            &fixed,
            RowIds::From(0),
            spec,
            &Pool::sequential()
        )
        .is_err());
    }
}
