//! The four-step (Bailey) decomposition of an `n = n1 * n2` NTT; see [`FourStepPlan`].

use alloc::vec;

use ff::PrimeField;

use crate::ops::bit_reverse_unchecked;
use crate::par::{for_each_chunk, MIN_PARALLEL_LEN};
use crate::{distribute_powers, transform, Domain, NttDirection, NttError, NttOrder};
use NttOrder::NaturalToNatural;

/// A plan for an `n = 2^log_n` NTT split into `n2 = n / n1` columns of `n1 = 2^log_n1`
/// elements and `n1` rows of `n2` elements, whose passes run on buffers the caller holds.
///
/// View the natural-order input as an `n1 x n2` row-major matrix, `x[i * n2 + j]` at row `i`,
/// column `j`. With `k = k1 + n1 * k2` (`k1 < n1`, `k2 < n2`):
///
/// ```text
/// X[k1 + n1 k2] = sum_j omega_n2^(j k2) * ( omega_n^(j k1) * sum_i x[i n2 + j] omega_n1^(i k1) )
/// ```
///
/// 1. column pass, for every column `j`: a size-`n1` NTT of `x[j], x[j + n2], x[j + 2 n2], ...`
///    followed by multiplying its output `k1` by `omega_n^(j k1)` (the "twiddle" step);
/// 2. writing column `j`'s output `k1` back to `x[k1 * n2 + j]`, row pass, for every row `k1`:
///    a size-`n2` NTT of the contiguous `x[k1 n2 .. (k1 + 1) n2]`.
///
/// The result is in **transposed order**: position `p = k1 * n2 + k2` holds evaluation
/// `X[k1 + n1 * k2]` ([`FourStepPlan::index_at`] / [`FourStepPlan::position_of`]); an
/// `n1 x n2 -> n2 x n1` transpose gives natural order. Each pass touches one column or row
/// (`n1` or `n2` elements) at a time, which is what lets a device with little memory stream an
/// NTT far larger than itself. The inverse runs the same passes with `omega^-1` and the `1/n1`,
/// `1/n2` scalings, and leaves its coefficients in the same transposed order.
///
/// The plan owns the size-`n1` and size-`n2` domains (their twiddles are built on first use),
/// never a size-`n` table.
#[derive(Clone, Debug)]
pub struct FourStepPlan<F: PrimeField> {
    full: Domain<F>,
    columns: Domain<F>,
    rows: Domain<F>,
}

impl<F: PrimeField> FourStepPlan<F> {
    /// Plans a `2^log_n`-point transform with columns of `2^log_n1` elements (`0 <= log_n1 <=
    /// log_n`; both extremes are valid and degenerate to one plain NTT).
    ///
    /// Returns [`NttError::DomainTooLarge`] for `log_n > Domain::MAX_LOG_SIZE` and
    /// [`NttError::InvalidSplit`] for `log_n1 > log_n`.
    pub fn new(log_n: u32, log_n1: u32) -> Result<Self, NttError> {
        let full = Domain::new(log_n)?;
        if log_n1 > log_n {
            return Err(NttError::InvalidSplit { log_n, log_n1 });
        }
        Ok(Self {
            full,
            columns: Domain::new(log_n1)?,
            rows: Domain::new(log_n - log_n1)?,
        })
    }

    /// The transform size `n`.
    pub fn size(&self) -> usize {
        self.full.size()
    }

    /// The domain of the whole transform (size `n`), for `omega` and the coset constants.
    pub fn domain(&self) -> &Domain<F> {
        &self.full
    }

    /// The column length `n1` (the number of rows).
    pub fn column_len(&self) -> usize {
        self.columns.size()
    }

    /// The row length `n2` (the number of columns).
    pub fn row_len(&self) -> usize {
        self.rows.size()
    }

    /// The column pass for column `j < n2`: `column` holds the natural-order input elements
    /// `x[j], x[j + n2], ..., x[j + (n1 - 1) n2]`. Forward: afterwards `column[k1] =
    /// omega_n^(j k1) * sum_i x[i n2 + j] omega_n1^(i k1)`. Inverse: the same with
    /// `omega^-1` and a `1/n1` factor.
    ///
    /// Returns [`NttError::LengthMismatch`] unless `column.len() == n1` and
    /// [`NttError::ColumnOutOfRange`] for `j >= n2`.
    pub fn column_pass(
        &self,
        j: usize,
        column: &mut [F],
        direction: NttDirection,
    ) -> Result<(), NttError> {
        if j >= self.row_len() {
            return Err(NttError::ColumnOutOfRange {
                column: j,
                columns: self.row_len(),
            });
        }
        transform(&self.columns, column, NaturalToNatural, direction)?;
        let root = match direction {
            NttDirection::Forward => self.full.omega(),
            NttDirection::Inverse => self.full.omega_inv(),
        };
        distribute_powers(column, root.pow_vartime([j as u64]));
        Ok(())
    }

