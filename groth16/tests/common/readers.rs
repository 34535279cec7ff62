//! Every reader of the bellperson formats run on the same bytes, and what they must agree
//! on: shared by the format tests, the mutation test and the fuzz target (`fuzz/`).

use std::path::PathBuf;

use ff::Field;

use sluice_field::{Fq, G1Affine};
use sluice_groth16::{Groth16Error, MappedParameters, Parameters, Proof, VerifyingKey};

/// The six fixed points of a verifying key: name, offset, encoded size.
pub const VK_POINTS: [(&str, usize, usize); 6] = [
    ("vk.alpha_g1", 0, 96),
    ("vk.beta_g1", 96, 96),
    ("vk.beta_g2", 192, 192),
    ("vk.gamma_g2", 384, 192),
    ("vk.delta_g1", 576, 96),
    ("vk.delta_g2", 672, 192),
];

/// One length-prefixed section of a parameters file.
#[derive(Clone, Copy, Debug)]
pub struct Section {
    /// Its name in error messages.
    pub name: &'static str,
    /// Offset of its u32 length.
    pub len_at: usize,
    /// Points in it.
    pub count: usize,
    /// Bytes per point.
    pub point_size: usize,
}

impl Section {
    /// Offset of point `i`.
    pub fn point(&self, i: usize) -> usize {
        self.len_at + 4 + i * self.point_size
    }

    /// Offset just past its last point.
    pub fn end(&self) -> usize {
        self.point(self.count)
    }
}

/// Where every section of `params`' file starts: vk.ic, h, l, a, b_g1, b_g2.
pub fn layout(params: &Parameters) -> [Section; 6] {
    let counts = [
        ("vk.ic", params.vk.ic.len(), 96),
        ("h", params.h.len(), 96),
        ("l", params.l.len(), 96),
        ("a", params.a.len(), 96),
        ("b_g1", params.b_g1.len(), 96),
        ("b_g2", params.b_g2.len(), 192),
    ];
    let mut at = 864;
    counts.map(|(name, count, point_size)| {
        let s = Section {
            name,
            len_at: at,
            count,
            point_size,
        };
        at = s.end();
        s
    })
}

/// A scratch file for the memory-mapped reader, removed on drop.
pub struct ScratchFile(PathBuf);

impl ScratchFile {
    /// A file name of this process, distinct per `tag`.
    pub fn new(tag: &str) -> Self {
        ScratchFile(std::env::temp_dir().join(format!(
            "sluice-readers-{tag}-{}.params",
            std::process::id()
        )))
    }
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `Parameters::read`, and `MappedParameters::open` then `to_parameters` (through `file`),
/// on the same bytes.
pub fn read_params_both_ways(
    bytes: &[u8],
    checked: bool,
    file: &ScratchFile,
) -> [Result<Parameters, Groth16Error>; 2] {
    let streamed = Parameters::read(bytes, checked);
    let mapped = std::fs::write(&file.0, bytes)
        .map_err(|source| Groth16Error::Io { offset: 0, source })
        .and_then(|()| MappedParameters::open(&file.0, checked))
        .and_then(|m| m.to_parameters());
    [streamed, mapped]
}

/// Whether an error is about the file's lengths rather than about one point.
fn structural(e: &Groth16Error) -> bool {
    matches!(
        e,
        Groth16Error::Truncated { .. } | Groth16Error::TrailingBytes { .. }
    )
}

fn offset(e: &Groth16Error) -> Option<u64> {
    match e {
        Groth16Error::Truncated { offset, .. }
        | Groth16Error::TrailingBytes { offset, .. }
        | Groth16Error::InvalidPoint { offset, .. }
        | Groth16Error::PointAtInfinity { offset, .. }
        | Groth16Error::Io { offset, .. } => Some(*offset),
        _ => None,
    }
}

/// How the parameter readers judged some bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Accepted by checked reads.
    Accepted,
    /// Accepted only by unchecked reads (a point outside the subgroup).
    UncheckedOnly,
    /// Rejected by every reader.
    Rejected,
}

