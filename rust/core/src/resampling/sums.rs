//! The Poisson bootstrap of sums over rows: every replicate `b` of a sum
//! `S = sum_i v_i` is `S_b = sum_i w_ib v_i`, with `w_ib ~ Poisson(1)` a pure
//! function of `(seed, global row index, b)` ([`crate::random`]).
//!
//! Each row carries `F` values laid in segments; segment `s` of row `i` is added
//! at column `columns_s(i)` of the replicate's output row (a cell of a confusion
//! matrix, a row of the probabilistic confusion matrix, a fixed column for a
//! scalar sum). Replicates are shared among the threads in blocks of four (one
//! Philox block gives four draws) and every replicate adds its rows in row
//! order, so the sums are the same bit for bit whatever the thread count.

use crate::error::{MetricError, Result};
use crate::memory::try_filled;
use crate::parallel::Pool;
use crate::random::row_weights;
use rayon::prelude::*;

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

/// Rows a thread takes at a time (their values stay in cache while every
/// replicate block of the thread reads them).
const TILE: usize = 2048;

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

/// Add `w * values[i]` of the rows of one tile to the output rows of the (up
/// to) four replicates of one Philox block, `quad` (`m x width`): each row's
/// values are read once for the four. A segment at a column per row adds to
/// memory row by row; each value of a fixed segment (one column for every
/// row) is summed in registers over the tile and added once. No branch on the
/// weight: a zero weight adds zeros (cheaper than the mispredicted branch it
/// would take a third of the time). The order of the additions depends on the
/// tile only, never on the thread count.
#[inline(always)]
fn add_tile(
    quad: &mut [f64],
    width: usize,
    weights: &[Vec<u8>; 4],
    values: &[f64],
    n_values: usize,
    start: usize,
    segments: &[Segment<'_>],
) {
    let m = quad.len() / width;
    let len = weights[0].len();
    let rows = &values[start * n_values..(start + len) * n_values];
    let mut at = 0;
    for s in segments {
        match s.columns {
            Columns::PerRow(cols) => {
                let cols = &cols[start..start + len];
                let tile = PerRowTile {
                    quad,
                    width,
                    m,
                    weights,
                    rows,
                    n_values,
                    at,
                    cols,
                };
                // A fixed length unrolls the row's update into a few vector
                // instructions (the usual K of a probability row, and 1 for a cell).
                macro_rules! by_len {
                    ($($l:literal)*) => {
                        match s.len {
                            $($l => tile.add::<$l>(),)*
                            _ => tile.add_any(s.len),
                        }
                    };
                }
                by_len!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
            }
            Columns::Fixed(col) => {
                for c in 0..s.len {
                    let mut acc = [0.0f64; 4];
                    for (t, row) in rows.chunks_exact(n_values).enumerate() {
                        let v = row[at + c];
                        for (a, w) in acc.iter_mut().zip(weights) {
                            *a += f64::from(w[t]) * v;
                        }
                    }
                    for (j, a) in acc.iter().enumerate().take(m) {
                        quad[j * width + col + c] += a;
                    }
                }
            }
        }
        at += s.len;
    }
}

/// The rows of one tile and one segment at a column per row, added to the
/// replicates of one Philox block.
struct PerRowTile<'a, 'b> {
    quad: &'a mut [f64],
    width: usize,
    m: usize,
    weights: &'b [Vec<u8>; 4],
    rows: &'b [f64],
    n_values: usize,
    at: usize,
    cols: &'b [u32],
}

impl PerRowTile<'_, '_> {
    /// Segments of `L` values.
    #[inline(always)]
    fn add<const L: usize>(self) {
        for (t, (row, &col)) in self
            .rows
            .chunks_exact(self.n_values)
            .zip(self.cols)
            .enumerate()
        {
            let Some(part) = row.get(self.at..self.at + L) else {
                return;
            };
            let part: &[f64; L] = part.try_into().unwrap_or(&[0.0; L]);
            for (j, w) in self.weights.iter().enumerate().take(self.m) {
                let w = f64::from(w[t]);
                let base = j * self.width + col as usize;
                if let Some(out) = self.quad.get_mut(base..base + L) {
                    let out: &mut [f64; L] = out.try_into().unwrap_or_else(|_| unreachable!());
                    for (o, &v) in out.iter_mut().zip(part) {
                        *o += w * v;
                    }
                }
            }
        }
    }

    /// Segments of any length.
    #[inline(always)]
    fn add_any(self, len: usize) {
        for (t, (row, &col)) in self
            .rows
            .chunks_exact(self.n_values)
            .zip(self.cols)
            .enumerate()
        {
            let part = &row[self.at..self.at + len];
            for (j, w) in self.weights.iter().enumerate().take(self.m) {
                let w = f64::from(w[t]);
                let base = j * self.width + col as usize;
                for (o, &v) in self.quad[base..base + len].iter_mut().zip(part) {
                    *o += w * v;
                }
            }
        }
    }
}

/// One call's work, shared by the threads: each sums all rows into its own
/// replicates.
struct Job<'a> {
    values: &'a [f64],
    n_values: usize,
    segments: &'a [Segment<'a>],
    rows: RowIds<'a>,
    seed: u64,
    width: usize,
    n: usize,
    per: usize,
}

impl Job<'_> {
    /// The replicates of thread `part` (blocks `part * per ..`), with the
    /// widest vectors this CPU has.
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
        self.run_portable(part, chunk, pool)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
    unsafe fn run_avx512(&self, part: usize, chunk: &mut [f64], pool: &Pool) -> Result<()> {
        self.run_portable(part, chunk, pool)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run_avx2(&self, part: usize, chunk: &mut [f64], pool: &Pool) -> Result<()> {
        self.run_portable(part, chunk, pool)
    }

    /// The loop itself, inlined into each of the above (no multiply-add is
    /// fused, so every path gives the same bits).
    #[inline(always)]
    fn run_portable(&self, part: usize, chunk: &mut [f64], pool: &Pool) -> Result<()> {
        let first_block = part * self.per;
        let mut ids: Vec<u64> = Vec::with_capacity(TILE);
        let mut w: [Vec<u8>; 4] = Default::default();
        for start in (0..self.n).step_by(TILE) {
            pool.check()?;
            let end = (start + TILE).min(self.n);
            ids.clear();
            match self.rows {
                RowIds::From(first) => {
                    ids.extend((start as u64..end as u64).map(|i| first.wrapping_add(i)))
                }
                RowIds::Listed(listed) => ids.extend_from_slice(&listed[start..end]),
            }
            for (local, quad) in chunk.chunks_mut(4 * self.width).enumerate() {
                #[allow(clippy::cast_possible_truncation)]
                let block = (first_block + local) as u32;
                row_weights(self.seed, block, &ids, &mut w);
                add_tile(
                    quad,
                    self.width,
                    &w,
                    self.values,
                    self.n_values,
                    start,
                    self.segments,
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
    let blocks = spec.n_resamples.div_ceil(4);
    if blocks == 0 || spec.width == 0 {
        return Ok(out);
    }
    let threads = pool.threads().clamp(1, blocks);
    // Contiguous ranges of replicate blocks, one per thread.
    let per = blocks.div_ceil(threads);
    let stride = 4 * per * spec.width;
    let job = Job {
        values,
        n_values,
        segments,
        rows,
        seed: spec.seed,
        width: spec.width,
        n,
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