    /// The row pass for one row: `row` holds `column_pass` outputs `k1` of all columns,
    /// `j = 0..n2` in order; afterwards `row[k2]` is evaluation `X[k1 + n1 k2]` (inverse:
    /// coefficient `x[k1 + n1 k2]`), i.e. the row is position `k1 * n2 ..` of the transposed
    /// output.
    ///
    /// Returns [`NttError::LengthMismatch`] unless `row.len() == n2`.
    pub fn row_pass(&self, row: &mut [F], direction: NttDirection) -> Result<(), NttError> {
        transform(&self.rows, row, NaturalToNatural, direction)
    }

    /// The natural index held at position `p` of the transposed output: `p = k1 * n2 + k2`
    /// holds index `k1 + n1 * k2` (`p` taken modulo `n`).
    pub fn index_at(&self, p: usize) -> usize {
        let p = p & (self.size() - 1);
        p / self.row_len() + self.column_len() * (p % self.row_len())
    }

    /// The inverse of [`index_at`](Self::index_at): the position of natural index `k` in the
    /// transposed output (`k` taken modulo `n`).
    pub fn position_of(&self, k: usize) -> usize {
        let k = k & (self.size() - 1);
        (k % self.column_len()) * self.row_len() + k / self.column_len()
    }
}

/// Forward NTT through the plan's column and row passes; equals [`ntt`](crate::ntt) on
/// `plan.domain()` for every order. Allocates one `n`-element scratch buffer (for the
/// transposes that make columns contiguous and restore natural order).
///
/// Returns [`NttError::LengthMismatch`] unless `data.len() == plan.size()`.
pub fn four_step_ntt<F: PrimeField>(
    plan: &FourStepPlan<F>,
    data: &mut [F],
    order: NttOrder,
) -> Result<(), NttError> {
    four_step(plan, data, order, NttDirection::Forward)
}

/// Inverse NTT (with `1/n`) through the plan's passes; equals [`intt`](crate::intt).
///
/// Returns [`NttError::LengthMismatch`] unless `data.len() == plan.size()`.
pub fn four_step_intt<F: PrimeField>(
    plan: &FourStepPlan<F>,
    data: &mut [F],
    order: NttOrder,
) -> Result<(), NttError> {
    four_step(plan, data, order, NttDirection::Inverse)
}

fn four_step<F: PrimeField>(
    plan: &FourStepPlan<F>,
    data: &mut [F],
    order: NttOrder,
    direction: NttDirection,
) -> Result<(), NttError> {
    plan.full.check_len(data.len())?;
    let (n1, n2) = (plan.column_len(), plan.row_len());
    if order.input_bit_reversed() {
        bit_reverse_unchecked(data);
    }
    let mut scratch = vec![F::ZERO; data.len()];
    // Columns become the contiguous rows of scratch (n2 x n1).
    transpose(data, &mut scratch, n1, n2);
    for_each_chunk(&mut scratch, n1, |j, column| {
        // Cannot fail: j < n2 and every chunk has n1 elements.
        let _ = plan.column_pass(j, column, direction);
    });
    transpose(&scratch, data, n2, n1);
    for_each_chunk(data, n2, |_, row| {
        let _ = plan.row_pass(row, direction);
    });
    // Transposed order (n1 x n2) to natural (n2 x n1).
    transpose(data, &mut scratch, n1, n2);
    data.copy_from_slice(&scratch);
    if order.output_bit_reversed() {
        bit_reverse_unchecked(data);
    }
    Ok(())
}

/// Side of the square tiles the transpose copies, so reads and writes both stay in cache.
const TILE: usize = 16;

