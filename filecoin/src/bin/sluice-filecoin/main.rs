//! `sluice-filecoin`: Filecoin's proofs (PoRep C2, Window/Winning PoSt, SnapDeals updates)
//! proved with sluice from the files operators hold. Run `sluice-filecoin --help`.

mod args;
mod bar;
mod run;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = args::Args::parse();
    env_logger::Builder::from_env(
        env_logger::Env::default().default_filter_or("warn,sluice_filecoin=info"),
    )
    .init();
    bar::install();
    match run::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            bar::finish();
            eprintln!("error: {e}");
            let mut source = e.source();
            while let Some(cause) = source {
                eprintln!("  caused by: {cause}");
                source = cause.source();
            }
            ExitCode::FAILURE
        }
    }
}
