//! Compact host storage of scalar vectors: one byte per small value.
//!
//! The witness of the circuits Filecoin proves is mostly bits and small integers: in a
//! SHA-256 circuit every auxiliary value is 0 or 1 and 99.9% of the A and B evaluations lie
//! in [-127, 127]; in a bit decomposition 98.5% do (the measurement is in BENCHMARKS.md#c2,
//! made with `cargo run --release -p sluice-groth16 --example witness_sizes`). Stored as
//! 32-byte field elements, a, b and the witness of a waiting partition hold three full
//! vectors; stored here they hold about a tenth of one.
//!
//! # Encoding
//! A [`CompactVec`] is a sequence of pages of [`PAGE_LEN`] entries. Each entry is one code
//! byte: the value itself, as an `i8` in [-127, 127] (negative codes are `p - |k|`), or
//! [`ESCAPE`], for which the page lists the entry's position and its full element, in
//! ascending order. Against 32 bytes a value that costs 1 byte, or 35 for an exception.
//! Pages are allocated whole as the vector grows, so it never copies itself into a larger
//! buffer (no transient the size of the vector), and every allocation is asked of a
//! [`HostBudget`] first.
//!
//! A dense vector (more than half of its first [`PROBE_LEN`] values exceptions, as in a
//! MiMC-like chain) switches to raw 32-byte storage ([`FrVec`], in memory a backend lends
//! where it lends any), which is what it held before compaction existed. A vector that
//! turns dense only later stays compact, at most 35/32 of its raw size.
//!
//! # Security
//! Storing a value compactly depends on the value: how long the write takes and which
//! memory it touches reveal whether it is small. The witness already flows through
//! variable-time MSMs on the prover's own machine (see
//! [`ComputeBackend::msm_vartime`](crate::ComputeBackend)); proofs are blinded by `r` and
//! `s`. Where synthesis must not branch on the witness, use [`Storage::Raw`].

use std::ops::Range;
use std::sync::mpsc::{sync_channel, Receiver, TryRecvError};
use std::sync::{Arc, Mutex};

use ff::Field;
use sluice_field::Fr;

use crate::huge_pages::filled_with_huge_pages;
use crate::{FrVec, HostAllocator};

/// Entries per page of a compact vector.
pub const PAGE_LEN: usize = 1 << 16;

/// The code of an entry whose value is listed as an exception.
pub const ESCAPE: u8 = 0x80;

/// Entries after which an [`Storage::Auto`] vector decides between compact and raw.
pub const PROBE_LEN: usize = 4096;

/// Entries the first page starts with room for (it grows by doubling up to a page).
const FIRST_PAGE_LEN: usize = 1024;

const FR_BYTES: u64 = core::mem::size_of::<Fr>() as u64;

/// Bytes one exception holds: its position in the page and its element.
const EXCEPTION_BYTES: u64 = 2 + FR_BYTES;

/// Where the host bytes a vector holds are counted, and where it waits for them.
///
/// A vector asks for bytes before it allocates them and gives them back when it frees
/// them, so a budget that blocks in [`acquire`](Self::acquire) keeps what all its vectors
/// hold under a limit, never above it.
pub trait HostBudget: Send + Sync {
    /// Returns once `bytes` more may be held, counting them.
    fn acquire(&self, bytes: u64);
    /// `bytes` acquired before are no longer held.
    fn release(&self, bytes: u64);
}

/// How a [`CompactVec`] stores its values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Storage {
    /// Compact, unless the first [`PROBE_LEN`] values show the vector is dense (then raw).
    #[default]
    Auto,
    /// Always one code byte per value (for tests and measurements: a dense vector costs
    /// 35/32 of its raw size).
    Compact,
    /// Always 32-byte elements, with no branch on the values.
    Raw,
}

