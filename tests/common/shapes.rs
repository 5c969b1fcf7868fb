//! Outputs of the shapes agents meet, made deterministically, and what a reader checks of a cut
//! of them: how much of the allowance is the output's own lines, verbatim, and whether every
//! line a lossless fold stands for can be rebuilt from it. Shared by the tests of every cutting
//! path (the registry, run_command and grep, the proxy).

#![allow(dead_code)] // each test file uses some of the helpers

use std::collections::HashSet;

/// One output: its name, its text, the lines a developer must see in any cut of it, and whether
/// its lines are distinct (no lossless run to fold).
pub(crate) struct Shape {
    pub(crate) name: &'static str,
    pub(crate) text: String,
    pub(crate) must: Vec<String>,
    pub(crate) distinct: bool,
}

/// A pseudo-random sequence, the same on every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

/// Every shape, each far over 20,000 chars.
pub(crate) fn shapes() -> Vec<Shape> {
    let mut rng = Lcg(7);
    let counting: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    // A permutation of 1..=100,000 (100,003 is prime).
    let shuffled: String = (1..=100_000u64)
        .map(|i| format!("{}\n", i * 7_919 % 100_003))
        .collect();

    let mut log = String::new();
    for i in 0..60_000u64 {
        let (h, m, s) = (10 + i / 3_600, i / 60 % 60, i % 60);
        let id = rng.next() % 1_000_000;
        let ms = rng.next() % 900 + 3;
        let user = rng.next();
        let path = ["orders", "customers", "invoices", "carts"][(rng.next() % 4) as usize];
        log.push_str(&format!(
            "2026-11-25T{h:02}:{m:02}:{s:02}.{:03}Z INFO  [api] GET /v2/{path}/{id} 200 {ms}ms user={user:x}\n",
            rng.next() % 1000
        ));
        if i == 37_000 {
            log.push_str("2026-11-25T20:16:40.001Z ERROR [api] POST /v2/orders/884213 500: the ledger refused the write\n");
        }
    }

    let mut csv = String::from("id,customer,amount,currency,created_at,status\n");
    for _ in 1..=40_000u64 {
        let amount = rng.next() % 100_000;
        let status = ["paid", "open", "refunded"][(rng.next() % 3) as usize];
        csv.push_str(&format!(
            "{},cus_{:08x},{}.{:02},EUR,2026-{:02}-{:02},{status}\n",
            900_000 + rng.next() % 100_000,
            rng.next(),
            amount / 100,
            amount % 100,
            rng.next() % 12 + 1,
            rng.next() % 28 + 1
        ));
    }

    let mut listing = String::from("total 81240\n");
    for i in 0..20_000u64 {
        let size = rng.next() % 90_000;
        let module = ["api", "billing", "ledger", "search", "auth"][(rng.next() % 5) as usize];
        listing.push_str(&format!(
            "-rw-r--r-- 1 dev dev {size:>6} Nov {:>2} {:02}:{:02} src/{module}/m{}_{:x}.rs\n",
            rng.next() % 28 + 1,
            rng.next() % 24,
            rng.next() % 60,
            i,
            rng.next() % 65_536
        ));
    }

    // A test run as cargo prints it, names sorted; named by what they test, not numbered, so
    // no number counts up from one line to the next.
    let mut names: Vec<String> = (1..=6_000)
        .map(|_| format!("orders::refund_{:08x}", rng.next()))
        .collect();
    names.sort();
    let mut tests = String::from("running 6000 tests\n");
    for (i, name) in names.iter().enumerate() {
        if i == 3_100 {
            tests.push_str("test suite::ledger_balances ... FAILED\n");
        }
        tests.push_str(&format!("test suite::{name} ... ok\n"));
    }
    tests.push_str("\nfailures:\n\n---- suite::ledger_balances stdout ----\n");
    tests.push_str("thread 'suite::ledger_balances' panicked at src/ledger.rs:88:5:\n");
    tests.push_str("assertion `left == right` failed\n  left: 12\n right: 11\n\n");
    tests.push_str("test result: FAILED. 5999 passed; 1 failed; 0 ignored\n");

    // A download per line, each redrawn as it goes; shown as a terminal shows it.
    let mut progress = String::new();
    for i in 0..8_000u64 {
        let name = format!("crate_{:x}", rng.next());
        for pct in [0, 25, 50, 75] {
            progress.push_str(&format!("Downloading {name} {pct:>3}%\r"));
        }
        progress.push_str(&format!(
            "Downloaded {name} v0.{}.{} ({} KiB)\n",
            i % 13,
            rng.next() % 40,
            rng.next() % 900
        ));
    }

    vec![
        Shape {
            name: "counting numbers",
            text: counting,
            must: vec![],
            distinct: false,
        },
        Shape {
            name: "shuffled numbers",
            text: shuffled,
            must: vec![],
            distinct: true,
        },
        Shape {
            name: "request log",
            text: log,
            must: vec![
                "2026-11-25T20:16:40.001Z ERROR [api] POST /v2/orders/884213 500: the ledger refused the write".into(),
            ],
            distinct: true,
        },
        Shape {
            name: "CSV",
            text: csv,
            must: vec!["id,customer,amount,currency,created_at,status".into()],
            distinct: true,
        },
        Shape {
            name: "listing",
            text: listing,
            must: vec!["total 81240".into()],
            distinct: true,
        },
        Shape {
            name: "passing-test run",
            text: tests,
            must: vec![
                "test suite::ledger_balances ... FAILED".into(),
                "thread 'suite::ledger_balances' panicked at src/ledger.rs:88:5:".into(),
                " right: 11".into(),
                "test result: FAILED. 5999 passed; 1 failed; 0 ignored".into(),
            ],
            distinct: true,
        },
        Shape {
            name: "progress redraws",
            text: progress,
            must: vec![],
            distinct: true,
        },
    ]
}

