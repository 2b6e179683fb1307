//! A tile's keys (rows of `k` packed keys, row-major) read out a column at a
//! time into each requested column's output: the transpose's second half.
//!
//! With AVX-512 and at most 16 columns, sixteen rows are `k` vectors of keys,
//! and a column of those sixteen rows is put together by one masked permute
//! from each vector that holds some of it (lane `r` takes key `r k + col`:
//! element `(r k + col) mod 16` of vector `(r k + col) / 16`); the plan of
//! lanes and masks is made once per call. Elsewhere a plain strided copy.

use std::mem::MaybeUninit;

use super::super::top_k::rank_in_row;

/// Rows read out together (the lanes of a vector of `u32`).
const LANES: usize = 16;

/// The lanes and masks of each requested column's permutes.
pub(super) struct Plan {
    k: usize,
    /// Per requested column: lane `r` reads element `(r k + col) mod 16`.
    lanes: Vec<[u32; LANES]>,
    /// Per requested column, per source vector `v < k`: the lanes it fills.
    masks: Vec<[u16; LANES]>,
}

impl Plan {
    /// The plan for `columns` of a `k`-column tile, when this CPU has
    /// AVX-512 and `k <= 16`; `None` otherwise (the strided copy serves).
    pub(super) fn new(k: usize, columns: &[usize]) -> Option<Self> {
        if !(crate::cpu::avx512() && (1..=LANES).contains(&k)) {
            return None;
        }
        let mut lanes = Vec::with_capacity(columns.len());
        let mut masks = Vec::with_capacity(columns.len());
        for &col in columns {
            let (mut lane, mut mask) = ([0_u32; LANES], [0_u16; LANES]);
            for (r, slot) in lane.iter_mut().enumerate() {
                let at = r * k + col;
                #[allow(clippy::cast_possible_truncation)]
                {
                    *slot = (at % LANES) as u32;
                }
                if let Some(m) = mask.get_mut(at / LANES) {
                    *m |= 1 << r;
                }
            }
            lanes.push(lane);
            masks.push(mask);
        }
        Some(Self { k, lanes, masks })
    }
}

/// Copy column `columns[i]` of the `rows` rows of `keys` (`rows x k`,
/// row-major) into `outs[i][at..at + rows]`; false when a copied key is
/// `missing` (the scores' check failed).
pub(super) fn read_columns(
    keys: &[u32],
    k: usize,
    columns: &[usize],
    outs: &mut [&mut [MaybeUninit<u32>]],
    at: usize,
    missing: u32,
    plan: Option<&Plan>,
) -> bool {
    let rows = keys.len().checked_div(k).unwrap_or(0);
    let mut ok = true;
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if let Some(plan) = plan.filter(|p| p.k == k && p.lanes.len() == columns.len()) {
        // SAFETY: a plan exists only on a CPU with AVX-512 (`Plan::new`).
        let (wide_ok, wide_rows) =
            unsafe { read_columns_avx512::<false>(keys, plan, outs, at, missing, &[], &mut []) };
        ok &= wide_ok;
        done = wide_rows;
    }
    let _ = plan;
    let rest = keys.get(done * k..).unwrap_or_default();
    ok & copy_strided(
        rest,
        k,
        columns.iter().copied(),
        outs,
        at + done..at + rows,
        missing,
    )
}

/// The strided copy of [`read_columns`]: column `col` of the rows of `keys`
/// (rows of `k` keys) into `outs[i][range]`, for the `i`-th of `columns`;
/// false when a copied key is `missing`.
fn copy_strided(
    keys: &[u32],
    k: usize,
    columns: impl Iterator<Item = usize>,
    outs: &mut [&mut [MaybeUninit<u32>]],
    range: std::ops::Range<usize>,
    missing: u32,
) -> bool {
    let mut ok = true;
    for (out, col) in outs.iter_mut().zip(columns) {
        let dst = out.get_mut(range.clone()).unwrap_or_default();
        let src = keys.get(col..).unwrap_or_default().iter().step_by(k);
        for (slot, &key) in dst.iter_mut().zip(src) {
            ok &= key != missing;
            slot.write(key);
        }
    }
    ok
}

