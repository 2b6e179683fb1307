//! Bindings of `cmetrics_core::ranking`, by concern: `binary` (score vectors of
//! any dtype, the binary walk, Kendall and threshold counts), `groups` (tie
//! groups), `state` (the streaming state, alone and many at once) and
//! `multiclass` (the score-matrix kernels).

mod binary;
mod groups;
mod multiclass;
mod state;

use pyo3::prelude::*;

use binary::{binary_ranking, kendall_counts, threshold_counts};
pub(crate) use binary::{ranking_py, with_scores, ScoreArray};
use groups::{
    binary_proba_groups, merge_groups, paired_placements, row_placements, score_groups, walk_groups,
};
use multiclass::{
    add_binned_one_vs_rest, binned_one_vs_rest, class_ranking, grouped_binned_histograms,
    one_vs_one, one_vs_rest, one_vs_rest_of_probabilities, rank_histogram, rank_histogram_groups,
    row_sum_range,
};
use state::{add_segments, union_states, walk_states, walk_union, GroupState};

/// Add this family's functions to the extension module (every Python function
/// of the files below is listed here, and nowhere else).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(binary_ranking, m)?)?;
    m.add_function(wrap_pyfunction!(kendall_counts, m)?)?;
    m.add_function(wrap_pyfunction!(score_groups, m)?)?;
    m.add_function(wrap_pyfunction!(binary_proba_groups, m)?)?;
    m.add_function(wrap_pyfunction!(row_placements, m)?)?;
    m.add_function(wrap_pyfunction!(paired_placements, m)?)?;
    m.add_function(wrap_pyfunction!(merge_groups, m)?)?;
    m.add_function(wrap_pyfunction!(walk_groups, m)?)?;
    m.add_function(wrap_pyfunction!(one_vs_rest, m)?)?;
    m.add_function(wrap_pyfunction!(one_vs_rest_of_probabilities, m)?)?;
    m.add_function(wrap_pyfunction!(class_ranking, m)?)?;
    m.add_function(wrap_pyfunction!(threshold_counts, m)?)?;
    m.add_function(wrap_pyfunction!(one_vs_one, m)?)?;
    m.add_function(wrap_pyfunction!(rank_histogram, m)?)?;
    m.add_function(wrap_pyfunction!(row_sum_range, m)?)?;
    m.add_function(wrap_pyfunction!(rank_histogram_groups, m)?)?;
    m.add_function(wrap_pyfunction!(binned_one_vs_rest, m)?)?;
    m.add_function(wrap_pyfunction!(add_binned_one_vs_rest, m)?)?;
    m.add_function(wrap_pyfunction!(grouped_binned_histograms, m)?)?;
    m.add_function(wrap_pyfunction!(add_segments, m)?)?;
    m.add_function(wrap_pyfunction!(walk_states, m)?)?;
    m.add_function(wrap_pyfunction!(walk_union, m)?)?;
    m.add_function(wrap_pyfunction!(union_states, m)?)?;
    m.add_class::<GroupState>()?;
    Ok(())
}