/// How a [`CompactVec`] allocates.
#[derive(Clone, Default)]
pub struct CompactConfig {
    /// Compact, raw, or decided by the values.
    pub storage: Storage,
    /// The length the vector is expected to reach (from the circuit's parameters), or 0.
    /// Raw storage is then allocated at this capacity on another thread, every page
    /// written ahead, in memory `lender` lends where it does: synthesis never waits for the
    /// kernel to zero fresh pages, and a GPU uploads it without a staging copy.
    pub capacity: usize,
    /// Where raw storage comes from when a backend lends host memory
    /// ([`ComputeBackend::host_allocator`](crate::ComputeBackend::host_allocator)).
    pub lender: Option<Arc<dyn HostAllocator>>,
    /// Where the bytes held are counted (and waited for).
    pub budget: Option<Arc<dyn HostBudget>>,
}

impl core::fmt::Debug for CompactConfig {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CompactConfig")
            .field("storage", &self.storage)
            .field("capacity", &self.capacity)
            .field("lender", &self.lender.is_some())
            .field("budget", &self.budget.is_some())
            .finish()
    }
}

/// Montgomery limbs of `a + b mod p`, for building [`SMALL`] at compile time.
const fn add_mod(a: [u64; 4], b: [u64; 4]) -> [u64; 4] {
    let p = Fr::MODULUS_LIMBS;
    let (mut sum, mut carry, mut i) = ([0u64; 4], 0u64, 0);
    while i < 4 {
        let t = a[i] as u128 + b[i] as u128 + carry as u128;
        sum[i] = t as u64;
        carry = (t >> 64) as u64;
        i += 1;
    }
    // Subtract p when sum >= p (a, b < p < 2^255, so no carry out of the top limb).
    let (mut diff, mut borrow, mut i) = ([0u64; 4], 0u64, 0);
    while i < 4 {
        let t = (sum[i] as u128).wrapping_sub(p[i] as u128 + borrow as u128);
        diff[i] = t as u64;
        borrow = (t >> 127) as u64;
        i += 1;
    }
    if borrow == 0 {
        diff
    } else {
        sum
    }
}

/// The element each code stands for (`SMALL[ESCAPE]` is unused, zero).
static SMALL: [Fr; 256] = {
    let p = Fr::MODULUS_LIMBS;
    let one = Fr::ONE.mont_limbs();
    let mut table = [Fr::from_mont_limbs_unchecked([0; 4]); 256];
    let mut k = 1;
    let mut acc = one;
    while k <= 127 {
        table[k] = Fr::from_mont_limbs_unchecked(acc);
        // p - acc: the code of -k is the byte of -(k as i8).
        let (mut neg, mut borrow, mut i) = ([0u64; 4], 0u64, 0);
        while i < 4 {
            let t = (p[i] as u128).wrapping_sub(acc[i] as u128 + borrow as u128);
            neg[i] = t as u64;
            borrow = (t >> 127) as u64;
            i += 1;
        }
        table[256 - k] = Fr::from_mont_limbs_unchecked(neg);
        acc = add_mod(acc, one);
        k += 1;
    }
    table
};

/// The element code `code` stands for, [`ESCAPE`] aside: the table devices receive too.
pub fn small_values() -> &'static [Fr; 256] {
    &SMALL
}

/// The code of `x` when it is a small integer (|k| <= 127), else `None`.
///
/// # Security
/// Variable time in `x` (see the module docs).
#[inline]
pub fn small_code_vartime(x: &Fr) -> Option<u8> {
    const ZERO: [u64; 4] = [0; 4];
    const ONE: [u64; 4] = Fr::ONE.mont_limbs();
    let limbs = x.mont_limbs();
    if limbs == ZERO {
        return Some(0);
    }
    if limbs == ONE {
        return Some(1);
    }
    if limbs == SMALL[0xFF].mont_limbs() {
        return Some(0xFF);
    }
    let c = x.to_canonical_limbs();
    let p = Fr::MODULUS_LIMBS;
    if c[1] | c[2] | c[3] == 0 && c[0] <= 127 {
        return Some(c[0] as u8);
    }
    // p - c <= 127 with the top three limbs equal (p's low limb is above 127).
    if c[1] == p[1] && c[2] == p[2] && c[3] == p[3] && p[0] - c[0] <= 127 {
        return Some((p[0] - c[0]).wrapping_neg() as u8);
    }
    None
}

/// One page: a code per entry and the exceptions in ascending position.
#[derive(Clone, Default)]
struct Page {
    codes: Vec<u8>,
    exception_at: Vec<u16>,
    exceptions: Vec<Fr>,
}

