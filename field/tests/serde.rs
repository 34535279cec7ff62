//! serde round trips of the field elements (behind the `serde` feature): canonical bytes in,
//! the same element out; non-canonical bytes refused.
#![cfg(feature = "serde")]

use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_field::{Fq, Fq2, Fr};

const SEED: u64 = 0x5e7d_e001;

fn round_trip<T>(v: &T) -> T
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let json = serde_json::to_string(v).expect("serialize");
    serde_json::from_str(&json).expect("deserialize")
}

#[test]
fn field_elements_round_trip() {
    let mut rng = ChaCha20Rng::seed_from_u64(SEED);
    for i in 0..200 {
        let (r, q) = (Fr::random(&mut rng), Fq::random(&mut rng));
        let q2 = Fq2 {
            c0: Fq::random(&mut rng),
            c1: Fq::random(&mut rng),
        };
        assert_eq!(round_trip(&r), r, "Fr case {i} (seed {SEED:#x})");
        assert_eq!(round_trip(&q), q, "Fq case {i} (seed {SEED:#x})");
        assert_eq!(round_trip(&q2), q2, "Fq2 case {i} (seed {SEED:#x})");
    }
    for v in [Fr::ZERO, Fr::ONE, -Fr::ONE] {
        assert_eq!(round_trip(&v), v);
    }
}

#[test]
fn non_canonical_and_short_inputs_are_refused() {
    // The Fr modulus itself, little-endian, as the 32-tuple serde writes.
    let modulus = Fr::MODULUS_LIMBS
        .iter()
        .flat_map(|l| l.to_le_bytes())
        .collect::<Vec<u8>>();
    let json = serde_json::to_string(&modulus).unwrap();
    assert!(
        serde_json::from_str::<Fr>(&json).is_err(),
        "r itself must be refused"
    );
    assert!(serde_json::from_str::<Fr>("[1,2,3]").is_err(), "too short");
    assert!(
        serde_json::from_str::<Fq>("\"zero\"").is_err(),
        "wrong type"
    );
}
