//! The streaming ranking state at sizes where its compactions pack rows into
//! `u32` or `u64` keys and its walk runs in pieces: against the one-shot
//! ranking of the same rows, on one and two threads, fed in batches.
#![allow(clippy::unwrap_used)]

use cmetrics_core::ranking::{binary_ranking, union_states, walk_union, BinaryRanking, GroupState};
use cmetrics_core::Pool;

mod common;
use common::{same_walk, xorshift};

/// `n` rows: outcomes, and scores of a kind: float32 confidences in
/// [0.5, 1) (varying key bits and outcome fit a `u32`), float32
/// probabilities over many binades (they do not), or float64 values.
fn rows(n: usize, kind: u8, seed: u64) -> (Vec<bool>, Vec<f64>) {
    let mut next = xorshift(seed);
    #[allow(clippy::cast_precision_loss)]
    let unit = |x: u64| (x >> 11) as f64 / (1_u64 << 53) as f64;
    (0..n)
        .map(|_| {
            let (a, b) = (unit(next()), unit(next()));
            #[allow(clippy::cast_possible_truncation)]
            let s = match kind {
                0 => f64::from((0.5 + 0.5 * a) as f32),
                1 => f64::from((a * a * a) as f32),
                _ => a,
            };
            (b < s, s)
        })
        .unzip()
}

/// The counts equal, the curve sums and DeLong's placement sums within rounding.
fn close(a: &BinaryRanking, b: &BinaryRanking) {
    same_walk(a, b).unwrap();
    for (x, y) in [
        (a.placement_pos_sq, b.placement_pos_sq),
        (a.placement_neg_sq, b.placement_neg_sq),
    ] {
        assert!((x - y).abs() <= 1e-12 * y.abs().max(1e-3), "{x} vs {y}");
    }
}

/// Fed in batches of `batch` rows with compactions from `buffer` rows on.
fn fed(ok: &[bool], s: &[f64], batch: usize, buffer: usize, pool: &Pool) -> GroupState {
    let mut st = GroupState::new(false).with_min_buffer(buffer);
    for (o, x) in ok.chunks(batch).zip(s.chunks(batch)) {
        st.add(o, x, None, pool).unwrap();
    }
    st
}

#[test]
fn a_large_state_walks_as_the_rows_do_whatever_the_batches_and_threads() {
    for kind in 0..3 {
        let (ok, s) = rows(300_000, kind, 7 + u64::from(kind));
        let one = Pool::sequential();
        let two = Pool::new(2).with_min_parallel(1);
        let direct = binary_ranking(&ok, &s, None, true, &one).unwrap();
        let mut walks = Vec::new();
        // One compaction; compactions merged into groups already kept.
        for (batch, buffer, pool) in [
            (300_000, 1 << 23, &one),
            (65_536, 50_000, &two),
            (7_919, 30_000, &one),
        ] {
            let mut st = fed(&ok, &s, batch, buffer, pool);
            let walked = st.walk(true, pool).unwrap();
            close(&walked, &direct);
            // Walked again once compacted, and on the other pool: the same bits.
            assert_eq!(st.walk(true, &two).unwrap(), walked);
            assert_eq!(st.walk(true, &one).unwrap(), walked);
            walks.push(walked);
        }
        // The groups, and so the walk, do not depend on how the rows came in.
        assert!(walks.windows(2).all(|w| w[0] == w[1]), "kind {kind}");
    }
}

#[test]
fn a_union_with_repeated_keys_walks_as_its_parts() {
    // Two states over the same float32 scores: their union repeats every key
    // (adjacent entries of one score), which the walk adds up serially.
    let (ok, s) = rows(200_000, 0, 11);
    let pool = Pool::new(2).with_min_parallel(1);
    let direct = binary_ranking(
        &[ok.clone(), ok.clone()].concat(),
        &[s.clone(), s.clone()].concat(),
        None,
        true,
        &pool,
    )
    .unwrap();
    let (mut a, mut b) = (
        fed(&ok, &s, 50_000, 1 << 23, &pool),
        fed(&ok, &s, 70_000, 1 << 23, &pool),
    );
    let mut union = union_states(&mut [&mut a, &mut b], &pool).unwrap();
    let distinct = union.groups(&pool).unwrap().values.len();
    assert!(distinct >= 1 << 16 && union.entries() > distinct);
    close(&union.walk(true, &pool).unwrap(), &direct);
    close(
        &walk_union(&mut [&mut a, &mut b], true, &pool).unwrap(),
        &direct,
    );
}

#[test]
fn small_batches_keep_the_buffer_near_the_rows_it_holds() {
    // Regression: the buffer's room doubled at every batch, whether the rows fitted or not, up
    // to the compaction's size (2^24 rows, 151 MB) in every state of a grouped report.
    let (ok, s) = rows(100_000, 0, 3);
    let pool = Pool::sequential();
    let mut st = GroupState::new(false);
    for (o, x) in ok.chunks(6_250).zip(s.chunks(6_250)) {
        st.add(o, x, None, &pool).unwrap();
    }
    assert_eq!(st.entries(), 100_000);
    // At most twice the rows' 9 bytes (the buffer doubles when the rows do not fit).
    assert!(st.nbytes() <= 2 * 9 * 100_000, "{} bytes", st.nbytes());
}
