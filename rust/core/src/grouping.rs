//! Rows split by group: where each row goes when the rows are laid out group
//! by group, found by one counting pass (no sort).

use rayon::prelude::*;

use crate::ensure;
use crate::error::{MetricError, Result};
use crate::memory::{check_available, try_filled};
use crate::parallel::{big_vec, Pool};

/// Rows per chunk below which one thread does the whole split.
const SEQUENTIAL: usize = 1 << 16;

/// The most groups a split takes (each chunk holds a count per group).
pub const MAX_GROUPS: usize = 1 << 20;

/// Each row's position in the group-by-group order of the rows (stable: the
/// rows of a group keep their order), and where each group's slice starts
/// (`n_groups + 1` offsets, the last one the row count).
///
/// Chunks of rows count their groups in parallel; a prefix over the chunks
/// gives each chunk its first position in every group; each chunk then
/// numbers its rows. The result does not depend on the thread count.
///
/// # Errors
/// [`MetricError::InvalidValue`] for a code at or above `n_groups`, or more
/// than [`MAX_GROUPS`] groups; [`MetricError::Interrupted`].
pub fn group_positions(
    codes: &[u32],
    n_groups: usize,
    pool: &Pool,
) -> Result<(Vec<i64>, Vec<i64>)> {
    if n_groups > MAX_GROUPS {
        return Err(MetricError::InvalidValue {
            arg: "n_groups",
            detail: format!("{n_groups} groups is above the limit of {MAX_GROUPS}"),
        });
    }
    let n = codes.len();
    let threads = if pool.parallel_for(n) && n >= 2 * SEQUENTIAL {
        pool.threads().max(1)
    } else {
        1
    };
    let size = n.div_ceil(threads).max(1);
    // One count per group and thread, then the offsets and starts.
    check_available(
        (n_groups as u128 + 1) * 8 * (2 * threads as u128 + 1),
        "the group counts",
    )?;
    let count = |chunk: &[u32]| -> std::result::Result<Vec<i64>, u32> {
        let mut counts = vec![0_i64; n_groups];
        for &c in chunk {
            match counts.get_mut(c as usize) {
                Some(slot) => *slot += 1,
                None => return Err(c),
            }
        }
        Ok(counts)
    };
    let counted: Vec<std::result::Result<Vec<i64>, u32>> = if threads > 1 {
        pool.install(|| codes.par_chunks(size).map(count).collect())
    } else {
        codes.chunks(size).map(count).collect()
    };
    pool.check()?;
    let mut per_chunk = Vec::with_capacity(counted.len());
    for c in counted {
        match c {
            Ok(v) => per_chunk.push(v),
            Err(code) => {
                return Err(MetricError::InvalidValue {
                    arg: "groups",
                    detail: format!(
                        "group code {code} is not below the number of groups, {n_groups}"
                    ),
                })
            }
        }
    }
    // offsets[g]: the first position of group g; starts[c][g]: chunk c's first position in g.
    let mut offsets = try_filled(n_groups + 1, 0_i64, "the group offsets")?;
    for counts in &per_chunk {
        for (g, &k) in counts.iter().enumerate() {
            if let Some(o) = offsets.get_mut(g + 1) {
                *o += k;
            }
        }
    }
    for g in 0..n_groups {
        let before = offsets.get(g).copied().unwrap_or(0);
        if let Some(o) = offsets.get_mut(g + 1) {
            *o += before;
        }
    }
    let mut running: Vec<i64> = offsets.get(..n_groups).unwrap_or(&[]).to_vec();
    let mut starts = Vec::with_capacity(per_chunk.len());
    for counts in &per_chunk {
        starts.push(running.clone());
        for (r, &k) in running.iter_mut().zip(counts) {
            *r += k;
        }
    }
    let mut positions: Vec<i64> = big_vec(n, "the group positions")?;
    positions.resize(n, 0);
    let number = |(out, (chunk, mut next)): (&mut [i64], (&[u32], Vec<i64>))| {
        if pool.stopped() {
            return;
        }
        for (slot, &c) in out.iter_mut().zip(chunk) {
            if let Some(p) = next.get_mut(c as usize) {
                *slot = *p;
                *p += 1;
            }
        }
    };
    if threads > 1 {
        pool.install(|| {
            positions
                .par_chunks_mut(size)
                .zip(codes.par_chunks(size).zip(starts.into_par_iter()))
                .for_each(number);
        });
    } else {
        positions
            .chunks_mut(size)
            .zip(codes.chunks(size).zip(starts))
            .for_each(number);
    }
    pool.check()?;
    Ok((positions, offsets))
}

