//! The one-sided sweep: when one vector has few distinct values, its ranks
//! ride in the low bits of the other's sorted keys, and their inversions are
//! counted block by block.

use super::counts::KendallCounts;
use super::inversions::count_inversions;
use super::key_map::{ranks, KeyMap, TABLE_MAX_DISTINCT};
use super::runs::{pairs_within, run_cuts, tie_runs, visit_runs};
use crate::cpu::widest;
use crate::error::Result;
use crate::memory::check_available;
use crate::parallel::{big_vec, Pool, CHECK_ROWS};
use crate::ranking::keys::Score;
use crate::sorted_keys::sorted_keys_of;
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// The ranks of `y` as `u16` codes (order-preserving, dense), with the count
/// of each rank, when `y` has at most [`TABLE_MAX_DISTINCT`] distinct values.
/// One pass hashes each value once: each thread's share gets ids in order of
/// first sight (written per row) and counts per id. The ids then become
/// ranks by a table per share, in place.
///
/// # Errors
/// [`crate::MetricError::OutOfMemory`] when the codes, or the maps the shares
/// may grow, do not fit.
fn small_codes<Y: Score>(y: &[Y], pool: &Pool) -> Result<Option<(Vec<u16>, Vec<u64>)>> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let n = y.len();
    let parts = pool.threads().max(1);
    let size = n.div_ceil(parts).max(1);
    let gave_up = AtomicBool::new(false);
    let mut codes: Vec<u16> = big_vec(n, "the ranks of a vector")?;
    // A share's map grows to at most 2^18 slots of 12 bytes before it gives
    // up (and holds its old slots while it grows), its counts to 2^17 ids.
    check_available(
        (parts as u128) * ((1 << 18) * 12 + (1 << 17) * 12 + (1 << 17) * 8),
        "the hash maps of a vector's values",
    )?;
    let spare = codes.spare_capacity_mut().get_mut(..n).unwrap_or_default();
    let share = |(part, out): (&[Y], &mut [MaybeUninit<u16>])| -> Option<(KeyMap, Vec<u64>)> {
        let mut m = KeyMap::with_capacity(1024);
        let mut counts: Vec<u64> = Vec::new();
        for (piece, slots) in part.chunks(4096).zip(out.chunks_mut(4096)) {
            for (v, slot) in piece.iter().zip(slots) {
                let id = m.id_of(v.key()) as usize;
                if id == counts.len() {
                    counts.push(0);
                }
                if let Some(c) = counts.get_mut(id) {
                    *c += 1;
                }
                // Past u16 only when there are too many values: given up below.
                #[allow(clippy::cast_possible_truncation)]
                slot.write(id as u16);
            }
            if gave_up.load(Ordering::Relaxed) || m.len > TABLE_MAX_DISTINCT || pool.stopped() {
                gave_up.store(true, Ordering::Relaxed);
                return None;
            }
        }
        Some((m, counts))
    };
    let shares: Option<Vec<(KeyMap, Vec<u64>)>> = pool.install(|| {
        y.par_chunks(size)
            .zip(spare.par_chunks_mut(size))
            .map(share)
            .collect()
    });
    let Some(shares) = shares else {
        return Ok(None);
    };
    // SAFETY: no share gave up, so each wrote every slot of its rows: the
    // first `n` slots are initialised (`u16` needs no drop).
    unsafe { codes.set_len(n) };
    let (d, rank) = ranks(&shares.iter().map(|s| &s.0).collect::<Vec<_>>());
    if d > TABLE_MAX_DISTINCT {
        return Ok(None);
    }
    let mut counts = vec![0_u64; d];
    let mut tables: Vec<Vec<u16>> = Vec::with_capacity(shares.len());
    for (m, per_id) in &shares {
        let mut table = vec![0_u16; per_id.len()];
        for (key, id) in m.entries() {
            let r = rank.get(key);
            if let (Some(t), Some(c)) = (table.get_mut(id as usize), counts.get_mut(r as usize)) {
                // Ranks below TABLE_MAX_DISTINCT fit u16.
                #[allow(clippy::cast_possible_truncation)]
                let r = r as u16;
                *t = r;
                *c += per_id.get(id as usize).copied().unwrap_or(0);
            }
        }
        tables.push(table);
    }
    pool.install(|| {
        codes
            .par_chunks_mut(size)
            .zip(&tables)
            .for_each(|(part, table)| {
                for c in part {
                    *c = table.get(usize::from(*c)).copied().unwrap_or(0);
                }
            });
    });
    Ok(Some((codes, counts)))
}

