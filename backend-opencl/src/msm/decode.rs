//! MSM bases from bellperson's parameter files, decoded on the devices
//! (`kernels/decode.cl`): the host copies the encodings into the bases' buffers and reads
//! back one word per device, the lowest index of a point the kernel refused.

use sluice_backend::{decode_base, encoded_len, BackendError, MemoryTracker};

use super::bases::{finish_upload, write_parts, OpenClBases};
use super::curve::GpuCurve;
use crate::context::DeviceCtx;
use crate::repr::DeviceRepr;
use crate::tuning::MsmTuning;

/// [`upload`](super::bases::upload) from the bases' uncompressed encodings, decoded on the devices (see
/// `kernels/decode.cl`): the host copies the bytes and reads one word per device back.
pub(super) fn upload_encoded<A: GpuCurve>(
    devices: &[DeviceCtx],
    tracker: &MemoryTracker,
    shifted: Option<&MsmTuning>,
    name: &str,
    encoded: &[u8],
) -> Result<OpenClBases<A>, BackendError> {
    // The encoding and the device's affine point are the same size, so one buffer serves.
    const { assert!(A::UNCOMPRESSED_BYTES == 4 * A::WORDS) };
    let len = encoded_len::<A>(name, encoded)?;
    if u32::try_from(len).is_err() {
        return Err(BackendError::InvalidInput(format!(
            "`{name}`: {len} encoded bases, more than one upload may decode (2^32 - 1)"
        )));
    }
    // SAFETY: any four bytes are a valid u32; `align_to` splits off what is not aligned.
    let (head, aligned, tail) = unsafe { encoded.align_to::<u32>() };
    let copied: Vec<u32>;
    let words = if head.is_empty() && tail.is_empty() {
        aligned
    } else {
        copied = encoded
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        &copied
    };
    let parts = write_parts::<A>(devices, tracker, name, words)?;
    let mut flags = Vec::with_capacity(parts.len());
    for (part, start) in &parts {
        let ctx = &devices[part.device];
        let flag = ctx.temp(tracker, &format!("{name} (decode flag)"), 1)?;
        // A fresh buffer: on the transfer queue, not behind the kernels already queued.
        ctx.write_fresh(&flag, 0, &[u32::MAX])?;
        let kernel = format!("{}_decode_bases", A::PREFIX);
        for (ch, chunk) in part.chunks.iter().enumerate() {
            let n = part.chunk_elems(ch);
            ctx.kernel(A::PROGRAM, &kernel)?
                .mem(chunk)?
                .u32(n as u32)?
                .u32((start + ch * part.chunk_len) as u32)?
                .mem(&flag)?
                .run(n, None)?;
        }
        ctx.flush()?;
        flags.push(flag);
    }
    let mut first_bad = u32::MAX;
    for ((part, _), flag) in parts.iter().zip(&flags) {
        let mut word = [0u32];
        devices[part.device].read(flag, 0, &mut word)?;
        first_bad = first_bad.min(word[0]);
    }
    if first_bad != u32::MAX {
        let index = first_bad as usize;
        let at = index * A::UNCOMPRESSED_BYTES;
        let encoding = &encoded[at..at + A::UNCOMPRESSED_BYTES];
        return Err(match decode_base::<A>(encoding) {
            Err(defect) => BackendError::InvalidBase {
                what: name.to_owned(),
                index,
                defect,
            },
            Ok(_) => BackendError::Driver {
                code: 0,
                message: format!(
                    "the device refused base {index} of `{name}`, which the host's decoder accepts"
                ),
                build_log: None,
            },
        });
    }
    finish_upload(devices, tracker, shifted, name, parts)
}
