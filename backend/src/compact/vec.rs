//! [`CompactVec`], how it is configured ([`CompactConfig`], [`Storage`], [`HostBudget`]) and
//! its shared full pages ([`SealedPage`], [`SealedPages`]); the encoding is in the
//! [module docs](crate::compact).

use std::ops::Range;
use std::sync::Arc;

use ff::Field;
use sluice_field::Fr;

use super::code::Entry;
use super::format::{FR_BYTES, PAGE_LEN};
use super::page::{self, Grow, Page, Piece};
use super::raw::{Grown, Raw, WAIT_DIVISOR};
use crate::{FrVec, HostAllocator};

/// Entries after which a [`Storage::Auto`] vector decides between compact and raw: at most
/// this many, a quarter of its expected capacity when that is less (at least
/// [`MIN_PROBE_LEN`]).
pub const PROBE_LEN: usize = 4096;

/// The fewest entries a [`Storage::Auto`] vector decides on.
pub const MIN_PROBE_LEN: usize = 64;

/// Entries the first page starts with room for.
const FIRST_PAGE_LEN: usize = 1024;

/// What a page's growth or conversion holds at once beyond its values' 32 bytes each:
/// codes, exceptions and a raw page's room for twice its entries.
const CONVERSION_BYTES: u64 = PAGE_LEN as u64 * (1 + page::EXCEPTION_BYTES + FR_BYTES);

/// The most host bytes a vector of `len` values holds, whatever the values, when its
/// expected capacity is `len` (or it is [`Storage::Compact`]): 32 per value (a raw page, or
/// whole-vector raw storage) plus what exists during growth (a raw vector's elements before
/// the one made ahead arrives, a page being converted) and the page table. Planners reserve
/// it for a partition whose values are not known yet.
pub fn max_host_bytes(len: usize) -> u64 {
    let len = len as u64;
    let pages = len.div_ceil(PAGE_LEN as u64) + 1;
    len * FR_BYTES
        + len.div_ceil(WAIT_DIVISOR as u64) * FR_BYTES
        + CONVERSION_BYTES.min(len * CONVERSION_BYTES / PAGE_LEN as u64 + FIRST_PAGE_LEN as u64)
        + 2 * pages * PAGE_SLOT_BYTES
}

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
    /// Compact, unless the first [`PROBE_LEN`] values show the vector is dense (then one raw
    /// vector).
    #[default]
    Auto,
    /// Pages of codes (a dense page still becomes raw), never one raw vector: for tests and
    /// measurements.
    Compact,
    /// One raw vector of 32-byte elements, with no branch on the values.
    Raw,
}

/// How a [`CompactVec`] allocates.
#[derive(Clone, Default)]
pub struct CompactConfig {
    /// Compact, raw, or decided by the values.
    pub storage: Storage,
    /// The length the vector is expected to reach (from the circuit's parameters), or 0.
    /// Whole-vector raw storage is then made at this capacity on another thread.
    pub capacity: usize,
    /// Where whole-vector raw storage comes from when a backend lends host memory
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

enum Repr {
    Paged(Vec<PageSlot>),
    Raw(Raw),
}

/// A page of a paged vector: open while it takes values, then sealed (moved behind an
/// `Arc` once full, so that it can be shared, [`SealedPage`]). Pushes reach only the open
/// page, so they touch no reference count.
enum PageSlot {
    Open(Page),
    Sealed(Arc<Page>),
}

impl core::ops::Deref for PageSlot {
    type Target = Page;

    fn deref(&self) -> &Page {
        match self {
            PageSlot::Open(page) => page,
            PageSlot::Sealed(page) => page,
        }
    }
}

impl PageSlot {
    /// The page to change: a sealed page is full and never changed, but would be copied
    /// first if it were.
    #[inline]
    fn open_mut(&mut self) -> &mut Page {
        match self {
            PageSlot::Open(page) => page,
            PageSlot::Sealed(page) => unshare(page),
        }
    }

