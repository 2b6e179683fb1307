//! The grouped kernel against a plain loop over the rows.

use super::*;

/// A plain loop over the rows: the table of every (group, true, pred) seen.
fn naive(g: &[i64], t: &[i64], p: &[i64], w: Option<&[f64]>) -> GroupedConfusion {
    let mut groups: Vec<i64> = g.to_vec();
    groups.sort_unstable();
    groups.dedup();
    let mut labels: Vec<i64> = t.iter().chain(p).copied().collect();
    labels.sort_unstable();
    labels.dedup();
    let k = labels.len();
    let find = |v: &[i64], x: i64| v.binary_search(&x).unwrap_or(0);
    let mut counts = vec![0_u64; groups.len() * k * k];
    let mut sums = vec![0.0; groups.len() * k * k];
    for r in 0..g.len() {
        let at = (find(&groups, g[r]) * k + find(&labels, t[r])) * k + find(&labels, p[r]);
        counts[at] += 1;
        sums[at] += w.map_or(1.0, |w| w[r]);
    }
    GroupedConfusion {
        groups,
        labels,
        counts,
        weighted: w.map(|_| sums),
    }
}

fn rows(n: usize, seed: u64) -> (Vec<i64>, Vec<i64>, Vec<i64>, Vec<f64>) {
    let mut x = seed;
    let mut next = || {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        x >> 33
    };
    let mut g = Vec::new();
    let mut t = Vec::new();
    let mut p = Vec::new();
    let mut w = Vec::new();
    for _ in 0..n {
        g.push(-5 + (next() % 37) as i64 * 3);
        t.push(100 + (next() % 6) as i64);
        p.push(100 + (next() % 7) as i64);
        w.push((next() % 1000) as f64 / 7.0);
    }
    (g, t, p, w)
}

#[test]
fn counts_equal_a_plain_loop_on_any_thread_count() {
    let (g, t, p, _) = rows(300_000, 7);
    let want = naive(&g, &t, &p, None);
    for threads in [1, 2, 8] {
        let pool = Pool::new(threads).with_min_parallel(1);
        let got = grouped_confusion(&g, &t, &p, None, 1 << 20, &pool)
            .unwrap()
            .unwrap();
        assert_eq!(got, want);
    }
}

#[test]
fn bucketed_counts_of_a_large_table_equal_a_plain_loop() {
    let (mut g, t, p, _) = rows(200_000, 5);
    for (i, v) in g.iter_mut().enumerate() {
        *v = *v * 131 + (i % 97) as i64; // about 14,000 groups: 700,000 cells
    }
    let want = naive(&g, &t, &p, None);
    for threads in [1, 2, 8] {
        let pool = Pool::new(threads).with_min_parallel(1);
        let got = grouped_confusion(&g, &t, &p, None, 1 << 22, &pool)
            .unwrap()
            .unwrap();
        assert_eq!(got, want);
    }
}

#[test]
fn weighted_sums_are_the_same_bits_on_any_thread_count() {
    let (g, t, p, w) = rows(300_000, 11);
    let want = naive(&g, &t, &p, Some(&w));
    let one = grouped_confusion(&g, &t, &p, Some(&w), 1 << 20, &Pool::new(1))
        .unwrap()
        .unwrap();
    assert_eq!(one.counts, want.counts);
    for (a, b) in one
        .weighted
        .as_ref()
        .unwrap()
        .iter()
        .zip(want.weighted.unwrap())
    {
        assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0));
    }
    for threads in [2, 8] {
        let pool = Pool::new(threads).with_min_parallel(1);
        let got = grouped_confusion(&g, &t, &p, Some(&w), 1 << 20, &pool)
            .unwrap()
            .unwrap();
        assert_eq!(got, one);
    }
}

#[test]
fn wide_ranges_are_left_to_the_caller() {
    let g = [0_i64, i64::MAX];
    let t = [i64::MIN, 0];
    let pool = Pool::new(1);
    assert!(grouped_confusion(&g, &t, &t, None, 1 << 20, &pool)
        .unwrap()
        .is_none());
    let g = [0_i64, 1 << 20];
    let t = [0_i64, 1];
    assert!(grouped_confusion(&g, &t, &t, None, 1 << 20, &pool)
        .unwrap()
        .is_none());
    assert!(grouped_confusion(&g, &t, &t, None, 1 << 23, &pool)
        .unwrap()
        .is_some());
}

#[test]
fn bad_weights_and_lengths_are_refused() {
    let g = [1_i64, 2, 3];
    let t = [0_i64, 1, 0];
    let pool = Pool::new(1);
    let w = [1.0, f64::NAN, -1.0];
    match grouped_confusion(&g, &t, &t, Some(&w), 100, &pool) {
        Err(MetricError::InvalidWeight { index, count, .. }) => {
            assert_eq!((index, count), (1, 2))
        }
        other => panic!("{other:?}"),
    }
    let big = [f64::MAX, f64::MAX, 0.0];
    assert!(matches!(
        grouped_confusion(&g, &t, &t, Some(&big), 100, &pool),
        Err(MetricError::WeightRange { .. })
    ));
    assert!(matches!(
        grouped_confusion(&g, &t[..2], &t, None, 100, &pool),
        Err(MetricError::LengthMismatch { .. })
    ));
}
