//! The bootstrap's replicates (docs/definitions.md §11). Declarations and
//! re-exports only: `multinomial` (the multinomial scheme's exact draws of
//! cell counts, binomial splits from the counter-based stream; a large
//! stratum's by Poisson draws and completion in `poisson_cells`), `sums` (the
//! Poisson bootstrap of sums over rows, segment by segment, each row weighted
//! by its Poisson(1) draw from [`crate::random`]) and `ranking` (the Poisson
//! replicate walks of AUROC and average precision, on the row keys of
//! `sums`) and `cell_walk` (the same metrics of replicates drawn on the tie
//! groups' cells by `multinomial`).

mod binomial;
mod binomial_lanes;
mod cell_walk;
mod multinomial;
mod poisson_cells;
mod ranking;
mod rounds;
mod sums;

pub use cell_walk::{draw_cell_walks, walk_cell_weights};
pub use multinomial::multinomial_draws;
pub use ranking::{replicate_ranking, RankingReplicates};
pub use sums::{replicate_sums, Columns, Replicates, RowIds, Segment};
