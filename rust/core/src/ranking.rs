//! Ranking metrics (docs/definitions.md §5 and §7.4-7.5): pair counts between a
//! binary outcome and a score, the tie-grouped precision/recall and
//! risk/coverage walks, and Kendall's tau-b/tau-c by Knight's algorithm.
//!
//! Scores become order-preserving `u64` keys ([`Score::key`]: floats with
//! `-0.0 == 0.0`, integers exactly, never rounded through f64) sorted by
//! [`crate::sort::sort_keys`] (the `rdst` crate's parallel radix sort,
//! measured faster than rayon's parallel quicksort and than hand-written LSD
//! and MSD radix sorts on the reference machine, cut into blocks on very large
//! inputs so that a stop flag can interrupt it; the two sides of continuous
//! scores by their high bytes first, [`crate::sort::sort_u64_alone`]). Pair counts are exact
//! integers (`u128`) without weights; with weights the three kinds of pairs
//! (ordered, tied, reversed) are f64 sums of `w_i w_j`, each accumulated on
//! its own from weights scaled by a power of two (so no sum overflows or
//! underflows and none is a difference of the others). Nothing depends on the
//! thread count.

//!
//! The module is laid in floors, each file using only those below it:
//! `keys` (order-preserving keys of scores and of weighted rows), `binary`
//! (the walk's result, row totals, checks), `stream` (the rows of a walk in
//! score order), `walk` (the tie-grouped walk every metric comes from),
//! `pieces` (the walk cut into pieces walked side by side), `strategy`
//! (checking and keying the rows, then the packed or split sort:
//! [`binary_ranking`]), `groups` (tie groups: the exact streaming summary),
//! `curves` (threshold counts), `sorted_groups`, `state` and `union` (the
//! streaming state, alone and many at once), `score_matrix`, `one_vs_rest`,
//! `one_vs_one`, `top_k`, `binned`, `bin_cells` and `grouped_histograms` (the
//! multiclass kernels), and
//! `kendall` (Kendall's tau, one file per method), and `placements` (DeLong's
//! placement of every row).

mod bin_cells;
mod binary;
mod binned;
mod compaction;
mod curves;
mod grouped_histograms;
mod groups;
mod hashed;
mod kendall;
mod keys;
mod one_vs_one;
mod one_vs_rest;
mod pieces;
mod placements;
mod score_matrix;
mod sorted_groups;
mod state;
mod strategy;
mod stream;
mod top_k;
mod union;
mod walk;

pub(crate) use binary::{check_weights, weight_scale};
pub use binary::{BinaryRanking, Curves};
pub use binned::{add_binned_one_vs_rest, binned_one_vs_rest, DenseTables};
pub use curves::{threshold_counts, Drop, ThresholdCounts};
pub use grouped_histograms::{grouped_binned_histograms, GroupedHistograms, MAX_GROUPED_CELLS};
pub use groups::{
    binary_proba_groups, merge_groups, score_groups, score_groups_of_view, walk_groups, GroupsRef,
    ScoreGroups,
};
pub use kendall::{
    kendall_counts, kendall_counts_with, KendallCounts, KendallMethod, TABLE_MAX_DISTINCT,
};
pub use keys::{from_order_key, order_key, packed_u32, Score};
pub use one_vs_one::{one_vs_one_auc, ratio, OneVsOne};
pub use one_vs_rest::{
    class_ranking, one_vs_rest, one_vs_rest_of_probabilities, ClassRanking, ProbabilityWalks,
};
pub(crate) use placements::{check_scores, sorted_rows};
pub use placements::{paired_placements, row_placements, PairCounts, PairedPlacements};
pub use score_matrix::{row_sum_range, Matrix, Truth};
pub use state::{add_segments, walk_states, CurvePoints, GroupState, MIN_BUFFER};
pub use strategy::binary_ranking;
pub(crate) use strategy::walk_packed_keys;
pub use top_k::{rank_histogram, rank_histogram_groups};
pub use union::{union_states, walk_union};
