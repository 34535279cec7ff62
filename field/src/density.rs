//! Which variables an MSM uses: a bitmap over all variables (bellperson's density tracker).
//!
//! It lives here, below the MSM and the backends, because the prover builds it, the backend
//! trait takes it and both MSMs read it.

use alloc::vec::Vec;
use core::fmt;
use core::ops::Range;

/// Errors of [`Density`]'s checked accessors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DensityError {
    /// An index past the end of the density.
    IndexOutOfRange {
        /// The index given.
        index: usize,
        /// The density's length.
        len: usize,
    },
    /// Values to gather that do not cover exactly the density's variables.
    LengthMismatch {
        /// The density's length.
        expected: usize,
        /// The number of values given.
        got: usize,
    },
}

impl fmt::Display for DensityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DensityError::IndexOutOfRange { index, len } => {
                write!(f, "density index {index} out of range (length {len})")
            }
            DensityError::LengthMismatch { expected, got } => write!(
                f,
                "{got} values to gather over a density of {expected} variables"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for DensityError {}

/// A bitmap over variables: bit `i` is set iff variable `i` is used by the MSM.
///
/// With a density, the bases are dense over the *used* variables only
/// (`bases.len() == density.count_ones()`) while the scalars cover *all* variables
/// (`scalars.len() == density.len()`): the `k`-th base pairs with the scalar of the `k`-th set
/// bit. This is the layout of bellperson's parameter files (the `a`/`b` queries skip unused
/// variables), so a prover passes its full assignment and the density of the query.
///
/// Bits at positions `>= len` are always clear, so [`Density::words`] can be uploaded as is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Density {
    words: Vec<u64>,
    len: usize,
}

impl Density {
    /// A density over `len` variables, none of them used.
    pub fn new(len: usize) -> Self {
        Density {
            words: alloc::vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// A density over `len` variables, all of them used.
    pub fn full(len: usize) -> Self {
        let mut words = alloc::vec![u64::MAX; len.div_ceil(64)];
        if len % 64 != 0 {
            if let Some(last) = words.last_mut() {
                *last = (1u64 << (len % 64)) - 1;
            }
        }
        Density { words, len }
    }

    /// A density over `len` variables with exactly those of `range` used: how an MSM
    /// takes a range of a scalar buffer (the k-th base pairs with scalar `range.start + k`).
    ///
    /// # Panics
    /// When the range runs past `len`.
    pub fn range(len: usize, range: Range<usize>) -> Self {
        assert!(
            range.start <= range.end && range.end <= len,
            "density range {range:?} of {len}"
        );
        let mut d = Density::new(len);
        let mut at = range.start;
        while at < range.end {
            let (word, bit) = (at / 64, at % 64);
            let bits = (64 - bit).min(range.end - at);
            let mask = match bits {
                64 => u64::MAX,
                b => ((1u64 << b) - 1) << bit,
            };
            d.words[word] |= mask;
            at += bits;
        }
        d
    }

    /// Appends one variable, used or not (bellperson's `add_element` followed by `inc`).
    pub fn push(&mut self, used: bool) {
        if self.len % 64 == 0 {
            self.words.push(0);
        }
        if used {
            self.words[self.len / 64] |= 1 << (self.len % 64);
        }
        self.len += 1;
    }

    /// Marks variable `index` as used or unused.
    ///
    /// Returns [`DensityError::IndexOutOfRange`] if `index >= self.len()`.
    pub fn set(&mut self, index: usize, used: bool) -> Result<(), DensityError> {
        if index >= self.len {
            return Err(DensityError::IndexOutOfRange {
                index,
                len: self.len,
            });
        }
        let (word, bit) = (index / 64, 1u64 << (index % 64));
        if used {
            self.words[word] |= bit;
        } else {
            self.words[word] &= !bit;
        }
        Ok(())
    }

    /// Whether variable `index` is used (`false` beyond the end).
    pub fn get(&self, index: usize) -> bool {
        index < self.len && self.words[index / 64] >> (index % 64) & 1 == 1
    }

    /// Number of variables covered (used or not).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the density covers no variable at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of used variables, i.e. the number of bases this density expects.
    pub fn count_ones(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// `Some(k)` when the used variables are exactly the first `k` (a prefix: the h query's
    /// density, every coefficient but the zero top one), so a gather by the used positions
    /// is a plain copy of the first `k` values; `None` otherwise.
    pub fn used_prefix(&self) -> Option<usize> {
        let full = self.words.iter().take_while(|&&w| w == u64::MAX).count();
        let rest = &self.words[full..];
        let k = match rest.split_first() {
            None => full * 64,
            // The next word holds the prefix's tail as its low bits, and nothing follows.
            Some((&w, after)) if w & w.wrapping_add(1) == 0 && after.iter().all(|&x| x == 0) => {
                full * 64 + w.count_ones() as usize
            }
            Some(_) => return None,
        };
        Some(k.min(self.len))
    }

    /// Variables `range` as a density of their own (bit `i` of it is bit `range.start + i`
    /// here), copied a word at a time: how a batched MSM cuts a query's density.
    ///
    /// # Panics
    /// When the range runs past the end.
    pub fn slice(&self, range: Range<usize>) -> Density {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "density slice {range:?} of {}",
            self.len
        );
        let len = range.end - range.start;
        let (first, shift) = (range.start / 64, range.start % 64);
        let word = |i: usize| self.words.get(i).copied().unwrap_or(0);
        let mut words: Vec<u64> = (0..len.div_ceil(64))
            .map(|j| match shift {
                0 => word(first + j),
                s => word(first + j) >> s | word(first + j + 1) << (64 - s),
            })
            .collect();
        if len % 64 != 0 {
            if let Some(last) = words.last_mut() {
                *last &= (1u64 << (len % 64)) - 1;
            }
        }
        Density { words, len }
    }

    /// The used positions in increasing order (word by word: unused runs cost one test per
    /// 64 variables).
    pub fn positions(&self) -> impl Iterator<Item = usize> + '_ {
        set_bits(0, &self.words)
    }

    /// The used positions in `range`, in increasing order (word by word, as
    /// [`positions`](Self::positions), over the words the range touches).
    pub fn positions_in(&self, range: Range<usize>) -> impl Iterator<Item = usize> + '_ {
        let w1 = range.end.div_ceil(64).min(self.words.len());
        let w0 = (range.start / 64).min(w1);
        set_bits(w0 * 64, &self.words[w0..w1]).filter(move |i| range.contains(i))
    }

