//! The binned one-vs-rest kernel's splits of the work against one thread's.

/// The rows split between threads give each column's groups of one thread
/// (the columns' split), and name the same first score outside [0, 1].
#[test]
fn the_row_split_counts_as_one_thread() {
    use super::binned_one_vs_rest;
    use crate::parallel::Pool;
    use crate::ranking::score_matrix::Matrix;
    let (n, k) = (3 * super::CHUNK_ROWS + 17, 4);
    let mut next = crate::random::lcg(11);
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    let mut values: Vec<f32> = (0..n * k)
        .map(|_| (next() % 1001) as f32 / 1000.0)
        .collect();
    #[allow(clippy::cast_possible_truncation)]
    let codes: Vec<u32> = (0..n).map(|_| (next() % 4) as u32).collect();
    let run = |values: &[f32], threads: usize| {
        let pool = Pool::new(threads).with_min_parallel(1);
        let m = Matrix {
            values,
            n_cols: k,
            column_major: false,
        };
        binned_one_vs_rest(&codes, m, None, 64, &pool)
    };
    let one = run(&values, 1).unwrap();
    assert_eq!(one.len(), k);
    assert!(one.iter().all(|g| g.n_pos.iter().sum::<u64>() > 0));
    for threads in [2, 3] {
        assert_eq!(run(&values, threads).unwrap(), one);
    }
    // Two scores outside [0, 1]: the first in row order is named, whatever the split.
    values[(n - 5) * k + 1] = -0.25;
    values[(n / 2 + 3) * k + 2] = f32::NAN;
    for threads in [1, 2, 3] {
        let err = run(&values, threads).unwrap_err().to_string();
        assert!(err.contains(&format!("y_proba[{}, 2]", n / 2 + 3)), "{err}");
    }
}

/// Batches added into dense tables hold, cell by cell, what each batch's
/// groups hold summed (the positive and negative weights too, in the same
/// order), whatever the thread count; a refused batch or tables of another
/// size leave the tables as they were.
#[test]
fn dense_tables_add_up_the_groups_of_each_batch() {
    use super::{add_binned_one_vs_rest, binned_one_vs_rest, DenseTables};
    use crate::parallel::Pool;
    use crate::ranking::score_matrix::Matrix;
    let (n, k, bins) = (2 * super::CHUNK_ROWS + 5, 3, 32_u32);
    let cells = bins as usize + 1;
    let mut next = crate::random::lcg(5);
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    let values: Vec<f64> = (0..n * k)
        .map(|_| (next() % 4097) as f64 / 4096.0)
        .collect();
    #[allow(clippy::cast_possible_truncation)]
    let codes: Vec<u32> = (0..n).map(|_| (next() % 3) as u32).collect();
    #[allow(clippy::cast_precision_loss)]
    let weight: Vec<f64> = (0..n).map(|_| (next() % 1000) as f64 / 7.0).collect();
    let half = n / 2;
    fn matrix(rows: std::ops::Range<usize>, values: &[f64], k: usize) -> Matrix<'_, f64> {
        Matrix {
            values: &values[rows.start * k..rows.end * k],
            n_cols: k,
            column_major: false,
        }
    }
    for weighted in [false, true] {
        let w_size = if weighted { k * cells } else { 0 };
        let w = |rows: std::ops::Range<usize>| weighted.then(|| &weight[rows]);
        let mut want = (vec![0_u64; k * cells], vec![0_u64; k * cells]);
        let mut want_w = (vec![0.0; w_size], vec![0.0; w_size]);
        for rows in [0..half, half..n] {
            let pool = Pool::new(1);
            let groups = binned_one_vs_rest(
                &codes[rows.clone()],
                matrix(rows.clone(), &values, k),
                w(rows),
                bins,
                &pool,
            )
            .unwrap();
            for (col, g) in groups.iter().enumerate() {
                for (j, v) in g.values.iter().enumerate() {
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    let at = col * cells + (v * f64::from(bins)) as usize;
                    want.0[at] += g.n_pos[j] + g.n_neg[j];
                    want.1[at] += g.n_pos[j];
                    if weighted {
                        want_w.0[at] += g.w_pos[j];
                        want_w.1[at] += g.w_neg[j];
                    }
                }
            }
        }
        for threads in [1, 2, 3] {
            let pool = Pool::new(threads).with_min_parallel(1);
            let (mut all, mut pos) = (vec![0_u64; k * cells], vec![0_u64; k * cells]);
            let (mut w_pos, mut w_neg) = (vec![0.0; w_size], vec![0.0; w_size]);
            for rows in [0..half, half..n] {
                let out = DenseTables {
                    all: &mut all,
                    pos: &mut pos,
                    w_pos: &mut w_pos,
                    w_neg: &mut w_neg,
                };
                let c = &codes[rows.clone()];
                add_binned_one_vs_rest(
                    c,
                    matrix(rows.clone(), &values, k),
                    w(rows),
                    bins,
                    out,
                    &pool,
                )
                .unwrap();
            }
            assert_eq!((&all, &pos), (&want.0, &want.1), "{threads} threads");
            assert_eq!(
                (&w_pos, &w_neg),
                (&want_w.0, &want_w.1),
                "{threads} threads"
            );
            // A batch with a score outside [0, 1], and tables one column short: refused, the
            // tables as they were.
            let mut bad = values.clone();
            bad[7 * k + 2] = 1.5;
            let before = (all.clone(), pos.clone(), w_pos.clone(), w_neg.clone());
            let out = DenseTables {
                all: &mut all,
                pos: &mut pos,
                w_pos: &mut w_pos,
                w_neg: &mut w_neg,
            };
            let err =
                add_binned_one_vs_rest(&codes, matrix(0..n, &bad, k), w(0..n), bins, out, &pool);
            assert!(err.unwrap_err().to_string().contains("y_proba[7, 2]"));
            let short = cells * (k - 1);
            let out = DenseTables {
                all: &mut all[..short],
                pos: &mut pos[..short],
                w_pos: &mut [],
                w_neg: &mut [],
            };
            assert!(add_binned_one_vs_rest(
                &codes,
                matrix(0..n, &values, k),
                None,
                bins,
                out,
                &pool
            )
            .is_err());
            assert_eq!(before, (all, pos, w_pos, w_neg));
        }
    }
}

