//! The probability matrix the pass and the row kernels read, in either
//! layout ([`ProbaMatrix`]).

/// An `N x K` probability matrix as [`super::evaluate_proba`] reads it.
///
/// Row-major: row `i` is `values[i*K..(i+1)*K]` (numpy's C order).
/// Column-major: class `j` is `values[j*N..(j+1)*N]` (numpy's Fortran order,
/// or the K probability columns of a table copied back to back). The kernel
/// gathers column-major input into row blocks of `BLOCK` rows that stay in
/// L1, so both layouts give the same bits at the cost of one extra pass
/// through cache, instead of a strided copy of the whole matrix.
#[derive(Debug, Clone, Copy)]
pub struct ProbaMatrix<'a, P> {
    pub(super) values: &'a [P],
    pub(super) k: usize,
    pub(super) column_major: bool,
}

impl<'a, P> ProbaMatrix<'a, P> {
    /// `values` holds whole rows of `k` probabilities one after another.
    #[must_use]
    pub fn row_major(values: &'a [P], k: usize) -> Self {
        Self {
            values,
            k,
            column_major: false,
        }
    }

    /// `values` holds `k` whole columns (one per class) one after another.
    #[must_use]
    pub fn column_major(values: &'a [P], k: usize) -> Self {
        Self {
            values,
            k,
            column_major: true,
        }
    }

    /// The number of classes (columns).
    #[must_use]
    pub fn k(&self) -> usize {
        self.k
    }

    /// Whether the columns are contiguous.
    #[must_use]
    pub fn is_column_major(&self) -> bool {
        self.column_major
    }
}
