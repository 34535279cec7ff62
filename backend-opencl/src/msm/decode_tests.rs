//! Bases uploaded as their file encodings and decoded on the device, against the host's
//! decoding: the same MSMs, and every kind of invalid encoding refused with the index and
//! defect of the reference decoder ([`decode_base`]).

use group::{Curve, Group, UncompressedEncoding};
use sluice_backend::{decode_base, BackendError, BaseDefect, ComputeBackend, CurveAffine, Scalars};
use sluice_field::{DecodeError, Fq, Fr, G1Affine, G1Projective, G2Affine, G2Projective};

use crate::testing::{backend, backend_with, rng, shifted_backend, split_backend, test_device};
use crate::{DeviceSelector, OpenClBackend, OpenClConfig};

/// `n` random points of the group, none the identity.
fn points<G: Group + Curve>(n: usize, seed: u64) -> Vec<G::AffineRepr>
where
    G::AffineRepr: Default + Copy,
{
    let mut r = rng(seed);
    let v: Vec<G> = (0..n).map(|_| G::random(&mut r)).collect();
    let mut out = vec![G::AffineRepr::default(); n];
    G::batch_normalize(&v, &mut out);
    out
}

fn random_scalars(n: usize, seed: u64) -> Vec<Fr> {
    let mut r = rng(seed);
    (0..n).map(|_| <Fr as ff::Field>::random(&mut r)).collect()
}

/// The three test backends: one device; two with small chunks; two with shifted bases.
fn backends() -> Vec<(&'static str, &'static OpenClBackend)> {
    [
        ("one device", backend()),
        ("split", split_backend()),
        ("split, shifted", shifted_backend(true)),
    ]
    .into_iter()
    .filter_map(|(name, b)| b.map(|b| (name, b)))
    .collect()
}

/// p, big-endian: the smallest non-canonical coordinate.
fn modulus_be() -> [u8; 48] {
    let mut out = [0u8; 48];
    for (i, limb) in Fq::MODULUS_LIMBS.iter().enumerate() {
        out[48 - 8 * (i + 1)..48 - 8 * i].copy_from_slice(&limb.to_be_bytes());
    }
    out
}

/// A change to one encoding.
type Corrupt = Box<dyn Fn(&mut [u8])>;

/// Each kind of invalid encoding as a change to a valid one of `size` bytes, with the
/// defect the reference decoder must name (so that a case cannot pass by being valid).
fn corruptions(size: usize) -> Vec<(&'static str, Corrupt, BaseDefect)> {
    let half = size / 2;
    let flags = BaseDefect::Decode(DecodeError::InvalidFlags);
    let range = BaseDefect::Decode(DecodeError::NonCanonicalCoordinate);
    let curve = BaseDefect::Decode(DecodeError::NotOnCurve);
    // (0, 2): on G1's curve (order 3), refused unchecked as blst does; off G2's.
    let zero_x = if size == 96 {
        BaseDefect::Decode(DecodeError::NotInSubgroup)
    } else {
        curve
    };
    vec![
        (
            "compression flag",
            Box::new(|e: &mut [u8]| e[0] |= 0x80),
            flags,
        ),
        ("sign flag", Box::new(|e: &mut [u8]| e[0] |= 0x20), flags),
        (
            "infinity flag on a point",
            Box::new(|e: &mut [u8]| e[0] |= 0x40),
            flags,
        ),
        (
            "the flagged identity",
            Box::new(|e: &mut [u8]| {
                e.fill(0);
                e[0] = 0x40;
            }),
            BaseDefect::Identity,
        ),
        (
            "(0, 0) unflagged",
            Box::new(|e: &mut [u8]| e.fill(0)),
            curve,
        ),
        (
            "(0, 2) unflagged",
            Box::new(move |e: &mut [u8]| {
                e.fill(0);
                e[size - 1] = 2;
            }),
            zero_x,
        ),
        (
            "x's first element = p",
            Box::new(|e: &mut [u8]| e[..48].copy_from_slice(&modulus_be())),
            range,
        ),
        (
            "y's last element = p",
            Box::new(move |e: &mut [u8]| e[size - 48..].copy_from_slice(&modulus_be())),
            range,
        ),
        (
            "y's top bit set",
            Box::new(move |e: &mut [u8]| e[half] |= 0x80),
            range,
        ),
        (
            "y's low bit flipped",
            Box::new(move |e: &mut [u8]| e[size - 1] ^= 1),
            curve,
        ),
    ]
}