/// `dst[c * rows + r] = src[r * cols + c]`: transposes a row-major `rows x cols` matrix.
fn transpose<F: Copy + Send + Sync>(src: &[F], dst: &mut [F], rows: usize, cols: usize) {
    debug_assert!(src.len() == rows * cols && dst.len() == rows * cols);
    // Each chunk is a run of whole output rows (= input columns), so chunks are independent.
    let chunk_cols = TILE.max(MIN_PARALLEL_LEN / rows);
    for_each_chunk(dst, chunk_cols * rows, |t, out| {
        let c0 = t * chunk_cols;
        let out_rows = out.len() / rows;
        for r0 in (0..rows).step_by(TILE) {
            let r1 = (r0 + TILE).min(rows);
            for c in 0..out_rows {
                for r in r0..r1 {
                    out[c * rows + r] = src[r * cols + c0 + c];
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{random_vec, seeded};
    use crate::{intt, ntt};
    use alloc::vec::Vec;
    use ff::Field;
    use sluice_field::Fr;

    const SPLITS: [(u32, u32); 10] = [
        (0, 0),
        (1, 0),
        (1, 1),
        (4, 0),
        (4, 4),
        (5, 2),
        (8, 3),
        (10, 5),
        (12, 4),
        (14, 9),
    ];

    #[test]
    fn four_step_equals_ntt_for_every_split_and_order() {
        let seed = 21;
        let mut rng = seeded(seed);
        for (log_n, log_n1) in SPLITS {
            let plan = FourStepPlan::<Fr>::new(log_n, log_n1).unwrap();
            let x = random_vec(&mut rng, 1 << log_n);
            for order in NttOrder::ALL {
                let mut want = x.clone();
                ntt(plan.domain(), &mut want, order).unwrap();
                let mut got = x.clone();
                four_step_ntt(&plan, &mut got, order).unwrap();
                assert!(
                    got == want,
                    "seed {seed}, split ({log_n}, {log_n1}), {order:?}"
                );

                let mut want = x.clone();
                intt(plan.domain(), &mut want, order).unwrap();
                let mut got = x.clone();
                four_step_intt(&plan, &mut got, order).unwrap();
                assert!(
                    got == want,
                    "seed {seed}, split ({log_n}, {log_n1}), {order:?} inverse"
                );
            }
        }
    }

    /// Drives the step methods by hand, as a streaming caller would (gather a column, pass,
    /// scatter; then rows in place), and checks the documented transposed order.
    #[test]
    fn step_methods_give_the_documented_transposed_order() {
        let seed = 22;
        let mut rng = seeded(seed);
        for (log_n, log_n1) in SPLITS {
            let plan = FourStepPlan::<Fr>::new(log_n, log_n1).unwrap();
            let (n, n1, n2) = (plan.size(), plan.column_len(), plan.row_len());
            let x = random_vec(&mut rng, n);
            let mut evals = x.clone();
            ntt(plan.domain(), &mut evals, NttOrder::NaturalToNatural).unwrap();

            let mut data = x.clone();
            for j in 0..n2 {
                let mut column: Vec<Fr> = (0..n1).map(|i| data[i * n2 + j]).collect();
                plan.column_pass(j, &mut column, NttDirection::Forward)
                    .unwrap();
                for (k1, v) in column.into_iter().enumerate() {
                    data[k1 * n2 + j] = v;
                }
            }
            for row in data.chunks_mut(n2) {
                plan.row_pass(row, NttDirection::Forward).unwrap();
            }
            for (p, value) in data.iter().enumerate() {
                let k = p / n2 + n1 * (p % n2);
                assert_eq!(plan.index_at(p), k, "split ({log_n}, {log_n1}), p {p}");
                assert_eq!(plan.position_of(k), p, "split ({log_n}, {log_n1}), k {k}");
                assert_eq!(
                    *value, evals[k],
                    "seed {seed}, split ({log_n}, {log_n1}), p {p}"
                );
            }
            // And the inverse passes in the same layout bring back x in transposed order.
            for j in 0..n2 {
                let mut column: Vec<Fr> = (0..n1).map(|i| evals[i * n2 + j]).collect();
                plan.column_pass(j, &mut column, NttDirection::Inverse)
                    .unwrap();
                for (k1, v) in column.into_iter().enumerate() {
                    evals[k1 * n2 + j] = v;
                }
            }
            for row in evals.chunks_mut(n2) {
                plan.row_pass(row, NttDirection::Inverse).unwrap();
            }
            for (p, value) in evals.iter().enumerate() {
                assert_eq!(*value, x[plan.index_at(p)], "seed {seed}, inverse, p {p}");
            }
        }
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert_eq!(
            FourStepPlan::<Fr>::new(4, 5).unwrap_err(),
            NttError::InvalidSplit {
                log_n: 4,
                log_n1: 5
            }
        );
        assert_eq!(
            FourStepPlan::<Fr>::new(33, 1).unwrap_err(),
            NttError::DomainTooLarge {
                log_size: 33,
                max: 32
            }
        );
        let plan = FourStepPlan::<Fr>::new(6, 2).unwrap();
        let mut column = [Fr::ONE; 4];
        assert_eq!(
            plan.column_pass(16, &mut column, NttDirection::Forward),
            Err(NttError::ColumnOutOfRange {
                column: 16,
                columns: 16
            })
        );
        let mut short = [Fr::ONE; 3];
        assert_eq!(
            plan.column_pass(0, &mut short, NttDirection::Forward),
            Err(NttError::LengthMismatch {
                expected: 4,
                got: 3
            })
        );
        assert_eq!(
            plan.row_pass(&mut short, NttDirection::Forward),
            Err(NttError::LengthMismatch {
                expected: 16,
                got: 3
            })
        );
        for len in [0usize, 3, 63, 65] {
            let mut data = alloc::vec![Fr::ONE; len];
            assert_eq!(
                four_step_ntt(&plan, &mut data, NttOrder::NaturalToNatural),
                Err(NttError::LengthMismatch {
                    expected: 64,
                    got: len
                })
            );
        }
    }
}