    /// `f(i)` for every used position `i`, in order: in parallel under the `parallel`
    /// feature. Provers gather 2^24 or more scalars per MSM this way, where a serial
    /// bit-by-bit gather was a large share of a GPU partition (BENCHMARKS.md#partition).
    pub fn map_used<U, F>(&self, f: F) -> Vec<U>
    where
        U: Copy + Default + Send + Sync,
        F: Fn(usize) -> U + Sync,
    {
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            // Words per task: 65536 variables.
            const BLOCK: usize = 1024;
            let counts: Vec<usize> = self
                .words
                .par_chunks(BLOCK)
                .map(|b| b.iter().map(|w| w.count_ones() as usize).sum())
                .collect();
            let total = counts.iter().sum();
            let mut out: Vec<U> = (0..total).into_par_iter().map(|_| U::default()).collect();
            // Each block of words fills the slice of `out` its set bits map to.
            let mut slices = Vec::with_capacity(counts.len());
            let mut rest = out.as_mut_slice();
            for &c in &counts {
                let (head, tail) = core::mem::take(&mut rest).split_at_mut(c);
                slices.push(head);
                rest = tail;
            }
            slices
                .into_par_iter()
                .zip(self.words.par_chunks(BLOCK))
                .enumerate()
                .for_each(|(b, (slots, words))| {
                    for (slot, i) in slots.iter_mut().zip(set_bits(b * BLOCK * 64, words)) {
                        *slot = f(i);
                    }
                });
            out
        }
        #[cfg(not(feature = "parallel"))]
        {
            self.positions().map(f).collect()
        }
    }

    /// `values[i]` for every used position `i`, in order (see [`Density::map_used`]).
    ///
    /// Returns [`DensityError::LengthMismatch`] unless `values` covers exactly the density.
    pub fn gather<T: Copy + Default + Send + Sync>(
        &self,
        values: &[T],
    ) -> Result<Vec<T>, DensityError> {
        if values.len() != self.len {
            return Err(DensityError::LengthMismatch {
                expected: self.len,
                got: values.len(),
            });
        }
        Ok(self.map_used(|i| values[i]))
    }

    /// The bitmap as little-endian 64-bit words (bit `i` of the density is bit `i % 64` of
    /// word `i / 64`); bits past [`Density::len`] are clear.
    pub fn words(&self) -> &[u64] {
        &self.words
    }
}

/// The positions of the set bits of `words`, the first word's bit 0 being position `first`.
fn set_bits(first: usize, words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    words.iter().enumerate().flat_map(move |(j, &word)| {
        let mut w = word;
        core::iter::from_fn(move || {
            (w != 0).then(|| {
                let bit = w.trailing_zeros() as usize;
                w &= w - 1;
                first + j * 64 + bit
            })
        })
    })
}

