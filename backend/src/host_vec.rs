//! Host vectors of scalars that may live in memory a backend lends: page-locked memory a
//! GPU's DMA reads directly, so an upload from it needs no copy into staging first.
//!
//! A staged upload of a large vector (a 2^27 proof's a, b and witness) is paced by the
//! host's copy into the staging buffers, not by the DMA, which reads pinned memory directly
//! (BENCHMARKS.md#pipeline-and-residency). Synthesis writes every element once anyway:
//! writing it into lent memory costs the same and removes the copy.
//! [`FrVec`] is that vector, and [`HostAllocator`] is where a backend's lent memory comes
//! from ([`ComputeBackend::host_allocator`](crate::ComputeBackend::host_allocator)).

use core::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ff::Field;
use sluice_field::Fr;

/// Memory a backend lends for one host vector. Dropping it gives the memory back.
///
/// # Safety
/// Implementors guarantee that [`ptr`](Self::ptr) is valid for reads and writes of
/// [`bytes`](Self::bytes) bytes for as long as the value lives, that nothing else reads or
/// writes that memory meanwhile (it is the vector's alone), and that neither value changes.
pub unsafe trait LentMemory: Send + Sync {
    /// The first byte.
    fn ptr(&self) -> *mut u8;
    /// How many bytes there are from [`ptr`](Self::ptr).
    fn bytes(&self) -> usize;
}

/// Where a backend's lent host memory comes from; shared (`Arc`) with the threads that
/// allocate vectors ahead of synthesis.
pub trait HostAllocator: Send + Sync {
    /// An empty vector with room for `len` scalars in lent memory, or `None` when the
    /// backend will not lend that much now (its limit is reached, or the driver refused):
    /// callers then use ordinary memory, which is only slower to upload.
    fn fr_vec(&self, len: usize) -> Option<FrVec>;
}

/// A growable vector of scalars in ordinary heap memory or in memory a backend lent
/// ([`LentMemory`]). Lent memory has a fixed capacity: a push past it moves the elements to
/// the heap (with a logged warning), so a wrong capacity costs speed, never correctness.
#[derive(Default)]
pub struct FrVec {
    repr: Repr,
}

enum Repr {
    Heap(Vec<Fr>),
    Lent {
        mem: Box<dyn LentMemory>,
        len: usize,
    },
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Heap(Vec::new())
    }
}

impl FrVec {
    /// An empty vector on the heap.
    pub fn new() -> Self {
        FrVec::default()
    }

    /// An empty vector in `mem`, or `None` when `mem` is not aligned for [`Fr`].
    pub fn in_lent(mem: Box<dyn LentMemory>) -> Option<Self> {
        (mem.ptr() as usize % core::mem::align_of::<Fr>() == 0).then_some(FrVec {
            repr: Repr::Lent { mem, len: 0 },
        })
    }

    /// Whether the elements are in lent memory (not moved to the heap).
    pub fn is_lent(&self) -> bool {
        matches!(self.repr, Repr::Lent { .. })
    }

    /// How many elements it holds without growing.
    pub fn capacity(&self) -> usize {
        match &self.repr {
            Repr::Heap(v) => v.capacity(),
            Repr::Lent { mem, .. } => mem.bytes() / core::mem::size_of::<Fr>(),
        }
    }

    /// Appends `x`.
    #[inline]
    pub fn push(&mut self, x: Fr) {
        match &mut self.repr {
            Repr::Heap(v) => v.push(x),
            Repr::Lent { mem, len } if *len < mem.bytes() / core::mem::size_of::<Fr>() => {
                // SAFETY: element `len` lies within the lent bytes (checked), which are
                // this vector's alone and aligned for Fr (checked in `in_lent`).
                unsafe { (mem.ptr() as *mut Fr).add(*len).write(x) };
                *len += 1;
            }
            Repr::Lent { .. } => {
                self.spill(1);
                self.push(x);
            }
        }
    }