/// [`read_columns`] of every column of the tile, in order (`outs[c]` takes
/// column `c`), by masked permutes (`plan`, made for those columns), that
/// also counts each row's rank of its true class (`codes`, one per row) into
/// `hist` from the columns it puts together: the keys above the true
/// class's, plus the equal ones in later columns, the outcome bit (set on
/// the true class's key alone) left out of the comparison. The rows short
/// of a group of sixteen are copied and ranked one by one.
#[allow(clippy::too_many_arguments)]
pub(super) fn read_columns_ranked(
    keys: &[u32],
    k: usize,
    outs: &mut [&mut [MaybeUninit<u32>]],
    at: usize,
    missing: u32,
    plan: &Plan,
    codes: &[u32],
    hist: &mut [u64],
) -> bool {
    let rows = keys.len().checked_div(k).unwrap_or(0);
    let mut ok = true;
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if plan.k == k && plan.lanes.len() == k && outs.len() == k && codes.len() >= rows {
        // SAFETY: a plan exists only on a CPU with AVX-512 (`Plan::new`).
        let (wide_ok, wide_rows) =
            unsafe { read_columns_avx512::<true>(keys, plan, outs, at, missing, codes, hist) };
        ok &= wide_ok;
        done = wide_rows;
    }
    let _ = plan;
    let rest = keys.get(done * k..).unwrap_or_default();
    ok &= copy_strided(rest, k, 0..k, outs, at + done..at + rows, missing);
    // At most 16 columns (the plan's); the outcome bit set on every key.
    let mut row_keys = [0_u32; LANES];
    for (row, &code) in rest
        .chunks_exact(k.max(1))
        .zip(codes.get(done..).unwrap_or_default())
    {
        for (x, &key) in row_keys.iter_mut().zip(row) {
            *x = key | 1;
        }
        let row_keys = row_keys.get(..row.len()).unwrap_or_default();
        if let Some(h) = hist.get_mut(rank_in_row(row_keys, code) as usize) {
            *h += 1;
        }
    }
    ok
}

