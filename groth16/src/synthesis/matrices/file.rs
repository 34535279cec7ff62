//! Constraint matrices as bytes: recorded once per circuit shape (a synthesis without a
//! witness: 40 s for a 2^27 partition), written next to the parameters, read at start-up.
//!
//! The layout is in [`ConstraintMatrices::write`]'s docs.
//!
//! Reading checks everything a synthesis relies on (every term names a variable and a
//! coefficient that exist, the row lengths add up, the coefficients are canonical, nonzero,
//! and start with one and minus one, the checksum) and names the byte offset of what is
//! wrong; the densities and block indexes are rebuilt from the rows. Matrices of another
//! circuit that pass all this are still refused against parameters
//! ([`ConstraintMatrices::check_parameters`]) or fail synthesis's `a b = c` check, never a
//! silently wrong proof.

use std::io::{Read, Write};

use ff::Field;
use sha2::{Digest, Sha256};
use sluice_field::{Density, Fr};

use crate::error::Groth16Error;
use crate::params::encoding::{truncated, OffsetReader, OffsetWriter};
use crate::synthesis::matrices::record::ConstraintMatrices;
use crate::synthesis::matrices::rows::{
    block_needs, Rows, Term, INPUT_FLAG, LONG_ROW, MINUS_ONE_ID, ONE_ID,
};

/// The first bytes of a matrices file.
const MAGIC: &[u8; 16] = b"sluice-matrices\0";

/// The layout above.
const VERSION: u32 = 1;

/// Terms read or written at once: a corrupted count cannot make the reader allocate more
/// than this far ahead of the data it has.
const TERMS_AT_ONCE: usize = 1 << 16;

/// The matrices' names, for messages.
const MATRIX: [&str; 3] = ["A", "B", "C"];

impl ConstraintMatrices {
    /// Writes the matrices for [`read`](Self::read), about their
    /// [`host_bytes`](Self::host_bytes).
    ///
    /// Layout, integers little-endian:
    ///
    /// | item | bytes |
    /// | --- | --- |
    /// | magic `sluice-matrices\0` | 16 |
    /// | format version, 1 | 4 |
    /// | inputs (counting the constant one), auxiliary variables, constraints | 3 x 8 |
    /// | coefficients: count, then each canonical, little-endian | 8 + 32 each |
    /// | A, B, C in turn: terms (count), a row length byte per constraint (255: see the long rows), long rows (count, then row and length, 8 + 8 each), the terms (variable with bit 31 for an input, coefficient id: 4 + 4 each) | |
    /// | SHA-256 of everything before it | 32 |
    pub fn write<W: Write>(&self, writer: W) -> Result<(), Groth16Error> {
        let mut out = Output {
            w: OffsetWriter::new(writer),
            hash: Sha256::new(),
        };
        out.bytes(MAGIC)?;
        out.bytes(&VERSION.to_le_bytes())?;
        for count in [self.num_inputs, self.num_aux, self.num_constraints()] {
            out.u64(count as u64)?;
        }
        out.u64(self.coefficients.len() as u64)?;
        for c in &self.coefficients {
            out.bytes(&c.to_bytes_le())?;
        }
        for rows in &self.rows {
            out.u64(rows.terms.len() as u64)?;
            out.bytes(&rows.lens)?;
            out.u64(rows.long_lens.len() as u64)?;
            for &(row, len) in &rows.long_lens {
                out.u64(row as u64)?;
                out.u64(len as u64)?;
            }
            let mut buf = Vec::with_capacity(TERMS_AT_ONCE * 8);
            for chunk in rows.terms.chunks(TERMS_AT_ONCE) {
                buf.clear();
                for t in chunk {
                    buf.extend_from_slice(&t.var.to_le_bytes());
                    buf.extend_from_slice(&t.coeff.to_le_bytes());
                }
                out.bytes(&buf)?;
            }
        }
        let digest = out.hash.finalize();
        out.w.write_all(&digest)?;
        out.w.flush()
    }