    /// Appends every element of `xs`.
    pub fn extend_from_slice(&mut self, xs: &[Fr]) {
        if let Repr::Lent { len, .. } = &self.repr {
            if len + xs.len() > self.capacity() {
                self.spill(xs.len());
            }
        }
        match &mut self.repr {
            Repr::Heap(v) => v.extend_from_slice(xs),
            Repr::Lent { mem, len } => {
                // SAFETY: as in `push`; the room for xs was checked above, and `xs` cannot
                // overlap memory that is this vector's alone.
                unsafe {
                    let at = (mem.ptr() as *mut Fr).add(*len);
                    core::ptr::copy_nonoverlapping(xs.as_ptr(), at, xs.len());
                }
                *len += xs.len();
            }
        }
    }

    /// Shortens to `len` elements or appends copies of `value` up to `len`.
    pub fn resize(&mut self, len: usize, value: Fr) {
        match &mut self.repr {
            Repr::Heap(v) => v.resize(len, value),
            Repr::Lent { len: l, .. } if len <= *l => *l = len,
            Repr::Lent { len: l, .. } => {
                let more = len - *l;
                // Appended in pieces: no temporary as long as the vector.
                let piece = [value; 256];
                for n in (0..more).step_by(piece.len()) {
                    self.extend_from_slice(&piece[..(more - n).min(piece.len())]);
                }
            }
        }
    }

    /// Makes room for at least `additional` more elements without growing past it later;
    /// a lent vector without that room moves to the heap (with a logged warning).
    pub fn reserve_exact(&mut self, additional: usize) {
        let room = self.capacity() - self.len();
        match &mut self.repr {
            Repr::Heap(v) => v.reserve_exact(additional),
            Repr::Lent { .. } if additional <= room => {}
            Repr::Lent { .. } => self.spill(additional),
        }
    }

    /// Removes every element, keeping the memory.
    pub fn clear(&mut self) {
        match &mut self.repr {
            Repr::Heap(v) => v.clear(),
            Repr::Lent { len, .. } => *len = 0,
        }
    }

    /// Moves the elements of a full lent vector to the heap, with room for `more`.
    #[cold]
    fn spill(&mut self, more: usize) {
        let cap = self.capacity();
        let mut heap = Vec::with_capacity((2 * cap).max(cap + more).max(4));
        heap.extend_from_slice(self);
        log::warn!(
            "a lent host vector of {cap} scalars is full: moved to ordinary memory (slower \
             uploads); its capacity was too small"
        );
        self.repr = Repr::Heap(heap);
    }
}

impl From<Vec<Fr>> for FrVec {
    fn from(v: Vec<Fr>) -> Self {
        FrVec {
            repr: Repr::Heap(v),
        }
    }
}

impl Deref for FrVec {
    type Target = [Fr];
    fn deref(&self) -> &[Fr] {
        match &self.repr {
            Repr::Heap(v) => v,
            // SAFETY: the first `len` elements were written (push, extend), the memory is
            // aligned and this vector's alone while it lives.
            Repr::Lent { mem, len } => unsafe {
                core::slice::from_raw_parts(mem.ptr() as *const Fr, *len)
            },
        }
    }
}

impl DerefMut for FrVec {
    fn deref_mut(&mut self) -> &mut [Fr] {
        match &mut self.repr {
            Repr::Heap(v) => v,
            // SAFETY: as in `deref`, and `&mut self` makes the access exclusive.
            Repr::Lent { mem, len } => unsafe {
                core::slice::from_raw_parts_mut(mem.ptr() as *mut Fr, *len)
            },
        }
    }
}

impl core::fmt::Debug for FrVec {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FrVec")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("lent", &self.is_lent())
            .finish()
    }
}

/// A [`HostAllocator`] lending ordinary heap memory up to a limit of bytes: code written
/// against lent vectors (their fixed capacity, spilling, a lender's refusal) can be tested
/// without a device.
pub struct HeapLender {
    limit: u64,
    lent: Arc<AtomicU64>,
}

impl HeapLender {
    /// A lender of at most `limit_bytes` at once.
    pub fn new(limit_bytes: u64) -> Self {
        HeapLender {
            limit: limit_bytes,
            lent: Arc::default(),
        }
    }

    /// Bytes lent now (given back when the vectors drop or spill).
    pub fn lent_bytes(&self) -> u64 {
        self.lent.load(Ordering::SeqCst)
    }
}

