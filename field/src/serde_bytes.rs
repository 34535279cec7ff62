//! Serde helpers for fixed-size byte arrays (serde's built-in array support stops at 32):
//! encoded as a tuple of bytes, which every serde format supports without allocation.

use core::fmt;
use serde::de::{Error, SeqAccess, Visitor};
use serde::ser::SerializeTuple;
use serde::{Deserializer, Serializer};

/// Serializes `bytes` as an N-tuple of `u8`.
pub(crate) fn serialize<S: Serializer, const N: usize>(
    bytes: &[u8; N],
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut t = s.serialize_tuple(N)?;
    for b in bytes {
        t.serialize_element(b)?;
    }
    t.end()
}

/// Deserializes an N-tuple of `u8`.
pub(crate) fn deserialize<'de, D: Deserializer<'de>, const N: usize>(
    d: D,
) -> Result<[u8; N], D::Error> {
    struct ArrayVisitor<const N: usize>;
    impl<'de, const N: usize> Visitor<'de> for ArrayVisitor<N> {
        type Value = [u8; N];
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{} bytes", N)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<[u8; N], A::Error> {
            let mut out = [0u8; N];
            for (i, b) in out.iter_mut().enumerate() {
                *b = seq
                    .next_element()?
                    .ok_or_else(|| A::Error::invalid_length(i, &self))?;
            }
            Ok(out)
        }
    }
    d.deserialize_tuple(N, ArrayVisitor::<N>)
}
