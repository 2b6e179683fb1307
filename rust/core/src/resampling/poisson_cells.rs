//! The multinomial draws of a large stratum by Poisson draws and completion
//! (docs/definitions.md §11): each occupied cell `i` draws
//! `X_i ~ Poisson(c_i (1 - d))` independently, `d = 2 / sqrt(n)`; given their
//! total `t`, `X` is `Multinomial(t, c / n)`, so when `t <= n` adding `n - t`
//! rows drawn one at a time from the cells' shares `c / n` gives exactly
//! `Multinomial(n, c / n)`. When `t > n` (about 2% of replicates) the caller
//! draws that stratum's replicate by the split tree instead; both branches are
//! exact, so their mixture is.
//!
//! A Poisson draw is an inversion of a table shared by every cell of the same
//! rate (one per distinct count and stratum size), so a draw costs one
//! counter-based block per two cells and a look in the table's guide
//! ([`Plan::invert`]); the completions cost one block per row or two and a
//! guided search of the prefix sums. Every step is an IEEE-exact operation in
//! the order `cmetrics._numpy.poisson_cells` takes, so both backends draw the
//! same counts bit for bit.

use crate::cpu::widest;
use crate::error::Result;
use crate::memory::{try_filled, try_with_capacity};
use crate::random::{philox4x32_10, philox_lanes, CELL_COMPLETIONS, CELL_POISSON};
use std::collections::HashMap;

/// Blocks drawn side by side.
const LANES: usize = 16;
/// Guide buckets per cell.
const GUIDE: usize = 4;
/// Table entries (shared by two cells or more) past which a stratum's draws
/// go through the tables in order ([`by_table`]): their searched middles,
/// about a quarter of the entries at 8 + 4 bytes each, pass 512 KiB.
const SWEPT_ENTRIES: usize = 1 << 17;

/// Strata of fewer rows keep the split tree.
pub(super) const MIN_TOTAL: u64 = 1 << 10;
/// The most entries the tables of one call may hold (32 MiB); past it every
/// stratum keeps the split tree.
pub(super) const TABLE_BUDGET: usize = 1 << 22;

/// Whether a stratum of `total` rows and `occupied` nonzero cells is drawn by
/// Poisson draws and completion: at least [`MIN_TOTAL`] rows, and at least
/// `2 sqrt(total)` occupied cells (the completions, about `2 sqrt(total)`
/// rows, then cost less than the cells' draws; the tree costs more per cell).
#[must_use]
pub(super) fn eligible(total: u64, occupied: u64) -> bool {
    total >= MIN_TOTAL && u128::from(occupied) * u128::from(occupied) >= 4 * u128::from(total)
}

/// The Poisson rate of a cell of `count` rows in a stratum of `total` rows.
#[inline]
#[must_use]
pub(super) fn rate(count: u64, total: u64) -> f64 {
    count as f64 * (1.0 - 2.0 / (total as f64).sqrt())
}

/// The first value and the number of entries of the table of `rate`: the
/// values within `12 sqrt(rate) + 12` of its floor (the mass outside is below
/// `10^-24` at every rate, the most near a rate of 1; far below the 2^-53
/// resolution of a uniform).
#[must_use]
pub(super) fn table_span(rate: f64) -> (f64, usize) {
    let mode = rate.floor();
    let width = (12.0 * rate.sqrt()).floor() + 12.0;
    let low = (mode - width).max(0.0);
    (low, (mode + width - low) as usize + 1)
}

/// The cumulative weights of `rate`'s table: the weight of its floor `m` is 1,
/// of `k > m` the product of `rate / j` for `j = m + 1 ..= k`, of `k < m` the
/// product of `j / rate` for `j = m, m - 1, ..., k + 1`; summed from the first
/// value up, in order.
fn fill_table(rate: f64, low: f64, out: &mut [f64]) {
    let mode = rate.floor();
    let at = (mode - low) as usize;
    out[at] = 1.0;
    let mut w = 1.0;
    for (i, slot) in out[at + 1..].iter_mut().enumerate() {
        w *= rate / (mode + 1.0 + i as f64);
        *slot = w;
    }
    let mut w = 1.0;
    for (i, slot) in out[..at].iter_mut().rev().enumerate() {
        w *= (mode - i as f64) / rate;
        *slot = w;
    }
    let mut sum = 0.0;
    for slot in out.iter_mut() {
        sum += *slot;
        *slot = sum;
    }
}