/// A sequence element that carries a code: a `u16` code itself, or a sorted
/// `u64` key with the code in its low bits (read where it lies, with no
/// sequence of codes written out).
pub(super) trait CodeIn: Copy + Sync {
    /// The code, the bits of `mask` (which hold every code).
    fn code(self, mask: u64) -> u16;
}

impl CodeIn for u16 {
    #[inline(always)]
    fn code(self, _mask: u64) -> u16 {
        self
    }
}

impl CodeIn for u64 {
    #[inline(always)]
    fn code(self, mask: u64) -> u16 {
        #[allow(clippy::cast_possible_truncation)]
        let c = (self & mask) as u16;
        c
    }
}

/// Rows per block of [`small_alphabet_inversions`] (fixed: the count does not
/// depend on the thread count, and it is exact anyway).
const SWEEP_BLOCK: usize = 1 << 18;

/// Inversions (`i < j`, `c_i > c_j`) of a sequence of codes below `d` (each
/// the bits `mask` of an element of `codes`): each block of [`SWEEP_BLOCK`]
/// codes counts its own and keeps its histogram, then each block is weighed
/// against the histogram of all earlier blocks. A block counts by
/// sub-blocks ([`sub_block_inversions`]) up to [`SUB_BLOCK_MAX_DISTINCT`]
/// codes, else eight bits at a time ([`count_inversions`]; on an Intel guest
/// 10^7 rows with 10,001 distinct codes, the whole one-sided count on two
/// threads: 279-332 ms when a block counted bit by bit in a table of prefix
/// cells, 210-240 ms so). O(n log d + (n / block) d).
fn small_alphabet_inversions<C: CodeIn>(codes: &[C], mask: u64, d: usize, pool: &Pool) -> u128 {
    let bits = (u32::BITS
        - u32::try_from(d.saturating_sub(1))
            .unwrap_or(u32::MAX)
            .leading_zeros())
    .max(1);
    let block = |part: &[C]| -> (u128, Vec<u64>) {
        if d <= SUB_BLOCK_MAX_DISTINCT {
            let mut hist = vec![0_u64; d];
            let mut inv = 0;
            sub_block_inversions(part, mask, &mut hist, &mut inv);
            return (u128::from(inv), hist);
        }
        let mut hist = vec![0_u64; d];
        let mut ranks: Vec<u32> = Vec::with_capacity(part.len());
        for &c in part {
            let c = c.code(mask);
            ranks.push(u32::from(c));
            if let Some(h) = hist.get_mut(usize::from(c)) {
                *h += 1;
            }
        }
        let mut scratch = vec![0_u32; part.len()];
        let inv = count_inversions(&mut ranks, &mut scratch, bits, &Pool::sequential());
        (inv, hist)
    };
    let blocks: Vec<(u128, Vec<u64>)> = if pool.parallel_for(codes.len()) {
        pool.install(|| codes.par_chunks(SWEEP_BLOCK).map(block).collect())
    } else {
        codes.chunks(SWEEP_BLOCK).map(block).collect()
    };
    let mut earlier = vec![0_u64; d];
    let mut inversions = 0_u128;
    for (inv, hist) in blocks {
        inversions += inv;
        // Earlier codes above each code of this block.
        let mut above = 0_u64;
        for (e, h) in earlier.iter_mut().zip(&hist).rev() {
            inversions += u128::from(*h) * u128::from(above);
            above += *e;
            *e += *h;
        }
    }
    inversions
}

/// Codes per sub-block of [`sub_block_inversions`].
const SUB_BLOCK: usize = 256;

/// Codes compared at once in [`sub_block_inversions`] (`u16` lanes of one
/// AVX-512 register).
const LANES: usize = 32;

