//! The rounds of BTRD attempts of the draws that a level's first attempts
//! left open ([`super::multinomial`]): each round takes one attempt of every
//! draw still open, one vector pass per step of BTRD over only the draws at
//! that step ([`super::binomial_lanes`]): the squeeze of the draws at a new
//! attempt; the candidate of those whose uniform fell outside it; the test
//! near the mode of the candidates near it, the test far from it of the
//! others. The draws a round rejects take their next attempt in the next
//! round. The same attempts, words and operations as the scalar sampler, so
//! the same counts.

use super::binomial::{Btrd, Stream};
use super::binomial_lanes::{
    candidates, far_tests, near_tests, squeeze_attempts, Draws, Tests, FAR, LANES, NEAR, OUTSIDE,
    REJECTED, SQUEEZED,
};

/// BTRD draws left open, side by side.
#[derive(Default)]
pub(super) struct Batch {
    /// Each draw's owner (the caller's index).
    pub owner: Vec<usize>,
    /// Each draw's BTRD count, once [`Batch::take`] has run.
    pub count: Vec<f64>,
    /// The draws (rows, BTRD's share, stream node), each draw's attempt, its
    /// candidate and the uniform the candidate is tested with.
    first: Lanes,
    attempt: Vec<u32>,
    k: Vec<f64>,
    v: Vec<f64>,
    /// The lanes of a pass.
    lanes: Lanes,
    /// The draws at each step of a round, and those the next round takes.
    todo: Vec<usize>,
    outside: Vec<usize>,
    near: Vec<usize>,
    far: Vec<usize>,
    again: Vec<usize>,
}

/// The lanes of one vector pass.
#[derive(Default)]
struct Lanes {
    n: Vec<f64>,
    p: Vec<f64>,
    node: Vec<u32>,
    attempt: Vec<u32>,
    k: Vec<f64>,
    v: Vec<f64>,
    state: Vec<u8>,
    accepted: Vec<bool>,
}

impl Lanes {
    /// The lanes of the draws `which` of `all`, at their attempts, with
    /// their candidates (`k`, `v`) when `tested`; padded to whole vectors by
    /// lanes of valid BTRD arguments (results unread).
    fn gather(&mut self, which: &[usize], all: &Batch, tested: bool) {
        self.n.clear();
        self.p.clear();
        self.node.clear();
        self.attempt.clear();
        for &i in which {
            self.n.push(all.first.n[i]);
            self.p.push(all.first.p[i]);
            self.node.push(all.first.node[i]);
            self.attempt.push(all.attempt[i]);
        }
        if tested {
            self.k.clear();
            self.v.clear();
            self.k.extend(which.iter().map(|&i| all.k[i]));
            self.v.extend(which.iter().map(|&i| all.v[i]));
        }
        let width = which.len().div_ceil(LANES) * LANES;
        self.n.resize(width, 20.0);
        self.p.resize(width, 0.5);
        self.node.resize(width, 0);
        self.attempt.resize(width, 0);
        self.k.resize(width, 10.0);
        self.v.resize(width, 0.5);
        self.state.resize(width, REJECTED);
        self.accepted.resize(width, false);
    }

    /// The lanes' draws at their attempts of `stream`, and the buffers of
    /// their candidates (or counts) and verdicts.
    fn draws(&mut self, stream: Stream) -> (Draws<'_>, &mut [f64], &mut [f64], &mut [u8]) {
        let draws = Draws {
            n: &self.n,
            p: &self.p,
            node: &self.node,
            attempt: &self.attempt,
            key: stream.key,
            replicate: stream.replicate,
        };
        (draws, &mut self.k, &mut self.v, &mut self.state)
    }

    /// The lanes' candidates, and the buffer of the tests' verdicts.
    fn tests(&mut self) -> (Tests<'_>, &mut [bool]) {
        let tests = Tests {
            n: &self.n,
            p: &self.p,
            k: &self.k,
            v: &self.v,
        };
        (tests, &mut self.accepted)
    }
}

impl Batch {
    pub fn clear(&mut self) {
        self.owner.clear();
        self.first.n.clear();
        self.first.p.clear();
        self.first.node.clear();
        self.attempt.clear();
        self.todo.clear();
        self.outside.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.owner.is_empty()
    }

