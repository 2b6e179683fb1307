//! The hash tables against groups counted by a map: growth, giving up past either limit, the
//! checked rows of binary probabilities, one-sided and integer keys, the estimate.

use super::*;
use crate::random::lcg;
use ndarray::Array2;
use std::collections::BTreeMap;

fn view(v: &[f64]) -> ArrayView1<'_, f64> {
    ArrayView1::from(v)
}

/// Groups counted by a map, as `hashed_groups` gives them.
fn counted<X: Score>(positive: &[bool], score: &[X]) -> Vec<(u64, u64, u64)> {
    let mut m: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    for (&p, &s) in positive.iter().zip(score) {
        let e = m.entry(s.key()).or_default();
        e.0 += u64::from(p);
        e.1 += u64::from(!p);
    }
    m.into_iter().map(|(k, (p, n))| (k, p, n)).collect()
}

#[test]
fn tables_grow_from_the_estimate_and_give_up_past_the_limit() {
    let n = 300_000;
    let step = n / SAMPLE;
    let mut next = lcg(7);
    let positive: Vec<bool> = (0..n).map(|_| next().is_multiple_of(3)).collect();
    // The sampled rows hold ten values (the estimate is ten), the others
    // `elsewhere` more.
    #[allow(clippy::cast_precision_loss)]
    let mut scores = |elsewhere: u64| -> Vec<f64> {
        (0..n)
            .map(|i| {
                if i % step == 0 && i / step < SAMPLE {
                    (next() % 10) as f64
                } else {
                    (next() % elsewhere) as f64 + 0.5
                }
            })
            .collect()
    };
    let (grown, many) = (scores(20_000), scores(1 << 40));
    assert_eq!(few_distinct(view(&grown), RANKING_GROUPS), Some(10));
    assert_eq!(few_distinct(view(&many), TIE_GROUPS), Some(10));
    let want = counted(&positive, &grown);
    assert!(want.len() > 20_000);
    for pool in [Pool::new(1), Pool::new(2).with_min_parallel(0)] {
        // 20,000 more values: the tables grow from 1024 slots and count them all.
        assert_eq!(
            hashed_groups(&positive, view(&grown), RANKING_GROUPS, &pool).unwrap(),
            Some(want.clone())
        );
        // Past the limit's values: the tables give up.
        for limit in [RANKING_GROUPS, TIE_GROUPS] {
            let got = hashed_groups(&positive, view(&many), limit, &pool).unwrap();
            assert_eq!(got, None);
        }
    }
}