/// The most distinct codes [`small_alphabet_inversions`] counts by
/// sub-blocks (the table of earlier codes, rebuilt per sub-block, costs `d`
/// steps; past this [`count_inversions`] serves).
const SUB_BLOCK_MAX_DISTINCT: usize = 2048;

widest! {
    /// Inversions of `part` (codes below `hist.len()`, at most
    /// [`SWEEP_BLOCK`] of them) into `inv`, and the count of each code into
    /// `hist`. Each sub-block of [`SUB_BLOCK`] codes is weighed against the
    /// earlier ones by a table of the earlier codes above each code (rebuilt
    /// after each sub-block), and within itself by comparing each code with
    /// the codes before it [`LANES`] at a time. No later load waits on a
    /// store, unlike a count bit by bit in a table of prefix cells, whose
    /// cells near the top every row reads and writes in turn: on an Intel
    /// guest 10^7 codes below 1,001 took 80-91 ms on one thread, against
    /// 160-300 ms so.
    fn sub_block_inversions<C: CodeIn>(part: &[C], mask: u64, hist: &mut [u64], inv: &mut u64) => sub_block_inversions_portable
}

/// The loop of [`sub_block_inversions`], inlined into each variant so that
/// its comparisons vectorise for its features.
#[inline(always)]
fn sub_block_inversions_portable<C: CodeIn>(
    part: &[C],
    mask: u64,
    hist: &mut [u64],
    inv: &mut u64,
) {
    let d = hist.len();
    // Counts of at most SWEEP_BLOCK codes fit u32.
    let mut seen = vec![0_u32; d];
    let mut above = vec![0_u32; d];
    let mut total = 0_u64;
    for sub in part.chunks(SUB_BLOCK) {
        let mut padded = [0_u16; SUB_BLOCK + LANES];
        for (p, &c) in padded.iter_mut().zip(sub) {
            *p = c.code(mask);
        }
        let sub = padded.get(..sub.len()).unwrap_or(&[]);
        for &c in sub {
            total += u64::from(above.get(usize::from(c)).copied().unwrap_or(0));
        }
        // Lane l of `acc` counts, over the codes c_j of the sub-block, the
        // earlier codes above c_j at places l mod LANES: at most
        // SUB_BLOCK / LANES * SUB_BLOCK = 2048, so u16 holds it.
        let lanes = |k: usize| -> [u16; LANES] {
            padded
                .get(k * LANES..(k + 1) * LANES)
                .and_then(|w| w.try_into().ok())
                .unwrap_or([0; LANES])
        };
        let mut acc = [0_u16; LANES];
        for (j, &c) in sub.iter().enumerate() {
            let full = j / LANES;
            for k in 0..full {
                for (a, &x) in acc.iter_mut().zip(&lanes(k)) {
                    *a += u16::from(x > c);
                }
            }
            // The partial group: the places before j alone.
            let before = j % LANES;
            for (l, (a, &x)) in acc.iter_mut().zip(&lanes(full)).enumerate() {
                *a += u16::from(x > c) & u16::from(l < before);
            }
        }
        total += acc.iter().map(|&a| u64::from(a)).sum::<u64>();
        for &c in sub {
            if let Some(s) = seen.get_mut(usize::from(c)) {
                *s += 1;
            }
        }
        let mut higher = 0_u32;
        for (a, &s) in above.iter_mut().zip(&seen).rev() {
            *a = higher;
            higher += s;
        }
    }
    for (h, &s) in hist.iter_mut().zip(&seen) {
        *h = u64::from(s);
    }
    *inv = total;
}

