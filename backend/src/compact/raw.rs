//! Whole-vector raw storage for a vector that is dense from the start: 32-byte elements in
//! one [`FrVec`], made at the expected capacity on another thread (lent by a backend where
//! it lends, else every page written ahead), so synthesis never waits for the kernel to
//! zero fresh pages and a GPU uploads it with no staging copy.

use std::sync::mpsc::{sync_channel, Receiver, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};

use sluice_field::Fr;

use super::format::FR_BYTES;
use crate::huge_pages::filled_with_huge_pages;
use crate::{FrVec, HostAllocator};

/// Before the vector made ahead arrives, the elements grow in a vector of their own up to
/// this fraction of the capacity, then synthesis waits for it: what the two hold at once
/// stays within 1 + 1/16 of the capacity.
pub(super) const WAIT_DIVISOR: usize = 16;

/// Raw elements, and the vector made ahead until it is adopted.
pub(super) struct Raw {
    pub(super) data: FrVec,
    later: Option<(Mutex<Receiver<FrVec>>, usize)>,
}

/// What happened when the elements grew.
pub(super) enum Grown {
    /// The vector made ahead was adopted; the elements' old storage (bytes given) freed.
    Adopted { freed: u64 },
    /// The vector made ahead will never come (its capacity, acquired, is free again).
    Lost { capacity: usize },
    /// Neither: the caller doubles the room.
    Pending,
}

impl Raw {
    /// Empty elements, with a vector of `capacity` asked for ahead when it is worth it.
    pub(super) fn new(capacity: Option<usize>, lender: Option<Arc<dyn HostAllocator>>) -> Self {
        let later = capacity.map(|capacity| {
            let (tx, rx) = sync_channel(1);
            // Detached: if the vector is dropped first, the storage goes with the channel.
            std::thread::spawn(move || {
                let made = match lender.and_then(|l| l.fr_vec(capacity)) {
                    Some(v) => Some(v),
                    None => filled_with_huge_pages(capacity, Fr::from_mont_limbs_unchecked([0; 4]))
                        .map(|mut v| {
                            v.clear();
                            FrVec::from(v)
                        }),
                };
                if let Some(v) = made {
                    let _ = tx.send(v);
                }
            });
            (Mutex::new(rx), capacity)
        });
        Raw {
            data: FrVec::new(),
            later,
        }
    }

    /// The capacity asked for ahead and not yet adopted.
    pub(super) fn pending_capacity(&self) -> Option<usize> {
        self.later.as_ref().map(|(_, c)| *c)
    }

    /// Called with the elements full: adopts the vector made ahead where it has arrived
    /// (waiting for it once the elements reach [`WAIT_DIVISOR`]'s share of it).
    pub(super) fn try_adopt(&mut self) -> Grown {
        let Some((rx, capacity)) = &self.later else {
            return Grown::Pending;
        };
        let capacity = *capacity;
        let wait = self.data.len() * WAIT_DIVISOR >= capacity;
        let arrived = {
            let rx = rx.lock().unwrap_or_else(PoisonError::into_inner);
            match wait {
                true => rx.recv().map_err(|_| TryRecvError::Disconnected),
                false => rx.try_recv(),
            }
        };
        match arrived {
            Ok(mut made) => {
                made.extend_from_slice(&self.data);
                let old = std::mem::replace(&mut self.data, made);
                self.later = None;
                Grown::Adopted {
                    freed: old.capacity() as u64 * FR_BYTES,
                }
            }
            Err(TryRecvError::Empty) => Grown::Pending,
            Err(TryRecvError::Disconnected) => {
                self.later = None;
                Grown::Lost { capacity }
            }
        }
    }
}
