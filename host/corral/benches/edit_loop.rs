//! The plugin author's edit loop (issue 30): a Python plugin made by
//! `corral new`, edited, rebuilt with its `./build` and called once with
//! `corral call`, as an author does while writing a tool.
//!
//! `./build` ends with `corral compile`, which fills the compile cache, so
//! the call after it does not wait for Corral to compile the new component.
//! The floor, measured in the same run, is the build itself: the bound is
//! edit-to-answer at most the build plus 1 s. For comparison, the same call
//! with a cold compile cache is what the first call cost before `./build`
//! compiled.
//!
//! Run with `cargo bench -p corral --bench edit_loop` after `scripts/setup`
//! (it uses the Python toolchain `plugins/build` installed under
//! `target/toolchains`). `EDIT_RUNS` sets the number of edits (default 5).

#[path = "../../../tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use support::target_dir;

fn corral() -> Command {
    Command::new(env!("CARGO_BIN_EXE_corral"))
}

fn timed(what: &str, command: &mut Command) -> (Duration, Output) {
    let started = Instant::now();
    let output = command
        .output()
        .unwrap_or_else(|err| panic!("{what}: {err}"));
    let elapsed = started.elapsed();
    assert!(
        output.status.success(),
        "{what} failed: {}\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (elapsed, output)
}

/// The seconds `corral compile` said it took, from the build's stderr.
fn compile_seconds(build: &Output) -> f64 {
    let said = String::from_utf8_lossy(&build.stderr);
    said.lines()
        .find_map(|line| {
            let tail = line.split(") in ").nth(1)?;
            tail.split(' ').next()?.parse().ok()
        })
        .unwrap_or_else(|| panic!("./build did not run corral compile:\n{said}"))
}

fn build(project: &Path, cache: &Path) -> Command {
    let mut command = Command::new(project.join("build"));
    command
        .current_dir(project)
        .env("CORRAL_TOOLCHAINS", target_dir().join("toolchains"))
        .env("CORRAL_CACHE_DIR", cache)
        .env("CORRAL", env!("CARGO_BIN_EXE_corral"));
    command
}

fn call(project: &Path, cache: &Path, who: &str) -> Command {
    let mut command = corral();
    command
        .env("CORRAL_CACHE_DIR", cache)
        .args(["--log-level", "warn", "call"])
        .arg(project)
        .arg("greeter")
        .arg(format!(r#"{{"name": "{who}"}}"#));
    command
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() {
    let runs: usize = std::env::var("EDIT_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(5);
    let scratch = tempfile::tempdir().unwrap();
    let cache = scratch.path().join("cache");
    timed(
        "corral new python greeter",
        corral()
            .args(["new", "python", "greeter", "--dir"])
            .arg(scratch.path()),
    );
    let project = scratch.path().join("greeter");
    // The first build installs nothing (the toolchain is warm) but is not
    // measured: an author's loop starts from a built project.
    timed("first ./build", &mut build(&project, &cache));

    let tool = project.join("tool.py");
    let original = std::fs::read_to_string(&tool).unwrap();
    let (mut builds, mut compiles, mut calls, mut cold_calls) = (vec![], vec![], vec![], vec![]);
    for run in 0..runs {
        // An edit that changes the component's bytes and the answer.
        let greeting = format!("Hello ({run}), ");
        std::fs::write(&tool, original.replace("Hello, ", &greeting)).unwrap();
        let (built, output) = timed("./build", &mut build(&project, &cache));
        let (called, answer) = timed("corral call", &mut call(&project, &cache, "Ada"));
        let answer = String::from_utf8_lossy(&answer.stdout);
        assert!(
            answer.contains(&format!("{greeting}Ada!")),
            "the call did not see the edit: {answer}"
        );
        // The same call with nothing compiled: what the first call cost
        // before ./build compiled.
        let cold = scratch.path().join(format!("cold-{run}"));
        let (cold_call, _) = timed(
            "corral call (cold cache)",
            &mut call(&project, &cold, "Ada"),
        );
        println!(
            "edit {run}: ./build {:6.2} s (of which corral compile {:5.2} s), then corral call {:5.3} s; a cold first call {:5.2} s",
            built.as_secs_f64(),
            compile_seconds(&output),
            called.as_secs_f64(),
            cold_call.as_secs_f64()
        );
        builds.push(built.as_secs_f64());
        compiles.push(compile_seconds(&output));
        calls.push(called.as_secs_f64());
        cold_calls.push(cold_call.as_secs_f64());
    }
    let (build, compile, call, cold) = (
        median(builds),
        median(compiles),
        median(calls),
        median(cold_calls),
    );
    println!();
    println!("medians over {runs} edits of a Python plugin:");
    println!("  ./build (componentize-py, then corral compile) {build:6.2} s");
    println!("    of which corral compile                      {compile:6.2} s");
    println!("  corral call after it                           {call:6.3} s");
    println!(
        "  edit to answer                                 {:6.2} s = build + {call:.3} s",
        build + call
    );
    println!("  before: a first call that compiles            {cold:6.2} s");
    let met = call <= 1.0;
    println!(
        "target: edit to answer at most the build + 1 s: {}",
        if met { "met" } else { "NOT met" }
    );
}