impl HostAllocator for HeapLender {
    fn fr_vec(&self, len: usize) -> Option<FrVec> {
        let bytes = len.checked_mul(core::mem::size_of::<Fr>())? as u64;
        self.lent
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |l| {
                (l + bytes <= self.limit).then_some(l + bytes)
            })
            .ok()?;
        let memory = Box::into_raw(vec![Fr::ZERO; len].into_boxed_slice()) as *mut Fr;
        FrVec::in_lent(Box::new(HeapBlock {
            ptr: memory,
            len,
            lent: self.lent.clone(),
        }))
    }
}

/// A leaked boxed slice lent by a [`HeapLender`].
struct HeapBlock {
    ptr: *mut Fr,
    len: usize,
    lent: Arc<AtomicU64>,
}

// SAFETY: the pointer is a leaked box of `len` scalars, this block's alone until it drops.
unsafe impl Send for HeapBlock {}
unsafe impl Sync for HeapBlock {}
unsafe impl LentMemory for HeapBlock {
    fn ptr(&self) -> *mut u8 {
        self.ptr as *mut u8
    }
    fn bytes(&self) -> usize {
        self.len * core::mem::size_of::<Fr>()
    }
}

impl Drop for HeapBlock {
    fn drop(&mut self) {
        // SAFETY: the box leaked in `HeapLender::fr_vec`, freed once.
        drop(unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(self.ptr, self.len)) });
        self.lent.fetch_sub(self.bytes() as u64, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushes, extensions and resizes match a `Vec` kept beside them, within the lent
    /// capacity and past it (where the elements move to the heap and the memory goes back).
    #[test]
    fn lent_vectors_behave_like_vecs_and_spill_past_their_capacity() {
        let lender = HeapLender::new(1 << 20);
        let lent = |n: usize| lender.fr_vec(n).expect("within the limit");
        let mut v = lent(10);
        let mut model = Vec::new();
        let x = |i: u64| Fr::from(i * 7 + 1);
        for i in 0..6 {
            v.push(x(i));
            model.push(x(i));
        }
        v.extend_from_slice(&[x(100), x(101)]);
        model.extend_from_slice(&[x(100), x(101)]);
        assert!(v.is_lent() && v.capacity() == 10);
        assert_eq!(&v[..], &model[..]);
        v.resize(5, Fr::ZERO);
        model.resize(5, Fr::ZERO);
        v.resize(9, x(9));
        model.resize(9, x(9));
        v[0] = x(55);
        model[0] = x(55);
        assert!(v.is_lent());
        assert_eq!(&v[..], &model[..]);
        // The tenth element fits; the next extension does not.
        v.push(x(10));
        model.push(x(10));
        assert!(v.is_lent() && lender.lent_bytes() == 10 * 32);
        v.extend_from_slice(&[x(11), x(12), x(13)]);
        model.extend_from_slice(&[x(11), x(12), x(13)]);
        assert!(!v.is_lent() && v.capacity() >= 13);
        assert_eq!(lender.lent_bytes(), 0, "spilling gives the memory back");
        assert_eq!(&v[..], &model[..]);

        // A push past the capacity spills as well; a dropped vector gives its memory back.
        let mut w = lent(2);
        for i in 0..5 {
            w.push(x(i));
        }
        assert!(!w.is_lent());
        assert_eq!(&w[..], &(0..5).map(x).collect::<Vec<_>>()[..]);
        let mut u = lent(3);
        u.push(x(1));
        u.clear();
        assert!(u.is_empty() && u.is_lent());
        assert_eq!(lender.lent_bytes(), 3 * 32);
        drop(u);
        assert_eq!(lender.lent_bytes(), 0);
        // Past its limit a lender refuses.
        assert!(HeapLender::new(64).fr_vec(3).is_none());
    }

    #[test]
    fn misaligned_memory_is_refused() {
        /// An address 4 bytes past an 8-byte boundary, never dereferenced.
        struct Shifted;
        // SAFETY: `in_lent` refuses it before any access.
        unsafe impl LentMemory for Shifted {
            fn ptr(&self) -> *mut u8 {
                (core::mem::align_of::<Fr>() * 64 + 4) as *mut u8
            }
            fn bytes(&self) -> usize {
                64
            }
        }
        assert!(FrVec::in_lent(Box::new(Shifted)).is_none());
    }
}