impl FromIterator<bool> for Density {
    fn from_iter<I: IntoIterator<Item = bool>>(iter: I) -> Self {
        let mut d = Density::default();
        for used in iter {
            d.push(used);
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_use_exactly_their_variables() {
        for (len, a, b) in [
            (300, 0, 300),
            (300, 0, 0),
            (300, 5, 70),
            (300, 64, 128),
            (300, 63, 65),
            (64, 1, 64),
        ] {
            let d = Density::range(len, a..b);
            assert_eq!(d.len(), len);
            assert_eq!(d.count_ones(), b - a, "{a}..{b} of {len}");
            assert!(
                (0..len).all(|i| d.get(i) == (a..b).contains(&i)),
                "{a}..{b} of {len}"
            );
        }
    }

    #[test]
    fn slices_keep_their_bits() {
        let bits: Vec<bool> = (0..300)
            .map(|i| i % 7 == 0 || (100..170).contains(&i))
            .collect();
        let d: Density = bits.iter().copied().collect();
        for (a, b) in [
            (0, 300),
            (0, 0),
            (1, 65),
            (63, 64),
            (64, 128),
            (5, 299),
            (130, 300),
        ] {
            let s = d.slice(a..b);
            assert_eq!(s.len(), b - a, "{a}..{b}");
            let expect: Vec<bool> = bits[a..b].to_vec();
            let got: Vec<bool> = (0..b - a).map(|i| s.get(i)).collect();
            assert_eq!(got, expect, "{a}..{b}");
            assert_eq!(
                s.count_ones(),
                expect.iter().filter(|&&x| x).count(),
                "{a}..{b}"
            );
        }
    }

    #[test]
    fn push_set_get_count() {
        let bits: Vec<bool> = (0..200).map(|i| i % 3 == 0 || i == 127).collect();
        let mut d: Density = bits.iter().copied().collect();
        assert_eq!(d.len(), 200);
        assert_eq!(d.count_ones(), bits.iter().filter(|b| **b).count());
        for (i, b) in bits.iter().enumerate() {
            assert_eq!(d.get(i), *b, "bit {i}");
        }
        assert!(!d.get(200));
        d.set(1, true).unwrap();
        d.set(0, false).unwrap();
        assert!(d.get(1) && !d.get(0));
        assert_eq!(
            d.set(200, true),
            Err(DensityError::IndexOutOfRange {
                index: 200,
                len: 200
            })
        );
    }

    /// Positions, `map_used` and `gather` agree with a bit-by-bit scan, across the parallel
    /// path's blocks (65536 variables each) and at ragged ends.
    #[test]
    fn positions_and_gather_follow_the_set_bits() {
        for len in [0usize, 1, 64, 65, 200_003] {
            let d: Density = (0..len)
                .map(|i| i % 7 == 3 || i % 65_536 == 0 || i > 150_000)
                .collect();
            let naive: Vec<usize> = (0..len).filter(|&i| d.get(i)).collect();
            assert_eq!(d.positions().collect::<Vec<_>>(), naive, "len {len}");
            assert_eq!(
                d.map_used(|i| i as u32),
                naive.iter().map(|&i| i as u32).collect::<Vec<_>>()
            );
            let values: Vec<u64> = (0..len as u64).map(|i| i * 3 + 1).collect();
            let want: Vec<u64> = naive.iter().map(|&i| values[i]).collect();
            assert_eq!(d.gather(&values).unwrap(), want, "len {len}");
        }
        let d = Density::full(10);
        assert_eq!(
            d.gather(&[0u8; 9]),
            Err(DensityError::LengthMismatch {
                expected: 10,
                got: 9
            })
        );
    }

    #[test]
    fn positions_in_a_range_are_the_positions_there() {
        // Every fourth and every seventh variable, over word boundaries and a partial
        // last word; ranges empty, inside one word, across words, past the end.
        let d: Density = (0..300).map(|i| i % 4 == 0 || i % 7 == 0).collect();
        for (lo, hi) in [
            (0, 0),
            (5, 5),
            (3, 60),
            (60, 70),
            (0, 300),
            (63, 129),
            (250, 400),
            (299, 300),
            (310, 320),
        ] {
            let want: Vec<usize> = d.positions().filter(|i| (lo..hi).contains(i)).collect();
            assert_eq!(
                d.positions_in(lo..hi).collect::<Vec<_>>(),
                want,
                "{lo}..{hi}"
            );
        }
    }

    #[test]
    fn used_prefix_only_for_leading_runs() {
        for len in [0usize, 1, 63, 64, 65, 130, 200] {
            for k in [0, 1, 63, 64, 65, 128, 129, len] {
                if k > len {
                    continue;
                }
                let d: Density = (0..len).map(|i| i < k).collect();
                assert_eq!(d.used_prefix(), Some(k), "len {len}, prefix {k}");
                if k + 1 < len {
                    // One more used variable after a gap breaks the prefix.
                    let mut gap = d.clone();
                    gap.set(k + 1, true).unwrap();
                    assert_eq!(gap.used_prefix(), None, "len {len}, prefix {k} + gap");
                }
                if k >= 2 {
                    let mut hole = d.clone();
                    hole.set(k / 2 - 1, false).unwrap();
                    assert_eq!(hole.used_prefix(), None, "len {len}, prefix {k} - hole");
                }
            }
        }
        let mut h = Density::full(100);
        h.push(false);
        assert_eq!(h.used_prefix(), Some(100));
    }

    #[test]
    fn full_and_new() {
        for len in [0usize, 1, 63, 64, 65, 130] {
            let f = Density::full(len);
            assert_eq!(f.count_ones(), len, "len {len}");
            assert_eq!(f, (0..len).map(|_| true).collect::<Density>(), "len {len}");
            let e = Density::new(len);
            assert_eq!(e.count_ones(), 0);
            assert_eq!(e, (0..len).map(|_| false).collect::<Density>(), "len {len}");
        }
    }
}
