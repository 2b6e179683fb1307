//! The bin of every score of a block, in vector lanes: `floor(score * bins)`
//! for a score in [0, 1] (1.0 in the last bin), as the binned one-vs-rest
//! kernels ([`super::binned`]) count them, and whether a score is outside.

use super::keys::Score;
use crate::cpu::widest;

widest! {
    /// Each score's cell of a contiguous column (`scale` the bins, below
    /// 2^31), and whether one is outside [0, 1], with the widest vectors this
    /// CPU runs.
    pub(super) fn column_cells<X: Score>(column: &[X], out: &mut [u32], scale: f64, outside: &mut bool)
        => column_cells_portable
}

widest! {
    /// [`column_cells`] of columns `cols` of a row-major block of rows (`k`
    /// scores each), column `j` of `cols` at `out[j * stride..]`.
    pub(super) fn row_cells<X: Score>(
        block: &[X],
        k: usize,
        cols: std::ops::Range<usize>,
        stride: usize,
        out: &mut [u32],
        scale: f64,
        outside: &mut bool,
    ) => row_cells_portable
}

/// [`row_cells`], inlined into each compiled variant.
#[inline(always)]
fn row_cells_portable<X: Score>(
    block: &[X],
    k: usize,
    cols: std::ops::Range<usize>,
    stride: usize,
    out: &mut [u32],
    scale: f64,
    outside: &mut bool,
) {
    let mut bad = false;
    for (r, row) in block.chunks_exact(k.max(1)).enumerate() {
        for (j, x) in row.get(cols.clone()).unwrap_or_default().iter().enumerate() {
            let v = x.to_f64();
            bad |= !(0.0..=1.0).contains(&v);
            // As in column_cells_portable.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let c = (v * scale).max(0.0).min(scale) as i32 as u32;
            if let Some(slot) = out.get_mut(j * stride + r) {
                *slot = c;
            }
        }
    }
    *outside |= bad;
}

/// [`column_cells`], inlined into each compiled variant so that the loop
/// vectorises for its features: the product clamped to `[0, bins]` (NaN to 0)
/// is truncated, which for a score in [0, 1] is the binned kernels' cell
/// (`floor(score * bins)`, at most `bins`); a score outside is flagged and its
/// batch refused, so its cell only has to be a cell.
#[inline(always)]
fn column_cells_portable<X: Score>(column: &[X], out: &mut [u32], scale: f64, outside: &mut bool) {
    let mut bad = false;
    for (slot, x) in out.iter_mut().zip(column) {
        let v = x.to_f64();
        bad |= !(0.0..=1.0).contains(&v);
        // Within [0, 2^31): the truncation is exact and fits.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let c = (v * scale).max(0.0).min(scale) as i32 as u32;
        *slot = c;
    }
    *outside |= bad;
}
