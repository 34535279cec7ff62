//! [`HostVector`]: a host vector of scalars counted by a [`MemoryTracker`] while it lives,
//! for work that holds whole vectors on the host (streaming H, H computed off the device).

use core::ops::{Deref, DerefMut};

use ff::Field;
use sluice_field::Fr;

use crate::huge_pages::filled_for;
use crate::{Allocation, BackendError, FrVec, MemoryKind, MemoryTracker};

const FR_BYTES: u64 = core::mem::size_of::<Fr>() as u64;

/// A vector of scalars in host memory (ordinary or lent by a backend: [`FrVec`]), counted
/// by a tracker as [`MemoryKind::Host`] (by its capacity, which is what it holds) for as
/// long as it lives.
pub struct HostVector {
    data: FrVec,
    allocation: Allocation,
}

impl HostVector {
    /// Starts counting `data` in `tracker`. Refused with [`BackendError::OutOfMemory`] (and
    /// `data` dropped) when the tracker's host limit does not allow it.
    pub fn track(
        tracker: &MemoryTracker,
        what: &str,
        data: impl Into<FrVec>,
    ) -> Result<Self, BackendError> {
        let data = data.into();
        let bytes = (data.capacity() as u64).saturating_mul(FR_BYTES);
        let allocation = tracker.allocate(MemoryKind::Host, what, bytes)?;
        Ok(HostVector { data, allocation })
    }

    /// `len` zeros, counted before they are allocated.
    pub fn zeroed(tracker: &MemoryTracker, what: &str, len: usize) -> Result<Self, BackendError> {
        let allocation = tracker.allocate(
            MemoryKind::Host,
            what,
            (len as u64).saturating_mul(FR_BYTES),
        )?;
        let data = filled_for(&allocation, what, len, Fr::ZERO)?.into();
        Ok(HostVector { data, allocation })
    }

    /// The tracked bytes.
    pub fn bytes(&self) -> u64 {
        self.allocation.bytes()
    }
}

impl Deref for HostVector {
    type Target = [Fr];
    fn deref(&self) -> &[Fr] {
        &self.data
    }
}

impl DerefMut for HostVector {
    fn deref_mut(&mut self) -> &mut [Fr] {
        &mut self.data
    }
}
