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

/// Add `w * values[i]` of the rows of one tile to one replicate's output row.
#[inline]
fn add_tile(
    out: &mut [f64],
    weights: &[u8],
    values: &[f64],
    n_values: usize,
    start: usize,
    segments: &[Segment<'_>],
) {
    for (t, &w) in weights.iter().enumerate() {
        if w == 0 {
            continue;
        }
        let w = f64::from(w);
        let i = start + t;
        let row = &values[i * n_values..(i + 1) * n_values];
        let mut at = 0;
        for s in segments {
            let col = match s.columns {
                Columns::Fixed(c) => c,
                Columns::PerRow(cols) => cols[i] as usize,
            };
            for (o, &v) in out[col..col + s.len].iter_mut().zip(&row[at..at + s.len]) {
                *o += w * v;
            }
            at += s.len;
        }
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
    let work = |(part, chunk): (usize, &mut [f64])| -> Result<()> {
        let first_block = part * per;
        let mut ids: Vec<u64> = Vec::with_capacity(TILE);
        let mut w: [Vec<u8>; 4] = Default::default();
        for start in (0..n).step_by(TILE) {
            pool.check()?;
            let end = (start + TILE).min(n);
            ids.clear();
            match rows {
                RowIds::From(first) => {
                    ids.extend((start as u64..end as u64).map(|i| first.wrapping_add(i)))
                }
                RowIds::Listed(listed) => ids.extend_from_slice(&listed[start..end]),
            }
            for (local, quad) in chunk.chunks_mut(4 * spec.width).enumerate() {
                let block = first_block + local;
                row_weights(spec.seed, block as u32, &ids, &mut w);
                for (j, out_row) in quad.chunks_mut(spec.width).enumerate() {
                    add_tile(out_row, &w[j], values, n_values, start, segments);
                }
            }
        }
        Ok(())
    };
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
    use crate::random::{counter_of, key_of, philox4x32_10, poisson1, ROW_WEIGHTS};

    fn weight(seed: u64, row: u64, b: usize) -> f64 {
        let words = philox4x32_10(counter_of(row, (b / 4) as u32, ROW_WEIGHTS), key_of(seed));
        f64::from(poisson1(words[b % 4]))
    }

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
        for threads in [1, 2, 3, 8] {
            let got = replicate_sums(
                &values,
                3,
                &segments,
                RowIds::From(100),
                spec,
                &Pool::new(threads),
            )
            .unwrap();
            assert_eq!(got, want, "{threads} threads");
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
        assert_eq!(listed, want);
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
