//! One page of a compact vector: a code byte per entry with the exceptions listed, or, once
//! half of its entries would be exceptions, the entries as 32-byte elements.

use std::ops::Range;

use sluice_field::Fr;

use super::code::{small_code_vartime, Entry, SMALL};
use super::format::{ESCAPE, FR_BYTES, PAGE_LEN};

/// Bytes one exception holds: its position in the page and its element.
pub(super) const EXCEPTION_BYTES: u64 = 2 + FR_BYTES;

/// Exceptions a page of codes lists before it may become raw: enough to tell a dense page
/// from a run of large values.
const MIN_BEFORE_RAW: usize = 64;

/// A page of codes: a code byte per entry, and the exceptions the escapes stand for.
#[derive(Clone, Default)]
pub struct CodePage {
    codes: Vec<u8>,
    exception_at: Vec<u16>,
    exceptions: Vec<Fr>,
}

#[derive(Clone)]
pub(super) enum Page {
    Codes(CodePage),
    Raw(Vec<Fr>),
}

/// What a page needs before it can take the next value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Grow {
    /// Room for more entries (codes, or elements of a raw page).
    Entries,
    /// Room for more exceptions.
    Exceptions,
    /// Conversion to 32-byte elements.
    ToRaw,
}

impl Page {
    /// A page of codes with room for `entries`.
    pub(super) fn with_room(entries: usize) -> Self {
        Page::Codes(CodePage {
            codes: Vec::with_capacity(entries),
            ..CodePage::default()
        })
    }

    /// Host bytes the page holds, by capacity.
    pub(super) fn bytes(&self) -> u64 {
        match self {
            Page::Codes(p) => {
                p.codes.capacity() as u64
                    + p.exception_at.capacity() as u64 * 2
                    + p.exceptions.capacity() as u64 * FR_BYTES
            }
            Page::Raw(v) => v.capacity() as u64 * FR_BYTES,
        }
    }

    /// The number of exceptions listed (0 for a raw page).
    pub(super) fn exceptions(&self) -> usize {
        match self {
            Page::Codes(p) => p.exceptions.len(),
            Page::Raw(_) => 0,
        }
    }

    /// The entries that are not small integers: exceptions, or every entry of a raw page.
    pub(super) fn dense_entries(&self) -> usize {
        match self {
            Page::Codes(p) => p.exceptions.len(),
            Page::Raw(v) => v.len(),
        }
    }

    /// Appends `x` where there is room, else says what the page needs first.
    #[inline]
    pub(super) fn try_push(&mut self, x: Fr) -> Result<(), Grow> {
        match self {
            Page::Raw(v) if v.len() < v.capacity() => v.push(x),
            Page::Raw(_) => return Err(Grow::Entries),
            Page::Codes(p) if p.codes.len() == p.codes.capacity() => return Err(Grow::Entries),
            Page::Codes(p) => match small_code_vartime(&x) {
                Some(code) => p.codes.push(code),
                // Two thirds of the entries so far exceptions: codes hold three quarters of
                // raw's bytes, and are slower to read.
                None if p.exceptions.len() >= MIN_BEFORE_RAW
                    && 3 * p.exceptions.len() >= 2 * p.codes.len() =>
                {
                    return Err(Grow::ToRaw)
                }
                None if p.exceptions.len() < p.exceptions.capacity() => {
                    p.exception_at.push(p.codes.len() as u16);
                    p.codes.push(ESCAPE);
                    p.exceptions.push(x);
                }
                None => return Err(Grow::Exceptions),
            },
        }
        Ok(())
    }

    /// The bytes [`grow`](Self::grow) will add (before it frees any).
    pub(super) fn growth_bytes(&self, grow: Grow) -> u64 {
        let (old, new) = self.growth(grow);
        match (self, grow) {
            (Page::Raw(_), _) | (_, Grow::ToRaw) => (new - old) as u64 * FR_BYTES,
            (Page::Codes(_), Grow::Entries) => (new - old) as u64,
            (Page::Codes(_), Grow::Exceptions) => (new - old) as u64 * EXCEPTION_BYTES,
        }
    }

    /// Old and new capacity of what `grow` grows (for a conversion, of the raw elements).
    fn growth(&self, grow: Grow) -> (usize, usize) {
        match (self, grow) {
            (Page::Raw(v), _) => (v.capacity(), (2 * v.capacity()).min(PAGE_LEN)),
            (Page::Codes(p), Grow::Entries) => {
                (p.codes.capacity(), (2 * p.codes.capacity()).min(PAGE_LEN))
            }
            (Page::Codes(p), Grow::Exceptions) => {
                let old = p.exceptions.capacity();
                (old, (2 * old).clamp(4, PAGE_LEN))
            }
            // Room for twice the entries so far, as the raw page then doubles.
            (Page::Codes(p), Grow::ToRaw) => {
                let room = (2 * p.codes.len()).next_power_of_two();
                (0, room.min(p.codes.capacity()))
            }
        }
    }

