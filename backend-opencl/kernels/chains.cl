// Multi-limb carry chains over a type FIELD of FIELD_LIMBS 32-bit limbs (a field element,
// or fq2.cl's unreduced products). A template like field.cl; the NVIDIA build uses the
// generated PTX chains of src/ptx.rs instead.

#ifndef SLUICE_NVIDIA
// a + b mod 2^(32 FIELD_LIMBS) (the NVIDIA build uses a generated PTX chain instead).
inline FIELD FIELD_add_nc(FIELD a, FIELD b) {
  FIELD r;
  uint carry = 0;
  for (uint i = 0; i < FIELD_LIMBS; i++) {
    ulong s = (ulong)a.v[i] + (ulong)b.v[i] + (ulong)carry;
    r.v[i] = (uint)s;
    carry = (uint)(s >> 32);
  }
  return r;
}

// a - b mod 2^(32 FIELD_LIMBS); *borrow = 1 when b > a.
inline FIELD FIELD_sub_nc(FIELD a, FIELD b, uint *borrow) {
  FIELD r;
  uint br = 0;
  for (uint i = 0; i < FIELD_LIMBS; i++) {
    ulong d = (ulong)a.v[i] - (ulong)b.v[i] - (ulong)br;
    r.v[i] = (uint)d;
    br = (uint)(d >> 63);
  }
  *borrow = br;
  return r;
}
#endif