/// Kendall counts when `y` has at most [`TABLE_MAX_DISTINCT`] distinct
/// values (and `x` any number), with `u64` keys: the key of x with its low
/// `b` bits replaced by the rank of y (`b` bits hold every rank), sorted.
/// Rows whose x keys differ only in those low bits then sort by y instead of
/// x, and count as tied in x; the runs of equal truncated keys are found on
/// the way, and when some exist their rows are read again with their full
/// keys and their counts replaced by exact ones. `None` when y has more
/// distinct values.
pub(super) fn by_one_sided<X: Score, Y: Score>(
    x: &[X],
    y: &[Y],
    pool: &Pool,
) -> Result<Option<KendallCounts>> {
    let n = x.len();
    let Some((codes, y_counts)) = small_codes(y, pool)? else {
        pool.check()?;
        return Ok(None);
    };
    pool.check()?;
    let d = y_counts.len();
    let bits = (usize::BITS - d.saturating_sub(1).leading_zeros()).max(1);
    let low = (1_u64 << bits) - 1;
    let key = |i: usize| {
        let a = x.get(i).map_or(0, |v| v.key());
        (a & !low) | u64::from(codes.get(i).copied().unwrap_or(0))
    };
    let keys: Vec<u64> = sorted_keys_of(n, key, pool)?;
    let (x_ties, x_distinct, joint_ties, shared) = prefix_runs(&keys, bits, pool);
    pool.check()?;
    let discordant = small_alphabet_inversions(&keys, low, d, pool);
    drop(keys);
    pool.check()?;
    let mut c = KendallCounts {
        n: n as u64,
        x_ties,
        y_ties: pairs_within(&y_counts),
        joint_ties,
        discordant,
        x_distinct,
        y_distinct: d as u64,
    };
    if !shared.is_empty() {
        exact_within_shared(&mut c, x, &codes, &shared, bits, d, pool);
    }
    pool.check()?;
    Ok(Some(c))
}

/// One parallel pass over sorted keys: the pairs and the runs of equal
/// `key >> bits` (ties in x), the pairs of equal keys (joint ties), and the
/// truncated keys shared by two rows or more, in order.
fn prefix_runs(keys: &[u64], bits: u32, pool: &Pool) -> (u128, u64, u128, Vec<u64>) {
    let cuts = run_cuts(keys, bits, pool);
    let piece = |w: &[usize]| -> (u128, u64, u128, Vec<u64>) {
        let (mut x_ties, mut joint) = (0_u128, 0_u128);
        let mut shared = Vec::new();
        let &[start, end] = w else {
            return (0, 0, 0, shared);
        };
        if pool.stopped() {
            return (0, 0, 0, shared);
        }
        let keys = keys.get(start..end).unwrap_or(&[]);
        let pairs = |t: usize| (t as u128) * (t as u128 - 1) / 2;
        let mut distinct = keys.len() as u64;
        for (i, j) in visit_runs(keys, bits, |_, _| {}) {
            let run = keys.get(i..j).unwrap_or(&[]);
            x_ties += pairs(run.len());
            distinct -= run.len() as u64 - 1;
            joint += tie_runs(run, |k| *k, pool).0;
            shared.extend(run.first().map(|k| k >> bits));
        }
        (x_ties, distinct, joint, shared)
    };
    let parts: Vec<(u128, u64, u128, Vec<u64>)> = if pool.parallel_for(keys.len()) {
        pool.install(|| cuts.par_windows(2).map(piece).collect())
    } else {
        cuts.windows(2).map(piece).collect()
    };
    let mut out = (0, 0, 0, Vec::new());
    for (a, b, c, d) in parts {
        out.0 += a;
        out.1 += b;
        out.2 += c;
        out.3.extend(d);
    }
    out
}