    /// Does what `grow` says: the bytes of [`growth_bytes`](Self::growth_bytes) were
    /// acquired. Returns the bytes freed (a converted page's codes and exceptions).
    #[cold]
    pub(super) fn grow(&mut self, grow: Grow) -> u64 {
        let (_, new) = self.growth(grow);
        if let (Page::Codes(p), Grow::ToRaw) = (&*self, grow) {
            let mut raw = Vec::with_capacity(new);
            raw.resize(p.codes.len(), Fr::from_mont_limbs_unchecked([0; 4]));
            self.decode(0..raw.len(), &mut raw);
            let freed = self.bytes();
            *self = Page::Raw(raw);
            return freed;
        }
        match self {
            Page::Raw(v) => v.reserve_exact(new - v.len()),
            Page::Codes(p) if grow == Grow::Entries => p.codes.reserve_exact(new - p.codes.len()),
            Page::Codes(p) => {
                p.exception_at.reserve_exact(new - p.exception_at.len());
                p.exceptions.reserve_exact(new - p.exceptions.len());
            }
        }
        0
    }

    /// The value at `at` of the page.
    #[inline]
    pub(super) fn get(&self, at: usize) -> Fr {
        match self {
            Page::Raw(v) => v[at],
            Page::Codes(p) => {
                let code = p.codes[at];
                if code != ESCAPE {
                    return SMALL[code as usize];
                }
                let k = p.exception_at.partition_point(|&e| (e as usize) < at);
                p.exceptions[k]
            }
        }
    }

    /// Entry `at`, as its code where it has one.
    #[inline]
    pub(super) fn entry(&self, at: usize) -> Entry {
        match self {
            Page::Raw(v) => Entry::Full(v[at]),
            Page::Codes(p) => {
                let code = p.codes[at];
                if code != ESCAPE {
                    return Entry::Small(code as i8);
                }
                let k = p.exception_at.partition_point(|&e| (e as usize) < at);
                Entry::Full(p.exceptions[k])
            }
        }
    }

    /// The page's entries `range` into `out` (as long as the range).
    pub(super) fn decode(&self, range: Range<usize>, out: &mut [Fr]) {
        match self {
            Page::Raw(v) => out.copy_from_slice(&v[range]),
            Page::Codes(p) => {
                for (o, &code) in out.iter_mut().zip(&p.codes[range.clone()]) {
                    *o = SMALL[code as usize];
                }
                let (positions, values) = p.exceptions_in(range.clone());
                for (&at, x) in positions.iter().zip(values) {
                    out[at as usize - range.start] = *x;
                }
            }
        }
    }

    /// The page's entries `range` as a [`Piece`].
    pub(super) fn piece(&self, range: Range<usize>) -> Piece<'_> {
        match self {
            Page::Raw(v) => Piece::Raw(&v[range]),
            Page::Codes(p) => Piece::Codes { page: p, range },
        }
    }
}

impl CodePage {
    /// The code of every entry of the page so far.
    pub fn codes(&self) -> &[u8] {
        &self.codes
    }

    /// The exceptions whose positions lie in `range` of the page: their positions (in the
    /// page, ascending) and values.
    pub fn exceptions_in(&self, range: Range<usize>) -> (&[u16], &[Fr]) {
        let at = &self.exception_at;
        let first = at.partition_point(|&e| (e as usize) < range.start);
        let end = at.partition_point(|&e| (e as usize) < range.end);
        (&at[first..end], &self.exceptions[first..end])
    }
}

/// Contiguous storage of some values of a [`CompactVec`](super::CompactVec), as
/// [`pieces`](super::CompactVec::pieces) gives them.
pub enum Piece<'a> {
    /// 32-byte elements.
    Raw(&'a [Fr]),
    /// The entries `range` of a page of codes: `page.codes()[range]`, each
    /// [`ESCAPE`](super::ESCAPE) standing for the exception at its position.
    Codes {
        /// The page.
        page: &'a CodePage,
        /// The entries of the page in this piece.
        range: Range<usize>,
    },
}

impl Piece<'_> {
    /// The number of values in the piece.
    pub fn len(&self) -> usize {
        match self {
            Piece::Raw(v) => v.len(),
            Piece::Codes { range, .. } => range.len(),
        }
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