/// Binary probabilities rounded to three decimals, row-major and
/// column-major, float64 and float32: the checked count gives the groups
/// of the second column; one bad row anywhere (an entry outside [0, 1],
/// NaN, a sum off by more than `atol`) makes it decline, and a sum off by
/// `atol` exactly passes, as the probability pass's check.
#[test]
fn checked_rows_count_the_second_column_or_decline() {
    let n = 150_000;
    let mut next = lcg(5);
    let positive: Vec<bool> = (0..n).map(|_| next().is_multiple_of(3)).collect();
    #[allow(clippy::cast_precision_loss)]
    let col: Vec<f64> = (0..n).map(|_| (next() % 1001) as f64 / 1000.0).collect();
    let rows = Array2::from_shape_fn((n, 2), |(i, j)| if j == 1 { col[i] } else { 1.0 - col[i] });
    let want = counted(&positive, &col);
    let atol = 2e-6;
    let pools = [Pool::new(1), Pool::new(2).with_min_parallel(0)];
    for pool in &pools {
        let by_rows = hashed_binary_proba_groups(&positive, rows.view(), atol, pool).unwrap();
        assert_eq!(by_rows, Some(want.clone()));
        // The same rows in column-major order (the transpose's standard layout, transposed).
        let by_columns = rows.t().as_standard_layout().into_owned().reversed_axes();
        assert!(by_columns.t().is_standard_layout() && !by_columns.is_standard_layout());
        let got = hashed_binary_proba_groups(&positive, by_columns.view(), atol, pool);
        assert_eq!(got.unwrap(), Some(want.clone()));
        #[allow(clippy::cast_possible_truncation)]
        let narrow = rows.mapv(|x| x as f32);
        let col32: Vec<f32> = narrow.column(1).to_vec();
        let got = hashed_binary_proba_groups(&positive, narrow.view(), 1e-6, pool);
        assert_eq!(got.unwrap(), Some(counted(&positive, &col32)));
        for (at, bad) in [
            (0, [-0.25, 1.25]),
            (n / 2, [1.5, -0.5]),
            (n - 1, [f64::NAN, 1.0]),
            (77_777, [0.5, 0.5 + 3e-6]),
            (12_345, [f64::INFINITY, 0.0]),
        ] {
            let mut wrong = rows.clone();
            wrong[[at, 0]] = bad[0];
            wrong[[at, 1]] = bad[1];
            let got = hashed_binary_proba_groups(&positive, wrong.view(), atol, pool);
            assert_eq!(got.unwrap(), None, "row {at}: {bad:?}");
        }
        // Off by 2^-20, the tolerance itself: passes, and is counted.
        let mut edge = rows.clone();
        edge[[9, 0]] = 0.5;
        edge[[9, 1]] = 0.5 + 2_f64.powi(-20);
        let mut col = col.clone();
        col[9] = edge[[9, 1]];
        let got = hashed_binary_proba_groups(&positive, edge.view(), 2_f64.powi(-20), pool);
        assert_eq!(got.unwrap(), Some(counted(&positive, &col)));
    }
}

/// Binary probabilities whose sampled rows hold ten scores and whose
/// other rows hold about 2^17 more: the estimate says few, the tables
/// overflow while counting, and `binary_proba_groups` checks the rows and
/// sorts the column (without hashing it again) into the groups that
/// `score_groups` gives its copy, row- and column-major, on one thread
/// and on two; a bad row on that path still declines.
#[test]
fn checked_rows_past_the_tables_room_are_sorted() {
    use crate::ranking::{binary_proba_groups, score_groups};
    let n = 2 * TIE_GROUPS + 100_000;
    let step = n / SAMPLE;
    let mut next = lcg(9);
    let positive: Vec<bool> = (0..n).map(|_| next().is_multiple_of(3)).collect();
    #[allow(clippy::cast_precision_loss)]
    let col: Vec<f64> = (0..n)
        .map(|i| {
            let few = i % step == 0 && i / step < SAMPLE;
            let k = if few { next() % 10 } else { next() % (1 << 22) };
            k as f64 / f64::from(1 << 22)
        })
        .collect();
    assert_eq!(few_distinct(view(&col), TIE_GROUPS), Some(10));
    let rows = Array2::from_shape_fn((n, 2), |(i, j)| if j == 1 { col[i] } else { 1.0 - col[i] });
    let by_columns = rows.t().as_standard_layout().into_owned().reversed_axes();
    let want = score_groups(&positive, &col, None, &Pool::new(1)).unwrap();
    assert!(want.values.len() > TIE_GROUPS);
    for pool in &[Pool::new(1), Pool::new(2).with_min_parallel(0)] {
        assert_eq!(
            hashed_binary_proba_groups(&positive, rows.view(), 2e-6, pool).unwrap(),
            None
        );
        for matrix in [rows.view(), by_columns.view()] {
            let got = binary_proba_groups(&positive, matrix, f64::NAN, pool).unwrap();
            assert_eq!(got.as_ref(), Some(&want));
        }
        let mut wrong = rows.clone();
        wrong[[n - 3, 0]] = 1.5;
        let got = binary_proba_groups(&positive, wrong.view(), f64::NAN, pool).unwrap();
        assert_eq!(got, None);
    }
}