/// Replace the counts of [`by_one_sided`] within each group of rows sharing
/// a truncated x key by exact ones, from the rows' full keys: there the
/// sorted order had every row tied in x (no discordant pair, all pairs x
/// ties, joint ties by equal y rank, one distinct x).
fn exact_within_shared<X: Score>(
    c: &mut KendallCounts,
    x: &[X],
    codes: &[u16],
    shared: &[u64],
    bits: u32,
    d: usize,
    pool: &Pool,
) {
    let mut set = KeyMap::with_capacity(shared.len());
    for &p in shared {
        set.insert(p, 1);
    }
    let pick = |(cx, cc): (&[X], &[u16])| -> Vec<(u64, u64, u16)> {
        cx.iter()
            .zip(cc)
            .filter(|(v, _)| set.get(v.key() >> bits) == 1)
            .map(|(v, &code)| (v.key() >> bits, v.key(), code))
            .collect()
    };
    let mut rows: Vec<(u64, u64, u16)> = if pool.parallel_for(x.len()) {
        pool.install(|| {
            x.par_chunks(CHECK_ROWS)
                .zip(codes.par_chunks(CHECK_ROWS))
                .flat_map_iter(pick)
                .collect()
        })
    } else {
        pick((x, codes))
    };
    rows.sort_unstable();
    let pairs = |r: u128| r * r.saturating_sub(1) / 2;
    let mut i = 0;
    while let Some(&(prefix, _, _)) = rows.get(i) {
        let mut j = i;
        while rows.get(j).is_some_and(|r| r.0 == prefix) {
            j += 1;
        }
        let group = rows.get(i..j).unwrap_or(&[]);
        let len = group.len() as u128;
        // What the truncated order counted.
        let mut per_code = vec![0_u64; d];
        for r in group {
            if let Some(p) = per_code.get_mut(usize::from(r.2)) {
                *p += 1;
            }
        }
        let approx_joint: u128 = per_code.iter().map(|&k| pairs(u128::from(k))).sum();
        // The exact counts, in (full key, rank) order.
        let (true_x, runs) = tie_runs(group, |r| r.1, &Pool::sequential());
        let (true_joint, _) = tie_runs(group, |r| (r.1, r.2), &Pool::sequential());
        let ranks: Vec<u16> = group.iter().map(|r| r.2).collect();
        let true_disc = small_alphabet_inversions(&ranks, u64::MAX, d, &Pool::sequential());
        c.discordant += true_disc;
        c.x_ties = c.x_ties + true_x - pairs(len);
        c.joint_ties = c.joint_ties + true_joint - approx_joint;
        c.x_distinct = c.x_distinct + runs - 1;
        i = j;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inversions counted pair by pair.
    fn by_pairs(codes: &[u16]) -> u128 {
        let mut inv = 0_u128;
        for (j, &c) in codes.iter().enumerate() {
            inv += codes[..j].iter().filter(|&&x| x > c).count() as u128;
        }
        inv
    }

    /// Both counts (sub-blocks up to SUB_BLOCK_MAX_DISTINCT codes, bit by
    /// bit above) equal the pair count, on lengths that cut sub-blocks and
    /// lane groups anywhere, with runs of equal codes, on 1 and 3 threads.
    #[test]
    fn inversions_equal_the_pair_count() {
        let mut s = 11_u64;
        for (n, d) in [
            (0, 1),
            (1, 1),
            (300, 1),
            (257, 2),
            (1000, 5),
            (3000, 1001),
            (2500, SUB_BLOCK_MAX_DISTINCT),
            (2500, SUB_BLOCK_MAX_DISTINCT + 1),
            (4000, 60_000),
        ] {
            let codes: Vec<u16> = (0..n)
                .map(|i| {
                    s = s
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    // Runs: every third code repeats its predecessor's.
                    let v = if i % 3 == 2 {
                        i / 3
                    } else {
                        (s >> 33) as usize
                    };
                    u16::try_from(v % d).unwrap()
                })
                .collect();
            let want = by_pairs(&codes);
            // The codes in the low 16 bits of keys whose high bits vary.
            let keys: Vec<u64> = codes
                .iter()
                .enumerate()
                .map(|(i, &c)| ((i as u64 * 0x9E37_79B9) << 16) | u64::from(c))
                .collect();
            for threads in [1, 3] {
                let pool = Pool::new(threads).with_min_parallel(0);
                assert_eq!(
                    small_alphabet_inversions(&codes, u64::MAX, d, &pool),
                    want,
                    "n {n} d {d}"
                );
                assert_eq!(
                    small_alphabet_inversions(&keys, 0xFFFF, d, &pool),
                    want,
                    "n {n} d {d}"
                );
            }
            let mut hist = vec![0_u64; d];
            let mut inv = 0;
            if d <= SUB_BLOCK_MAX_DISTINCT && n > 0 {
                sub_block_inversions(&codes, u64::MAX, &mut hist, &mut inv);
                assert_eq!(u128::from(inv), want);
                assert_eq!(hist.iter().sum::<u64>(), n as u64);
            }
        }
    }
}