/// The whole groups of sixteen rows of [`read_columns`] by masked permutes:
/// whether no copied key was `missing`, and the rows done.
///
/// # Safety
/// The CPU has AVX-512 F (as every [`Plan`] vouches).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn read_columns_avx512<const RANKS: bool>(
    keys: &[u32],
    plan: &Plan,
    outs: &mut [&mut [MaybeUninit<u32>]],
    at: usize,
    missing: u32,
    codes: &[u32],
    hist: &mut [u64],
) -> (bool, usize) {
    use std::arch::x86_64::{
        __m512i, _mm512_cmpeq_epi32_mask, _mm512_cmpgt_epu32_mask, _mm512_cmplt_epu32_mask,
        _mm512_loadu_si512, _mm512_mask_add_epi32, _mm512_mask_mov_epi32,
        _mm512_mask_permutexvar_epi32, _mm512_min_epu32, _mm512_or_si512, _mm512_set1_epi32,
        _mm512_setzero_si512, _mm512_storeu_si512,
    };
    let k = plan.k;
    // With `RANKS`: every column's vector of the group, in column order.
    let mut columns = [_mm512_setzero_si512(); LANES];
    let one = _mm512_set1_epi32(1);
    #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
    let last = _mm512_set1_epi32(k.saturating_sub(1) as i32);
    #[allow(clippy::cast_possible_wrap)]
    let missing = _mm512_set1_epi32(missing as i32);
    let mut bad = 0_u16;
    let mut done = 0;
    // The groups every output has room for (the rest go to the strided copy).
    let room = outs
        .iter()
        .map(|o| o.len().saturating_sub(at))
        .min()
        .unwrap_or(0);
    let groups = if RANKS {
        (room / LANES).min(codes.len() / LANES)
    } else {
        room / LANES
    };
    for group in keys.chunks_exact(LANES * k).take(groups) {
        let mut vectors = [_mm512_setzero_si512(); LANES];
        for (v, chunk) in vectors.iter_mut().zip(group.chunks_exact(LANES)) {
            // SAFETY: `chunk` holds 16 keys.
            *v = unsafe { _mm512_loadu_si512(chunk.as_ptr().cast::<__m512i>()) };
        }
        for (i, ((out, lanes), masks)) in outs
            .iter_mut()
            .zip(&plan.lanes)
            .zip(&plan.masks)
            .enumerate()
        {
            // SAFETY: `lanes` holds 16 lane numbers.
            let lanes = unsafe { _mm512_loadu_si512(lanes.as_ptr().cast::<__m512i>()) };
            let mut column = _mm512_setzero_si512();
            for (&mask, &v) in masks.iter().zip(&vectors).take(k) {
                if mask != 0 {
                    column = _mm512_mask_permutexvar_epi32(column, mask, lanes, v);
                }
            }
            bad |= _mm512_cmpeq_epi32_mask(column, missing);
            if RANKS {
                if let Some(kept) = columns.get_mut(i) {
                    *kept = column;
                }
            }
            if let Some(dst) = out.get_mut(at + done..at + done + LANES) {
                // SAFETY: `dst` holds 16 keys.
                unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast::<__m512i>(), column) };
            }
        }
        if RANKS {
            // The true class's code of each row (clamped below `k`, as
            // `rank_in_row` does) and its key, outcome bit set.
            let code = codes.get(done..done + LANES).map_or(last, |c| {
                // SAFETY: `c` holds 16 codes.
                _mm512_min_epu32(unsafe { _mm512_loadu_si512(c.as_ptr().cast()) }, last)
            });
            let mut own = _mm512_setzero_si512();
            for (c, &column) in columns.iter().enumerate().take(k) {
                #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
                let here = _mm512_cmpeq_epi32_mask(code, _mm512_set1_epi32(c as i32));
                own = _mm512_mask_mov_epi32(own, here, column);
            }
            // Each key with the outcome bit set compares with `own` as the
            // scores do (the true class's own key counts in neither test).
            let mut rank = _mm512_setzero_si512();
            for (c, &column) in columns.iter().enumerate().take(k) {
                let key = _mm512_or_si512(column, one);
                #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
                let later = _mm512_cmplt_epu32_mask(code, _mm512_set1_epi32(c as i32));
                let counted =
                    _mm512_cmpgt_epu32_mask(key, own) | (_mm512_cmpeq_epi32_mask(key, own) & later);
                rank = _mm512_mask_add_epi32(rank, counted, rank, one);
            }
            for (v, h) in hist.iter_mut().enumerate().take(k) {
                #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
                let at_v = _mm512_cmpeq_epi32_mask(rank, _mm512_set1_epi32(v as i32));
                *h += u64::from(at_v.count_ones());
            }
        }
        done += LANES;
    }
    (bad == 0, done)
}

#[cfg(test)]
mod tests {
    use super::super::super::top_k::rank_in_row;
    use super::{read_columns, read_columns_ranked, Plan};
    use std::mem::MaybeUninit;