/// Runs both parameter readers, checked and unchecked, on `bytes` and checks what they
/// must agree on: an accepted file re-encodes to exactly its bytes, both readers accept
/// the same files with the same value, a checked read accepts only what an unchecked one
/// does, and errors are the same (the streamed reader may report a bad point before a
/// later length error that the mapped reader, which checks lengths first, reports).
pub fn check_params(bytes: &[u8], file: &ScratchFile) -> Result<Verdict, String> {
    let mut accepted = [false; 2];
    let mut values = Vec::new();
    for (k, checked) in [true, false].into_iter().enumerate() {
        match read_params_both_ways(bytes, checked, file) {
            [Ok(a), Ok(b)] => {
                if a != b {
                    return Err(format!(
                        "checked {checked}: the readers decode different values"
                    ));
                }
                let mut again = Vec::new();
                a.write(&mut again).map_err(|e| e.to_string())?;
                if again != bytes {
                    return Err(format!(
                        "checked {checked}: accepted bytes re-encode differently"
                    ));
                }
                accepted[k] = true;
                values.push(a);
            }
            [Err(a), Err(b)] => {
                let agree = if structural(&a) || !structural(&b) {
                    a.to_string() == b.to_string()
                } else {
                    offset(&a) < offset(&b)
                };
                if !agree {
                    return Err(format!(
                        "checked {checked}: the readers disagree: streamed `{a}`, mapped `{b}`"
                    ));
                }
            }
            [a, b] => {
                return Err(format!(
                    "checked {checked}: one reader accepts: streamed {:?}, mapped {:?}",
                    a.err().map(|e| e.to_string()),
                    b.err().map(|e| e.to_string())
                ))
            }
        }
    }
    match accepted {
        [true, true] if values[0] == values[1] => Ok(Verdict::Accepted),
        [true, true] => Err("checked and unchecked reads decode different values".into()),
        [true, false] => Err("a checked read accepts what an unchecked one rejects".into()),
        [false, true] => Ok(Verdict::UncheckedOnly),
        [false, false] => Ok(Verdict::Rejected),
    }
}

/// `VerifyingKey::read` on `bytes`: a key it accepts re-encodes to the bytes it consumed.
/// Returns whether it accepted.
pub fn check_vk(bytes: &[u8]) -> Result<bool, String> {
    let Ok(vk) = VerifyingKey::read(bytes) else {
        return Ok(false);
    };
    let mut again = Vec::new();
    vk.write(&mut again).map_err(|e| e.to_string())?;
    if bytes.get(..again.len()) != Some(&again[..]) {
        return Err("an accepted verifying key re-encodes differently".into());
    }
    Ok(true)
}

/// `Proof::from_bytes` and `Proof::read` on `bytes`: an accepted proof re-encodes to its
/// bytes, and both agree (`read` takes the first [`Proof::SIZE`] bytes of a stream).
/// Returns whether `from_bytes` accepted.
pub fn check_proof(bytes: &[u8]) -> Result<bool, String> {
    let whole = Proof::from_bytes(bytes);
    let streamed = Proof::read(bytes);
    let first = match bytes.get(..Proof::SIZE) {
        Some(first) => Proof::from_bytes(first),
        None => Proof::from_bytes(bytes),
    };
    let same = match (&streamed, &first) {
        (Ok(a), Ok(b)) => a == b,
        (Err(a), Err(b)) => a.to_string() == b.to_string(),
        _ => false,
    };
    if !same {
        return Err(format!(
            "Proof::read {:?} and Proof::from_bytes of the same bytes {:?} disagree",
            streamed.map(|_| ()).map_err(|e| e.to_string()),
            first.map(|_| ()).map_err(|e| e.to_string())
        ));
    }
    match whole {
        Ok(p) if p.to_bytes()[..] != *bytes => {
            Err("an accepted proof re-encodes differently".into())
        }
        Ok(_) => Ok(true),
        Err(_) => Ok(false),
    }
}

/// A point on the curve but outside the prime-order subgroup.
pub fn non_subgroup_point() -> G1Affine {
    let b = Fq::from(4u64);
    (1u64..)
        .find_map(|x| {
            let x = Fq::from(x);
            let y: Option<Fq> = (x.square() * x + b).sqrt().into();
            let p = G1Affine::from_xy_unchecked(x, y?);
            (!bool::from(p.is_torsion_free())).then_some(p)
        })
        .expect("about half of all x have a point, most outside the subgroup")
}
