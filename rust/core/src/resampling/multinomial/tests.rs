//! The split tree, the Poisson strata and the blocks against references and
//! against each other.

use super::super::binomial::binomial;
use super::*;

#[test]
fn draws_keep_each_stratum_total_and_ignore_the_threads() {
    let counts = [5_u64, 0, 17, 300, 2, 9_000, 1, 44];
    let ends = [3, 3, 8];
    let one = multinomial_draws(&counts, &ends, 10, 33, 7, &Pool::sequential()).unwrap();
    let two = multinomial_draws(&counts, &ends, 10, 33, 7, &Pool::new(3)).unwrap();
    assert_eq!(one, two);
    for row in one.chunks(8) {
        assert_eq!(row[..3].iter().sum::<f64>(), 22.0);
        assert_eq!(row[3..].iter().sum::<f64>(), 9_347.0);
        assert_eq!(row[1], 0.0);
    }
    // Replicate 12 drawn alone is the third row above.
    let alone = multinomial_draws(&counts, &ends, 12, 1, 7, &Pool::sequential()).unwrap();
    assert_eq!(alone, one[16..24]);
}

/// The draws depth first, one scalar [`binomial`] at a time (the reference of
/// the level-by-level draws).
fn reference(
    counts: &[u64],
    seed: u64,
    replicate: u32,
    out: &mut [f64],
    lo: usize,
    hi: usize,
    m: u64,
) {
    if hi - lo == 1 {
        out[lo] = m as f64;
        return;
    }
    let mid = lo + (hi - lo) / 2;
    let left_total: u64 = counts[lo..mid].iter().sum();
    let total: u64 = counts[lo..hi].iter().sum();
    let p = if total > 0 {
        left_total as f64 / total as f64
    } else {
        0.0
    };
    let stream = Stream {
        key: key_of(seed),
        replicate,
        node: mid as u32,
    };
    let left = binomial(m, p, stream);
    reference(counts, seed, replicate, out, lo, mid, left);
    reference(counts, seed, replicate, out, mid, hi, m - left);
}

