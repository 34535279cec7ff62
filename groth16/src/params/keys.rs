//! Parameters, verifying key and proof, and their bellperson-compatible byte formats.

use std::io::{Read, Write};

use sluice_field::{G1Affine, G2Affine};

use crate::error::Groth16Error;
use crate::params::encoding::{truncated, OffsetReader, OffsetWriter};

/// The verifying key.
///
/// Format: `alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2` uncompressed, a
/// big-endian u32 count, then `ic` (G1, uncompressed) — bellperson's layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyingKey {
    /// `alpha·G1`.
    pub alpha_g1: G1Affine,
    /// `beta·G1`.
    pub beta_g1: G1Affine,
    /// `beta·G2`.
    pub beta_g2: G2Affine,
    /// `gamma·G2`.
    pub gamma_g2: G2Affine,
    /// `delta·G1`.
    pub delta_g1: G1Affine,
    /// `delta·G2`.
    pub delta_g2: G2Affine,
    /// `(beta·A_i(tau) + alpha·B_i(tau) + C_i(tau)) / gamma · G1` for every public input, the
    /// constant one first.
    pub ic: Vec<G1Affine>,
}

impl VerifyingKey {
    /// Writes the key in bellperson's format.
    pub fn write<W: Write>(&self, writer: W) -> Result<(), Groth16Error> {
        let mut w = OffsetWriter::new(writer);
        self.write_to(&mut w)?;
        w.flush()
    }

    pub(crate) fn write_to<W: Write>(&self, w: &mut OffsetWriter<W>) -> Result<(), Groth16Error> {
        w.write_point(&self.alpha_g1)?;
        w.write_point(&self.beta_g1)?;
        w.write_point(&self.beta_g2)?;
        w.write_point(&self.gamma_g2)?;
        w.write_point(&self.delta_g1)?;
        w.write_point(&self.delta_g2)?;
        w.write_section(&self.ic)
    }

    /// Reads a key from the start of `reader` (what follows it is left unread, as
    /// bellperson does: a parameters file starts with its key). Every point is fully
    /// checked (on the curve, in the subgroup) and none may be the identity: not the `ic`
    /// points (bellperson's rule) and, beyond bellperson, not alpha, beta, gamma or delta,
    /// whose identity breaks soundness (with identity gamma and delta anyone can forge a
    /// proof). Errors name the point and its offset.
    pub fn read<R: Read>(reader: R) -> Result<Self, Groth16Error> {
        Self::read_from(&mut OffsetReader::new(reader))
    }

    /// The one place a key is decoded: every reader of keys and parameters comes here.
    pub(crate) fn read_from<R: Read>(r: &mut OffsetReader<R>) -> Result<Self, Groth16Error> {
        Ok(VerifyingKey {
            alpha_g1: r.read_point(true, false, "vk.alpha_g1")?,
            beta_g1: r.read_point(true, false, "vk.beta_g1")?,
            beta_g2: r.read_point(true, false, "vk.beta_g2")?,
            gamma_g2: r.read_point(true, false, "vk.gamma_g2")?,
            delta_g1: r.read_point(true, false, "vk.delta_g1")?,
            delta_g2: r.read_point(true, false, "vk.delta_g2")?,
            ic: r.read_section("vk.ic", true)?,
        })
    }

    /// The encoded size in bytes.
    pub fn serialized_size(&self) -> usize {
        VK_FIXED_BYTES + 4 + 96 * self.ic.len()
    }
}

/// Bytes of the six fixed points of a verifying key.
pub(crate) const VK_FIXED_BYTES: usize = 3 * 96 + 3 * 192;

/// Groth16 proving parameters (the SRS) with their verifying key.
///
/// Format: the verifying key, then `h`, `l`, `a`, `b_g1` (each a big-endian u32 count and
/// uncompressed G1 points), then `b_g2` (count and uncompressed G2 points) — bellperson's
/// layout, which Filecoin's `.params` files use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parameters {
    /// The verifying key.
    pub vk: VerifyingKey,
    /// `tau^i · Z(tau) / delta · G1` for `i < n - 1`.
    pub h: Vec<G1Affine>,
    /// `(beta·A_i(tau) + alpha·B_i(tau) + C_i(tau)) / delta · G1` for every auxiliary variable.
    pub l: Vec<G1Affine>,
    /// `A_i(tau) · G1` for every variable used in A (inputs first).
    pub a: Vec<G1Affine>,
    /// `B_i(tau) · G1` for every variable used in B (inputs first).
    pub b_g1: Vec<G1Affine>,
    /// `B_i(tau) · G2` for every variable used in B (inputs first).
    pub b_g2: Vec<G2Affine>,
}