    /// Reads matrices [`write`](Self::write) wrote, to the end of the data, checking
    /// everything a synthesis relies on: every term names a variable and a coefficient that
    /// exist, the row lengths add up, the coefficients are canonical, nonzero and start with
    /// one and minus one, and the checksum matches. The densities and block indexes are
    /// rebuilt from the rows. Errors name the byte offset of the item at fault:
    /// [`Groth16Error::Truncated`], [`Groth16Error::InvalidMatrices`],
    /// [`Groth16Error::TrailingBytes`] or [`Groth16Error::Io`].
    pub fn read<R: Read>(reader: R) -> Result<Self, Groth16Error> {
        let mut input = Input {
            r: OffsetReader::new(reader),
            hash: Sha256::new(),
        };
        let mut magic = [0u8; 16];
        input.bytes(&mut magic, "the magic `sluice-matrices`")?;
        if &magic != MAGIC {
            return Err(invalid(
                0,
                "not constraint matrices: the magic differs".into(),
            ));
        }
        let at = input.r.offset();
        let mut version = [0u8; 4];
        input.bytes(&mut version, "the format version")?;
        let version = u32::from_le_bytes(version);
        if version != VERSION {
            return Err(invalid(
                at,
                format!("format version {version}; this reader reads {VERSION}"),
            ));
        }
        let num_inputs = input.count("the number of inputs", INPUT_FLAG as u64)?;
        let num_aux = input.count("the number of auxiliary variables", INPUT_FLAG as u64)?;
        let constraints = input.count("the number of constraints", u32::MAX as u64)?;
        if num_inputs == 0 {
            return Err(invalid(
                20,
                "no inputs: the constant one is always one".into(),
            ));
        }
        let coefficients = input.coefficients()?;
        let mut rows: [Rows; 3] = Default::default();
        for (k, rows) in rows.iter_mut().enumerate() {
            *rows = input.rows(
                MATRIX[k],
                constraints,
                (num_inputs, num_aux),
                coefficients.len(),
            )?;
        }
        let at = input.r.offset();
        let expected = input.hash.finalize();
        let mut digest = [0u8; 32];
        input.r.read_exact(&mut digest, |at, got| {
            truncated(at, "the SHA-256 checksum (32 bytes)".into(), got)
        })?;
        if digest[..] != expected[..] {
            return Err(invalid(
                at,
                "the checksum does not match the bytes before it".into(),
            ));
        }
        input.r.read_end("the checksum of constraint matrices")?;

        let mut densities = [
            Density::new(num_aux),
            Density::new(num_inputs),
            Density::new(num_aux),
        ];
        for (rows, density, flag) in [
            (&rows[0], 0, 0),
            (&rows[1], 1, INPUT_FLAG),
            (&rows[1], 2, 0),
        ] {
            for t in rows.terms.iter().filter(|t| t.var & INPUT_FLAG == flag) {
                // In range: every term's variable was checked against the counts.
                let _ = densities[density].set((t.var & !INPUT_FLAG) as usize, true);
            }
        }
        let [a_aux_density, b_input_density, b_aux_density] = densities;
        let needs = block_needs(&rows, constraints);
        Ok(ConstraintMatrices {
            num_inputs,
            num_aux,
            rows,
            coefficients,
            a_aux_density,
            b_input_density,
            b_aux_density,
            block_needs: needs,
        })
    }
}

fn invalid(offset: u64, what: String) -> Groth16Error {
    Groth16Error::InvalidMatrices { offset, what }
}

/// The writer and the checksum of what it wrote.
struct Output<W> {
    w: OffsetWriter<W>,
    hash: Sha256,
}

impl<W: Write> Output<W> {
    fn bytes(&mut self, bytes: &[u8]) -> Result<(), Groth16Error> {
        self.hash.update(bytes);
        self.w.write_all(bytes)
    }

    fn u64(&mut self, x: u64) -> Result<(), Groth16Error> {
        self.bytes(&x.to_le_bytes())
    }
}

/// The reader and the checksum of what it read.
struct Input<R> {
    r: OffsetReader<R>,
    hash: Sha256,
}

impl<R: Read> Input<R> {
    fn bytes(&mut self, buf: &mut [u8], what: &str) -> Result<(), Groth16Error> {
        self.r
            .read_exact(buf, |at, got| truncated(at, what.to_owned(), got))?;
        self.hash.update(&buf[..]);
        Ok(())
    }

    fn u64(&mut self, what: &str) -> Result<u64, Groth16Error> {
        let mut b = [0u8; 8];
        self.bytes(&mut b, what)?;
        Ok(u64::from_le_bytes(b))
    }

    /// A count of at most `max`.
    fn count(&mut self, what: &str, max: u64) -> Result<usize, Groth16Error> {
        let at = self.r.offset();
        let n = self.u64(what)?;
        match usize::try_from(n) {
            Ok(n) if n as u64 <= max => Ok(n),
            _ => Err(invalid(at, format!("{what} is {n}, more than {max}"))),
        }
    }

