//! The Poisson bootstrap (docs/definitions.md §11): every replicate of a sum
//! over rows, and of the ranking walk, with each row weighted by its Poisson(1)
//! draw from the counter-based stream of [`crate::random`]. Declarations and
//! re-exports only: `sums` (the replicate sums of row values, segment by
//! segment) and `ranking` (the replicate walks of AUROC and average
//! precision, on the row keys of `sums`).

mod multinomial;
mod ranking;
mod sums;

pub use multinomial::{ln as exact_ln, multinomial_draws, MAX_TOTAL};
pub use ranking::{replicate_ranking, RankingReplicates};
pub use sums::{replicate_sums, Columns, Replicates, RowIds, Segment};
