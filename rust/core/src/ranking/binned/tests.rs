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
