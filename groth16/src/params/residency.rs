//! Which queries of the parameters stay in a backend across proofs, and which stream up in
//! batches for every use ([`Residency`]).

use std::fmt;

use sluice_field::{G1Affine, G2Affine};

use crate::params::encoding::FilePoint;
use crate::r1cs::shape::QueryLengths;

/// Per query, whether its bases are resident in the backend (uploaded once) or streamed
/// (uploaded a batch at a time whenever an MSM needs them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Residency {
    /// The h query.
    pub h: bool,
    /// The l query.
    pub l: bool,
    /// The a query.
    pub a: bool,
    /// The b query in G1.
    pub b_g1: bool,
    /// The b query in G2.
    pub b_g2: bool,
}

impl Residency {
    /// Every query resident.
    pub const ALL: Residency = Residency {
        h: true,
        l: true,
        a: true,
        b_g1: true,
        b_g2: true,
    };
    /// Every query streamed.
    pub const NONE: Residency = Residency {
        h: false,
        l: false,
        a: false,
        b_g1: false,
        b_g2: false,
    };

    /// Whether every query is resident.
    pub fn is_all(&self) -> bool {
        *self == Residency::ALL
    }

    /// `resident`, `streamed` or `mixed`: the one word a report column shows.
    pub fn label(&self) -> &'static str {
        match *self {
            Residency::ALL => "resident",
            Residency::NONE => "streamed",
            _ => "mixed",
        }
    }

    /// The bytes the resident queries' points take in their file encodings (uncompressed
    /// G1 96 bytes, G2 192), for parameters of these lengths.
    pub fn resident_file_bytes(&self, lengths: &QueryLengths) -> u64 {
        self.resident_bytes(query_bytes(lengths))
    }

    /// h, l, a, b_g1, b_g2 in the file's order.
    fn flags(&self) -> [bool; 5] {
        [self.h, self.l, self.a, self.b_g1, self.b_g2]
    }

    /// Residency with the queries `resident` (h, l, a, b_g1, b_g2) set.
    fn from_flags(resident: [bool; 5]) -> Self {
        let [h, l, a, b_g1, b_g2] = resident;
        Residency {
            h,
            l,
            a,
            b_g1,
            b_g2,
        }
    }

    /// The most queries that stay resident within `budget` device bytes, where resident
    /// query `i` takes `device_bytes[i]` (h, l, a, b_g1, b_g2): the largest first, each
    /// kept where it still fits, so what streams is as little as the budget allows.
    pub fn fitting(device_bytes: [u64; 5], budget: u64) -> Self {
        let mut order: Vec<usize> = (0..5).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(device_bytes[i]));
        let mut resident = [false; 5];
        let mut left = budget;
        for i in order {
            if device_bytes[i] <= left {
                left -= device_bytes[i];
                resident[i] = true;
            }
        }
        Residency::from_flags(resident)
    }

    /// The sum of `device_bytes` (h, l, a, b_g1, b_g2) over the resident queries.
    pub fn resident_bytes(&self, device_bytes: [u64; 5]) -> u64 {
        device_bytes
            .into_iter()
            .zip(self.flags())
            .filter(|(_, r)| *r)
            .map(|(b, _)| b)
            .sum()
    }
}

/// Bytes of a G1 point in a parameter file (uncompressed).
pub(crate) const G1_FILE_BYTES: u64 = <G1Affine as FilePoint>::UNCOMPRESSED as u64;
/// Bytes of a G2 point in a parameter file (uncompressed).
pub(crate) const G2_FILE_BYTES: u64 = <G2Affine as FilePoint>::UNCOMPRESSED as u64;

/// Each query's points' bytes in a parameter file: h, l, a, b_g1, b_g2.
fn query_bytes(lengths: &QueryLengths) -> [u64; 5] {
    let g1 = |n: usize| n as u64 * G1_FILE_BYTES;
    [
        g1(lengths.h),
        g1(lengths.l),
        g1(lengths.a),
        g1(lengths.b_g1),
        lengths.b_g2 as u64 * G2_FILE_BYTES,
    ]
}

impl fmt::Display for Residency {
    /// The label, and for mixed residency the resident queries: `mixed (h, b_g2 resident)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.label() != "mixed" {
            return f.write_str(self.label());
        }
        let names = ["h", "l", "a", "b_g1", "b_g2"];
        let resident: Vec<&str> = names
            .iter()
            .zip(self.flags())
            .filter(|(_, r)| *r)
            .map(|(n, _)| *n)
            .collect();
        write!(f, "mixed ({} resident)", resident.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_queries_stay_resident_where_they_fit() {
        let bytes = [40, 30, 30, 10, 20];
        assert_eq!(Residency::fitting(bytes, 200), Residency::ALL);
        assert_eq!(Residency::fitting(bytes, 0), Residency::NONE);
        // 40 (h), then 30 (l) fits in 75; a (30) does not; b_g2 (20) does not (5 left).
        let r = Residency::fitting(bytes, 75);
        assert_eq!(
            r,
            Residency {
                h: true,
                l: true,
                ..Residency::NONE
            }
        );
        assert_eq!(r.resident_bytes(bytes), 70);
        assert_eq!(r.label(), "mixed");
        assert_eq!(r.to_string(), "mixed (h, l resident)");
        assert_eq!(Residency::ALL.to_string(), "resident");
        assert_eq!(Residency::NONE.to_string(), "streamed");
        // A small query still fits after a large one is left out.
        let r = Residency::fitting([100, 1, 1, 1, 1], 10);
        assert_eq!(r.resident_bytes([100, 1, 1, 1, 1]), 4);
        assert!(!r.h);
    }
}