    /// The coefficients: canonical, nonzero, one and minus one first.
    fn coefficients(&mut self) -> Result<Vec<Fr>, Groth16Error> {
        let count = self.count("the number of coefficients", INPUT_FLAG as u64)?;
        if count < 2 {
            return Err(invalid(
                self.r.offset() - 8,
                format!("{count} coefficients: one and minus one always come first"),
            ));
        }
        let mut coefficients = Vec::with_capacity(count.min(TERMS_AT_ONCE));
        for i in 0..count {
            let at = self.r.offset();
            let mut b = [0u8; 32];
            self.bytes(&mut b, &format!("coefficient {i} of {count} (32 bytes)"))?;
            let c = Option::<Fr>::from(Fr::from_bytes_le(&b))
                .ok_or_else(|| invalid(at, format!("coefficient {i} is not a canonical scalar")))?;
            let expected = match i as u32 {
                ONE_ID => Some(Fr::ONE),
                MINUS_ONE_ID => Some(-Fr::ONE),
                _ => None,
            };
            if expected.is_some_and(|e| e != c) || bool::from(c.is_zero()) {
                return Err(invalid(
                    at,
                    format!(
                        "coefficient {i} must be {}",
                        match i {
                            0 => "one",
                            1 => "minus one",
                            _ => "nonzero",
                        }
                    ),
                ));
            }
            coefficients.push(c);
        }
        Ok(coefficients)
    }