/// The occupied cells of a stratum (`tables[i]` is cell `lo + i`'s table,
/// `u32::MAX` when empty) as `(i, table)` grouped by table in table order,
/// each group in cell order (a counting sort); empty when the tables that
/// serve two cells or more span fewer than [`SWEPT_ENTRIES`] entries
/// (`start`: where each table starts in the call's, then their end), whose
/// searched middles stay in cache in cell order, or when the stratum has
/// 2^32 cells or more.
fn by_table(tables: &[u32], start: &[usize]) -> Result<Vec<(u32, u32)>> {
    if u32::try_from(tables.len()).is_err() {
        return Ok(Vec::new());
    }
    let n_tables = start.len() - 1;
    let mut at = try_filled(n_tables + 1, 0_usize, "the Poisson tables")?;
    for &t in tables.iter().filter(|&&t| t != u32::MAX) {
        at[t as usize + 1] += 1;
    }
    let shared: usize = (0..n_tables)
        .filter(|&t| at[t + 1] > 1)
        .map(|t| start[t + 1] - start[t])
        .sum();
    if shared < SWEPT_ENTRIES {
        return Ok(Vec::new());
    }
    for t in 0..n_tables {
        at[t + 1] += at[t];
    }
    let mut out = try_filled(at[n_tables], (0_u32, 0_u32), "the Poisson tables")?;
    for (i, &t) in tables.iter().enumerate() {
        if t != u32::MAX {
            out[at[t as usize]] = (i as u32, t);
            at[t as usize] += 1;
        }
    }
    Ok(out)
}

/// A stratum drawn by Poisson draws and completion: its cells, rows, the
/// shift that takes a 64-bit word to `[0, 2^bits)` with `2^bits >= total`,
/// the prefix sums of its counts and a guide into them.
pub(super) struct Stratum {
    pub(super) lo: usize,
    pub(super) hi: usize,
    total: u64,
    shift: u32,
    prefix: Vec<u64>,
    guide: Vec<u32>,
    /// The stratum's occupied cells as `(cell - lo, table)`, grouped by
    /// table in the tables' memory order: the inversions sweep the tables
    /// once per replicate instead of jumping between them (a thousand
    /// tables spill out of the core's cache).
    by_table: Vec<(u32, u32)>,
}

/// The Poisson tables of a call, one per distinct rate, end to end; each
/// cell's table (`u32::MAX`: an empty cell, or a stratum on the tree).
pub(super) struct Plan {
    pub(super) strata: Vec<Stratum>,
    cdf: Vec<f64>,
    start: Vec<usize>,
    low: Vec<f64>,
    table: Vec<u32>,
    /// Per table: where its guide starts in `guide`, and the shift that takes
    /// a draw's 53 bits to its guide bucket.
    guide_at: Vec<(u32, u32)>,
    /// The tables' guides, end to end ([`Plan::invert`]).
    guide: Vec<u32>,
}

/// A guide entry's answer, below its two bits of steps.
const GUIDE_ENTRY: u32 = (1 << 30) - 1;

/// The guide of one table (`cdf`, its cumulative weights): `2^bits` buckets,
/// `2^bits` the power of two at or above half its entries. Bucket `j` holds
/// the 53-bit draws `m` with `m >> (53 - bits) == j`; since the answer of
/// [`Plan::invert`] does not decrease with `m`, the bucket's answers run from
/// that of its first draw to that of its last. The entry keeps the first of
/// them and, in its top two bits, how far the last lies past it (0, 1, or 2
/// for two or more).
fn fill_guide(cdf: &[f64], out: &mut Vec<u32>) -> u32 {
    let last = cdf.len() - 1;
    let bits = cdf.len().div_ceil(2).next_power_of_two().trailing_zeros();
    let shift = 53 - bits;
    let total = cdf[last];
    // The answer of the draw `m`, walked up from `k` (the answers ascend).
    let answer = |m: u64, mut k: usize| {
        let v = draw_value(m, total);
        while k < last && cdf[k] <= v {
            k += 1;
        }
        k
    };
    let mut k = 0;
    for j in 0..1_u64 << bits {
        let first = answer(j << shift, k);
        let end = answer(((j + 1) << shift) - 1, first);
        // At most 2^22 entries a table (TABLE_BUDGET): below GUIDE_ENTRY.
        out.push(first as u32 | (((end - first).min(2) as u32) << 30));
        k = first;
    }
    shift
}