/// The `k`-value rows of a matrix laid out at `positions` (row `i` goes to
/// row `positions[i]` of the row-major result), read row-major or, with
/// `column_major`, from `k` columns of `positions.len()` values each. Each row
/// is read in order and written to its group's next slot; columns are read a
/// block of rows at a time and put together into rows first. `positions`
/// must name every row once (a permutation, as [`group_positions`] gives):
/// each is checked as it is used, so the result is written once, never
/// cleared first.
///
/// # Errors
/// [`MetricError::InvalidValue`] for a position outside the rows or named
/// twice, or rows of `values` that are not whole; [`MetricError::Interrupted`].
pub fn scatter_rows<T: Copy + Default + Send + Sync>(
    values: &[T],
    k: usize,
    column_major: bool,
    positions: &[i64],
    pool: &Pool,
) -> Result<Vec<T>> {
    let n = positions.len();
    if k == 0 || values.len() != n * k {
        return Err(MetricError::InvalidValue {
            arg: "positions",
            detail: format!("{} values are not {n} rows of {k}", values.len()),
        });
    }
    let mut out: Vec<T> = big_vec(n * k, "the rows laid out by group")?;
    // The result cut into one range of rows per thread: each reads every position
    // and lays out the rows that land in its range (sequential reads; the writes,
    // the costly part, are shared).
    let parts = if pool.parallel_for(n * k) {
        pool.threads().max(1)
    } else {
        1
    };
    let per = n.div_ceil(parts).max(1);
    let slots = out
        .spare_capacity_mut()
        .get_mut(..n * k)
        .unwrap_or_default();
    let ranges: Vec<(usize, &mut [std::mem::MaybeUninit<T>])> = slots
        .chunks_mut(per * k)
        .enumerate()
        .map(|(t, s)| (t * per, s))
        .collect();
    // One part: the rows it wrote (each checked to be named once), or the first bad position.
    let one = |(first, mine): (usize, &mut [std::mem::MaybeUninit<T>])| -> Result<usize> {
        let end = first + mine.len() / k;
        let mut taken = vec![0_u64; (end - first).div_ceil(64)];
        let mut rows = vec![T::default(); if column_major { k * CHECK_BLOCK } else { 0 }];
        let mut written = 0_usize;
        for (block, at) in positions.chunks(CHECK_BLOCK).enumerate() {
            if block % 16 == 15 && pool.stopped() {
                return Err(MetricError::Interrupted);
            }
            let lo = block * CHECK_BLOCK;
            let src: &[T] = if column_major {
                for j in 0..k {
                    let column = values.get(j * n + lo..j * n + lo + at.len()).unwrap_or(&[]);
                    for (r, &v) in column.iter().enumerate() {
                        if let Some(slot) = rows.get_mut(r * k + j) {
                            *slot = v;
                        }
                    }
                }
                rows.get(..at.len() * k).unwrap_or(&[])
            } else {
                values.get(lo * k..(lo + at.len()) * k).unwrap_or(&[])
            };
            for (row, &p) in src.chunks_exact(k).zip(at) {
                let Some(q) = usize::try_from(p).ok().filter(|&q| q < n) else {
                    return Err(bad_position(p, n));
                };
                if q < first || q >= end {
                    continue; // another part's row
                }
                let (word, bit) = ((q - first) / 64, 1_u64 << ((q - first) % 64));
                let fresh = taken.get(word).is_some_and(|w| w & bit == 0);
                let dst = mine.get_mut((q - first) * k..(q - first + 1) * k);
                match (fresh, dst, taken.get_mut(word)) {
                    (true, Some(dst), Some(w)) => {
                        *w |= bit;
                        // SAFETY: MaybeUninit<T> has the layout of T; the row is read as such.
                        let row = unsafe {
                            std::slice::from_raw_parts(
                                row.as_ptr().cast::<std::mem::MaybeUninit<T>>(),
                                row.len(),
                            )
                        };
                        dst.copy_from_slice(row);
                        written += 1;
                    }
                    _ => return Err(bad_position(p, n)),
                }
            }
        }
        Ok(written)
    };
    let wanted: Vec<usize> = ranges.iter().map(|(_, s)| s.len() / k).collect();
    let done: Vec<Result<usize>> = if parts > 1 {
        pool.install(|| ranges.into_par_iter().map(one).collect())
    } else {
        ranges.into_iter().map(one).collect()
    };
    pool.check()?;
    let mut written = 0;
    for (got, want) in done.into_iter().zip(wanted) {
        let got = got?;
        ensure!(
            got == want,
            MetricError::InvalidValue {
                arg: "positions",
                detail: format!("{got} of the {want} rows of a part were laid out; pass each row's own position once"),
            }
        );
        written += got;
    }
    ensure!(
        written == n && out.capacity() >= n * k,
        MetricError::InvalidValue {
            arg: "positions",
            detail: format!("{written} of the {n} rows were laid out"),
        }
    );
    // SAFETY: n rows were written, each at a distinct row below n (each part
    // checked its rows with `taken`, and the parts' rows are disjoint), k values
    // each: all n * k values of the capacity are written.
    unsafe { out.set_len(n * k) };
    Ok(out)
}

