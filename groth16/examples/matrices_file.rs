//! Records the constraint matrices of the demo SHA-256 circuit (bellpepper's gadgets)
//! filling a domain of 2^LOG (default 20), writes them to a file, reads them back, and
//! prints each step's time and the file's size: what keeping the matrices beside the
//! parameters saves against recording them at every start.
//!
//!     cargo run --release -p sluice-groth16 --example matrices_file -- [LOG] [PATH]
//!
//! PATH defaults to a file in the system's temporary directory, removed at the end.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::time::Instant;

use sluice_field::Fr;
use sluice_groth16::demo::Sha256Preimage;
use sluice_groth16::ConstraintMatrices;

fn main() {
    let mut args = std::env::args().skip(1);
    let log: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let (path, keep) = match args.next() {
        Some(p) => (std::path::PathBuf::from(p), true),
        None => (std::env::temp_dir().join("sluice-matrices-example"), false),
    };
    if let Err(e) = run(log, &path) {
        eprintln!("matrices_file: {e}");
        std::process::exit(1);
    }
    if !keep {
        let _ = std::fs::remove_file(&path);
    }
}

fn run(log: u32, path: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let start = Instant::now();
    let recorded = ConstraintMatrices::record(Sha256Preimage::<Fr>::filling_domain(log, None))?;
    let recording = start.elapsed();

    let start = Instant::now();
    let mut out = BufWriter::new(File::create(path)?);
    recorded.write(&mut out)?;
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    let writing = start.elapsed();
    let bytes = std::fs::metadata(path)?.len();

    let start = Instant::now();
    let read = ConstraintMatrices::read(BufReader::new(File::open(path)?))?;
    let reading = start.elapsed();
    if read != recorded {
        return Err("the matrices read back differ from those written".into());
    }
    println!(
        "SHA-256 2^{log}: {} constraints, {} terms; recorded in {:.1} ms, written in {:.1} ms \
         ({:.1} MB), read and checked in {:.1} ms",
        recorded.num_constraints(),
        recorded.num_terms(),
        recording.as_secs_f64() * 1e3,
        writing.as_secs_f64() * 1e3,
        bytes as f64 / 1e6,
        reading.as_secs_f64() * 1e3
    );
    Ok(())
}
