//! An open-addressing map from score keys to dense ranks, as the two sweeps
//! over few distinct values use it.

/// Most distinct values per vector the table sweep handles (ranks fit `u16`).
pub const TABLE_MAX_DISTINCT: usize = 1 << 16;

/// Open-addressing map from order keys to a `u32` (a count, then a rank).
/// The key `u64::MAX` marks empty slots; the value of that key (a real key
/// for integer scores) is kept on the side.
pub(super) struct KeyMap {
    keys: Vec<u64>,
    values: Vec<u32>,
    pub(super) len: usize,
    shift: u32,
    max_key: Option<u32>,
}

/// The key that marks an empty slot.
const EMPTY: u64 = u64::MAX;

impl KeyMap {
    pub(super) fn with_capacity(distinct: usize) -> Self {
        let slots = (2 * distinct).next_power_of_two().max(256);
        Self {
            keys: vec![EMPTY; slots],
            values: vec![0; slots],
            len: 0,
            shift: 64 - slots.trailing_zeros(),
            max_key: None,
        }
    }

    #[inline]
    fn slot(&self, key: u64) -> usize {
        // Fibonacci hashing: the top bits of the product.
        #[allow(clippy::cast_possible_truncation)]
        let s = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize;
        s
    }

    /// Count one more `key`.
    #[inline]
    pub(super) fn add(&mut self, key: u64) {
        if key == EMPTY {
            if self.max_key.is_none() {
                self.len += 1;
            }
            *self.max_key.get_or_insert(0) += 1;
            return;
        }
        let mask = self.keys.len() - 1;
        let mut i = self.slot(key);
        loop {
            match self.keys.get(i).copied() {
                Some(k) if k == key => {
                    if let Some(v) = self.values.get_mut(i) {
                        *v += 1;
                    }
                    return;
                }
                Some(EMPTY) => break,
                _ => i = (i + 1) & mask,
            }
        }
        self.insert_at(i, key, 1);
    }

    /// The id of `key`: its value when present, else the count of keys so
    /// far (ids in order of first sight), inserted.
    #[inline]
    pub(super) fn id_of(&mut self, key: u64) -> u32 {
        #[allow(clippy::cast_possible_truncation)]
        let next = self.len as u32;
        if key == EMPTY {
            if let Some(id) = self.max_key {
                return id;
            }
            self.len += 1;
            self.max_key = Some(next);
            return next;
        }
        let mask = self.keys.len() - 1;
        let mut i = self.slot(key);
        loop {
            match self.keys.get(i).copied() {
                Some(k) if k == key => return self.values.get(i).copied().unwrap_or(0),
                Some(EMPTY) | None => break,
                _ => i = (i + 1) & mask,
            }
        }
        self.insert_at(i, key, next);
        next
    }

    fn insert_at(&mut self, i: usize, key: u64, value: u32) {
        if let (Some(k), Some(v)) = (self.keys.get_mut(i), self.values.get_mut(i)) {
            (*k, *v) = (key, value);
        }
        self.len += 1;
        if 2 * self.len > self.keys.len() {
            let old = std::mem::replace(self, Self::with_capacity(self.keys.len()));
            for (k, v) in old.entries() {
                self.insert(k, v);
            }
        }
    }

    pub(super) fn insert(&mut self, key: u64, value: u32) {
        if key == EMPTY {
            if self.max_key.is_none() {
                self.len += 1;
            }
            self.max_key = Some(value);
            return;
        }
        let mask = self.keys.len() - 1;
        let mut i = self.slot(key);
        while self.keys.get(i).is_some_and(|&k| k != EMPTY) {
            i = (i + 1) & mask;
        }
        self.insert_at(i, key, value);
    }

    /// The value of a key known to be present.
    #[inline]
    pub(super) fn get(&self, key: u64) -> u32 {
        if key == EMPTY {
            return self.max_key.unwrap_or(0);
        }
        let mask = self.keys.len() - 1;
        let mut i = self.slot(key);
        loop {
            match self.keys.get(i).copied() {
                Some(k) if k == key => return self.values.get(i).copied().unwrap_or(0),
                Some(EMPTY) | None => return 0,
                _ => i = (i + 1) & mask,
            }
        }
    }

    pub(super) fn entries(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.keys
            .iter()
            .zip(&self.values)
            .filter(|(&k, _)| k != EMPTY)
            .map(|(&k, &v)| (k, v))
            .chain(self.max_key.map(|v| (EMPTY, v)))
    }
}

/// Sorted distinct keys of some count maps, and a map from key to rank.
pub(super) fn ranks(maps: &[&KeyMap]) -> (usize, KeyMap) {
    let mut keys: Vec<u64> = maps
        .iter()
        .flat_map(|m| m.entries().map(|(k, _)| k))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut rank = KeyMap::with_capacity(keys.len());
    for (r, &k) in keys.iter().enumerate() {
        #[allow(clippy::cast_possible_truncation)]
        rank.insert(k, r as u32);
    }
    (keys.len(), rank)
}

/// Counts per rank of one chunk's count map.
pub(super) fn counts_by_rank(map: &KeyMap, rank: &KeyMap, distinct: usize) -> Vec<u64> {
    let mut out = vec![0_u64; distinct];
    for (k, c) in map.entries() {
        if let Some(o) = out.get_mut(rank.get(k) as usize) {
            *o += u64::from(c);
        }
    }
    out
}