/// The value `v` a 53-bit draw `m` is compared with in a table of total
/// weight `total`: `u = (m + 1/2) 2^-53` times the total.
#[inline(always)]
fn draw_value(m: u64, total: f64) -> f64 {
    ((m as f64) + 0.5) * (1.0 / 9_007_199_254_740_992.0) * total
}

impl Plan {
    /// The plan of the eligible strata of `strata` (`(lo, hi, total)`), or
    /// `None` when none is eligible or their tables pass [`TABLE_BUDGET`].
    pub(super) fn new(counts: &[u64], strata: &[(usize, usize, u64)]) -> Result<Option<Self>> {
        let mut chosen = Vec::new();
        let mut rates: HashMap<u64, u32> = HashMap::new();
        let mut spans: Vec<(f64, f64, usize)> = Vec::new();
        let mut entries = 0_usize;
        for &(lo, hi, total) in strata {
            let occupied = counts[lo..hi].iter().filter(|&&c| c > 0).count() as u64;
            if !eligible(total, occupied) {
                continue;
            }
            for &c in &counts[lo..hi] {
                if c == 0 {
                    continue;
                }
                let r = rate(c, total);
                rates.entry(r.to_bits()).or_insert_with(|| {
                    let (low, len) = table_span(r);
                    entries += len;
                    spans.push((r, low, len));
                    (spans.len() - 1) as u32
                });
                if entries > TABLE_BUDGET {
                    return Ok(None);
                }
            }
            chosen.push((lo, hi, total));
        }
        if chosen.is_empty() {
            return Ok(None);
        }
        let mut cdf = try_filled(entries, 0.0, "the Poisson tables")?;
        let mut start = Vec::with_capacity(spans.len() + 1);
        let mut low = Vec::with_capacity(spans.len());
        let mut at = 0;
        for &(r, l, len) in &spans {
            fill_table(r, l, &mut cdf[at..at + len]);
            start.push(at);
            low.push(l);
            at += len;
        }
        start.push(at);
        // At most one guide entry per table entry (fill_guide).
        let mut guide = try_with_capacity(entries, "the Poisson tables")?;
        let mut guide_at = Vec::with_capacity(spans.len());
        for t in 0..spans.len() {
            let from = guide.len() as u32;
            let shift = fill_guide(&cdf[start[t]..start[t + 1]], &mut guide);
            guide_at.push((from, shift));
        }
        let mut table = try_filled(counts.len(), u32::MAX, "the Poisson tables")?;
        let mut out = Vec::with_capacity(chosen.len());
        for (lo, hi, total) in chosen {
            for i in lo..hi {
                if counts[i] > 0 {
                    table[i] = rates[&rate(counts[i], total).to_bits()];
                }
            }
            let cells = hi - lo;
            let mut prefix = try_filled(cells + 1, 0_u64, "the Poisson tables")?;
            for (i, &c) in counts[lo..hi].iter().enumerate() {
                prefix[i + 1] = prefix[i] + c;
            }
            let buckets = GUIDE * cells;
            let mut guide = try_filled(buckets, 0_u32, "the Poisson tables")?;
            let mut k = 0;
            for (g, slot) in guide.iter_mut().enumerate() {
                let t = (g as u128 * u128::from(total) / buckets as u128) as u64;
                while prefix[k + 1] <= t {
                    k += 1;
                }
                *slot = k as u32;
            }
            let by_table = by_table(&table[lo..hi], &start)?;
            out.push(Stratum {
                lo,
                hi,
                total,
                shift: (total - 1).leading_zeros(),
                prefix,
                guide,
                by_table,
            });
        }
        Ok(Some(Self {
            strata: out,
            cdf,
            start,
            low,
            table,
            guide_at,
            guide,
        }))
    }