impl Parameters {
    /// Writes the parameters in bellperson's format.
    pub fn write<W: Write>(&self, writer: W) -> Result<(), Groth16Error> {
        let mut w = OffsetWriter::new(writer);
        self.vk.write_to(&mut w)?;
        w.write_section(&self.h)?;
        w.write_section(&self.l)?;
        w.write_section(&self.a)?;
        w.write_section(&self.b_g1)?;
        w.write_section(&self.b_g2)?;
        w.flush()
    }

    /// Reads parameters, to the end of `reader`. Every query point must have valid flags,
    /// canonical coordinates and be on the curve; `checked` adds the subgroup check
    /// (without it, trusted files read much faster), and no query point may be the
    /// identity: bellperson's rules. The verifying key is read as [`VerifyingKey::read`]
    /// reads it. Beyond bellperson, bytes after `b_g2` are an error, as
    /// [`MappedParameters::open`](crate::MappedParameters::open) makes them: the two
    /// readers accept the same files. Errors name the item and its offset (for a
    /// truncated file, the first incomplete item).
    pub fn read<R: Read>(reader: R, checked: bool) -> Result<Self, Groth16Error> {
        let mut r = OffsetReader::new(reader);
        let params = Parameters {
            vk: VerifyingKey::read_from(&mut r)?,
            h: r.read_section("h", checked)?,
            l: r.read_section("l", checked)?,
            a: r.read_section("a", checked)?,
            b_g1: r.read_section("b_g1", checked)?,
            b_g2: r.read_section("b_g2", checked)?,
        };
        r.read_end("the parameters")?;
        Ok(params)
    }
}

/// A Groth16 proof.
///
/// Format: `A || B || C` compressed (48 + 96 + 48 = 192 bytes), bellperson's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    /// `A` in G1.
    pub a: G1Affine,
    /// `B` in G2.
    pub b: G2Affine,
    /// `C` in G1.
    pub c: G1Affine,
}

impl Proof {
    /// The encoded size in bytes.
    pub const SIZE: usize = 192;

    /// The compressed encoding.
    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut out = [0u8; Self::SIZE];
        out[..48].copy_from_slice(&self.a.to_compressed());
        out[48..144].copy_from_slice(&self.b.to_compressed());
        out[144..].copy_from_slice(&self.c.to_compressed());
        out
    }

    /// Decodes exactly [`Proof::SIZE`] bytes. Each point must be a valid compressed point in
    /// the subgroup and not the identity (bellperson's rules). Short input is
    /// [`Groth16Error::Truncated`] naming the first incomplete point; longer input is
    /// [`Groth16Error::TrailingBytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Groth16Error> {
        if bytes.len() < Self::SIZE {
            return Err(truncated_proof(bytes.len()));
        }
        if bytes.len() > Self::SIZE {
            return Err(Groth16Error::TrailingBytes {
                offset: Self::SIZE as u64,
                what: "a proof",
                extra: (bytes.len() - Self::SIZE) as u64,
            });
        }
        fn check<P: group::prime::PrimeCurveAffine>(
            p: Result<P, sluice_field::DecodeError>,
            offset: u64,
            what: &str,
        ) -> Result<P, Groth16Error> {
            let p = p.map_err(|source| Groth16Error::InvalidPoint {
                offset,
                what: what.to_owned(),
                source,
            })?;
            if bool::from(p.is_identity()) {
                return Err(Groth16Error::PointAtInfinity {
                    offset,
                    what: what.to_owned(),
                });
            }
            Ok(p)
        }
        Ok(Proof {
            a: check(G1Affine::decode_compressed(&bytes[..48]), 0, "proof.a")?,
            b: check(G2Affine::decode_compressed(&bytes[48..144]), 48, "proof.b")?,
            c: check(G1Affine::decode_compressed(&bytes[144..]), 144, "proof.c")?,
        })
    }

    /// Writes the proof.
    pub fn write<W: Write>(&self, writer: W) -> Result<(), Groth16Error> {
        let mut w = OffsetWriter::new(writer);
        w.write_all(&self.to_bytes())?;
        w.flush()
    }

    /// Reads one proof, its [`Proof::SIZE`] bytes, from `reader` (what follows is left
    /// unread), with [`from_bytes`](Self::from_bytes)'s checks and errors.
    pub fn read<R: Read>(reader: R) -> Result<Self, Groth16Error> {
        let mut buf = [0u8; Self::SIZE];
        OffsetReader::new(reader).read_exact(&mut buf, |_, got| truncated_proof(got))?;
        Self::from_bytes(&buf)
    }
}

/// A proof that ended after `got` bytes: names the first incomplete point, where it starts.
fn truncated_proof(got: usize) -> Groth16Error {
    let (what, at, size, group) = match got {
        0..48 => ("proof.a", 0, 48, "G1"),
        48..144 => ("proof.b", 48, 96, "G2"),
        _ => ("proof.c", 144, 48, "G1"),
    };
    truncated(
        at as u64,
        format!("{what} ({group}, {size} bytes compressed)"),
        got - at,
    )
}