    /// A draw for `owner`, `draw` on stream node `node`, to go on from
    /// `attempt`: with its squeeze, or (`outside`) with the rest of that
    /// attempt (its uniform fell outside the squeeze).
    #[inline]
    pub fn push(&mut self, owner: usize, draw: Btrd, node: u32, attempt: u32, outside: bool) {
        let i = self.owner.len();
        self.owner.push(owner);
        self.first.n.push(draw.n);
        self.first.p.push(draw.p);
        self.first.node.push(node);
        self.attempt.push(attempt);
        if outside {
            self.outside.push(i);
        } else {
            self.todo.push(i);
        }
    }

    /// Every draw's BTRD count into [`Batch::count`], in rounds.
    pub fn take(&mut self, stream: Stream) {
        let live = self.owner.len();
        self.count.clear();
        self.count.resize(live, 0.0);
        self.k.resize(live, 0.0);
        self.v.resize(live, 0.0);
        let mut lanes = std::mem::take(&mut self.lanes);
        while !self.todo.is_empty() || !self.outside.is_empty() {
            self.again.clear();
            if !self.todo.is_empty() {
                lanes.gather(&self.todo, self, false);
                let (draws, count, _, state) = lanes.draws(stream);
                squeeze_attempts(draws, count, state);
                for (j, &i) in self.todo.iter().enumerate() {
                    match lanes.state[j] {
                        SQUEEZED => self.count[i] = lanes.k[j],
                        OUTSIDE => self.outside.push(i),
                        _ => self.again.push(i),
                    }
                }
            }
            if !self.outside.is_empty() {
                lanes.gather(&self.outside, self, false);
                let (draws, k, v, state) = lanes.draws(stream);
                candidates(draws, k, v, state);
                for (j, &i) in self.outside.iter().enumerate() {
                    match lanes.state[j] {
                        NEAR => self.near.push(i),
                        FAR => self.far.push(i),
                        _ => {
                            self.again.push(i);
                            continue;
                        }
                    }
                    self.k[i] = lanes.k[j];
                    self.v[i] = lanes.v[j];
                }
                self.outside.clear();
            }
            self.decide(&mut lanes, true);
            self.decide(&mut lanes, false);
            for &i in &self.again {
                self.attempt[i] = self.attempt[i].wrapping_add(1);
            }
            std::mem::swap(&mut self.todo, &mut self.again);
        }
        self.lanes = lanes;
    }

    /// The tests of the candidates near the mode (or far from it): the
    /// accepted counts, the rejected draws for the next round.
    fn decide(&mut self, lanes: &mut Lanes, near: bool) {
        let mut which = std::mem::take(if near { &mut self.near } else { &mut self.far });
        if !which.is_empty() {
            lanes.gather(&which, self, true);
            let (tests, accepted) = lanes.tests();
            if near {
                near_tests(tests, accepted);
            } else {
                far_tests(tests, accepted);
            }
            for (j, &i) in which.iter().enumerate() {
                if lanes.accepted[j] {
                    self.count[i] = self.k[i];
                } else {
                    self.again.push(i);
                }
            }
            which.clear();
        }
        *(if near { &mut self.near } else { &mut self.far }) = which;
    }
}

#[cfg(test)]
mod tests {
    use super::super::binomial::{binomial, binomial_or_btrd};
    use super::*;
    use crate::random::key_of;

    #[test]
    fn batched_draws_are_the_scalar_draws() {
        // Means from 10 up, shares on both sides of 1/2 and at the extremes, totals up to
        // 2^52: the squeeze, the test near the mode, the test far from it, rejections.
        let totals = [
            20_u64,
            41,
            600,
            1_203,
            70_000,
            1_000_003,
            1 << 40,
            (1 << 52) - 1,
        ];
        let shares = [0.5, 0.48, 0.3, 0.9, 0.004, 1e-9, 0.999_999];
        let mut batch = Batch::default();
        let mut want = Vec::new();
        let mut taken = Vec::new();
        for replicate in 0..60_u32 {
            let stream = Stream {
                key: key_of(12_345),
                replicate,
                node: 0,
            };
            batch.clear();
            want.clear();
            taken.clear();
            for &n in &totals {
                for &p in &shares {
                    let node = want.len() as u32 * 7 + 1;
                    let at = Stream { node, ..stream };
                    want.push(binomial(n, p, at));
                    if let Err(draw) = binomial_or_btrd(n, p, at) {
                        batch.push(want.len() - 1, draw, node, 0, false);
                        taken.push(draw);
                    }
                }
            }
            assert!(batch.owner.len() > 30);
            batch.take(stream);
            for ((&slot, &k), draw) in batch.owner.iter().zip(&batch.count).zip(&taken) {
                let (n, p) = (draw.n, draw.p);
                assert_eq!(draw.count(k), want[slot], "{n} {p} {replicate}");
            }
        }
    }
}