/// A line as a terminal shows it, for the outputs here: each carriage return goes back to the
/// line's start, and what follows writes over what was there.
pub(crate) fn shown_line(line: &str) -> String {
    let mut shown: Vec<char> = Vec::new();
    for part in line.split('\r') {
        for (column, c) in part.chars().enumerate() {
            match shown.get_mut(column) {
                Some(slot) => *slot = c,
                None => shown.push(c),
            }
        }
    }
    shown.into_iter().collect()
}

/// The chars of `shown` that are lines of `full`, as they were or as a terminal shows them,
/// their line breaks included, over `allowance`: the share of the allowance spent on the
/// output itself. The lines toolsmith writes (the marker, summaries, folds) are not counted.
pub(crate) fn verbatim_share(shown: &str, full: &str, allowance: usize) -> f64 {
    let lines: HashSet<String> = full.lines().map(shown_line).collect();
    let verbatim: usize = shown
        .lines()
        .filter(|line| !line.starts_with("[toolsmith:") && !line.starts_with("[… "))
        .filter(|line| !(line.starts_with("[lines ") && line.ends_with(']')))
        .filter(|line| lines.contains(*line))
        .map(|line| line.chars().count() + 1)
        .sum();
    verbatim as f64 / allowance as f64
}

/// The must-see lines `shown` does not show.
pub(crate) fn missing<'a>(shown: &str, must: &'a [String]) -> Vec<&'a str> {
    must.iter()
        .map(String::as_str)
        .filter(|line| !shown.lines().any(|shown| shown == *line))
        .collect()
}

/// The lines of a condensed cut rebuilt: every fold line expanded from the lines above it as
/// it says, the marker dropped. Written from the fold grammar alone, as a reader would.
pub(crate) fn rebuild(shown: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in shown.lines() {
        if line.starts_with("[toolsmith: output") || line.starts_with("[… ") {
            continue;
        }
        let Some(fold) = line
            .strip_prefix("[lines ")
            .and_then(|rest| rest.strip_suffix(']'))
            .and_then(|rest| rest.split_once(": "))
            .map(|(_, how)| how)
        else {
            out.push(line.to_owned());
            continue;
        };
        let number = |text: &str| text.replace(',', "").parse::<u64>().unwrap();
        if let Some(times) = fold.strip_prefix("the line above, ") {
            let times = number(times.strip_suffix(" more times").unwrap());
            let above = out.last().unwrap().clone();
            out.extend((0..times).map(|_| above.clone()));
        } else if let Some(rest) = fold.strip_prefix("the ") {
            let (period, rest) = rest.split_once(" lines above, ").unwrap();
            let (period, times) = (
                number(period) as usize,
                number(rest.strip_suffix(" more times").unwrap()),
            );
            let block = out[out.len() - period..].to_vec();
            for _ in 0..times {
                out.extend(block.iter().cloned());
            }
        } else {
            let counted = fold.strip_suffix(", one a line").unwrap();
            let (range, which) = match counted.split_once(" in its ") {
                Some((range, which)) => {
                    let nth: usize = which
                        .trim_end_matches(" number")
                        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
                        .parse()
                        .unwrap();
                    (range, nth - 1)
                }
                None => (counted, 0),
            };
            let (from, to) = range.split_once(" to ").unwrap();
            let above = out.last().unwrap().clone();
            // The runs of digits of the line above; the counted one is replaced.
            let mut runs = Vec::new();
            let bytes = above.as_bytes();
            let mut at = 0;
            while at < bytes.len() {
                if bytes[at].is_ascii_digit() {
                    let start = at;
                    while at < bytes.len() && bytes[at].is_ascii_digit() {
                        at += 1;
                    }
                    runs.push((start, at));
                } else {
                    at += 1;
                }
            }
            let (start, end) = runs[which];
            for value in number(from)..=number(to) {
                out.push(format!("{}{value}{}", &above[..start], &above[end..]));
            }
        }
    }
    out
}

/// The lines of `full` in `spans`, as a terminal shows them: what a cut that states these spans
/// must rebuild to.
pub(crate) fn lines_in(full: &str, spans: &[toolsmith::trim::LineSpan]) -> Vec<String> {
    let lines: Vec<&str> = full.lines().collect();
    spans
        .iter()
        .flat_map(|span| lines[span.first - 1..span.last].iter())
        .map(|line| shown_line(line))
        .collect()
}
