//! A tile's keys (rows of `k` packed keys, row-major) read out a column at a
//! time into each requested column's output: the transpose's second half.
//!
//! With AVX-512 and at most 16 columns, sixteen rows are `k` vectors of keys,
//! and a column of those sixteen rows is put together by one masked permute
//! from each vector that holds some of it (lane `r` takes key `r k + col`:
//! element `(r k + col) mod 16` of vector `(r k + col) / 16`); the plan of
//! lanes and masks is made once per call. Elsewhere a plain strided copy.

use std::mem::MaybeUninit;

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
        let (wide_ok, wide_rows) = unsafe { read_columns_avx512(keys, plan, outs, at, missing) };
        ok &= wide_ok;
        done = wide_rows;
    }
    let _ = plan;
    let rest = keys.get(done * k..).unwrap_or_default();
    for (out, &col) in outs.iter_mut().zip(columns) {
        let dst = out.get_mut(at + done..at + rows).unwrap_or_default();
        let src = rest.get(col..).unwrap_or_default().iter().step_by(k);
        for (slot, &key) in dst.iter_mut().zip(src) {
            ok &= key != missing;
            slot.write(key);
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
#[target_feature(enable = "avx512f")]
unsafe fn read_columns_avx512(
    keys: &[u32],
    plan: &Plan,
    outs: &mut [&mut [MaybeUninit<u32>]],
    at: usize,
    missing: u32,
) -> (bool, usize) {
    use std::arch::x86_64::{
        __m512i, _mm512_cmpeq_epi32_mask, _mm512_loadu_si512, _mm512_mask_permutexvar_epi32,
        _mm512_set1_epi32, _mm512_setzero_si512, _mm512_storeu_si512,
    };
    let k = plan.k;
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
    for group in keys.chunks_exact(LANES * k).take(room / LANES) {
        let mut vectors = [_mm512_setzero_si512(); LANES];
        for (v, chunk) in vectors.iter_mut().zip(group.chunks_exact(LANES)) {
            // SAFETY: `chunk` holds 16 keys.
            *v = unsafe { _mm512_loadu_si512(chunk.as_ptr().cast::<__m512i>()) };
        }
        for ((out, lanes), masks) in outs.iter_mut().zip(&plan.lanes).zip(&plan.masks) {
            // SAFETY: `lanes` holds 16 lane numbers.
            let lanes = unsafe { _mm512_loadu_si512(lanes.as_ptr().cast::<__m512i>()) };
            let mut column = _mm512_setzero_si512();
            for (&mask, &v) in masks.iter().zip(&vectors).take(k) {
                if mask != 0 {
                    column = _mm512_mask_permutexvar_epi32(column, mask, lanes, v);
                }
            }
            bad |= _mm512_cmpeq_epi32_mask(column, missing);
            if let Some(dst) = out.get_mut(at + done..at + done + LANES) {
                // SAFETY: `dst` holds 16 keys.
                unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast::<__m512i>(), column) };
            }
        }
        done += LANES;
    }
    (bad == 0, done)
}

#[cfg(test)]
mod tests {
    use super::{read_columns, Plan};
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
}