    /// A copy that shares nothing with this one.
    fn copy(&self) -> PageSlot {
        match self {
            PageSlot::Open(page) => PageSlot::Open(page.clone()),
            PageSlot::Sealed(page) => PageSlot::Sealed(Arc::new(Page::clone(page))),
        }
    }
}

/// A sealed page to change (never, in practice: it is full), copied first if shared.
#[cold]
#[inline(never)]
fn unshare(page: &mut Arc<Page>) -> &mut Page {
    Arc::make_mut(page)
}

/// Bytes the page table holds for each page it has room for: its slot, and the page's
/// shared allocation once sealed (its header and the `Arc`'s two counts).
const PAGE_SLOT_BYTES: u64 = (core::mem::size_of::<PageSlot>()
    + core::mem::size_of::<Page>()
    + 2 * core::mem::size_of::<usize>()) as u64;

/// A growable vector of scalars stored compactly where its values are small (see the
/// [module docs](crate::compact)). Every byte it holds was asked of its [`HostBudget`]
/// first and is given back when it drops.
pub struct CompactVec {
    repr: Repr,
    len: usize,
    /// Bytes acquired from the budget (held, without one).
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
    /// A copy counted nowhere (no budget) and stored as the original is; whole-vector raw
    /// storage is copied to the heap ([`clone_into`](Self::clone_into) chooses).
    fn clone(&self) -> Self {
        self.clone_into(None)
    }
}

impl Drop for CompactVec {
    fn drop(&mut self) {
        if let Some(budget) = &self.config.budget {
            budget.release(self.held);
        }
    }
}

impl PartialEq for CompactVec {
    /// The same values, however each is stored.
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Eq for CompactVec {}

impl PartialEq<[Fr]> for CompactVec {
    fn eq(&self, other: &[Fr]) -> bool {
        self.len == other.len() && self.iter().eq(other.iter().copied())
    }
}

impl<const N: usize> PartialEq<[Fr; N]> for CompactVec {
    fn eq(&self, other: &[Fr; N]) -> bool {
        *self == other[..]
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
        let mut v = CompactVec {
            repr: Repr::Paged(Vec::new()),
            len: 0,
            held: 0,
            config,
        };
        if v.config.storage == Storage::Raw {
            v.repr = Repr::Raw(v.new_raw());
        }
        v
    }