/// The error of a position outside the rows or named twice.
fn bad_position(p: i64, n: usize) -> MetricError {
    MetricError::InvalidValue {
        arg: "positions",
        detail: format!(
            "position {p} is not a row of the {n}, or names a row named before; pass each row's own \
             position once"
        ),
    }
}

/// Check that `offsets` (`G + 1` row numbers, the starts of the groups of a
/// layout group by group) rise from 0 to `n`; with `strict`, every group has
/// a row.
///
/// # Errors
/// [`MetricError::Shape`] naming `offsets`.
pub fn check_offsets(offsets: &[i64], n: usize, strict: bool) -> Result<()> {
    let rising = offsets.windows(2).all(|w| {
        if strict {
            w.first() < w.get(1)
        } else {
            w.first() <= w.get(1)
        }
    });
    if offsets.first() == Some(&0) && offsets.last().copied() == i64::try_from(n).ok() && rising {
        return Ok(());
    }
    let how = if strict { "rise strictly" } else { "rise" };
    Err(MetricError::Shape {
        arg: "offsets",
        detail: format!("the group offsets must {how} from 0 to the {n} rows"),
    })
}

/// Rows scattered between two checks of the stop flag, times 16.
const CHECK_BLOCK: usize = 1 << 14;

#[cfg(test)]
mod tests {
    use super::*;

    /// The positions a stable sort by code gives, the naive way.
    fn naive(codes: &[u32], n_groups: usize) -> (Vec<i64>, Vec<i64>) {
        let mut order: Vec<usize> = (0..codes.len()).collect();
        order.sort_by_key(|&i| codes[i]);
        let mut pos = vec![0_i64; codes.len()];
        for (p, &i) in order.iter().enumerate() {
            pos[i] = p as i64;
        }
        let mut offsets = vec![0_i64; n_groups + 1];
        for &c in codes {
            offsets[c as usize + 1] += 1;
        }
        for g in 0..n_groups {
            offsets[g + 1] += offsets[g];
        }
        (pos, offsets)
    }

    #[test]
    fn matches_a_stable_sort_on_any_thread_count() {
        let mut x = 12_345_u64;
        for &(n, g) in &[
            (0_usize, 1_usize),
            (1, 1),
            (7, 3),
            (1000, 1),
            (300_000, 100),
            (200_001, 7),
        ] {
            let codes: Vec<u32> = (0..n)
                .map(|_| {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    ((x >> 33) % g as u64) as u32
                })
                .collect();
            let want = naive(&codes, g);
            for threads in [1, 2, 3] {
                let got = group_positions(&codes, g, &Pool::new(threads)).unwrap();
                assert_eq!(got, want, "n={n} groups={g} threads={threads}");
            }
        }
    }