/// Scores that follow the outcome (values only negatives reach, values
/// only positives reach, and shared ones): slots with one count at 0 are
/// found, not taken for free ones, on one thread and on two.
#[test]
fn one_sided_scores_are_counted_by_their_key() {
    let n = 200_000;
    let mut next = lcg(11);
    let positive: Vec<bool> = (0..n).map(|_| next().is_multiple_of(2)).collect();
    #[allow(clippy::cast_precision_loss)]
    let score: Vec<f64> = positive
        .iter()
        .map(|&p| (next() % 600 + if p { 400 } else { 0 }) as f64 / 1000.0)
        .collect();
    let want = counted(&positive, &score);
    assert_eq!(want.len(), 1000);
    assert!(want.iter().any(|g| g.1 == 0) && want.iter().any(|g| g.2 == 0));
    for pool in [Pool::new(1), Pool::new(2).with_min_parallel(0)] {
        assert_eq!(
            hashed_groups(&positive, view(&score), RANKING_GROUPS, &pool).unwrap(),
            Some(want.clone())
        );
    }
}

/// A column of a row-major matrix, read where it lies (a stride of three
/// values a row), counts the groups its contiguous copy counts.
#[test]
fn a_strided_column_is_counted_as_its_copy() {
    let n = 150_000;
    let mut next = lcg(5);
    let positive: Vec<bool> = (0..n).map(|_| next().is_multiple_of(2)).collect();
    #[allow(clippy::cast_precision_loss)]
    let matrix: Vec<f64> = (0..3 * n).map(|_| (next() % 500) as f64 / 100.0).collect();
    let column = ArrayView1::from(matrix.as_slice())
        .slice_move(s![1..])
        .slice_move(s![..;3]);
    assert!(column.as_slice().is_none() && column.len() == n);
    let copy = column.to_vec();
    let want = counted(&positive, &copy);
    assert_eq!(want.len(), 500);
    for pool in [Pool::new(1), Pool::new(2).with_min_parallel(0)] {
        assert_eq!(
            hashed_groups(&positive, column, TIE_GROUPS, &pool).unwrap(),
            Some(want.clone())
        );
    }
}

/// Integer scores whose key is 0 (a `u64` score of 0, an `i64` of
/// `i64::MIN`): a free slot also holds key 0, so the slot is told taken
/// by its counts, and every row lands in the one group of its score, on
/// one thread and on two, in blocks that straddle the chunks.
#[test]
fn integer_scores_with_the_key_of_a_free_slot() {
    let n = 3 * CHUNK + 7;
    let mut next = lcg(13);
    let positive: Vec<bool> = (0..n).map(|_| next().is_multiple_of(3)).collect();
    let small: Vec<u64> = (0..n).map(|_| next() % 40).collect();
    let signed: Vec<i64> = small
        .iter()
        .map(|&v| {
            if v < 5 {
                i64::MIN
            } else {
                v.cast_signed() - 20
            }
        })
        .collect();
    assert_eq!(0_u64.key(), 0);
    assert_eq!(i64::MIN.key(), 0);
    for pool in [Pool::new(1), Pool::new(2).with_min_parallel(0)] {
        let want = counted(&positive, &small);
        assert_eq!(want.len(), 40);
        let got = hashed_groups(
            &positive,
            ArrayView1::from(small.as_slice()),
            RANKING_GROUPS,
            &pool,
        );
        assert_eq!(got.unwrap(), Some(want));
        let want = counted(&positive, &signed);
        assert_eq!(want[0].0, 0);
        let got = hashed_groups(
            &positive,
            ArrayView1::from(signed.as_slice()),
            TIE_GROUPS,
            &pool,
        );
        assert_eq!(got.unwrap(), Some(want));
    }
}

