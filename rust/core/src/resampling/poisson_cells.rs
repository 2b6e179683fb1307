//! The multinomial draws of a large stratum by Poisson draws and completion
//! (docs/definitions.md §11): each occupied cell `i` draws
//! `X_i ~ Poisson(c_i (1 - d))` independently, `d = 3 / sqrt(n)`; given their
//! total `t`, `X` is `Multinomial(t, c / n)`, so when `t <= n` adding `n - t`
//! rows drawn one at a time from the cells' shares `c / n` gives exactly
//! `Multinomial(n, c / n)`. When `t > n` (about 0.13 % of replicates) the caller
//! draws that stratum's replicate by the split tree instead; both branches are
//! exact, so their mixture is.
//!
//! A Poisson draw is an inversion of a table shared by every cell of the same
//! rate (one per distinct count and stratum size), so a draw costs one
//! counter-based block per two cells and a look in the table's guide
//! ([`Plan::invert`]); the completions ([`completion`]) cost one block per
//! two rows, a multiplication ([`completion::below`]) and a guided search of
//! the prefix sums. Every step is an IEEE-exact operation in the order
//! `cmetrics._numpy.poisson_cells` takes, so both backends draw the same
//! counts bit for bit, as do the AVX-512 lanes that invert eight draws at
//! once (`lanes`).

use crate::cpu::widest;
use crate::error::Result;
use crate::memory::{try_filled, try_with_capacity};
use crate::random::{philox_blocks16, CELL_POISSON, LANES};
use completion::{complete, Shares};
use std::collections::HashMap;

/// Guide buckets per cell.
const GUIDE: usize = 4;
/// Table entries (shared by two cells or more) past which a stratum's draws
/// go through the tables in order ([`by_table`]): their searched middles,
/// about a quarter of the entries at 8 + 4 bytes each, pass 512 KiB.
const SWEPT_ENTRIES: usize = 1 << 17;

/// The rates are shrunk by `MARGIN / sqrt(n)`: the draws then overshoot `n`
/// (`P(Z > 3)`, about 0.13 % of replicates) far less often than at
/// `2 / sqrt(n)` (2.3 %), and each overshoot costs the split tree, some
/// twenty replicates' worth, while the `sqrt(n)` more completion rows cost
/// a few nanoseconds each. 2 x 10^4 cells of 10^7 rows, one thread: 713 ->
/// 371-472 us a replicate with [`completion::below`] (Intel).
const MARGIN: f64 = 3.0;

/// Strata of fewer rows keep the split tree.
pub(super) const MIN_TOTAL: u64 = 1 << 10;
/// The most entries the tables of one call may hold (32 MiB of weights,
/// their guides and cuts at most 48 MiB more); past it every stratum keeps
/// the split tree.
pub(super) const TABLE_BUDGET: usize = 1 << 22;

/// Whether a stratum of `total` rows and `occupied` nonzero cells is drawn by
/// Poisson draws and completion: at least [`MIN_TOTAL`] rows, and at least
/// `2 sqrt(total)` occupied cells (the completions, about `3 sqrt(total)`
/// rows, then cost about what the cells' draws cost; the tree costs more per
/// cell).
#[must_use]
pub(super) fn eligible(total: u64, occupied: u64) -> bool {
    total >= MIN_TOTAL && u128::from(occupied) * u128::from(occupied) >= 4 * u128::from(total)
}

/// The Poisson rate of a cell of `count` rows in a stratum of `total` rows.
#[inline]
#[must_use]
pub(super) fn rate(count: u64, total: u64) -> f64 {
    count as f64 * (1.0 - MARGIN / (total as f64).sqrt())
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
/// prefix sums of its counts and a guide into them.
pub(super) struct Stratum {
    pub(super) lo: usize,
    pub(super) hi: usize,
    total: u64,
    prefix: Vec<u64>,
    guide: Vec<u32>,
    /// The stratum's occupied cells as `(cell - lo, table)`, grouped by
    /// table in the tables' memory order: the inversions sweep the tables
    /// once per replicate instead of jumping between them (a thousand
    /// tables spill out of the core's cache).
    by_table: Vec<(u32, u32)>,
}

impl Stratum {
    /// The stratum as its completion rows see it.
    fn shares(&self) -> Shares<'_> {
        Shares {
            lo: self.lo,
            total: self.total,
            prefix: &self.prefix,
            guide: &self.guide,
        }
    }

    /// Whether the stratum's draws go through its tables in order.
    #[cfg(test)]
    pub(super) fn swept(&self) -> bool {
        !self.by_table.is_empty()
    }
}