impl Page {
    fn bytes(&self) -> u64 {
        self.codes.capacity() as u64
            + self.exception_at.capacity() as u64 * 2
            + self.exceptions.capacity() as u64 * FR_BYTES
    }

    #[inline]
    fn get(&self, at: usize) -> Fr {
        let code = self.codes[at];
        if code != ESCAPE {
            return SMALL[code as usize];
        }
        let k = self.exception_at.partition_point(|&e| (e as usize) < at);
        self.exceptions[k]
    }

    /// The page's entries `range` into `out` (as long as the range).
    fn decode(&self, range: Range<usize>, out: &mut [Fr]) {
        for (o, &code) in out.iter_mut().zip(&self.codes[range.clone()]) {
            *o = SMALL[code as usize];
        }
        let first = self
            .exception_at
            .partition_point(|&e| (e as usize) < range.start);
        for (&at, x) in self.exception_at[first..]
            .iter()
            .zip(&self.exceptions[first..])
            .take_while(|(&at, _)| (at as usize) < range.end)
        {
            out[at as usize - range.start] = *x;
        }
    }
}

/// Raw storage: 32-byte elements, possibly waiting for a vector made ahead on another
/// thread.
struct Raw {
    data: FrVec,
    /// The vector made ahead and its capacity, until it is adopted.
    later: Option<(Mutex<Receiver<FrVec>>, usize)>,
}

enum Repr {
    Compact(Vec<Page>),
    Raw(Raw),
}

/// A growable vector of scalars stored compactly where its values are small (see the
/// module docs). Every byte it holds was asked of its [`HostBudget`] first and is given
/// back when it drops.
pub struct CompactVec {
    repr: Repr,
    len: usize,
    /// Bytes acquired from the budget (or held, without one).
    held: u64,
    config: CompactConfig,
}

impl Default for CompactVec {
    fn default() -> Self {
        CompactVec::new(CompactConfig::default())
    }
}

impl core::fmt::Debug for CompactVec {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CompactVec")
            .field("len", &self.len)
            .field("raw", &self.is_raw())
            .field("host_bytes", &self.held)
            .finish()
    }
}

impl Clone for CompactVec {
    /// A copy with no budget: its bytes are counted nowhere. Raw storage is copied into
    /// memory the original's lender lends where it does.
    fn clone(&self) -> Self {
        let config = CompactConfig {
            budget: None,
            ..self.config.clone()
        };
        let repr = match &self.repr {
            Repr::Compact(pages) => Repr::Compact(pages.clone()),
            Repr::Raw(raw) => {
                let lent = config
                    .lender
                    .as_ref()
                    .and_then(|l| l.fr_vec(raw.data.len()));
                let mut data = lent.unwrap_or_else(|| FrVec::from(Vec::with_capacity(self.len)));
                data.extend_from_slice(&raw.data);
                Repr::Raw(Raw { data, later: None })
            }
        };
        let mut copy = CompactVec {
            repr,
            len: self.len,
            held: 0,
            config,
        };
        copy.held = copy.measured_bytes();
        copy
    }
}

impl Drop for CompactVec {
    fn drop(&mut self) {
        if let Some(budget) = &self.config.budget {
            budget.release(self.held);
        }
    }
}

impl From<&[Fr]> for CompactVec {
    /// The values of a slice, stored by [`Storage::Auto`]'s rule.
    fn from(values: &[Fr]) -> Self {
        let mut v = CompactVec::new(CompactConfig {
            capacity: values.len(),
            ..CompactConfig::default()
        });
        v.extend_from_slice(values);
        v
    }
}