#[test]
fn level_order_draws_are_the_depth_first_draws() {
    // Means below and above 10, shares on both sides of 1/2, huge and tiny totals,
    // zero cells.
    let cases: [&[u64]; 5] = [
        &[300, 300, 70_000, 300, 3, 597, 0, 12],
        &[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
        &[5_000_000, 5_000_000, 1, 1_000_000_000_000],
        &[40, 160, 500, 500, 700, 300, 9_000, 1_000, 17],
        &[2, 0, 0, 5],
    ];
    for counts in cases {
        let total: u64 = counts.iter().sum();
        let cells = counts.len();
        for threads in [1, 2] {
            let got = multinomial_draws(counts, &[cells], 3, 45, 77, &Pool::new(threads)).unwrap();
            for (b, row) in got.chunks(cells).enumerate() {
                let mut want = vec![0.0; cells];
                reference(counts, 77, 3 + b as u32, &mut want, 0, cells, total);
                assert_eq!(row, &want[..], "{counts:?} replicate {b}");
            }
        }
    }
}

#[test]
fn strata_of_every_shape_draw_as_the_depth_first_draws() {
    // One-cell strata, an empty one, a stratum without rows, a one-cell stratum without
    // rows, cells past the last stratum (never drawn: 0), odd and even widths, inversion
    // and BTRD splits side by side in a level.
    let counts = [
        7_u64, 0, 0, 3, 900, 2, 0, 0, 0, 50_000, 1, 1, 12, 40, 40_000, 3, 5, 6, 5, 2,
    ];
    let ends = [1, 1, 4, 5, 8, 9, 15, 18];
    for threads in [1, 3] {
        let got = multinomial_draws(&counts, &ends, 5, 40, 99, &Pool::new(threads)).unwrap();
        for (b, row) in got.chunks(counts.len()).enumerate() {
            let mut want = vec![0.0; counts.len()];
            let mut lo = 0;
            for &hi in &ends {
                if hi > lo {
                    let total = counts[lo..hi].iter().sum();
                    reference(&counts, 99, 5 + b as u32, &mut want, lo, hi, total);
                }
                lo = hi;
            }
            assert_eq!(row, &want[..], "replicate {b}");
        }
    }
}

/// 400 cells of 10 to 39 rows (9,700 rows: drawn by Poisson draws and
/// completion) and a small stratum on the tree.
fn mixed_counts() -> (Vec<u64>, [usize; 2]) {
    let mut counts: Vec<u64> = (0..400).map(|i| 10 + (i % 30)).collect();
    counts.extend([3, 9, 0, 4]);
    (counts, [400, 404])
}

#[test]
fn large_strata_keep_their_totals_ignore_the_threads_and_fall_back_to_the_tree() {
    // The draws overshoot in about 0.13 % of replicates: a few of these.
    const REPLICATES: usize = 4000;
    let (counts, ends) = mixed_counts();
    let one = multinomial_draws(&counts, &ends, 0, REPLICATES, 11, &Pool::sequential()).unwrap();
    let two = multinomial_draws(&counts, &ends, 0, REPLICATES, 11, &Pool::new(3)).unwrap();
    assert_eq!(one, two);
    let alone = multinomial_draws(&counts, &ends, 17, 1, 11, &Pool::sequential()).unwrap();
    assert_eq!(alone, one[17 * 404..18 * 404]);
    let plan = Plan::new(&counts, &[(0, 400, 9_700), (400, 404, 16)])
        .unwrap()
        .unwrap();
    assert_eq!(plan.strata.len(), 1, "the small stratum keeps the tree");
    let mut fell_back = 0;
    for (b, row) in one.chunks(404).enumerate() {
        assert_eq!(row[..400].iter().sum::<f64>(), 9_700.0);
        let mut want = vec![0.0; 404];
        reference(&counts, 11, b as u32, &mut want, 400, 404, 16);
        assert_eq!(row[400..], want[400..]);
        if !plan.draw(&plan.strata[0], &mut want[..400], key_of(11), b as u32) {
            fell_back += 1;
            reference(&counts, 11, b as u32, &mut want, 0, 400, 9_700);
        }
        assert_eq!(row[..400], want[..400], "replicate {b}");
    }
    assert!(
        (1..20).contains(&fell_back),
        "{fell_back} of {REPLICATES} on the tree"
    );
}

/// A block of replicates draws what each replicate draws alone: a stratum
/// whose tables are swept in order (2,400 cells over 400 shared rates), the
/// same after a stratum of three cells on the tree (its first cell odd: a pair
/// of cells straddles the strata), and the mixed strata, whose 4,000
/// replicates hold a few drawn by the tree, in whole blocks and in a part
/// of one.
#[test]
fn a_block_draws_each_replicate_as_alone() {
    let swept: Vec<u64> = (0..2_400).map(|i| 300 + i % 400).collect();
    let odd: Vec<u64> = [7, 0, 9].into_iter().chain(swept.iter().copied()).collect();
    let (mixed, ends) = mixed_counts();
    for (counts, ends, replicates) in [
        (swept, vec![2_400], 64),
        (odd, vec![3, 2_403], 64),
        (mixed, ends.to_vec(), 4_000),
    ] {
        let m = counts.len();
        let drawing = Drawing::new(&counts, &ends, 3).unwrap();
        let plan = drawing.plan.as_ref().unwrap();
        let swept = m >= 2_400;
        assert_eq!(plan.strata[0].swept(), swept);
        let mut space = drawing.space();
        let (mut rows, mut row) = (vec![0.0; BLOCK * m], vec![0.0; m]);
        for first in (0..replicates).step_by(BLOCK).chain([replicates + 3]) {
            let count = if first > replicates { 5 } else { BLOCK };
            drawing.draw_block(first as u32, &mut rows[..count * m], m, &mut space);
            for (r, got) in rows.chunks_exact(m).take(count).enumerate() {
                drawing.draw((first + r) as u32, &mut row, &mut space);
                assert_eq!(got, row, "replicate {}", first + r);
                // Each stratum keeps its rows (the tree's replicates too).
                let mut lo = 0;
                for &end in &ends {
                    let want: u64 = counts[lo..end].iter().sum();
                    assert_eq!(got[lo..end].iter().sum::<f64>(), want as f64);
                    lo = end;
                }
            }
        }
    }
}

#[test]
fn poisson_and_completion_draw_the_multinomial_law() {
    // Mean c_i and variance c_i (1 - p_i) of 4,000 replicates, against the
    // multinomial's, within 5 standard errors.
    let (counts, ends) = mixed_counts();
    let replicates = 4_000;
    let got = multinomial_draws(&counts, &ends, 0, replicates, 3, &Pool::new(2)).unwrap();
    let n = 9_700.0;
    let b = replicates as f64;
    let mut ratio = 0.0;
    for i in 0..400 {
        let c = counts[i] as f64;
        let column: Vec<f64> = got.chunks(404).map(|r| r[i]).collect();
        let mean = column.iter().sum::<f64>() / b;
        let var = c * (1.0 - c / n);
        assert!(
            (mean - c).abs() < 5.0 * (var / b).sqrt(),
            "cell {i}: {mean}"
        );
        let sample = column.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (b - 1.0);
        ratio += sample / var / 400.0;
    }
    // The average of 400 nearly independent variance ratios: standard error
    // sqrt(2 / 4000) / 20 (the covariances follow: every total is fixed).
    assert!(
        (ratio - 1.0).abs() < 5.0 * (2.0 / b).sqrt() / 20.0,
        "{ratio}"
    );
}

#[test]
fn bad_strata_and_totals_are_errors() {
    let pool = Pool::sequential();
    assert!(multinomial_draws(&[1, 2], &[3], 0, 1, 0, &pool).is_err());
    assert!(multinomial_draws(&[1, 2], &[2, 1], 0, 1, 0, &pool).is_err());
    assert!(multinomial_draws(&[1 << 52, 1 << 52], &[2], 0, 1, 0, &pool).is_err());
    assert!(multinomial_draws(&[u64::MAX, 1], &[2], 0, 1, 0, &pool).is_err());
    assert!(multinomial_draws(&[1], &[1], u64::from(u32::MAX), 2, 0, &pool).is_err());
}
