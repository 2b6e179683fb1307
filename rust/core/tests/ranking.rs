//! Ranking kernels against naive O(n^2) pair counts, and overflow safety.
#![allow(clippy::unwrap_used)]

use cmetrics_core::ranking::{
    add_segments, binary_ranking, kendall_counts, kendall_counts_with, merge_groups, order_key,
    score_groups, union_states, walk_groups, walk_states, walk_union, GroupState, GroupsRef,
    KendallMethod,
};
use cmetrics_core::Pool;
use proptest::prelude::*;

mod common;
use common::{lcg, same_walk};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn binary_pairs_match_the_naive_count(rows in prop::collection::vec((any::<bool>(), 0_u8..6, 0_u8..4), 1..400), packed in any::<bool>()) {
        let ok: Vec<bool> = rows.iter().map(|r| r.0).collect();
        // Odd multiples of 2^-52 keep bit 0 of the keys varying (two sorted
        // sides and a merge); f32 values leave it free (one packed array).
        let s: Vec<f64> = rows.iter().enumerate().map(|(i, r)| {
            let v = f64::from(r.1) / 5.0 - 0.4;
            if packed || i % 2 == 0 { f64::from(v as f32) } else { v + f64::EPSILON }
        }).collect();
        let w: Vec<f64> = rows.iter().map(|r| f64::from(r.2) / 2.0).collect();
        let (mut rev, mut tied, mut wrev, mut wall) = (0_u128, 0_u128, 0.0_f64, 0.0_f64);
        for i in 0..s.len() {
            for j in 0..s.len() {
                if ok[i] && !ok[j] {
                    rev += u128::from(s[i] < s[j]);
                    tied += u128::from(s[i] == s[j]);
                    if s[i] < s[j] { wrev += w[i] * w[j]; }
                    wall += w[i] * w[j];
                }
            }
        }
        for pool in [Pool::sequential(), Pool::new(2).with_min_parallel(1)] {
            let r = binary_ranking(&ok, &s, None, true, &pool).unwrap();
            prop_assert_eq!(r.reversed, rev);
            prop_assert_eq!(r.tied, tied);
            // Pair counts alone (walked in pieces on a parallel pool).
            let q = binary_ranking(&ok, &s, None, false, &pool).unwrap();
            prop_assert_eq!((q.reversed, q.tied, q.ordered, q.n_thresholds), (r.reversed, r.tied, r.ordered, r.n_thresholds));
            prop_assert_eq!(r.reversed + r.tied + r.ordered, u128::from(r.n_pos) * u128::from(r.n_neg));
            let rw = binary_ranking(&ok, &s, Some(&w), true, &pool);
            if w.iter().sum::<f64>() == 0.0 {
                prop_assert_eq!(rw, Err(cmetrics_core::MetricError::ZeroWeightSum));
            } else if wall > 0.0 {
                let rw = rw.unwrap();
                prop_assert!((rw.reversed_share - wrev / wall).abs() <= 1e-12, "{} vs {}", rw.reversed_share, wrev / wall);
                prop_assert!((0.0..=1.0).contains(&rw.reversed_share) && (0.0..=1.0).contains(&rw.ordered_share));
            } else {
                prop_assert!(rw.unwrap().reversed_share.is_nan());
            }
        }
    }

    #[test]
    fn groups_walk_and_merge_like_the_whole(rows in prop::collection::vec((any::<bool>(), 0_u8..12, 1_u8..4), 1..300), cut in 0_usize..300, weighted in any::<bool>()) {
        let ok: Vec<bool> = rows.iter().map(|r| r.0).collect();
        // -0.0 and 0.0 are one group; the odd EPSILON varies bit 0 (the split path).
        let s: Vec<f64> = rows.iter().map(|r| match r.1 { 0 => -0.0, 1 => 0.0, 11 => 0.5 + f64::EPSILON, v => f64::from(v) / 10.0 }).collect();
        let w: Vec<f64> = rows.iter().map(|r| f64::from(r.2) / 2.0).collect();
        let wt = weighted.then_some(w.as_slice());
        let pool = Pool::sequential();
        let whole = score_groups(&ok, &s, wt, &pool).unwrap();
        prop_assert!(whole.values.windows(2).all(|v| v[0] < v[1]));
        prop_assert_eq!(whole.n_pos.iter().sum::<u64>() + whole.n_neg.iter().sum::<u64>(), ok.len() as u64);
        let walked = walk_groups(GroupsRef::from(&whole), true).unwrap();
        let direct = binary_ranking(&ok, &s, wt, true, &pool).unwrap();
        prop_assert_eq!((walked.reversed, walked.tied, walked.ordered, walked.n_thresholds), (direct.reversed, direct.tied, direct.ordered, direct.n_thresholds));
        prop_assert!((walked.aurc - direct.aurc).abs() <= 1e-12);
        prop_assert!((walked.reversed_share - direct.reversed_share).abs() <= 1e-12 || direct.reversed_share.is_nan());
        prop_assert!((walked.tied_share - direct.tied_share).abs() <= 1e-12 || direct.tied_share.is_nan());
        let c = cut.min(ok.len());
        if c > 0 && c < ok.len() {
            let wa = wt.map(|x| &x[..c]);
            let wb = wt.map(|x| &x[c..]);
            let a = score_groups(&ok[..c], &s[..c], wa, &pool).unwrap();
            let b = score_groups(&ok[c..], &s[c..], wb, &pool).unwrap();
            let m = merge_groups(GroupsRef::from(&a), GroupsRef::from(&b)).unwrap();
            prop_assert_eq!(&m.values, &whole.values);
            prop_assert_eq!(&m.n_pos, &whole.n_pos);
            prop_assert_eq!(&m.n_neg, &whole.n_neg);
            for (x, y) in m.w_pos.iter().zip(&whole.w_pos) { prop_assert!((x - y).abs() <= 1e-12 * y.max(1.0)); }
        }
    }

    /// The streaming state, fed in batches of any sizes (compacting every few
    /// rows), split across states merged in any order, or reloaded from its
    /// exported groups, holds the groups of all the rows at once.
    #[test]
    fn group_state_is_the_whole(rows in prop::collection::vec((any::<bool>(), 0_u8..40, 1_u8..4), 1..400),
                                cuts in prop::collection::vec(0_usize..400, 0..6), buffer in 1_usize..64,
                                weighted in any::<bool>(), threads in prop_oneof![Just(1_usize), Just(2)]) {
        let ok: Vec<bool> = rows.iter().map(|r| r.0).collect();
        // -0.0 and 0.0 are one group; odd multiples of EPSILON vary the low key bits.
        let s: Vec<f64> = rows.iter().map(|r| match r.1 { 0 => -0.0, 1 => 0.0, v if v > 30 => 0.5 + f64::from(v) * f64::EPSILON, v => f64::from(v) / 10.0 - 1.0 }).collect();
        let w: Vec<f64> = rows.iter().map(|r| f64::from(r.2) / 2.0).collect();
        let wt = weighted.then_some(w.as_slice());
        let pool = Pool::new(threads);
        let whole = score_groups(&ok, &s, wt, &pool).unwrap();
        let mut bounds: Vec<usize> = cuts.iter().map(|&c| c.min(ok.len())).collect();
        bounds.push(0);
        bounds.push(ok.len());
        bounds.sort_unstable();
        // One state fed batch by batch; one state per batch, merged from the last.
        let mut one = GroupState::new(weighted).with_min_buffer(buffer);
        let mut parts = Vec::new();
        for b in bounds.windows(2) {
            let (lo, hi) = (b[0], b[1]);
            if lo == hi { continue; }
            let wb = wt.map(|x| &x[lo..hi]);
            one.add(&ok[lo..hi], &s[lo..hi], wb, &pool).unwrap();
            let mut part = GroupState::new(weighted).with_min_buffer(buffer);
            part.add(&ok[lo..hi], &s[lo..hi], wb, &pool).unwrap();
            parts.push(part);
        }
        let mut merged = GroupState::new(weighted).with_min_buffer(buffer);
        for mut p in parts.into_iter().rev() {
            merged.merge(&mut p, &pool).unwrap();
        }
        let mut reloaded = GroupState::new(weighted);
        let g1 = one.groups(&pool).unwrap();
        reloaded.absorb(GroupsRef::from(&g1), &pool).unwrap();
        for got in [g1.clone(), merged.groups(&pool).unwrap(), reloaded.groups(&pool).unwrap()] {
            prop_assert_eq!(&got.values, &whole.values);
            prop_assert_eq!(&got.n_pos, &whole.n_pos);
            prop_assert_eq!(&got.n_neg, &whole.n_neg);
            prop_assert_eq!(got.w_pos.len(), whole.w_pos.len());
            for (x, y) in got.w_pos.iter().zip(&whole.w_pos).chain(got.w_neg.iter().zip(&whole.w_neg)) {
                prop_assert!((x - y).abs() <= 1e-12 * y.max(1.0));
            }
        }
        let walked = one.walk(true, &pool).unwrap();
        let direct = binary_ranking(&ok, &s, wt, true, &pool).unwrap();
        prop_assert_eq!((walked.reversed, walked.tied, walked.ordered, walked.n_thresholds), (direct.reversed, direct.tied, direct.ordered, direct.n_thresholds));
        prop_assert!((walked.average_precision - direct.average_precision).abs() <= 1e-12 || direct.average_precision.is_nan());
        prop_assert!((walked.aurc - direct.aurc).abs() <= 1e-12);
    }

    /// Rows added segment by segment to many states in one call, the states'
    /// walks side by side, and the union of the states (a k-way merge, cut
    /// into key ranges on the threads) are what one state per segment, fed
    /// alone, and one state fed every row give; a refused call changes no state.
    #[test]
    fn segments_walks_and_union(rows in prop::collection::vec((any::<bool>(), 0_u8..60, 1_u8..4), 0..500),
                                cuts in prop::collection::vec(0_usize..500, 0..12), buffer in 1_usize..40,
                                weighted in any::<bool>(), binned in any::<bool>(),
                                threads in prop_oneof![Just(1_usize), Just(2), Just(3)]) {
        let ok: Vec<bool> = rows.iter().map(|r| r.0).collect();
        let s: Vec<f64> = rows.iter().map(|r| if r.1 > 50 { 0.5 + f64::from(r.1) * f64::EPSILON } else { f64::from(r.1) / 50.0 }).collect();
        let w: Vec<f64> = rows.iter().map(|r| f64::from(r.2) / 2.0).collect();
        let wt = weighted.then_some(w.as_slice());
        let bins = binned.then_some(16_u32);
        let pool = Pool::new(threads).with_min_parallel(1);
        let mut bounds: Vec<usize> = cuts.iter().map(|&c| c.min(ok.len())).collect();
        bounds.push(0);
        bounds.push(ok.len());
        bounds.sort_unstable();
        let offsets: Vec<i64> = bounds.iter().map(|&b| b as i64).collect();
        let segments = bounds.len() - 1;
        // Each state holds earlier rows already (a first call with the same segments).
        let mut states: Vec<GroupState> = (0..segments).map(|_| GroupState::new(weighted).with_min_buffer(buffer)).collect();
        let mut alone: Vec<GroupState> = (0..segments).map(|_| GroupState::new(weighted)).collect();
        let mut whole = GroupState::new(weighted);
        for _ in 0..2 {
            let mut refs: Vec<&mut GroupState> = states.iter_mut().collect();
            add_segments(&mut refs, &ok, &s, &offsets, wt, bins, &pool).unwrap();
            for (g, st) in alone.iter_mut().enumerate() {
                let (lo, hi) = (bounds[g], bounds[g + 1]);
                let wb = wt.map(|x| &x[lo..hi]);
                match bins {
                    Some(b) => st.add_binned(&ok[lo..hi], &s[lo..hi], wb, b, &Pool::sequential()).unwrap(),
                    None => st.add(&ok[lo..hi], &s[lo..hi], wb, &Pool::sequential()).unwrap(),
                }
            }
            match bins {
                Some(b) => whole.add_binned(&ok, &s, wt, b, &Pool::sequential()).unwrap(),
                None => whole.add(&ok, &s, wt, &Pool::sequential()).unwrap(),
            }
        }
        // A refused call (a NaN in the last row, wrong offsets) changes no state.
        if !ok.is_empty() {
            let mut bad = s.clone();
            *bad.last_mut().unwrap() = f64::NAN;
            let before: Vec<_> = states.iter_mut().map(|st| st.groups(&pool).unwrap()).collect();
            let mut refs: Vec<&mut GroupState> = states.iter_mut().collect();
            prop_assert!(add_segments(&mut refs, &ok, &bad, &offsets, wt, bins, &pool).is_err());
            prop_assert!(add_segments(&mut refs, &ok, &s, &offsets[1..], wt, bins, &pool).is_err());
            prop_assert!(add_segments(&mut refs, &ok, &s, &offsets, (!weighted).then_some(w.as_slice()), bins, &pool).is_err());
            drop(refs);
            let after: Vec<_> = states.iter_mut().map(|st| st.groups(&pool).unwrap()).collect();
            prop_assert_eq!(before, after);
        }
        for (st, al) in states.iter_mut().zip(alone.iter_mut()) {
            prop_assert_eq!(st.groups(&pool).unwrap(), al.groups(&pool).unwrap());
        }
        let mut refs: Vec<&mut GroupState> = states.iter_mut().collect();
        let walks = walk_states(&mut refs, true, &pool).unwrap();
        let mut union = union_states(&mut refs, &pool).unwrap();
        for (walk, al) in walks.iter().zip(alone.iter_mut()) {
            if al.entries() > 0 {
                let want = al.walk(true, &Pool::sequential()).unwrap();
                prop_assert_eq!((walk.reversed, walk.tied, walk.ordered), (want.reversed, want.tied, want.ordered));
            }
        }
        let (got, want) = (union.groups(&pool).unwrap(), whole.groups(&Pool::sequential()).unwrap());
        prop_assert_eq!(&got.values, &want.values);
        prop_assert_eq!(&got.n_pos, &want.n_pos);
        prop_assert_eq!(&got.n_neg, &want.n_neg);
        prop_assert_eq!(got.w_pos.len(), want.w_pos.len());
        for (x, y) in got.w_pos.iter().zip(&want.w_pos).chain(got.w_neg.iter().zip(&want.w_neg)) {
            prop_assert!((x - y).abs() <= 1e-12 * y.max(1.0));
        }
        // The union does not depend on the thread count (weight sums included).
        let mut refs: Vec<&mut GroupState> = states.iter_mut().collect();
        let mut again = union_states(&mut refs, &Pool::sequential()).unwrap();
        prop_assert_eq!(again.groups(&pool).unwrap(), got);
        // Walking the union without making it is walking the state of every row.
        if whole.entries() > 0 {
            let walked = walk_union(&mut refs, true, &pool).unwrap();
            let want = whole.walk(true, &Pool::sequential()).unwrap();
            same_walk(&walked, &want)?;
        }
    }

    /// The union walked in key ranges (from 2^16 groups, 16 ranges whatever the
    /// thread count) is the walk of one state fed every row: exact counts,
    /// curve sums to rounding, and the same bits on 1, 2 and 3 threads.
    #[test]
    fn union_walked_in_pieces(seed in any::<u64>(), states in 1_usize..9, distinct in prop_oneof![Just(50_u64), Just(1 << 20)]) {
        let n = 90_000_usize;
        let mut next = common::xorshift(seed | 1);
        let rows: Vec<(usize, bool, f64)> = (0..n).map(|_| {
            let r = next();
            #[allow(clippy::cast_precision_loss)]
            let s = (r % distinct) as f64 / distinct as f64;
            ((r >> 40) as usize % states, (r >> 33) & 3 == 0, s)
        }).collect();
        let mut each: Vec<GroupState> = (0..states).map(|_| GroupState::new(false)).collect();
        let mut whole = GroupState::new(false);
        let seq = Pool::sequential();
        for (g, st) in each.iter_mut().enumerate() {
            let (ok, s): (Vec<bool>, Vec<f64>) = rows.iter().filter(|r| r.0 == g).map(|r| (r.1, r.2)).unzip();
            st.add(&ok, &s, None, &seq).unwrap();
        }
        let (ok, s): (Vec<bool>, Vec<f64>) = rows.iter().map(|r| (r.1, r.2)).unzip();
        whole.add(&ok, &s, None, &seq).unwrap();
        let want = whole.walk(true, &seq).unwrap();
        let mut refs: Vec<&mut GroupState> = each.iter_mut().collect();
        let first = walk_union(&mut refs, true, &seq).unwrap();
        same_walk(&first, &want)?;
        for threads in [2, 3] {
            let got = walk_union(&mut refs, true, &Pool::new(threads).with_min_parallel(1)).unwrap();
            prop_assert_eq!(format!("{got:?}"), format!("{first:?}"));
        }
    }

    /// A union of weighted and unweighted states is refused (empty states
    /// count as either).
    #[test]
    fn union_of_states_with_mixed_weights_is_refused(n in 1_usize..20) {
        let pool = Pool::sequential();
        let (mut a, mut b) = (GroupState::new(false), GroupState::new(true));
        a.add(&vec![true; n], &vec![0.5; n], None, &pool).unwrap();
        b.add(&vec![true; n], &vec![0.5; n], Some(&vec![1.0; n]), &pool).unwrap();
        prop_assert!(union_states(&mut [&mut a, &mut b], &pool).is_err());
        let mut empty = GroupState::new(true);
        prop_assert_eq!(union_states(&mut [&mut a, &mut empty], &pool).unwrap().entries(), a.entries());
        prop_assert_eq!(union_states(&mut [], &pool).unwrap().entries(), 0);
    }

    #[test]
    fn group_state_errors(n in 1_usize..20) {
        let pool = Pool::sequential();
        let mut st = GroupState::new(false);
        let ok = vec![true; n];
        let mut s = vec![0.5; n];
        prop_assert!(st.add(&ok, &s, Some(&vec![1.0; n]), &pool).is_err());
        prop_assert!(st.add(&ok[1..], &s, None, &pool).is_err());
        s[n - 1] = f64::NAN;
        prop_assert!(matches!(st.add(&ok, &s, None, &pool), Err(cmetrics_core::MetricError::NonFinite { .. })), "a NaN score");
        let mut w = GroupState::new(true);
        prop_assert!(matches!(w.add(&ok, &vec![0.5; n], Some(&vec![-1.0; n]), &pool), Err(cmetrics_core::MetricError::InvalidWeight { .. })), "a negative weight");
        prop_assert!(st.merge(&mut w, &pool).is_ok()); // the other is empty
        w.add(&ok, &vec![0.5; n], Some(&vec![1.0; n]), &pool).unwrap();
        prop_assert!(st.merge(&mut w, &pool).is_err());
        prop_assert_eq!(st.entries(), 0);
    }
}

