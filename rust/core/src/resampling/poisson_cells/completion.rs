//! The completion rows of a stratum's Poisson draws (docs/definitions.md §11):
//! when the cells' draws total `t <= n`, the `n - t` rows left are drawn one
//! at a time from the cells' shares `c / n`, each a uniform integer below `n`
//! (Lemire's multiplication, [`below`]) placed in the cell whose rows hold it.

use crate::random::{philox4x32_10, philox_blocks16, CELL_COMPLETIONS, LANES};

/// A stratum as its completion rows see it: its first cell, its rows, the
/// prefix sums of its cells' counts and a guide into them (`guide[j]` the
/// cell holding row `j total / guide.len()`).
pub(super) struct Shares<'a> {
    pub(super) lo: usize,
    pub(super) total: u64,
    pub(super) prefix: &'a [u64],
    pub(super) guide: &'a [u32],
}

/// The completion rows of replicate `replicate` of `stratum` added to `out`
/// (its Poisson draws, totalling `sum`), or `false` when they total more than
/// the stratum's rows (`out` is then to be drawn by the split tree).
///
/// The rows go in groups of [`LANES`] blocks, each group in three steps one
/// group apart: its values (with the guide's line of each asked for), then
/// each value's guide entry (with the lines of the cell it names asked for),
/// then the walks to the cells and the counts. Row by row, each row waited on
/// its guide entry and then on the prefix sums it names before the next
/// row's reads began (about 30 ns a row where the stratum's guide, prefix
/// sums and cells, 6.4 MB at 2 x 10^5 cells, are out of the core's cache). The
/// counts are integers: the same in any order.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // the four words of a block, lane by lane
pub(super) fn complete(
    stratum: &Shares<'_>,
    out: &mut [f64],
    key: [u32; 2],
    replicate: u32,
    sum: f64,
) -> bool {
    // Every count and the sum are integers below 2^53: exact in any order.
    let total = stratum.total as f64;
    if sum > total || total - sum >= 4_294_967_296.0 {
        return false;
    }
    let extra = (total - sum) as u32;
    let scale = stratum.guide.len() as f64 / total;
    let last = stratum.guide.len() - 1;
    // `v` is below the stratum's rows (below 2^53, Drawing::new): exact
    // through `i64`, as the bucket (non-negative, below 2^53) back; one
    // instruction each where `u64` to `f64` and back take several without
    // AVX-512.
    let bucket = |v: u64| ((v as i64 as f64 * scale) as i64 as usize).min(last);
    // Three groups in flight: group `g` in slot `g % 3`.
    let mut values = [[0_u64; 2 * LANES]; 3];
    let mut cells = [[0_usize; 2 * LANES]; 3];
    let mut rows = [0_usize; 3];
    let groups = extra.div_ceil(2).div_ceil(LANES as u32) as usize;
    for step in 0..groups + 2 {
        if step < groups {
            // Two completion rows a block: row `2j` takes its first word,
            // `2j + 1` its second.
            let group = (step * LANES) as u32;
            let mut counter = [
                [0; LANES],
                [replicate; LANES],
                [stratum.lo as u32; LANES],
                [CELL_COMPLETIONS; LANES],
            ];
            for (l, c) in counter[0].iter_mut().enumerate() {
                *c = group.wrapping_add(l as u32);
            }
            let w = philox_blocks16(counter, key);
            let (values, mut n) = (&mut values[step % 3], 0);
            'lanes: for l in 0..LANES {
                for h in 0..2 {
                    // In u64: twice a pair's number may pass u32 (the rows do not).
                    let row = 2 * u64::from(group + l as u32) + h as u64;
                    if row >= u64::from(extra) {
                        break 'lanes;
                    }
                    let x = (u64::from(w[2 * h][l]) << 32) | u64::from(w[2 * h + 1][l]);
                    let v = below(x, stratum.total)
                        .unwrap_or_else(|| uniform_below(stratum, key, row as u32, replicate));
                    #[cfg(target_arch = "x86_64")]
                    crate::simd::prefetch(stratum.guide.as_ptr().wrapping_add(bucket(v)));
                    values[n] = v;
                    n += 1;
                }
            }
            rows[step % 3] = n;
        }
        if (1..=groups).contains(&step) {
            // The guide's cell for each value of the group before.
            let at = (step - 1) % 3;
            for j in 0..rows[at] {
                let k = stratum.guide[bucket(values[at][j])] as usize;
                #[cfg(target_arch = "x86_64")]
                {
                    crate::simd::prefetch(stratum.prefix.as_ptr().wrapping_add(k + 1));
                    crate::simd::prefetch(out.as_ptr().wrapping_add(k));
                }
                cells[at][j] = k;
            }
        }
        if step >= 2 {
            // Each value of the group two before walked to the cell whose
            // rows hold it.
            let at = (step - 2) % 3;
            for j in 0..rows[at] {
                let (v, mut k) = (values[at][j], cells[at][j]);
                while k > 0 && stratum.prefix[k] > v {
                    k -= 1;
                }
                while stratum.prefix[k + 1] <= v {
                    k += 1;
                }
                out[k] += 1.0;
            }
        }
    }
    true
}

/// The uniform integer in `[0, total)` a 64-bit word `x` gives, when it
/// gives one: the high half of the 128-bit product `x total`, unless its low
/// half falls below `2^64 mod total` (Lemire's rejection, which keeps exactly
/// `floor(2^64 / total)` words for each value; a chance below `total / 2^64`,
/// under `2^-11` for any stratum and about `5 x 10^-13` at 10^7 rows).
#[inline(always)]
#[must_use]
pub(super) fn below(x: u64, total: u64) -> Option<u64> {
    let product = u128::from(x) * u128::from(total);
    let low = product as u64;
    if low < total && low < total.wrapping_neg() % total {
        return None;
    }
    Some((product >> 64) as u64)
}

/// A uniform integer in `[0, total)` for completion row `row` whose word
/// [`below`] rejected: the first word of block `(row, replicate, lo,
/// CELL_COMPLETIONS + 256 a)`, `a = 1, 2, ...`, that it keeps.
#[inline(never)]
pub(super) fn uniform_below(stratum: &Shares<'_>, key: [u32; 2], row: u32, replicate: u32) -> u64 {
    let mut attempt = 1_u32;
    loop {
        let w = philox4x32_10(
            [
                row,
                replicate,
                stratum.lo as u32,
                CELL_COMPLETIONS.wrapping_add(attempt << 8),
            ],
            key,
        );
        if let Some(v) = below((u64::from(w[0]) << 32) | u64::from(w[1]), stratum.total) {
            return v;
        }
        attempt = attempt.wrapping_add(1);
    }
}