    /// Every width up to 16 and past it, whole and partial groups, columns
    /// in any order: the columns read out (by permutes where this CPU has
    /// AVX-512, else the strided copy) are the tile's columns, and a missing
    /// key in a requested column, and only there, is reported.
    #[test]
    fn columns_read_out_are_the_tiles_columns() {
        for k in 1..=18_usize {
            for rows in [1, 15, 16, 37, 64] {
                #[allow(clippy::cast_possible_truncation)]
                let keys: Vec<u32> = (0..rows * k)
                    .map(|i| (i as u32).wrapping_mul(2_654_435_761) >> 1)
                    .collect();
                let columns: Vec<usize> = (0..k).rev().step_by(2).chain([0]).collect();
                let plan = Plan::new(k, &columns);
                let at = 3;
                let mut buffers: Vec<Vec<MaybeUninit<u32>>> = columns
                    .iter()
                    .map(|_| vec![MaybeUninit::new(7); at + rows + 5])
                    .collect();
                let mut outs: Vec<&mut [MaybeUninit<u32>]> =
                    buffers.iter_mut().map(|b| &mut b[..at + rows]).collect();
                assert!(read_columns(
                    &keys,
                    k,
                    &columns,
                    &mut outs,
                    at,
                    u32::MAX,
                    plan.as_ref()
                ));
                for (b, &col) in buffers.iter().zip(&columns) {
                    // SAFETY: every slot was initialised above.
                    let got: Vec<u32> = b.iter().map(|x| unsafe { x.assume_init() }).collect();
                    let want: Vec<u32> = (0..rows).map(|r| keys[r * k + col]).collect();
                    assert_eq!(
                        &got[at..at + rows],
                        &want[..],
                        "k {k} rows {rows} col {col}"
                    );
                    assert!(got[..at].iter().chain(&got[at + rows..]).all(|&x| x == 7));
                }
                // A missing key in the last row of a requested column is
                // reported; one in an unrequested column (k even: the odd
                // columns and 0 are requested, 2 is not) is not.
                let mut marked = keys.clone();
                marked[(rows - 1) * k] = u32::MAX;
                let mut outs: Vec<&mut [MaybeUninit<u32>]> =
                    buffers.iter_mut().map(|b| &mut b[..at + rows]).collect();
                assert!(!read_columns(
                    &marked,
                    k,
                    &columns,
                    &mut outs,
                    at,
                    u32::MAX,
                    plan.as_ref()
                ));
                if k % 2 == 0 && k >= 4 {
                    let mut marked = keys.clone();
                    marked[(rows - 1) * k + 2] = u32::MAX;
                    let mut outs: Vec<&mut [MaybeUninit<u32>]> =
                        buffers.iter_mut().map(|b| &mut b[..at + rows]).collect();
                    assert!(read_columns(
                        &marked,
                        k,
                        &columns,
                        &mut outs,
                        at,
                        u32::MAX,
                        plan.as_ref()
                    ));
                }
            }
        }
    }

    /// The ranks counted while every column is read out equal the ranks of
    /// the keys without outcome bits, row by row (`rank_in_row`), with many
    /// ties across columns, whole and partial groups, every width the
    /// permutes take; the columns read out are the tile's.
    #[test]
    fn ranks_counted_in_the_read_out_are_the_rows_ranks() {
        for k in 1..=16_usize {
            let columns: Vec<usize> = (0..k).collect();
            let Some(plan) = Plan::new(k, &columns) else {
                return;
            };
            for rows in [1, 15, 16, 37, 64] {
                for distinct in [2_u32, 3, 1 << 20] {
                    #[allow(clippy::cast_possible_truncation)]
                    let scores: Vec<u32> = (0..rows * k)
                        .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 7) % distinct)
                        .collect();
                    #[allow(clippy::cast_possible_truncation)]
                    let codes: Vec<u32> = (0..rows)
                        .map(|r| ((r as u32).wrapping_mul(40_503) >> 3) % k as u32)
                        .collect();
                    let mut want = vec![0_u64; k];
                    for (row, &code) in scores.chunks_exact(k).zip(&codes) {
                        want[rank_in_row(row, code) as usize] += 1;
                    }
                    // Packed keys: the score above the outcome bit, set on
                    // the true class's key.
                    let mut keys: Vec<u32> = scores.iter().map(|&x| x << 1).collect();
                    for (row, &code) in keys.chunks_exact_mut(k).zip(&codes) {
                        row[code as usize] |= 1;
                    }
                    let at = 2;
                    let mut buffers: Vec<Vec<MaybeUninit<u32>>> = columns
                        .iter()
                        .map(|_| vec![MaybeUninit::new(7); at + rows])
                        .collect();
                    let mut outs: Vec<&mut [MaybeUninit<u32>]> =
                        buffers.iter_mut().map(|b| &mut b[..]).collect();
                    let mut got = vec![0_u64; k];
                    assert!(read_columns_ranked(
                        &keys,
                        k,
                        &mut outs,
                        at,
                        u32::MAX,
                        &plan,
                        &codes,
                        &mut got
                    ));
                    assert_eq!(got, want, "k {k} rows {rows} distinct {distinct}");
                    for (b, &col) in buffers.iter().zip(&columns) {
                        // SAFETY: every slot was initialised above.
                        let out: Vec<u32> = b.iter().map(|x| unsafe { x.assume_init() }).collect();
                        let tile: Vec<u32> = (0..rows).map(|r| keys[r * k + col]).collect();
                        assert_eq!(&out[at..], &tile[..], "k {k} rows {rows} col {col}");
                    }
                }
            }
        }
    }
}
