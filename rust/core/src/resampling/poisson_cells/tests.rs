//! The tables, the guided inversion and Lemire's completion words against plain
//! references.

use super::completion::{below, uniform_below};
use super::*;
use crate::random::key_of;
use crate::random::{philox4x32_10, CELL_COMPLETIONS};

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

/// A plan of 3,200 cells whose rates run from below 1 to past 10^4 (tables
/// whose guides leave one step, or several in their tails).
fn rates_from_below_one() -> Plan {
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
    Plan::new(&counts, &[(0, 3_200, total)]).unwrap().unwrap()
}

#[test]
fn the_guided_inversion_is_the_plain_search() {
    let plan = rates_from_below_one();
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    for t in 0..plan.tables.len() {
        let cdf = &plan.cdf[plan.start[t]..plan.start[t + 1]];
        let last = cdf.len() - 1;
        // Uniform words, the words at each guide bucket's ends and beside
        // them, and the words beside each entry's own boundary.
        let shift = plan.tables[t].shift;
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
                plan.tables[t].low + plain as f64,
                "table {t}"
            );
        }
    }
    // Large tables each of one cell: no table order.
    assert!(plan.strata[0].by_table.is_empty());
}

/// [`below`] is `floor(x n / 2^64)`, refused exactly when `x n mod 2^64`
/// falls below `2^64 mod n` (computed here by `u128` division), at the
/// extremes of the words and the totals; the word 0 is refused unless
/// `n` is a power of two.
#[test]
fn below_is_lemires_multiplication() {
    let mut next = crate::random::lcg(5);
    let totals = [1_u64, 3, 1024, 10_000_000, (1 << 53) - 1, 1 << 40];
    for &n in &totals {
        let mut words = vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 63];
        words.extend((0..2000).map(|_| next()));
        let limit = ((1_u128 << 64) % u128::from(n)) as u64;
        // The words just past each refused run of a value: low half 0.
        words.extend((1..50_u64).map(|v| ((u128::from(v) << 64).div_ceil(u128::from(n))) as u64));
        for x in words {
            let product = u128::from(x) * u128::from(n);
            let want = ((product as u64) >= limit).then_some((product >> 64) as u64);
            assert_eq!(below(x, n), want, "x {x} n {n}");
            if let Some(v) = want {
                assert!(v < n);
            }
        }
        assert_eq!(below(0, n).is_none(), !n.is_power_of_two(), "n {n}");
    }
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
    // A block of replicates at once, as the sweep draws it and cell by cell.
    let block = |plan: &Plan| {
        let mut rows = vec![0.0; BLOCK * 20_000];
        let mut fits = [false; BLOCK];
        plan.draw_block(&plan.strata[0], &mut rows, 20_000, key_of(9), 8, &mut fits);
        (fits, rows.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
    };
    let (swept, swept_block) = (draws(&plan), block(&plan));
    plan.strata[0].by_table.clear();
    assert_eq!(swept, draws(&plan));
    assert_eq!(swept_block, block(&plan));
    // With the cuts (a plan whose stratum is not swept builds them), which
    // the lanes read beside the guide.
    #[cfg(target_arch = "x86_64")]
    {
        plan.cut = cuts(&plan.tables, &plan.guide, &plan.cdf).unwrap();
        assert_eq!(swept, draws(&plan));
        assert_eq!(swept_block, block(&plan));
    }
    assert!(swept.iter().filter(|(fits, _)| *fits).count() > 15);
}