    /// The Poisson draw of `table` for the 64-bit word `x`: the first entry
    /// whose cumulative weight passes `u` times the table's total, with
    /// `u = (x >> 11 + 1/2) 2^-53` (the last entry when none does).
    ///
    /// The draw's guide bucket ([`fill_guide`]) gives the answer outright
    /// when all the bucket's draws share it, and otherwise the first of its
    /// answers; one more entry is then compared without a branch, and only
    /// the buckets of two steps or more (the tables' thin tails, about 3 % of
    /// draws) search on. The search it replaced started from a hint and
    /// compared entries in branches on every draw, each branch waiting on a
    /// read of the cumulative weights after the read of the hint (megabytes
    /// of tables at 10^4 tie groups). 2 x 10^4 cells of 10^4 tie groups,
    /// 300 replicates on one thread: 171-247 -> 129-167 ms (Intel).
    #[inline(always)]
    fn invert(&self, table: usize, x: u64) -> f64 {
        let (a, b) = (self.start[table], self.start[table + 1]);
        let cdf = &self.cdf[a..b];
        let last = cdf.len() - 1;
        let m = x >> 11;
        let (from, shift) = self.guide_at[table];
        let entry = self.guide[from as usize + (m >> shift) as usize];
        let mut k = (entry & GUIDE_ENTRY) as usize;
        let steps = entry >> 30;
        let v = draw_value(m, cdf[last]);
        if steps < 2 {
            k += usize::from((steps == 1) & (cdf[k] <= v));
        } else {
            while k < last && cdf[k] <= v {
                k += 1;
            }
        }
        self.low[table] + k as f64
    }

    /// Replicate `replicate` of `stratum` into `out` (its cells), or `false`
    /// when the Poisson draws total more than the stratum's rows (`out` is
    /// then to be drawn by the split tree).
    pub(super) fn draw(
        &self,
        stratum: &Stratum,
        out: &mut [f64],
        key: [u32; 2],
        replicate: u32,
    ) -> bool {
        let mut fits = false;
        draw_widest(self, stratum, out, key, replicate, &mut fits);
        fits
    }
}

widest! {
    /// [`draw_replicate`] with the widest vectors this CPU has.
    fn draw_widest(
        plan: &Plan,
        stratum: &Stratum,
        out: &mut [f64],
        key: [u32; 2],
        replicate: u32,
        fits: &mut bool,
    ) => draw_replicate
}

/// Replicate `replicate` of `stratum` into `out` (its cells); `fits` says
/// whether the Poisson draws totalled at most the stratum's rows (else `out`
/// is to be drawn by the split tree). Inlined into [`draw_widest`]'s copies;
/// no multiply-add is fused, so every instruction set gives the same bits.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // the four words of a block, lane by lane
fn draw_replicate(
    plan: &Plan,
    stratum: &Stratum,
    out: &mut [f64],
    key: [u32; 2],
    replicate: u32,
    fits: &mut bool,
) {
    let first = stratum.lo >> 1;
    let pairs = ((stratum.hi - 1) >> 1) + 1 - first;
    // Without a table order, each cell's draw at once; with one, first every
    // cell's word kept in its output slot (empty cells draw 0), then the
    // inversions in table order (`Stratum::by_table`), each replacing its
    // word by the draw.
    let swept = !stratum.by_table.is_empty();
    let mut sum = 0.0;
    for group in (0..pairs).step_by(LANES) {
        let mut counter = [
            [0; LANES],
            [replicate; LANES],
            [0; LANES],
            [CELL_POISSON; LANES],
        ];
        for (l, c) in counter[0].iter_mut().enumerate() {
            *c = (first + group + l) as u32;
        }
        let w = philox_lanes::<LANES>(counter, key);
        for l in 0..LANES.min(pairs - group) {
            for h in 0..2 {
                let i = 2 * (first + group + l) + h;
                if i < stratum.lo || i >= stratum.hi {
                    continue;
                }
                let t = plan.table[i];
                let x = (u64::from(w[2 * h][l]) << 32) | u64::from(w[2 * h + 1][l]);
                out[i - stratum.lo] = if t == u32::MAX {
                    0.0
                } else if swept {
                    f64::from_bits(x)
                } else {
                    let k = plan.invert(t as usize, x);
                    sum += k;
                    k
                };
            }
        }
    }
    for &(i, t) in &stratum.by_table {
        let slot = &mut out[i as usize];
        let k = plan.invert(t as usize, slot.to_bits());
        *slot = k;
        sum += k;
    }
    // Every count and the sum are integers below 2^53: exact in any order.
    let total = stratum.total as f64;
    if sum > total || total - sum >= 4_294_967_296.0 {
        *fits = false;
        return;
    }
    let extra = (total - sum) as u32;
    let scale = stratum.guide.len() as f64 / total;
    let last = stratum.guide.len() - 1;
    for group in (0..extra).step_by(LANES) {
        let mut counter = [
            [0; LANES],
            [replicate; LANES],
            [stratum.lo as u32; LANES],
            [CELL_COMPLETIONS; LANES],
        ];
        for (l, c) in counter[0].iter_mut().enumerate() {
            *c = group.wrapping_add(l as u32);
        }
        let w = philox_lanes::<LANES>(counter, key);
        for l in 0..LANES.min((extra - group) as usize) {
            let first = ((u64::from(w[0][l]) << 32) | u64::from(w[1][l])) >> stratum.shift;
            let second = ((u64::from(w[2][l]) << 32) | u64::from(w[3][l])) >> stratum.shift;
            let v = if first < stratum.total {
                first
            } else if second < stratum.total {
                second
            } else {
                uniform_below(stratum, key, group + l as u32, replicate)
            };
            // The guide's cell for `v`, walked to the cell whose rows hold it.
            let mut k = stratum.guide[((v as f64 * scale) as usize).min(last)] as usize;
            while k > 0 && stratum.prefix[k] > v {
                k -= 1;
            }
            while stratum.prefix[k + 1] <= v {
                k += 1;
            }
            out[k] += 1.0;
        }
    }
    *fits = true;
}

