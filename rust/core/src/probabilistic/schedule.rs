//! The order of the pass: chunks of a size fixed by `K` only, run a group at
//! a time on the pool and folded in chunk order, so every sum has the same
//! bits at any thread count; the stop flag is looked at between groups.

use rayon::prelude::*;

use super::accumulators::{ProbAccumulators, ProbOptions};
use super::chunk::{chunk, ChunkIn, ConfOut, Errors, Part};
use super::dtype::Prob;
use crate::error::Result;
use crate::labels::Label;
use crate::parallel::{big_vec, Pool, CHECK_ROWS};

/// The inputs of one pass, their lengths already checked.
pub(super) struct Pass<'a, L, P> {
    pub(super) y_true: &'a [L],
    /// Row-major rows, or (`col_stride = Some(n)`) `k` columns of `n` values.
    pub(super) proba: &'a [P],
    pub(super) col_stride: Option<usize>,
    pub(super) y_pred: Option<&'a [L]>,
    pub(super) weights: Option<&'a [f64]>,
    pub(super) k: usize,
}

/// Rows per chunk: fixed by `k` only (never by the thread count), large
/// enough that merging the `2 k^2` partial sums is cheap next to the chunk.
fn chunk_rows(k: usize) -> usize {
    (1 << 15).max(16 * k)
}

impl<L: Label, P: Prob> Pass<'_, L, P> {
    /// Chunk `c` of `rows` rows.
    fn chunk(&self, c: usize, rows: usize, opts: &ProbOptions, out: Option<ConfOut<'_>>) -> Part {
        let n = self.y_true.len();
        let k = self.k;
        let lo = c * rows;
        let hi = (lo + rows).min(n);
        let inp = ChunkIn {
            y: self.y_true.get(lo..hi).unwrap_or(&[]),
            proba: match self.col_stride {
                None => self.proba.get(lo * k..hi * k).unwrap_or(&[]),
                Some(_) => self.proba,
            },
            col_stride: self.col_stride,
            y_pred: self.y_pred.and_then(|y| y.get(lo..hi)),
            w: self.weights.and_then(|w| w.get(lo..hi)),
            k,
            offset: lo,
        };
        chunk(&inp, opts, out)
    }

    /// Chunks `start..end`, in parallel when `parallel`, in chunk order;
    /// `out` is the confidence and correctness of their rows, when kept.
    fn chunks(
        &self,
        (start, end): (usize, usize),
        rows: usize,
        opts: &ProbOptions,
        out: Option<ConfOut<'_>>,
        pool: Option<&Pool>,
    ) -> Vec<Part> {
        match (out, pool) {
            (Some(out), pool) => {
                let pieces: Vec<(usize, ConfOut<'_>)> = out
                    .pieces(rows)
                    .into_iter()
                    .enumerate()
                    .map(|(i, p)| (start + i, p))
                    .collect();
                match pool {
                    Some(pool) => pool.install(|| {
                        pieces
                            .into_par_iter()
                            .map(|(c, o)| self.chunk(c, rows, opts, Some(o)))
                            .collect()
                    }),
                    None => pieces
                        .into_iter()
                        .map(|(c, o)| self.chunk(c, rows, opts, Some(o)))
                        .collect(),
                }
            }
            (None, Some(pool)) => pool.install(|| {
                (start..end)
                    .into_par_iter()
                    .map(|c| self.chunk(c, rows, opts, None))
                    .collect()
            }),
            (None, None) => (start..end)
                .map(|c| self.chunk(c, rows, opts, None))
                .collect(),
        }
    }

    /// Run the pass: the folded accumulators (with each row's confidence and
    /// correctness when `keep`), the invalid inputs met, and with `keys` the
    /// rows' packed ranking keys (float32 probabilities only).
    ///
    /// # Errors
    /// `Interrupted` when the stop flag is raised between groups.
    pub(super) fn run(
        &self,
        opts: &ProbOptions,
        keep: bool,
        keys: bool,
        pool: &Pool,
    ) -> Result<(ProbAccumulators, Errors, Option<Vec<u32>>)> {
        let n = self.y_true.len();
        let k = self.k;
        let rows = chunk_rows(k);
        let n_chunks = n.div_ceil(rows);
        // Huge pages: the pass writes every slot, and 4 KiB pages would cost
        // one fault each on the way.
        let mut conf = keep
            .then(|| -> Result<Vec<f64>> {
                let mut v: Vec<f64> = big_vec(n, "the top-label confidences")?;
                v.resize(n, 0.0);
                Ok(v)
            })
            .transpose()?;
        let mut corr = keep
            .then(|| -> Result<Vec<bool>> {
                let mut v: Vec<bool> = big_vec(n, "the correctness of each row")?;
                v.resize(n, false);
                Ok(v)
            })
            .transpose()?;
        let mut packed = (keys && P::F32)
            .then(|| -> Result<Vec<u32>> {
                let mut v: Vec<u32> = big_vec(n, "the confidence ranking keys")?;
                v.resize(n, 0);
                Ok(v)
            })
            .transpose()?;
        let mut total = ProbAccumulators::empty(k, opts.n_bins, self.weights.is_some());
        let mut errors = Errors::default();
        // Chunks run a group at a time and are folded in chunk order; a group's
        // partial tables are bounded to about 64 MiB, and its rows to a few
        // times CHECK_ROWS, so that the stop flag is looked at often.
        let per_part = 16 * k * k + 64;
        let group = if pool.parallel_for(n) {
            ((64 << 20) / per_part)
                .min((4 * CHECK_ROWS) / rows)
                .max(2 * pool.threads())
        } else {
            1
        };
        let mut start = 0;
        while start < n_chunks {
            pool.check()?;
            let end = (start + group).min(n_chunks);
            let (lo, hi) = (start * rows, (end * rows).min(n));
            let out = match (conf.as_mut(), corr.as_mut(), packed.as_mut()) {
                (Some(cf), Some(cr), _) => Some(ConfOut::Kept(
                    cf.get_mut(lo..hi).unwrap_or_default(),
                    cr.get_mut(lo..hi).unwrap_or_default(),
                )),
                (_, _, Some(ks)) => Some(ConfOut::Keys(ks.get_mut(lo..hi).unwrap_or_default())),
                _ => None,
            };
            for part in self.chunks((start, end), rows, opts, out, (group > 1).then_some(pool)) {
                errors.absorb(part.errors);
                total.absorb(&part.acc);
            }
            start = end;
        }
        total.confidence = conf;
        total.correct = corr;
        Ok((total, errors, packed))
    }
}