/// A non-finite score among few finite ones, before or after its
/// neighbours' keys are placed: the count gives up (the sort path then
/// names it), never counting it in a group.
#[test]
fn a_non_finite_score_is_never_counted() {
    let n = 2 * CHUNK;
    let mut next = lcg(17);
    let positive: Vec<bool> = (0..n).map(|_| next().is_multiple_of(2)).collect();
    #[allow(clippy::cast_precision_loss)]
    let finite: Vec<f64> = (0..n).map(|_| (next() % 100) as f64 / 100.0).collect();
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for at in [1, CHUNK + 5, n - 1] {
            let mut score = finite.clone();
            score[at] = bad;
            for pool in [Pool::new(1), Pool::new(2).with_min_parallel(0)] {
                let got = hashed_groups(&positive, view(&score), RANKING_GROUPS, &pool).unwrap();
                assert_eq!(got, None, "{bad} at {at}");
            }
        }
    }
}

/// float64 scores that are not float32 values, on 40,000 values: past
/// the float32 sorts' limit, the binary ranking counts them in tables of
/// the larger limit; its pair counts are those of the groups counted by
/// a map, on one thread and on two. float32 values keep the small limit.
#[test]
fn the_ranking_counts_float64_scores_past_the_float32_limit() {
    use crate::ranking::binary_ranking;
    let n = 1 << 17;
    let mut next = lcg(13);
    let positive: Vec<bool> = (0..n).map(|_| next().is_multiple_of(3)).collect();
    #[allow(clippy::cast_precision_loss)]
    let score: Vec<f64> = (0..n)
        .map(|_| (next() % 40_000) as f64 / 40_000.0 + 1e-9)
        .collect();
    #[allow(clippy::cast_possible_truncation)]
    let as_f32: Vec<f64> = score.iter().map(|&s| f64::from(s as f32)).collect();
    assert_eq!(ranking_limit(&score), TIE_GROUPS);
    assert_eq!(ranking_limit(&as_f32), RANKING_GROUPS);
    let want = counted(&positive, &score);
    assert!(want.len() > RANKING_GROUPS);
    let (mut below, mut ordered, mut tied) = (0_u128, 0_u128, 0_u128);
    for &(_, p, q) in &want {
        ordered += u128::from(p) * below;
        tied += u128::from(p) * u128::from(q);
        below += u128::from(q);
    }
    for pool in [Pool::new(1), Pool::new(2).with_min_parallel(0)] {
        let small = hashed_groups(&positive, view(&score), RANKING_GROUPS, &pool).unwrap();
        assert_eq!(small, None);
        let large = hashed_groups(&positive, view(&score), TIE_GROUPS, &pool).unwrap();
        assert_eq!(large.as_ref(), Some(&want));
        let r = binary_ranking(&positive, &score, None, false, &pool).unwrap();
        assert_eq!((r.ordered, r.tied), (ordered, tied));
    }
}

#[test]
fn the_estimate_tells_few_scores_from_many() {
    let mut next = lcg(3);
    #[allow(clippy::cast_precision_loss)]
    let mut uniform = |distinct: u64| -> Vec<f64> {
        (0..1_000_000).map(|_| (next() % distinct) as f64).collect()
    };
    // Chao's estimate within a fifth of the truth where a table is tried.
    let cases = [100, 1_000, 10_000, 20_000].map(|d| (d, RANKING_GROUPS));
    for (distinct, limit) in cases.into_iter().chain([(100_000, TIE_GROUPS)]) {
        let got = few_distinct(view(&uniform(distinct)), limit).unwrap();
        #[allow(clippy::cast_precision_loss)]
        let err = (got as f64 / distinct as f64 - 1.0).abs();
        assert!(err < 0.2, "{distinct}: {got}");
    }
    let many = [(100_000, RANKING_GROUPS), (1_000_000, TIE_GROUPS)];
    for (distinct, limit) in many.into_iter().chain([(1 << 50, TIE_GROUPS)]) {
        assert_eq!(few_distinct(view(&uniform(distinct)), limit), None);
    }
}