/// The AVX-512 lanes draw what [`Plan::invert`] draws, cell by cell: eight
/// cells of their own tables (empty cells among them, and runs whose length
/// is not a multiple of eight), and one cell of eight replicates at a time,
/// over tables from rates below 1 to past 10^4 whose guides leave one step
/// or several.
#[cfg(target_arch = "x86_64")]
#[test]
fn the_lanes_draw_the_plain_inversion() {
    if !lanes::available() {
        return; // this CPU has no AVX-512: the lanes are never taken
    }
    let mut plan = rates_from_below_one();
    let n_tables = plan.tables.len() as u64;
    let mut next = crate::random::lcg(11);
    let mut word = move || (next() << 33) ^ (next() << 2) ^ next();
    let mut set_aside = 0;
    // The guides' weights read after their entries (a plan of swept strata
    // keeps no cuts), then beside them.
    let with_cuts = std::mem::take(&mut plan.cut);
    assert_eq!(
        with_cuts,
        cuts(&plan.tables, &plan.guide, &plan.cdf).unwrap()
    );
    for (n, cut) in [0, 1, 7, 8, 9, 63, 64, 65, 200, 1_000, 1_000]
        .into_iter()
        .zip([false; 10].into_iter().chain([true]))
    {
        if cut {
            plan.cut = with_cuts.clone();
        }
        let tables: Vec<u32> = (0..n)
            .map(|_| {
                let t = word() % (n_tables + 1);
                if t == n_tables {
                    u32::MAX
                } else {
                    t as u32
                }
            })
            .collect();
        let words: Vec<u64> = (0..n).map(|_| word()).collect();
        let mut out = vec![f64::NAN; n];
        // SAFETY: AVX-512 (checked above); the tables are the plan's.
        let sum = unsafe { lanes::invert_cells(&plan, &tables, &words, &mut out) };
        let want: Vec<f64> = tables
            .iter()
            .zip(&words)
            .map(|(&t, &x)| {
                if t == u32::MAX {
                    0.0
                } else {
                    plan.invert(t as usize, x)
                }
            })
            .collect();
        assert_eq!(out, want, "{n} cells");
        assert_eq!(sum, want.iter().sum::<f64>());
        // The lanes that searched on past the guide's one step.
        set_aside += tables
            .iter()
            .zip(&words)
            .filter(|&(&t, &x)| {
                t != u32::MAX && {
                    let (from, shift) =
                        (plan.tables[t as usize].guide, plan.tables[t as usize].shift);
                    plan.guide[from as usize + ((x >> 11) >> shift) as usize] >> 30 >= 2
                }
            })
            .count();
    }
    assert!(set_aside > 5, "{set_aside} lanes searched on");
    // The search of the lanes set aside, eight weights at a time, on every
    // table's words (those of one step or none as well: the same answer).
    let mut long_steps = 0;
    for t in 0..plan.tables.len() {
        for _ in 0..3_000 {
            let x = word();
            // SAFETY: AVX-512 (checked above).
            let got = unsafe { lanes::invert_long(&plan, t, x) };
            assert_eq!(got.to_bits(), plan.invert(t, x).to_bits(), "table {t}");
            let (from, shift) = (plan.tables[t].guide, plan.tables[t].shift);
            let entry = plan.guide[from as usize + ((x >> 11) >> shift) as usize];
            let base = plan.tables[t].low + f64::from(entry & GUIDE_ENTRY);
            long_steps += usize::from(got - base >= 8.0);
        }
    }
    assert!(long_steps > 0, "no search passed eight weights");
    // One cell of eight replicates: 300 cells over every table, rows wider
    // than the cells.
    let (cells, width) = (300, 310);
    let by_table: Vec<(u32, u32)> = (0..cells as u32)
        .map(|i| (i, (word() % n_tables) as u32))
        .collect();
    let mut rows: Vec<f64> = (0..BLOCK * width).map(|_| f64::from_bits(word())).collect();
    let before = rows.clone();
    let mut sums = [3.0; BLOCK];
    // SAFETY: AVX-512 (checked above); the tables are the plan's; `rows`
    // holds every replicate's cells.
    unsafe { lanes::invert_block(&plan, &by_table, &mut rows, width, &mut sums) };
    let mut want_sums = [3.0; BLOCK];
    let mut want = before.clone();
    for &(i, t) in &by_table {
        for (r, sum) in want_sums.iter_mut().enumerate() {
            let slot = r * width + i as usize;
            want[slot] = plan.invert(t as usize, before[slot].to_bits());
            *sum += want[slot];
        }
    }
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&rows), bits(&want));
    assert_eq!(sums, want_sums);
}

