//! Startup time with a cold and a warm compile cache: from spawning
//! `corral serve` to the answer of the first `tools/list`, for the largest
//! example plugin.
//!
//! Run with `cargo bench -p corral --bench startup` (builds the example
//! plugins first if needed). Set `STARTUP_RUNS` to change the number of runs
//! per case (default 7).

#[path = "../../../tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use support::{Server, folder_with, plugins_dir};

/// Time from spawn to the first `tools/list` answer; checks the answer.
fn time_to_first_list(dir: &Path, args: &[&str]) -> Duration {
    let started = Instant::now();
    let mut server = Server::start_with(dir, args);
    server.initialize("2025-06-18");
    let list = server.result("tools/list", json!({}));
    let elapsed = started.elapsed();
    assert!(
        !list["tools"].as_array().unwrap().is_empty(),
        "no tools listed; stderr:\n{}",
        server.stderr()
    );
    elapsed
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(duration: Duration) -> String {
    format!("{:8.1} ms", duration.as_secs_f64() * 1000.0)
}

fn report(case: &str, samples: &[Duration]) -> Duration {
    let median = median(samples.to_vec());
    let min = *samples.iter().min().unwrap();
    let max = *samples.iter().max().unwrap();
    println!(
        "{case:<34} median {}  min {}  max {}",
        ms(median),
        ms(min),
        ms(max)
    );
    median
}

fn main() {
    let runs: usize = std::env::var("STARTUP_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(7);
    let largest: PathBuf = std::fs::read_dir(plugins_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wasm"))
        .max_by_key(|path| std::fs::metadata(path).unwrap().len())
        .expect("no example plugin built");
    let name = largest.file_name().unwrap().to_str().unwrap().to_string();
    let size = std::fs::metadata(&largest).unwrap().len();
    println!(
        "startup: spawn `corral serve` -> first tools/list answer, {name} ({} KiB), {runs} runs each",
        size / 1024
    );
    let dir = folder_with(&[(&name, &largest)]);

    let no_cache: Vec<Duration> = (0..runs)
        .map(|_| time_to_first_list(dir.path(), &["--no-cache"]))
        .collect();
    let cold: Vec<Duration> = (0..runs)
        .map(|_| {
            let cache = tempfile::tempdir().unwrap();
            time_to_first_list(dir.path(), &["--cache-dir", cache.path().to_str().unwrap()])
        })
        .collect();
    let cache = tempfile::tempdir().unwrap();
    let cache_arg = ["--cache-dir", cache.path().to_str().unwrap()];
    time_to_first_list(dir.path(), &cache_arg); // fills the cache
    let warm: Vec<Duration> = (0..runs)
        .map(|_| time_to_first_list(dir.path(), &cache_arg))
        .collect();

    report("no cache (--no-cache)", &no_cache);
    let cold = report("cold cache (compile + write)", &cold);
    let warm = report("warm cache (verify + deserialize)", &warm);
    println!(
        "warm is {:.1}x faster than cold",
        cold.as_secs_f64() / warm.as_secs_f64()
    );
}
