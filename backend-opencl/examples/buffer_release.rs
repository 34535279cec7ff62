//! Times the driver's work on large device buffers: creating one, committing it (a zero
//! fill, waited for), and releasing it, for sizes from 64 MiB to 8 GiB, three times each.
//! The host blocks in `clReleaseMemObject` for the free; on an H200 the partition's MSMs
//! release gigabytes of temporaries between MSMs, with the device idle
//! (BENCHMARKS.md#partition), and this measures what one release costs.
//!
//! `cargo run --release -p sluice-backend-opencl --example buffer_release [max_log2_mib]`
//! (default 13: up to 8 GiB) runs on the first GPU it finds, else the first device.

use std::time::Instant;

use ocl::core;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let max_log = std::env::args()
        .nth(1)
        .map(|a| a.parse::<u32>())
        .transpose()?
        .unwrap_or(13);
    let mut chosen = None;
    for platform in core::get_platform_ids()? {
        let gpus =
            core::get_device_ids(platform, Some(core::DeviceType::GPU), None).unwrap_or_default();
        let any =
            core::get_device_ids(platform, Some(core::DeviceType::ALL), None).unwrap_or_default();
        match (gpus.first(), any.first(), &chosen) {
            (Some(&d), _, _) => {
                chosen = Some((platform, d));
                break;
            }
            (None, Some(&d), None) => chosen = Some((platform, d)),
            _ => {}
        }
    }
    let (platform, device) = chosen.ok_or("no OpenCL device")?;
    println!(
        "device: {}",
        core::get_device_info(device, core::DeviceInfo::Name)?
    );
    let props = core::ContextProperties::new().platform(platform);
    let context = core::create_context(Some(&props), &[device], None, None)?;
    let queue = core::create_command_queue(&context, device, None)?;
    println!("size       create ms   commit ms  release ms");
    for log_mib in 6..=max_log {
        let words = (1usize << log_mib) << 18; // 2^log_mib MiB of 4-byte words
        for _ in 0..3 {
            let t = Instant::now();
            // SAFETY: no host pointer; the buffer is filled before anything reads it.
            let mem = unsafe {
                core::create_buffer::<_, u32>(
                    &context,
                    core::MemFlags::new().read_write(),
                    words,
                    None,
                )?
            };
            let create = t.elapsed();
            let t = Instant::now();
            core::enqueue_fill_buffer(
                &queue,
                &mem,
                0u32,
                0,
                words,
                None::<core::Event>,
                None::<&mut core::Event>,
                None,
            )?;
            core::finish(&queue)?;
            let commit = t.elapsed();
            let t = Instant::now();
            drop(mem);
            let release = t.elapsed();
            println!(
                "{:>5} MiB {:>10.3} {:>11.3} {:>11.3}",
                1u64 << log_mib,
                create.as_secs_f64() * 1e3,
                commit.as_secs_f64() * 1e3,
                release.as_secs_f64() * 1e3
            );
        }
    }
    Ok(())
}