impl CompactVec {
    /// An empty vector.
    pub fn new(config: CompactConfig) -> Self {
        let repr = match config.storage {
            Storage::Raw => Repr::Raw(Raw {
                data: FrVec::new(),
                later: None,
            }),
            Storage::Auto | Storage::Compact => Repr::Compact(Vec::new()),
        };
        let mut v = CompactVec {
            repr,
            len: 0,
            held: 0,
            config,
        };
        if let Repr::Raw(_) = v.repr {
            v.request_raw_capacity();
        }
        v
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the values are stored as 32-byte elements (a dense vector, or
    /// [`Storage::Raw`]).
    pub fn is_raw(&self) -> bool {
        matches!(self.repr, Repr::Raw(_))
    }

    /// The raw elements, when stored raw.
    pub fn as_raw(&self) -> Option<&FrVec> {
        match &self.repr {
            Repr::Raw(raw) => Some(&raw.data),
            Repr::Compact(_) => None,
        }
    }

    /// Host bytes held (codes, exceptions and page table, or the raw capacity): what the
    /// budget counts.
    pub fn host_bytes(&self) -> u64 {
        self.held
    }

    /// The number of values stored as exceptions (0 when raw).
    pub fn exceptions(&self) -> usize {
        match &self.repr {
            Repr::Compact(pages) => pages.iter().map(|p| p.exceptions.len()).sum(),
            Repr::Raw(_) => 0,
        }
    }

    /// Bytes the storage holds now, by capacity.
    fn measured_bytes(&self) -> u64 {
        match &self.repr {
            Repr::Compact(pages) => {
                pages.iter().map(Page::bytes).sum::<u64>()
                    + (pages.capacity() * core::mem::size_of::<Page>()) as u64
            }
            Repr::Raw(raw) => raw.data.capacity() as u64 * FR_BYTES,
        }
    }

    fn acquire(&mut self, bytes: u64) {
        if let Some(budget) = &self.config.budget {
            budget.acquire(bytes);
        }
        self.held += bytes;
    }

    fn release(&mut self, bytes: u64) {
        if let Some(budget) = &self.config.budget {
            budget.release(bytes);
        }
        self.held -= bytes;
    }

    /// Appends `x`.
    #[inline]
    pub fn push(&mut self, x: Fr) {
        match &mut self.repr {
            Repr::Raw(raw) if raw.data.len() < raw.data.capacity() => raw.data.push(x),
            Repr::Raw(_) => {
                self.grow_raw();
                self.push(x);
                return;
            }
            Repr::Compact(pages) => {
                let at = self.len % PAGE_LEN;
                match pages.get_mut(self.len / PAGE_LEN) {
                    Some(p) if p.codes.len() < p.codes.capacity() => match small_code_vartime(&x) {
                        Some(code) => p.codes.push(code),
                        None if p.exceptions.len() < p.exceptions.capacity() => {
                            p.codes.push(ESCAPE);
                            p.exception_at.push(at as u16);
                            p.exceptions.push(x);
                        }
                        None => {
                            self.grow_exceptions();
                            self.push(x);
                            return;
                        }
                    },
                    _ => {
                        self.grow_codes();
                        self.push(x);
                        return;
                    }
                }
            }
        }
        self.len += 1;
        if self.len == PROBE_LEN && self.config.storage == Storage::Auto {
            self.probe();
        }
    }

    /// Appends every element of `xs`.
    pub fn extend_from_slice(&mut self, xs: &[Fr]) {
        for &x in xs {
            self.push(x);
        }
    }

    /// Room for the next code: the first page doubles up to [`PAGE_LEN`], later pages
    /// come whole.
    #[cold]
    fn grow_codes(&mut self) {
        let Repr::Compact(pages) = &self.repr else {
            return;
        };
        let starting = pages.len() == self.len / PAGE_LEN;
        let (old, new) = match pages.last() {
            Some(p) if !starting => (p.codes.capacity(), (2 * p.codes.capacity()).min(PAGE_LEN)),
            _ if pages.is_empty() => (0, FIRST_PAGE_LEN),
            _ => (0, PAGE_LEN),
        };
        let more_pages = match starting && pages.len() == pages.capacity() {
            true => pages.capacity().max(4),
            false => 0,
        };
        self.acquire((new - old + more_pages * core::mem::size_of::<Page>()) as u64);
        let Repr::Compact(pages) = &mut self.repr else {
            return;
        };
        pages.reserve_exact(more_pages);
        match pages.last_mut() {
            Some(p) if !starting => p.codes.reserve_exact(new - p.codes.len()),
            _ => pages.push(Page {
                codes: Vec::with_capacity(new),
                ..Page::default()
            }),
        }
    }

    /// Room for more exceptions in the last page (doubling).
    #[cold]
    fn grow_exceptions(&mut self) {
        let Repr::Compact(pages) = &self.repr else {
            return;
        };
        let Some(old) = pages.last().map(|p| p.exceptions.capacity()) else {
            return;
        };
        let new = (2 * old).clamp(4, PAGE_LEN);
        self.acquire((new - old) as u64 * EXCEPTION_BYTES);
        if let Repr::Compact(pages) = &mut self.repr {
            if let Some(p) = pages.last_mut() {
                p.exception_at.reserve_exact(new - p.exception_at.len());
                p.exceptions.reserve_exact(new - p.exceptions.len());
            }
        }
    }

    /// After [`PROBE_LEN`] values of an [`Storage::Auto`] vector: raw from here on when
    /// more than half were exceptions.
    fn probe(&mut self) {
        if self.exceptions() * 2 <= self.len {
            return;
        }
        let values = self.to_vec();
        let compact = std::mem::replace(
            &mut self.repr,
            Repr::Raw(Raw {
                data: FrVec::new(),
                later: None,
            }),
        );
        drop(compact);
        let before = self.held;
        self.release(before);
        self.request_raw_capacity();
        let Repr::Raw(raw) = &mut self.repr else {
            return;
        };
        if raw.data.capacity() < values.len() {
            let bytes = (values.len() - raw.data.capacity()) as u64 * FR_BYTES;
            self.acquire(bytes);
            if let Repr::Raw(raw) = &mut self.repr {
                raw.data = FrVec::from(Vec::with_capacity(values.len()));
            }
        }
        if let Repr::Raw(raw) = &mut self.repr {
            raw.data.extend_from_slice(&values);
        }
    }

    /// Raw storage of the configured capacity, made on another thread (lent, or every page
    /// written ahead); its bytes are acquired here, before it exists.
    fn request_raw_capacity(&mut self) {
        let capacity = self.config.capacity;
        if capacity <= self.len.max(PROBE_LEN) {
            return;
        }
        let Some(bytes) = (capacity as u64).checked_mul(FR_BYTES) else {
            return;
        };
        self.acquire(bytes);
        let (tx, rx) = sync_channel(1);
        let lender = self.config.lender.clone();
        // Detached: if the vector is dropped first, the storage is dropped with the channel.
        std::thread::spawn(move || {
            let made = match lender.and_then(|l| l.fr_vec(capacity)) {
                Some(v) => Some(v),
                None => filled_with_huge_pages(capacity, Fr::ZERO).map(|mut v| {
                    v.clear();
                    FrVec::from(v)
                }),
            };
            if let Some(v) = made {
                let _ = tx.send(v);
            }
        });
        if let Repr::Raw(raw) = &mut self.repr {
            raw.later = Some((Mutex::new(rx), capacity));
        }
    }

    /// Room for the next raw element: the vector made ahead where it has arrived (waiting
    /// for it past a quarter of its capacity), else twice the room.
    #[cold]
    fn grow_raw(&mut self) {
        let Repr::Raw(raw) = &mut self.repr else {
            return;
        };
        if let Some((rx, capacity)) = &raw.later {
            let wait = raw.data.len() * 4 >= *capacity;
            let rx = rx.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let arrived = match wait {
                true => rx.recv().map_err(|_| TryRecvError::Disconnected),
                false => rx.try_recv(),
            };
            drop(rx);
            match arrived {
                Ok(mut made) => {
                    // Its bytes were acquired when it was asked for.
                    made.extend_from_slice(&raw.data);
                    let old = std::mem::replace(&mut raw.data, made);
                    raw.later = None;
                    let freed = old.capacity() as u64 * FR_BYTES;
                    drop(old);
                    self.release(freed);
                    return;
                }
                Err(TryRecvError::Empty) => {}
                Err(TryRecvError::Disconnected) => {
                    let capacity = *capacity;
                    raw.later = None;
                    self.release(capacity as u64 * FR_BYTES);
                }
            }
        }
        let Repr::Raw(raw) = &self.repr else {
            return;
        };
        let old = raw.data.capacity();
        let new = (2 * old).max(PROBE_LEN);
        self.acquire((new - old) as u64 * FR_BYTES);
        if let Repr::Raw(raw) = &mut self.repr {
            raw.data.reserve_exact(new - raw.data.len());
        }
    }

    /// The value at `i`, or `None` past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<Fr> {
        if i >= self.len {
            return None;
        }
        Some(match &self.repr {
            Repr::Raw(raw) => raw.data[i],
            Repr::Compact(pages) => pages[i / PAGE_LEN].get(i % PAGE_LEN),
        })
    }

    /// Values `start..start + out.len()` into `out`.
    ///
    /// # Panics
    /// When the range passes the end (a caller's bug, as slice indexing).
    pub fn decode_into(&self, start: usize, out: &mut [Fr]) {
        let end = start + out.len();
        assert!(
            end <= self.len,
            "decode_into {start}..{end} of {}",
            self.len
        );
        for (at, piece) in self.pieces(start..end) {
            let out = &mut out[at - start..at - start + piece.len()];
            match piece {
                Piece::Raw(values) => out.copy_from_slice(values),
                Piece::Codes { page, range } => page.decode(range, out),
            }
        }
    }

    /// All values as 32-byte elements.
    pub fn to_vec(&self) -> Vec<Fr> {
        let mut out = vec![Fr::ZERO; self.len];
        self.decode_into(0, &mut out);
        out
    }

    /// The values `range` as pieces of contiguous storage, each with the index of its
    /// first value: how backends upload a compact vector without expanding it on the host.
    ///
    /// # Panics
    /// When the range passes the end.
    pub fn pieces(&self, range: Range<usize>) -> impl Iterator<Item = (usize, Piece<'_>)> + '_ {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "pieces {range:?} of {}",
            self.len
        );
        let (raw, pages) = match &self.repr {
            Repr::Raw(raw) => (Some(&raw.data[range.clone()]), &[][..]),
            Repr::Compact(pages) => (None, &pages[..]),
        };
        let raw = raw
            .filter(|r| !r.is_empty())
            .map(|r| (range.start, Piece::Raw(r)));
        let pages_in = range.start / PAGE_LEN..range.end.div_ceil(PAGE_LEN).min(pages.len());
        let compact = pages_in.filter_map(move |k| {
            let base = k * PAGE_LEN;
            let start = range.start.max(base) - base;
            let end = range.end.min(base + PAGE_LEN) - base;
            (start < end).then(|| {
                let page = PageRef(&pages[k]);
                (
                    base + start,
                    Piece::Codes {
                        page,
                        range: start..end,
                    },
                )
            })
        });
        raw.into_iter().chain(compact)
    }
}

/// A page of a compact vector, as [`CompactVec::pieces`] gives it.
#[derive(Clone, Copy)]
pub struct PageRef<'a>(&'a Page);

