//! The two parallel primitives the kernels use, sequential without the `parallel` feature, so
//! every kernel is written once.

/// `Send` when the `parallel` feature is on, nothing otherwise: closures handed to the helpers
/// below only cross threads in parallel builds (and a `no_std` [`Domain`](crate::Domain) is not
/// `Sync`).
#[cfg(feature = "parallel")]
pub(crate) trait MaybeSend: Send {}
#[cfg(feature = "parallel")]
impl<T: Send + ?Sized> MaybeSend for T {}
#[cfg(not(feature = "parallel"))]
pub(crate) trait MaybeSend {}
#[cfg(not(feature = "parallel"))]
impl<T: ?Sized> MaybeSend for T {}

/// `Sync` when the `parallel` feature is on, nothing otherwise (see [`MaybeSend`]).
#[cfg(feature = "parallel")]
pub(crate) trait MaybeSync: Sync {}
#[cfg(feature = "parallel")]
impl<T: Sync + ?Sized> MaybeSync for T {}
#[cfg(not(feature = "parallel"))]
pub(crate) trait MaybeSync {}
#[cfg(not(feature = "parallel"))]
impl<T: ?Sized> MaybeSync for T {}

/// Below this many elements a kernel's work is not split across threads: spawning costs more
/// than it saves.
pub(crate) const MIN_PARALLEL_LEN: usize = 1 << 12;

/// Runs `a` and `b`, potentially in parallel.
#[inline]
pub(crate) fn join<A, B>(a: A, b: B)
where
    A: FnOnce() + MaybeSend,
    B: FnOnce() + MaybeSend,
{
    #[cfg(feature = "parallel")]
    {
        rayon::join(a, b);
    }
    #[cfg(not(feature = "parallel"))]
    {
        a();
        b();
    }
}

/// Calls `f(index, chunk)` for every `chunk_len`-sized chunk of `data` (the last may be shorter),
/// potentially in parallel.
pub(crate) fn for_each_chunk<T, G>(data: &mut [T], chunk_len: usize, f: G)
where
    T: Send,
    G: Fn(usize, &mut [T]) + MaybeSend + MaybeSync,
{
    let chunk_len = chunk_len.max(1);
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        if data.len() > chunk_len {
            data.par_chunks_mut(chunk_len)
                .enumerate()
                .for_each(|(i, c)| f(i, c));
            return;
        }
    }
    data.chunks_mut(chunk_len)
        .enumerate()
        .for_each(|(i, c)| f(i, c));
}

/// A chunk length that splits `len` elements into a few pieces per thread (so work balances),
/// but never below [`MIN_PARALLEL_LEN`].
pub(crate) fn chunk_len_for(len: usize) -> usize {
    #[cfg(feature = "parallel")]
    let pieces = 4 * rayon::current_num_threads();
    #[cfg(not(feature = "parallel"))]
    let pieces = 1;
    len.div_ceil(pieces).max(MIN_PARALLEL_LEN)
}

/// Calls `f(i)` for every `i < count`, in parallel when `parallel` is set (and the feature is on).
pub(crate) fn for_each_index<G>(count: usize, parallel: bool, f: G)
where
    G: Fn(usize) + MaybeSend + MaybeSync,
{
    #[cfg(feature = "parallel")]
    if parallel {
        use rayon::prelude::*;
        (0..count).into_par_iter().for_each(f);
        return;
    }
    let _ = parallel; // only the parallel build looks at it
    (0..count).for_each(f);
}