    /// A copy counted nowhere, whole-vector raw storage in memory `lender` lends where it
    /// does (else on the heap).
    pub fn clone_into(&self, lender: Option<&dyn HostAllocator>) -> Self {
        let repr = match &self.repr {
            Repr::Paged(pages) => Repr::Paged(pages.iter().map(PageSlot::copy).collect()),
            Repr::Raw(raw) => {
                let lent = lender.and_then(|l| l.fr_vec(self.len));
                let mut copy = Raw::new(None, None);
                copy.data = lent.unwrap_or_else(|| FrVec::from(Vec::with_capacity(self.len)));
                copy.data.extend_from_slice(&raw.data);
                Repr::Raw(copy)
            }
        };
        let mut copy = CompactVec {
            repr,
            len: self.len,
            held: 0,
            config: CompactConfig {
                budget: None,
                ..self.config.clone()
            },
        };
        copy.held = copy.measured_bytes();
        copy
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the values are in one raw vector (dense from the start, or
    /// [`Storage::Raw`]).
    pub fn is_raw(&self) -> bool {
        matches!(self.repr, Repr::Raw(_))
    }

    /// The one raw vector, when stored so.
    pub fn as_raw(&self) -> Option<&FrVec> {
        match &self.repr {
            Repr::Raw(raw) => Some(&raw.data),
            Repr::Paged(_) => None,
        }
    }

    /// Host bytes held (codes, exceptions, raw pages and the page table, or the raw
    /// vector with any made ahead): what the budget counts.
    pub fn host_bytes(&self) -> u64 {
        self.held
    }

    /// The number of values listed as exceptions.
    pub fn exceptions(&self) -> usize {
        match &self.repr {
            Repr::Paged(pages) => pages.iter().map(|p| p.exceptions()).sum(),
            Repr::Raw(_) => 0,
        }
    }

    /// Bytes the storage holds now, by capacity (a raw vector made ahead included once
    /// adopted).
    pub(super) fn measured_bytes(&self) -> u64 {
        match &self.repr {
            Repr::Paged(pages) => {
                pages.iter().map(|p| p.bytes()).sum::<u64>()
                    + pages.capacity() as u64 * PAGE_SLOT_BYTES
            }
            Repr::Raw(raw) => {
                (raw.data.capacity() + raw.pending_capacity().unwrap_or(0)) as u64 * FR_BYTES
            }
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

    /// Whole-vector raw storage, with the configured capacity asked for ahead (its bytes
    /// acquired now) when it is larger than what exists.
    fn new_raw(&mut self) -> Raw {
        let capacity = self.config.capacity;
        let bytes = (capacity as u64).checked_mul(FR_BYTES);
        let ahead = match bytes {
            Some(bytes) if capacity > self.len => {
                self.acquire(bytes);
                Some(capacity)
            }
            // An impossible capacity is no capacity: the elements grow as they come.
            _ => None,
        };
        Raw::new(ahead, self.config.lender.clone())
    }

    /// Appends `x`.
    #[inline]
    pub fn push(&mut self, x: Fr) {
        let pushed = match &mut self.repr {
            Repr::Raw(raw) if raw.data.len() < raw.data.capacity() => {
                raw.data.push(x);
                true
            }
            Repr::Raw(_) => {
                self.grow_raw();
                false
            }
            Repr::Paged(pages) => match pages.get_mut(self.len / PAGE_LEN) {
                Some(page) => match page.open_mut().try_push(x) {
                    Ok(()) => true,
                    Err(grow) => {
                        self.grow_page(grow);
                        false
                    }
                },
                None => {
                    self.add_page();
                    false
                }
            },
        };
        if !pushed {
            return self.push(x);
        }
        self.len += 1;
        if self.len % PAGE_LEN == 0 {
            self.seal_last();
        }
        if self.config.storage == Storage::Auto && self.len == self.probe_len() {
            self.probe();
        }
    }

    /// The last page, just filled, becomes shareable ([`sealed_page`](Self::sealed_page));
    /// its `Arc` was counted with its slot ([`PAGE_SLOT_BYTES`]).
    #[cold]
    fn seal_last(&mut self) {
        let Repr::Paged(pages) = &mut self.repr else {
            return;
        };
        if let Some(slot @ PageSlot::Open(_)) = pages.last_mut() {
            if let PageSlot::Open(page) =
                core::mem::replace(slot, PageSlot::Open(Page::with_room(0)))
            {
                *slot = PageSlot::Sealed(Arc::new(page));
            }
        }
    }

    /// Appends every element of `xs`.
    pub fn extend_from_slice(&mut self, xs: &[Fr]) {
        for &x in xs {
            self.push(x);
        }
    }

    /// A new page: the first with room for [`FIRST_PAGE_LEN`] entries (it doubles), the
    /// others whole.
    #[cold]
    fn add_page(&mut self) {
        let Repr::Paged(pages) = &self.repr else {
            return;
        };
        let room = match pages.is_empty() {
            true => FIRST_PAGE_LEN,
            false => PAGE_LEN,
        };
        let table = match pages.len() == pages.capacity() {
            true => pages.capacity().max(1),
            false => 0,
        };
        self.acquire(room as u64 + table as u64 * PAGE_SLOT_BYTES);
        if let Repr::Paged(pages) = &mut self.repr {
            pages.reserve_exact(table);
            pages.push(PageSlot::Open(Page::with_room(room)));
        }
    }

    /// What the last page needs before it takes the next value.
    #[cold]
    fn grow_page(&mut self, grow: Grow) {
        let Repr::Paged(pages) = &self.repr else {
            return;
        };
        let Some(bytes) = pages.last().map(|p| p.growth_bytes(grow)) else {
            return;
        };
        self.acquire(bytes);
        let freed = match &mut self.repr {
            Repr::Paged(pages) => pages.last_mut().map_or(0, |p| p.open_mut().grow(grow)),
            Repr::Raw(_) => 0,
        };
        self.release(freed);
    }

    /// Where a [`Storage::Auto`] vector decides (see [`PROBE_LEN`]).
    #[inline]
    fn probe_len(&self) -> usize {
        (self.config.capacity / 4).clamp(MIN_PROBE_LEN, PROBE_LEN)
    }

    /// After [`PROBE_LEN`] values of a [`Storage::Auto`] vector: one raw vector from here on
    /// when more than half were exceptions.
    fn probe(&mut self) {
        // Without an expected capacity, raw pages hold a dense vector as well as one raw
        // vector would, and never double.
        let dense = match &self.repr {
            Repr::Paged(pages) => pages.iter().map(|p| p.dense_entries()).sum(),
            Repr::Raw(_) => 0,
        };
        if dense * 2 <= self.len || self.config.capacity <= self.len {
            return;
        }
        let values = self.to_vec();
        let mut raw = self.new_raw();
        let paged = std::mem::replace(&mut self.repr, Repr::Raw(Raw::new(None, None)));
        drop(paged);
        // What the pages held is free; the room for the values so far comes next.
        let pages_bytes = self.held - raw.pending_capacity().map_or(0, |c| c as u64 * FR_BYTES);
        self.release(pages_bytes);
        self.acquire(values.len() as u64 * FR_BYTES);
        raw.data = FrVec::from(Vec::with_capacity(values.len()));
        raw.data.extend_from_slice(&values);
        self.repr = Repr::Raw(raw);
    }

    /// Room for the next raw element: the vector made ahead where it has arrived, else
    /// twice the room.
    #[cold]
    fn grow_raw(&mut self) {
        let Repr::Raw(raw) = &mut self.repr else {
            return;
        };
        match raw.try_adopt() {
            // Its bytes were acquired when it was asked for.
            Grown::Adopted { freed } => return self.release(freed),
            Grown::Lost { capacity } => self.release(capacity as u64 * FR_BYTES),
            Grown::Pending => {}
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
            Repr::Paged(pages) => pages[i / PAGE_LEN].get(i % PAGE_LEN),
        })
    }

    /// Value `i` as it is stored ([`Entry`]), `None` past the end: lets a caller skip
    /// arithmetic on small values (raw storage always gives [`Entry::Full`]).
    ///
    /// # Security
    /// Variable time in the value, as all compact storage (see
    /// [the module docs](crate::compact)).
    #[inline]
    pub fn entry_vartime(&self, i: usize) -> Option<Entry> {
        if i >= self.len {
            return None;
        }
        Some(match &self.repr {
            Repr::Raw(raw) => Entry::Full(raw.data[i]),
            Repr::Paged(pages) => pages[i / PAGE_LEN].entry(i % PAGE_LEN),
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
        match &self.repr {
            Repr::Raw(raw) => out.copy_from_slice(&raw.data[start..end]),
            Repr::Paged(pages) => {
                for (k, range, at) in page_ranges(start..end) {
                    pages[k].decode(
                        range.clone(),
                        &mut out[at - start..at - start + range.len()],
                    );
                }
            }
        }
    }

    /// Appends the values from `start` on to `to`, then drops this vector. Each page is
    /// freed (its bytes released from this vector's budget) once copied and before `to`
    /// grows by it, so the two together hold little more than the values once; a vector
    /// stored raw is one allocation, freed at the end.
    ///
    /// # Panics
    /// When `start` passes the end.
    pub fn move_tail_into(mut self, start: usize, to: &mut CompactVec) {
        assert!(
            start <= self.len,
            "move_tail_into from {start} of {}",
            self.len
        );
        let mut buf = vec![Fr::ZERO; PAGE_LEN.min(self.len - start)];
        let mut at = start;
        while at < self.len {
            let k = at / PAGE_LEN;
            let end = ((k + 1) * PAGE_LEN).min(self.len);
            let values = &mut buf[..end - at];
            self.decode_into(at, values);
            if let Repr::Paged(pages) = &mut self.repr {
                let freed = pages[k].bytes();
                pages[k] = PageSlot::Open(Page::with_room(0));
                self.release(freed.min(self.held));
            }
            to.extend_from_slice(values);
            at = end;
        }
    }

    /// Page `k` shared for reading on other threads, once it is full (it never changes
    /// again); `None` before, and for a vector stored raw.
    pub fn sealed_page(&self, k: usize) -> Option<SealedPage> {
        match &self.repr {
            Repr::Paged(pages) => match pages.get(k) {
                Some(PageSlot::Sealed(page)) => Some(SealedPage(Arc::clone(page))),
                _ => None,
            },
            _ => None,
        }
    }

    /// The values in order, decoded a page at a time.
    pub fn iter(&self) -> impl Iterator<Item = Fr> + '_ {
        let mut page = Vec::new();
        (0..self.len).map(move |i| {
            if i % PAGE_LEN == 0 {
                page.resize(PAGE_LEN.min(self.len - i), Fr::ZERO);
                self.decode_into(i, &mut page);
            }
            page[i % PAGE_LEN]
        })
    }

    /// All values as 32-byte elements.
    pub fn to_vec(&self) -> Vec<Fr> {
        let mut out = vec![Fr::ZERO; self.len];
        self.decode_into(0, &mut out);
        out
    }

    /// The values `range` as pieces of contiguous storage, in order, each with the index of
    /// its first value: how a backend uploads a compact vector without expanding it on the
    /// host.
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
            Repr::Paged(pages) => (None, &pages[..]),
        };
        let raw = raw
            .filter(|r| !r.is_empty())
            .map(|r| (range.start, Piece::Raw(r)));
        let paged = page_ranges(range)
            .filter(move |_| !pages.is_empty())
            .map(move |(k, r, at)| (at, pages[k].piece(r)));
        raw.into_iter().chain(paged)
    }
}

/// A full page of a [`CompactVec`], shared ([`CompactVec::sealed_page`]): its
/// [`PAGE_LEN`] values never change, and the vector it came from may go on growing.
#[derive(Clone)]
pub struct SealedPage(Arc<Page>);

/// The first full pages of a [`CompactVec`], gathered page by page on another thread
/// while the vector grows: what was written so far, readable there.
#[derive(Clone, Default)]
pub struct SealedPages {
    pages: Vec<SealedPage>,
}

impl SealedPages {
    /// Appends the next page: page [`pages`](Self::pages) of its vector.
    pub fn push(&mut self, page: SealedPage) {
        self.pages.push(page);
    }

    /// Full pages held.
    pub fn pages(&self) -> usize {
        self.pages.len()
    }

    /// The values readable: [`PAGE_LEN`] a page.
    pub fn len(&self) -> usize {
        self.pages.len() * PAGE_LEN
    }

    /// Whether no page is held.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Value `i` as it is stored, `None` past the pages held (see
    /// [`CompactVec::entry_vartime`]).
    ///
    /// # Security
    /// Variable time in the value, as all compact storage (see
    /// [the module docs](crate::compact)).
    #[inline]
    pub fn entry_vartime(&self, i: usize) -> Option<Entry> {
        let page = self.pages.get(i / PAGE_LEN)?;
        Some(page.0.entry(i % PAGE_LEN))
    }
}

/// The pages a range of values covers: (page, range within it, index of its first value).
fn page_ranges(range: Range<usize>) -> impl Iterator<Item = (usize, Range<usize>, usize)> {
    let pages = range.start / PAGE_LEN..range.end.div_ceil(PAGE_LEN);
    pages.filter_map(move |k| {
        let base = k * PAGE_LEN;
        let start = range.start.max(base) - base;
        let end = range.end.min(base + PAGE_LEN) - base;
        (start < end).then_some((k, start..end, base + start))
    })
}
