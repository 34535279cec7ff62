//! Evaluation domains and CPU NTT kernels over the BLS12-381 scalar field.
#![no_std]