    /// One matrix's rows, each term checked against the counts.
    fn rows(
        &mut self,
        matrix: &str,
        constraints: usize,
        (inputs, aux): (usize, usize),
        coefficients: usize,
    ) -> Result<Rows, Groth16Error> {
        let terms_at = self.r.offset();
        let num_terms = self.count(&format!("{matrix}'s number of terms"), u64::MAX)?;
        let mut lens = Vec::new();
        let mut remaining = constraints;
        while remaining > 0 {
            let start = lens.len();
            lens.resize(start + remaining.min(TERMS_AT_ONCE), 0);
            self.bytes(
                &mut lens[start..],
                &format!("{matrix}'s row lengths ({constraints} bytes)"),
            )?;
            remaining -= lens.len() - start;
        }
        let long_at = self.r.offset();
        let long = self.count(
            &format!("{matrix}'s number of long rows"),
            constraints as u64,
        )?;
        let marked = lens.iter().filter(|&&l| l == LONG_ROW).count();
        if long != marked {
            return Err(invalid(
                long_at,
                format!("{matrix} lists {long} long rows, but {marked} row lengths say long"),
            ));
        }
        let mut long_lens = Vec::with_capacity(long);
        let mut total = lens
            .iter()
            .filter(|&&l| l != LONG_ROW)
            .map(|&l| l as u64)
            .sum::<u64>();
        for j in 0..long {
            let at = self.r.offset();
            let row = self.u64(&format!("{matrix}'s long row {j}"))?;
            let len = self.u64(&format!("{matrix}'s long row {j}'s length"))?;
            let ascending = long_lens
                .last()
                .map_or(true, |&(prev, _): &(usize, usize)| (prev as u64) < row);
            let marked = usize::try_from(row).ok().and_then(|r| lens.get(r)) == Some(&LONG_ROW);
            if !ascending || !marked || len < LONG_ROW as u64 {
                return Err(invalid(
                    at,
                    format!("{matrix}'s long row {j} (row {row}, {len} terms) is not a long row in order"),
                ));
            }
            total = total.saturating_add(len);
            long_lens.push((row as usize, len as usize));
        }
        if total != num_terms as u64 {
            return Err(invalid(
                terms_at,
                format!("{matrix} has {num_terms} terms, but its rows add up to {total}"),
            ));
        }
        let mut terms = Vec::with_capacity(num_terms.min(TERMS_AT_ONCE));
        let mut buf = vec![0u8; TERMS_AT_ONCE * 8];
        while terms.len() < num_terms {
            let at = self.r.offset();
            let first = terms.len();
            let n = (num_terms - first).min(TERMS_AT_ONCE);
            self.bytes(
                &mut buf[..n * 8],
                &format!("{matrix}'s terms {first}.. of {num_terms} (8 bytes each)"),
            )?;
            for (k, b) in buf[..n * 8].chunks_exact(8).enumerate() {
                let word = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
                let t = Term {
                    var: word(0),
                    coeff: word(4),
                };
                let (index, count) = match t.var & INPUT_FLAG {
                    0 => (t.var as usize, aux),
                    _ => ((t.var & !INPUT_FLAG) as usize, inputs),
                };
                if index >= count || t.coeff as usize >= coefficients {
                    return Err(invalid(
                        at + 8 * k as u64,
                        format!(
                            "{matrix}'s term {} names {} {index} of {count} and coefficient {} of {coefficients}",
                            first + k,
                            if t.var & INPUT_FLAG == 0 { "auxiliary variable" } else { "input" },
                            t.coeff
                        ),
                    ));
                }
                terms.push(t);
            }
        }
        Ok(Rows::from_parts(terms, lens, long_lens))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::{BitDecomposition, Sha256Preimage};
    use crate::{ProvingAssignment, SynthesisOptions};
    use std::sync::Arc;

    fn bytes(m: &ConstraintMatrices) -> Vec<u8> {
        let mut out = Vec::new();
        m.write(&mut out).unwrap();
        out
    }

    /// Written and read back, matrices are the same (long rows, several blocks, inputs),
    /// and a synthesis with them gives the assignment of one with the recorded ones.
    #[test]
    fn matrices_round_trip_through_bytes() {
        let sha = Sha256Preimage::<Fr>::new(1, Some(3));
        let recorded = ConstraintMatrices::record(sha.clone()).unwrap();
        assert!(
            recorded.rows.iter().any(|r| !r.long_lens.is_empty()),
            "long rows"
        );
        let data = bytes(&recorded);
        let read = ConstraintMatrices::read(&data[..]).unwrap();
        assert_eq!(read, recorded);
        let with = |m: ConstraintMatrices| SynthesisOptions {
            matrices: Some(Arc::new(m)),
            ..SynthesisOptions::default()
        };
        let a = ProvingAssignment::synthesize_with(sha.clone(), &with(recorded)).unwrap();
        let b = ProvingAssignment::synthesize_with(sha, &with(read)).unwrap();
        crate::synthesis::assignment::tests::same_assignment(&a, &b, "read back");

        let bits =
            ConstraintMatrices::record(BitDecomposition::<Fr>::filling_domain(13, None)).unwrap();
        assert_eq!(ConstraintMatrices::read(&bytes(&bits)[..]).unwrap(), bits);
    }

    /// Every prefix of the data is refused as truncated, every changed byte is refused
    /// (most by the checksum, a header's or a row's item by its own check first, a count's
    /// wherever the data then stops making sense), and bytes after the checksum are
    /// refused: no panic, no matrices.
    #[test]
    fn damaged_data_is_refused_where_it_is_damaged() {
        let m =
            ConstraintMatrices::record(BitDecomposition::<Fr>::filling_domain(8, None)).unwrap();
        let data = bytes(&m);
        for len in (0..data.len()).step_by(7).chain([data.len() - 1]) {
            match ConstraintMatrices::read(&data[..len]) {
                Err(Groth16Error::Truncated { offset, .. }) => assert!(offset <= len as u64),
                other => panic!("prefix {len}: {:?}", other.map(|_| ())),
            }
        }
        for at in (0..data.len()).step_by(5) {
            let mut bad = data.clone();
            bad[at] ^= 0x41;
            match ConstraintMatrices::read(&bad[..]) {
                // A changed count moves every later item: the error is where the data
                // stopped making sense, at or after the change.
                Err(Groth16Error::InvalidMatrices { offset, what }) => assert!(
                    offset <= at as u64 || what.contains("checksum") || at < 16 + 4 + 8 * 4,
                    "byte {at}: {what} at {offset}"
                ),
                Err(Groth16Error::Truncated { .. }) => {}
                other => panic!("byte {at}: {:?}", other.map(|_| ())),
            }
        }
        let mut longer = data.clone();
        longer.push(0);
        assert!(matches!(
            ConstraintMatrices::read(&longer[..]),
            Err(Groth16Error::TrailingBytes { extra: 1, .. })
        ));
    }

    /// Counts at their largest with no data behind them end as truncated data, read a
    /// bounded piece at a time rather than allocated up front.
    #[test]
    fn huge_counts_without_data_are_truncated() {
        let mut data = MAGIC.to_vec();
        data.extend_from_slice(&VERSION.to_le_bytes());
        for count in [1u64, INPUT_FLAG as u64, u32::MAX as u64] {
            data.extend_from_slice(&count.to_le_bytes());
        }
        data.extend_from_slice(&2u64.to_le_bytes());
        data.extend_from_slice(&Fr::ONE.to_bytes_le());
        data.extend_from_slice(&(-Fr::ONE).to_bytes_le());
        data.extend_from_slice(&u64::MAX.to_le_bytes());
        data.extend_from_slice(&[1u8; 100]);
        match ConstraintMatrices::read(&data[..]) {
            Err(Groth16Error::Truncated { offset, expected }) => {
                assert_eq!(offset, data.len() as u64 - 100, "{expected}");
                assert!(expected.contains("A's row lengths"), "{expected}");
            }
            other => panic!("{:?}", other.map(|_| ())),
        }
    }

    /// A term naming a variable past the counts is refused at its offset, even with a
    /// checksum that matches (a writer's bug, not damage).
    #[test]
    fn terms_past_the_counts_are_refused_at_their_offset() {
        let mut m =
            ConstraintMatrices::record(BitDecomposition::<Fr>::filling_domain(8, None)).unwrap();
        let num_aux = m.num_aux as u32;
        m.rows[2].terms[0].var = num_aux;
        match ConstraintMatrices::read(&bytes(&m)[..]) {
            Err(Groth16Error::InvalidMatrices { what, .. }) => {
                assert!(
                    what.contains("C's term 0") && what.contains("auxiliary variable"),
                    "{what}"
                )
            }
            other => panic!("{:?}", other.map(|_| ())),
        }
    }
}