    #[test]
    fn scatter_across_blocks_in_both_orders() {
        let (n, k) = (3 * CHECK_BLOCK + 17, 4);
        let codes: Vec<u32> = (0..n).map(|i| ((i * 7919) % 13) as u32).collect();
        let (pos, _) = group_positions(&codes, 13, &Pool::new(2)).unwrap();
        let rows: Vec<f64> = (0..n * k).map(|v| v as f64).collect();
        let columns: Vec<f64> = (0..k)
            .flat_map(|j| (0..n).map(move |i| (i * k + j) as f64))
            .collect();
        let a = scatter_rows(&rows, k, false, &pos, &Pool::new(1)).unwrap();
        let b = scatter_rows(&columns, k, true, &pos, &Pool::new(1)).unwrap();
        assert_eq!(a, b);
        for (i, &p) in pos.iter().enumerate() {
            let p = p as usize;
            assert_eq!(&a[p * k..p * k + k], &rows[i * k..i * k + k]);
        }
    }

    #[test]
    fn refuses_too_many_groups_before_allocating() {
        let err = group_positions(&[0], MAX_GROUPS + 1, &Pool::new(1)).unwrap_err();
        assert!(err.to_string().contains("above the limit"), "{err}");
    }

    #[test]
    fn scatter_puts_each_row_at_its_position() {
        let values: Vec<f32> = (0..12).map(|v| v as f32).collect();
        let pool = Pool::new(1);
        let out = scatter_rows(&values, 3, false, &[2, 0, 3, 1], &pool).unwrap();
        assert_eq!(
            out,
            vec![3.0, 4.0, 5.0, 9.0, 10.0, 11.0, 0.0, 1.0, 2.0, 6.0, 7.0, 8.0]
        );
        // The same matrix stored column by column.
        let columns: Vec<f32> = (0..3)
            .flat_map(|j| (0..4).map(move |i| (i * 3 + j) as f32))
            .collect();
        assert_eq!(
            scatter_rows(&columns, 3, true, &[2, 0, 3, 1], &pool).unwrap(),
            out
        );
        assert!(scatter_rows(&values, 3, false, &[2, 0, 4, 1], &pool).is_err());
        assert!(scatter_rows(&values, 3, false, &[2, 0, 2, 1], &pool).is_err());
        assert!(scatter_rows(&columns, 3, true, &[3, 3, 0, 1], &pool).is_err());
        assert!(scatter_rows(&values, 3, false, &[2, 0, -1, 1], &pool).is_err());
        assert!(scatter_rows(&values, 5, false, &[0, 1], &pool).is_err());
    }

    #[test]
    fn scatter_in_parts_is_the_naive_layout() {
        // A permutation (a multiplicative step), 3 parts, both memory orders, across blocks.
        let (n, k) = (3 * CHECK_BLOCK + 17, 3);
        let positions: Vec<i64> = (0..n).map(|i| ((i * 7919) % n) as i64).collect();
        let values: Vec<f64> = (0..n * k).map(|v| v as f64).collect();
        let columns: Vec<f64> = (0..k)
            .flat_map(|j| (0..n).map(move |i| (i * k + j) as f64))
            .collect();
        let mut want = vec![0.0; n * k];
        for (i, &p) in positions.iter().enumerate() {
            let p = p as usize;
            want[p * k..p * k + k].copy_from_slice(&values[i * k..i * k + k]);
        }
        for pool in [Pool::new(1), Pool::new(3).with_min_parallel(1)] {
            assert_eq!(
                scatter_rows(&values, k, false, &positions, &pool).unwrap(),
                want
            );
            assert_eq!(
                scatter_rows(&columns, k, true, &positions, &pool).unwrap(),
                want
            );
            let mut twice = positions.clone();
            twice[n - 1] = twice[0];
            assert!(scatter_rows(&values, k, false, &twice, &pool).is_err());
        }
    }

    #[test]
    fn refuses_a_code_out_of_range() {
        let err = group_positions(&[0, 3, 1], 3, &Pool::new(1)).unwrap_err();
        assert!(err.to_string().contains("group code 3"), "{err}");
    }
}
