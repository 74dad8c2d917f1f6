//! Times one workload: `cargo run --release -p actorium-peers --example time -- <system> <bench>
//! <threads> k=v ...`; prints `RESULT seconds=<s> checksum=<c>` like the harness's `exec`.

use std::collections::BTreeMap;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: time <system> <bench> <threads> k=v ...");
        std::process::exit(2);
    }
    let threads: usize = args[2].parse().expect("threads");
    let mut params = BTreeMap::new();
    for kv in &args[3..] {
        let (k, v) = kv.split_once('=').expect("k=v");
        params.insert(
            k.to_string(),
            v.replace(['_', ','], "").parse::<u64>().expect("value"),
        );
    }
    match actorium_peers::run(&args[0], &args[1], threads, &params) {
        Ok((seconds, checksum)) => println!("RESULT seconds={seconds} checksum={checksum}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