/// The completion rows, taken three groups at a time, land where a plain
/// reference puts them: each row's word from its own scalar Philox block, its
/// value by [`below`] (or [`uniform_below`]) and its cell by a binary search of
/// the prefix sums, not the guide. Row counts from none to many groups, and
/// strata that start past cell 0.
#[test]
fn the_completions_are_the_plain_rows() {
    let mut next = crate::random::lcg(23);
    let counts: Vec<u64> = (0..6_000).map(|_| next() % 700).collect();
    let key = key_of(31);
    for (lo, hi) in [(0_usize, 6_000_usize), (1_234, 5_000), (2_501, 4_240)] {
        let total: u64 = counts[lo..hi].iter().sum();
        let plan = Plan::new(&counts, &[(lo, hi, total)]).unwrap().unwrap();
        let stratum = &plan.strata[0];
        assert_eq!((stratum.lo, stratum.hi, stratum.total), (lo, hi, total));
        for (replicate, extra) in [0_u32, 1, 31, 32, 33, 64, 95, 96, 97, 130, 1_000, 4_321]
            .into_iter()
            .enumerate()
        {
            let replicate = replicate as u32 * 7 + 1;
            let mut out = vec![0.0; hi - lo];
            let sum = (total - u64::from(extra)) as f64;
            assert!(complete(&stratum.shares(), &mut out, key, replicate, sum));
            let mut want = vec![0.0; hi - lo];
            for row in 0..extra {
                let w = philox4x32_10([row / 2, replicate, lo as u32, CELL_COMPLETIONS], key);
                let h = (row % 2) as usize;
                let x = (u64::from(w[2 * h]) << 32) | u64::from(w[2 * h + 1]);
                let v = below(x, total)
                    .unwrap_or_else(|| uniform_below(&stratum.shares(), key, row, replicate));
                // The cell whose rows `[prefix[k], prefix[k + 1])` hold `v`.
                let k = stratum.prefix.partition_point(|&p| p <= v) - 1;
                want[k] += 1.0;
            }
            assert_eq!(out, want, "stratum {lo}..{hi}, {extra} rows");
            assert_eq!(out.iter().sum::<f64>(), f64::from(extra));
        }
        // More rows than the stratum holds: refused.
        assert!(!complete(
            &stratum.shares(),
            &mut vec![0.0; hi - lo],
            key,
            1,
            total as f64 + 1.0
        ));
    }
}

/// A block of replicates drawn cell by cell with the replicates in the lanes
/// (strata of few tables, not swept) draws what each replicate drawn alone
/// draws, bit for bit, with the same overshoots: strata that start and end at
/// odd cells, empty cells among them, rows wider than the stratum.
#[test]
fn a_block_in_the_lanes_draws_each_replicate_alone() {
    let n = 9_001;
    let counts: Vec<u64> = (0..n as u64)
        .map(|i| if i % 97 == 5 { 0 } else { 20 + (i * 13) % 60 })
        .collect();
    let ends = [(0, 3_001), (3_001, n)];
    let strata: Vec<_> = ends
        .iter()
        .map(|&(lo, hi)| (lo, hi, counts[lo..hi].iter().sum::<u64>()))
        .collect();
    let plan = Plan::new(&counts, &strata).unwrap().unwrap();
    assert_eq!(plan.strata.len(), 2);
    for s in &plan.strata {
        assert!(!s.swept());
        let cells = s.hi - s.lo;
        let width = cells + 3;
        for first in [0_u32, 8, 4_000_000_000] {
            let mut rows = vec![f64::NAN; BLOCK * width];
            let mut fits = [false; BLOCK];
            plan.draw_block(s, &mut rows, width, key_of(5), first, &mut fits);
            for r in 0..BLOCK {
                let mut alone = vec![f64::NAN; cells];
                let fit = plan.draw(s, &mut alone, key_of(5), first + r as u32);
                assert_eq!(fits[r], fit, "replicate {r} from {first}");
                if fit {
                    let got = &rows[r * width..r * width + cells];
                    assert!(got
                        .iter()
                        .zip(&alone)
                        .all(|(a, b)| a.to_bits() == b.to_bits()));
                    assert_eq!(got.iter().sum::<f64>(), s.total as f64);
                }
                // The slots past the stratum are never written.
                assert!(rows[r * width + cells..(r + 1) * width]
                    .iter()
                    .all(|x| x.is_nan()));
            }
        }
    }
}