/// A uniform integer in `[0, total)` for completion row `row`: the top bits of
/// the 64-bit words of blocks `(row, replicate, lo, CELL_COMPLETIONS + 256 a)`,
/// `a = 0, 1, ...`, two words a block, the first below `total`.
#[inline(never)]
fn uniform_below(stratum: &Stratum, key: [u32; 2], row: u32, replicate: u32) -> u64 {
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
        for h in [0, 2] {
            let x = (u64::from(w[h]) << 32) | u64::from(w[h + 1]);
            let v = x >> stratum.shift;
            if v < stratum.total {
                return v;
            }
        }
        attempt = attempt.wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::key_of;

    /// `ln k!` by a plain sum (exact enough for the comparison below).
    fn ln_factorial(k: u64) -> f64 {
        (2..=k).map(|j| (j as f64).ln()).sum()
    }

    #[test]
    fn tables_are_the_poisson_law() {
        for rate in [0.3, 1.0, 7.5, 99.0, 12_345.6] {
            let (low, len) = table_span(rate);
            let mut cdf = vec![0.0; len];
            fill_table(rate, low, &mut cdf);
            let total = cdf[len - 1];
            let mut previous = 0.0;
            for (i, &c) in cdf.iter().enumerate() {
                let k = low as u64 + i as u64;
                let want = (k as f64 * rate.ln() - rate - ln_factorial(k)).exp();
                let got = (c - previous) / total;
                previous = c;
                assert!(
                    (got - want).abs() <= 1e-9 * want + 1e-15,
                    "rate {rate} k {k}: {got} vs {want}"
                );
            }
            // The mass left outside the table is negligible.
            let inside: f64 = (0..len)
                .map(|i| {
                    let k = low as u64 + i as u64;
                    (k as f64 * rate.ln() - rate - ln_factorial(k)).exp()
                })
                .sum();
            assert!((1.0 - inside).abs() < 1e-9, "rate {rate}: {inside}");
        }
    }

    #[test]
    fn eligibility_weighs_cells_against_rows() {
        assert!(!eligible(1023, 1023));
        assert!(eligible(1024, 64));
        assert!(!eligible(1024, 63));
        assert!(eligible(10_000_000, 6_325));
        assert!(!eligible(10_000_000, 6_324));
        assert!(eligible(u64::MAX, u64::MAX));
    }

    #[test]
    fn a_plan_over_the_budget_is_none() {
        // 4,000 distinct counts from 1,000 to 5,000 over 16,000 cells: eligible, but
        // about 1,300 entries a table.
        let counts: Vec<u64> = (0..16_000).map(|i| 1_000 + i % 4_000).collect();
        let total = counts.iter().sum();
        assert!(eligible(total, 16_000));
        assert!(Plan::new(&counts, &[(0, 16_000, total)]).unwrap().is_none());
        // The same count everywhere: one table.
        let counts = vec![2_000_u64; 8_000];
        assert!(Plan::new(&counts, &[(0, 8_000, 16_000_000)])
            .unwrap()
            .is_some());
        let counts = [3_u64; 100];
        let plan = Plan::new(&counts, &[(0, 100, 300)]).unwrap();
        assert!(plan.is_none(), "300 rows keep the tree");
        let counts = vec![20_u64; 100];
        let plan = Plan::new(&counts, &[(0, 100, 2_000)]).unwrap().unwrap();
        let mut out = vec![0.0; 100];
        let drawn = (0..50)
            .filter(|&b| plan.draw(&plan.strata[0], &mut out, key_of(5), b))
            .count();
        assert!(drawn > 40);
    }

    #[test]
    fn the_guided_inversion_is_the_plain_search() {
        // Rates from below 1 to past 10^4.
        let counts: Vec<u64> = (0..3_200_u64)
            .map(|i| {
                if i < 3_000 {
                    1 + i % 3
                } else {
                    (i - 2_999) * 60
                }
            })
            .collect();
        let total: u64 = counts.iter().sum();
        let plan = Plan::new(&counts, &[(0, 3_200, total)]).unwrap().unwrap();
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for t in 0..plan.low.len() {
            let cdf = &plan.cdf[plan.start[t]..plan.start[t + 1]];
            let last = cdf.len() - 1;
            // Uniform words, the words at each guide bucket's ends and beside
            // them, and the words beside each entry's own boundary.
            let shift = plan.guide_at[t].1;
            let buckets = 1_u64 << (53 - shift);
            let edges = (0..buckets).flat_map(|g| {
                let (lo, hi) = (g << shift, ((g + 1) << shift) - 1);
                [lo.saturating_sub(1), lo, hi, (hi + 1).min((1 << 53) - 1)].map(|m| m << 11)
            });
            let total = cdf[last];
            let boundaries = cdf.iter().flat_map(|&c| {
                // The 53-bit draw whose value is nearest the entry's weight.
                let m = ((c / total) * 9_007_199_254_740_992.0).min(9_007_199_254_740_991.0) as u64;
                [m.saturating_sub(1), m, (m + 1).min((1 << 53) - 1)].map(|m| m << 11)
            });
            for word in (0..200)
                .map(|_| {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    x
                })
                .chain(edges)
                .chain(boundaries)
            {
                let u = ((word >> 11) as f64 + 0.5) * (1.0 / 9_007_199_254_740_992.0);
                let v = u * cdf[last];
                let plain = cdf.partition_point(|&c| c <= v).min(last);
                assert_eq!(
                    plan.invert(t, word),
                    plan.low[t] + plain as f64,
                    "table {t}"
                );
            }
        }
        // Large tables each of one cell: no table order.
        assert!(plan.strata[0].by_table.is_empty());
    }

    #[test]
    fn the_table_order_draws_the_same() {
        // 20,000 cells over 1,000 counts: every table serves 20 cells.
        let counts: Vec<u64> = (0..20_000_u64).map(|i| 300 + (i * 7) % 1_000).collect();
        let total: u64 = counts.iter().sum();
        let mut plan = Plan::new(&counts, &[(0, 20_000, total)]).unwrap().unwrap();
        // Every occupied cell once, grouped by table in table order.
        let order = plan.strata[0].by_table.clone();
        assert_eq!(order.len(), 20_000);
        assert!(order
            .windows(2)
            .all(|w| w[0].1 < w[1].1 || (w[0].1 == w[1].1 && w[0].0 < w[1].0)));
        assert!(order.iter().all(|&(i, t)| plan.table[i as usize] == t));
        let draws = |plan: &Plan| -> Vec<(bool, Vec<f64>)> {
            (0..20)
                .map(|b| {
                    let mut out = vec![0.0; 20_000];
                    (plan.draw(&plan.strata[0], &mut out, key_of(9), b), out)
                })
                .collect()
        };
        let swept = draws(&plan);
        plan.strata[0].by_table.clear();
        assert_eq!(swept, draws(&plan));
        assert!(swept.iter().filter(|(fits, _)| *fits).count() > 15);
    }
}