fn check_encoded<A>(seed: u64, msm: fn(&[A], &[Fr]) -> A::Group)
where
    A: CurveAffine + UncompressedEncoding + Copy,
{
    let size = A::UNCOMPRESSED_BYTES;
    let encode = |pts: &[A]| -> Vec<u8> {
        pts.iter()
            .flat_map(|p| p.to_uncompressed().as_ref().to_vec())
            .collect()
    };
    for (name, b) in backends() {
        // Lengths that fill one chunk, cross chunks and split unevenly across the devices.
        for (i, n) in [1usize, 97, 1 << 10].into_iter().enumerate() {
            let seed = seed + 10 * i as u64;
            let pts = points::<A::Group>(n, seed);
            let decoded = b
                .upload_bases_encoded::<A>("encoded", &encode(&pts))
                .unwrap()
                .expect("the OpenCL backend decodes on the device");
            let s = random_scalars(n, seed + 1);
            let got = b.msm_vartime(&decoded, 0, Scalars::Host(&s), None).unwrap();
            assert!(got == msm(&pts, &s), "{name}, n {n}, seed {seed}");
        }

        // Every kind of invalid encoding, at an index of the second device's part.
        let n = 300;
        let valid = encode(&points::<A::Group>(n, seed + 100));
        for (what, corrupt, defect) in corruptions(size) {
            let at = 211;
            let mut enc = valid.clone();
            corrupt(&mut enc[at * size..(at + 1) * size]);
            assert_eq!(
                decode_base::<A>(&enc[at * size..(at + 1) * size]).err(),
                Some(defect),
                "{what}: the reference decoder's verdict"
            );
            match b.upload_bases_encoded::<A>("encoded", &enc) {
                Err(BackendError::InvalidBase {
                    index, defect: got, ..
                }) => {
                    assert_eq!((index, got), (at, defect), "{name}, {what}")
                }
                other => panic!("{name}, {what}: {:?}", other.map(|_| ())),
            }
            // With a second invalid base lower down, the lowest is named.
            corrupt(&mut enc[37 * size..38 * size]);
            match b.upload_bases_encoded::<A>("encoded", &enc) {
                Err(BackendError::InvalidBase { index, .. }) => {
                    assert_eq!(index, 37, "{name}, {what}")
                }
                other => panic!("{name}, {what}, two: {:?}", other.map(|_| ())),
            }
        }
        assert!(matches!(
            b.upload_bases_encoded::<A>("encoded", &valid[..size + 1]),
            Err(BackendError::InvalidInput(_))
        ));
        let empty = b
            .upload_bases_encoded::<A>("encoded", &[])
            .unwrap()
            .unwrap();
        assert_eq!(sluice_backend::Buffer::len(&empty), 0, "{name}, empty");
        // Bytes not aligned to a word are copied, then decoded alike.
        let mut shifted = vec![0u8; valid.len() + 1];
        shifted[1..].copy_from_slice(&valid);
        let decoded = b
            .upload_bases_encoded::<A>("encoded", &shifted[1..])
            .unwrap()
            .unwrap();
        let s = random_scalars(n, seed + 101);
        let pts = points::<A::Group>(n, seed + 100);
        let got = b.msm_vartime(&decoded, 0, Scalars::Host(&s), None).unwrap();
        assert!(got == msm(&pts, &s), "{name}, unaligned");
    }
}

fn g1_msm(p: &[G1Affine], s: &[Fr]) -> G1Projective {
    sluice_msm::msm_g1_vartime(p, s, None).unwrap()
}

fn g2_msm(p: &[G2Affine], s: &[Fr]) -> G2Projective {
    sluice_msm::msm_g2_vartime(p, s, None).unwrap()
}

#[test]
fn g1_bases_decode_on_the_device_as_on_the_host() {
    check_encoded::<G1Affine>(7100, g1_msm);
}

#[test]
fn g2_bases_decode_on_the_device_as_on_the_host() {
    check_encoded::<G2Affine>(7200, g2_msm);
}

/// By default only GPUs decode on the device; a CPU driver leaves it to the host.
#[test]
fn by_default_only_gpus_decode() {
    let Some(b) = backend_with(OpenClConfig {
        devices: DeviceSelector::Index(test_device()),
        ..OpenClConfig::default()
    }) else {
        return;
    };
    let encoded = G1Affine::generator().to_uncompressed();
    let got = b
        .upload_bases_encoded::<G1Affine>("probe", encoded.as_ref())
        .unwrap();
    assert_eq!(got.is_some(), b.info().accelerator, "{}", b.info().name);
}