/// The Poisson tables of a call, one per distinct rate, end to end; each
/// cell's table (`u32::MAX`: an empty cell, or a stratum on the tree).
pub(super) struct Plan {
    pub(super) strata: Vec<Stratum>,
    cdf: Vec<f64>,
    start: Vec<usize>,
    table: Vec<u32>,
    /// Per table, what its inversion reads ([`Plan::invert_in`]).
    tables: Vec<Table>,
    /// The tables' guides, end to end ([`Plan::invert`]).
    guide: Vec<u32>,
    /// Beside each guide bucket of one step, the cumulative weight its
    /// draws are compared with (`cdf` at the bucket's first answer); `+inf`
    /// elsewhere. The lanes gather it beside the guide's entry instead of
    /// after it (one wait on memory a draw, not two). Empty when every
    /// stratum is swept (their lanes read `cdf`).
    #[cfg(target_arch = "x86_64")]
    cut: Vec<f64>,
    /// Per table, its fields as the AVX-512 lanes gather them.
    #[cfg(target_arch = "x86_64")]
    records: Vec<lanes::Record>,
}

/// What the inversion of one table reads, in one 32-byte record: where its
/// cumulative weights start in the plan's `cdf` and its guide in the plan's
/// `guide`, its last entry's index, the shift that takes a draw's 53 bits to
/// its guide bucket, its total weight and its first value. The record replaced
/// four arrays read one after another per draw (where the table starts and
/// ends, its guide and shift, its first value).
#[derive(Clone, Copy, Debug)]
pub(super) struct Table {
    pub(super) start: u32,
    pub(super) guide: u32,
    pub(super) last: u32,
    pub(super) shift: u32,
    pub(super) total: f64,
    pub(super) low: f64,
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

/// [`Plan`]'s `cut`: beside each guide bucket, the weight at its first
/// answer when it leaves one step, else `+inf`.
#[cfg(target_arch = "x86_64")]
fn cuts(tables: &[Table], guide: &[u32], cdf: &[f64]) -> Result<Vec<f64>> {
    let mut cut = try_with_capacity(guide.len(), "the Poisson tables")?;
    for t in tables {
        let from = t.guide as usize;
        cut.extend(guide[from..from + (1 << (53 - t.shift))].iter().map(|&e| {
            if e >> 30 == 1 {
                cdf[t.start as usize + (e & GUIDE_ENTRY) as usize]
            } else {
                f64::INFINITY
            }
        }));
    }
    Ok(cut)
}

/// The value `v` a 53-bit draw `m` is compared with in a table of total
/// weight `total`: `u = (m + 1/2) 2^-53` times the total.
#[inline(always)]
fn draw_value(m: u64, total: f64) -> f64 {
    // `m` is below 2^53: the same value through `i64`, one instruction where
    // `u64` to `f64` takes five without AVX-512.
    debug_assert!(m < 1 << 53);
    ((m as i64 as f64) + 0.5) * (1.0 / 9_007_199_254_740_992.0) * total
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
        let mut tables = Vec::with_capacity(spans.len());
        #[cfg(target_arch = "x86_64")]
        let mut records = Vec::with_capacity(spans.len());
        for t in 0..spans.len() {
            let from = guide.len() as u32;
            let shift = fill_guide(&cdf[start[t]..start[t + 1]], &mut guide);
            // Every index is below TABLE_BUDGET (2^22): within 32 bits.
            tables.push(Table {
                start: start[t] as u32,
                guide: from,
                last: (start[t + 1] - start[t] - 1) as u32,
                shift,
                total: cdf[start[t + 1] - 1],
                low: low[t],
            });
            #[cfg(target_arch = "x86_64")]
            records.push(lanes::record(
                start[t],
                from,
                cdf[start[t + 1] - 1],
                low[t],
                shift,
            ));
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
                prefix,
                guide,
                by_table,
            });
        }
        // The cuts serve the strata whose draws are not swept.
        #[cfg(target_arch = "x86_64")]
        let cut = if out.iter().all(|s| !s.by_table.is_empty()) {
            Vec::new()
        } else {
            cuts(&tables, &guide, &cdf)?
        };
        Ok(Some(Self {
            strata: out,
            cdf,
            start,
            table,
            tables,
            guide,
            #[cfg(target_arch = "x86_64")]
            cut,
            #[cfg(target_arch = "x86_64")]
            records,
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
        self.invert_in(&self.tables[table], x)
    }

    /// [`Plan::invert`] of the table whose record is `t` (a record of this
    /// plan's: its ranges are inside `cdf` and `guide`).
    #[inline(always)]
    fn invert_in(&self, t: &Table, x: u64) -> f64 {
        let m = x >> 11;
        let entry = self.guide[t.guide as usize + (m >> t.shift) as usize];
        let start = t.start as usize;
        let mut k = start + (entry & GUIDE_ENTRY) as usize;
        let steps = entry >> 30;
        let v = draw_value(m, t.total);
        if steps < 2 {
            k += usize::from((steps == 1) & (self.cdf[k] <= v));
        } else {
            let last = start + t.last as usize;
            while k < last && self.cdf[k] <= v {
                k += 1;
            }
        }
        // Below 2^22 (TABLE_BUDGET): the same value through `u32`, one
        // instruction where `usize` to `f64` takes five without AVX-512.
        t.low + f64::from((k - start) as u32)
    }

    /// At entry `entry` of a stratum's `by_table`: when it starts a table's
    /// cells (`*next`, where the next table's cells start, says so), move
    /// `*next` past them and ask for the cache lines of the table after: its
    /// whole guide and the middle half of its cumulative weights (a table
    /// spans `12 sqrt(rate) + 12` each side of its floor; nearly every draw
    /// falls within six standard deviations). Those lines come in while the
    /// current table's cells are drawn, where each inversion otherwise waited
    /// on them (the swept tables are megabytes). 2 x 10^4 cells of 10^4 tie
    /// groups, 10^7 rows, 1000 replicates on two threads, the two builds
    /// alternating in one process: 201-215 -> 147-153 ms a call (Zen 5).
    #[inline(always)]
    fn ask_ahead(&self, by_table: &[(u32, u32)], entry: usize, next: &mut usize) {
        if entry != *next {
            return;
        }
        let table = by_table[entry].1;
        *next += by_table[entry..]
            .iter()
            .take_while(|e| e.1 == table)
            .count();
        #[cfg(target_arch = "x86_64")]
        if let Some(&(_, t)) = by_table.get(*next) {
            let t = t as usize;
            let (a, b) = (self.start[t], self.start[t + 1]);
            let (from, shift) = (self.tables[t].guide, self.tables[t].shift);
            let guide = from as usize..from as usize + (1_usize << (53 - shift));
            for j in guide.step_by(16) {
                crate::simd::prefetch(self.guide.as_ptr().wrapping_add(j));
            }
            for j in (a + (b - a) / 4..=a + 3 * (b - a) / 4).step_by(8) {
                crate::simd::prefetch(self.cdf.as_ptr().wrapping_add(j));
            }
        }
    }

    /// Replicate `replicate` of `stratum` into `out` (its cells), or `false`
    /// when the Poisson draws total more than the stratum's rows (`out` is
    /// then to be drawn by the split tree).
    #[cfg(test)]
    pub(super) fn draw(
        &self,
        stratum: &Stratum,
        out: &mut [f64],
        key: [u32; 2],
        replicate: u32,
    ) -> bool {
        let mut fits = [false];
        draw_widest(self, stratum, out, out.len(), key, replicate, &mut fits);
        fits[0]
    }

    /// Replicates `first ..` (as many as `fits`, at most [`BLOCK`]) of
    /// `stratum`, replicate `r`'s cells from `rows[r * width]` on; `fits`
    /// says of each whether its Poisson draws totalled at most the stratum's
    /// rows (else its cells are to be drawn by the split tree). The same
    /// draws as each replicate drawn alone.
    pub(super) fn draw_block(
        &self,
        stratum: &Stratum,
        rows: &mut [f64],
        width: usize,
        key: [u32; 2],
        first: u32,
        fits: &mut [bool],
    ) {
        draw_widest(self, stratum, rows, width, key, first, fits);
    }
}

/// The most replicates [`Plan::draw_block`] draws side by side. A stratum
/// whose tables spill out of the core's cache (`Stratum::by_table`) sweeps
/// them once for the block instead of once a replicate: 2 x 10^4 cells of
/// 10^7 rows over about 10^3 tables, one thread, the two alternating in one
/// run: 427-684 us a replicate drawn alone, 305-363 us in blocks (Intel).
pub(super) const BLOCK: usize = 8;

widest! {
    /// [`draw_replicates`] with the widest vectors this CPU has.
    fn draw_widest(
        plan: &Plan,
        stratum: &Stratum,
        rows: &mut [f64],
        width: usize,
        key: [u32; 2],
        first: u32,
        fits: &mut [bool],
    ) => draw_replicates
}

/// Replicates `first ..` of `stratum` as [`Plan::draw_block`] lays them out.
/// Without a table order (`Stratum::by_table`), each cell's draw at once;
/// with one, first every cell's word kept in its output slot (empty cells
/// draw 0), then the inversions in table order, each table's cells for every
/// replicate of the block, each replacing its word by the draw (in each
/// replicate the order of one alone). Inlined into [`draw_widest`]'s copies;
/// no multiply-add is fused, so every instruction set gives the same bits.
/// On AVX-512 the inversions run eight at a time (`lanes`): the cells of a
/// replicate, or a cell's eight replicates of a whole block (swept, or, not
/// swept, with the block's words drawn in the lanes too). 2 x 10^4
/// cells of 10^4 tie groups (swept) and 2 x 10^5 of 10^5 (each cell at once),
/// 10^7 rows, one thread: 340-380 -> 227-235 us and 2.8-3.2 -> 1.5-1.7 ms a
/// replicate (Intel).
#[inline(always)]
fn draw_replicates(
    plan: &Plan,
    stratum: &Stratum,
    rows: &mut [f64],
    width: usize,
    key: [u32; 2],
    first: u32,
    fits: &mut [bool],
) {
    let cells = stratum.hi - stratum.lo;
    let swept = !stratum.by_table.is_empty();
    let count = fits.len().min(BLOCK);
    // The lanes take a whole block, whose last replicate holds every cell,
    // of rows that do not overlap (a slot's replicate is its index / width).
    #[cfg(target_arch = "x86_64")]
    let lanes = lanes::available()
        && count == BLOCK
        && width >= cells
        && rows.len() >= (BLOCK - 1) * width + cells;
    #[cfg(target_arch = "x86_64")]
    if !swept && lanes && !plan.cut.is_empty() {
        let mut sums = [0.0_f64; BLOCK];
        // SAFETY: AVX-512 is here; the plan has its cuts; the cells are the
        // plan's; every slot is inside `rows` (just checked).
        unsafe {
            let span = (stratum.lo, stratum.hi);
            lanes::draw_cells_block(plan, span, rows, width, key, first, &mut sums);
        }
        for (r, (fit, &sum)) in fits.iter_mut().zip(&sums).enumerate() {
            let out = &mut rows[r * width..r * width + cells];
            *fit = complete(&stratum.shares(), out, key, first + r as u32, sum);
        }
        return;
    }
    if !swept {
        // Each replicate whole while its cells are in cache.
        for (r, fit) in fits.iter_mut().enumerate().take(count) {
            let out = &mut rows[r * width..r * width + cells];
            let sum = draw_words(plan, stratum, out, key, first + r as u32, false);
            *fit = complete(&stratum.shares(), out, key, first + r as u32, sum);
        }
        return;
    }
    let mut sums = [0.0_f64; BLOCK];
    for (r, sum) in sums.iter_mut().enumerate().take(count) {
        let out = &mut rows[r * width..r * width + cells];
        *sum = draw_words(plan, stratum, out, key, first + r as u32, swept);
    }
    #[cfg(target_arch = "x86_64")]
    if lanes {
        // SAFETY: AVX-512 is here; the tables are the plan's; slot `(BLOCK -
        // 1) width + i` is inside `rows` for every cell `i < cells` (just
        // checked).
        unsafe { lanes::invert_block(plan, &stratum.by_table, rows, width, &mut sums) };
    }
    #[cfg(target_arch = "x86_64")]
    let by_table = if lanes {
        &[][..]
    } else {
        &stratum.by_table[..]
    };
    #[cfg(not(target_arch = "x86_64"))]
    let by_table = &stratum.by_table[..];
    let mut next = 0;
    for (entry, &(i, t)) in by_table.iter().enumerate() {
        plan.ask_ahead(by_table, entry, &mut next);
        let t = &plan.tables[t as usize];
        for (r, sum) in sums.iter_mut().enumerate().take(count) {
            let slot = &mut rows[r * width + i as usize];
            let k = plan.invert_in(t, slot.to_bits());
            *slot = k;
            *sum += k;
        }
    }
    for (r, fit) in fits.iter_mut().enumerate().take(count) {
        let out = &mut rows[r * width..r * width + cells];
        *fit = complete(&stratum.shares(), out, key, first + r as u32, sums[r]);
    }
}

/// Replicate `replicate`'s Poisson draw of each of `stratum`'s cells into
/// `out`, and their sum; when `swept`, each occupied cell's 64-bit word
/// instead (as the bits of an `f64`), and 0.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // the four words of a block, lane by lane
fn draw_words(
    plan: &Plan,
    stratum: &Stratum,
    out: &mut [f64],
    key: [u32; 2],
    replicate: u32,
    swept: bool,
) -> f64 {
    let first = stratum.lo >> 1;
    let pairs = ((stratum.hi - 1) >> 1) + 1 - first;
    #[cfg(target_arch = "x86_64")]
    let lanes = !swept && lanes::available();
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
        let w = philox_blocks16(counter, key);
        // Cell `base + 2 l + h` takes words `2 h` and `2 h + 1` of lane `l`.
        let mut words = [0_u64; 2 * LANES];
        for l in 0..LANES {
            for h in 0..2 {
                words[2 * l + h] = (u64::from(w[2 * h][l]) << 32) | u64::from(w[2 * h + 1][l]);
            }
        }
        let base = 2 * (first + group);
        let (from, to) = (base.max(stratum.lo), (base + 2 * LANES).min(stratum.hi));
        let words = &words[from - base..to - base];
        let tables = &plan.table[from..to];
        let out = &mut out[from - stratum.lo..to - stratum.lo];
        #[cfg(target_arch = "x86_64")]
        if lanes {
            // SAFETY: AVX-512 is here; the tables are the plan's.
            sum += unsafe { lanes::invert_cells(plan, tables, words, out) };
            continue;
        }
        if swept {
            for ((slot, &t), &x) in out.iter_mut().zip(tables).zip(words) {
                *slot = if t == u32::MAX {
                    0.0
                } else {
                    f64::from_bits(x)
                };
            }
            continue;
        }
        for ((slot, &t), &x) in out.iter_mut().zip(tables).zip(words) {
            *slot = if t == u32::MAX {
                0.0
            } else {
                let k = plan.invert(t as usize, x);
                sum += k;
                k
            };
        }
    }
    sum
}

mod completion;
#[cfg(target_arch = "x86_64")]
mod lanes;
#[cfg(test)]
mod tests;