#[test]
fn order_keys_sort_like_floats() {
    let v = [
        -f64::MAX,
        -1.0,
        -1e-300,
        -0.0,
        0.0,
        1e-300,
        0.5,
        1.0,
        f64::MAX,
    ];
    for w in v.windows(2) {
        assert!(order_key(w[0]) <= order_key(w[1]));
        assert_eq!(w[0] == w[1], order_key(w[0]) == order_key(w[1]));
    }
}

#[test]
fn nan_is_rejected() {
    let e = kendall_counts(&[1.0, f64::NAN], &[1.0, 2.0], &Pool::sequential()).unwrap_err();
    assert!(e.to_string().contains("x[1]"));
    let e = binary_ranking(
        &[true, false],
        &[0.5, f64::INFINITY],
        None,
        true,
        &Pool::sequential(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("y_score[1]"));
}

/// Naive pair counts of integer scores, compared as integers.
fn naive_pairs<T: PartialOrd + Copy>(ok: &[bool], s: &[T]) -> (u128, u128) {
    let (mut rev, mut tied) = (0_u128, 0_u128);
    for i in 0..s.len() {
        for j in 0..s.len() {
            if ok[i] && !ok[j] {
                rev += u128::from(s[i] < s[j]);
                tied += u128::from(s[i] == s[j]);
            }
        }
    }
    (rev, tied)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// Integer scores are ordered as integers, at the extremes too (f64
    /// would merge 2^62 and 2^62 + 1).
    #[test]
    fn integer_scores_are_exact(rows in prop::collection::vec((any::<bool>(), 0_u8..8), 1..200)) {
        let ok: Vec<bool> = rows.iter().map(|r| r.0).collect();
        let base = [i64::MIN, i64::MIN + 1, -1, 0, (1 << 62), (1 << 62) + 1, i64::MAX - 1, i64::MAX];
        let si: Vec<i64> = rows.iter().map(|r| base[usize::from(r.1)]).collect();
        let su: Vec<u64> = rows.iter().map(|r| [0, 1, 1 << 53, (1 << 53) + 1, 1 << 63, u64::MAX - 2, u64::MAX - 1, u64::MAX][usize::from(r.1)]).collect();
        let pool = Pool::sequential();
        let r = binary_ranking(&ok, &si, None, true, &pool).unwrap();
        prop_assert_eq!((r.reversed, r.tied), naive_pairs(&ok, &si));
        let r = binary_ranking(&ok, &su, None, true, &pool).unwrap();
        prop_assert_eq!((r.reversed, r.tied), naive_pairs(&ok, &su));
        let n = si.len() as u64;
        let k = kendall_counts(&si, &su, &pool).unwrap();
        let mut disc = 0_u128;
        for i in 0..si.len() { for j in i + 1..si.len() {
            if (si[i] < si[j] && su[i] > su[j]) || (si[i] > si[j] && su[i] < su[j]) { disc += 1; }
        } }
        prop_assert_eq!(k.discordant, disc);
        prop_assert_eq!(k.n, n);
        let t = kendall_counts_with(&si, &su, KendallMethod::Table, &pool).unwrap();
        prop_assert_eq!(t, k);
        let o = kendall_counts_with(&si, &su, KendallMethod::OneSided, &pool).unwrap();
        prop_assert_eq!(o, k);
    }

    /// Multiplying every weight by a power of two changes no share and no
    /// curve; by any constant, nothing beyond rounding, up to 1e+-250.
    #[test]
    fn weighted_shares_do_not_depend_on_the_scale(rows in prop::collection::vec((any::<bool>(), 0_u8..6, 1_u8..5), 2..200)) {
        let ok: Vec<bool> = rows.iter().map(|r| r.0).collect();
        let s: Vec<f64> = rows.iter().map(|r| f64::from(r.1) / 5.0).collect();
        let w: Vec<f64> = rows.iter().map(|r| f64::from(r.2) / 3.0).collect();
        let pool = Pool::sequential();
        let base = binary_ranking(&ok, &s, Some(&w), true, &pool).unwrap();
        for k in [-1000_i32, -300, 7, 300, 1000] {
            let wk: Vec<f64> = w.iter().map(|x| x * 2f64.powi(k)).collect();
            let r = binary_ranking(&ok, &s, Some(&wk), true, &pool).unwrap();
            prop_assert_eq!(r.reversed_share.to_bits(), base.reversed_share.to_bits());
            prop_assert_eq!(r.tied_share.to_bits(), base.tied_share.to_bits());
            prop_assert_eq!(r.average_precision.to_bits(), base.average_precision.to_bits());
            prop_assert_eq!(r.aurc.to_bits(), base.aurc.to_bits());
        }
        for c in [1e-250, 1e-170, 1e160, 1e250] {
            let wc: Vec<f64> = w.iter().map(|x| x * c).collect();
            let r = binary_ranking(&ok, &s, Some(&wc), true, &pool).unwrap();
            for (a, b) in [(r.reversed_share, base.reversed_share), (r.tied_share, base.tied_share), (r.average_precision, base.average_precision), (r.aupr_trapezoid, base.aupr_trapezoid), (r.aurc, base.aurc)] {
                prop_assert!((a - b).abs() <= 1e-12 || (a.is_nan() && b.is_nan()), "{} vs {} at {}", a, b, c);
            }
        }
    }

    /// A perfect ranking has AP exactly 1 and no reversed pair, whatever the weights.
    #[test]
    fn perfect_rankings_are_exact(n_neg in 1_usize..50, n_pos in 1_usize..50, wseed in prop::collection::vec(1_u32..1000, 100)) {
        let ok: Vec<bool> = (0..n_neg + n_pos).map(|i| i >= n_neg).collect();
        let s: Vec<f64> = (0..n_neg + n_pos).map(|i| i as f64 / 7.0).collect();
        let w: Vec<f64> = (0..n_neg + n_pos).map(|i| f64::from(wseed[i % 100]) * 0.1).collect();
        let pool = Pool::sequential();
        for wt in [None, Some(w.as_slice())] {
            let r = binary_ranking(&ok, &s, wt, true, &pool).unwrap();
            prop_assert_eq!(r.average_precision, 1.0);
            prop_assert_eq!(r.ordered_share, 1.0);
            prop_assert_eq!(r.reversed_share, 0.0);
        }
    }
}

#[test]
fn weights_summing_to_zero_or_overflowing_are_errors() {
    let pool = Pool::sequential();
    let ok = [true, false, true, false];
    let s = [0.1, 0.2, 0.3, 0.4];
    assert_eq!(
        binary_ranking(&ok, &s, Some(&[0.0; 4]), true, &pool),
        Err(cmetrics_core::MetricError::ZeroWeightSum)
    );
    assert!(matches!(
        binary_ranking(&ok, &s, Some(&[1e308; 4]), true, &pool),
        Err(cmetrics_core::MetricError::WeightRange { .. })
    ));
    // Tiny and huge weights give the unweighted shares exactly (equal weights).
    let plain = binary_ranking(&ok, &s, None, true, &pool).unwrap();
    for c in [1e-300, 1e-170, 1e160, 1e300] {
        let r = binary_ranking(&ok, &s, Some(&[c; 4]), true, &pool).unwrap();
        assert_eq!(r.reversed_share, plain.reversed_share, "{c}");
        assert_eq!(r.average_precision, plain.average_precision, "{c}");
    }
}

#[test]
fn a_raised_stop_flag_interrupts_every_ranking_kernel() {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    let pool = Pool::new(2).with_stop(Arc::new(AtomicBool::new(true)));
    let n = 1 << 12;
    let ok: Vec<bool> = (0..n).map(|i| i % 3 == 0).collect();
    let s: Vec<f64> = (0..n).map(|i| f64::from(i as u32 % 97)).collect();
    let stop = Err(cmetrics_core::MetricError::Interrupted);
    assert_eq!(binary_ranking(&ok, &s, None, true, &pool), stop);
    assert_eq!(
        kendall_counts(&s, &s, &pool).map(|_| ()),
        stop.map(|_: cmetrics_core::ranking::BinaryRanking| ())
    );
}

/// The walk of a large input runs in pieces (one per sixteenth of the sorted
/// rows, walked in parallel and combined): it equals the sequential walk of
/// the same rows' tie groups, and does not depend on the thread count.
fn pieces_equal_the_sequential_walk<X: cmetrics_core::ranking::Score>(ok: &[bool], s: &[X]) {
    let one = Pool::new(1);
    let groups = score_groups(ok, s, None, &one).unwrap();
    let want = walk_groups((&groups).into(), true).unwrap();
    let mut seen = Vec::new();
    for pool in [Pool::new(1), Pool::new(3).with_min_parallel(0)] {
        for curves in [false, true] {
            let got = binary_ranking(ok, s, None, curves, &pool).unwrap();
            assert_eq!(
                (got.ordered, got.tied, got.reversed, got.n_thresholds),
                (want.ordered, want.tied, want.reversed, want.n_thresholds)
            );
            if curves {
                for (a, b) in [
                    (got.average_precision, want.average_precision),
                    (got.aupr_trapezoid, want.aupr_trapezoid),
                    (got.aurc, want.aurc),
                ] {
                    assert!((a - b).abs() <= 1e-12 * b.abs().max(1e-3), "{a} vs {b}");
                }
                seen.push([got.average_precision, got.aupr_trapezoid, got.aurc].map(f64::to_bits));
            }
        }
    }
    assert_eq!(seen[0], seen[1], "the thread count changed the sums");
}

#[test]
fn walks_in_pieces_equal_the_sequential_walk() {
    let n = 300_000;
    let mut r = lcg(11);
    let ok: Vec<bool> = (0..n).map(|_| r().is_multiple_of(3)).collect();
    // float32 probabilities with ties: the packed u32 path (too many distinct
    // values for the hash tables).
    #[allow(clippy::cast_precision_loss)]
    let probabilities: Vec<f32> = (0..n).map(|_| (r() % 2_000_000) as f32 / 2e6).collect();
    pieces_equal_the_sequential_walk(&ok, &probabilities);
    // float64 scores whose keys differ in bit 0: two sorted sides merged.
    #[allow(clippy::cast_precision_loss)]
    let scores: Vec<f64> = (0..n).map(|_| (r() % 100_000) as f64 / 7.0 - 3.0).collect();
    pieces_equal_the_sequential_walk(&ok, &scores);
    // Integer scores reaching u64::MAX: the guarded merge.
    let integers: Vec<u64> = (0..n)
        .map(|_| {
            if r().is_multiple_of(50) {
                u64::MAX
            } else {
                r() % 10_000_000
            }
        })
        .collect();
    pieces_equal_the_sequential_walk(&ok, &integers);
    // Few distinct scores (weighted: unweighted rows would be hashed, not
    // sorted): pieces that end up empty after the tie cuts.
    let coarse: Vec<f64> = (0..n)
        .map(|_| f64::from(u8::try_from(r() % 3).unwrap()))
        .collect();
    let ones = vec![1.0; n];
    let want = binary_ranking(&ok, &coarse, Some(&ones), true, &Pool::new(1)).unwrap();
    let got = binary_ranking(
        &ok,
        &coarse,
        Some(&ones),
        true,
        &Pool::new(3).with_min_parallel(0),
    )
    .unwrap();
    assert_eq!(format!("{got:?}"), format!("{want:?}"));
}

/// Unweighted rows with few distinct scores are counted in hash tables: the
/// pair counts equal those of the scores' histograms, the curve sums those of
/// the sorted walk of the same rows (unit weights take the sort path), on any
/// thread count.
#[test]
fn few_distinct_scores_walk_as_the_sorted_rows() {
    let n = 200_000;
    let mut r = lcg(12);
    let ok: Vec<bool> = (0..n).map(|_| r().is_multiple_of(3)).collect();
    #[allow(clippy::cast_precision_loss)]
    let rounded: Vec<f64> = (0..n).map(|_| (r() % 1001) as f64 / 1000.0).collect();
    let mut pos = vec![0_u128; 1001];
    let mut neg = vec![0_u128; 1001];
    for (&p, &s) in ok.iter().zip(&rounded) {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let v = (s * 1000.0).round() as usize;
        if p {
            pos[v] += 1;
        } else {
            neg[v] += 1;
        }
    }
    let above: Vec<u128> = (0..1001).map(|v| neg[v + 1..].iter().sum()).collect();
    let reversed: u128 = (0..1001).map(|v| pos[v] * above[v]).sum();
    let tied: u128 = (0..1001).map(|v| pos[v] * neg[v]).sum();
    let ones = vec![1.0; n];
    let sorted = binary_ranking(&ok, &rounded, Some(&ones), true, &Pool::new(2)).unwrap();
    let narrow: Vec<f32> = rounded.iter().map(|&x| x as f32).collect();
    for pool in [Pool::new(1), Pool::new(2).with_min_parallel(0)] {
        for got in [
            binary_ranking(&ok, &rounded, None, true, &pool).unwrap(),
            binary_ranking(&ok, &narrow, None, true, &pool).unwrap(),
        ] {
            assert_eq!(
                (got.reversed, got.tied, got.n_thresholds),
                (reversed, tied, 1001)
            );
            for (a, b) in [
                (got.average_precision, sorted.average_precision),
                (got.aupr_trapezoid, sorted.aupr_trapezoid),
                (got.aurc, sorted.aurc),
                (got.reversed_share, sorted.reversed_share),
                (got.placement_pos_sq, sorted.placement_pos_sq),
            ] {
                assert!((a - b).abs() <= 1e-12 * b.abs().max(1e-3), "{a} vs {b}");
            }
        }
    }
}

#[test]
fn float64_copies_of_float32_scores_rank_as_the_float32_scores() {
    let n = 200_000;
    let mut r = lcg(5);
    let ok: Vec<bool> = (0..n).map(|_| r().is_multiple_of(4)).collect();
    #[allow(clippy::cast_precision_loss)]
    let narrow: Vec<f32> = (0..n).map(|_| (r() % 70_000) as f32 / 70_000.0).collect();
    let wide: Vec<f64> = narrow.iter().map(|&x| f64::from(x)).collect();
    let pool = Pool::new(2).with_min_parallel(0);
    for curves in [false, true] {
        let a = binary_ranking(&ok, &narrow, None, curves, &pool).unwrap();
        let b = binary_ranking(&ok, &wide, None, curves, &pool).unwrap();
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }
    // A float64 value that is no float32 value, past the first rows: the
    // half-width keys are given up and the general path ranks the rows.
    let mut late = wide.clone();
    late[150_000] = 0.1;
    pieces_equal_the_sequential_walk(&ok, &late);
    // Negative float32 values: the general path too.
    let signed: Vec<f32> = narrow.iter().map(|&x| x - 0.5).collect();
    pieces_equal_the_sequential_walk(&ok, &signed);
}