impl PageRef<'_> {
    /// The code of every entry of the page so far.
    pub fn codes(&self) -> &[u8] {
        &self.0.codes
    }

    /// The positions in the page of its exceptions, ascending.
    pub fn exception_positions(&self) -> &[u16] {
        &self.0.exception_at
    }

    /// The exceptions' values, in the order of their positions.
    pub fn exception_values(&self) -> &[Fr] {
        &self.0.exceptions
    }

    /// The exceptions whose positions lie in `range` of the page: their positions and
    /// values.
    pub fn exceptions_in(&self, range: Range<usize>) -> (&[u16], &[Fr]) {
        let at = &self.0.exception_at;
        let first = at.partition_point(|&e| (e as usize) < range.start);
        let end = at.partition_point(|&e| (e as usize) < range.end);
        (&at[first..end], &self.0.exceptions[first..end])
    }

    fn decode(&self, range: Range<usize>, out: &mut [Fr]) {
        self.0.decode(range, out)
    }
}

/// Contiguous storage of some values of a [`CompactVec`].
pub enum Piece<'a> {
    /// 32-byte elements.
    Raw(&'a [Fr]),
    /// The entries `range` of a page of codes.
    Codes {
        /// The page.
        page: PageRef<'a>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HeapLender;
    use rand_chacha::ChaCha20Rng;
    use rand_core::{RngCore, SeedableRng};
    use std::sync::atomic::{AtomicU64, Ordering};

    fn small(k: i64) -> Fr {
        match k >= 0 {
            true => Fr::from(k as u64),
            false => -Fr::from((-k) as u64),
        }
    }

    #[test]
    fn small_values_are_the_integers_of_their_codes() {
        for k in -127i64..=127 {
            let code = (k as i8) as u8;
            assert_ne!(code, ESCAPE);
            assert_eq!(SMALL[code as usize], small(k), "{k}");
            assert_eq!(small_code_vartime(&small(k)), Some(code), "{k}");
        }
        for x in [
            small(128),
            small(-128),
            Fr::from(u64::MAX),
            -Fr::from(u64::MAX),
            Fr::from(u64::MAX).square(),
            Fr::from(1u64 << 40),
        ] {
            assert_eq!(small_code_vartime(&x), None);
        }
    }

    /// A value drawn from a mix: bits, small integers, 64-bit words, full elements.
    fn mixed(rng: &mut ChaCha20Rng, full_percent: u32) -> Fr {
        let r = rng.next_u32() % 100;
        match r {
            _ if r < full_percent => Fr::random(&mut *rng),
            _ if r < full_percent + 3 => Fr::from(rng.next_u64()),
            _ if r < full_percent + 10 => small((rng.next_u32() % 255) as i64 - 127),
            _ => Fr::from(u64::from(rng.next_u32() & 1)),
        }
    }

    fn check_same(v: &CompactVec, model: &[Fr], what: &str) {
        assert_eq!(v.len(), model.len(), "{what}");
        assert_eq!(v.to_vec(), model, "{what}");
        for i in [0, 1, PAGE_LEN - 1, PAGE_LEN, model.len().saturating_sub(1)] {
            assert_eq!(v.get(i), model.get(i).copied(), "{what}: get({i})");
        }
        assert_eq!(v.get(model.len()), None, "{what}");
    }

    /// Pushes of every kind of value, across pages, read back exactly by `get`,
    /// `decode_into` of arbitrary ranges and the pieces of arbitrary ranges.
    #[test]
    fn values_round_trip_through_every_reader() {
        let seed = 4401;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        for (len, full) in [(0, 0), (5, 50), (PAGE_LEN + 17, 2), (3 * PAGE_LEN / 2, 40)] {
            let model: Vec<Fr> = (0..len).map(|_| mixed(&mut rng, full)).collect();
            let v = CompactVec::from(&model[..]);
            let what = format!("seed {seed}, len {len}, {full}% full");
            assert!(!v.is_raw(), "{what}");
            check_same(&v, &model, &what);
            for _ in 0..20 {
                let a = rng.next_u32() as usize % (len + 1);
                let b = rng.next_u32() as usize % (len + 1);
                let range = a.min(b)..a.max(b);
                let mut out = vec![Fr::ONE; range.len()];
                v.decode_into(range.start, &mut out);
                assert_eq!(out, &model[range.clone()], "{what}: {range:?}");
                let mut rebuilt = vec![Fr::ZERO; range.len()];
                let mut next = range.start;
                for (at, piece) in v.pieces(range.clone()) {
                    assert_eq!(at, next, "{what}: pieces are contiguous");
                    next += piece.len();
                    let Piece::Codes { page, range: r } = piece else {
                        panic!("{what}: a compact vector gave raw pieces");
                    };
                    let dst = &mut rebuilt[at - range.start..at - range.start + r.len()];
                    for (o, &c) in dst.iter_mut().zip(&page.codes()[r.clone()]) {
                        *o = SMALL[c as usize];
                    }
                    let (positions, values) = page.exceptions_in(r.clone());
                    for (&p, x) in positions.iter().zip(values) {
                        assert_eq!(page.codes()[p as usize], ESCAPE);
                        dst[p as usize - r.start] = *x;
                    }
                }
                assert_eq!(next, range.end, "{what}");
                assert_eq!(rebuilt, &model[range.clone()], "{what}: {range:?}");
            }
        }
    }

    #[test]
    fn boolean_vectors_take_a_byte_per_value() {
        let model: Vec<Fr> = (0..4 * PAGE_LEN as u64)
            .map(|i| Fr::from(i % 3 % 2))
            .collect();
        let v = CompactVec::from(&model[..]);
        assert_eq!(v.exceptions(), 0);
        let bytes = v.host_bytes();
        assert!(bytes >= model.len() as u64, "{bytes}");
        assert!(bytes <= model.len() as u64 + 4096, "{bytes}");
        check_same(&v, &model, "booleans");
    }

    /// Dense values switch an automatic vector to raw storage after the probe, lent where
    /// the lender lends, with the same values; forced modes do not switch.
    #[test]
    fn dense_vectors_switch_to_raw_storage() {
        let seed = 4402;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let model: Vec<Fr> = (0..3 * PROBE_LEN).map(|_| Fr::random(&mut rng)).collect();
        let lender: Arc<dyn HostAllocator> = Arc::new(HeapLender::new(u64::MAX));
        for (storage, capacity, lent, raw) in [
            (Storage::Auto, 0, false, true),
            (Storage::Auto, model.len(), true, true),
            (Storage::Raw, model.len(), true, true),
            (Storage::Compact, model.len(), false, false),
        ] {
            let mut v = CompactVec::new(CompactConfig {
                storage,
                capacity,
                lender: Some(lender.clone()),
                budget: None,
            });
            v.extend_from_slice(&model);
            let what = format!("seed {seed}, {storage:?}, capacity {capacity}");
            assert_eq!(v.is_raw(), raw, "{what}");
            assert_eq!(v.as_raw().is_some_and(|r| r.is_lent()), lent, "{what}");
            check_same(&v, &model, &what);
            if raw {
                let pieces: Vec<_> = v.pieces(3..model.len()).collect();
                assert!(
                    matches!(pieces[..], [(3, Piece::Raw(r))] if r == &model[3..]),
                    "{what}"
                );
            }
        }
        // Half or fewer exceptions stay compact.
        let half: Vec<Fr> = (0..2 * PROBE_LEN)
            .map(|i| match i % 2 {
                0 => Fr::random(&mut rng),
                _ => Fr::ONE,
            })
            .collect();
        assert!(!CompactVec::from(&half[..]).is_raw());
    }

    /// A budget that records what is held and checks every allocation was asked for.
    #[derive(Default)]
    struct Recorder {
        held: AtomicU64,
        peak: AtomicU64,
    }

    impl HostBudget for Recorder {
        fn acquire(&self, bytes: u64) {
            let now = self.held.fetch_add(bytes, Ordering::SeqCst) + bytes;
            self.peak.fetch_max(now, Ordering::SeqCst);
        }
        fn release(&self, bytes: u64) {
            self.held.fetch_sub(bytes, Ordering::SeqCst);
        }
    }

    /// The budget always holds at least what the storage has allocated, the two agree
    /// once growth is done, and everything is given back on drop: compact, raw with and
    /// without a capacity, and a vector that switched.
    #[test]
    fn the_budget_counts_every_allocation_before_it_is_made() {
        let seed = 4403;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        for (full, storage, capacity) in [
            (2, Storage::Auto, 0),
            (90, Storage::Auto, 0),
            (90, Storage::Auto, 3 * PAGE_LEN),
            (0, Storage::Raw, 0),
            (60, Storage::Compact, 0),
        ] {
            let budget = Arc::new(Recorder::default());
            let mut v = CompactVec::new(CompactConfig {
                storage,
                capacity,
                lender: None,
                budget: Some(budget.clone()),
            });
            let what = format!("seed {seed}, {full}% full, {storage:?}, capacity {capacity}");
            for i in 0..2 * PAGE_LEN + 5 {
                v.push(mixed(&mut rng, full));
                if i % 997 == 0 {
                    let held = budget.held.load(Ordering::SeqCst);
                    assert!(held >= v.measured_bytes(), "{what}: at {i}");
                    assert_eq!(held, v.host_bytes(), "{what}: at {i}");
                }
            }
            // A raw vector made ahead counts from when it is asked for; once adopted the two agree.
            if capacity == 0 {
                assert_eq!(
                    budget.held.load(Ordering::SeqCst),
                    v.measured_bytes(),
                    "{what}"
                );
            }
            drop(v);
            assert_eq!(budget.held.load(Ordering::SeqCst), 0, "{what}");
        }
    }
}