/// Every layout and score type bins as a plain count does (`floor(score *
/// bins)`, 1.0 in the last bin), scores on the bins' edges and next to them
/// included; a NaN in a column-major matrix is named as in a row-major one.
#[test]
fn binned_counts_match_a_plain_count() {
    use super::binned_one_vs_rest;
    use crate::parallel::Pool;
    use crate::ranking::score_matrix::Matrix;
    use crate::ranking::Score;
    fn check<X: Score>(rows: &[Vec<X>], codes: &[u32], bins: u32) {
        let k = rows[0].len();
        let row_major: Vec<X> = rows.iter().flatten().copied().collect();
        let col_major: Vec<X> = (0..k)
            .flat_map(|c| rows.iter().map(move |r| r[c]))
            .collect();
        for (values, column_major) in [(&row_major, false), (&col_major, true)] {
            for threads in [1, 2] {
                let pool = Pool::new(threads).with_min_parallel(1);
                let m = Matrix {
                    values,
                    n_cols: k,
                    column_major,
                };
                let groups = binned_one_vs_rest(codes, m, None, bins, &pool).unwrap();
                for (col, g) in groups.iter().enumerate() {
                    let mut want = std::collections::BTreeMap::<u64, (u64, u64)>::new();
                    for (row, &code) in rows.iter().zip(codes) {
                        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                        let cell = ((row[col].to_f64() * f64::from(bins)).floor() as u64)
                            .min(u64::from(bins));
                        let e = want.entry(cell).or_default();
                        if code as usize == col {
                            e.0 += 1;
                        } else {
                            e.1 += 1;
                        }
                    }
                    #[allow(clippy::cast_precision_loss)]
                    let values: Vec<f64> =
                        want.keys().map(|&c| c as f64 / f64::from(bins)).collect();
                    assert_eq!(g.values, values, "{bins} bins, column-major {column_major}");
                    assert_eq!(g.n_pos, want.values().map(|v| v.0).collect::<Vec<_>>());
                    assert_eq!(g.n_neg, want.values().map(|v| v.1).collect::<Vec<_>>());
                }
            }
        }
    }
    let n = super::CHUNK_ROWS + 300;
    let mut next = crate::random::lcg(3);
    for bins in [1_u32, 3, 7, 10, 1000, 1 << 16] {
        // Edges b / bins, their neighbours one step either side, 0, 1 and others.
        #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
        let mut score = || -> f64 {
            let b = (next() % (u64::from(bins) + 1)) as f64 / f64::from(bins);
            match next() % 4 {
                0 => b,
                1 => f64::from_bits(b.to_bits().saturating_add(1)).min(1.0),
                2 => f64::from_bits(b.to_bits().saturating_sub(1)).max(0.0),
                _ => (next() % 1_000_001) as f64 / 1e6,
            }
        };
        let rows: Vec<Vec<f64>> = (0..n).map(|_| (0..3).map(|_| score()).collect()).collect();
        #[allow(clippy::cast_possible_truncation)]
        let codes: Vec<u32> = (0..n).map(|i| (i % 3) as u32).collect();
        check(&rows, &codes, bins);
        #[allow(clippy::cast_possible_truncation)]
        let rows32: Vec<Vec<f32>> = rows
            .iter()
            .map(|r| r.iter().map(|&v| v as f32).collect())
            .collect();
        check(&rows32, &codes, bins);
    }
    // A NaN and a negative score: the first in row order is named in either layout.
    let (n, k) = (super::CHUNK_ROWS + 9, 2);
    let mut rows = vec![vec![0.5_f32; k]; n];
    rows[n - 3][0] = f32::NAN;
    rows[n - 7][1] = -1.0;
    let codes = vec![0_u32; n];
    for column_major in [false, true] {
        let values: Vec<f32> = if column_major {
            (0..k)
                .flat_map(|c| rows.iter().map(move |r| r[c]))
                .collect()
        } else {
            rows.iter().flatten().copied().collect()
        };
        let m = Matrix {
            values: &values,
            n_cols: k,
            column_major,
        };
        let err = binned_one_vs_rest(&codes, m, None, 16, &Pool::new(2).with_min_parallel(1));
        assert!(err
            .unwrap_err()
            .to_string()
            .contains(&format!("y_proba[{}, 1]", n - 7)));
    }
}
